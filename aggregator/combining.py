"""A CombinedTask: a Task's metadata and spec with its Events in ``status.events`` (seed 000's shape).

``status`` also carries the Task's own ``conditions`` and ``observedGeneration``, so the object alone
tells the Task's state (:func:`kinds.tasks.state`) — what the Table's State column shows.

Pure data shaping, called by :mod:`aggregator.view` whenever a Task or one of its Events changes.
The Task and Event bodies are the cache's frozen objects, shared, not copied (a CombinedTask costs a
few small dicts). ``metadata.resourceVersion`` is the view's version of the combination (see
:mod:`aggregator.view`), since an Event changes the CombinedTask without changing the Task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aggregator import resources
from cluster.bodies import FrozenDict, freeze


def combined(task: Mapping[str, Any], events: Sequence[Mapping[str, Any]], *, resource_version: str) -> FrozenDict:
    """The CombinedTask of ``task`` and its Events (already oldest first) at ``resource_version``."""
    return FrozenDict(
        {
            "apiVersion": resources.GROUP_VERSION,
            "kind": resources.KIND,
            "metadata": FrozenDict({**task["metadata"], "resourceVersion": resource_version}),
            "spec": _frozen(task.get("spec") or {}),
            "status": _status(task.get("status") or {}, events),
        }
    )


def bookmark(resource_version: str, *, initial_events_end: bool = False) -> dict[str, Any]:
    """The object of a BOOKMARK watch event (only the resourceVersion matters)."""
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if initial_events_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"apiVersion": resources.GROUP_VERSION, "kind": resources.KIND, "metadata": meta}


def list_body(items: Sequence[Mapping[str, Any]], *, resource_version: str, continue_token: str, remaining: int | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    return {"apiVersion": resources.GROUP_VERSION, "kind": resources.LIST_KIND, "metadata": meta, "items": list(items)}


def _status(task_status: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> FrozenDict:
    """The Events, plus the Task's own conditions (Overdue) so a CombinedTask alone tells the Task's state."""
    status: dict[str, Any] = {"events": tuple(events)}
    for field in ("conditions", "observedGeneration"):
        if field in task_status:
            status[field] = task_status[field]
    return FrozenDict(status)


def _frozen(value: Mapping[str, Any]) -> FrozenDict:
    return value if isinstance(value, FrozenDict) else freeze(value)
