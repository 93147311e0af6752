"""Label selectors answered from the cache agree with the API server, selector by selector.

Behaviours: a list through :class:`cluster.CachedClient` served by an informer selects the same
objects as the server's own ``?labelSelector=`` for the whole kube grammar (``=``, ``==``, ``!=``,
``in``, ``notin``, ``key``, ``!key``, ``>``, ``<`` — ``a>1`` included, which the cache used to
reject), and a selector the server rejects is a :class:`cluster.errors.BadRequest` from the cache
with the server's message, word for word.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kubernetes import client as k8s

from cluster import CONFIGMAPS, Cache, CachedClient, ClientSettings, errors
from cluster.connecting import Connection
from tests.support import wait_for

LABELS = {"zero": {"a": "0"}, "one": {"a": "1", "b": "x"}, "two": {"a": "2", "b": "y"}, "word": {"a": "x"}, "none": {"b": "x"}}
SELECTORS = (
    "a>1",
    "a<1",
    "a=1",
    "a==1",
    "a!=1",
    "a in (0,2)",
    "a notin (0,2)",
    "a",
    "!a",
    "a,b=x",
    "b in (x),a>0",
    "a in ()",
)
INVALID = ("a>x", "a>-1", "a in (b", "a b", "!", "-a=b", "a>1>2", "a=b c")


@pytest.fixture
def listed(connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient) -> CachedClient:
    core = k8s.CoreV1Api(api_client)
    for name, labels in LABELS.items():
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": labels}})
    cache = make_cache(connection.transport)
    cache.add(CONFIGMAPS, namespace=namespace)
    assert cache.start().wait_for_sync(10)
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="tests"))
    wait_for(lambda: len(ours(client, namespace, None)) == len(LABELS), message="the cache holds every ConfigMap")
    return client


def ours(client: CachedClient, namespace: str, selector: str | None) -> list[str]:
    return sorted(
        o["metadata"]["name"]
        for o in client.list(CONFIGMAPS, namespace=namespace, label_selector=selector)
        if o["metadata"]["name"] in LABELS
    )


def test_cache_selects_what_the_server_selects(listed: CachedClient, namespace: str, api_client: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api_client)
    for selector in SELECTORS:
        served = sorted(
            i.metadata.name
            for i in core.list_namespaced_config_map(namespace, label_selector=selector).items
            if i.metadata and i.metadata.name in LABELS
        )
        assert ours(listed, namespace, selector) == served, selector
    assert ours(listed, namespace, "a>1") == ["two"]


def test_cache_rejects_what_the_server_rejects_with_its_message(listed: CachedClient, namespace: str, api_client: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api_client)
    for selector in INVALID:
        with pytest.raises(k8s.ApiException) as served:
            core.list_namespaced_config_map(namespace, label_selector=selector)
        assert served.value.status == 400, selector
        with pytest.raises(errors.BadRequest) as cached:
            listed.list(CONFIGMAPS, namespace=namespace, label_selector=selector)
        assert cached.value.message == json.loads(served.value.body)["message"], selector
