"""Index functions for :class:`cluster.stores.Store`: object → the index values it is filed under.

Passed to informers as ``indexers={"name": function}`` (client-go's ``cache.Indexers``). The
reconciler finds children by owner UID and a Task's Events by label; the backend lists by namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

IndexFunction = Callable[[Mapping[str, Any]], Iterable[str]]

NAMESPACE = "namespace"
OWNER_UID = "owner-uid"


def by_namespace(obj: Mapping[str, Any]) -> Iterable[str]:
    return (obj["metadata"].get("namespace", ""),)


def by_owner_uid(obj: Mapping[str, Any]) -> Iterable[str]:
    return tuple(ref["uid"] for ref in obj["metadata"].get("ownerReferences") or () if "uid" in ref)


def by_label(label: str) -> IndexFunction:
    """Index by the value of one label, e.g. ``by_label("example.example.com/task-uid")``."""

    def index(obj: Mapping[str, Any]) -> Iterable[str]:
        labels = obj["metadata"].get("labels") or {}
        return (labels[label],) if label in labels else ()

    return index
