"""A Task's Events in the informer cache (how an events informer indexes them, the one lookup) and the
CombinedTask built from a Task and its Events.

Shared by the REST API (``backend.api.combinedtasks`` and the dashboard's Task pages) and the aggregated
API server (``aggregator.view``), so both show the same Events for a Task, in the same object. An Event belongs to a Task
when it carries the Task's UID in the ``example.example.com/task-uid`` label (the reconciler's Events,
seed 000) or is about the Task (``involvedObject.uid``, Events other tools recorded). The events
informer is added with :data:`INDEXERS`; :func:`events_of_task` is then two index lookups — what the
seed's ``task-uid in (...)`` events list costs when the cache answers it.

:func:`combined` is the CombinedTask (:mod:`kinds.combinedtasks`; seed 000's shape): the Task's
``metadata`` and ``spec``, its Events oldest first in ``status.events``, plus the Task's own
``status.conditions``/``observedGeneration`` so the object alone tells the Task's state
(:func:`kinds.tasks.state`). Task and Event bodies are the cache's frozen objects, shared, not copied.
``metadata.resourceVersion`` is the combination's version — an Event changes the CombinedTask without
changing the Task: :func:`latest_version` for a one-off read (the REST API), the aggregated server's
view numbers its own changes (the same number whenever its two watch streams arrive in order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cluster.bodies import FrozenDict, freeze
from cluster.indexers import IndexFunction, by_label
from kinds import combinedtasks as kind
from kinds.tasks import TASK_UID_LABEL

TASK_UID = "task-uid"
INVOLVED_UID = "involved-uid"


def by_involved_uid(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """Index Events by the UID of the object they are about."""
    uid = (obj.get("involvedObject") or {}).get("uid")
    return (uid,) if uid else ()


INDEXERS: Mapping[str, IndexFunction] = {TASK_UID: by_label(TASK_UID_LABEL), INVOLVED_UID: by_involved_uid}


def task_uids(event: Mapping[str, Any]) -> tuple[str, ...]:
    """The UIDs of the Tasks ``event`` belongs to (its label, the object it is about): the inverse of the lookup."""
    return tuple(dict.fromkeys((*INDEXERS[TASK_UID](event), *by_involved_uid(event))))


def event_order(event: Mapping[str, Any]) -> tuple[str, str]:
    """Sort key: oldest first (first timestamp, or the events.k8s.io eventTime), then by name."""
    return (str(event.get("firstTimestamp") or event.get("eventTime") or ""), str(event["metadata"]["name"]))


def ordered(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(events, key=event_order)


def events_of_task(by_index: Callable[[str, str], Sequence[FrozenDict]], uid: str) -> list[FrozenDict]:
    """The Events of the Task with ``uid``, oldest first, from ``by_index(index, value)`` (a cached
    client's or a store's): labelled with its UID or about it, each once."""
    if not uid:
        return []
    found = {e["metadata"]["uid"]: e for index in (TASK_UID, INVOLVED_UID) for e in by_index(index, uid)}
    return sorted(found.values(), key=event_order)


def combined(task: Mapping[str, Any], events: Sequence[Mapping[str, Any]], *, resource_version: str) -> FrozenDict:
    """The CombinedTask of ``task`` and its Events (already oldest first: :func:`events_of_task`) at ``resource_version``."""
    task_status = task.get("status") or {}
    status: dict[str, Any] = {"events": tuple(events)}
    status.update((field, task_status[field]) for field in kind.STATUS_FIELDS if field in task_status)
    spec = task.get("spec") or {}
    return FrozenDict(
        {
            "apiVersion": kind.GROUP_VERSION,
            "kind": kind.KIND,
            "metadata": FrozenDict({**task["metadata"], "resourceVersion": resource_version}),
            "spec": spec if isinstance(spec, FrozenDict) else freeze(spec),
            "status": FrozenDict(status),
        }
    )


def latest_version(task: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> str:
    """The newest resourceVersion among ``task`` and its Events: the version of their combination when read at once."""
    versions = [str(obj["metadata"].get("resourceVersion") or "") for obj in (task, *events)]
    if not all(v.isdigit() for v in versions):
        return versions[0]  # versions are opaque to clients; kube's are integers, anything else cannot be compared: the Task's
    return str(max(int(v) for v in versions))
