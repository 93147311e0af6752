"""The CombinedTasks, kept current from the Task and Event informers, with a history for watches.

Built by :mod:`aggregator.serving` once both informers have synced (:meth:`View.rebuild`), then fed
by their handlers: any change of a Task, or of an Event that belongs to one
(:func:`cluster.taskevents.task_uids`), re-reads that Task and its Events from the cache (two index
lookups) and, when the combination changed, records a :class:`Change`. Lists (:meth:`View.snapshot`)
and watches (:meth:`View.subscribe`) are served from here; neither makes an API call.

Resource versions. A CombinedTask changes when its Task *or* one of its Events does, and those come
on two watch streams with no order between them, so the view numbers its own changes: each gets the
etcd resourceVersion of what caused it, or one more than the previous change when that would not be
larger (an Event applied after a newer Task). Versions therefore only grow, a watch resumes exactly
after the last change it saw, and they stay the cluster's own numbers whenever the streams arrive in
order (nearly always). ``history_size`` changes are kept; a watch from before the oldest kept one is
answered 410 Expired, as kube's watch cache does. Lists whose continue token names an older version
are served from a kept snapshot (``snapshots`` of them) or answered 410 with an inconsistent token.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cluster import taskevents
from cluster.bodies import FrozenDict, object_key, resource_version
from cluster.indexers import IndexFunction
from cluster.informers import Informer
from cluster.taskevents import events_of_task, task_uids

UID = "uid"


def by_uid(obj: Any) -> tuple[str, ...]:
    uid = obj["metadata"].get("uid")
    return (uid,) if uid else ()


TASK_INDEXERS: dict[str, IndexFunction] = {UID: by_uid}


def _int(version: str) -> int:
    try:
        return int(version)
    except ValueError:
        return 0


@dataclass(frozen=True)
class Change:
    """One watch event of the view: ``ADDED``/``MODIFIED``/``DELETED`` at ``rv`` (``previous``: the object before)."""

    rv: int
    type: str
    obj: FrozenDict
    previous: FrozenDict | None


class Expired(Exception):
    """A watch from before the oldest kept change; ``oldest``: the version from which changes are kept."""

    def __init__(self, oldest: int) -> None:
        super().__init__(oldest)
        self.oldest = oldest


Subscriber = Callable[[Change], None]


class View:
    """CombinedTasks by ``namespace/name``; thread-safe (informer handler threads write, the server reads)."""

    def __init__(self, *, tasks: Informer, events: Informer, history_size: int = 10_000, snapshots: int = 16) -> None:
        self.tasks = tasks
        self.events = events
        self._lock = threading.RLock()
        self._objects: dict[str, FrozenDict] = {}
        self._signatures: dict[str, tuple[Any, ...]] = {}
        self._history: deque[Change] = deque(maxlen=history_size)
        self._snapshots: OrderedDict[int, tuple[FrozenDict, ...]] = OrderedDict()
        self._snapshot_count = snapshots
        self._subscribers: set[Subscriber] = set()
        self.highwater = 0
        self.oldest = 0
        self.ready = False

    # -- feeding -------------------------------------------------------------------------------

    def rebuild(self) -> None:
        """Build every CombinedTask from the synced caches (no history before this point), then follow changes."""
        with self._lock:
            self._objects.clear()
            self._signatures.clear()
            self._history.clear()
            self._snapshots.clear()
            top = max(_int(self.tasks.store.progress), _int(self.events.store.progress))
            for task in self.tasks.store.list():
                signature, events, version = self._inputs(task)
                key = object_key(task)
                self._objects[key] = taskevents.combined(task, events, resource_version=str(version))
                self._signatures[key] = signature
                top = max(top, version)
            self.highwater = self.oldest = top
            self.ready = True
        self.tasks.add_handler(on_add=self._task_changed, on_update=lambda _old, new: self._task_changed(new), on_delete=self._task_changed)
        self.events.add_handler(on_add=self._event_changed, on_update=self._event_updated, on_delete=self._event_changed)

    def _inputs(self, task: FrozenDict) -> tuple[tuple[Any, ...], list[FrozenDict], int]:
        events = events_of_task(self.events.store.by_index, task["metadata"].get("uid", ""))
        signature = (resource_version(task), tuple((e["metadata"].get("uid"), resource_version(e)) for e in events))
        version = max([_int(resource_version(task)), *(_int(resource_version(e)) for e in events)])
        return signature, events, version

    def _task_changed(self, task: FrozenDict) -> None:
        self.refresh(object_key(task), caused_by=_int(resource_version(task)))

    def _event_updated(self, old: FrozenDict, new: FrozenDict) -> None:
        self._touch(task_uids(old) + task_uids(new), _int(resource_version(new)))

    def _event_changed(self, event: FrozenDict) -> None:
        self._touch(task_uids(event), _int(resource_version(event)))

    def _touch(self, uids: Iterable[str], caused_by: int) -> None:
        for uid in dict.fromkeys(uids):
            for task in self.tasks.store.by_index(UID, uid):
                self.refresh(object_key(task), caused_by=caused_by)

    def refresh(self, key: str, *, caused_by: int) -> None:
        """Re-read the Task ``key`` and its Events from the cache; record a change if the combination changed."""
        with self._lock:
            if not self.ready:
                return
            task = self.tasks.store.get(key)
            old = self._objects.get(key)
            if task is None:
                if old is not None:
                    version = self._next(caused_by)
                    del self._objects[key], self._signatures[key]
                    gone = FrozenDict({**old, "metadata": FrozenDict({**old["metadata"], "resourceVersion": str(version)})})
                    self._record(Change(version, "DELETED", gone, old))
                return
            signature, events, inputs = self._inputs(task)
            if old is not None and self._signatures.get(key) == signature:
                return
            version = self._next(max(caused_by, inputs))
            new = taskevents.combined(task, events, resource_version=str(version))
            self._objects[key] = new
            self._signatures[key] = signature
            self._record(Change(version, "ADDED" if old is None else "MODIFIED", new, old))

    def _next(self, candidate: int) -> int:
        self.highwater = max(candidate, self.highwater + 1)
        return self.highwater

    def _record(self, change: Change) -> None:
        if self._history.maxlen is not None and len(self._history) == self._history.maxlen:
            self.oldest = self._history[0].rv
        self._history.append(change)
        for subscriber in list(self._subscribers):
            subscriber(change)

    # -- reading -------------------------------------------------------------------------------

    def get(self, key: str) -> FrozenDict | None:
        return self._objects.get(key)

    def snapshot(self) -> tuple[int, tuple[FrozenDict, ...]]:
        """(the current version, every CombinedTask sorted by namespace/name); kept for continue tokens."""
        with self._lock:
            version = self.highwater
            found = self._snapshots.get(version)
            if found is None:
                found = tuple(obj for _, obj in sorted(self._objects.items()))
                self._snapshots[version] = found
                while len(self._snapshots) > self._snapshot_count:
                    self._snapshots.popitem(last=False)
            else:
                self._snapshots.move_to_end(version)
            return version, found

    def snapshot_at(self, version: int) -> tuple[FrozenDict, ...] | None:
        """The list as it was at ``version`` if a snapshot of it is kept (or it is the current one)."""
        with self._lock:
            if version == self.highwater:
                return self.snapshot()[1]
            return self._snapshots.get(version)

    def wait_for(self, version: int, timeout_s: float) -> bool:
        """Block until the view reached ``version`` (for reads at a resourceVersion not seen yet)."""
        done = threading.Event()

        def check(_change: Change) -> None:
            if self.highwater >= version:
                done.set()

        with self._lock:
            if self.highwater >= version:
                return True
            self._subscribers.add(check)
        try:
            return done.wait(timeout_s)
        finally:
            with self._lock:
                self._subscribers.discard(check)

    def subscribe(self, subscriber: Subscriber, *, since: int | None) -> tuple[list[Change], int]:
        """Start delivering changes to ``subscriber``; returns the kept changes after ``since`` (None: none)
        and the current version, atomically, so nothing is missed or doubled. :class:`Expired` when
        ``since`` is older than the oldest kept change."""
        with self._lock:
            replay: list[Change] = []
            if since is not None:
                if since < self.oldest:
                    raise Expired(self.oldest)
                replay = [c for c in self._history if c.rv > since]
            self._subscribers.add(subscriber)
            return replay, self.highwater

    def subscribe_with_state(self, subscriber: Subscriber) -> tuple[tuple[FrozenDict, ...], int]:
        """Start delivering changes and return every current object with the version they are at (a watch's initial events)."""
        with self._lock:
            version, objects = self.snapshot()
            self._subscribers.add(subscriber)
            return objects, version

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(subscriber)

    def __len__(self) -> int:
        return len(self._objects)
