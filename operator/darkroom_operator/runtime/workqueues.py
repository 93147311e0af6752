"""The workqueue between informer handlers and reconcile workers, with client-go's semantics.

One :class:`WorkQueue` per controller (:mod:`darkroom_operator.runtime.controllers`): handlers ``add`` keys,
workers ``get`` → reconcile → ``done``. Like client-go's rate-limiting delaying queue:

- a key is handed to at most one worker at a time: a key added while it is being processed is
  marked dirty and queued again only when the worker calls :meth:`WorkQueue.done`;
- repeated adds of a waiting key collapse into one;
- :meth:`WorkQueue.add_after` holds a key back for a delay; when it is added after again before
  that, the earliest time wins;
- :meth:`WorkQueue.add_rate_limited` delays by the rate limiter (default: client-go's controller
  limiter, see :mod:`darkroom_operator.runtime.ratelimiting`); :meth:`WorkQueue.forget` clears the key's
  failure history; :meth:`WorkQueue.num_requeues` reads it;
- after :meth:`WorkQueue.shut_down`, adds are ignored and ``get`` keeps handing out what is queued,
  then answers ``(None, True)``; :meth:`WorkQueue.shut_down_with_drain` also waits for the workers
  to finish everything queued and in flight.

Delayed keys need no timer thread: a waiting ``get`` sleeps until the earliest of them is due and
promotes every due key itself. Time comes from an injectable :class:`~darkroom_operator.runtime.ratelimiting.Clock`.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from dataclasses import dataclass

from darkroom_operator.runtime.ratelimiting import Clock, MonotonicClock, RateLimiter, default_rate_limiter


@dataclass(frozen=True)
class QueueStats:
    """A snapshot for metrics (client-go's workqueue metrics): counters are totals since creation."""

    name: str
    depth: int
    waiting: int
    adds_total: int
    retries_total: int
    longest_running_s: float
    unfinished_work_s: float


class WorkQueue:
    """A thread-safe, rate-limited, delaying work queue of string keys."""

    def __init__(self, *, name: str, clock: Clock | None = None, rate_limiter: RateLimiter | None = None) -> None:
        self.name = name
        self._clock = clock or MonotonicClock()
        self._limiter = rate_limiter or default_rate_limiter(clock=self._clock)
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: dict[str, float] = {}  # key -> when a worker got it
        self._waiting: list[tuple[float, int, str]] = []  # heap of (ready at, sequence, key)
        self._ready_at: dict[str, float] = {}  # the live heap entry of each waiting key
        self._sequence = itertools.count()
        self._shutting_down = False
        self._adds_total = 0
        self._retries_total = 0

    # -- adding --------------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """Queue ``key`` unless it is already queued; if a worker has it, queue it again after ``done``."""
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: str) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self._adds_total += 1
        if key in self._processing:
            return
        self._queue.append(key)
        self._cond.notify_all()

    def add_after(self, key: str, delay_s: float) -> None:
        """Add ``key`` once ``delay_s`` has passed (now if not positive); an earlier pending time wins."""
        with self._cond:
            if self._shutting_down:
                return
            if delay_s <= 0:
                self._add_locked(key)
                return
            ready_at = self._clock.now() + delay_s
            pending = self._ready_at.get(key)
            if pending is not None and pending <= ready_at:
                return
            self._ready_at[key] = ready_at
            heapq.heappush(self._waiting, (ready_at, next(self._sequence), key))
            self._cond.notify_all()  # a sleeping get may now have to wake up earlier

    def add_rate_limited(self, key: str) -> float:
        """Add ``key`` after the rate limiter's delay for it (which records one more failure); the delay."""
        delay_s = self._limiter.when(key)
        with self._cond:
            self._retries_total += 1
        self.add_after(key, delay_s)
        return delay_s

    def forget(self, key: str) -> None:
        """Clear the failure history of ``key`` (its next rate-limited add starts from the base delay)."""
        self._limiter.forget(key)

    def num_requeues(self, key: str) -> int:
        return self._limiter.num_requeues(key)

    # -- working -------------------------------------------------------------------------------

    def _promote_due_locked(self, now: float) -> float | None:
        """Move due delayed keys into the queue; seconds until the next one is due (None: nothing waits)."""
        while self._waiting and self._waiting[0][0] <= now:
            ready_at, _, key = heapq.heappop(self._waiting)
            if self._ready_at.get(key) == ready_at:
                del self._ready_at[key]
                self._add_locked(key)
        return self._waiting[0][0] - now if self._waiting else None

    def get(self, timeout_s: float | None = None) -> tuple[str | None, bool]:
        """Block for the next key: ``(key, False)``; ``(None, True)`` once shut down and empty.

        With ``timeout_s``, ``(None, False)`` when nothing came in time. The caller must call
        :meth:`done` with the key when finished with it.
        """
        with self._cond:
            deadline = None if timeout_s is None else self._clock.now() + timeout_s
            while True:
                now = self._clock.now()
                next_due_s = None if self._shutting_down else self._promote_due_locked(now)
                if self._queue:
                    key = self._queue.popleft()
                    self._processing[key] = now
                    self._dirty.discard(key)
                    return key, False
                if self._shutting_down:
                    return None, True
                wait_s = next_due_s
                if deadline is not None:
                    remaining = deadline - now
                    if remaining <= 0:
                        return None, False
                    wait_s = remaining if wait_s is None else min(wait_s, remaining)
                self._clock.wait(self._cond, wait_s)

    def done(self, key: str) -> None:
        """The worker finished ``key``; if it was added meanwhile, it is queued again now."""
        with self._cond:
            self._processing.pop(key, None)
            if key in self._dirty:
                self._queue.append(key)
            self._cond.notify_all()  # getters, and a draining shut_down_with_drain

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    # -- shutting down -------------------------------------------------------------------------

    @property
    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down

    def shut_down(self) -> None:
        """Ignore adds from now on (delayed keys are dropped); ``get`` hands out what is queued, then reports shutdown."""
        with self._cond:
            self._shutting_down = True
            self._waiting.clear()
            self._ready_at.clear()
            self._cond.notify_all()

    def shut_down_with_drain(self, timeout_s: float | None = None) -> bool:
        """:meth:`shut_down`, then wait until every queued and in-flight key is done; False if ``timeout_s`` passed first."""
        self.shut_down()
        with self._cond:
            deadline = None if timeout_s is None else self._clock.now() + timeout_s
            while self._queue or self._processing:
                if deadline is None:
                    self._clock.wait(self._cond, None)
                    continue
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    return False
                self._clock.wait(self._cond, remaining)
            return True

    # -- observing -----------------------------------------------------------------------------

    def stats(self) -> QueueStats:
        with self._cond:
            now = self._clock.now()
            running = [now - started for started in self._processing.values()]
            return QueueStats(
                name=self.name,
                depth=len(self._queue),
                waiting=len(self._ready_at),
                adds_total=self._adds_total,
                retries_total=self._retries_total,
                longest_running_s=max(running, default=0.0),
                unfinished_work_s=sum(running),
            )
