"""The cached client's writes go straight to the API server; failures map into our error tree.

Behaviours: create / update (PUT) / merge and JSON patch / server-side apply (field manager, force)
/ status writes (PUT and apply on the status subresource) / delete with preconditions; dry-run
writes persist nothing; reads of resources without an informer go to the server; ``get(fresh=True)``
and ``lookup`` (a list by name) answer from the server although the cache has the resource. Errors: NotFound,
AlreadyExists, Conflict (stale resourceVersion and apply field conflicts), Invalid with field
causes, Forbidden (namespace terminating), Unavailable on transport failure — each with the
original chained — and ClusterError's retryable flag.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config

from cluster import (
    CONFIGMAPS,
    DARKROOMS,
    NAMESPACES,
    AlreadyExists,
    Cache,
    CachedClient,
    ClientSettings,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Transport,
    Unavailable,
)
from cluster.connecting import Connection
from tests.clusters import ClusterProcess, free_port


def darkroom(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": DARKROOMS.api_version,
        "kind": DARKROOMS.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com"}, "subDomains": ["img"], **spec},
    }


@pytest.fixture
def client(connection: Connection, make_cache: Callable[..., Cache], namespace: str, crds_installed: None) -> CachedClient:
    cache = make_cache(connection.transport)
    cache.add(DARKROOMS, namespace=namespace)
    cache.add(CONFIGMAPS, namespace=namespace)
    assert cache.start().wait_for_sync(10)
    return CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="tests"))


def test_create_update_patch_delete(client: CachedClient, namespace: str) -> None:
    created = client.create(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": namespace}, "data": {"a": "1"}})
    assert created["metadata"]["managedFields"][0]["manager"] == "tests"
    updated = client.update(CONFIGMAPS, {**created, "data": {"a": "2"}})
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    merged = client.patch(CONFIGMAPS, "cm", {"data": {"b": "3"}}, namespace=namespace)
    assert merged["data"] == {"a": "2", "b": "3"}
    patched = client.patch(CONFIGMAPS, "cm", [{"op": "remove", "path": "/data/a"}], namespace=namespace, patch_type="json")
    assert patched["data"] == {"b": "3"}
    with pytest.raises(Conflict):
        client.delete(CONFIGMAPS, "cm", namespace=namespace, uid="not-the-uid")
    client.delete(CONFIGMAPS, "cm", namespace=namespace, uid=created["metadata"]["uid"])
    with pytest.raises(NotFound):
        client.get(CONFIGMAPS, "cm", namespace=namespace)


def test_server_side_apply_and_status(client: CachedClient, namespace: str) -> None:
    applied = client.apply(DARKROOMS, darkroom("dr", namespace, replicas=2))
    assert applied["spec"]["replicas"] == 2
    with pytest.raises(Conflict) as caught:
        client.apply(DARKROOMS, darkroom("dr", namespace, replicas=3), field_manager="someone-else")
    assert "conflict" in str(caught.value).lower() and caught.value.retryable
    forced = client.apply(DARKROOMS, darkroom("dr", namespace, replicas=3), field_manager="someone-else", force=True)
    assert forced["spec"]["replicas"] == 3
    status = {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": "dr", "namespace": namespace},
        "status": {"readyReplicas": 1},
    }
    assert client.apply_status(DARKROOMS, status)["status"]["readyReplicas"] == 1
    current = client.get(DARKROOMS, "dr", namespace=namespace)
    assert current["status"]["readyReplicas"] == 1
    body = {**current, "status": {"readyReplicas": 2}, "spec": {**current["spec"], "replicas": 9}}
    written = client.update_status(DARKROOMS, body)
    assert written["status"]["readyReplicas"] == 2 and written["spec"]["replicas"] == 3  # status PUT ignores spec


def test_dry_run_persists_nothing(client: CachedClient, namespace: str) -> None:
    answer = client.create(CONFIGMAPS, {"metadata": {"name": "dry", "namespace": namespace}}, dry_run=True)
    assert answer["metadata"]["name"] == "dry"
    with pytest.raises(NotFound):
        client.get(CONFIGMAPS, "dry", namespace=namespace)
    assert "dry" not in {o["metadata"]["name"] for o in client.list(CONFIGMAPS, namespace=namespace)}


def test_uncached_resources_are_read_from_the_server(client: CachedClient, namespace: str) -> None:
    assert client.get(NAMESPACES, namespace)["metadata"]["name"] == namespace
    assert namespace in {ns["metadata"]["name"] for ns in client.list(NAMESPACES)}
    assert "managedFields" not in client.get(NAMESPACES, namespace)["metadata"]


def test_fresh_reads_and_lookup_ask_the_server(client: CachedClient, namespace: str, kube: ClusterProcess) -> None:
    # Written by another client: this client's cache learns of it only through its watch.
    other = config.new_client_from_config(config_file=str(kube.kubeconfig))
    try:
        k8s.CoreV1Api(other).create_namespaced_config_map(namespace, {"metadata": {"name": "elsewhere"}, "data": {"a": "1"}})
    finally:
        other.close()
    assert client.get(CONFIGMAPS, "elsewhere", namespace=namespace, fresh=True)["data"] == {"a": "1"}
    found = client.lookup(CONFIGMAPS, "elsewhere", namespace=namespace)
    assert found is not None and found["metadata"]["name"] == "elsewhere" and "managedFields" not in found["metadata"]
    assert client.lookup(CONFIGMAPS, "nobody", namespace=namespace) is None
    with pytest.raises(NotFound):
        client.get(CONFIGMAPS, "nobody", namespace=namespace, fresh=True)


def test_error_mapping(client: CachedClient, namespace: str) -> None:
    client.create(CONFIGMAPS, {"metadata": {"name": "dup", "namespace": namespace}})
    with pytest.raises(AlreadyExists) as exists:
        client.create(CONFIGMAPS, {"metadata": {"name": "dup", "namespace": namespace}})
    assert exists.value.status == 409 and exists.value.reason == "AlreadyExists" and not exists.value.retryable
    stale = client.create(CONFIGMAPS, {"metadata": {"name": "stale", "namespace": namespace}})
    client.patch(CONFIGMAPS, "stale", {"data": {"x": "1"}}, namespace=namespace)
    with pytest.raises(Conflict) as conflict:
        client.update(CONFIGMAPS, {**stale, "data": {"x": "2"}})
    assert conflict.value.status == 409
    with pytest.raises(NotFound):
        client.delete(CONFIGMAPS, "missing", namespace=namespace)
    with pytest.raises(Invalid) as invalid:
        client.create(DARKROOMS, darkroom("bad", namespace, replicas=-1, source={"type": "FTP"}))
    fields = {cause.field for cause in invalid.value.causes}
    assert {"spec.replicas", "spec.source.type"} <= fields


def test_forbidden_in_a_terminating_namespace(client: CachedClient) -> None:
    name = f"t-{uuid.uuid4().hex[:10]}"
    client.create(NAMESPACES, {"metadata": {"name": name, "finalizers": ["example.com/hold"]}})
    client.delete(NAMESPACES, name)
    try:
        with pytest.raises(Forbidden) as caught:
            client.create(CONFIGMAPS, {"metadata": {"name": "late", "namespace": name}})
        assert caught.value.status == 403
    finally:
        client.patch(NAMESPACES, name, {"metadata": {"finalizers": None}})


def test_transport_failure_is_unavailable_with_cause(connection: Connection) -> None:
    transport = Transport(api_client=connection.api_client, connect_timeout_s=1)
    transport.host = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unavailable) as caught:
        transport.request("GET", "/api/v1/namespaces")
    assert caught.value.retryable and caught.value.status == 0
    assert type(caught.value.__cause__).__module__.startswith("urllib3")


def test_peek_reads_only_the_cache_and_sees_own_writes(client: CachedClient, namespace: str) -> None:
    assert client.peek(DARKROOMS, "absent", namespace=namespace) is None
    written = client.create(DARKROOMS, darkroom("peeked", namespace))
    seen = client.peek(DARKROOMS, "peeked", namespace=namespace)
    assert seen is not None and seen["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    with pytest.raises(KeyError):
        client.peek(NAMESPACES, namespace)  # no informer for namespaces in this cache
