"""The Lease elector's state machine (cluster.electing) on a fake clock and an in-memory Lease store.

The store keeps Kubernetes' optimistic concurrency for the one object (a PUT must carry the current
resourceVersion, else 409 Conflict; a second create is AlreadyExists); the clock only moves when the
test (or the elector's own waiting) moves it. Behaviours: the first replica creates the Lease
(MicroTime times, integer duration rounded up); another replica's unexpired lease is left alone
however old its renewTime says it is, and taken once this replica has seen it unchanged for its
duration (leaseTransitions + 1); a renewal keeps acquireTime and transitions and restarts the others'
wait; a leader renews with one PUT (the fast path) and falls back to a read when that fails; two
replicas racing for an expired Lease: exactly one wins, the other's stale resourceVersion gets 409;
release clears the holder (duration 1, transitions kept) so a standby takes over at once, and never
touches a Lease someone else holds; failed requests are failed attempts (the server's last answer is
tracked for readiness); the campaign loop leads, then loses leadership when renewals fail for the
renew deadline — before the lease could expire for the others; no request starts after a round's
deadline and a renewal that lands after it is a loss — and stops without writing after stop;
timings are validated like client-go's.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cluster import errors
from cluster.electing import Clock, LeaderElector, LeaseRecord, Timings
from cluster.resources import LEASES, Resource

NAMESPACE, NAME = "ns", "darkroom-operator"
MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


class FakeClock(Clock):
    def __init__(self) -> None:
        self.t = 1000.0
        self.on_wait: Callable[[], None] | None = None  # runs after each wait has moved the clock

    def monotonic(self) -> float:
        return self.t

    def now(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=self.t)

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        self.t += max(0.0, seconds)
        if self.on_wait is not None:
            self.on_wait()
        return stop.is_set()


class FakeLeases:
    """One namespace's Leases with resourceVersion preconditions; ``down`` makes every call fail like an unreachable server."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0
        self.calls: list[str] = []
        self.down: errors.ClusterError | None = None
        self.after_get: Callable[[], None] | None = None  # runs once, between a GET and the caller's next call
        self.on_call: Callable[[], None] | None = None  # runs as each request is served (e.g. a slow server moves the clock)

    def _check(self, verb: str) -> None:
        self.calls.append(verb)
        if self.on_call is not None:
            self.on_call()
        if self.down is not None:
            raise self.down

    def get(self, resource: Resource, name: str, *, namespace: str | None = None, fresh: bool = False) -> Mapping[str, Any]:
        assert resource == LEASES and namespace == NAMESPACE and fresh
        self._check("get")
        if name not in self.objects:
            raise errors.NotFound(f'leases "{name}" not found')
        result = copy.deepcopy(self.objects[name])
        hook, self.after_get = self.after_get, None
        if hook is not None:
            hook()
        return result

    def _stored(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.version += 1
        stored = copy.deepcopy(dict(body))
        stored["metadata"] = {**stored["metadata"], "resourceVersion": str(self.version)}
        self.objects[stored["metadata"]["name"]] = stored
        return copy.deepcopy(stored)

    def create(self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None) -> Mapping[str, Any]:
        self._check("create")
        if body["metadata"]["name"] in self.objects:
            raise errors.AlreadyExists("already exists")
        return self._stored(body)

    def update(self, resource: Resource, body: Mapping[str, Any]) -> Mapping[str, Any]:
        self._check("update")
        current = self.objects.get(body["metadata"]["name"])
        if current is None:
            raise errors.NotFound("not found")
        if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise errors.Conflict("the object has been modified; please apply your changes to the latest version and try again")
        return self._stored(body)

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.objects[NAME]["spec"]
        return spec

    def write_spec(self, **fields: Any) -> None:
        """Someone else's write (e.g. kubectl)."""
        self._stored({**self.objects[NAME], "spec": {**self.spec(), **fields}})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def leases() -> FakeLeases:
    return FakeLeases()


@pytest.fixture
def elector(leases: FakeLeases, clock: FakeClock) -> Callable[..., LeaderElector]:
    def make(identity: str, **timings: float) -> LeaderElector:
        return LeaderElector(client=leases, namespace=NAMESPACE, name=NAME, identity=identity, timings=Timings(**timings), clock=clock)

    return make


def test_the_first_replica_creates_the_lease(elector: Callable[..., LeaderElector], leases: FakeLeases) -> None:
    a = elector("a", lease_duration_s=5.5, renew_deadline_s=4, retry_period_s=1)
    assert a.try_acquire_or_renew() and a.is_leader
    spec = leases.spec()
    assert spec["holderIdentity"] == "a" and spec["leaseTransitions"] == 0
    assert spec["leaseDurationSeconds"] == 6  # an integer field: rounded up, never down to a shorter lease
    assert MICROTIME.match(spec["acquireTime"]) and spec["acquireTime"] == spec["renewTime"]
    assert leases.calls == ["get", "create"]


def test_an_unexpired_lease_is_taken_only_after_its_duration_as_observed_here(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a, b = elector("a"), elector("b")
    assert a.try_acquire_or_renew()
    leases.write_spec(renewTime="1970-01-01T00:00:00.000000Z")  # another machine's clock: never compared with ours
    assert not b.try_acquire_or_renew() and not b.is_leader  # first seen now: valid for 15 s from here
    clock.t += 14.9
    assert not b.try_acquire_or_renew()
    clock.t += 0.2
    assert b.try_acquire_or_renew() and b.is_leader
    spec = leases.spec()
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert spec["acquireTime"] == spec["renewTime"]
    assert LeaseRecord.of({"spec": spec}).acquire_time == clock.now()


def test_a_renewal_keeps_acquire_time_and_restarts_the_wait_of_others(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a, b = elector("a"), elector("b")
    assert a.try_acquire_or_renew()
    acquired = leases.spec()["acquireTime"]
    assert not b.try_acquire_or_renew()
    clock.t += 10
    leases.calls.clear()
    assert a.try_acquire_or_renew()
    assert leases.calls == ["update"], "a valid leader renews with one PUT on the version it wrote"
    assert leases.spec()["acquireTime"] == acquired and leases.spec()["renewTime"] != acquired
    assert leases.spec()["leaseTransitions"] == 0
    clock.t += 6  # 16 s after b first saw the Lease, but only 6 s after it changed
    assert not b.try_acquire_or_renew()
    clock.t += 15
    assert b.try_acquire_or_renew()


def test_a_leader_whose_fast_path_fails_reads_and_sees_the_new_holder(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a = elector("a")
    assert a.try_acquire_or_renew()
    leases.write_spec(holderIdentity="intruder")
    leases.calls.clear()
    clock.t += 2
    assert not a.try_acquire_or_renew() and not a.is_leader
    assert leases.calls == ["update", "get"]  # 409 on the stale version, then the slow path
    assert leases.spec()["holderIdentity"] == "intruder"


def test_two_replicas_racing_for_an_expired_lease_one_wins(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    old, a, b = elector("old"), elector("a"), elector("b")
    assert old.try_acquire_or_renew()
    assert not a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    clock.t += 16
    won: list[bool] = []
    leases.after_get = lambda: won.append(b.try_acquire_or_renew())  # b reads and writes between a's read and a's write
    assert not a.try_acquire_or_renew()  # a's resourceVersion is stale: 409
    assert won == [True] and b.is_leader and not a.is_leader
    assert leases.spec()["holderIdentity"] == "b" and leases.spec()["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew()  # now it sees b's fresh lease


def test_release_hands_the_lease_over_at_once(elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock) -> None:
    a, b = elector("a"), elector("b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release() and not a.is_leader
    spec = leases.spec()
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1 and spec["leaseTransitions"] == 0
    assert b.try_acquire_or_renew(), "an empty holder is free now, whatever the duration"
    assert leases.spec()["leaseTransitions"] == 1


def test_release_never_touches_a_lease_someone_else_holds(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a = elector("a")
    assert a.try_acquire_or_renew()
    leases.write_spec(holderIdentity="intruder")
    version = leases.objects[NAME]["metadata"]["resourceVersion"]
    assert not a.release()
    assert leases.spec()["holderIdentity"] == "intruder"
    assert leases.objects[NAME]["metadata"]["resourceVersion"] == version
    assert not elector("never-led").release()


def test_failed_requests_are_failed_attempts(elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock) -> None:
    a = elector("a")
    leases.down = errors.Unavailable("GET ...: connection refused", status=0)
    assert not a.try_acquire_or_renew()
    assert a.last_answer is None, "no response: the server did not answer"
    leases.down = errors.Forbidden("leases is forbidden", status=403)
    clock.t += 1
    assert not a.try_acquire_or_renew()
    assert a.last_answer == clock.t, "a refusal is an answer"
    leases.down = None
    assert a.try_acquire_or_renew() and a.last_answer == clock.t


def test_the_campaign_leads_and_loses_leadership_within_the_renew_deadline(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a = elector("a")
    events: list[tuple[str, float]] = []

    def started() -> None:
        events.append(("started", clock.t))
        leases.down = errors.Unavailable("connection refused", status=0)  # the server goes away right after

    a.run(on_started_leading=started, on_stopped_leading=lambda: events.append(("stopped", clock.t)))
    (start, led_at), (stop, lost_at) = events
    assert (start, stop) == ("started", "stopped")
    # led_at: the create, also the last write that landed (the first renewal round starts at once, as client-go's)
    assert 10 <= lost_at - led_at < 15, "gives up after the renew deadline, before the others may take over"
    assert not a.stopped


def test_no_request_starts_after_the_renew_deadline_and_a_late_renewal_is_a_loss(
    elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock
) -> None:
    a = elector("a")
    assert a.try_acquire_or_renew()
    leases.down = errors.Unavailable("read timed out", status=0)
    leases.on_call = lambda: setattr(clock, "t", clock.t + 4)  # each request hangs 4 s, then fails
    leases.calls.clear()
    start = clock.t
    assert not a.renew()
    assert leases.calls == ["update", "get"], "the retry at the deadline sends nothing"
    assert clock.t == start + 10

    b = elector("b")
    leases.down, leases.on_call = None, None
    assert not b.try_acquire_or_renew()  # a's lease, first seen now
    clock.t += 15
    assert b.try_acquire_or_renew()
    leases.on_call = lambda: setattr(clock, "t", clock.t + 11)  # the renewal lands after the round's deadline
    leases.calls.clear()
    assert not b.renew(), "client-go's deadline would have cut that request: leadership is lost"
    assert leases.calls == ["update"]


def test_a_stopped_campaign_writes_nothing_more(elector: Callable[..., LeaderElector], leases: FakeLeases, clock: FakeClock) -> None:
    holder, a = elector("holder"), elector("a")
    assert holder.try_acquire_or_renew()
    stop_after = clock.t + 5
    clock.on_wait = lambda: a.stop() if clock.t >= stop_after else None
    ran: list[str] = []
    a.run(on_started_leading=lambda: ran.append("started"), on_stopped_leading=lambda: ran.append("stopped"))
    assert ran == [] and a.stopped
    calls = len(leases.calls)
    assert not a.release() and len(leases.calls) == calls


def test_timings_are_checked_like_client_go() -> None:
    assert Timings() == Timings(lease_duration_s=15, renew_deadline_s=10, retry_period_s=2, jitter_factor=1.2)
    with pytest.raises(ValueError, match="lease_duration_s"):
        Timings(lease_duration_s=10, renew_deadline_s=10)
    with pytest.raises(ValueError, match=r"1\.2 x retry_period_s"):
        Timings(renew_deadline_s=2.4, retry_period_s=2)
    with pytest.raises(ValueError, match="positive"):
        Timings(retry_period_s=-1)
    with pytest.raises(ValueError, match="identity"):
        LeaderElector(client=FakeLeases(), namespace=NAMESPACE, name=NAME, identity="")
