"""The Task reconciler, in-process (reconcile(key) with a settable clock) and through a running operator.

Behaviours: TaskCreated exactly once (also when the Event already exists from a crashed attempt),
TaskUpdated once per spec change and never for label/status changes or repeated reconciles, all
labelled with the task UID and timestamped; priority/deadline labels in sync; finalizer added
first and, on deletion, TaskDeleted then the finalizer removed without touching another
controller's finalizer; Overdue False/NotDue with a requeue at the deadline, True at the
deadline, False/Finished for a finished task; no write when nothing changed. Through the
operator: events exactly once per change across a restart, the finalizer flow, Overdue turning
True at a deadline a few seconds ahead without polling, and a namespace deletion that the
finalizer does not block (Events are refused there; the finalizer goes anyway).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from darkroom_operator.runtime.conditions import find

from cluster import EVENTS, NAMESPACES, TASKS, CachedClient, NotFound
from kinds.tasks import DEADLINE_LABEL, FINALIZER, PRIORITY_LABEL, TASK_UID_LABEL
from kinds.tasks import state as task_state
from tests.clusters import ClusterProcess
from tests.support import wait_for

from .harness import Harness, User, reconciles
from .operator_process import RunOperator

DEADLINE = datetime(2027, 3, 31, 17, 0, 0, tzinfo=UTC)


@pytest.fixture
def harness(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[Harness]:
    h = Harness(kube.kubeconfig, namespace)
    h.clock.fixed = DEADLINE - timedelta(hours=1)
    yield h
    release_finalizers(h.admin, h.namespace)
    h.close()


def release_finalizers(client: CachedClient, namespace: str) -> None:
    """Drop our finalizer from what a test leaves behind, so the namespace can go once no operator runs."""
    for task in client.list(TASKS, namespace=namespace):
        if task["metadata"].get("finalizers"):
            with contextlib.suppress(NotFound):
                client.patch(TASKS, task["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace=namespace)


def create(h: Harness, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": name, "namespace": h.namespace},
        "spec": {"priority": 5, "deadline": "2027-03-31T17:00:00Z", "details": "write notes", **spec},
    }
    created = h.admin.create(TASKS, body)
    h.settle(TASKS, created)
    return created


def patch(h: Harness, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
    patched = h.admin.patch(TASKS, name, body, namespace=h.namespace)
    h.settle(TASKS, patched)
    return patched


def lifecycle(h: Harness, uid: str) -> list[str]:
    return sorted(e["reason"] + ":" + e["metadata"]["name"].rsplit(".", 1)[-1] for e in h.events(**{TASK_UID_LABEL: uid}))


def overdue(task: Mapping[str, Any]) -> Mapping[str, Any]:
    return find((task.get("status") or {}).get("conditions"), "Overdue") or {}


def test_created_once_labels_finalizer_status_and_requeue(harness: Harness) -> None:
    h = harness
    uid = create(h, "notes")["metadata"]["uid"]
    result = h.tasks.reconcile(h.key("notes"))
    assert result.requeue_after_s == 3600  # the deadline is an hour ahead on the harness clock
    task = h.get(TASKS, "notes")
    assert task["metadata"]["finalizers"] == [FINALIZER]
    assert task["metadata"]["labels"] == {PRIORITY_LABEL: "5", DEADLINE_LABEL: "20270331T170000Z"}
    assert task["status"]["observedGeneration"] == 1
    condition = overdue(task)
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "NotDue",
        "the task is due at 2027-03-31T17:00:00Z",
    )
    assert condition["lastTransitionTime"] == "2027-03-31T16:00:00Z"
    assert task["spec"] == {"priority": 5, "deadline": "2027-03-31T17:00:00Z", "details": "write notes", "taskState": "Pending"}

    (event,) = h.events(**{TASK_UID_LABEL: uid})
    assert event["metadata"]["name"] == f"notes.{uid[:8]}.created"
    assert (event["type"], event["reason"]) == ("Normal", "TaskCreated")
    assert event["message"] == "Task notes created: priority 5, deadline 2027-03-31T17:00:00Z, Pending"
    assert event["involvedObject"]["uid"] == uid and event["involvedObject"]["kind"] == "Task"
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2027-03-31T16:00:00Z"
    assert event["count"] == 1 and event["source"] == {"component": "darkroom-operator"}

    h.settle_all()
    h.writes.clear()
    for _ in range(3):
        assert h.tasks.reconcile(h.key("notes")).requeue_after_s == 3600
    assert h.writes == []
    assert lifecycle(h, uid) == ["TaskCreated:created"]


def test_updated_once_per_spec_change_and_not_for_metadata_or_status(harness: Harness) -> None:
    h = harness
    uid = create(h, "edits")["metadata"]["uid"]
    h.tasks.reconcile(h.key("edits"))
    patch(h, "edits", {"metadata": {"labels": {"team": "docs"}, "annotations": {"note": "x"}}})
    h.tasks.reconcile(h.key("edits"))
    assert lifecycle(h, uid) == ["TaskCreated:created"]

    patch(h, "edits", {"spec": {"priority": 9, "deadline": "2027-04-01T09:30:00+02:00"}})
    for _ in range(2):
        h.tasks.reconcile(h.key("edits"))
        h.settle_all()
    task = h.get(TASKS, "edits")
    assert task["metadata"]["labels"] == {"team": "docs", PRIORITY_LABEL: "9", DEADLINE_LABEL: "20270401T073000Z"}
    assert task["status"]["observedGeneration"] == 2
    assert lifecycle(h, uid) == ["TaskCreated:created", "TaskUpdated:updated-2"]
    (updated,) = [e for e in h.events(**{TASK_UID_LABEL: uid}) if e["reason"] == "TaskUpdated"]
    assert updated["message"] == "Task edits updated (generation 2): priority 9, deadline 2027-04-01T09:30:00+02:00, Pending"

    patch(h, "edits", {"spec": {"details": "a"}})
    patch(h, "edits", {"spec": {"details": "b"}})  # two changes before the reconciler looks: two events
    h.tasks.reconcile(h.key("edits"))
    assert lifecycle(h, uid) == ["TaskCreated:created", "TaskUpdated:updated-2", "TaskUpdated:updated-3", "TaskUpdated:updated-4"]


def test_replay_after_a_crash_does_not_duplicate_events(harness: Harness) -> None:
    h = harness
    uid = create(h, "replay")["metadata"]["uid"]
    h.tasks.reconcile(h.key("replay"))
    # A crash between the Event and the status write: the Event exists, status does not say so.
    cleared = h.admin.patch(TASKS, "replay", {"status": None}, namespace=h.namespace, subresource="status")
    assert "status" not in cleared
    h.settle(TASKS, cleared)
    h.tasks.reconcile(h.key("replay"))
    assert lifecycle(h, uid) == ["TaskCreated:created"]
    assert h.get(TASKS, "replay")["status"]["observedGeneration"] == 1


def test_overdue_at_the_deadline_and_finished(harness: Harness) -> None:
    h = harness
    create(h, "due")
    assert h.tasks.reconcile(h.key("due")).requeue_after_s == 3600
    h.clock.fixed = DEADLINE
    h.settle_all()
    assert h.tasks.reconcile(h.key("due")).requeue_after_s is None
    condition = overdue(h.get(TASKS, "due"))
    assert (condition["status"], condition["reason"], condition["lastTransitionTime"]) == ("True", "DeadlinePassed", "2027-03-31T17:00:00Z")
    # kubectl get task's STATE (status.state) is the state kubectl get ct and the dashboard show
    assert h.get(TASKS, "due")["status"]["state"] == task_state(h.get(TASKS, "due")).word == "Overdue"

    patch(h, "due", {"spec": {"taskState": "Finished"}})
    h.tasks.reconcile(h.key("due"))
    condition = overdue(h.get(TASKS, "due"))
    assert (condition["status"], condition["reason"], condition["observedGeneration"]) == ("False", "Finished", 2)
    assert h.get(TASKS, "due")["status"]["state"] == "Finished"


def test_finalizer_flow_keeps_other_finalizers(harness: Harness) -> None:
    h = harness
    uid = create(h, "bye")["metadata"]["uid"]
    h.tasks.reconcile(h.key("bye"))
    task = h.get(TASKS, "bye")
    patch(h, "bye", {"metadata": {"finalizers": [*task["metadata"]["finalizers"], "other.example.com/keep"]}})
    deleting = h.admin.delete(TASKS, "bye", namespace=h.namespace)
    assert deleting["metadata"]["deletionTimestamp"]
    h.settle(TASKS, deleting)
    h.tasks.reconcile(h.key("bye"))
    task = h.get(TASKS, "bye")
    assert task["metadata"]["finalizers"] == ["other.example.com/keep"]
    assert lifecycle(h, uid) == ["TaskCreated:created", "TaskDeleted:deleted"]
    h.settle_all()
    h.tasks.reconcile(h.key("bye"))  # our finalizer is gone: nothing more to do
    assert lifecycle(h, uid) == ["TaskCreated:created", "TaskDeleted:deleted"]
    h.admin.patch(TASKS, "bye", {"metadata": {"finalizers": None}}, namespace=h.namespace)
    wait_for(lambda: not h.exists(TASKS, "bye"), timeout_s=10, message="task deleted")


# -- through a running operator ----------------------------------------------------------------


@pytest.fixture
def user(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[User]:
    u = User(kube.kubeconfig, namespace)
    yield u
    with contextlib.suppress(NotFound):
        release_finalizers(u.client, namespace)
    u.close()


def new_task(user: User, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": name, "namespace": user.namespace},
        "spec": {"priority": 5, "deadline": "2099-03-31T17:00:00Z", **spec},
    }
    return user.client.create(TASKS, body)


def task_events(user: User, uid: str) -> list[str]:
    return sorted(e["metadata"]["name"].rsplit(".", 1)[-1] for e in user.list(EVENTS, **{TASK_UID_LABEL: uid}))


def test_events_exactly_once_per_change_across_an_operator_restart(run_operator: RunOperator, user: User) -> None:
    op = run_operator(namespace=user.namespace)
    uid = new_task(user, "restart")["metadata"]["uid"]
    wait_for(lambda: task_events(user, uid) == ["created"], timeout_s=20, message="TaskCreated")
    user.client.patch(TASKS, "restart", {"spec": {"priority": 7}}, namespace=user.namespace)
    wait_for(lambda: task_events(user, uid) == ["created", "updated-2"], timeout_s=20, message="TaskUpdated")
    wait_for(lambda: user.get(TASKS, "restart")["status"]["observedGeneration"] == 2, timeout_s=20, message="status caught up")

    op.stop()
    op.start()
    wait_for(lambda: reconciles(op, "task") >= 1, timeout_s=20, message="the restarted operator reconciled the task")
    assert task_events(user, uid) == ["created", "updated-2"]  # a restart is not a change
    user.client.patch(TASKS, "restart", {"spec": {"taskState": "Finished"}}, namespace=user.namespace)
    wait_for(lambda: task_events(user, uid) == ["created", "updated-2", "updated-3"], timeout_s=20, message="TaskUpdated after restart")
    task = user.get(TASKS, "restart")
    assert task["metadata"]["labels"][PRIORITY_LABEL] == "7"
    wait_for(lambda: overdue(user.get(TASKS, "restart")).get("reason") == "Finished", timeout_s=20, message="Overdue=False/Finished")
    events = user.list(EVENTS, **{TASK_UID_LABEL: uid})
    assert all(e["firstTimestamp"] and e["lastTimestamp"] and e["involvedObject"]["uid"] == uid for e in events)


def test_finalizer_flow_through_the_operator(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    uid = new_task(user, "gone")["metadata"]["uid"]
    wait_for(lambda: FINALIZER in (user.get(TASKS, "gone")["metadata"].get("finalizers") or ()), timeout_s=20, message="finalizer added")
    user.client.delete(TASKS, "gone", namespace=user.namespace)
    wait_for(lambda: user.find(TASKS, "gone") is None, timeout_s=20, message="task deleted once the finalizer is removed")
    assert task_events(user, uid) == ["created", "deleted"]
    (deleted,) = [e for e in user.list(EVENTS, **{TASK_UID_LABEL: uid}) if e["reason"] == "TaskDeleted"]
    assert deleted["message"] == "Task gone deleted"


def test_overdue_turns_true_at_the_deadline(run_operator: RunOperator, user: User) -> None:
    op = run_operator(namespace=user.namespace)  # default resync (300 s): only the requeue can flip it in time
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    new_task(user, "soon", deadline=deadline.strftime("%Y-%m-%dT%H:%M:%SZ"))
    wait_for(lambda: overdue(user.get(TASKS, "soon")).get("reason") == "NotDue", timeout_s=20, message="Overdue=False/NotDue")
    wait_for(lambda: overdue(user.get(TASKS, "soon")).get("status") == "True", timeout_s=20, message="Overdue=True at the deadline")
    assert overdue(user.get(TASKS, "soon"))["reason"] == "DeadlinePassed"
    assert datetime.now(UTC) >= deadline
    assert reconciles(op, "task") <= 10  # a handful of reconciles, not polling


def test_deleting_the_namespace_is_not_blocked_by_the_finalizer(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    new_task(user, "stuck")
    wait_for(lambda: FINALIZER in (user.get(TASKS, "stuck")["metadata"].get("finalizers") or ()), timeout_s=20, message="finalizer added")
    user.client.delete(NAMESPACES, user.namespace)
    # Events cannot be created in a terminating namespace: the finalizer is removed anyway.
    wait_for(
        lambda: user.client.list(NAMESPACES) and not any(n["metadata"]["name"] == user.namespace for n in user.client.list(NAMESPACES)),
        timeout_s=30,
        message="namespace gone",
    )
