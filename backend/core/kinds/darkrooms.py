"""The Darkroom kind of the API (``/darkrooms``): its friendly shape and what is special about Darkrooms.

The application service (:mod:`backend.core.services`) and the generic endpoints (:mod:`backend.api.endpoints`)
do the rest; :class:`DarkroomKind` adds the S3 credentials: keys in a payload go to the Secret
``<name>-s3-credentials`` owned by the Darkroom
(:mod:`backend.core.credentials`), written after the Darkroom (a failure undoes the Darkroom write);
switching to WebFolder removes that Secret. Keys are optional (in pairs, :mod:`kinds.darkrooms`):
an S3 Darkroom without them reads a public bucket (no Secret, no ``credentialsSecretRef``); on an
update, omitting them keeps the stored credentials. Registered in :data:`backend.core.kinds.registry.KINDS`.

A new S3 Darkroom is created with the annotation :data:`CREDENTIALS_PENDING` (named in :mod:`kinds.darkrooms`), removed once its Secret
is written. If the API server goes away between the two writes (so the undo cannot run either), the
annotation marks the Darkroom as a create cut short, and the client's retry of the same POST
completes it (:meth:`DarkroomKind.resumable`) instead of answering 409.

**Friendly payload ↔ CR** (``deployments.example.com/v1`` Darkroom: :func:`to_friendly`,
:func:`to_spec`; shared helpers in :mod:`backend.core.conversions`): S3 keys never enter the CR: a payload's
``accessKey``/``secretKey`` go to the Secret
``<name>-s3-credentials`` (:mod:`backend.core.credentials`) and the spec only names it in
``source.credentialsSecretRef``; responses say ``credentialsSet`` and ``credentialsSecret`` (its name, and whether
it is the Darkroom's own, deleted with it, or a Secret of the user's that nothing of ours deletes:
:func:`credentials_secret`). ``status.tls`` is the
reconciler's (its Ingress serves the domains over TLS: link them with
:func:`kinds.darkrooms.domain_url`); absent (an older reconciler) reads as false.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from backend.core import credentials, errors, ordering
from backend.core.conversions import conditions, current_and_true, object_fields
from backend.core.conversions.specs import cr_spec, friendly_spec
from backend.core.kinds.base import Kind
from backend.core.schemas import darkrooms as darkrooms_schemas
from backend.settings import ApiSettings
from cluster import DARKROOMS, ClusterError
from cluster.acting import ActingClient
from kinds import darkrooms as kind
from kinds.darkrooms import CREDENTIALS_PENDING_ANNOTATION as CREDENTIALS_PENDING
from kinds.darkrooms import READY, DarkroomSource, DarkroomSpec, FriendlyDarkroom, credentials_secret_name

# -- friendly payload ↔ CR ----------------------------------------------------------------------


# Server paths below spec that have no friendly field of their own.
RENAMES = {"source.credentialsSecretRef.name": "source", "source.credentialsSecretRef": "source"}  # first match wins


def credentials_ref(obj: Mapping[str, Any] | None) -> str | None:
    """Name of the Secret a Darkroom's spec refers to (None: no credentials)."""
    if obj is None:
        return None
    spec = cast(DarkroomSpec, obj.get("spec") or {})
    name = ((spec.get("source") or DarkroomSource()).get("credentialsSecretRef") or {}).get("name")
    return str(name) if name else None


def credentials_secret(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Secret a Darkroom's pods read S3 keys from, and whether it is the one the API stores them in — named
    ``<name>-s3-credentials``, with a controller ownerReference to the Darkroom, so deleting the Darkroom deletes it
    (``owned``) — or a Secret of the user's the spec only names, which nothing of ours ever deletes. The API never
    reads Secrets: ``owned`` is told from the name (the API writes no other, and refuses a foreign one of that name)."""
    name = credentials_ref(obj)
    if name is None:
        return None
    return {"name": name, "owned": name == credentials_secret_name(obj["metadata"]["name"])}


def to_friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The friendly Darkroom: the spec's fields (:func:`backend.core.conversions.specs.friendly_spec`: ``version`` the CRD
    default when a stored object predates it, as kube does on read), what the credentials are, and the status."""
    status = obj.get("status") or {}
    shown = {**object_fields(obj), **friendly_spec(kind.API, obj.get("spec")), "status": _status(obj, status)}
    shown["source"].update(credentialsSet=credentials_ref(obj) is not None, credentialsSecret=credentials_secret(obj))
    return shown


def _status(obj: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    state = kind.state(obj)
    return {
        "state": state.key,
        "stateMessage": state.detail,
        "ready": current_and_true(obj, READY),
        "domains": list(status.get("domains") or ()),
        "tls": status.get("tls") is True,
        "readyReplicas": status.get("readyReplicas") or 0,
        "conditions": conditions(status),
        "observedGeneration": status.get("observedGeneration"),
    }


def to_spec(friendly: Mapping[str, Any], *, secret_name: str | None) -> dict[str, Any]:
    """The CR spec of a validated friendly Darkroom (:func:`backend.core.conversions.specs.cr_spec`); ``secret_name``
    goes into credentialsSecretRef, which the S3 keys stand in for."""
    spec = cr_spec(kind.API, friendly)
    if secret_name:
        spec["source"]["credentialsSecretRef"] = {"name": secret_name}
    return spec


def keys_of(friendly: Mapping[str, Any]) -> tuple[str, str] | None:
    """The S3 keys a payload carries (both or none: the schema enforces pairs)."""
    source = friendly.get("source") or {}
    keys = kind.variant(source.get("type")).keys
    if source.get("type") in kind.SOURCES and keys and all(source.get(k) is not None for k in keys):
        access_key, secret_key = (str(source[k]) for k in keys)
        return access_key, secret_key
    return None


def rebase_for_type_change(base: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Before merging a PATCH that switches the source type, drop the old type's fields from the base.

    So ``{"source": {"type": "S3", "bucket": ..., ...}}`` on a WebFolder Darkroom does not also
    need ``"baseUrl": null``.
    """
    new_type = patch.get("source", {}).get("type") if isinstance(patch, Mapping) and isinstance(patch.get("source"), Mapping) else None
    source = base.get("source")
    if not new_type or not isinstance(source, dict) or new_type == source.get("type"):
        return base
    drop = set(kind.foreign_fields(new_type))
    return {**base, "source": {k: v for k, v in source.items() if k not in drop}}


def _served_by(client: ActingClient, sub: str, holder: Mapping[str, Any]) -> str:
    meta = holder["metadata"]
    if client.may("get", DARKROOMS, namespace=meta["namespace"], name=meta["name"]):
        return f'sub-domain "{sub}" is already served by Darkroom {meta["namespace"]}/{meta["name"]}'
    return f'sub-domain "{sub}" is already served by another Darkroom (in a namespace you cannot see)'


def _asking(client: ActingClient, subs: list[str]) -> dict[str, Sequence[Mapping[str, Any]]]:
    """The Darkrooms of the whole cluster that ask for each of ``subs``: from the cache's sub-domain index when the cache
    holds every namespace's (a look-up per sub-domain: a scan of 100,000 cached Darkrooms took ~0.2 s per sub-domain,
    holding the worker), else from one list read from the API server (an API confined to one namespace)."""
    cache = client.client
    if cache.served_from_cache(DARKROOMS, None):
        return {sub: cache.by_index(DARKROOMS, kind.SUBDOMAIN_INDEX, sub) for sub in subs}
    everyone = cache.list(DARKROOMS)
    return {sub: [d for d in everyone if sub in kind.claims(d)] for sub in subs}


class DarkroomKind(Kind):
    resource = DARKROOMS
    title = "Darkroom"
    plural = "darkrooms"
    schemas = darkrooms_schemas.SCHEMAS
    states = kind.STATES
    sorts = ordering.sorts(state=kind.state)
    conditions = kind.CONDITIONS
    renames = RENAMES
    unfinished_mark = CREDENTIALS_PENDING
    indexers = {kind.SUBDOMAIN_INDEX: kind.claims}

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        return to_friendly(obj)

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        shape = cast(FriendlyDarkroom, friendly)  # validated by the schema
        secret_name = None
        if kind.variant(shape["source"]["type"]).keys:
            keys = keys_of(friendly)
            secret_name = credentials_secret_name(shape["name"]) if keys else credentials_ref(existing)
        return to_spec(friendly, secret_name=secret_name)

    def patch_base(self, base: dict[str, Any], patch: Any) -> dict[str, Any]:
        return rebase_for_type_change(base, patch)

    def new_object(self, friendly: Mapping[str, Any], *, client: ActingClient | None = None) -> dict[str, Any]:
        body = super().new_object(friendly, client=client)
        if keys_of(friendly):
            self.mark_unfinished(body)
        return body

    def conflicts(self, client: ActingClient, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """The sub-domains another Darkroom already asks for, on their ``subDomains.<i>`` paths, each naming the Darkroom
        that holds its host by the reconciler's rule (:func:`kinds.darkrooms.holder`: the older claim).

        A create is always the newest claim, so it would never serve such a host. An edit is refused only the
        sub-domains it adds (those it already asked for are the reconciler's to report), and any one another Darkroom
        asks for, whatever their ages: adding it to an older Darkroom would take the host away from the one serving
        it. Hosts are one namespace for the whole cluster, so every Darkroom of the shared cache counts; the holder
        is named only to a caller who may get it (another team's Darkroom is "another Darkroom")."""
        wanted = [sub for sub in friendly.get("subDomains") or () if isinstance(sub, str)]
        asked_before = set(kind.claims(existing)) if existing is not None else set()
        added = [(index, sub) for index, sub in enumerate(wanted) if sub not in asked_before]
        if not added:
            return {}
        meta = (existing or {}).get("metadata") or friendly
        me = (meta.get("namespace"), meta.get("name"))
        asking = _asking(client, [sub for _, sub in added])
        found: dict[str, list[str]] = {}
        for index, sub in added:
            others = [d for d in asking[sub] if (d["metadata"]["namespace"], d["metadata"]["name"]) != me]
            held_by = kind.holder(sub, others)
            if held_by is not None:
                found[f"subDomains.{index}"] = [_served_by(client, sub, held_by)]
        return found

    def after_write(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        keys = self._write_credentials(client, friendly, written, previous=previous, dry_run=False)
        if keys and self.resumable(written):
            meta = written["metadata"]
            # A merge patch, not a PUT: the reconciler may have written status since (a new resourceVersion).
            done = {"metadata": {"annotations": {CREDENTIALS_PENDING: None}}}
            try:
                return client.patch(DARKROOMS, meta["name"], done, namespace=meta["namespace"])
            except ClusterError as e:
                failure = errors.Unavailable if e.retryable else errors.Conflict
                raise failure(f"could not finish the Darkroom: {e.message}; retry the request") from e
        return written

    def after_dry_run(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        self._write_credentials(client, friendly, written, previous=previous, dry_run=True)
        return written

    def _write_credentials(
        self,
        client: ActingClient,
        friendly: Mapping[str, Any],
        written: Mapping[str, Any],
        *,
        previous: Mapping[str, Any] | None,
        dry_run: bool,
    ) -> tuple[str, str] | None:
        """Store the payload's S3 keys in our Secret, or remove our Secret when the source no longer uses it
        (as dry runs when ``dry_run``: a taken Secret name is the same 409 a real write would get); the keys."""
        ours = credentials_secret_name(written["metadata"]["name"])
        keys = keys_of(friendly)
        if keys:
            try:
                credentials.store(client, name=ours, owner=written, keys=keys, dry_run=dry_run)
            except credentials.CredentialsError as e:
                raise e.failure(e.detail) from None  # backend.core.writing says what became of the Darkroom
        elif credentials_ref(previous) == ours and credentials_ref(written) != ours:
            credentials.remove(client, name=ours, owner=written, dry_run=dry_run)
        return keys


KIND = DarkroomKind()
