"""The Lease elector (cluster.electing) against the API server, through the real CachedClient, on a fake clock.

Behaviours: the Lease it creates is accepted as written (MicroTime acquire/renew times, integer
duration, transitions); another replica waits out the lease as it observes it, then takes it; two
replicas racing for the expired Lease: the server's resourceVersion precondition lets exactly one
win (the other's PUT is 409 Conflict, a lost round, not an error); release clears the holder so the
other takes over at once, leaseTransitions counting each change of holder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from cluster import LEASES, Cache, CachedClient, ClientSettings, Resource
from cluster.connecting import Connection
from cluster.electing import Clock, LeaderElector, LeaseRecord


class FakeClock(Clock):
    def __init__(self) -> None:
        self.t = 0.0

    def monotonic(self) -> float:
        return self.t

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        self.t += seconds
        return stop.is_set()


class Interleaved:
    """The cached client, running ``between`` once after its next read (another replica acting meanwhile)."""

    def __init__(self, client: CachedClient) -> None:
        self.client = client
        self.between: Callable[[], None] | None = None

    def get(self, resource: Resource, name: str, *, namespace: str | None = None, fresh: bool = False) -> Mapping[str, Any]:
        result = self.client.get(resource, name, namespace=namespace, fresh=fresh)
        between, self.between = self.between, None
        if between is not None:
            between()
        return result

    def create(self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None) -> Mapping[str, Any]:
        return self.client.create(resource, body, namespace=namespace)

    def update(self, resource: Resource, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.client.update(resource, body)


@pytest.fixture
def client(connection: Connection, make_cache: Callable[..., Cache]) -> CachedClient:
    return CachedClient(transport=connection.transport, cache=make_cache(connection.transport), settings=ClientSettings())


def test_election_on_the_server(client: CachedClient, namespace: str) -> None:
    clock = FakeClock()
    interleaved = Interleaved(client)

    def elector(identity: str, via: Any = client) -> LeaderElector:
        return LeaderElector(client=via, namespace=namespace, name="leader", identity=identity, clock=clock)

    a, b, c = elector("a"), elector("b"), elector("c", interleaved)
    assert a.try_acquire_or_renew()
    stored = client.get(LEASES, "leader", namespace=namespace, fresh=True)
    assert LeaseRecord.of(stored) == a.observed, "the server keeps the record as written, MicroTime included"
    assert stored["spec"]["leaseDurationSeconds"] == 15 and stored["spec"]["renewTime"].endswith("Z")

    assert not b.try_acquire_or_renew() and not c.try_acquire_or_renew()
    clock.t += 16  # a stopped renewing 16 s ago, as b and c observe it
    won: list[bool] = []
    interleaved.between = lambda: won.append(b.try_acquire_or_renew())
    assert not c.try_acquire_or_renew(), "c's PUT carries the version it read: 409"
    assert won == [True] and b.is_leader and not c.is_leader
    stored = client.get(LEASES, "leader", namespace=namespace, fresh=True)
    assert stored["spec"]["holderIdentity"] == "b" and stored["spec"]["leaseTransitions"] == 1

    assert b.release()
    stored = client.get(LEASES, "leader", namespace=namespace, fresh=True)
    assert stored["spec"]["holderIdentity"] == "" and stored["spec"]["leaseDurationSeconds"] == 1
    assert a.try_acquire_or_renew(), "a released Lease is free at once"
    stored = client.get(LEASES, "leader", namespace=namespace, fresh=True)
    assert stored["spec"]["holderIdentity"] == "a" and stored["spec"]["leaseTransitions"] == 2
