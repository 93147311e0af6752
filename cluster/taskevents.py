"""A Task's Events in the informer cache: how an events informer indexes them, and the one lookup.

Shared by the REST API (``backend.combinedtasks`` and the dashboard's Task pages) and the aggregated
API server (``aggregator.view``), so both show the same Events for a Task. An Event belongs to a Task
when it carries the Task's UID in the ``example.example.com/task-uid`` label (the reconciler's Events,
seed 000) or is about the Task (``involvedObject.uid``, Events other tools recorded). The events
informer is added with :data:`INDEXERS`; :func:`events_of_task` is then two index lookups — what the
seed's ``task-uid in (...)`` events list costs when the cache answers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cluster.bodies import FrozenDict
from cluster.indexers import IndexFunction, by_label
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
