"""Read-your-writes through the cached client, under concurrent writers.

Behaviours: once a create / patch / apply / delete through a client returns, that client's get and
list (and index queries) show that version or a newer one — never an older one, never a deleted
object, never a missing created one — while several threads write through the same client and
another process-independent client writes the same objects concurrently; when the cache cannot
catch up (its watch is stuck) such a read raises ``Unavailable`` instead of returning stale data,
and reads of objects this client did not write are still served from the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from cluster import (
    CONFIGMAPS,
    OWNER_UID,
    Cache,
    CachedClient,
    ClientSettings,
    ConnectionSettings,
    InformerSettings,
    NotFound,
    Unavailable,
    by_owner_uid,
    connect,
)
from cluster.bodies import version_at_least
from cluster.connecting import Connection
from tests.clusters import ClusterProcess
from tests.support import wait_for

from .network import TcpProxy, kubeconfig_for

THREADS = 4
ROUNDS = 15


def test_reads_follow_own_writes_under_concurrency(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    cache = make_cache(connection.transport)
    cache.add(CONFIGMAPS, namespace=namespace, indexers={OWNER_UID: by_owner_uid})
    assert cache.start().wait_for_sync(10)
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings())
    owner = client.create(CONFIGMAPS, {"metadata": {"name": "owner", "namespace": namespace}})
    client.create(CONFIGMAPS, {"metadata": {"name": "shared", "namespace": namespace}, "data": {}})
    failures: list[str] = []
    checks = [0]
    stop_other = threading.Event()

    def check(condition: bool, what: str) -> None:
        checks[0] += 1
        if not condition:
            failures.append(what)

    def worker(t: int) -> None:
        try:
            for i in range(ROUNDS):
                name = f"w{t}-{i}"
                ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
                created = client.create(
                    CONFIGMAPS, {"metadata": {"name": name, "namespace": namespace, "ownerReferences": [ref]}, "data": {"i": "0"}}
                )
                got = client.get(CONFIGMAPS, name, namespace=namespace)
                check(
                    version_at_least(got["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]), f"{name} get after create"
                )
                patched = client.patch(CONFIGMAPS, name, {"data": {"i": "1"}}, namespace=namespace)
                got = client.get(CONFIGMAPS, name, namespace=namespace)
                check(
                    got["data"]["i"] == "1" and got["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"],
                    f"{name} get after patch",
                )
                listed = {o["metadata"]["name"]: o for o in client.list(CONFIGMAPS, namespace=namespace)}
                check(name in listed and listed[name]["data"]["i"] == "1", f"{name} list after patch")
                owned = {o["metadata"]["name"] for o in client.by_index(CONFIGMAPS, OWNER_UID, owner["metadata"]["uid"])}
                check(name in owned, f"{name} index after create")
                shared = client.apply(
                    CONFIGMAPS,
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "shared", "namespace": namespace},
                        "data": {f"t{t}": str(i)},
                    },
                    field_manager=f"t{t}",
                )
                seen = client.get(CONFIGMAPS, "shared", namespace=namespace)
                check(
                    version_at_least(seen["metadata"]["resourceVersion"], shared["metadata"]["resourceVersion"]), "shared get after apply"
                )
                check(seen["data"].get(f"t{t}") == str(i), "own applied field visible")
                client.delete(CONFIGMAPS, name, namespace=namespace)
                try:
                    client.get(CONFIGMAPS, name, namespace=namespace)
                    check(False, f"{name} get after delete")
                except NotFound:
                    check(True, "")
                check(
                    name not in {o["metadata"]["name"] for o in client.list(CONFIGMAPS, namespace=namespace)}, f"{name} list after delete"
                )
        except Exception as e:  # surfaced by the assertion below
            failures.append(f"worker {t}: {e!r}")

    def other_writer() -> None:
        core = k8s.CoreV1Api(api_client)
        n = 0
        while not stop_other.is_set():
            n += 1
            core.patch_namespaced_config_map("shared", namespace, {"data": {"other": str(n)}})

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    other = threading.Thread(target=other_writer)
    other.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    stop_other.set()
    other.join(30)
    assert failures == []
    assert checks[0] == THREADS * ROUNDS * 8


def test_stuck_cache_raises_unavailable_not_stale(
    kube: ClusterProcess, proxy: TcpProxy, make_cache: Callable[..., Cache], namespace: str, tmp_path: Path
) -> None:
    conn = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port)), environ={})
    direct = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "direct")), environ={})
    try:
        cache = make_cache(conn.transport, InformerSettings(read_timeout_s=60))
        cache.add(CONFIGMAPS, namespace=namespace)
        assert cache.start().wait_for_sync(10)
        client = CachedClient(transport=direct.transport, cache=cache, settings=ClientSettings(read_your_writes_timeout_s=0.5))
        client.create(CONFIGMAPS, {"metadata": {"name": "seen", "namespace": namespace}})
        assert client.get(CONFIGMAPS, "seen", namespace=namespace)["metadata"]["name"] == "seen"
        proxy.silence()
        client.create(CONFIGMAPS, {"metadata": {"name": "unseen", "namespace": namespace}})
        try:
            client.get(CONFIGMAPS, "unseen", namespace=namespace)
            raise AssertionError("a read the cache cannot serve consistently must not succeed")
        except Unavailable as e:
            assert "did not catch up" in str(e)
        assert client.get(CONFIGMAPS, "seen", namespace=namespace)["metadata"]["name"] == "seen"
    finally:
        cache.stop()
        conn.close()
        direct.close()


def test_a_delete_is_read_back_through_a_label_filtered_cache(
    kube: ClusterProcess, proxy: TcpProxy, make_cache: Callable[..., Cache], namespace: str, tmp_path: Path
) -> None:
    """A delete's answer may be a Status without the object's labels: the client still expects the object gone from an
    informer that selects by label (as the login sessions' is), so a read after the delete never returns it."""
    conn = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port)), environ={})
    direct = connect(ConnectionSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "direct")), environ={})
    try:
        cache = make_cache(conn.transport, InformerSettings(read_timeout_s=60))
        cache.add(CONFIGMAPS, namespace=namespace, label_selector="app=session")
        assert cache.start().wait_for_sync(10)
        client = CachedClient(transport=direct.transport, cache=cache, settings=ClientSettings(read_your_writes_timeout_s=0.5))
        client.create(CONFIGMAPS, {"metadata": {"name": "session", "namespace": namespace, "labels": {"app": "session"}}})
        assert client.peek(CONFIGMAPS, "session", namespace=namespace) is not None
        proxy.silence()  # the cache never sees the delete
        client.delete(CONFIGMAPS, "session", namespace=namespace)
        try:
            stale = client.peek(CONFIGMAPS, "session", namespace=namespace)
            raise AssertionError(f"a deleted object read back from the cache: {stale}")
        except Unavailable as e:
            assert "did not catch up" in str(e)
    finally:
        cache.stop()
        conn.close()
        direct.close()


def test_the_watch_event_of_a_clients_own_write_is_known_as_its_echo(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    """``is_echo``: the event of a create, an apply or a status-like write this client made carries the resourceVersion
    the write returned, and is recognised (once), even when the client wrote the object again before the first event
    came; another client's write of the same object, or a client made without ``echoes``, is not."""
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace)
    seen: list[tuple[str, bool]] = []
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="echo-test"), echoes=True)
    quiet = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="echo-test"))
    both_written = threading.Event()

    def added(obj: Mapping[str, Any]) -> None:
        if obj["metadata"]["name"] == "mine":
            both_written.wait(10)  # the create's event is handled only after the apply returned: two writes, no event yet
        seen.append((f"add {obj['metadata']['name']}", client.is_echo(CONFIGMAPS, obj)))

    informer.add_handler(
        on_add=added, on_update=lambda old, new: seen.append((f"update {new['metadata']['name']}", client.is_echo(CONFIGMAPS, new)))
    )
    assert cache.start().wait_for_sync(10)
    client.create(CONFIGMAPS, {"metadata": {"name": "mine", "namespace": namespace}, "data": {"k": "1"}})
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine", "namespace": namespace}, "data": {"k": "2"}}
    client.apply(CONFIGMAPS, applied, field_manager="echo-test", force=True)
    both_written.set()
    k8s.CoreV1Api(api_client).patch_namespaced_config_map("mine", namespace, {"data": {"k": "3"}})
    k8s.CoreV1Api(api_client).create_namespaced_config_map(namespace, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="theirs")))
    wait_for(lambda: len([s for s in seen if "kube-root-ca" not in s[0]]) == 4, message="four events")
    assert [s for s in seen if "kube-root-ca" not in s[0]] == [
        ("add mine", True),
        ("update mine", True),
        ("update mine", False),
        ("add theirs", False),
    ]
    mine = informer.store.get(f"{namespace}/mine")
    assert mine is not None and not client.is_echo(CONFIGMAPS, mine)  # recognised once
    written = quiet.apply(CONFIGMAPS, {**applied, "data": {"k": "4"}}, field_manager="echo-test", force=True)
    wait_for(lambda: len([s for s in seen if "kube-root-ca" not in s[0]]) == 5, message="the fifth event")
    assert not quiet.is_echo(CONFIGMAPS, written)  # a client made without echoes=True remembers no write


def test_an_echo_forgets_the_same_objects_earlier_writes_whose_events_never_came(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str
) -> None:
    """A watch reports one object's changes in order: once the event of a later write is recognised, an earlier write's
    event can no longer come (a relist skipped it), so it is forgotten rather than kept until the table is full. Called
    here with the written objects themselves, as a relist that skipped the first event would leave it."""
    cache = make_cache(connection.transport)
    cache.add(CONFIGMAPS, namespace=namespace)
    assert cache.start().wait_for_sync(10)
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="echo-test"), echoes=True)
    first = client.create(CONFIGMAPS, {"metadata": {"name": "skipped", "namespace": namespace}, "data": {"k": "1"}})
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "skipped", "namespace": namespace}, "data": {"k": "2"}}
    second = client.apply(CONFIGMAPS, applied, field_manager="echo-test", force=True)
    assert first["metadata"]["resourceVersion"] != second["metadata"]["resourceVersion"]
    assert client.is_echo(CONFIGMAPS, second)
    assert not client.is_echo(CONFIGMAPS, first)
    assert not client.is_echo(CONFIGMAPS, second)
