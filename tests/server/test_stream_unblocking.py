"""Streams held up by the same review share one run of it (:meth:`backend.server.streaming.Waker.unblock`), on a real loop.

Behaviours: streams whose blocking work has the same key (one person, one kind, one namespace) run it once, in one
thread, and all go on with its answer, their work cleared; different keys, and work of one stream alone (key None: a
credential recheck), run apart; a run that ends in "the person may no longer be served" ends every stream that shared
it; a stream that goes away while waiting does not cancel the run the others wait for; the next change with the same
key runs again (nothing is kept once a run has landed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Hashable
from typing import Any

from backend.api.watch.broadcasting import Broadcaster, Filters
from backend.api.watch.streams import Subscription
from backend.api.watch.visibility import Ended
from backend.server.streaming import Waker


class Review:
    """Blocking work that counts its runs and holds each until released."""

    def __init__(self, *, fails: bool = False) -> None:
        self.runs = 0
        self.fails = fails
        self.started = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.runs += 1
        self.started.set()
        if not self.release.wait(10):
            raise TimeoutError("never released")
        if self.fails:
            raise Ended("the token is no longer accepted")


def run_apart(scenario: Coroutine[Any, Any, None]) -> None:
    """Run ``scenario`` on a loop of its own thread: under pytest-xdist a browser test may have left Playwright's loop
    running in this worker's main thread, where ``asyncio.run`` refuses to start another."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, scenario).result()


def blocked(broadcaster: Broadcaster, work: Callable[[], object], key: Hashable | None) -> Subscription:
    subscription = Subscription(broadcaster, cursor=0, reset=None, filters=Filters(kinds=None, namespace=None), heartbeat_s=15.0)
    subscription.blocked, subscription.blocked_key = work, key
    return subscription


async def unblock_all(waker: Waker, subscriptions: list[Subscription], review: Review) -> list[bool]:
    """Every subscription's unblock, started together; the review released once it runs and all are waiting."""
    tasks = [asyncio.ensure_future(waker.unblock(s)) for s in subscriptions]
    await asyncio.to_thread(review.started.wait, 10)
    await asyncio.sleep(0)  # every task has reached its wait
    review.release.set()
    return list(await asyncio.gather(*tasks))


def test_streams_with_one_key_share_one_run() -> None:
    async def scenario() -> None:
        waker, hub, review = Waker(asyncio.get_running_loop()), Broadcaster(history=10), Review()
        key = (("bob", ("system:authenticated",)), "Darkroom", "team-a")
        streams = [blocked(hub, review, key) for _ in range(10)]
        assert await unblock_all(waker, streams, review) == [True] * 10
        assert review.runs == 1
        assert all(s.blocked is None and s.blocked_key is None for s in streams)
        again = Review()
        again.release.set()
        assert await waker.unblock(blocked(hub, again, key)) is True and again.runs == 1  # a later change runs again

    run_apart(scenario())


def test_different_keys_and_keyless_work_run_apart() -> None:
    async def scenario() -> None:
        waker, hub, review = Waker(asyncio.get_running_loop()), Broadcaster(history=10), Review()
        streams = [blocked(hub, review, ("bob", "Darkroom", ns)) for ns in ("team-a", "team-b")]
        streams += [blocked(hub, review, None), blocked(hub, review, None)]
        assert await unblock_all(waker, streams, review) == [True] * 4
        assert review.runs == 4

    run_apart(scenario())


def test_a_refusal_ends_every_stream_that_shared_the_run() -> None:
    async def scenario() -> None:
        waker, hub, review = Waker(asyncio.get_running_loop()), Broadcaster(history=10), Review(fails=True)
        streams = [blocked(hub, review, ("carol", "Darkroom", "team-a")) for _ in range(3)]
        assert await unblock_all(waker, streams, review) == [False] * 3
        assert review.runs == 1

    run_apart(scenario())


def test_a_stream_going_away_does_not_cancel_the_shared_run() -> None:
    async def scenario() -> None:
        waker, hub, review = Waker(asyncio.get_running_loop()), Broadcaster(history=10), Review()
        key = ("bob", "Darkroom", "team-a")
        first, second = blocked(hub, review, key), blocked(hub, review, key)
        asker = asyncio.ensure_future(waker.unblock(first))
        await asyncio.to_thread(review.started.wait, 10)
        follower = asyncio.ensure_future(waker.unblock(second))
        await asyncio.sleep(0)
        asker.cancel()  # the stream that started the run disconnects
        review.release.set()
        assert await follower is True
        assert review.runs == 1

    run_apart(scenario())
