"""The operator's workqueue and rate limiters behave like client-go's (darkroom_operator.runtime.workqueues, .ratelimiting).

Covers: repeated adds collapse; a key is never handed to two workers at once, and a key added while
it is processed is queued again (once) after ``done``; ``add_after`` delays and the earliest time
wins; priorities (controller-runtime's priority queue): the highest priority first and first in first out
within one, a waiting low key raised by a high add (collapsed, behind the high keys already waiting), a key
added during processing re-queued at the highest priority added meanwhile, a delayed key coming in at its
``add_after`` priority, ``get_with_priority`` naming it; the per-key exponential backoff (5 ms · 2^n,
capped at 1000 s), the 10 qps / burst 100 bucket and their maximum; ``forget`` and ``num_requeues``; ``shut_down`` and
``shut_down_with_drain``; stats for metrics. Time is an injected fake clock: nothing sleeps.
"""

from __future__ import annotations

import threading

import pytest
from darkroom_operator.runtime.ratelimiting import (
    BucketRateLimiter,
    ConnectionBackoff,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_rate_limiter,
)
from darkroom_operator.runtime.workqueues import HIGH, LOW, WorkQueue


class FakeClock:
    """Time moves only when the test says so; waits re-check every few real milliseconds."""

    def __init__(self) -> None:
        self._now = 1000.0

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def wait(self, condition: threading.Condition, timeout_s: float | None) -> None:
        condition.wait(0.005)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> WorkQueue:
    return WorkQueue(name="test", clock=clock)


def ready_now(queue: WorkQueue) -> str | None:
    """The key a worker would get right now without waiting (None: nothing ready)."""
    key, shutdown = queue.get(timeout_s=0)
    assert not shutdown
    return key


def in_thread(target: object) -> tuple[threading.Thread, list[object]]:
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(target()), daemon=True)  # type: ignore[operator]
    thread.start()
    return thread, results


# -- adds, get, done -------------------------------------------------------------------------


def test_repeated_adds_collapse_and_order_is_first_in_first_out(queue: WorkQueue) -> None:
    for key in ("ns/a", "ns/a", "ns/b", "ns/a", "ns/b"):
        queue.add(key)
    assert len(queue) == 2
    assert queue.stats().adds_total == 2
    assert ready_now(queue) == "ns/a"
    assert ready_now(queue) == "ns/b"
    assert ready_now(queue) is None


def test_a_key_being_processed_is_not_handed_out_again_until_done(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert ready_now(queue) == "ns/a"
    queue.add("ns/a")
    queue.add("ns/a")  # several adds during processing still mean one more reconcile
    assert len(queue) == 0
    assert ready_now(queue) is None
    queue.done("ns/a")
    assert len(queue) == 1
    assert ready_now(queue) == "ns/a"
    queue.done("ns/a")
    assert ready_now(queue) is None


def test_done_without_a_new_add_does_not_requeue(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert ready_now(queue) == "ns/a"
    queue.done("ns/a")
    assert len(queue) == 0


def test_other_keys_are_processed_while_one_is_busy(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert ready_now(queue) == "ns/a"
    queue.add("ns/a")
    queue.add("ns/b")
    assert ready_now(queue) == "ns/b"


def test_concurrent_workers_never_hold_the_same_key() -> None:
    queue = WorkQueue(name="stress")
    keys = [f"ns/k{i}" for i in range(5)]
    in_flight: set[str] = set()
    overlaps: list[str] = []
    processed: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        while True:
            key, shutdown = queue.get()
            if shutdown or key is None:
                return
            with lock:
                if key in in_flight:
                    overlaps.append(key)
                in_flight.add(key)
            sum(range(2000))  # a little work, to let other threads interleave
            with lock:
                in_flight.discard(key)
                processed.append(key)
            queue.done(key)

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for w in workers:
        w.start()
    for _ in range(300):
        for key in keys:
            queue.add(key)
    assert queue.shut_down_with_drain(timeout_s=60)
    for w in workers:
        w.join(10)
    assert overlaps == []
    assert set(processed) == set(keys)


def test_a_blocked_get_wakes_up_for_an_add(queue: WorkQueue) -> None:
    thread, results = in_thread(queue.get)
    queue.add("ns/a")
    thread.join(10)
    assert results == [("ns/a", False)]


# -- priorities ---------------------------------------------------------------------------------


def drain(queue: WorkQueue) -> list[str]:
    """Every key ready now, in the order workers would get them (each marked done at once)."""
    keys = []
    while (key := ready_now(queue)) is not None:
        keys.append(key)
        queue.done(key)
    return keys


def test_high_priority_keys_go_before_low_ones_first_in_first_out_within_each(queue: WorkQueue) -> None:
    for i in range(5):
        queue.add(f"ns/storm-{i}", LOW)
    queue.add("ns/edit-1")  # HIGH is the default
    queue.add("ns/storm-5", LOW)
    queue.add("ns/edit-2", HIGH)
    assert drain(queue) == ["ns/edit-1", "ns/edit-2", *(f"ns/storm-{i}" for i in range(6))]


def test_a_waiting_low_key_is_raised_by_a_high_add_and_not_queued_twice(queue: WorkQueue) -> None:
    for key in ("ns/a", "ns/b", "ns/c"):
        queue.add(key, LOW)
    queue.add("ns/first-edit", HIGH)
    queue.add("ns/c", HIGH)  # raised: after the high key already waiting, before every low one
    queue.add("ns/c", LOW)  # a later low add does not lower it
    assert len(queue) == 4
    assert queue.stats().adds_total == 4
    assert queue.stats().depth_by_priority == {HIGH: 2, LOW: 2}
    assert drain(queue) == ["ns/first-edit", "ns/c", "ns/a", "ns/b"]


def test_get_with_priority_names_the_priority_the_key_was_queued_at(queue: WorkQueue) -> None:
    queue.add("ns/low", LOW)
    queue.add("ns/high")
    assert queue.get_with_priority(timeout_s=0) == ("ns/high", HIGH, False)
    assert queue.get_with_priority(timeout_s=0) == ("ns/low", LOW, False)


def test_a_key_added_while_processing_comes_back_at_the_highest_priority_added(queue: WorkQueue) -> None:
    queue.add("ns/busy", LOW)
    assert ready_now(queue) == "ns/busy"
    queue.add("ns/busy", LOW)
    queue.add("ns/busy", HIGH)  # a spec edit during the reconcile
    queue.add("ns/other", HIGH)
    queue.add("ns/storm", LOW)
    assert ready_now(queue) == "ns/other"
    queue.done("ns/other")
    assert ready_now(queue) == "ns/storm"  # the only key ready: ns/busy is still being processed
    queue.done("ns/storm")
    queue.done("ns/busy")
    assert queue.get_with_priority(timeout_s=0) == ("ns/busy", HIGH, False)


def test_a_key_processed_while_low_and_re_added_low_stays_low(queue: WorkQueue) -> None:
    queue.add("ns/busy", LOW)
    assert ready_now(queue) == "ns/busy"
    queue.add("ns/busy", LOW)
    queue.add("ns/edit", HIGH)
    queue.done("ns/busy")
    assert drain(queue) == ["ns/edit", "ns/busy"]


def test_a_delayed_key_comes_in_at_its_priority_and_the_higher_of_two_wins(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/storm-1", LOW)
    queue.add_after("ns/retry", 2.0, LOW)
    queue.add_after("ns/retry", 5.0, HIGH)  # the earlier time and the higher priority
    queue.add_after("ns/requeue", 1.0, HIGH)
    clock.advance(2.5)
    assert queue.get_with_priority(timeout_s=0) == ("ns/requeue", HIGH, False)
    queue.done("ns/requeue")
    assert queue.get_with_priority(timeout_s=0) == ("ns/retry", HIGH, False)
    queue.done("ns/retry")
    assert queue.get_with_priority(timeout_s=0) == ("ns/storm-1", LOW, False)


def test_a_rate_limited_add_keeps_its_priority(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/storm", LOW)
    queue.add_rate_limited("ns/failing", HIGH)
    clock.advance(1.0)
    assert drain(queue) == ["ns/failing", "ns/storm"]


# -- delays -------------------------------------------------------------------------------------


def test_add_after_holds_the_key_back_until_due(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("ns/a", 2.0)
    assert ready_now(queue) is None
    assert queue.stats().waiting == 1
    clock.advance(1.999)
    assert ready_now(queue) is None
    clock.advance(0.001)
    assert ready_now(queue) == "ns/a"
    assert queue.stats().waiting == 0


def test_add_after_earliest_time_wins(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("ns/a", 5.0)
    queue.add_after("ns/a", 1.0)  # earlier: replaces
    queue.add_after("ns/a", 3.0)  # later than the pending 1 s: ignored
    clock.advance(1.0)
    assert ready_now(queue) == "ns/a"
    queue.done("ns/a")
    clock.advance(10.0)
    assert ready_now(queue) is None  # the superseded 3 s and 5 s entries never fire


def test_add_after_without_a_delay_adds_now(queue: WorkQueue) -> None:
    queue.add_after("ns/a", 0)
    queue.add_after("ns/b", -1)
    assert len(queue) == 2


def test_a_due_delayed_key_collapses_with_a_queued_one(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("ns/a", 1.0)
    queue.add("ns/a")
    clock.advance(1.0)
    assert ready_now(queue) == "ns/a"
    assert ready_now(queue) is None


def test_a_blocked_get_wakes_up_when_a_delayed_key_is_due(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add_after("ns/a", 30.0)
    thread, results = in_thread(queue.get)
    clock.advance(30.0)
    thread.join(10)
    assert results == [("ns/a", False)]


def test_a_delayed_key_due_while_processing_waits_for_done(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/a")
    assert ready_now(queue) == "ns/a"
    queue.add_after("ns/a", 1.0)
    clock.advance(1.0)
    assert ready_now(queue) is None
    queue.done("ns/a")
    assert ready_now(queue) == "ns/a"


# -- rate limiting ------------------------------------------------------------------------------


def test_exponential_backoff_doubles_per_failure_and_is_capped() -> None:
    limiter = ItemExponentialFailureRateLimiter(base_s=0.005, max_s=1000.0)
    assert [limiter.when("ns/a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert limiter.num_requeues("ns/a") == 4
    assert limiter.when("ns/b") == 0.005  # per key
    for _ in range(30):
        delay = limiter.when("ns/a")
    assert delay == 1000.0
    for _ in range(2000):  # far past float range of 2**n: still the cap, no overflow
        delay = limiter.when("ns/a")
    assert delay == 1000.0
    limiter.forget("ns/a")
    assert limiter.num_requeues("ns/a") == 0
    assert limiter.when("ns/a") == 0.005


def test_the_bucket_allows_a_burst_then_the_rate(clock: FakeClock) -> None:
    bucket = BucketRateLimiter(qps=10.0, burst=100, clock=clock)
    assert [bucket.when(f"ns/k{i}") for i in range(100)] == [0.0] * 100
    assert bucket.when("ns/x") == pytest.approx(0.1)
    assert bucket.when("ns/y") == pytest.approx(0.2)
    clock.advance(0.2)  # two tokens refilled: pays back what was borrowed
    assert bucket.when("ns/z") == pytest.approx(0.1)
    clock.advance(1000.0)  # refills up to the burst, not beyond
    assert [bucket.when(f"ns/k{i}") for i in range(100)] == [0.0] * 100
    assert bucket.when("ns/x") == pytest.approx(0.1)
    assert bucket.num_requeues("ns/x") == 0


def test_the_default_limiter_is_the_maximum_of_backoff_and_bucket(clock: FakeClock) -> None:
    limiter = default_rate_limiter(clock=clock)
    assert isinstance(limiter, MaxOfRateLimiter)
    delays = [limiter.when(f"ns/k{i}") for i in range(100)]
    assert delays == [0.005] * 100  # burst covers them: each key's first backoff
    assert limiter.when("ns/other") == pytest.approx(0.1)  # bucket empty: the bucket's delay wins
    clock.advance(100.0)
    for _ in range(24):
        delay = limiter.when("ns/k0")
    assert delay == 1000.0  # 0.005 * 2**24 > 1000: capped
    assert limiter.num_requeues("ns/k0") == 25
    limiter.forget("ns/k0")
    assert limiter.num_requeues("ns/k0") == 0


def test_add_rate_limited_backs_off_per_failure_and_forget_resets(queue: WorkQueue, clock: FakeClock) -> None:
    delays = []
    for _ in range(3):
        delays.append(queue.add_rate_limited("ns/a"))
        assert ready_now(queue) is None
        clock.advance(delays[-1])
        assert ready_now(queue) == "ns/a"
        queue.done("ns/a")
    assert delays == [0.005, 0.01, 0.02]
    assert queue.num_requeues("ns/a") == 3
    assert queue.stats().retries_total == 3
    queue.forget("ns/a")
    assert queue.num_requeues("ns/a") == 0
    assert queue.add_rate_limited("ns/a") == 0.005


# -- shutdown ------------------------------------------------------------------------------------


def test_shut_down_ignores_adds_hands_out_what_is_queued_then_reports_shutdown(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/a")
    queue.add_after("ns/later", 1.0)
    queue.shut_down()
    assert queue.shutting_down
    queue.add("ns/b")
    queue.add_after("ns/c", 0)
    assert queue.get() == ("ns/a", False)
    clock.advance(5.0)
    assert queue.get() == (None, True)  # delayed keys are dropped
    assert queue.get(timeout_s=0) == (None, True)


def test_shut_down_wakes_every_blocked_worker(queue: WorkQueue) -> None:
    waiting = [in_thread(queue.get) for _ in range(3)]
    queue.shut_down()
    for thread, results in waiting:
        thread.join(10)
        assert results == [(None, True)]


def test_shut_down_with_drain_waits_for_work_in_flight(queue: WorkQueue) -> None:
    queue.add("ns/a")
    queue.add("ns/b")
    assert ready_now(queue) == "ns/a"
    drain, drained = in_thread(queue.shut_down_with_drain)
    assert ready_now_after_shutdown(queue) == "ns/b"  # queued work is still handed out
    queue.done("ns/b")
    drain.join(0.05)
    assert drain.is_alive()  # "ns/a" is still in flight
    queue.done("ns/a")
    drain.join(10)
    assert drained == [True]
    assert queue.get() == (None, True)


def ready_now_after_shutdown(queue: WorkQueue) -> str | None:
    key, _ = queue.get(timeout_s=0)
    return key


def test_shut_down_with_drain_gives_up_after_its_timeout(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/a")
    assert ready_now(queue) == "ns/a"
    drain, drained = in_thread(lambda: queue.shut_down_with_drain(timeout_s=10.0))
    for _ in range(1000):  # the thread reads the clock when it starts: keep time moving until it gives up
        clock.advance(10.0)
        drain.join(0.01)
        if not drain.is_alive():
            break
    assert drained == [False]


# -- stats ---------------------------------------------------------------------------------------


def test_stats_report_depth_and_the_longest_running_key(queue: WorkQueue, clock: FakeClock) -> None:
    queue.add("ns/a")
    queue.add("ns/b")
    queue.add("ns/c")
    assert ready_now(queue) == "ns/a"
    clock.advance(3.0)
    assert ready_now(queue) == "ns/b"
    clock.advance(1.0)
    stats = queue.stats()
    assert (stats.name, stats.depth, stats.adds_total) == ("test", 1, 3)
    assert stats.longest_running_s == pytest.approx(4.0)
    assert stats.unfinished_work_s == pytest.approx(5.0)


def test_the_connection_backoff_doubles_for_everyone_and_one_success_resets_it(clock: FakeClock) -> None:
    backoff = ConnectionBackoff(initial_s=0.05, max_s=0.2, clock=clock)
    assert backoff.pause_s() == 0
    assert [backoff.failed() for _ in range(4)] == [0.05, 0.1, 0.2, 0.2]
    assert backoff.pause_s() == pytest.approx(0.2)
    clock.advance(0.15)
    assert backoff.pause_s() == pytest.approx(0.05)
    backoff.succeeded()
    assert backoff.pause_s() == 0 and backoff.failed() == 0.05  # full speed at once, and the next outage starts small
    assert backoff.failures == 5
