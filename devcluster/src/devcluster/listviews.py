"""Sorted views of one resource's objects at one revision, and the few kept for the ``continue`` pages of a list.

A :class:`View` is what a paginated LIST pages through: every object of a resource (in one namespace, or all) as of
one revision, in etcd's key order (``namespace/name`` compared as strings, as kube-apiserver's keys
``/registry/<resource>/<namespace>/<name>`` sort; not (namespace, name) pairs: ``team-a/x`` sorts before
``team/x``), so a page starts at a key by bisection. :class:`KeptViews` keeps the view a ``continue`` token
refers to, keyed by (resource, namespace, revision), so that each later page costs its own objects and not a
rebuild of the whole collection (which made a LIST of n objects in pages of 500 cost O(n²/500)); kube-apiserver's
watch cache keeps snapshots for the same purpose (``ListFromCacheSnapshot``). Kept views are bounded in number
and age, and released when their last page is served; one dropped early is rebuilt from the store's history, so
keeping one changes the cost of a page, never its answer. The store (``store.py``) builds and owns them.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ViewKey = tuple[str, str | None, int]  # (storage key, namespace or None for all, revision)
MAX_KEPT = 8  # views kept at once (each two lists of references, plus a key string, per object)
KEPT_FOR_S = 60.0  # a view unused this long is dropped (a client that stopped paging)


def object_key(namespace: str, name: str) -> str:
    """An object's key relative to its resource's prefix, which orders a list: ``namespace/name`` (``/name`` for a
    cluster-scoped object)."""
    return f"{namespace}/{name}"


@dataclass(frozen=True)
class View:
    """Objects (stored, never mutated) as of ``revision``, in key order; ``keys[i]`` is ``objects[i]``'s key."""

    revision: int
    keys: list[str]
    objects: list[dict[str, Any]]

    @classmethod
    def of(cls, revision: int, state: dict[tuple[str, str], dict[str, Any]]) -> View:
        """The view of ``state``, {(namespace, name): object}."""
        pairs = sorted((object_key(namespace, name), obj) for (namespace, name), obj in state.items())
        return cls(revision, [key for key, _ in pairs], [obj for _, obj in pairs])

    def position(self, key: str) -> int:
        """Index of the first object whose key is ``key`` or sorts after it."""
        return bisect_left(self.keys, key)


class KeptViews:
    """At most ``size`` views, each dropped ``ttl_s`` after it was last used; the least recently used goes first."""

    def __init__(self, *, size: int = MAX_KEPT, ttl_s: float = KEPT_FOR_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._size = size
        self._ttl_s = ttl_s
        self._clock = clock
        self._views: OrderedDict[ViewKey, tuple[View, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._views)

    def get(self, key: ViewKey) -> View | None:
        self._expire()
        kept = self._views.get(key)
        if kept is None:
            return None
        self._views[key] = (kept[0], self._clock())
        self._views.move_to_end(key)
        return kept[0]

    def keep(self, key: ViewKey, view: View) -> None:
        self._views[key] = (view, self._clock())
        self._views.move_to_end(key)
        self._expire()
        while len(self._views) > self._size:
            self._views.popitem(last=False)

    def release(self, key: ViewKey) -> None:
        self._views.pop(key, None)

    def drop_before(self, revision: int) -> None:
        """Forget the views of revisions older than ``revision`` (compacted away: their tokens are expired)."""
        for key in [k for k in self._views if k[2] < revision]:
            del self._views[key]

    def _expire(self) -> None:
        oldest = self._clock() - self._ttl_s
        while self._views:
            key, (_, used) = next(iter(self._views.items()))
            if used >= oldest:
                return
            del self._views[key]
