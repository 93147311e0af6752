"""The object store: current objects in memory, change history, revision counter, watch fan-out.

Like etcd behind kube-apiserver, it knows nothing of API semantics: it keeps objects by
(storage key, namespace, name), stamps each committed change with the next cluster-wide revision
(``metadata.resourceVersion``), persists it through :class:`~devcluster.storage.Storage`, appends
it to a bounded history (for watches that resume and for consistent paginated lists) and hands
it to the matching watchers, in commit order. A list reads a :class:`~devcluster.listviews.View` of one revision;
the views a paginated list still pages through are kept (``listviews.py``). Stored dicts are never mutated after commit, so
readers can hold them without copying. Everything runs on the server's event-loop thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from devcluster.listviews import KeptViews, View
from devcluster.storage import Storage

Key = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Change:
    """One committed change; ``obj`` is the new state (for DELETED: the last state at deletion)."""

    revision: int
    type: str  # ADDED | MODIFIED | DELETED
    resource: str  # storage key, "group/plural"
    namespace: str
    name: str
    obj: dict[str, Any]
    prev: dict[str, Any] | None


class Subscriber(Protocol):
    def offer(self, change: Change) -> None: ...


class Store:
    """Objects of every kind plus the change log; see the module docstring."""

    def __init__(self, storage: Storage, *, history_size: int) -> None:
        self._storage = storage
        self._objects: dict[str, dict[Key, dict[str, Any]]] = {}
        self._by_uid: dict[str, tuple[str, str, str]] = {}
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._history: deque[Change] = deque()
        self._history_size = max(1, history_size)
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._listeners: list[Callable[[Change], None]] = []
        self.revision = storage.revision()
        # Watches and snapshots from revisions at or after this one can be served from history.
        self.compacted = self.revision
        self._kept_views = KeptViews()
        for resource, obj in storage.load():
            meta = obj["metadata"]
            self._index(resource, meta.get("namespace", ""), meta["name"], obj, None)

    # -- reads -------------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(resource, {}).get((namespace, name))

    def items(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Objects of ``resource`` (in ``namespace`` when given), in etcd's key order (``listviews.object_key``)."""
        return self.current(resource, namespace).objects

    def current(self, resource: str, namespace: str | None = None) -> View:
        """The view of ``resource`` (in ``namespace`` when given) now, at :attr:`revision`."""
        return View.of(self.revision, self._state(resource, namespace))

    def _state(self, resource: str, namespace: str | None) -> dict[Key, dict[str, Any]]:
        """{(namespace, name): object} now; the store's own dict when ``namespace`` is None: only to read."""
        objects = self._objects.get(resource, {})
        return objects if namespace is None else {k: v for k, v in objects.items() if k[0] == namespace}

    def count(self, resource: str) -> int:
        return len(self._objects.get(resource, {}))

    def resources(self) -> list[str]:
        return [r for r, objects in self._objects.items() if objects]

    def by_uid(self, uid: str) -> tuple[str, str, str] | None:
        return self._by_uid.get(uid)

    def dependents(self, owner_uid: str) -> list[tuple[str, str, str]]:
        return sorted(self._dependents.get(owner_uid, ()))

    def view(self, resource: str, revision: int, namespace: str | None = None) -> View | None:
        """Objects of ``resource`` (in ``namespace`` when given) as they were at ``revision``, kept or rebuilt from
        the history; None when the history no longer reaches back."""
        if revision < self.compacted:
            self._kept_views.drop_before(self.compacted)
            return None
        kept = self._kept_views.get((resource, namespace, revision))
        if kept is not None:
            return kept
        state = dict(self._state(resource, namespace))
        for change in reversed(self._history):
            if change.revision <= revision:
                break
            if change.resource != resource or (namespace is not None and change.namespace != namespace):
                continue
            key = (change.namespace, change.name)
            if change.prev is None:
                state.pop(key, None)
            else:
                state[key] = change.prev
        return View.of(revision, state)

    def keep_view(self, resource: str, namespace: str | None, view: View) -> None:
        """Keep ``view`` for the next pages of a list (``listviews.KeptViews``: bounded in number and age)."""
        self._kept_views.drop_before(self.compacted)
        self._kept_views.keep((resource, namespace, view.revision), view)

    def release_view(self, resource: str, namespace: str | None, revision: int) -> None:
        """A list's last page was served: its view is not needed any more."""
        self._kept_views.release((resource, namespace, revision))

    def changes_since(self, resource: str, revision: int) -> list[Change] | None:
        """Changes to ``resource`` after ``revision``; None when that is older than the history."""
        if revision < self.compacted:
            return None
        out = []
        for change in reversed(self._history):
            if change.revision <= revision:
                break
            if change.resource == resource:
                out.append(change)
        out.reverse()
        return out

    # -- writes ------------------------------------------------------------------------------

    def put(self, resource: str, obj: dict[str, Any]) -> Change:
        """Create or replace ``obj`` (a fresh dict the caller no longer touches) at the next revision."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        prev = self.get(resource, namespace, name)
        revision = self.revision + 1
        meta["resourceVersion"] = str(revision)
        self._storage.commit(revision, [(resource, namespace, name, obj)], [])
        return self._committed(Change(revision, "MODIFIED" if prev else "ADDED", resource, namespace, name, obj, prev))

    def delete(self, resource: str, namespace: str, name: str) -> Change:
        prev = self._objects[resource][(namespace, name)]
        revision = self.revision + 1
        final = {**prev, "metadata": {**prev["metadata"], "resourceVersion": str(revision)}}
        self._storage.commit(revision, [], [(resource, namespace, name)])
        return self._committed(Change(revision, "DELETED", resource, namespace, name, final, prev))

    def _committed(self, change: Change) -> Change:
        self.revision = change.revision
        self._index(change.resource, change.namespace, change.name, None if change.type == "DELETED" else change.obj, change.prev)
        self._history.append(change)
        while len(self._history) > self._history_size:
            self.compacted = self._history.popleft().revision
        for subscriber in list(self._subscribers.get(change.resource, ())):
            subscriber.offer(change)
        for listener in self._listeners:
            listener(change)
        return change

    def _index(self, resource: str, namespace: str, name: str, obj: dict[str, Any] | None, prev: dict[str, Any] | None) -> None:
        ref = (resource, namespace, name)
        if prev is not None:
            self._by_uid.pop(prev["metadata"].get("uid", ""), None)
            for owner in prev["metadata"].get("ownerReferences") or ():
                self._dependents.get(owner.get("uid", ""), set()).discard(ref)
        objects = self._objects.setdefault(resource, {})
        if obj is None:
            objects.pop((namespace, name), None)
            return
        objects[(namespace, name)] = obj
        uid = obj["metadata"].get("uid")
        if uid:
            self._by_uid[uid] = ref
        for owner in obj["metadata"].get("ownerReferences") or ():
            self._dependents.setdefault(owner.get("uid", ""), set()).add(ref)

    # -- subscriptions -----------------------------------------------------------------------

    def subscribe(self, resource: str, subscriber: Subscriber) -> None:
        self._subscribers.setdefault(resource, set()).add(subscriber)

    def unsubscribe(self, resource: str, subscriber: Subscriber) -> None:
        self._subscribers.get(resource, set()).discard(subscriber)

    def watcher_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener`` synchronously after every commit (controllers use it to enqueue work)."""
        self._listeners.append(listener)

    def drop_resource(self, resource: str) -> Iterable[dict[str, Any]]:
        """Objects of a resource whose kind went away (CRD deleted) — caller deletes them one by one."""
        return list(self._objects.get(resource, {}).values())

    def close(self) -> None:
        self._storage.close()
