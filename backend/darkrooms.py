"""The Darkroom kind of the API (``/darkrooms``): what is special about Darkrooms.

The application service (:mod:`backend.services`) and the generic endpoints (:mod:`backend.endpoints`) do the
rest; :class:`DarkroomKind` adds the S3
credentials: keys in a payload go to the Secret ``<name>-s3-credentials`` owned by the Darkroom
(:mod:`backend.credentials`), written after the Darkroom (a failure undoes the Darkroom write);
switching to WebFolder removes that Secret. Keys are optional (in pairs, :mod:`kinds.darkrooms`):
an S3 Darkroom without them reads a public bucket (no Secret, no ``credentialsSecretRef``); on an
update, omitting them keeps the stored credentials. Registered in :data:`backend.registry.KINDS`.

A new S3 Darkroom is created with the annotation :data:`CREDENTIALS_PENDING` (named in :mod:`kinds.darkrooms`), removed once its Secret
is written. If the API server goes away between the two writes (so the undo cannot run either), the
annotation marks the Darkroom as a create cut short, and the client's retry of the same POST
completes it (:meth:`DarkroomKind.resumable`) instead of answering 409.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend import credentials
from backend.conversions import darkrooms as conversion
from backend.kinds import Kind
from backend.problems import Problem
from backend.schemas import darkrooms as darkrooms_schemas
from backend.settings import ApiSettings
from cluster import DARKROOMS, CachedClient, ClusterError
from kinds import darkrooms as kind
from kinds.darkrooms import CREDENTIALS_PENDING_ANNOTATION as CREDENTIALS_PENDING


class DarkroomKind(Kind):
    resource = DARKROOMS
    title = "Darkroom"
    plural = "darkrooms"
    schemas = darkrooms_schemas.SCHEMAS
    states = kind.STATES
    conditions = kind.CONDITIONS
    renames = conversion.RENAMES

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        return conversion.to_friendly(obj)

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        secret_name = None
        if kind.variant(friendly["source"]["type"]).keys:
            keys = conversion.keys_of(friendly)
            secret_name = conversion.credentials_secret_name(friendly["name"]) if keys else conversion.credentials_ref(existing)
        return conversion.to_spec(friendly, secret_name=secret_name)

    def patch_base(self, base: dict[str, Any], patch: Any) -> dict[str, Any]:
        return conversion.rebase_for_type_change(base, patch)

    def new_object(self, friendly: Mapping[str, Any]) -> dict[str, Any]:
        body = super().new_object(friendly)
        if conversion.keys_of(friendly):
            body["metadata"]["annotations"] = {CREDENTIALS_PENDING: "true"}
        return body

    def conflicts(self, client: CachedClient, friendly: Mapping[str, Any]) -> str | None:
        """A sub-domain another Darkrooms already asks for: the reconciler would give its host to the older
        claim, so a new Darkroom asking for it would never serve it."""
        wanted = set(friendly.get("subDomains") or ())
        for other in client.list(DARKROOMS):
            meta = other["metadata"]
            if (meta["namespace"], meta["name"]) == (friendly["namespace"], friendly["name"]) or meta.get("deletionTimestamp"):
                continue
            taken = sorted(wanted & set((other.get("spec") or {}).get("subDomains") or ()))
            if taken:
                return f'sub-domain "{taken[0]}" is already served by Darkroom {meta["namespace"]}/{meta["name"]}'
        return None

    def resumable(self, existing: Mapping[str, Any]) -> bool:
        return CREDENTIALS_PENDING in (existing["metadata"].get("annotations") or {})

    def after_write(
        self, client: CachedClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        keys = self._write_credentials(client, friendly, written, previous=previous, dry_run=False)
        if keys and self.resumable(written):
            meta = written["metadata"]
            # A merge patch, not a PUT: the reconciler may have written status since (a new resourceVersion).
            done = {"metadata": {"annotations": {CREDENTIALS_PENDING: None}}}
            try:
                return client.patch(DARKROOMS, meta["name"], done, namespace=meta["namespace"])
            except ClusterError as e:
                raise Problem(503 if e.retryable else 409, f"could not finish the Darkroom: {e.message}; retry the request") from e
        return written

    def after_dry_run(
        self, client: CachedClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        self._write_credentials(client, friendly, written, previous=previous, dry_run=True)
        return written

    def _write_credentials(
        self,
        client: CachedClient,
        friendly: Mapping[str, Any],
        written: Mapping[str, Any],
        *,
        previous: Mapping[str, Any] | None,
        dry_run: bool,
    ) -> tuple[str, str] | None:
        """Store the payload's S3 keys in our Secret, or remove our Secret when the source no longer uses it
        (as dry runs when ``dry_run``: a taken Secret name is the same 409 a real write would get); the keys."""
        ours = conversion.credentials_secret_name(written["metadata"]["name"])
        keys = conversion.keys_of(friendly)
        if keys:
            try:
                credentials.store(client, name=ours, owner=written, keys=keys, dry_run=dry_run)
            except credentials.CredentialsError as e:
                undone = "nothing was created" if previous is None else "the Darkroom was left as it was"
                raise Problem(e.status, f"{e.detail}; {undone}") from None
        elif conversion.credentials_ref(previous) == ours and conversion.credentials_ref(written) != ours:
            credentials.remove(client, name=ours, owner=written, dry_run=dry_run)
        return keys


KIND = DarkroomKind()
