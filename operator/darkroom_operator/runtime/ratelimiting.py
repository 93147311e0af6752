"""Rate limiters for workqueue retries, after client-go's ``workqueue`` rate limiters, and the clock they read.

Used by :class:`darkroom_operator.runtime.workqueues.WorkQueue` (``add_rate_limited``); built by
:func:`default_rate_limiter` with client-go's controller defaults: the maximum of a per-key
exponential backoff (5 ms · 2^failures, capped at 1000 s) and an overall token bucket (10 qps,
burst 100) — the backoff protects one broken object, the bucket the API server when many fail.
A limiter's ``when(key)`` both records a failure and answers the delay; ``forget`` clears a key.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds, and waiting on a condition for up to that many of them (tests inject a fake)."""

    def now(self) -> float: ...

    def wait(self, condition: threading.Condition, timeout_s: float | None) -> None:
        """Wait on ``condition`` (held by the caller) until notified or ``timeout_s`` of this clock passed."""
        ...


class MonotonicClock:
    """The real clock: :func:`time.monotonic`."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, condition: threading.Condition, timeout_s: float | None) -> None:
        condition.wait(timeout_s)


class RateLimiter(Protocol):
    def when(self, key: Hashable) -> float:
        """Record one more failure of ``key``; how long to wait (s) before retrying it."""
        ...

    def forget(self, key: Hashable) -> None: ...

    def num_requeues(self, key: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """``base_s · 2^failures(key)``, at most ``max_s`` (client-go's ItemExponentialFailureRateLimiter)."""

    def __init__(self, *, base_s: float = 0.005, max_s: float = 1000.0) -> None:
        self.base_s = base_s
        self.max_s = max_s
        self._failures: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def when(self, key: Hashable) -> float:
        with self._lock:
            exponent = self._failures.get(key, 0)
            self._failures[key] = exponent + 1
        if exponent > 1023:  # 2.0**1024 overflows a float; long capped anyway
            return self.max_s
        return min(self.base_s * 2.0**exponent, self.max_s)

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        with self._lock:
            return self._failures.get(key, 0)


class BucketRateLimiter:
    """A token bucket shared by all keys (golang.org/x/time/rate ``Reserve``): ``qps`` refill, ``burst`` size.

    Every call takes a token, borrowing from the future when the bucket is empty; the delay is how
    long until that borrowed token would have been refilled. It counts no per-key failures.
    """

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be positive and burst at least 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock or MonotonicClock()
        self._tokens = float(burst)
        self._last = self._clock.now()
        self._lock = threading.Lock()

    def when(self, key: Hashable) -> float:
        with self._lock:
            now = self._clock.now()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return max(0.0, -self._tokens / self.qps)

    def forget(self, key: Hashable) -> None:
        pass

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters (client-go's MaxOfRateLimiter); every limiter records the failure."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("at least one rate limiter is required")
        self.limiters = limiters

    def when(self, key: Hashable) -> float:
        return max([limiter.when(key) for limiter in self.limiters])

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``: max(5 ms·2^n capped at 1000 s, 10 qps / burst 100)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base_s=0.005, max_s=1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )


class ConnectionBackoff:
    """One backoff for the API server itself, shared by every worker of every controller.

    When a reconcile fails because the server is away or overloaded (:class:`cluster.Unavailable`:
    transport errors, 5xx, 429), the key is re-added *without* a per-key failure — the object is not
    at fault, and charging every key to the shared 10 qps bucket would leave thousands of keys waiting
    in line long after the server is back. Instead the workers pause: ``initial_s`` after the first
    failure, doubling to ``max_s``, and the first success resets it, so full speed resumes as soon as
    one request gets through.
    """

    def __init__(self, *, initial_s: float = 0.05, max_s: float = 1.0, clock: Clock | None = None) -> None:
        self.initial_s, self.max_s = initial_s, max_s
        self._clock = clock or MonotonicClock()
        self._lock = threading.Lock()
        self._delay_s = 0.0
        self._until = 0.0
        self.failures = 0  # how many reconciles met an unavailable server (a metric)

    def failed(self) -> float:
        """Record that the server was unavailable; the pause (s) every worker now observes."""
        with self._lock:
            self._delay_s = min(self.max_s, self._delay_s * 2 if self._delay_s else self.initial_s)
            self._until = max(self._until, self._clock.now() + self._delay_s)
            self.failures += 1
            return self._delay_s

    def succeeded(self) -> None:
        with self._lock:
            self._delay_s = 0.0
            self._until = 0.0

    def pause_s(self) -> float:
        """How long a worker should wait before its next reconcile (0: go)."""
        with self._lock:
            return max(0.0, self._until - self._clock.now())
