"""Watches with kube-apiserver semantics: start point, filtering, bookmarks, timeouts, 410 Gone.

A watch from a revision the store has not reached yet waits for it (nothing is sent until later
changes arrive), as a real API server does; the HTTP layer rejects a resourceVersion that is not a
number before a watch is opened.

:func:`open_watch` registers a :class:`Watch` on the store and computes its backlog in the same
event-loop step, so no change can slip between "what happened before" and "what happens next".
Objects that start or stop matching a selector arrive as ADDED / DELETED, as kube-apiserver's
watch cache sends them. The HTTP layer (``serving/``) drains :meth:`Watch.next` and writes one
JSON document per line.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from devcluster.errors import StatusError
from devcluster.reading import ListQuery
from devcluster.resources import ResourceType
from devcluster.store import Change, Store

# A watcher this far behind is closed (kube-apiserver drops slow watchers too); the client re-watches.
MAX_PENDING = 200_000


@dataclass
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK | ERROR
    obj: dict[str, Any]


@dataclass(eq=False)
class Watch:
    """One watch request's subscription; ``offer`` runs on the loop thread for every committed change."""

    resource: ResourceType
    query: ListQuery
    pending: deque[WatchEvent] = field(default_factory=deque)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    overflowed: bool = False
    # changes at or before this revision are not sent (a watch from a revision the store has not reached)
    after: int = 0

    def _matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if self.query.namespace is not None and meta.get("namespace", "") != self.query.namespace:
            return False
        return self.query.labels.matches(meta.get("labels")) and self.query.fields.matches(obj)

    def translate(self, change: Change) -> WatchEvent | None:
        if change.type == "DELETED":
            return WatchEvent("DELETED", change.obj) if self._matches(change.obj) else None
        now, before = self._matches(change.obj), self._matches(change.prev)
        if now and before:
            return WatchEvent("MODIFIED", change.obj)
        if now:
            return WatchEvent("ADDED", change.obj)
        if before and change.prev is not None:
            # kube-apiserver sends the last matching state, stamped with this change's resourceVersion.
            prev = change.prev
            return WatchEvent("DELETED", {**prev, "metadata": {**prev["metadata"], "resourceVersion": str(change.revision)}})
        return None

    def offer(self, change: Change) -> None:
        if change.revision <= self.after:
            return
        event = self.translate(change)
        if event is None:
            return
        if len(self.pending) >= MAX_PENDING:
            self.overflowed = True
        else:
            self.pending.append(event)
        self.wakeup.set()

    async def next(self, timeout_s: float) -> WatchEvent | None:
        """The next event, or None when ``timeout_s`` passes first."""
        if not self.pending:
            self.wakeup.clear()
            try:  # asyncio.timeout, not wait_for: Python 3.11's wait_for can drop a cancel (CPython gh-86296; see aggregation/registry.py)
                async with asyncio.timeout(max(0.0, timeout_s)):
                    await self.wakeup.wait()
            except TimeoutError:
                return None
        return self.pending.popleft() if self.pending else None


def bookmark(resource: ResourceType, revision: int, *, initial_events_end: bool = False) -> WatchEvent:
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if initial_events_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return WatchEvent("BOOKMARK", {"kind": resource.kind, "apiVersion": resource.group_version, "metadata": meta})


def error_event(error: StatusError) -> WatchEvent:
    return WatchEvent("ERROR", error.body())


def open_watch(
    store: Store, resource: ResourceType, query: ListQuery, *, send_initial_events: bool | None, allow_bookmarks: bool
) -> Watch | WatchEvent:
    """Subscribe and queue the backlog; returns an ERROR event instead when the start point is unusable."""
    watch = Watch(resource, query)
    rv = query.resource_version
    initial = send_initial_events if send_initial_events is not None else rv in ("", "0")
    if initial:
        for obj in store.items(resource.storage_key, query.namespace):
            if watch._matches(obj):
                watch.pending.append(WatchEvent("ADDED", obj))
        if send_initial_events and allow_bookmarks:
            watch.pending.append(bookmark(resource, store.revision, initial_events_end=True))
    elif rv in ("", "0"):  # sendInitialEvents=false with no resourceVersion: from now on
        pass
    elif int(rv) > store.revision:
        # kube-apiserver does not fail a watch from a future revision: it serves it from storage, which
        # sends the changes after that revision once there are any.
        watch.after = int(rv)
    else:
        start = int(rv)
        changes = store.changes_since(resource.storage_key, start)
        if changes is None:
            return error_event(StatusError(410, "Expired", f"too old resource version: {start} ({store.compacted})"))
        for change in changes:
            event = watch.translate(change)
            if event is not None:
                watch.pending.append(event)
    store.subscribe(resource.storage_key, watch)
    return watch
