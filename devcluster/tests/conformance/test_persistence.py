"""Persistence and write concurrency of devcluster, driven through the official kubernetes client.

Each test runs a private devcluster (``fresh_devcluster``) it can stop, kill and restart.

Covers:
- CRDs, custom resources (spec and /status), configmaps and secrets survive a graceful restart
  (SIGTERM, exit 0) and a ``kill -9``: same content, uids and resourceVersions; deleted objects
  stay deleted; the CRD's resource is served again (discovery, list, create) without re-creating it;
- every write acknowledged before a ``kill -9`` in the middle of a stream of writes is there after
  the restart;
- resourceVersions keep increasing across restarts (a new write's RV exceeds every earlier one);
- a watch from a pre-restart resourceVersion: the revision the server stopped at resumes (later
  changes arrive), an older one is outside the retained history and gets a 410 Expired ERROR
  event, as kube-apiserver's watch cache does after a restart;
- 8 threads x 100 creates with the official client: all 800 objects exist, all resourceVersions
  are distinct, and all of them are still there after a ``kill -9``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client, config

from tests.clusters import ROOT, DevclusterProcess
from tests.support import as_dict, wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube

DR_GROUP, DR_VERSION, DR_PLURAL = "deployments.example.com", "v1", "darkrooms"
NS = "keep"


@contextlib.contextmanager
def _client(cluster: DevclusterProcess) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    try:
        yield api
    finally:
        api.close()


def _install_darkroom_crd(api: client.ApiClient) -> None:
    body = yaml.safe_load((ROOT / "crds" / "darkrooms.deployments.example.com.yaml").read_text())
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(body)

    def established() -> bool:
        crd = ext.read_custom_resource_definition("darkrooms.deployments.example.com")
        return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])

    wait_for(established, message="CRD established")


def _darkroom(name: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{DR_GROUP}/{DR_VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": name, "labels": {"app": "gallery"}},
        "spec": {
            "source": {"type": "WebFolder", "baseUrl": "https://images.example.com"},
            "subDomains": ["img", "cdn"],
            "version": version,
        },
    }


def _state(api: client.ApiClient) -> dict[str, dict[str, Any]]:
    """Everything this module creates, as plain dicts keyed by kind/name (managedFields dropped)."""
    core = client.CoreV1Api(api)
    custom = client.CustomObjectsApi(api)
    ext = client.ApiextensionsV1Api(api)
    out: dict[str, dict[str, Any]] = {}
    for cm in core.list_namespaced_config_map(NS).items:
        out[f"cm/{cm.metadata.name}"] = api.sanitize_for_serialization(cm)
    for secret in core.list_namespaced_secret(NS).items:
        out[f"secret/{secret.metadata.name}"] = api.sanitize_for_serialization(secret)
    for dr in as_dict(custom.list_namespaced_custom_object(DR_GROUP, DR_VERSION, NS, DR_PLURAL))["items"]:
        out[f"dr/{dr['metadata']['name']}"] = dr
    crd = ext.read_custom_resource_definition("darkrooms.deployments.example.com")
    out["crd/darkrooms"] = api.sanitize_for_serialization(crd)
    out["ns/keep"] = api.sanitize_for_serialization(core.read_namespace(NS))
    for obj in out.values():
        obj["metadata"].pop("managedFields", None)
    return out


def _max_rv(state: dict[str, dict[str, Any]]) -> int:
    return max(int(o["metadata"]["resourceVersion"]) for o in state.values())


def _watch_lines(api: client.ApiClient, path: str, rv: str, timeout_s: int) -> Any:
    method, url, headers, _, _ = api.param_serialize(
        "GET",
        path,
        query_params=[("watch", "true"), ("resourceVersion", rv), ("timeoutSeconds", str(timeout_s))],
        auth_settings=["BearerToken"],
    )
    return api.call_api(method, url, header_params=headers, _request_timeout=timeout_s + 30).response


def _first_event(resp: Any) -> dict[str, Any] | None:
    buffer = b""
    for chunk in resp.stream(65536):
        buffer += chunk
        if b"\n" in buffer:
            event: dict[str, Any] = json.loads(buffer.split(b"\n", 1)[0])
            return event
    return None


def _assert_served_after_restart(api: client.ApiClient, before: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    # Discovery serves the custom resource again, without anyone re-creating the CRD.
    resources = client.CustomObjectsApi(api).get_api_resources(DR_GROUP, DR_VERSION)
    assert "darkrooms" in [r.name for r in resources.resources]
    after = _state(api)
    assert after.keys() == before.keys()
    for key, obj in before.items():
        assert after[key]["metadata"]["uid"] == obj["metadata"]["uid"], key
        assert after[key]["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"], key
        assert after[key] == obj, key
    return after


def test_objects_survive_graceful_restart_and_kill(fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster()
    with _client(cluster) as api:
        core = client.CoreV1Api(api)
        custom = client.CustomObjectsApi(api)
        core.create_namespace({"metadata": {"name": NS}})
        _install_darkroom_crd(api)
        for name, version in (("alpha", "0.4.2"), ("beta", "0.5.0")):
            wait_for(
                functools.partial(custom.create_namespaced_custom_object, DR_GROUP, DR_VERSION, NS, DR_PLURAL, _darkroom(name, version))
            )
        custom.patch_namespaced_custom_object_status(
            DR_GROUP,
            DR_VERSION,
            NS,
            DR_PLURAL,
            "alpha",
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "Up", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}
                    ]
                }
            },
        )
        custom.patch_namespaced_custom_object(DR_GROUP, DR_VERSION, NS, DR_PLURAL, "beta", {"spec": {"replicas": 3}})
        for i in range(3):
            core.create_namespaced_config_map(
                NS, {"metadata": {"name": f"cm-{i}", "labels": {"i": str(i)}}, "data": {"n": str(i), "text": "é ✓\nline"}}
            )
        core.patch_namespaced_config_map("cm-1", NS, {"data": {"n": "updated"}})
        core.create_namespaced_config_map(NS, {"metadata": {"name": "doomed"}})
        core.delete_namespaced_config_map("doomed", NS)
        core.create_namespaced_secret(
            NS, {"metadata": {"name": "creds"}, "type": "Opaque", "stringData": {"user": "admin", "pass": "s3cr3t"}}
        )
        core.create_namespaced_secret(NS, {"metadata": {"name": "blob"}, "data": {"bin": "AAECAwQ="}})
        before = _state(api)
        assert before["dr/alpha"]["status"]["conditions"][0]["status"] == "True"
        assert before["dr/beta"]["metadata"]["generation"] == 2
        assert before["secret/creds"]["data"] == {"user": "YWRtaW4=", "pass": "czNjcjN0"}
        assert "cm/doomed" not in before
        last_rv = core.list_namespaced_config_map(NS).metadata.resource_version
        old_rv = before["cm/cm-0"]["metadata"]["resourceVersion"]

    assert cluster.stop() == 0  # graceful: SIGTERM, clean exit
    cluster.start()
    with _client(cluster) as api:
        _assert_served_after_restart(api, before)
        core = client.CoreV1Api(api)
        custom = client.CustomObjectsApi(api)
        # A watch from an old pre-restart revision is beyond the retained history: 410 Expired.
        resp = _watch_lines(api, f"/api/v1/namespaces/{NS}/configmaps", old_rv, 5)
        try:
            event = _first_event(resp)
        finally:
            resp.release_conn()
        assert event is not None and event["type"] == "ERROR"
        assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
        # From the revision the server stopped at, the watch resumes with what happens next.
        resp = _watch_lines(api, f"/api/v1/namespaces/{NS}/configmaps", last_rv, 10)
        try:
            created = core.create_namespaced_config_map(NS, {"metadata": {"name": "after-restart"}})
            event = _first_event(resp)
        finally:
            resp.close()
            resp.release_conn()
        assert event is not None
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after-restart")
        # resourceVersions keep increasing across the restart.
        assert int(created.metadata.resource_version) > _max_rv(before)
        dr = as_dict(custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, NS, DR_PLURAL, _darkroom("gamma", "1.0.0")))
        assert int(dr["metadata"]["resourceVersion"]) > int(created.metadata.resource_version)
        before_kill = _state(api)

    cluster.kill()
    cluster.start()
    with _client(cluster) as api:
        _assert_served_after_restart(api, before_kill)
        again = client.CoreV1Api(api).create_namespaced_config_map(NS, {"metadata": {"name": "after-kill"}})
        assert int(again.metadata.resource_version) > _max_rv(before_kill)


def test_every_acknowledged_write_survives_kill_during_writes(fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster()
    acknowledged: dict[str, str] = {}
    stop = threading.Event()
    with _client(cluster) as api:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": NS}})

    def writer() -> None:
        with _client(cluster) as api:
            core = client.CoreV1Api(api)
            i = 0
            while not stop.is_set():
                try:
                    obj = core.create_namespaced_config_map(
                        NS, {"metadata": {"name": f"w-{i:05d}"}, "data": {"i": str(i)}}, _request_timeout=5
                    )
                except (urllib3.exceptions.HTTPError, client.ApiException, OSError):
                    return  # the server died under us; this write was never acknowledged
                acknowledged[obj.metadata.name] = obj.metadata.resource_version
                i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_for(lambda: len(acknowledged) >= 150, timeout_s=30, message="writes acknowledged")
        cluster.kill()  # SIGKILL while writes are in flight
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    cluster.start()
    with _client(cluster) as api:
        stored = {cm.metadata.name: cm for cm in client.CoreV1Api(api).list_namespaced_config_map(NS).items}
        missing = sorted(set(acknowledged) - set(stored))
        assert missing == []
        for name, rv in acknowledged.items():
            assert stored[name].metadata.resource_version == rv
            assert stored[name].data == {"i": str(int(name[2:]))}
        # At most the one write in flight at the kill may also have landed.
        assert len(stored) - len(acknowledged) in (0, 1)


def test_concurrent_creates_get_distinct_resource_versions(fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster()
    with _client(cluster) as api:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": NS}})

    def create_many(t: int) -> list[tuple[str, str, str]]:
        with _client(cluster) as api:
            core = client.CoreV1Api(api)
            out = []
            for i in range(100):
                obj = core.create_namespaced_config_map(NS, {"metadata": {"name": f"t{t}-{i:03d}"}, "data": {"t": str(t), "i": str(i)}})
                out.append((obj.metadata.name, obj.metadata.uid, obj.metadata.resource_version))
            return out

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = [r for batch in pool.map(create_many, range(8)) for r in batch]
    assert len(results) == 800
    assert len({rv for _, _, rv in results}) == 800
    assert len({uid for _, uid, _ in results}) == 800

    with _client(cluster) as api:
        listed = client.CoreV1Api(api).list_namespaced_config_map(NS)
        assert {(o.metadata.name, o.metadata.uid, o.metadata.resource_version) for o in listed.items} == set(results)
        assert int(listed.metadata.resource_version) >= max(int(rv) for _, _, rv in results)

    cluster.kill()
    cluster.start()
    with _client(cluster) as api:
        listed = client.CoreV1Api(api).list_namespaced_config_map(NS)
        assert {(o.metadata.name, o.metadata.uid, o.metadata.resource_version) for o in listed.items} == set(results)
