"""One client's stream of live changes, and handing it to whichever server streams it.

:class:`Subscription` is one client's position in the broadcaster and what to write next (the frames of
:mod:`.sse`): the one place that turns broadcaster batches into frames, for both servers. :func:`open_stream` is the
stream half of a stream view, in the request: the stream caps (:mod:`.limits`: 503 + ``Retry-After`` over
``settings.stream_max_per_client`` / ``stream_max_total``), the resume point (``Last-Event-ID`` or
``?lastEventId=``), then the stream. Under the production server (the ASGI front, :mod:`backend.server.asgi`) the
scope carries a :class:`Handoff` slot: the view puts its :class:`Subscription` there and returns an empty body, and
the front pumps the frames on the event loop (:mod:`backend.server.streaming`), so an open stream holds no request
thread. Without the slot (werkzeug: tests, ``flask run``) the body is the blocking :class:`StreamBody`.
``/watch`` (:mod:`.watching`) and the dashboard's live rows (:mod:`backend.dashboard.liverows`) open their streams
here, over the same broadcaster and caps (the app's :class:`Streams`), the live rows with their own encoding of each
event (made from :attr:`.broadcasting.Event.source` at most once per encoding and kept on the event).

A stream whose frames come from threads of its own rather than from the broadcaster — a pod's log, read by one reader
thread per pod (:mod:`backend.dashboard.logstreams`) — is a :class:`Pushed`; :func:`pushed_response` hands it to the
front the same way (the :class:`Handoff`'s ``pushed``; :func:`backend.server.streaming.pump_pushed`), else serves it as
the blocking :class:`PushedBody`. Its caps are its own (the caller's :class:`~.limits.Lease`).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Generator, Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from flask import Response, request
from prometheus_client import Counter

from backend.api import actors
from backend.api.problems import Problem
from backend.api.watch import sse
from backend.api.watch.broadcasting import Batch, Broadcaster, Event, EventFilter
from backend.api.watch.limits import Lease, LimitReached, StreamLimits
from backend.api.watch.visibility import Ended, Visibility
from backend.core.access import RELATED, ClusterAccess
from backend.core.kinds.registry import KINDS
from backend.settings import ApiSettings
from cluster import ClusterError, Resource

log = logging.getLogger(__name__)

# an event's kind -> what listing it needs: our kinds, and the related objects of the dashboard's detail pages
RESOURCES = {kind.title: kind.resource for kind in KINDS} | {resource.kind: resource for resource in RELATED}
HANDOFF = "darkroom_control_panel.stream"  # key of the Handoff slot in an ASGI scope (backend.server.asgi)


class Subscription:
    """One client's position in the broadcaster and what to write next (no I/O: both servers drive it)."""

    def __init__(
        self,
        broadcaster: Broadcaster,
        *,
        cursor: int,
        reset: str | None,
        filters: EventFilter,
        heartbeat_s: float,
        encode: Callable[[Event], bytes] | None = None,
        visibility: Visibility | None = None,
    ) -> None:
        self.broadcaster = broadcaster
        self.encode = encode  # None: the event's JSON frame; else this client's encoding of the event (b"": nothing)
        self.visibility = visibility  # None: every event (the API's own identity)
        #: blocking work :meth:`take` needs done (in a thread, off the event loop) before it can go on: a review of
        #: whether the next event may be shown, or the recheck of the person's credentials; set by take, run and
        #: cleared by the server (:func:`run_blocked`)
        self.blocked: Callable[[], object] | None = None
        #: what :attr:`blocked` depends on when it is a visibility review (None: work of this stream alone): streams
        #: with equal keys can share one run of it (:meth:`backend.server.streaming.Waker.unblock`)
        self.blocked_key: Hashable | None = None
        self.cursor = cursor
        self.reset = reset
        self.filters = filters
        self.heartbeat_s = heartbeat_s
        self.last_write = time.monotonic()

    def opening(self) -> bytes:
        """``ready`` (with the reconnection delay), then ``reset`` if the resume point is gone."""
        frames = sse.ready_frame(self.cursor)
        if self.reset is not None:
            frames += sse.reset_frame(self.cursor, self.reset)
        self.last_write = time.monotonic()
        return frames

    def heartbeat_in(self) -> float:
        """Seconds until the next heartbeat is due (<= 0: now)."""
        return self.heartbeat_s - (time.monotonic() - self.last_write)

    def take(self, batch: Batch) -> bytes | None:
        """The frames ``batch`` means for this client (a heartbeat when one is due); None: nothing to write.

        Stops before an event whose visibility needs a review (or when the credentials are due for a recheck),
        leaving that work in :attr:`blocked`: the server runs it and calls take again with the next poll."""
        if batch.overflow:
            self.cursor = self.broadcaster.last_id
            self.last_write = time.monotonic()
            return sse.reset_frame(self.cursor, "the client fell behind: events were dropped")
        visibility = self.visibility
        if visibility is not None and visibility.recheck_due():
            self.blocked, self.blocked_key = visibility.recheck, None
            return None
        frames = []
        for event in batch.events:
            if not self.filters.match(event):
                self.cursor = event.id
                continue
            shown = True if visibility is None else visibility.known(event)
            if shown is None:
                if visibility is not None:
                    self.blocked, self.blocked_key = functools.partial(visibility.decide, event), visibility.review_key(event)
                break
            self.cursor = event.id
            if visibility is not None:
                visibility.count(shown)
            if shown:
                frame = event.frame if self.encode is None else self.encode(event)
                if frame:
                    frames.append(frame)
        if frames:
            self.last_write = time.monotonic()
            return b"".join(frames)
        if self.heartbeat_in() <= 0:
            self.last_write = time.monotonic()
            return sse.heartbeat_frame(self.cursor)
        return None


def run_blocked(subscription: Subscription) -> bool:
    """Run the blocking work ``take`` left (a review, a recheck); False when the stream must end (the person may no
    longer be served, or a review could not be made: never "allowed"). Blocking: a thread, never the event loop."""
    work, subscription.blocked, subscription.blocked_key = subscription.blocked, None, None
    if work is None:
        return True
    try:
        work()
    except Ended:
        return False
    except ClusterError as e:
        log.warning("ending a stream: a review could not be made (%s)", e.message)
        return False
    return True


class Pushed(Protocol):
    """A stream whose frames threads of its own produce (see the module docstring). Never blocks: the front calls it on
    its event loop."""

    @property
    def finished(self) -> bool:
        """Everything was taken and nothing more will come: the response ends."""
        ...

    def opening(self) -> bytes:
        """The first frames."""
        ...

    def take(self) -> bytes | None:
        """The frames ready now (a heartbeat when one is due); None: nothing yet."""
        ...

    def heartbeat_in(self) -> float:
        """Seconds until the next heartbeat is due."""
        ...

    def listen(self, wake: Callable[[], None]) -> None:
        """Have ``wake`` called (from any thread) when frames may be ready or the stream finished."""
        ...

    def close(self) -> None:
        """Stop producing and free what the stream holds (idempotent; quick: it never waits for its threads)."""
        ...


class Handoff:
    """The slot the ASGI front puts in the scope: the view fills it, the front streams it on its event loop."""

    def __init__(self) -> None:
        self.subscription: Subscription | None = None
        self.pushed: Pushed | None = None
        self.lease: Lease | None = None

    def release(self) -> None:
        if self.pushed is not None:
            self.pushed.close()
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
                timeout_s = 0.0 if subscription.blocked is not None else subscription.heartbeat_in()
                if not run_blocked(subscription):
                    return
                batch = broadcaster.wait(subscription.cursor, timeout_s)
                if batch.closed:
                    return
                frames = subscription.take(batch)
                if frames is not None:
                    yield frames
        finally:
            broadcaster.attach(-1)


class PushedBody:
    """The blocking body of a :class:`Pushed` stream (werkzeug): waits for its wake-ups in the request thread; ``close()``
    (the client went away, or the response ended) closes the stream and frees the lease."""

    def __init__(self, pushed: Pushed, *, lease: Lease | None = None) -> None:
        self._pushed = pushed
        self._lease = lease
        self._woken = threading.Event()
        pushed.listen(self._woken.set)
        self._frames = self._generate()

    def __iter__(self) -> Iterator[bytes]:
        return self._frames

    def close(self) -> None:
        self._frames.close()
        self._pushed.close()
        if self._lease is not None:
            self._lease.release()

    def _generate(self) -> Generator[bytes, None, None]:
        pushed = self._pushed
        yield pushed.opening()
        while True:
            self._woken.clear()  # before the take: a wake-up after it is not lost
            frames = pushed.take()
            if frames:
                yield frames
            if pushed.finished:
                return
            self._woken.wait(max(0.0, pushed.heartbeat_in()))


def pushed_response(pushed: Pushed, lease: Lease) -> Response:
    """The response of a :class:`Pushed` stream holding ``lease`` (a cap's): handed to the front, else a blocking body;
    HEAD gets the head alone."""
    scope = request.environ.get("asgi.scope")
    handoff = scope.get(HANDOFF) if isinstance(scope, dict) else None
    body: Iterator[bytes] | PushedBody
    if request.method == "HEAD":
        pushed.close()
        lease.release()
        body = iter(())
    elif isinstance(handoff, Handoff):
        handoff.pushed, handoff.lease = pushed, lease
        body = iter(())
    else:
        body = PushedBody(pushed, lease=lease)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        direct_passthrough=True,
    )


@dataclass(frozen=True)
class Streams:
    """What every stream view of one app shares: the broadcaster, the stream caps and their refusal counter, and the
    cluster access each stream's person is authorized through."""

    broadcaster: Broadcaster
    limits: StreamLimits
    settings: ApiSettings
    refused: Counter | None
    access: ClusterAccess

    def visibility(self, requires: Mapping[str, tuple[Resource, ...]] | None = None) -> Visibility | None:
        """What the current request's person may see of the stream (None: the API's own identity sees everything).
        ``requires``: per event kind, more resources its person must be able to list for the event to be shown (a
        Task row that carries its Events needs ``events`` too)."""
        actor = actors.current()
        if actor.user is None:
            return None
        needed = {kind: (resource, *(requires or {}).get(kind, ())) for kind, resource in RESOURCES.items()}
        return Visibility(
            self.access.acting_as(actor),
            self.access.access_reviews,
            needed,
            still_valid=actors.still_valid(),
            recheck_s=self.settings.review_cache_ttl_s,
        )


def open_stream(
    streams: Streams,
    filters: EventFilter,
    *,
    encode: Callable[[Event], bytes] | None = None,
    requires: Mapping[str, tuple[Resource, ...]] | None = None,
) -> Response:
    """The response of a stream view (in a request): the caps (503 + ``Retry-After``), the resume point
    (``Last-Event-ID`` or ``?lastEventId=``), then the stream handed to the front (or a blocking body).

    Every stream carries only what the request's person may list (:mod:`.visibility`; ``requires``: see
    :meth:`Streams.visibility`). ``encode`` (optional) turns
    each matching event into this stream's frames instead of the JSON frame (the dashboard's live rows,
    :mod:`backend.dashboard.liverows`).
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
    visibility = streams.visibility(requires)
    cursor, reset = broadcaster.resume_point(last)
    subscription = Subscription(
        broadcaster, cursor=cursor, reset=reset, filters=filters, heartbeat_s=settings.sse_heartbeat_s, encode=encode, visibility=visibility
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
