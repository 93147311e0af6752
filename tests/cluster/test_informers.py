"""Informers: sync, propagation to the cache and to handlers, queries, and the objects they hold.

Behaviours: ``wait_for_sync`` / ``has_synced`` after a paginated initial list (more objects than a
page) that fills the store; creates, updates and deletes made by another client reach the cache and
the add / update(old, new) / delete handlers in order; a handler added after sync first gets every
cached object as an add — to its ``on_initial_add`` when it has one, as does a handler added before the
first list, while later creates go to ``on_add``; a failing handler does not stop delivery; label-selector queries (equality,
set-based, existence, mapping) and the namespace, owner-UID and label indexes; a label-selected
informer holds only matching objects and drops objects that stop matching; cached objects carry
kind/apiVersion and no managedFields; they cannot be mutated by a caller (dicts and lists), while
``thaw`` / ``deepcopy`` give independent mutable copies and both orjson and json serialise them;
stats count cached objects and report time since the last event.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import pytest
from kubernetes import client as k8s

from cluster import CONFIGMAPS, OWNER_UID, Cache, by_label, by_owner_uid, thaw
from cluster.connecting import Connection
from cluster.selectors import parse
from tests.support import PUBLISHED_CONFIGMAPS, wait_for

TASK_UID = "example.example.com/task-uid"


def configmap(name: str, namespace: str, labels: dict[str, str] | None = None, owner: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner is not None:  # a real owner: the garbage collector deletes dependents of missing owners
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name, "uid": owner.metadata.uid}]
    return {"metadata": meta, "data": {"k": name}}


def test_sync_and_propagation(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient, store_form: dict[str, Any]
) -> None:
    core = k8s.CoreV1Api(api_client)
    for i in range(120):  # more than FAST.page_size (50): the initial list takes three pages
        core.create_namespaced_config_map(namespace, configmap(f"pre-{i:03}", namespace))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace, **store_form)
    events: list[tuple[str, str, str]] = []
    done = threading.Event()

    def on_delete(obj: Any) -> None:
        events.append(("delete", obj["metadata"]["name"], obj["data"]["k"]))
        if obj["metadata"]["name"] == "live":
            done.set()

    def on_add(obj: Any) -> None:
        if obj["metadata"]["name"] not in PUBLISHED_CONFIGMAPS:
            events.append(("add", obj["metadata"]["name"], obj["data"]["k"]))

    informer.add_handler(
        on_add=on_add,
        on_update=lambda old, new: events.append(("update", old["data"]["k"], new["data"]["k"])),
        on_delete=on_delete,
    )
    assert not informer.has_synced
    cache.start()
    assert cache.wait_for_sync(10) and informer.has_synced
    published = len([o for o in informer.store.list() if o["metadata"]["name"] in PUBLISHED_CONFIGMAPS])
    assert len(informer.store) == 120 + published and informer.stats().objects == 120 + published
    core.create_namespaced_config_map(namespace, configmap("live", namespace))
    core.patch_namespaced_config_map("live", namespace, {"data": {"k": "changed"}})
    core.delete_namespaced_config_map("live", namespace)
    assert done.wait(10)
    assert events[:120] == [("add", f"pre-{i:03}", f"pre-{i:03}") for i in range(120)]
    assert events[120:] == [("add", "live", "live"), ("update", "live", "changed"), ("delete", "live", "changed")]
    assert informer.store.get(f"{namespace}/live") is None
    stats = informer.stats()
    assert stats.synced and stats.objects == 120 + published and stats.relists == 0
    assert stats.seconds_since_last_event is not None and stats.seconds_since_last_event >= 0


def test_late_handler_replay_and_failing_handler(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, configmap("a", namespace))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace)

    def broken(obj: Any) -> None:
        raise RuntimeError("handler bug")

    informer.add_handler(on_add=broken)
    assert cache.start().wait_for_sync(10)
    seen: list[str] = []
    informer.add_handler(on_add=lambda o: seen.append(o["metadata"]["name"]))
    changes: list[str] = []  # replay=False: only what happens from now on (the API's /watch)
    informer.add_handler(on_add=lambda o: changes.append(o["metadata"]["name"]), replay=False)
    core.create_namespaced_config_map(namespace, configmap("b", namespace))
    wait_for(lambda: [n for n in seen if n not in PUBLISHED_CONFIGMAPS] == ["a", "b"], message="replayed add then live add")
    wait_for(lambda: [n for n in changes if n not in PUBLISHED_CONFIGMAPS] == ["b"], message="the live add alone")


def test_adds_of_the_initial_list_go_to_on_initial_add(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, configmap("listed", namespace))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace)
    early: dict[str, list[str]] = {"initial": [], "live": []}
    informer.add_handler(
        on_add=lambda o: early["live"].append(o["metadata"]["name"]),
        on_initial_add=lambda o: early["initial"].append(o["metadata"]["name"]),
    )
    assert cache.start().wait_for_sync(10)
    late: dict[str, list[str]] = {"initial": [], "live": []}
    informer.add_handler(
        on_add=lambda o: late["live"].append(o["metadata"]["name"]), on_initial_add=lambda o: late["initial"].append(o["metadata"]["name"])
    )
    core.create_namespaced_config_map(namespace, configmap("created", namespace))

    def ours(names: list[str]) -> list[str]:
        return [n for n in names if n not in PUBLISHED_CONFIGMAPS]

    wait_for(lambda: ours(late["live"]) == ["created"] and ours(early["live"]) == ["created"], message="the live add")
    assert ours(early["initial"]) == ours(late["initial"]) == ["listed"]


def test_selectors_and_indexes(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient, store_form: dict[str, Any]
) -> None:
    core = k8s.CoreV1Api(api_client)
    owner_1 = core.create_namespaced_config_map(namespace, configmap("owner-1", namespace, {"role": "owner"}))
    owner_2 = core.create_namespaced_config_map(namespace, configmap("owner-2", namespace, {"role": "owner"}))
    core.create_namespaced_config_map(namespace, configmap("web-1", namespace, {"app": "web", "tier": "front"}, owner=owner_1))
    core.create_namespaced_config_map(namespace, configmap("web-2", namespace, {"app": "web", TASK_UID: "t-9"}, owner=owner_1))
    core.create_namespaced_config_map(namespace, configmap("db", namespace, {"app": "db", TASK_UID: "t-9"}, owner=owner_2))
    core.create_namespaced_config_map(namespace, configmap("bare", namespace))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace, indexers={OWNER_UID: by_owner_uid, "task": by_label(TASK_UID)}, **store_form)
    assert cache.start().wait_for_sync(10)
    store = informer.store

    def names(objs: Sequence[Any]) -> list[str]:
        return [o["metadata"]["name"] for o in objs if o["metadata"]["name"] not in PUBLISHED_CONFIGMAPS]

    everything = ["bare", "db", "owner-1", "owner-2", "web-1", "web-2"]
    assert names(store.list(namespace=namespace)) == everything
    assert names(store.list(namespace="elsewhere")) == []
    assert names(store.list(selector=parse("app=web"))) == ["web-1", "web-2"]
    assert names(store.list(selector=parse("app in (web, db),tier!=front"))) == ["db", "web-2"]
    assert names(store.list(selector=parse("!app,!role"))) == ["bare"]
    assert names(store.list(selector=parse(f"{TASK_UID}"))) == ["db", "web-2"]
    assert names(store.list(selector=parse({"app": "db"}))) == ["db"]
    uid_1, uid_2 = owner_1.metadata.uid, owner_2.metadata.uid
    assert names(store.by_index(OWNER_UID, uid_1)) == ["web-1", "web-2"]
    assert names(store.by_index(OWNER_UID, uid_2)) == ["db"]
    assert names(store.by_index("task", "t-9")) == ["db", "web-2"]
    assert names(store.by_index("namespace", namespace)) == everything
    core.patch_namespaced_config_map("web-1", namespace, {"metadata": {"ownerReferences": None}})
    wait_for(lambda: names(store.by_index(OWNER_UID, uid_1)) == ["web-2"], message="index follows updates")
    with pytest.raises(KeyError):
        store.by_index("nope", "x")


def test_label_selected_informer(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, configmap("web", namespace, {"app": "web"}))
    core.create_namespaced_config_map(namespace, configmap("db", namespace, {"app": "db"}))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace, label_selector="app=web")
    removed: list[str] = []
    informer.add_handler(on_delete=lambda o: removed.append(o["metadata"]["name"]))
    assert cache.start().wait_for_sync(10)
    assert [o["metadata"]["name"] for o in informer.store.list()] == ["web"]
    core.patch_namespaced_config_map("web", namespace, {"metadata": {"labels": {"app": "other"}}})
    wait_for(lambda: removed == ["web"] and len(informer.store) == 0, message="object that stops matching leaves the cache")


def test_cached_objects_are_plain_looking_and_immutable(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient, store_form: dict[str, Any]
) -> None:
    core = k8s.CoreV1Api(api_client)
    owner = core.create_namespaced_config_map(namespace, configmap("owner", namespace))
    core.create_namespaced_config_map(namespace, configmap("frozen", namespace, {"a": "1"}, owner=owner))
    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace, **store_form)
    assert cache.start().wait_for_sync(10)
    obj = informer.store.get(f"{namespace}/frozen")
    assert obj is not None
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert "managedFields" not in obj["metadata"]
    attempts: list[Callable[[], object]] = [
        lambda: obj.__setitem__("data", {}),
        lambda: obj["metadata"]["labels"].__setitem__("a", "2"),
        lambda: obj["metadata"].pop("name"),
        lambda: obj["data"].update({"k": "v"}),
        lambda: obj["metadata"]["labels"].clear(),
        lambda: obj["metadata"].setdefault("x", 1),
        lambda: obj.__delitem__("data"),
        lambda: obj["metadata"]["ownerReferences"].append({}),
        lambda: obj["metadata"]["ownerReferences"][0].__setitem__("uid", "x"),
    ]
    for attempt in attempts:
        with pytest.raises((TypeError, AttributeError)):
            attempt()
    with pytest.raises(TypeError):
        obj |= {"x": 1}
    mutable = thaw(obj)
    mutable["metadata"]["labels"]["a"] = "2"
    mutable["metadata"]["ownerReferences"].append({})
    deep = copy.deepcopy(obj)
    deep["data"]["k"] = "changed"
    again = informer.store.get(f"{namespace}/frozen")
    # the same object (frozen bodies), or an equal one decoded again (packed: cluster.packing)
    assert (again is obj) != informer.store.packed and again == obj
    assert obj["metadata"]["labels"] == {"a": "1"} and obj["data"] == {"k": "frozen"}
    assert len(obj["metadata"]["ownerReferences"]) == 1
    assert orjson.loads(orjson.dumps(obj)) == json.loads(json.dumps(obj)) == thaw(obj)


def test_a_transform_decides_what_the_store_keeps(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    """An informer's transform sees each object (listed or watched) and its result is what the store keeps and the
    handlers get (an update that touched only what it drops still reaches them: the resourceVersion moved)."""
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, configmap("listed", namespace))

    def keep_k(obj: dict[str, Any]) -> dict[str, Any]:
        obj["data"] = {"k": obj.get("data", {}).get("k")}
        return obj

    cache = make_cache(connection.transport)
    informer = cache.add(CONFIGMAPS, namespace=namespace, transform=keep_k)
    updates: list[str] = []
    informer.add_handler(on_update=lambda old, new: updates.append(new["data"]["k"]))
    cache.start()
    assert cache.wait_for_sync(10)
    core.patch_namespaced_config_map("listed", namespace, {"data": {"dropped": "x" * 1000}})
    core.create_namespaced_config_map(namespace, configmap("watched", namespace))
    wait_for(lambda: informer.store.get(f"{namespace}/watched") is not None)
    core.patch_namespaced_config_map("listed", namespace, {"data": {"k": "kept"}})
    wait_for(lambda: updates == ["listed", "kept"])
    for name in ("listed", "watched"):
        stored = informer.store.get(f"{namespace}/{name}")
        assert stored is not None and set(stored["data"]) == {"k"}


def test_a_metadata_only_informer_beside_the_whole_one(
    connection: Connection, make_cache: Callable[..., Cache], namespace: str, api_client: k8s.ApiClient
) -> None:
    """A resource may have one informer of whole objects and one of metadata alone, each with its own selector: the
    metadata-only one (``PartialObjectMetadata`` lists and watches) keeps no data, follows objects that start or stop
    matching its selector, and is synced, counted and stopped with the cache."""
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, configmap("ours", namespace, {"owner": "us"}))
    core.create_namespaced_config_map(namespace, configmap("theirs", namespace, {"owner": "them"}))
    core.create_namespaced_config_map(namespace, configmap("unlabelled", namespace))
    cache = make_cache(connection.transport)
    whole = cache.add(CONFIGMAPS, namespace=namespace, label_selector="owner=us")
    names = cache.add(CONFIGMAPS, namespace=namespace, label_selector="owner!=us", metadata_only=True)
    with pytest.raises(ValueError, match="metadata-only"):
        cache.add(CONFIGMAPS, namespace=namespace, metadata_only=True)
    assert cache.metadata_informer(CONFIGMAPS) is names and cache.informer(CONFIGMAPS) is whole
    added: list[str] = []
    names.add_handler(on_add=lambda o: added.append(o["metadata"]["name"]))
    assert cache.start().wait_for_sync(10)

    def held(informer: Any) -> list[str]:
        return sorted(o["metadata"]["name"] for o in informer.store.list() if o["metadata"]["name"] != "kube-root-ca.crt")

    assert held(whole) == ["ours"] and held(names) == ["theirs", "unlabelled"]
    theirs = names.store.get(f"{namespace}/theirs")
    assert theirs is not None and "data" not in theirs and "managedFields" not in theirs["metadata"]
    assert theirs["kind"] == "PartialObjectMetadata" and theirs["metadata"]["labels"] == {"owner": "them"}
    whole_ours = whole.store.get(f"{namespace}/ours")
    assert whole_ours is not None and whole_ours["data"] == {"k": "ours"}

    core.create_namespaced_config_map(namespace, configmap("new", namespace, {"owner": "them"}))
    core.patch_namespaced_config_map("ours", namespace, {"metadata": {"labels": {"owner": None}}})
    wait_for(lambda: held(names) == ["new", "ours", "theirs", "unlabelled"] and held(whole) == [], message="the names follow")
    watched = names.store.get(f"{namespace}/new")
    assert watched is not None and "data" not in watched and watched["kind"] == "PartialObjectMetadata"
    wait_for(lambda: {"new", "ours"} <= set(added), message="the handlers hear of names that come")
    stats = {s.resource: s for s in cache.stats()}
    assert stats["configmaps (metadata)"].synced and stats["configmaps (metadata)"].objects == len(names.store)
    assert stats["configmaps"].objects == 0
    cache.stop()
    assert not names._thread.is_alive()
