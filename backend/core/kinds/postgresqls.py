"""The Postgresql kind of the API (``/postgresqls``): its friendly shape and what is special about Postgresqls.

The application service (:mod:`backend.core.services`) and the generic endpoints (:mod:`backend.api.endpoints`)
do the rest; :class:`PostgresqlKind` adds two
things. **Storage is for keeps**: on replace and patch, ``storage.size`` never shrinks, does not
grow either yet (resizing the data volume is not implemented: the StatefulSet's volume claim
template is immutable and expanding its PVCs needs a StorageClass that allows it — rather than
accept a size that would not be applied, it is refused) and ``storage.storageClassName`` never
changes, 422 on the friendly field. **A given password goes to a Secret, nowhere else**: a ``password`` in a
create or replace (not with ``passwordSecretRef``) is written into the Secret
``<name>-credentials`` (:func:`kinds.postgresqls.password_secret_name`; keys ``password`` and
``username``) with a controller ownerReference to the Postgresql, after the Postgresql itself (a
failure undoes the Postgresql write, as for a Darkroom's S3 keys in :mod:`backend.core.kinds.darkrooms`). It
never enters the CR, a response, an Event, a ConfigMap or a log line; responses say only whether a password
is stored (``passwordSet``), from what the reconciler last saw (``status.passwordSecret.present``: the API
never reads the Secret back), false until it has looked. The
Secret is written as the person who writes the Postgresql (their :class:`cluster.acting.ActingClient`).

**When the password takes effect**: postgres applies it only when it first initialises its data
directory. Given on create, it is the database's password. Given later, it updates the Secret only —
the password inside an initialised database stays as it was (change it with ``ALTER ROLE``).

**A create that finds kept data.** With ``deletionPolicy: Retain`` (the default) the data volume of a deleted
Postgresql stays — and, kept with it by the reconciler, the Secret holding the password the data was initialised
with (:mod:`kinds.postgresqls`). A create of the same name runs on that data. The API looks for the volume (the PVC
:func:`kinds.postgresqls.claim_name`, read as the caller; a caller who may not read PVCs there is not told, the
reconciler's status and Events are): a create that finds it is marked with
:data:`kinds.postgresqls.RETAINED_DATA_ANNOTATION`, so its answer already carries ``status.dataVolume`` (``reused``,
the claim, and a sentence saying the database keeps its data and the password it was initialised with); the
reconciler's ``status.dataVolume`` then says whose password that is (``Kept``, ``New``, ``Referenced``). A
``password`` given on such a create would not take effect: it is refused, 409 with ``errors.password`` (beside
any field errors, one 422), naming the volume and the two ways on — create without a password to keep the data's,
or delete the volume first to start afresh with this one.

**What the reconciler found of the password**: ``status.passwordSecret`` — the Secret and key the pods read the
password from, and whether it is ``present`` (exists and holds the key) — so "Show password" and the page's
text can say the truth (null until the reconciler has looked).

**Only our own Secret is touched** (as :mod:`backend.core.credentials` does): a new Secret is created
(POST), never applied over whatever has that name; an existing one — e.g. the one the reconciler
generated for this Postgresql — gets the new password only through a JSON patch whose first
operations *test* that its controller ownerReference is this Postgresql's UID. A Secret of that name
someone else made (or one left by a former Postgresql of the same name) is a 409 and left alone.

A create with a password carries the annotation :data:`kinds.postgresqls.PASSWORD_PENDING_ANNOTATION`
until its Secret is written, so the reconciler does not generate a password first, and a create the
API server cut short between the two writes is completed by the client's retry
(:meth:`PostgresqlKind.resumable`). With ``?dryRun=All`` the Secret write is a dry run too, so a
foreign Secret is reported without anything being written. Registered in :data:`backend.core.kinds.registry.KINDS`.

**Friendly payload ↔ CR** (``database.db.example.com/v1`` Postgresql: :func:`to_friendly`,
:func:`to_spec`; shared helpers in :mod:`backend.core.conversions`; the spec's fields derived from the CRD and the
overlay :data:`kinds.postgresqls.API`): the friendly shape is the spec's own, with every CRD default shown (the API
server stores them on write, so what is shown is what is stored) and ``passwordSet``, plus ``status`` with the one
``state`` of :func:`kinds.postgresqls.state`. A payload's
``password`` never enters the CR: :func:`password_of` hands it to the Secret write, :func:`to_spec` leaves
it out.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, cast

from backend.core import errors, ordering
from backend.core.conversions import conditions, current_and_true, object_fields
from backend.core.conversions.specs import cr_spec, friendly_spec
from backend.core.credentials import MANAGED_BY, REDACTED, CredentialsError
from backend.core.kinds.base import Kind
from backend.core.schemas import postgresqls as postgresqls_schemas
from backend.settings import ApiSettings
from cluster import PERSISTENTVOLUMECLAIMS, POSTGRESQLS, SECRETS, AlreadyExists, ClusterError, Forbidden, Invalid, NotFound
from cluster.acting import ActingClient
from kinds import postgresqls as kind
from kinds.postgresqls import PASSWORD_PENDING_ANNOTATION as PASSWORD_PENDING
from kinds.postgresqls import READY, FriendlyPostgresql
from kinds.postgresqls import RETAINED_DATA_ANNOTATION as RETAINED_DATA
from kinds.quantities import quantity_value

log = logging.getLogger(__name__)


# -- the password Secret ----------------------------------------------------------------------------


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def scrub(text: str, password: str) -> str:
    """``text`` without the password (as sent or base64-encoded)."""
    for form in (password, _b64(password)):
        text = text.replace(form, REDACTED)
    return text


def secret_body(*, owner: Mapping[str, Any], user: str, password: str) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": kind.password_secret_name(meta["name"]),
            "namespace": meta["namespace"],
            "labels": {"app.kubernetes.io/managed-by": MANAGED_BY, "app.kubernetes.io/instance": meta["name"]},
            "ownerReferences": [
                {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"], "controller": True}
            ],
        },
        "type": "Opaque",
        "data": {kind.PASSWORD_KEY: _b64(password), kind.USERNAME_KEY: _b64(user)},
    }


def _not_ours(namespace: str, name: str) -> str:
    return (
        f"a Secret {namespace}/{name} already exists and does not belong to this Postgresql: it is left alone; "
        "delete or rename it, or choose another Postgresql name"
    )


def store_password(client: ActingClient, *, owner: Mapping[str, Any], user: str, password: str, dry_run: bool = False) -> None:
    """Create the owned password Secret, or set the password and user in the one this Postgresql controls.

    Raises :class:`backend.core.credentials.CredentialsError` (never the cluster's error, which might quote
    the password), not retryable when the name is taken by a Secret that is not ours — except the person's refusal
    (:class:`cluster.Forbidden` made for them), which propagates and is answered as their 403.
    """
    body = secret_body(owner=owner, user=user, password=password)
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    try:
        try:
            client.create(SECRETS, body, namespace=namespace, dry_run=dry_run)
        except AlreadyExists:
            uid = owner["metadata"]["uid"]
            patch = [
                {"op": "test", "path": "/metadata/ownerReferences/0/uid", "value": uid},
                {"op": "test", "path": "/metadata/ownerReferences/0/controller", "value": True},
                *({"op": "add", "path": f"/data/{key}", "value": value} for key, value in body["data"].items()),
            ]
            client.patch(SECRETS, name, patch, namespace=namespace, patch_type="json", dry_run=dry_run)
    except Invalid:  # the ownership test failed
        log.warning("%s", _not_ours(namespace, name))
        raise CredentialsError(_not_ours(namespace, name)) from None
    except ClusterError as e:
        if isinstance(e, Forbidden) and e.user is not None:
            raise  # refused for the person: their 403 (401) names what they may not do with Secrets, never a value
        detail = f"could not write the password Secret {namespace}/{name}: {scrub(e.message, password)}"
        log.warning("%s", detail)
        raise CredentialsError(detail, retryable=e.status == 0 or e.status >= 500) from None


# -- friendly payload ↔ CR ----------------------------------------------------------------------


# Spec path → friendly path, for the API's field errors: none, the friendly shape is the spec's.
RENAMES: Mapping[str, str] = dict(kind.API.renames)


def to_friendly(obj: Mapping[str, Any], *, raw: bool = False) -> dict[str, Any]:
    """The friendly Postgresql: the spec's fields (:func:`backend.core.conversions.specs.friendly_spec`) with
    ``passwordSet`` after ``passwordSecretRef``, and the status. ``raw``: the spec as stored, without falling back on
    the defaults (a PATCH's base)."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    shown: dict[str, Any] = {}
    for name, value in friendly_spec(kind.API, spec, defaults=not raw).items():
        shown[name] = value
        if name == "passwordSecretRef":
            shown["passwordSet"] = password_set(status)
    return {
        **object_fields(obj),
        **shown,
        "status": {
            "state": (state := kind.state(obj)).key,
            "stateMessage": state.detail,
            "phase": status.get("phase"),
            "ready": current_and_true(obj, READY),
            "readyReplicas": status.get("readyReplicas") or 0,
            "endpoint": _endpoint(status.get("endpoint")),
            "passwordSecret": _password_secret(status),
            "dataVolume": _data_volume(obj, spec),
            "conditions": conditions(status),
            "observedGeneration": status.get("observedGeneration"),
        },
    }


def password_set(status: Mapping[str, Any]) -> bool:
    """Is a password stored where the pods read it, as the reconciler last saw it (``status.passwordSecret.present``)?"""
    found = _password_secret(status)
    return found is not None and found["present"] is True


def _password_secret(status: Mapping[str, Any]) -> dict[str, Any] | None:
    found = status.get("passwordSecret")
    if not isinstance(found, Mapping) or not found.get("name"):
        return None
    return {"name": found["name"], "key": found.get("key") or kind.PASSWORD_KEY, "present": found.get("present") is True}


def _data_volume(obj: Mapping[str, Any], spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """``status.dataVolume`` with its sentence; before the reconciler has looked, what the API found on the create."""
    data = (obj.get("status") or {}).get("dataVolume")
    meta = obj.get("metadata") or {}
    if not isinstance(data, Mapping) or not data.get("claim"):
        noted = (meta.get("annotations") or {}).get(RETAINED_DATA)
        data = {"claim": noted, "reused": True} if noted else None
    if data is None:
        return None
    ref = spec.get("passwordSecretRef") or {}
    secret = ref.get("name") or kind.password_secret_name(str(meta.get("name", "")))
    user = str(spec.get("user") or kind.DEFAULT_USER)
    return {
        "claim": data["claim"],
        "reused": data.get("reused") is True,
        "password": data.get("password") if data.get("password") in kind.PASSWORD_ORIGINS else None,
        "message": kind.data_volume_message(str(meta.get("name", "")), data, user=user, secret=secret),
    }


def _endpoint(endpoint: Any) -> dict[str, Any] | None:
    """``{host, port}`` once the reconciler has written both, else None."""
    if not isinstance(endpoint, Mapping) or endpoint.get("host") is None or endpoint.get("port") is None:
        return None
    return {"host": endpoint["host"], "port": endpoint["port"]}


def to_spec(friendly: Mapping[str, Any]) -> dict[str, Any]:
    """The CR spec of a validated friendly Postgresql (:func:`backend.core.conversions.specs.cr_spec`: absent and null
    fields left to the CRD's defaults; never the password, a write-only field)."""
    return cr_spec(kind.API, friendly)


def password_of(friendly: Mapping[str, Any]) -> str | None:
    """The password a payload carries for the Secret ``<name>-credentials`` (None: none given)."""
    password = cast(FriendlyPostgresql, friendly).get("password")  # validated by the schema
    return str(password) if password is not None else None


def retained_claim(client: ActingClient, namespace: str, name: str) -> str | None:
    """The data volume a Postgresql ``name`` would run on, when it exists already (a former one's, kept): its PVC name.

    Read as the caller: None when there is none, or when the caller may not read PVCs there (the reconciler says it then)."""
    claim = kind.claim_name(name, 0)
    try:
        found = client.get(PERSISTENTVOLUMECLAIMS, claim, namespace=namespace, fresh=True)
    except NotFound:
        return None
    except Forbidden as e:
        if e.status == 401:  # the caller's credentials were refused: that is their answer
            raise
        return None
    return None if found["metadata"].get("deletionTimestamp") else claim


def kept_data_refusal(namespace: str, claim: str) -> str:
    return (
        f"the data volume {claim} of a former Postgresql of this name was kept (deletionPolicy Retain): this Postgresql will run "
        "on its data, with the password it was initialised with, so a password given now would not take effect. Create it "
        f"without a password to keep the data's (its Secret was kept with the volume), or delete the volume first "
        f"(kubectl delete pvc {claim} -n {namespace}) to start afresh with this password"
    )


def stored_storage(obj: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """The stored object's ``storage.size`` (the CRD's default when absent) and ``storageClassName``."""
    storage = ((obj or {}).get("spec") or {}).get("storage") or {}
    return str(storage.get("size") or kind.DEFAULT_STORAGE), storage.get("storageClassName")


# -- the kind ---------------------------------------------------------------------------------------


class PostgresqlKind(Kind):
    resource = POSTGRESQLS
    title = "Postgresql"
    plural = "postgresqls"
    schemas = postgresqls_schemas.SCHEMAS
    states = kind.STATES
    sorts = ordering.sorts(state=kind.state)
    conditions = kind.CONDITIONS
    renames = RENAMES
    unfinished_mark = PASSWORD_PENDING

    def to_friendly(self, obj: Mapping[str, Any], *, settings: ApiSettings | None) -> dict[str, Any]:
        return to_friendly(obj, raw=settings is None)

    def to_spec(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        return to_spec(friendly)

    def check(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """The data volume of a stored Postgresql keeps its size (never shrinks; growing is not supported yet) and StorageClass."""
        if existing is None:
            return {}
        errors: dict[str, list[str]] = {}
        old_size, old_class = stored_storage(existing)
        storage = cast(FriendlyPostgresql, friendly).get("storage") or {}  # validated by the schema
        new_size = storage.get("size") or kind.DEFAULT_STORAGE
        try:
            change = quantity_value(new_size) - quantity_value(old_size)
        except ValueError:  # not a quantity (a CR written around the CRD): nothing to compare
            change = Fraction(0)
        if change < 0:
            errors["storage.size"] = [f"cannot shrink from {old_size} to {new_size}"]
        elif change > 0:
            errors["storage.size"] = [f"cannot grow from {old_size} to {new_size}: resizing the data volume is not supported yet"]
        new_class = storage.get("storageClassName")
        if new_class != old_class:
            was = f'it is "{old_class}"' if old_class else "it is the cluster's default StorageClass"
            errors["storage.storageClassName"] = [f"cannot change after creation ({was}; a StatefulSet's volume claims are immutable)"]
        return errors

    def new_object(self, friendly: Mapping[str, Any], *, client: ActingClient | None = None) -> dict[str, Any]:
        body = super().new_object(friendly, client=client)
        annotations: dict[str, str] = {}
        claim = retained_claim(client, friendly["namespace"], friendly["name"]) if client is not None else None
        if claim is not None:
            annotations[RETAINED_DATA] = claim
        if annotations:
            body["metadata"]["annotations"] = annotations
        if password_of(friendly) is not None:
            self.mark_unfinished(body)
        return body

    def conflicts(self, client: ActingClient, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """A password given on a create that would run on kept data (see the module docstring)."""
        if existing is not None or password_of(friendly) is None or not friendly.get("name") or not friendly.get("namespace"):
            return {}
        claim = retained_claim(client, friendly["namespace"], friendly["name"])
        return {"password": [kept_data_refusal(friendly["namespace"], claim)]} if claim else {}

    def after_write(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        password = password_of(friendly)
        if password is not None:
            self._store(client, written, password, previous=previous, dry_run=False)
        if not self.resumable(written):  # pending: a create with a password (or one cut short, now completed)
            return written
        meta = written["metadata"]
        # A merge patch, not a PUT: the reconciler may have written status since (a new resourceVersion).
        done = {"metadata": {"annotations": {PASSWORD_PENDING: None}}}
        try:
            return client.patch(POSTGRESQLS, meta["name"], done, namespace=meta["namespace"])
        except ClusterError as e:
            failure = errors.Unavailable if e.retryable else errors.Conflict
            raise failure(f"could not finish the Postgresql: {e.message}; retry the request") from e

    def after_dry_run(
        self, client: ActingClient, friendly: Mapping[str, Any], written: Mapping[str, Any], *, previous: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        password = password_of(friendly)
        if password is not None:
            self._store(client, written, password, previous=previous, dry_run=True)
        return written

    def _store(
        self, client: ActingClient, written: Mapping[str, Any], password: str, *, previous: Mapping[str, Any] | None, dry_run: bool
    ) -> None:
        user = str((written.get("spec") or {}).get("user") or kind.DEFAULT_USER)
        try:
            store_password(client, owner=written, user=user, password=password, dry_run=dry_run)
        except CredentialsError as e:
            raise e.failure(e.detail) from None  # backend.core.writing says what became of the Postgresql


KIND = PostgresqlKind()
