"""``/watch`` streams served on the event loop of the production server: no thread per stream.

:func:`pump` is called by :class:`backend.server.asgi.Front` once the ``/watch`` view (which ran in a
request thread: authentication, filters, stream caps) has put its
:class:`backend.api.watch.streams.Subscription` in the request's :class:`backend.api.watch.streams.Handoff`. It
writes the frames the subscription produces until the broadcaster closes (shutdown) or the
client goes away, waiting between writes on a :class:`Waker`: the broadcaster calls it from the
informer's dispatcher thread after every publish, and it wakes every stream of the loop with one
``call_soon_threadsafe``. 1,000 idle streams thus cost 1,000 suspended coroutines and their
sockets, and a published event one wake-up plus one write per interested stream. A stream whose next
event needs a review of its person's rights waits for it off the loop, in a thread that every stream
held up by the same review shares (:meth:`Waker.unblock`).

:func:`pump_pushed` writes a :class:`backend.api.watch.streams.Pushed` stream (a pod's log) the same way: its threads
wake the loop (coalesced by the stream), the loop takes what is ready; at the end, or when the client goes away, the
stream is closed, which ends its threads and connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from backend.api.watch.broadcasting import Broadcaster
from backend.api.watch.streams import Pushed, Subscription, run_blocked

WAKE_SLICE = 50  # streams woken per pass of the loop (each writes its frames: ~20 µs)
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class Waker:
    """Wakes every stream of one loop waiting for the broadcaster: one callback per publish, however many wait."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: set[asyncio.Future[None]] = set()
        self._scheduled = False
        self._unblocking: dict[Hashable, asyncio.Future[bool]] = {}

    async def unblock(self, subscription: Subscription) -> bool:
        """Run the blocking work ``take`` left (:func:`run_blocked`) in a thread. Streams held up by the same review
        (equal :attr:`Subscription.blocked_key`: one person, one kind, one namespace) share one run: a change seen by
        the 10 streams of one person takes one thread, not 10 of which 9 would sit waiting for the first one's answer
        — the loop's default pool has only ``min(32, cpus + 4)`` threads."""
        key = subscription.blocked_key
        if key is None:
            return await asyncio.to_thread(run_blocked, subscription)
        shared = self._unblocking.get(key)
        if shared is None:
            shared = asyncio.ensure_future(asyncio.to_thread(run_blocked, subscription))
            self._unblocking[key] = shared
            shared.add_done_callback(functools.partial(self._landed, key))
        else:
            subscription.blocked = subscription.blocked_key = None  # its next take finds the shared answer cached
        return await asyncio.shield(shared)  # a stream that goes away does not cancel the others' review

    def _landed(self, key: Hashable, future: asyncio.Future[bool]) -> None:
        if self._unblocking.get(key) is future:
            del self._unblocking[key]

    def waiter(self) -> asyncio.Future[None]:
        """A future resolved at the next wake-up; take it *before* polling the broadcaster (no lost wake-up)."""
        future: asyncio.Future[None] = self._loop.create_future()
        self._waiting.add(future)
        return future

    def forget(self, future: asyncio.Future[None]) -> None:
        """Drop a waiter that was resolved otherwise (heartbeat timer, disconnect)."""
        self._waiting.discard(future)

    def notify_threadsafe(self) -> None:
        """Any thread: wake the loop's streams (coalesced: at most one pending callback)."""
        if not self._scheduled:
            self._scheduled = True
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody to wake
                self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        self._scheduled = False
        waiting, self._waiting = list(self._waiting), set()
        self._resolve(waiting, 0)

    def _resolve(self, waiting: list[asyncio.Future[None]], start: int) -> None:
        """Wake :data:`WAKE_SLICE` streams, then let the loop run what else is ready before the next slice:
        a request finishing in a thread waits for one slice of writes, not for all 1,000."""
        end = start + WAKE_SLICE
        for future in waiting[start:end]:
            if not future.done():
                future.set_result(None)
        if end < len(waiting):
            self._loop.call_soon(self._resolve, waiting, end)


class Wakers:
    """One :class:`Waker` per broadcaster on one loop, registered as its listener on first use."""

    def __init__(self) -> None:
        self._wakers: dict[int, Waker] = {}

    def get(self, broadcaster: Broadcaster) -> Waker:
        waker = self._wakers.get(id(broadcaster))
        if waker is None:
            waker = Waker(asyncio.get_running_loop())
            broadcaster.add_listener(waker.notify_threadsafe)
            self._wakers[id(broadcaster)] = waker
        return waker


async def until_disconnect(receive: Receive) -> None:
    """Returns when the client has gone away (the request body was already read by the front)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def pump(subscription: Subscription, *, send: Send, receive: Receive, waker: Waker) -> None:
    """Write ``subscription``'s frames as response body chunks until shutdown or disconnect.

    The caller has sent the response start and sends the final (empty) body chunk afterwards. While
    idle a stream costs one future in the waker and one timer for its heartbeat (no task per wait:
    a publish wakes 1,000 streams in one pass of the loop).
    """
    loop = asyncio.get_running_loop()
    broadcaster = subscription.broadcaster
    gone = asyncio.ensure_future(until_disconnect(receive))
    woken: asyncio.Future[None] | None = None

    def on_gone(_: object) -> None:
        if woken is not None:
            _resolve(woken)

    gone.add_done_callback(on_gone)
    broadcaster.attach(+1)
    try:
        await send({"type": "http.response.body", "body": subscription.opening(), "more_body": True})
        while not gone.done():
            if subscription.blocked is not None and not await waker.unblock(subscription):
                return  # the person may no longer be served (or could not be checked): the client reconnects to ask again
            woken = waker.waiter()  # before the poll: a publish after the poll resolves it
            batch = broadcaster.poll(subscription.cursor)
            if batch.closed:
                return
            frames = subscription.take(batch)
            if frames is not None:
                await send({"type": "http.response.body", "body": frames, "more_body": True})
            if subscription.blocked is not None:
                waker.forget(woken)
                continue  # the review (or recheck) first, then the rest of this batch
            if frames is None and not batch.events:
                timer = loop.call_later(max(0.0, subscription.heartbeat_in()), _resolve, woken)
                try:
                    await woken
                finally:
                    timer.cancel()
                    waker.forget(woken)
    finally:
        broadcaster.attach(-1)
        gone.cancel()


def _set_threadsafe(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody to wake
        loop.call_soon_threadsafe(event.set)


async def pump_pushed(pushed: Pushed, *, send: Send, receive: Receive) -> None:
    """Write ``pushed``'s frames as response body chunks until it finishes or the client goes away; then close it.
    The caller sends the response start before and the final (empty) body chunk after."""
    loop = asyncio.get_running_loop()
    gone = asyncio.ensure_future(until_disconnect(receive))
    woken = asyncio.Event()
    pushed.listen(functools.partial(_set_threadsafe, loop, woken))
    try:
        await send({"type": "http.response.body", "body": pushed.opening(), "more_body": True})
        while not gone.done():
            woken.clear()  # before the take: a wake-up after it is not lost
            frames = pushed.take()
            if frames:
                await send({"type": "http.response.body", "body": frames, "more_body": True})
            if pushed.finished:
                return
            waiting = asyncio.ensure_future(woken.wait())
            try:
                await asyncio.wait({waiting, gone}, timeout=max(0.0, pushed.heartbeat_in()), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
    finally:
        gone.cancel()
        pushed.close()
