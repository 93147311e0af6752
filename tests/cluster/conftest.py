"""Fixtures for the cluster/ tests: connections, caches stopped at teardown, a TCP proxy that can go silent.

``proxy`` is a :class:`~tests.cluster.network.TcpProxy` in front of the session cluster (network.py: the proxy
and ``kubeconfig_for``, the helpers tests import): a test can make the connections open through it stop forwarding
without closing, the silently dead connection a NAT timeout or a vanished peer leaves behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cluster import Cache, ConnectionSettings, InformerSettings, Transport, connect
from cluster.connecting import Connection
from tests.clusters import ClusterProcess

from .network import TcpProxy

# The forms a store keeps objects in (cluster.stores.Store's arguments): frozen bodies, or packed as their JSON text.
STORE_FORMS: dict[str, dict[str, Any]] = {"frozen": {}, "packed": {"packed": True}}


@pytest.fixture(params=sorted(STORE_FORMS))
def store_form(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The keyword arguments of a :class:`cluster.stores.Store` in each form (a test using it runs once per form)."""
    return STORE_FORMS[request.param]


# Read timeout above the session devcluster's 1 s bookmark interval; short backoff keeps recovery quick.
FAST = InformerSettings(page_size=50, watch_timeout_s=60, read_timeout_s=3.0, backoff_initial_s=0.05, backoff_max_s=0.5)


@pytest.fixture
def connection(kube: ClusterProcess) -> Iterator[Connection]:
    conn = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ=os.environ)
    yield conn
    conn.close()


@pytest.fixture
def make_cache() -> Iterator[Callable[..., Cache]]:
    """Factory: ``make_cache(transport, settings=FAST)``; every cache made is stopped at teardown."""
    caches: list[Cache] = []

    def make(transport: Transport, settings: InformerSettings = FAST) -> Cache:
        cache = Cache(transport=transport, settings=settings)
        caches.append(cache)
        return cache

    yield make
    for cache in caches:
        cache.stop()


@pytest.fixture
def proxy(kube: ClusterProcess) -> Iterator[TcpProxy]:
    p = TcpProxy(kube.port)
    yield p
    p.close()
