"""The event bus of live changes: informers publish each change once, every stream reads it from a ring buffer.

:class:`Broadcaster` (one per app, made by :func:`.watching.register`) keeps the last ``settings.sse_history``
events, each encoded once into its SSE frame (:func:`.sse.event_frame`) on the informer's dispatcher thread, in a
bounded ring buffer; every client streams from that buffer (no per-client queues) and waits on its condition, or, on
an event loop, on a listener (:class:`backend.server.streaming.Waker`). Ids are integers, strictly increasing within
a process and across restarts (they start at the process start time in microseconds), so an id from a previous
process is recognised as too old. :func:`publish_changes` subscribes a broadcaster to the informer of one kind, in
the representation its GET returns, and :func:`publish_related` to the informers of the reconciler's children and of
Events (for the dashboard's detail pages only); :class:`Filters` say which events a client wants (:class:`EventFilter`:
what any stream's filter answers).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
from prometheus_client import Counter

from backend.api.watch import sse
from backend.core.services import KindService
from cluster import Cache, FrozenDict, Informer, Resource


@dataclass(frozen=True)
class Event:
    id: int
    kind: str
    namespace: str
    frame: bytes  # the complete SSE frame, encoded once for every client
    name: str = ""
    change: str = ""  # ADDED, MODIFIED or DELETED
    source: FrozenDict | None = None  # the object as the informer saw it: other encodings are made from it on demand
    previous: FrozenDict | None = None  # a MODIFIED object as it was before (what a change altered: the dashboard's sort orders)
    encodings: dict[str, bytes] = field(default_factory=dict, compare=False)  # those encodings, made once (see Subscription.encode)


@dataclass(frozen=True)
class Batch:
    """What a waiting client gets: new events, or ``overflow`` (it fell behind the buffer), or ``closed``."""

    events: tuple[Event, ...] = ()
    overflow: bool = False
    closed: bool = False


class Broadcaster:
    """A ring buffer of encoded events with increasing ids, and a condition clients wait on."""

    def __init__(self, *, history: int, first_id: int | None = None) -> None:
        self._events: deque[Event] = deque(maxlen=max(1, history))
        self._last_id = first_id if first_id is not None else time.time_ns() // 1000
        self._cond = threading.Condition()
        self._closed = False
        self._listeners: tuple[Callable[[], None], ...] = ()
        self._closers: tuple[Callable[[], None], ...] = ()
        self.subscribers = 0

    @property
    def last_id(self) -> int:
        return self._last_id

    @property
    def closed(self) -> bool:
        return self._closed

    def publish(
        self,
        *,
        kind: str,
        namespace: str,
        data: Mapping[str, Any],
        name: str = "",
        change: str = "",
        source: FrozenDict | None = None,
        previous: FrozenDict | None = None,
    ) -> Event | None:
        payload = orjson.dumps(data)
        with self._cond:
            if self._closed:
                return None
            self._last_id += 1
            frame = sse.event_frame(self._last_id, kind, payload)
            event = Event(self._last_id, kind, namespace, frame, name=name, change=change, source=source, previous=previous)
            self._events.append(event)
            self._cond.notify_all()
            listeners = self._listeners
        for listener in listeners:
            listener()
        return event

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (from the publishing thread, outside the lock) after every publish and on close.

        Event loops use it to wake their streams (:class:`backend.server.streaming.Waker`); it must not block.
        """
        with self._cond:
            self._listeners = (*self._listeners, listener)

    def on_close(self, closer: Callable[[], None]) -> None:
        """Call ``closer()`` once, when :meth:`close` ends the streams (other streams of the app end with these: the
        dashboard's log streams)."""
        with self._cond:
            self._closers = (*self._closers, closer)

    def resume_point(self, last_event_id: str | None) -> tuple[int, str | None]:
        """(cursor, None) to resume after ``last_event_id``, or (newest id, why a reset is needed)."""
        with self._cond:
            newest = self._last_id
            if last_event_id is None:
                return newest, None
            try:
                cursor = int(last_event_id.strip())
            except ValueError:
                return newest, "the event id is malformed"
            if cursor > newest:
                return newest, "the event id is unknown (from another server process?)"
            oldest = self._events[0].id if self._events else newest + 1
            if cursor < oldest - 1:
                return newest, "the event id is too old: events since then are no longer kept"
            return cursor, None

    def wait(self, cursor: int, timeout_s: float) -> Batch:
        """Events after ``cursor`` (waiting up to ``timeout_s`` for one)."""
        with self._cond:
            self._cond.wait_for(lambda: self._last_id > cursor or self._closed, timeout=max(0.0, timeout_s))
            return self._batch(cursor)

    def poll(self, cursor: int) -> Batch:
        """Events after ``cursor``, without waiting (event loops wait on a listener instead)."""
        with self._cond:
            return self._batch(cursor)

    def _batch(self, cursor: int) -> Batch:
        if self._closed:
            return Batch(closed=True)
        if self._last_id <= cursor:
            return Batch()
        oldest = self._events[0].id
        if cursor < oldest - 1:
            return Batch(overflow=True)
        return Batch(events=tuple(itertools.islice(self._events, cursor - oldest + 1, None)))

    def attach(self, delta: int) -> None:
        with self._cond:
            self.subscribers += delta

    def close(self) -> None:
        """End every stream now and refuse new events (idempotent)."""
        with self._cond:
            closers = () if self._closed else self._closers
            self._closed = True
            self._cond.notify_all()
            listeners = self._listeners
        for listener in listeners:
            listener()
        for closer in closers:
            closer()


class EventFilter(Protocol):
    """Which events of the broadcaster one stream wants."""

    def match(self, event: Event) -> bool: ...


@dataclass(frozen=True)
class Filters:
    kinds: frozenset[str] | None  # None: every kind
    namespace: str | None
    q: str = ""  # a substring of the name (the dashboard's lists)

    def match(self, event: Event) -> bool:
        return (
            (self.kinds is None or event.kind in self.kinds)
            and (self.namespace is None or event.namespace == self.namespace)
            and (not self.q or self.q in event.name)
        )


def publish_changes(broadcaster: Broadcaster, service: KindService, *, cache: Cache, counter: Counter | None) -> None:
    """Publish the changes the informer of the service's kind sees, in the representation its GET returns."""
    kind = service.kind
    informer = cache.informer(kind.resource)
    if informer is None:
        return

    def publish(change: str, obj: FrozenDict, previous: FrozenDict | None = None) -> None:
        if broadcaster.closed:
            return
        meta = obj.get("metadata") or {}
        data = {
            "type": change,
            "kind": kind.title,
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "resourceVersion": meta.get("resourceVersion"),
            "object": service.converted(obj),
        }
        published = broadcaster.publish(
            kind=kind.title,
            namespace=meta.get("namespace") or "",
            data=data,
            name=meta.get("name") or "",
            change=change,
            source=obj,
            previous=previous,
        )
        if published is not None and counter is not None:
            counter.labels(kind.title, change).inc()

    _subscribe(informer, publish)


def publish_related(broadcaster: Broadcaster, resource: Resource, *, cache: Cache) -> None:
    """Publish the changes of ``resource`` (the reconciler's children, Events) as events of its kind, for the
    dashboard's detail pages (:mod:`backend.dashboard.livedetail`). ``/watch`` never carries them (its filters name our
    kinds only); each event carries the object (:attr:`Event.source`) its stream matches and the bare change as data."""
    informer = cache.informer(resource)
    if informer is None:
        return

    def publish(change: str, obj: FrozenDict, previous: FrozenDict | None = None) -> None:
        if broadcaster.closed:
            return
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        data = {"type": change, "kind": resource.kind, "namespace": namespace, "name": name}
        broadcaster.publish(kind=resource.kind, namespace=namespace, data=data, name=name, change=change, source=obj)

    _subscribe(informer, publish)


def _subscribe(informer: Informer, publish: Callable[[str, FrozenDict, FrozenDict | None], None]) -> None:
    """Call ``publish(change, object, previous)`` for every change the informer sees from now on (``previous``: a modified
    object as it was, else None): not the objects already cached (no replay), which are not changes."""
    informer.add_handler(
        on_add=lambda obj: publish("ADDED", obj, None),
        on_update=lambda old, new: publish("MODIFIED", new, old),
        on_delete=lambda obj: publish("DELETED", obj, None),
        replay=False,
    )
