"""The workqueue between informer handlers and reconcile workers, with client-go's semantics.

One :class:`WorkQueue` per controller (:mod:`darkroom_operator.runtime.controllers`): handlers ``add`` keys,
workers ``get`` → reconcile → ``done``. Like client-go's rate-limiting delaying queue:

- a key is handed to at most one worker at a time: a key added while it is being processed is
  marked dirty and queued again only when the worker calls :meth:`WorkQueue.done`;
- repeated adds of a waiting key collapse into one;
- priorities, the rule of controller-runtime's priority queue: each add has a priority (:data:`HIGH`, the
  default, or :data:`LOW`; any int, higher first), ``get`` hands out the highest waiting priority first and
  first-in first-out within one; a key added again keeps the highest priority it was added with (a key waiting
  at :data:`LOW` is raised by a :data:`HIGH` add, and goes after the high keys already waiting); a key added
  while a worker has it is queued after ``done`` at the highest priority added meanwhile; a delayed key
  comes in at the priority of its ``add_after``. :meth:`WorkQueue.get_with_priority` tells the worker the
  priority it got the key at, so a retry or a requeue stays at it. Which events are low is the controllers'
  rule (:mod:`darkroom_operator.runtime.controllers`);
- :meth:`WorkQueue.add_after` holds a key back for a delay; when it is added after again before
  that, the earliest time wins (and the highest priority);
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
from dataclasses import dataclass

from darkroom_operator.runtime.ratelimiting import Clock, MonotonicClock, RateLimiter, default_rate_limiter

HIGH = 0  # an edge: a new object, a changed spec, a deletion, a child's change (controller-runtime's default priority)
LOW = -100  # a level: a key of the initial list or of a resync (controller-runtime's LowPriority)


@dataclass(frozen=True)
class QueueStats:
    """A snapshot for metrics (client-go's workqueue metrics): counters are totals since creation."""

    name: str
    depth: int
    depth_by_priority: dict[int, int]
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
        self._queue: list[tuple[int, int, str]] = []  # heap of (-priority, sequence, key); stale entries are skipped
        self._queued: dict[str, tuple[int, int]] = {}  # key -> (-priority, sequence) of its live entry in _queue
        self._dirty: dict[str, int] = {}  # key -> priority: added and not yet handed out (queued, or waiting for done)
        self._processing: dict[str, float] = {}  # key -> when a worker got it
        self._waiting: list[tuple[float, int, str]] = []  # heap of (ready at, sequence, key)
        self._ready_at: dict[str, tuple[float, int]] = {}  # key -> (ready at, priority) of its live heap entry
        self._sequence = itertools.count()
        self._shutting_down = False
        self._adds_total = 0
        self._retries_total = 0

    # -- adding --------------------------------------------------------------------------------

    def add(self, key: str, priority: int = HIGH) -> None:
        """Queue ``key`` unless it is already queued (then it keeps the higher priority); if a worker has it,
        queue it again after ``done``."""
        with self._cond:
            self._add_locked(key, priority)

    def _add_locked(self, key: str, priority: int) -> None:
        if self._shutting_down:
            return
        current = self._dirty.get(key)
        if current is not None:
            if priority > current:
                self._dirty[key] = priority
                if key in self._queued:
                    self._push_locked(key, priority)  # raised: the old entry goes stale
            return
        self._dirty[key] = priority
        self._adds_total += 1
        if key in self._processing:
            return
        self._push_locked(key, priority)
        self._cond.notify_all()

    def _push_locked(self, key: str, priority: int) -> None:
        entry = (-priority, next(self._sequence))
        self._queued[key] = entry
        heapq.heappush(self._queue, (*entry, key))

    def add_after(self, key: str, delay_s: float, priority: int = HIGH) -> None:
        """Add ``key`` at ``priority`` once ``delay_s`` has passed (now if not positive); an earlier pending time
        wins, and the higher priority."""
        with self._cond:
            if self._shutting_down:
                return
            if delay_s <= 0:
                self._add_locked(key, priority)
                return
            ready_at = self._clock.now() + delay_s
            pending = self._ready_at.get(key)
            if pending is not None:
                ready_at, priority = min(ready_at, pending[0]), max(priority, pending[1])
                if (ready_at, priority) == pending:
                    return
            self._ready_at[key] = (ready_at, priority)
            heapq.heappush(self._waiting, (ready_at, next(self._sequence), key))
            self._cond.notify_all()  # a sleeping get may now have to wake up earlier

    def add_rate_limited(self, key: str, priority: int = HIGH) -> float:
        """Add ``key`` at ``priority`` after the rate limiter's delay for it (which records one more failure); the delay."""
        delay_s = self._limiter.when(key)
        with self._cond:
            self._retries_total += 1
        self.add_after(key, delay_s, priority)
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
            pending = self._ready_at.get(key)
            if pending is not None and pending[0] == ready_at:
                del self._ready_at[key]
                self._add_locked(key, pending[1])
        return self._waiting[0][0] - now if self._waiting else None

    def get(self, timeout_s: float | None = None) -> tuple[str | None, bool]:
        """Block for the next key: ``(key, False)``; ``(None, True)`` once shut down and empty.

        With ``timeout_s``, ``(None, False)`` when nothing came in time. The caller must call
        :meth:`done` with the key when finished with it.
        """
        key, _, shutdown = self.get_with_priority(timeout_s)
        return key, shutdown

    def get_with_priority(self, timeout_s: float | None = None) -> tuple[str | None, int, bool]:
        """:meth:`get`, with the priority the key was queued at: ``(key, priority, shutdown)``."""
        with self._cond:
            deadline = None if timeout_s is None else self._clock.now() + timeout_s
            while True:
                now = self._clock.now()
                next_due_s = None if self._shutting_down else self._promote_due_locked(now)
                while self._queue:
                    negated, sequence, key = heapq.heappop(self._queue)
                    if self._queued.get(key) != (negated, sequence):
                        continue  # stale: the key was raised, or handed out already
                    del self._queued[key]
                    self._processing[key] = now
                    del self._dirty[key]
                    return key, -negated, False
                if self._shutting_down:
                    return None, HIGH, True
                wait_s = next_due_s
                if deadline is not None:
                    remaining = deadline - now
                    if remaining <= 0:
                        return None, HIGH, False
                    wait_s = remaining if wait_s is None else min(wait_s, remaining)
                self._clock.wait(self._cond, wait_s)

    def done(self, key: str) -> None:
        """The worker finished ``key``; if it was added meanwhile, it is queued again now (at the highest priority added)."""
        with self._cond:
            self._processing.pop(key, None)
            priority = self._dirty.get(key)
            if priority is not None:
                self._push_locked(key, priority)
            self._cond.notify_all()  # getters, and a draining shut_down_with_drain

    def __len__(self) -> int:
        with self._cond:
            return len(self._queued)

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
            while self._queued or self._processing:
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
            by_priority: dict[int, int] = {}
            for negated, _ in self._queued.values():
                by_priority[-negated] = by_priority.get(-negated, 0) + 1
            return QueueStats(
                name=self.name,
                depth=len(self._queued),
                depth_by_priority=by_priority,
                waiting=len(self._ready_at),
                adds_total=self._adds_total,
                retries_total=self._retries_total,
                longest_running_s=max(running, default=0.0),
                unfinished_work_s=sum(running),
            )
