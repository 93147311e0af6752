"""Live changes: ``GET /watch`` streams Darkroom, Task and Postgresql adds, updates and deletes as Server-Sent Events.

:func:`register` (called by :func:`backend.app.create_app` with the app's services) subscribes a
:class:`Broadcaster` to the informer of each registered kind (:data:`backend.core.kinds.registry.KINDS`) in the app's
cache; :func:`close` ends every stream (the gunicorn
worker calls it on SIGTERM through :mod:`backend.server.shutdown`, so no thread stays blocked in a stream
after shutdown). Each change is converted to the friendly representation and encoded once,
on the informer's dispatcher thread, into a bounded ring buffer of the last
``settings.sse_history`` events; every client streams from that buffer (no per-client queues).

Wire format (``text/event-stream``):

- ``event: darkroom`` / ``event: task`` / ``event: postgresql`` with ``id: <n>`` and ``data:`` one JSON object
  ``{"type": "ADDED"|"MODIFIED"|"DELETED", "kind": "Darkroom"|"Task"|"Postgresql", "namespace", "name",
  "resourceVersion", "object": <friendly representation, as GET /darkrooms/... returns it>}``.
  Named events only (no generic ``message``): htmx ``sse-swap="darkroom"`` or
  ``EventSource.addEventListener("task", ...)`` pick what they need.
- ``event: ready`` first, with ``id`` = the newest event id, so a client that reconnects later
  resumes from the moment it connected even if nothing has happened yet.
- ``event: reset`` (data ``{"reason": ..., "lastEventId": ...}``) when the client asked to resume
  from an id the buffer no longer holds (too old, from before a restart, malformed) or fell behind
  the buffer: reload the state (``GET /darkrooms``, ``GET /tasks``, ``GET /postgresqls``), then keep listening.
- ``: heartbeat`` comments after ``settings.sse_heartbeat_s`` without output; they also carry
  ``id:`` so filtered clients' resume points keep up with the buffer.

Ids are integers, strictly increasing within a process and across restarts (they start at the
process start time in microseconds), so an id from a previous process is recognised as too old.
Resume with the ``Last-Event-ID`` header (EventSource sends it on reconnect) or ``?lastEventId=``.
Filters: ``?kind=Darkroom,Task,Postgresql`` and ``?namespace=``.

Serving: the view does everything a request needs (authentication, filters, the stream caps of
:mod:`backend.api.watch.limits`: 503 + ``Retry-After`` over ``settings.stream_max_per_client`` /
``stream_max_total``) and then hands the stream over. Under the production server (the ASGI front,
:mod:`backend.server.asgi`) the scope carries a :class:`Handoff` slot: the view puts its
:class:`Subscription` there and returns an empty body, and the front pumps the frames on the
event loop (:mod:`backend.server.streaming`), so an open stream holds no request thread. Without the slot
(werkzeug: tests, ``flask run``) the body is the blocking generator :func:`stream`.
:class:`Subscription` is the one place that turns broadcaster batches into frames for both.
:func:`open_stream` is that view's stream half; the dashboard's live rows (:mod:`backend.dashboard.liverows`)
open their streams through it too, over the same broadcaster and caps (the :class:`Streams` :func:`register` returns,
handed to the dashboard by :func:`backend.app.create_app`), with their own encoding of each
event (made from :attr:`Event.source` at most once per encoding and kept on the event).
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any

import orjson
from flask import Flask, Response, request
from prometheus_client import Counter, Gauge

from backend.api import operations
from backend.api.problems import Problem
from backend.api.watch.limits import Lease, LimitReached, StreamLimits
from backend.core.kinds.registry import KINDS, TITLES, listed
from backend.core.services import KindService, Services
from backend.settings import ApiSettings
from cluster import Cache, FrozenDict

EXTENSION = "darkroom_control_panel.watch"
HANDOFF = "darkroom_control_panel.stream"  # key of the Handoff slot in an ASGI scope (backend.server.asgi)
RETRY_MS = 2000
KIND_NAMES = {name: kind.title for kind in KINDS for name in (kind.title.lower(), kind.plural)}
# The OpenAPI operation of GET /watch (backend.api.openapi reads the YAML after ---), naming every registered kind.
WATCH_DOC = Template("""\
Live changes of $plurals (Server-Sent Events).
---
get:
  tags: [live]
  summary: Stream changes as Server-Sent Events
  description: >
    Named events $events (data: a WatchEvent), ``ready`` first, ``reset`` when the
    requested resume point is gone (reload, then keep listening), heartbeat comments when idle.
    Resume with the ``Last-Event-ID`` header or ``lastEventId``.
  parameters:
    - {name: kind, in: query, required: false, schema: {type: string, example: "Darkroom,Task"},
       description: "Comma-separated kinds: $kinds (default: all)."}
    - {name: namespace, in: query, required: false, schema: {type: string}, description: Only this namespace.}
    - {name: lastEventId, in: query, required: false, schema: {type: string}, description: Resume after this event id.}
    - {name: Last-Event-ID, in: header, required: false, schema: {type: string}, description: Resume after this event id.}
  responses:
    "200":
      description: An endless event stream (ends when the server shuts down).
      content:
        text/event-stream:
          schema: {type: string}
    "400":
      description: Unknown kind or invalid namespace.
      content:
        application/problem+json:
          schema: {$$ref: "#/components/schemas/Problem"}
    "503":
      description: >
        Too many open streams (from this client, or in total); try again after ``Retry-After`` seconds.
      content:
        application/problem+json:
          schema: {$$ref: "#/components/schemas/Problem"}
""").substitute(
    plurals=listed([f"{title}s" for title in TITLES]),
    events=listed([f"``{title.lower()}``" for title in TITLES]),
    kinds=", ".join(TITLES),
)
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")


@dataclass(frozen=True)
class Event:
    id: int
    kind: str
    namespace: str
    frame: bytes  # the complete SSE frame, encoded once for every client
    name: str = ""
    change: str = ""  # ADDED, MODIFIED or DELETED
    source: FrozenDict | None = None  # the object as the informer saw it: other encodings are made from it on demand
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
        self.subscribers = 0

    @property
    def last_id(self) -> int:
        return self._last_id

    @property
    def closed(self) -> bool:
        return self._closed

    def publish(
        self, *, kind: str, namespace: str, data: Mapping[str, Any], name: str = "", change: str = "", source: FrozenDict | None = None
    ) -> Event | None:
        payload = orjson.dumps(data)
        with self._cond:
            if self._closed:
                return None
            self._last_id += 1
            frame = b"id: %d\nevent: %s\ndata: %s\n\n" % (self._last_id, kind.lower().encode(), payload)
            event = Event(self._last_id, kind, namespace, frame, name=name, change=change, source=source)
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
            self._closed = True
            self._cond.notify_all()
            listeners = self._listeners
        for listener in listeners:
            listener()


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


def parse_filters() -> Filters:
    errors: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for raw in request.args.getlist("kind"):
        for part in filter(None, (p.strip() for p in raw.split(","))):
            if part.lower() in KIND_NAMES:
                kinds.add(KIND_NAMES[part.lower()])
            else:
                errors.setdefault("kind", []).append(f"unknown kind {part!r}: use {', '.join(k.title for k in KINDS)}")
    namespace = request.args.get("namespace")
    if namespace is not None and not DNS_LABEL.match(namespace):
        errors["namespace"] = ["must be a DNS label (lowercase letters, digits and '-', at most 63 characters)"]
    if errors:
        raise Problem(400, "invalid watch filters", errors=errors)
    return Filters(kinds=frozenset(kinds) if kinds else None, namespace=namespace or None)


def reset_frame(event_id: int, reason: str) -> bytes:
    data = orjson.dumps({"reason": reason, "lastEventId": event_id})
    return b"id: %d\nevent: reset\ndata: %s\n\n" % (event_id, data)


class Subscription:
    """One client's position in the broadcaster and what to write next (no I/O: both servers drive it)."""

    def __init__(
        self,
        broadcaster: Broadcaster,
        *,
        cursor: int,
        reset: str | None,
        filters: Filters,
        heartbeat_s: float,
        encode: Callable[[Event], bytes] | None = None,
    ) -> None:
        self.broadcaster = broadcaster
        self.encode = encode  # None: the event's JSON frame; else this client's encoding of the event (b"": nothing)
        self.cursor = cursor
        self.reset = reset
        self.filters = filters
        self.heartbeat_s = heartbeat_s
        self.last_write = time.monotonic()

    def opening(self) -> bytes:
        """``ready`` (with the reconnection delay), then ``reset`` if the resume point is gone."""
        frames = b"retry: %d\nid: %d\nevent: ready\ndata: %s\n\n" % (RETRY_MS, self.cursor, orjson.dumps({"lastEventId": self.cursor}))
        if self.reset is not None:
            frames += reset_frame(self.cursor, self.reset)
        self.last_write = time.monotonic()
        return frames

    def heartbeat_in(self) -> float:
        """Seconds until the next heartbeat is due (<= 0: now)."""
        return self.heartbeat_s - (time.monotonic() - self.last_write)

    def take(self, batch: Batch) -> bytes | None:
        """The frames ``batch`` means for this client (a heartbeat when one is due); None: nothing to write."""
        if batch.overflow:
            self.cursor = self.broadcaster.last_id
            self.last_write = time.monotonic()
            return reset_frame(self.cursor, "the client fell behind: events were dropped")
        frames = []
        for event in batch.events:
            self.cursor = event.id
            if self.filters.match(event):
                frame = event.frame if self.encode is None else self.encode(event)
                if frame:
                    frames.append(frame)
        if frames:
            self.last_write = time.monotonic()
            return b"".join(frames)
        if self.heartbeat_in() <= 0:
            self.last_write = time.monotonic()
            return b": heartbeat\nid: %d\n\n" % self.cursor
        return None


class Handoff:
    """The slot the ASGI front puts in the scope: the view fills it, the front streams it on its event loop."""

    def __init__(self) -> None:
        self.subscription: Subscription | None = None
        self.lease: Lease | None = None

    def release(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None


class StreamBody:
    """The blocking body of one ``/watch`` response (werkzeug). ``close()`` (the server calls it when the
    client goes away or the response ends, even if it never iterated, e.g. for HEAD) frees the lease."""

    def __init__(self, subscription: Subscription, *, lease: Lease | None = None) -> None:
        self._frames: Generator[bytes, None, None] = self._generate(subscription)
        self._lease = lease

    def __iter__(self) -> Iterator[bytes]:
        return self._frames

    def close(self) -> None:
        self._frames.close()
        if self._lease is not None:
            self._lease.release()

    @staticmethod
    def _generate(subscription: Subscription) -> Generator[bytes, None, None]:
        broadcaster = subscription.broadcaster
        broadcaster.attach(+1)
        try:
            yield subscription.opening()
            while True:
                batch = broadcaster.wait(subscription.cursor, subscription.heartbeat_in())
                if batch.closed:
                    return
                frames = subscription.take(batch)
                if frames is not None:
                    yield frames
        finally:
            broadcaster.attach(-1)


def _subscribe(broadcaster: Broadcaster, service: KindService, *, cache: Cache, counter: Counter | None) -> None:
    """Publish the changes the informer of the service's kind sees, in the representation its GET returns."""
    kind = service.kind
    informer = cache.informer(kind.resource)
    if informer is None:
        return

    def publish(change: str, obj: FrozenDict) -> None:
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
            kind=kind.title, namespace=meta.get("namespace") or "", data=data, name=meta.get("name") or "", change=change, source=obj
        )
        if published is not None and counter is not None:
            counter.labels(kind.title, change).inc()

    # Added after the cache synced, a handler first gets every cached object as an add: those are not changes.
    replayed: set[tuple[str, str]] = set()

    def on_add(obj: FrozenDict) -> None:
        meta = obj.get("metadata") or {}
        key = (str(meta.get("uid")), str(meta.get("resourceVersion")))
        if key in replayed:
            replayed.discard(key)
            return
        publish("ADDED", obj)

    with informer.store.changed:  # the store's (reentrant) lock: the replay is exactly this snapshot
        if informer.has_synced:
            for obj in informer.store.list():
                meta = obj.get("metadata") or {}
                replayed.add((str(meta.get("uid")), str(meta.get("resourceVersion"))))
        informer.add_handler(
            on_add=on_add,
            on_update=lambda old, new: publish("MODIFIED", new),
            on_delete=lambda obj: publish("DELETED", obj),
        )


@dataclass(frozen=True)
class Streams:
    """What every stream view of one app shares: the broadcaster, the stream caps and their refusal counter."""

    broadcaster: Broadcaster
    limits: StreamLimits
    settings: ApiSettings
    refused: Counter | None


def open_stream(streams: Streams, filters: Filters, *, encode: Callable[[Event], bytes] | None = None) -> Response:
    """The response of a stream view (in a request): the caps (503 + ``Retry-After``), the resume point
    (``Last-Event-ID`` or ``?lastEventId=``), then the stream handed to the front (or a blocking body).

    ``encode`` (optional) turns each matching event into this stream's frames instead of the JSON frame
    (the dashboard's live rows, :mod:`backend.dashboard.liverows`).
    """
    broadcaster, settings = streams.broadcaster, streams.settings
    last = request.headers.get("Last-Event-ID")
    if last is None:
        last = request.args.get("lastEventId")
    try:
        lease = streams.limits.acquire(request.remote_addr or "-")
    except LimitReached as e:
        if streams.refused is not None:
            streams.refused.labels(e.cap).inc()
        raise Problem(503, str(e), headers={"Retry-After": str(settings.stream_retry_after_s)}) from e
    cursor, reset = broadcaster.resume_point(last)
    subscription = Subscription(
        broadcaster, cursor=cursor, reset=reset, filters=filters, heartbeat_s=settings.sse_heartbeat_s, encode=encode
    )
    scope = request.environ.get("asgi.scope")
    handoff = scope.get(HANDOFF) if isinstance(scope, dict) else None
    body: Iterator[bytes] | StreamBody
    if request.method == "HEAD":  # answered like GET (503 at a cap), but no stream follows
        lease.release()
        body = iter(())
    elif isinstance(handoff, Handoff):
        handoff.subscription, handoff.lease = subscription, lease
        body = iter(())  # the front streams it on its event loop
    else:
        body = StreamBody(subscription, lease=lease)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        direct_passthrough=True,
    )


def register(app: Flask, services: Services) -> Streams:
    """Add ``GET /watch`` and subscribe to the informers of the kinds of ``services``; the app's streams."""
    settings = services.settings
    broadcaster = Broadcaster(history=settings.sse_history)
    app.extensions[EXTENSION] = broadcaster
    limits = StreamLimits(max_total=settings.stream_max_total, max_per_client=settings.stream_max_per_client)
    counter = None
    refused = None
    if operations.EXTENSION in app.extensions:
        metrics = operations.registry(app)
        counter = Counter("darkroom_api_watch_events", "Changes published to /watch clients", labelnames=("kind", "type"), registry=metrics)
        subscribers = Gauge("darkroom_api_watch_subscribers", "Open /watch streams", registry=metrics)
        subscribers.set_function(lambda: broadcaster.subscribers)
        refused = Counter("darkroom_api_watch_refused", "/watch requests refused by a stream cap", labelnames=("cap",), registry=metrics)
    streams = Streams(broadcaster=broadcaster, limits=limits, settings=settings, refused=refused)
    for service in services.kinds:
        _subscribe(broadcaster, service, cache=services.access.cache, counter=counter)

    @app.get("/watch")
    def watch() -> Response:
        return open_stream(streams, parse_filters())

    watch.__doc__ = WATCH_DOC

    return streams


def close(app: Flask) -> None:
    """End every ``/watch`` stream of ``app`` (server shutdown)."""
    broadcaster: Broadcaster | None = app.extensions.get(EXTENSION)
    if broadcaster is not None:
        broadcaster.close()
