"""Informer recovery: dead connections, 410 Gone relists, API server restarts, clean shutdown.

Behaviours: a watch connection that silently stops delivering (a proxy swallows its bytes without
closing) is noticed by the read timeout and re-opened from the last resourceVersion the cache had —
no LIST request (the transport's requests are counted) — and later changes arrive; when the informer
comes back after the server's history window has moved past its resourceVersion (410 Gone; tiny
``--history-size``) it relists, and the cache then equals the server's list exactly — objects
deleted meanwhile are gone (with delete handlers called), new ones present, changed ones at their
new version, unchanged ones the very objects cached before (no second copy) — and a list at a
compacted version is ``Gone`` (devcluster only: forcing it needs its history knob); when the API
server is stopped and restarted mid-watch the informer keeps retrying, reconnects and converges;
stopping a cache (informers idle in a watch, or still failing to connect) leaves no threads behind; a watch that
sends nothing for the read timeout is watched again at once, without a warning or the failure backoff.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from cluster import CONFIGMAPS, DARKROOMS, NAMESPACES, Cache, ConnectionSettings, Gone, InformerSettings, connect
from cluster.bodies import version_at_least
from cluster.connecting import Connection
from cluster.informers import Informer
from tests.clusters import ClusterProcess, DevclusterProcess, free_port
from tests.support import PUBLISHED_CONFIGMAPS, wait_for

from .network import TcpProxy, kubeconfig_for


def server_state(core: k8s.CoreV1Api, namespace: str) -> dict[str, str]:
    return {cm.metadata.name: cm.metadata.resource_version for cm in core.list_namespaced_config_map(namespace).items}


def cache_state(informer: Informer) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in informer.store.list()}


def converged(core: k8s.CoreV1Api, informer: Informer, namespace: str) -> bool:
    return cache_state(informer) == server_state(core, namespace)


def test_silently_dead_connection_is_detected(
    kube: ClusterProcess, proxy: TcpProxy, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient, tmp_path: Path
) -> None:
    conn = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port)), environ={})
    try:
        lists: list[str] = []  # the transport's plain requests (the informer's only one is its LIST)
        watched_from: list[str] = []  # the resourceVersion of each watch it opened
        request, stream = conn.transport.request, conn.transport.stream

        def counted_request(method: str, path: str, **kwargs: Any) -> Any:
            lists.append(f"{method} {path}")
            return request(method, path, **kwargs)

        def counted_stream(path: str, **kwargs: Any) -> Any:
            watched_from.append(str(kwargs["query"]["resourceVersion"]))
            return stream(path, **kwargs)

        conn.transport.request = counted_request  # type: ignore[method-assign]
        conn.transport.stream = counted_stream  # type: ignore[method-assign]
        cache = make_cache(conn.transport)
        informer = cache.add(CONFIGMAPS, namespace=namespace)
        assert cache.start().wait_for_sync(10)
        restarts = informer.watch_restarts
        assert len(lists) == 1  # the first list
        version = informer.store.progress
        assert proxy.silence() >= 1
        k8s.CoreV1Api(api_client).create_namespaced_config_map(namespace, {"metadata": {"name": "after-silence"}})
        wait_for(
            lambda: informer.store.get(f"{namespace}/after-silence") is not None, timeout_s=20, message="change after a dead connection"
        )
        assert informer.watch_restarts > restarts
        assert informer.relists == 0  # resumed from its resourceVersion: history still covers it
        assert len(lists) == 1, lists  # and no LIST was sent
        assert len(watched_from) >= 2 and all(version_at_least(v, version) for v in watched_from)  # each from where the cache was
    finally:
        cache.stop()
        conn.close()


def test_a_watch_that_sends_nothing_is_watched_again_at_once_without_a_warning(
    kube: ClusterProcess, proxy: TcpProxy, namespace: str, api_client: k8s.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A watch silent for the read timeout is routine (kube-apiserver sends Events no periodic bookmarks): the informer
    watches again from its version at once — not after the failure backoff, 60 s here — and logs no warning."""
    conn = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port)), environ={})
    cache = Cache(transport=conn.transport, settings=InformerSettings(read_timeout_s=2, backoff_initial_s=60, backoff_max_s=60))
    watching = threading.Event()  # set once a watch has its response: silencing earlier would leave a request unanswered
    stream = conn.transport.stream

    @contextmanager
    def noted(path: str, **kwargs: Any) -> Iterator[Any]:
        with stream(path, **kwargs) as opened:
            watching.set()
            yield opened

    conn.transport.stream = noted  # type: ignore[method-assign]
    try:
        informer = cache.add(CONFIGMAPS, namespace=namespace)
        assert cache.start().wait_for_sync(10)
        restarts = informer.watch_restarts
        with caplog.at_level(logging.DEBUG, logger="cluster.informers"):
            assert watching.wait(10)
            assert proxy.silence() == 1  # the watch's connection: the only one (the list's was reused for it)
            k8s.CoreV1Api(api_client).create_namespaced_config_map(namespace, {"metadata": {"name": "after-quiet"}})
            wait_for(
                lambda: informer.store.get(f"{namespace}/after-quiet") is not None,
                timeout_s=30,
                message="a change after a silent watch, sooner than the failure backoff",
            )
        assert informer.watch_restarts > restarts
        assert informer.relists == 0
        informers = [r for r in caplog.records if r.name == "cluster.informers"]
        assert any("sent nothing" in r.getMessage() for r in informers)
        assert [r.getMessage() for r in informers if r.levelno >= logging.WARNING] == []
    finally:
        cache.stop()
        conn.close()


@pytest.mark.devcluster_only  # forcing 410 Gone needs devcluster's --history-size; kube's watch-cache window is time-based
def test_gone_relists_without_lost_or_phantom_objects(
    fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path, store_form: dict[str, Any]
) -> None:
    server = fresh_devcluster("--history-size", "5")
    proxy = TcpProxy(server.port)
    direct = k8s_config.new_client_from_config(config_file=str(server.kubeconfig))
    conn = connect(ConnectionSettings(kubeconfig=kubeconfig_for(server, tmp_path / "kubeconfig", port=proxy.port)), environ={})
    cache = Cache(transport=conn.transport, settings=InformerSettings(read_timeout_s=3, backoff_initial_s=0.05, backoff_max_s=0.5))
    try:
        core = k8s.CoreV1Api(direct)
        for name in ("keep", "change", "drop-1", "drop-2"):
            core.create_namespaced_config_map("default", {"metadata": {"name": name}, "data": {"v": "0"}})
        informer = cache.add(CONFIGMAPS, namespace="default", **store_form)
        deleted: list[str] = []
        informer.add_handler(on_delete=lambda o: deleted.append(o["metadata"]["name"]))
        assert cache.start().wait_for_sync(10)
        kept = informer.store.stored("default/keep")
        assert proxy.silence() >= 1
        old_version = informer.store.progress
        core.delete_namespaced_config_map("drop-1", "default")
        core.delete_namespaced_config_map("drop-2", "default")
        core.patch_namespaced_config_map("change", "default", {"data": {"v": "1"}})
        for i in range(8):  # churn well past the 5-change history window
            core.create_namespaced_config_map("default", {"metadata": {"name": f"new-{i}"}})
        with pytest.raises(Gone):
            conn.transport.request(
                "GET", CONFIGMAPS.path(namespace="default"), query={"resourceVersion": old_version, "resourceVersionMatch": "Exact"}
            )
        wait_for(lambda: informer.relists >= 1 and converged(core, informer, "default"), timeout_s=20, message="relist after 410")
        assert sorted(deleted) == ["drop-1", "drop-2"]
        assert informer.store.get("default/change")["data"] == {"v": "1"}
        assert set(cache_state(informer)) == {"keep", "change", *(f"new-{i}" for i in range(8))}
        assert informer.store.stored("default/keep") is kept  # unchanged: the relist kept the cached object (or text)
    finally:
        cache.stop()
        conn.close()
        direct.close()
        proxy.close()


def test_server_restart_mid_watch(fresh_kube: Callable[[], ClusterProcess]) -> None:
    server = fresh_kube()
    conn = connect(ConnectionSettings(kubeconfig=server.kubeconfig), environ={})
    cache = Cache(transport=conn.transport, settings=InformerSettings(read_timeout_s=3, backoff_initial_s=0.05, backoff_max_s=0.5))
    direct: Any = None
    try:
        informer = cache.add(CONFIGMAPS, namespace="default")
        assert cache.start().wait_for_sync(10)
        first = k8s_config.new_client_from_config(config_file=str(server.kubeconfig))
        k8s.CoreV1Api(first).create_namespaced_config_map("default", {"metadata": {"name": "before"}})
        first.close()
        wait_for(lambda: "before" in cache_state(informer), message="pre-restart object cached")
        restarts = informer.watch_restarts
        server.stop()
        server.start()
        direct = k8s_config.new_client_from_config(config_file=str(server.kubeconfig))
        core = k8s.CoreV1Api(direct)
        core.create_namespaced_config_map("default", {"metadata": {"name": "after"}})
        core.delete_namespaced_config_map("before", "default")
        wait_for(
            lambda: set(cache_state(informer)) - PUBLISHED_CONFIGMAPS == {"after"} and converged(core, informer, "default"),
            timeout_s=20,
            message="convergence",
        )
        assert informer.watch_restarts > restarts
    finally:
        cache.stop()
        conn.close()
        if direct is not None:
            direct.close()


def test_shutdown_leaves_no_threads(
    kube: ClusterProcess, connection: Connection, crds_installed: None, namespace: str, tmp_path: Path
) -> None:
    before = set(threading.enumerate())
    # Idle watches with a long read timeout: only stop() interrupting the read can end them promptly.
    cache = Cache(transport=connection.transport, settings=InformerSettings(read_timeout_s=120))
    for resource in (CONFIGMAPS, DARKROOMS, NAMESPACES):
        cache.add(resource, namespace=namespace if resource.namespaced else None).add_handler(on_add=lambda o: None)
    assert cache.start().wait_for_sync(10)
    assert len(set(threading.enumerate()) - before) == 6  # a watch thread and a handler thread per informer
    cache.stop()
    dead = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "k", port=free_port()), probe=False), environ={})
    failing = Cache(transport=dead.transport, settings=InformerSettings(backoff_initial_s=5, backoff_max_s=5))
    failing.add(CONFIGMAPS)
    failing.start()
    wait_for(lambda: failing.informer(CONFIGMAPS) is not None and not failing.has_synced, message="failing informer running")
    failing.stop()
    dead.close()
    assert set(threading.enumerate()) == before
