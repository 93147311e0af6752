"""The Task reconciler: lifecycle Events (exactly once), priority/deadline labels, the Overdue condition.

Built by the runtime as ``TaskReconciler(context)``; :meth:`reconcile` gets ``"<namespace>/<name>"``
on every change of a Task and on resync. Per reconcile, in this order:

1. **Finalizer and labels.** Our finalizer :data:`FINALIZER` (so a deletion waits for the
   TaskDeleted Event) and the labels :data:`PRIORITY_LABEL` (``"5"``) and :data:`DEADLINE_LABEL`
   are set in one merge patch carrying ``metadata.resourceVersion``: the server rejects it with a
   Conflict if the Task changed since we read it, so rewriting the finalizer list never drops
   another controller's finalizer (we retry on the fresh object). A label value cannot hold ``:``,
   so the deadline label is the deadline in UTC in ISO 8601 basic format, ``20270331T170000Z``.
2. **Events**, labelled ``example.example.com/task-uid=<uid>``: ``TaskCreated`` when the Task has
   no ``status.observedGeneration`` yet, ``TaskUpdated`` for every generation between the observed
   one and the current one (the API server bumps ``generation`` on spec changes only, so resyncs,
   restarts, label or status writes emit nothing; at most :data:`MAX_UPDATE_EVENTS`, the latest,
   per reconcile). Names are deterministic —
   ``<task>.<uid8>.created``, ``<task>.<uid8>.updated-<generation>``, ``<task>.<uid8>.deleted`` —
   so a replay after a crash between the Event and the status write meets AlreadyExists and
   counts as done: exactly once across restarts.
3. **Status** (only when it differs): ``observedGeneration`` — the record of which Events were
   emitted — and ``Overdue``: True at/after the deadline for a Pending task, False otherwise
   (``NotDue``, ``Finished``). A Pending task not yet due is requeued for its deadline; nothing polls.

On deletion (``deletionTimestamp`` set, our finalizer present): ``TaskDeleted``, then the finalizer
is removed with the same resourceVersion-guarded patch. If the namespace is terminating the API
refuses new Events (Forbidden); the finalizer is removed anyway so the namespace can go.

Limits of "exactly once": it holds as long as the Events exist (the API server expires Events,
an hour by default) — an Event that expired before a replay would be created again; and a Task
created and deleted before the operator first sees it gets no Events at all.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from cluster import TASKS, Forbidden, NotFound, Resource
from darkroom_operator.runtime.conditions import FALSE, TRUE, UNKNOWN, condition, find, same, set_condition
from darkroom_operator.runtime.reconciling import Context, Result, Watch
from darkroom_operator.runtime.recording import NORMAL, event_name
from kinds.tasks import (
    DEADLINE_LABEL,
    DEADLINE_LABEL_FORMAT,
    DEFAULT_TASK_STATE,
    FINALIZER,
    FINISHED,
    OVERDUE,
    PRIORITY_LABEL,
    TASK_UID_LABEL,
)
from kinds.tasks import state as task_state

log = logging.getLogger(__name__)

# At most this many TaskUpdated Events per reconcile (the most recent generations): a status reset
# on a much-edited Task must not turn into a burst of thousands of Event creates.
MAX_UPDATE_EVENTS = 20


def parse_deadline(value: object) -> datetime | None:
    """An RFC 3339 timestamp as an aware UTC datetime; None when absent or malformed (naive means UTC)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def deadline_label(deadline: datetime) -> str:
    return deadline.astimezone(UTC).strftime(DEADLINE_LABEL_FORMAT)


def desired_labels(task: Mapping[str, Any]) -> dict[str, str | None]:
    """Our labels for ``task``; None removes one (a deadline that cannot be parsed)."""
    spec = task.get("spec") or {}
    deadline = parse_deadline(spec.get("deadline"))
    priority = spec.get("priority")
    return {
        PRIORITY_LABEL: str(int(priority)) if isinstance(priority, int | float) else None,
        DEADLINE_LABEL: deadline_label(deadline) if deadline else None,
    }


def overdue(task: Mapping[str, Any], now: datetime) -> tuple[dict[str, Any], float | None]:
    """The Overdue condition (no lastTransitionTime) and, for a Pending task not yet due, seconds until it is."""
    spec = task.get("spec") or {}
    generation = task["metadata"].get("generation")
    deadline = parse_deadline(spec.get("deadline"))
    if (spec.get("taskState") or DEFAULT_TASK_STATE) == FINISHED:
        return condition(OVERDUE, FALSE, "Finished", "the task is finished", observed_generation=generation), None
    if deadline is None:
        return condition(
            OVERDUE, UNKNOWN, "InvalidDeadline", "spec.deadline is not an RFC 3339 timestamp", observed_generation=generation
        ), None
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    due = deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
    if now >= deadline:
        return condition(OVERDUE, TRUE, "DeadlinePassed", f"the task was due at {due}", observed_generation=generation), None
    return condition(OVERDUE, FALSE, "NotDue", f"the task is due at {due}", observed_generation=generation), (
        deadline - now
    ).total_seconds()


class TaskReconciler:
    name = "task"
    primary = TASKS
    owned: tuple[Resource, ...] = ()
    watches: tuple[Watch, ...] = ()

    def __init__(self, context: Context) -> None:
        self.context = context
        self.client = context.client
        self.settings = context.settings

    def reconcile(self, key: str) -> Result:
        namespace, name = key.split("/", 1)
        try:
            task: Mapping[str, Any] = self.client.get(TASKS, name, namespace=namespace)
        except NotFound:
            return Result()
        if task["metadata"].get("deletionTimestamp"):
            self._finalize(task)
            return Result()
        task = self._ensure_metadata(task)
        self._record_lifecycle(task)
        return self._publish(task)

    # -- metadata ----------------------------------------------------------------------------

    def _patch_metadata(self, task: Mapping[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        meta = task["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], **changes}}
        return self.client.patch(
            TASKS, meta["name"], patch, namespace=meta["namespace"], patch_type="merge", field_manager=self.settings.field_manager
        )

    def _ensure_metadata(self, task: Mapping[str, Any]) -> Mapping[str, Any]:
        meta = task["metadata"]
        labels = meta.get("labels") or {}
        changes: dict[str, Any] = {}
        wanted = {k: v for k, v in desired_labels(task).items() if labels.get(k) != v and (v is not None or k in labels)}
        if wanted:
            changes["labels"] = wanted
        finalizers = list(meta.get("finalizers") or ())
        if FINALIZER not in finalizers:
            changes["finalizers"] = [*finalizers, FINALIZER]
        return self._patch_metadata(task, changes) if changes else task

    def _finalize(self, task: Mapping[str, Any]) -> None:
        meta = task["metadata"]
        finalizers = list(meta.get("finalizers") or ())
        if FINALIZER not in finalizers:
            return
        try:
            self._event(task, "TaskDeleted", "deleted", f"Task {meta['name']} deleted")
        except Forbidden as e:
            log.warning(
                "could not record TaskDeleted for %s/%s (%s); removing the finalizer anyway", meta["namespace"], meta["name"], e.message
            )
        remaining = [f for f in finalizers if f != FINALIZER]
        with contextlib.suppress(NotFound):  # already gone
            self._patch_metadata(task, {"finalizers": remaining or None})

    # -- events ------------------------------------------------------------------------------

    def _event(self, task: Mapping[str, Any], reason: str, suffix: str, message: str) -> None:
        meta = task["metadata"]
        self.context.recorder.event(
            task,
            type_=NORMAL,
            reason=reason,
            message=message,
            name=event_name(meta["name"], f"{meta['uid'][:8]}.{suffix}"),
            labels={TASK_UID_LABEL: meta["uid"]},
        )

    def _record_lifecycle(self, task: Mapping[str, Any]) -> None:
        meta, spec = task["metadata"], task.get("spec") or {}
        generation = int(meta.get("generation") or 1)
        observed = (task.get("status") or {}).get("observedGeneration")
        summary = f"priority {spec.get('priority')}, deadline {spec.get('deadline')}, {spec.get('taskState') or DEFAULT_TASK_STATE}"
        if observed is None:
            self._event(task, "TaskCreated", "created", f"Task {meta['name']} created: {summary}")
            observed = 1
        for changed in range(max(int(observed) + 1, generation - MAX_UPDATE_EVENTS + 1), generation + 1):
            self._event(task, "TaskUpdated", f"updated-{changed}", f"Task {meta['name']} updated (generation {changed}): {summary}")

    # -- status ------------------------------------------------------------------------------

    def _publish(self, task: Mapping[str, Any]) -> Result:
        meta = task["metadata"]
        status = task.get("status") or {}
        now = self.context.now()
        new, due_in_s = overdue(task, now)
        old = status.get("conditions") or ()
        conditions = [c for c in set_condition(old, new, now=now) if c["type"] == OVERDUE]
        # The one state (kinds.tasks.state, what `kubectl get ct` and the dashboard show), for `kubectl get task`'s STATE.
        state = task_state({**task, "status": {**status, "conditions": conditions}}).word
        if status.get("observedGeneration") != meta.get("generation") or not same(find(old, OVERDUE), new) or status.get("state") != state:
            body = {
                "apiVersion": TASKS.api_version,
                "kind": TASKS.kind,
                "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                "status": {"observedGeneration": meta.get("generation"), "conditions": conditions, "state": state},
            }
            try:
                self.client.apply_status(TASKS, body, field_manager=self.settings.field_manager, force=True)
            except NotFound:
                return Result()
        return Result(requeue_after_s=due_in_s) if due_in_s is not None else Result()
