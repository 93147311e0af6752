"""The Postgresql reconciler: a database per Postgresql (seed 003, done right), its phase in status, a finalizer for its data.

Built by the runtime as ``PostgresqlReconciler(context)``; called with ``"<namespace>/<name>"`` when
the Postgresql, one of its children or one of its data PVCs changes, and on resync.

Each reconcile: read the Postgresql from the cache; being deleted → :meth:`_finalize`; else make sure
our finalizer is on it, check what the CRD schema cannot (allowlisted parameters, the reserved user,
quantities: ``Reconciled=False/InvalidSpec``), make sure the password exists, apply the children
(:mod:`darkroom_operator.pgchildren`) through the same machinery as the Darkroom reconciler
(:mod:`darkroom_operator.runtime.owning`: never adopt, apply only what differs, so a converged resync
writes nothing), and publish status: ``phase``, ``Ready`` (the StatefulSet rolled out and its pod
passes ``pg_isready``), ``Reconciled``, ``endpoint``, ``readyReplicas``, with Events on transitions.

The password: with ``spec.passwordSecretRef`` the referenced Secret and key must exist (else
``Ready=False/PasswordSecretMissing`` naming them, re-checked every :data:`RECHECK_S` seconds: we do
not watch Secrets). Without it the reconciler creates ``<name>-credentials`` once with a generated
32-character password (``secrets`` module) — never rewritten, never logged, never in the CR, a
ConfigMap or an Event. An existing Secret of that name that this Postgresql does not control is a
ChildConflict. The API may write that Secret first with a user-given password; creating it then
answers AlreadyExists and the API's password stays. While the API's unfinished mark is on the Postgresql
(:data:`kinds.postgresqls.PASSWORD_PENDING_ANNOTATION`) nothing is made: the status says it waits for the API,
and a create the API never finished is removed after a grace period (:mod:`darkroom_operator.unfinished`).

Deletion: the StatefulSet's ``persistentVolumeClaimRetentionPolicy.whenDeleted`` follows
``spec.deletionPolicy``, so the StatefulSet controller gives the data PVCs an ownerReference to the
StatefulSet (Delete: garbage collection removes them after it) or none (Retain: they stay). The
finalizer holds the Postgresql until the PVCs say what the policy says (re-applying the policy if
it was changed just before the deletion), records ``VolumesRetained`` or ``VolumesDeleted``, and goes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from cluster import (
    CONFIGMAPS,
    PERSISTENTVOLUMECLAIMS,
    POSTGRESQLS,
    SERVICES,
    STATEFULSETS,
    ClusterError,
    NotFound,
    Resource,
)
from darkroom_operator import pgchildren
from darkroom_operator.pgpasswords import Outcome, Passwords, data_volume
from darkroom_operator.runtime.comparing import stamp
from darkroom_operator.runtime.conditions import (
    FALSE,
    TRUE,
    ReadyReasons,
    condition,
    find,
    same,
    set_condition,
    transition_events,
)
from darkroom_operator.runtime.owning import ChildConflict, Children, controller_uid
from darkroom_operator.runtime.reconciling import Context, Result, Watch
from darkroom_operator.unfinished import Unfinished
from kinds import postgresqls as kind
from kinds.names import INSTANCE_LABEL, MANAGED_BY_LABEL, NAME_LABEL
from kinds.quantities import quantity_value

log = logging.getLogger(__name__)

RECHECK_S = 15.0  # how soon a missing password Secret is looked for again
FINALIZE_POLL_S = 1.0  # how soon the finalizer looks again while the PVCs follow a policy change
READY_REASONS = ReadyReasons(steps=kind.LIFECYCLE.starting_reasons, on_purpose=frozenset(kind.LIFECYCLE.by_reason))


class PostgresqlReconciler:
    name = "postgresql"
    primary = POSTGRESQLS
    owned: tuple[Resource, ...] = (CONFIGMAPS, SERVICES, STATEFULSETS)
    watches: tuple[Watch, ...] = ()

    def __init__(self, context: Context) -> None:
        self.context = context
        self.client = context.client
        self.settings = context.settings
        self.owned_children = Children(
            self.client, controller=self.name, owner_kind="Postgresql", field_manager=self.settings.field_manager
        )
        # The data PVCs carry our labels (from the volumeClaimTemplate): a change enqueues their Postgresql.
        self.watches = (
            Watch(PERSISTENTVOLUMECLAIMS, label_selector=f"{MANAGED_BY_LABEL}={self.settings.managed_by}", to_keys=_claim_owner),
        )
        self.passwords = Passwords(self.client, settings=self.settings, children=self.owned_children)
        self.unfinished = Unfinished(context, resource=POSTGRESQLS, mark=kind.PASSWORD_PENDING_ANNOTATION, what="its password Secret")

    def reconcile(self, key: str) -> Result:
        namespace, name = key.split("/", 1)
        try:
            pg: Mapping[str, Any] = self.client.get(POSTGRESQLS, name, namespace=namespace)
        except NotFound:
            return Result()
        if pg["metadata"].get("deletionTimestamp"):
            self.unfinished.forget(pg)
            return self._finalize(pg)
        left = self.unfinished.check(pg)
        if left == 0:
            return Result()  # removed: its create was never finished (nothing of it ran: it waited for the password)
        pg = self._ensure_finalizer(pg)
        generation = pg["metadata"].get("generation")
        problems = _spec_problems(pg)
        claim = self._claim(pg)
        if problems:
            invalid = condition(kind.RECONCILED, FALSE, kind.INVALID_SPEC, "; ".join(problems), observed_generation=generation)
            self._publish(pg, invalid, None, data=self._data(pg, claim, None))
            return Result()
        if left is not None:
            # The API is writing the user's password: generating one now, or starting postgres (which takes
            # the password only when it first initialises its data), would lose the user's. Until the API clears
            # the mark (also once the Secret exists: a create cut short before the mark went is removed whole,
            # and a database started on its volume would outlive it with a password nobody has).
            pending = condition(
                kind.RECONCILED, TRUE, kind.PASSWORD_PENDING, "waiting for the API to store the password", observed_generation=generation
            )
            self._publish(pg, pending, None, waiting=True, data=self._data(pg, claim, None))
            return Result(requeue_after_s=min(left, FINALIZE_POLL_S))
        outcome: Outcome | None = None
        try:
            outcome = self.passwords.ensure(pg, claim)
            data = self._data(pg, claim, outcome)
            statefulset = self._apply(pg)
        except ClusterError as e:
            if e.retryable:
                raise
            reason = kind.CHILD_CONFLICT if isinstance(e, ChildConflict) else kind.APPLY_FAILED
            failed = condition(kind.RECONCILED, FALSE, reason, e.message, observed_generation=generation)
            with contextlib.suppress(ClusterError):
                sts = self.owned_children.controlled(STATEFULSETS, pg, name)
                self._publish(pg, failed, sts, outcome, data=self._data(pg, claim, outcome))
            raise
        applied = condition(kind.RECONCILED, TRUE, kind.APPLIED, _applied(pg), observed_generation=generation)
        fixed = _storage_size_change(pg, statefulset)
        if fixed:  # a CR written around the API and the CRD's rule (devcluster evaluates no CEL)
            applied = condition(kind.RECONCILED, FALSE, kind.STORAGE_SIZE_FIXED, fixed, observed_generation=generation)
        self._publish(pg, applied, statefulset, outcome, data=data)
        return Result(requeue_after_s=RECHECK_S if outcome.problem else None)

    # -- the data volume -----------------------------------------------------------------------

    def _claim(self, pg: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The data PVC of pod 0 from the cache (our label), unless it is being deleted."""
        meta = pg["metadata"]
        claim = self.owned_children.cached(PERSISTENTVOLUMECLAIMS, meta["namespace"], kind.claim_name(meta["name"], 0))
        return None if claim is None or claim["metadata"].get("deletionTimestamp") else claim

    def _data(self, pg: Mapping[str, Any], claim: Mapping[str, Any] | None, outcome: Outcome | None) -> dict[str, Any] | None:
        """``status.dataVolume`` (:func:`darkroom_operator.pgpasswords.data_volume`); whether the claim predates our
        StatefulSet is asked of the server only when the cache has no StatefulSet of ours (a re-create's first reconcile)."""
        if claim is None:
            return None
        name, namespace = pg["metadata"]["name"], pg["metadata"]["namespace"]
        before = False
        if self.owned_children.controlled(STATEFULSETS, pg, name) is None:
            live = self.client.lookup(STATEFULSETS, name, namespace=namespace)
            before = live is None or controller_uid(live) != pg["metadata"]["uid"]
        return data_volume(pg, claim, outcome, before_statefulset=before)

    # -- metadata ----------------------------------------------------------------------------

    def _patch_metadata(self, pg: Mapping[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        meta = pg["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], **changes}}
        return self.client.patch(
            POSTGRESQLS, meta["name"], patch, namespace=meta["namespace"], patch_type="merge", field_manager=self.settings.field_manager
        )

    def _ensure_finalizer(self, pg: Mapping[str, Any]) -> Mapping[str, Any]:
        finalizers = list(pg["metadata"].get("finalizers") or ())
        if kind.FINALIZER in finalizers:
            return pg
        return self._patch_metadata(pg, {"finalizers": [*finalizers, kind.FINALIZER]})

    # -- the password --------------------------------------------------------------------------

    # -- children ----------------------------------------------------------------------------

    def _desired(self, pg: Mapping[str, Any]) -> list[tuple[Resource, dict[str, Any]]]:
        name = pg["metadata"]["name"]
        live = self.owned_children.controlled(STATEFULSETS, pg, name)
        templates = ((live or {}).get("spec") or {}).get("volumeClaimTemplates") or ()
        size = next((t["spec"]["resources"]["requests"]["storage"] for t in templates if t["metadata"]["name"] == kind.DATA_VOLUME), None)
        return [
            (CONFIGMAPS, pgchildren.configmap(pg, self.settings)),
            (SERVICES, pgchildren.headless_service(pg, self.settings)),
            (SERVICES, pgchildren.client_service(pg, self.settings)),
            (STATEFULSETS, pgchildren.statefulset(pg, self.settings, storage_size=size)),
        ]

    def _apply(self, pg: Mapping[str, Any]) -> Mapping[str, Any]:
        """Apply every child (every name checked first: a conflict must not leave half a database); the StatefulSet."""
        desired = self._desired(pg)
        ours = [self.owned_children.ours(resource, pg, body) for resource, body in desired]
        applied = [self.owned_children.apply(resource, pg, stamp(body), live) for (resource, body), live in zip(desired, ours, strict=True)]
        return applied[-1]

    # -- status and events -------------------------------------------------------------------

    def _publish(
        self,
        pg: Mapping[str, Any],
        reconciled: dict[str, Any],
        statefulset: Mapping[str, Any] | None,
        outcome: Outcome | None = None,
        *,
        waiting: bool = False,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """Write status (only when it differs), then record Events for the transitions it made. ``outcome``: what the
        password check found (None: it did not run, nothing is said of the password Secret); ``data``: ``status.dataVolume``."""
        meta = pg["metadata"]
        status = pg.get("status") or {}
        now = self.context.now()
        problem = outcome.problem if outcome is not None else None
        if waiting:
            ready = condition(kind.READY, FALSE, kind.PASSWORD_PENDING, reconciled["message"], observed_generation=meta.get("generation"))
        else:
            ready = _readiness(statefulset, problem, observed_generation=meta.get("generation"))
        old = status.get("conditions") or ()
        conditions = [c for c in set_condition(set_condition(old, ready, now=now), reconciled, now=now) if c["type"] in kind.CONDITIONS]
        view = {"metadata": meta, "status": {"observedGeneration": meta.get("generation"), "conditions": conditions}}
        desired: dict[str, Any] = {
            "phase": kind.phase(view),
            "observedGeneration": meta.get("generation"),
            "readyReplicas": int(((statefulset or {}).get("status") or {}).get("readyReplicas") or 0),
            "endpoint": pgchildren.endpoint(pg),
            "conditions": conditions,
        }
        if outcome is not None:
            secret_name, secret_key = pgchildren.password_secret_ref(pg)
            desired["passwordSecret"] = {"name": secret_name, "key": secret_key, "present": problem is None}
        if data is not None:
            desired["dataVolume"] = dict(data)
        compared = ("phase", "observedGeneration", "readyReplicas", "endpoint", "passwordSecret", "dataVolume")
        unchanged = all(status.get(k) == desired.get(k) for k in compared) and all(same(find(old, c["type"]), c) for c in conditions)
        if unchanged:
            return
        body = {
            "apiVersion": POSTGRESQLS.api_version,
            "kind": POSTGRESQLS.kind,
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        }
        try:
            self.client.apply_status(POSTGRESQLS, {**body, "status": desired}, field_manager=self.settings.field_manager, force=True)
        except NotFound:
            return
        events = transition_events(find(old, kind.READY), ready, find(old, kind.RECONCILED), reconciled, reasons=READY_REASONS)
        for type_, reason, message in [*events, *self._data_events(pg, status.get("dataVolume"), data)]:
            self._event(pg, type_, reason, message)

    def _data_events(
        self, pg: Mapping[str, Any], old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> list[tuple[str, str, str]]:
        """One Event when the database is found to run on a former Postgresql's data, or learns whose password it has:
        Normal when the password is the data's (or the user's Secret, which we cannot judge), Warning when nobody has it."""
        if not new or not new.get("reused") or not new.get("password"):
            return []
        if old and old.get("reused") and old.get("password") == new.get("password"):
            return []
        secret_name, _ = pgchildren.password_secret_ref(pg)
        message = kind.data_volume_message(pg["metadata"]["name"], new, user=pgchildren.spec_of(pg)["user"], secret=secret_name)
        if new["password"] == kind.NEW:
            return [("Warning", kind.DATA_PASSWORD_UNKNOWN, message)]
        return [("Normal", kind.DATA_REUSED, message)]

    def _event(self, pg: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        try:
            self.context.recorder.event(pg, type_=type_, reason=reason, message=message)
        except ClusterError:
            log.warning("could not record event %s on postgresql %s/%s", reason, pg["metadata"]["namespace"], pg["metadata"]["name"])

    # -- deletion ----------------------------------------------------------------------------

    def _finalize(self, pg: Mapping[str, Any]) -> Result:
        meta = pg["metadata"]
        finalizers = list(meta.get("finalizers") or ())
        if kind.FINALIZER not in finalizers:
            return Result()
        policy = pgchildren.spec_of(pg)["deletionPolicy"]
        statefulset = self.owned_children.controlled(STATEFULSETS, pg, meta["name"])
        claims = self._claims(pg)
        if statefulset is not None:
            retention = ((statefulset.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted")
            if retention != ("Delete" if policy == "Delete" else "Retain"):  # the policy changed just before the deletion
                self._apply(pg)
                return Result(requeue_after_s=FINALIZE_POLL_S)
            owned = [c for c in claims if statefulset["metadata"]["uid"] in _owner_uids(c)]
            if (policy == "Delete") != (len(owned) == len(claims)) and claims:
                return Result(requeue_after_s=FINALIZE_POLL_S)  # the StatefulSet controller has not caught up yet
        names = ", ".join(c["metadata"]["name"] for c in claims) or "none"
        if policy == "Delete":
            self._event(pg, "Normal", "VolumesDeleted", f"deletionPolicy Delete: PersistentVolumeClaims ({names}) go with the StatefulSet")
        else:
            self._event(pg, "Normal", "VolumesRetained", f"deletionPolicy Retain: PersistentVolumeClaims ({names}) are kept")
        self.passwords.forget(pg)
        with contextlib.suppress(NotFound):
            self._patch_metadata(pg, {"finalizers": [f for f in finalizers if f != kind.FINALIZER] or None})
        return Result()

    def _claims(self, pg: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The data PVCs of ``pg``'s pods (named by the StatefulSet controller, labelled from our template)."""
        meta = pg["metadata"]
        selector = {**pgchildren.selector_labels(pg), MANAGED_BY_LABEL: self.settings.managed_by}
        found = self.client.list(PERSISTENTVOLUMECLAIMS, namespace=meta["namespace"], label_selector=selector)
        prefix = kind.claim_name(meta["name"], 0)[: -len("0")]
        return [c for c in found if c["metadata"]["name"].startswith(prefix) and c["metadata"]["name"][len(prefix) :].isdigit()]


def _applied(pg: Mapping[str, Any]) -> str:
    """Reconciled's message: what the reconcile made true (no Secret of ours when the password is the user's)."""
    if (pg.get("spec") or {}).get("passwordSecretRef"):
        secret_name, _ = pgchildren.password_secret_ref(pg)
        return f"ConfigMap, Services and StatefulSet match the spec; the password comes from Secret {secret_name}"
    return "Secret, ConfigMap, Services and StatefulSet match the spec"


def _spec_problems(pg: Mapping[str, Any]) -> list[str]:
    found = kind.spec_problems(pg.get("spec") or {})
    problems = [f"spec.{path}: {message}" for path, messages in found.items() for message in messages]
    if len(pg["metadata"]["name"]) > kind.MAX_NAME_LENGTH:
        problems.append(f"metadata.name: at most {kind.MAX_NAME_LENGTH} characters (the StatefulSet's pod revision label must fit)")
    return problems + pgchildren.resource_problems(pg)


def _storage_size_change(pg: Mapping[str, Any], statefulset: Mapping[str, Any]) -> str | None:
    """Why spec.storage.size is not what the data volume has (the claim template is immutable), or None."""
    templates = (statefulset.get("spec") or {}).get("volumeClaimTemplates") or ()
    live = next((t["spec"]["resources"]["requests"]["storage"] for t in templates if t["metadata"]["name"] == kind.DATA_VOLUME), None)
    wanted = pgchildren.spec_of(pg)["storage"]["size"]
    if live is None or quantity_value(str(live)) == quantity_value(str(wanted)):
        return None
    return f"spec.storage.size {wanted} is not the data volume's {live}: resizing is not supported yet; set it back to {live}"


def _readiness(statefulset: Mapping[str, Any] | None, password_problem: str | None, *, observed_generation: int | None) -> dict[str, Any]:
    """The Ready condition: the StatefulSet rolled out (current revision, observed generation) and its pod ready."""

    def ready(status: bool, reason: str, message: str) -> dict[str, Any]:
        return condition(kind.READY, status, reason, message, observed_generation=observed_generation)

    if password_problem:
        return ready(False, kind.PASSWORD_SECRET_MISSING, password_problem)
    if statefulset is None:
        return ready(False, kind.STATEFULSET_MISSING, "the StatefulSet does not exist yet")
    status = statefulset.get("status") or {}
    generation = int(statefulset["metadata"].get("generation") or 0)
    if int(status.get("observedGeneration") or 0) < generation:
        return ready(False, kind.ROLLOUT_IN_PROGRESS, f"waiting for the StatefulSet controller to observe generation {generation}")
    if status.get("updateRevision") and status.get("currentRevision") != status.get("updateRevision"):
        return ready(False, kind.ROLLOUT_IN_PROGRESS, "the pod is being replaced with the current template")
    if int(status.get("readyReplicas") or 0) < 1:
        return ready(False, kind.POD_NOT_READY, "the database pod is not ready yet (pg_isready)")
    return ready(True, kind.DATABASE_READY, "the database accepts connections")


def _owner_uids(obj: Mapping[str, Any]) -> set[str]:
    return {ref.get("uid") for ref in obj["metadata"].get("ownerReferences") or ()}


def _claim_owner(claim: Mapping[str, Any]) -> list[str]:
    """``to_keys`` of the PVC watch: the Postgresql whose pod the claim belongs to."""
    labels = claim["metadata"].get("labels") or {}
    if labels.get(NAME_LABEL) != pgchildren.APP_NAME or not labels.get(INSTANCE_LABEL):
        return []
    return [f"{claim['metadata']['namespace']}/{labels[INSTANCE_LABEL]}"]
