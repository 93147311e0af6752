"""A Postgresql's password Secret and its data: generated once, kept with the data volume, taken back by a new
Postgresql of the same name — and what the data volume holds (``status.dataVolume``).

Called by :mod:`darkroom_operator.postgresqls` on every reconcile: :meth:`Passwords.ensure` makes sure the
password exists and says where it came from; :func:`data_volume` decides, from that and the data PVC, what
``status.dataVolume`` records. Pure apart from :class:`Passwords`' requests.

**Kept with the data.** postgres takes ``POSTGRES_PASSWORD`` only when it first initialises its data directory,
so the data and the Secret ``<name>-credentials`` that held the password then belong together. Besides its
controller ownerReference to the Postgresql, that Secret gets a second one, to the data PVC (no
``blockOwnerDeletion``: it must never hold the PVC back). Garbage collection deletes an object only when
every owner is gone: the Secret lives as long as the Postgresql *or* its data, so with ``deletionPolicy:
Retain`` it stays with the kept volume, and goes when someone deletes that volume (with ``Delete`` the
StatefulSet owns the PVC: both go).

**Taken back, never adopted.** A new Postgresql of the same name finds that Secret controlled by its former
self (a dangling ownerReference, or none once garbage collection dropped it). It takes it back — its own
controller ownerReference replaces the former's, with a JSON patch that first tests the resourceVersion —
only when the Secret is what the product left for exactly this data: labelled ``managed-by:
darkroom-control-panel`` and ``instance: <name>``, owned by the live data PVC of that name, and controlled by
no object but a (former) Postgresql. Anything else holding the name is a
:class:`~darkroom_operator.runtime.owning.ChildConflict`, left alone as before.

**Which data.** The data PVC holds a former Postgresql's data (``reused``) when it is older than this
Postgresql; when both were created in the same second (creationTimestamp's resolution), when it was already
there before this Postgresql's StatefulSet existed — which the first reconcile sees at first hand and
``status.dataVolume`` remembers. ``password`` then says whose password the data has: :data:`kinds.postgresqls.KEPT`
(the kept Secret, taken back), :data:`~kinds.postgresqls.NEW` (no Secret was kept: the one generated or given now
is not the data's), :data:`~kinds.postgresqls.REFERENCED` (the user's Secret: we cannot tell).
"""

from __future__ import annotations

import logging
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cluster import POSTGRESQLS, SECRETS, AlreadyExists, CachedClient, Conflict, Invalid, NotFound
from darkroom_operator import pgchildren
from darkroom_operator.runtime.owning import Children, controller_uid, owner_reference
from darkroom_operator.settings import OperatorSettings
from kinds import postgresqls as kind
from kinds.names import INSTANCE_LABEL, MANAGED_BY_LABEL, PRODUCT_MANAGED_BY

log = logging.getLogger(__name__)

PASSWORD_ALPHABET = string.ascii_letters + string.digits

# Where the password this reconcile found came from (Outcome.origin).
REFERENCED = "referenced"  # spec.passwordSecretRef: the user's Secret
GENERATED = "generated"  # created by this reconcile
TAKEN_BACK = "taken back"  # the Secret kept with the data of a former Postgresql of this name, taken back by this reconcile
OURS = "ours"  # already this Postgresql's (generated or taken back earlier, or written by the API)


@dataclass(frozen=True)
class Outcome:
    """What :meth:`Passwords.ensure` found: why the password is missing (None: it is there), where it came from,
    and the generated Secret as it now is (None with a passwordSecretRef)."""

    problem: str | None
    origin: str
    secret: Mapping[str, Any] | None = None


def claim_reference(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A plain ownerReference to the data PVC: not the controller, and never holding the PVC's deletion back."""
    meta = claim["metadata"]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": meta["name"], "uid": meta["uid"]}


def _refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(obj["metadata"].get("ownerReferences") or ())


def kept_for(secret: Mapping[str, Any], pg: Mapping[str, Any], claim: Mapping[str, Any] | None) -> bool:
    """Whether ``secret`` (not controlled by ``pg``) is the password Secret the product kept with ``claim``, the data
    of a former Postgresql of ``pg``'s name — the only Secret a new Postgresql takes back."""
    if claim is None:
        return False
    labels = secret["metadata"].get("labels") or {}
    if labels.get(MANAGED_BY_LABEL) != PRODUCT_MANAGED_BY or labels.get(INSTANCE_LABEL) != pg["metadata"]["name"]:
        return False
    refs = _refs(secret)
    owned_by_claim = any(r.get("kind") == "PersistentVolumeClaim" and r.get("uid") == claim["metadata"]["uid"] for r in refs)
    controllers = [r for r in refs if r.get("controller")]
    return owned_by_claim and all(r.get("kind") == POSTGRESQLS.kind and r.get("uid") != pg["metadata"]["uid"] for r in controllers)


def owners(secret: Mapping[str, Any], pg: Mapping[str, Any], claim: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The ownerReferences the password Secret should have: ``pg`` as its controller (first, where the API's write of a
    given password tests for it), the data PVC, and whatever else someone added (no other Postgresql, no other
    reference to a PVC of that name)."""
    claim_name = claim["metadata"]["name"] if claim is not None else None

    def replaced(ref: Mapping[str, Any]) -> bool:
        return ref.get("kind") == POSTGRESQLS.kind or (ref.get("kind") == "PersistentVolumeClaim" and ref.get("name") == claim_name)

    keep = [dict(r) for r in _refs(secret) if not replaced(r)]
    return [owner_reference(pg, POSTGRESQLS), *([claim_reference(claim)] if claim is not None else []), *keep]


class Passwords:
    """The password Secrets of one reconciler's Postgresqls."""

    def __init__(self, client: CachedClient, *, settings: OperatorSettings, children: Children) -> None:
        self.client = client
        self.settings = settings
        self.children = children
        # Postgresql UID -> (UID of its generated Secret, UID of the data PVC it references or ""), once checked.
        self._verified: dict[str, tuple[str, str]] = {}

    def forget(self, pg: Mapping[str, Any]) -> None:
        self._verified.pop(pg["metadata"]["uid"], None)

    def ensure(self, pg: Mapping[str, Any], claim: Mapping[str, Any] | None) -> Outcome:
        """Make sure the password exists (and the generated Secret stays with ``claim``, the data PVC, if any)."""
        meta = pg["metadata"]
        secret_name, secret_key = pgchildren.password_secret_ref(pg)
        if (pg.get("spec") or {}).get("passwordSecretRef"):
            return Outcome(self._referenced_problem(meta["namespace"], secret_name, secret_key), REFERENCED)
        claim_uid = claim["metadata"]["uid"] if claim is not None else ""
        verified = self._verified.get(meta["uid"])
        if verified is not None and verified[1] == claim_uid:
            return Outcome(None, OURS)
        origin = OURS
        try:
            secret: Mapping[str, Any] = self.client.get(SECRETS, secret_name, namespace=meta["namespace"])
        except NotFound:
            secret, origin = self._generate(pg, claim)
        if controller_uid(secret) != meta["uid"]:
            if not kept_for(secret, pg, claim):
                raise self.children.conflict(SECRETS, secret_name, secret)
            secret, origin = self._set_owners(secret, pg, claim), TAKEN_BACK
            log.info("took back the password Secret kept with the data", extra={"key": f"{meta['namespace']}/{meta['name']}"})
        elif claim is not None and claim_uid not in {r.get("uid") for r in _refs(secret)}:
            secret = self._set_owners(secret, pg, claim)
        self._verified[meta["uid"]] = (secret["metadata"]["uid"], claim_uid)
        return Outcome(None, origin, secret)

    def _referenced_problem(self, namespace: str, name: str, key: str) -> str | None:
        try:
            referenced = self.client.get(SECRETS, name, namespace=namespace)
        except NotFound:
            return f'the password Secret "{name}" does not exist'
        data = {**(referenced.get("data") or {}), **(referenced.get("stringData") or {})}
        return None if data.get(key) else f'the password Secret "{name}" has no key "{key}"'

    def _generate(self, pg: Mapping[str, Any], claim: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], str]:
        meta = pg["metadata"]
        password = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(kind.PASSWORD_LENGTH))
        body = pgchildren.password_secret(pg, self.settings, password)
        if claim is not None:
            body["metadata"]["ownerReferences"].append(claim_reference(claim))
        try:
            created = self.client.create(SECRETS, body)
        except AlreadyExists:  # the API (or another replica) wrote it meanwhile: theirs stands
            return self.client.get(SECRETS, body["metadata"]["name"], namespace=meta["namespace"]), OURS
        log.info("generated the password Secret", extra={"key": f"{meta['namespace']}/{meta['name']}"})
        return created, GENERATED

    def _set_owners(self, secret: Mapping[str, Any], pg: Mapping[str, Any], claim: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """Give ``secret`` the owners of :func:`owners`, provided it is still the version we judged (else a Conflict: retried)."""
        meta = secret["metadata"]
        patch = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
            {"op": "replace", "path": "/metadata/ownerReferences", "value": owners(secret, pg, claim)},
        ]
        try:
            return self.client.patch(
                SECRETS, meta["name"], patch, namespace=meta["namespace"], patch_type="json", field_manager=self.settings.field_manager
            )
        except Invalid as e:  # the test failed: someone changed the Secret since we read it; judge it again
            raise Conflict(f'Secret "{meta["name"]}" changed while its owners were being set; retrying', reason="Conflict") from e


def data_volume(
    pg: Mapping[str, Any],
    claim: Mapping[str, Any] | None,
    outcome: Outcome | None,
    *,
    before_statefulset: bool,
) -> dict[str, Any] | None:
    """``status.dataVolume`` for ``pg`` whose data PVC is ``claim`` (None: not there yet, nothing to say).

    ``outcome``: what :meth:`Passwords.ensure` found this time (None when it did not run: the record stands as it
    was). ``before_statefulset``: the claim was there before ``pg``'s StatefulSet existed (seen at first hand)."""
    if claim is None:
        return None
    name = claim["metadata"]["name"]
    recorded = ((pg.get("status") or {}).get("dataVolume")) or {}
    recorded = recorded if recorded.get("claim") == name else {}
    claim_time, pg_time = str(claim["metadata"].get("creationTimestamp") or ""), str(pg["metadata"].get("creationTimestamp") or "")
    # Created in the same second (creationTimestamp's resolution): what was seen at first hand, or remembered.
    reused = claim_time < pg_time if claim_time != pg_time else bool(recorded.get("reused")) or before_statefulset
    if not reused:
        return {"claim": name, "reused": False}
    origin = _password_origin(pg, recorded, outcome)
    return {"claim": name, "reused": True, **({"password": origin} if origin else {})}


def _password_origin(pg: Mapping[str, Any], recorded: Mapping[str, Any], outcome: Outcome | None) -> str | None:
    """Whose password the reused data has: what was recorded, else what this reconcile saw (a Secret found already ours,
    e.g. after a lost status, is the data's when it is older than ``pg``); None when nothing was looked at yet."""
    if (pg.get("spec") or {}).get("passwordSecretRef"):
        return kind.REFERENCED
    if recorded.get("password") in (kind.KEPT, kind.NEW):
        return str(recorded["password"])
    if outcome is None:
        return None
    if outcome.origin in (GENERATED, REFERENCED):
        return kind.NEW
    if outcome.origin == TAKEN_BACK:
        return kind.KEPT
    secret_time = str(((outcome.secret or {}).get("metadata") or {}).get("creationTimestamp") or "")
    return kind.KEPT if secret_time and secret_time < str(pg["metadata"].get("creationTimestamp") or "") else kind.NEW
