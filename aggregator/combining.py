"""The bodies around CombinedTasks this server sends: lists and watch bookmarks.

The CombinedTask itself (a Task's metadata and spec with its Events in ``status.events``) is built by
:func:`cluster.taskevents.combined`, shared with the REST API's ``/combinedtasks`` so both serve one shape;
:mod:`aggregator.view` calls it with the view's version whenever a Task or one of its Events changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aggregator import resources


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
