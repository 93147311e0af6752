"""The informer's thread-safe object store: frozen objects by key, secondary indexes, progress.

Written only by its informer (:mod:`cluster.informers`); read by the cached client and by anyone
holding the informer. Objects are :func:`cluster.bodies.freeze`-d before they go in, so readers get
shared references with no copying. ``progress`` is the newest resourceVersion the informer has
applied (from lists, events and bookmarks); together with the :attr:`Store.changed` condition it is
what read-your-writes waits on.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cluster import indexers
from cluster.bodies import FrozenDict, object_key, resource_version
from cluster.indexers import IndexFunction
from cluster.selectors import LabelSelector

Delta = tuple[str, FrozenDict, FrozenDict | None]  # (ADDED|MODIFIED|DELETED, object, previous)


class Store:
    """Key → frozen object, with indexes. All methods are thread-safe."""

    def __init__(self, *, index_functions: Mapping[str, IndexFunction] | None = None) -> None:
        self._lock = threading.RLock()
        self.changed = threading.Condition(self._lock)
        self._objects: dict[str, FrozenDict] = {}
        self._functions: dict[str, IndexFunction] = {indexers.NAMESPACE: indexers.by_namespace, **(index_functions or {})}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._functions}
        self._order: list[str] | None = None  # every key, sorted: kept until a key comes or goes (a change keeps it)
        self.progress = ""

    # -- writes (the informer) -------------------------------------------------------------

    def _index(self, key: str, obj: FrozenDict) -> None:
        for name, function in self._functions.items():
            index = self._indices[name]
            for value in function(obj):
                index.setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: FrozenDict) -> None:
        for name, function in self._functions.items():
            index = self._indices[name]
            for value in function(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def apply(self, event_type: str, obj: FrozenDict) -> Delta | None:
        """Apply one watch event; the resulting delta (None when it changes nothing)."""
        key = object_key(obj)
        with self._lock:
            previous = self._objects.get(key)
            if event_type == "DELETED":
                if previous is not None:
                    self._unindex(key, previous)
                    del self._objects[key]
                    self._order = None
                delta: Delta | None = ("DELETED", obj, previous) if previous is not None else None
            else:
                if previous is not None:
                    self._unindex(key, previous)
                else:
                    self._order = None
                self._objects[key] = obj
                self._index(key, obj)
                delta = ("ADDED" if previous is None else "MODIFIED", obj, previous)
            self._advance(resource_version(obj))
            return delta

    def replace(self, objects: Iterable[FrozenDict], version: str) -> list[Delta]:
        """Swap in a fresh list (a relist): deltas for what appeared, changed or vanished."""
        fresh = {object_key(o): o for o in objects}
        deltas: list[Delta] = []
        with self._lock:
            self._order = None
            for key, previous in list(self._objects.items()):
                if key not in fresh:
                    self._unindex(key, previous)
                    del self._objects[key]
                    deltas.append(("DELETED", previous, previous))
            for key, obj in fresh.items():
                existing = self._objects.get(key)
                if existing is not None:
                    if resource_version(existing) == resource_version(obj):
                        continue
                    self._unindex(key, existing)
                self._objects[key] = obj
                self._index(key, obj)
                deltas.append(("ADDED" if existing is None else "MODIFIED", obj, existing))
            self.progress = version
            self.changed.notify_all()
        return deltas

    def advance(self, version: str) -> None:
        """Record progress without a change (a bookmark)."""
        with self._lock:
            self._advance(version)

    def _advance(self, version: str) -> None:
        if version:
            self.progress = version
        self.changed.notify_all()

    # -- reads -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._objects)

    def get(self, key: str) -> FrozenDict | None:
        return self._objects.get(key)

    def list(self, *, namespace: str | None = None, selector: LabelSelector | None = None) -> list[FrozenDict]:
        """Objects (in a namespace, matching a selector), sorted by key like the API server's lists. Every object's list
        reuses the key order until a key comes or goes: status changes (most events) cost no sort."""
        with self._lock:
            objects = self._objects
            if namespace is None:
                if self._order is None:
                    self._order = sorted(objects)
                found = [objects[k] for k in self._order]
            else:
                found = [objects[k] for k in sorted(self._indices[indexers.NAMESPACE].get(namespace, ()))]
        if selector is None or selector.empty:
            return found
        return [obj for obj in found if selector.matches(obj["metadata"].get("labels"))]

    def by_index(self, index: str, value: str) -> builtins.list[FrozenDict]:
        with self._lock:
            if index not in self._indices:
                raise KeyError(f"no index named {index!r}; indexes: {sorted(self._indices)}")
            objects = self._objects
            return [objects[k] for k in sorted(self._indices[index].get(value, ()))]

    def index_values(self, index: str) -> builtins.list[str]:
        with self._lock:
            return sorted(self._indices[index])

    def wait(self, predicate: Callable[[], Any], timeout_s: float) -> bool:
        """Block until ``predicate()`` (evaluated under the lock after each change) holds; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.changed.wait(remaining)
            return True
