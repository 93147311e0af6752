"""Write semantics of devcluster, checked against what kube-apiserver does, through the official client.

Covers:
- create metadata: uid, resourceVersion (one cluster-wide increasing revision across kinds),
  creationTimestamp (RFC 3339, seconds, ``Z``), generation (1 on create; +1 on spec changes only —
  not on metadata-only or status writes), generateName (prefix + 5 random characters), labels /
  annotations / ownerReferences / finalizers kept, managedFields per manager (Update vs Apply).
- namespaces: creating in a missing namespace (404), in a terminating one (403 Forbidden, cause
  NamespaceTerminating); namespace deletion empties it and then removes it; ``default`` may not be
  deleted (403).
- errors as ``metav1.Status`` with exact code / reason / message / details: NotFound, AlreadyExists,
  Conflict (stale resourceVersion), Invalid (bad name, bad label value; causes[].field), BadRequest
  (namespace or name in body differ from the URL, malformed JSON), MethodNotAllowed (POST to an
  item), UnsupportedMediaType (strategic merge patch on a CR, unknown patch type), NotAcceptable
  (protobuf-only Accept for a CR).
- update (PUT): CRs need metadata.resourceVersion (422), ConfigMaps do not; a no-op update is not
  written (same resourceVersion).
- patch: JSON merge patch, JSON patch (failing ``test`` op → 422), strategic merge patch on a
  Deployment (containers and env merge by name, ``$patch: delete``), stale resourceVersion → 409.
- server-side apply: create via apply (201), identical re-apply is a no-op, conflicts between
  managers (409 with causes), force takes ownership, fields dropped from a manager's config are
  removed, fieldManager is required (422 Invalid PatchOptions), managedFields Apply entries.
- dryRun=All on create / update / patch / delete returns the would-be object and stores nothing,
  whether it comes as a query parameter or (delete, deletecollection, namespaces) in the
  DeleteOptions body;
  an unsupported dryRun value is 422 Invalid (CreateOptions / DeleteOptions); so are a bad
  fieldValidation, force on a non-apply patch and an over-long fieldManager.
- delete: uid / resourceVersion preconditions (409, the registry's messages under the kind), propagationPolicy Orphan / Background /
  Foreground, deletecollection with a label selector, finalizers hold an object (deletionTimestamp
  set) until removed, watchers then see DELETED, no finalizers may be added while deleting (422).
- status subresource (Deployment and a CR): the main endpoint ignores status, /status ignores
  everything else (spec, labels), status writes do not bump generation.
- Secrets: stringData is merged into base64 ``data`` and not stored; Services: clusterIP is
  allocated and stable across updates.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.dynamic import DynamicClient

from tests.support import as_dict, wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube

JSON = "application/json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
STALE = "the object has been modified; please apply your changes to the latest version and try again"
DR_GROUP, DR_VERSION, DR_PLURAL = "deployments.example.com", "v1", "darkrooms"


@dataclass
class Reply:
    status: int
    headers: Any
    body: Any


def call(
    api: client.ApiClient,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = JSON,
    accept: str = JSON,
    query: list[tuple[str, str]] | None = None,
) -> Reply:
    """One raw request through the official client's REST layer; the reply is never raised."""
    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    method, url, headers, _, _ = api.param_serialize(method, path, query_params=query or [], header_params=headers)
    if isinstance(body, bytes):
        # Exact bytes (e.g. malformed JSON): the REST layer would re-encode them as a JSON string.
        raw = api.rest_client.pool_manager.request(method, url, body=body, headers=headers, preload_content=True)
        status, response_headers, data = raw.status, raw.headers, raw.data
    else:
        response = api.call_api(method, url, header_params=headers, body=body)
        response.read()
        status, response_headers, data = response.status, response.headers, response.data
    try:
        decoded = json.loads(data) if data else None
    except ValueError:
        decoded = data
    return Reply(status, response_headers, decoded)


def failure(reply: Reply, code: int, reason: str) -> dict[str, Any]:
    """Assert ``reply`` is a metav1.Status failure with ``code`` / ``reason``; return the Status."""
    assert reply.status == code, (reply.status, reply.body)
    body = reply.body
    assert body["kind"] == "Status" and body["apiVersion"] == "v1", body
    assert body["status"] == "Failure", body
    assert body["code"] == code and body["reason"] == reason, body
    status: dict[str, Any] = body
    return status


def as_json(api: client.ApiClient, obj: Any) -> dict[str, Any]:
    serialised: dict[str, Any] = api.sanitize_for_serialization(obj)
    return serialised


def api_error(e: client.ApiException) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(e.body)
    return status


def cm_path(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


def dr_path(namespace: str, name: str = "") -> str:
    return f"/apis/{DR_GROUP}/{DR_VERSION}/namespaces/{namespace}/{DR_PLURAL}" + (f"/{name}" if name else "")


def deploy_path(namespace: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/deployments" + (f"/{name}" if name else "")


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {"k": "v"}}


def darkroom(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{DR_GROUP}/{DR_VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": name},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com"}, "subDomains": ["img"], **spec},
    }


def deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                        {"name": "sidecar", "image": "busybox:1.36"},
                    ]
                },
            },
        },
    }


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


def _drop_finalizers(api: client.ApiClient, path: str) -> None:
    reply = call(api, "PATCH", path, {"metadata": {"finalizers": None}}, content_type=MERGE)
    assert reply.status in (200, 404), reply.body


# -- metadata on create ------------------------------------------------------------------------


def test_create_fills_in_server_metadata_and_keeps_client_metadata(
    api_client: client.ApiClient, core: client.CoreV1Api, namespace: str
) -> None:
    owner = core.create_namespaced_config_map(namespace, configmap("owner"))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    body = configmap("meta", labels={"tier": "web"}, annotations={"note": "kept"}, ownerReferences=[ref], finalizers=["example.com/hold"])
    body["metadata"].update(uid="ignored", resourceVersion="", creationTimestamp="2001-01-01T00:00:00Z")
    reply = call(api_client, "POST", cm_path(namespace), body, query=[("fieldManager", "creator")])
    assert reply.status == 201, reply.body
    meta = reply.body["metadata"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", meta["uid"])
    assert meta["uid"] != owner.metadata.uid
    assert meta["resourceVersion"].isdigit() and int(meta["resourceVersion"]) > int(owner.metadata.resource_version)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert meta["creationTimestamp"] != "2001-01-01T00:00:00Z"
    assert "generation" not in meta  # ConfigMaps do not track generation
    assert "deletionTimestamp" not in meta
    assert meta["namespace"] == namespace
    assert meta["labels"] == {"tier": "web"}
    assert meta["annotations"] == {"note": "kept"}
    assert meta["ownerReferences"] == [ref]
    assert meta["finalizers"] == ["example.com/hold"]
    assert [(m["manager"], m["operation"]) for m in meta["managedFields"]] == [("creator", "Update")]
    assert reply.body["data"] == {"k": "v"}
    # what is stored is what was returned
    stored = call(api_client, "GET", cm_path(namespace, "meta")).body
    assert stored == reply.body
    _drop_finalizers(api_client, cm_path(namespace, "meta"))


def test_resource_versions_are_one_increasing_sequence_across_kinds(
    api_client: client.ApiClient, core: client.CoreV1Api, namespace: str
) -> None:
    rvs = [int(core.create_namespaced_config_map(namespace, configmap("first")).metadata.resource_version)]
    rvs.append(int(core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}, "data": {}}).metadata.resource_version))
    rvs.append(
        int(
            client.CoordinationV1Api(api_client)
            .create_namespaced_lease(namespace, {"metadata": {"name": "l"}, "spec": {}})
            .metadata.resource_version
        )
    )
    policy = {"metadata": {"name": "np"}, "spec": {"podSelector": {}}}
    rvs.append(int(client.NetworkingV1Api(api_client).create_namespaced_network_policy(namespace, policy).metadata.resource_version))
    rvs.append(int(core.create_namespaced_service_account(namespace, {"metadata": {"name": "sa"}}).metadata.resource_version))
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    updated = core.patch_namespaced_config_map("first", namespace, {"data": {"k": "changed"}})
    assert int(updated.metadata.resource_version) > max(rvs)
    listed = core.list_namespaced_config_map(namespace)
    assert int(listed.metadata.resource_version) >= int(updated.metadata.resource_version)


def test_generate_name_appends_five_random_characters(core: client.CoreV1Api, namespace: str) -> None:
    names = set()
    for _ in range(3):
        created = core.create_namespaced_config_map(namespace, {"metadata": {"generateName": "gen-"}})
        assert created.metadata.generate_name == "gen-"
        assert re.fullmatch(r"gen-[bcdfghjklmnpqrstvwxz2456789]{5}", created.metadata.name), created.metadata.name
        names.add(created.metadata.name)
    assert len(names) == 3
    assert {cm.metadata.name for cm in core.list_namespaced_config_map(namespace).items} >= names


def test_deployment_generation_counts_spec_changes_only(api_client: client.ApiClient, apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_deployment(namespace, deployment("gen"))
    assert created.metadata.generation == 1
    labelled = apps.patch_namespaced_deployment("gen", namespace, {"metadata": {"labels": {"extra": "x"}, "annotations": {"a": "b"}}})
    assert labelled.metadata.generation == 1
    status = call(api_client, "PATCH", deploy_path(namespace, "gen") + "/status", {"status": {"observedGeneration": 1}}, content_type=MERGE)
    assert status.status == 200 and status.body["metadata"]["generation"] == 1
    scaled = apps.patch_namespaced_deployment("gen", namespace, {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2
    # a client-supplied generation is ignored
    current = call(api_client, "GET", deploy_path(namespace, "gen")).body
    current["metadata"]["generation"] = 99
    del current["metadata"]["resourceVersion"]  # the rollout controller writes status concurrently
    current["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    replaced = call(api_client, "PUT", deploy_path(namespace, "gen"), current)
    assert replaced.status == 200, replaced.body
    assert replaced.body["metadata"]["generation"] == 3


def test_managed_fields_record_each_manager(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("mf", {"a": "1"}), field_manager="alpha")
    core.patch_namespaced_config_map("mf", namespace, {"data": {"b": "2"}}, field_manager="beta")
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mf"}, "data": {"c": "3"}}
    reply = call(api_client, "PATCH", cm_path(namespace, "mf"), json.dumps(applied), content_type=APPLY, query=[("fieldManager", "gamma")])
    assert reply.status == 200, reply.body
    entries = {m["manager"]: m for m in reply.body["metadata"]["managedFields"]}
    assert set(entries) == {"alpha", "beta", "gamma"}
    assert entries["alpha"]["operation"] == "Update" and entries["beta"]["operation"] == "Update"
    assert entries["gamma"]["operation"] == "Apply"
    for entry in entries.values():
        assert entry["apiVersion"] == "v1" and entry["fieldsType"] == "FieldsV1"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["time"])
    assert entries["alpha"]["fieldsV1"]["f:data"] == {".": {}, "f:a": {}}
    assert entries["beta"]["fieldsV1"]["f:data"] == {"f:b": {}}
    assert entries["gamma"]["fieldsV1"]["f:data"] == {"f:c": {}}
    assert reply.body["data"] == {"a": "1", "b": "2", "c": "3"}


# -- namespaces --------------------------------------------------------------------------------


def test_create_in_missing_namespace_is_not_found(api_client: client.ApiClient) -> None:
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    status = failure(call(api_client, "POST", cm_path(missing), configmap("x")), 404, "NotFound")
    assert status["message"] == f'namespaces "{missing}" not found'
    assert status["details"] == {"name": missing, "kind": "namespaces"}


def test_namespace_deletion_empties_it_then_removes_it(
    api_client: client.ApiClient, core: client.CoreV1Api, apps: client.AppsV1Api
) -> None:
    name = f"t-del-{uuid.uuid4().hex[:8]}"
    created = core.create_namespace({"metadata": {"name": name}})
    assert created.spec.finalizers == ["kubernetes"] and created.status.phase == "Active"
    core.create_namespaced_config_map(name, configmap("plain"))
    core.create_namespaced_config_map(name, configmap("held", finalizers=["example.com/hold"]))
    apps.create_namespaced_deployment(name, deployment("web"))
    deleting = call(api_client, "DELETE", f"/api/v1/namespaces/{name}")
    assert deleting.status == 200, deleting.body
    assert deleting.body["kind"] == "Namespace" and deleting.body["metadata"]["deletionTimestamp"]
    assert deleting.body["status"]["phase"] == "Terminating"

    def emptied_but_held() -> bool:
        names = [cm.metadata.name for cm in core.list_namespaced_config_map(name).items]
        return names == ["held"] and not apps.list_namespaced_deployment(name).items

    wait_for(emptied_but_held, message="namespace contents deleted except the finalized ConfigMap")
    held = core.read_namespaced_config_map("held", name)
    assert held.metadata.deletion_timestamp is not None and held.metadata.finalizers == ["example.com/hold"]
    ns = core.read_namespace(name)
    assert ns.status.phase == "Terminating"

    status = failure(call(api_client, "POST", cm_path(name), configmap("late")), 403, "Forbidden")
    assert (
        status["message"]
        == f'configmaps "late" is forbidden: unable to create new content in namespace {name} because it is being terminated'
    )
    assert status["details"]["causes"] == [
        {"reason": "NamespaceTerminating", "message": f"namespace {name} is being terminated", "field": "metadata.namespace"}
    ]

    _drop_finalizers(api_client, cm_path(name, "held"))

    def namespace_gone() -> bool:
        return call(api_client, "GET", f"/api/v1/namespaces/{name}").status == 404

    wait_for(namespace_gone, message="namespace removed once empty")
    assert failure(call(api_client, "GET", cm_path(name, "held")), 404, "NotFound")


def test_default_namespace_cannot_be_deleted(api_client: client.ApiClient, core: client.CoreV1Api) -> None:
    status = failure(call(api_client, "DELETE", "/api/v1/namespaces/default"), 403, "Forbidden")
    assert status["message"] == 'namespaces "default" is forbidden: this namespace may not be deleted'
    assert status["details"]["name"] == "default" and status["details"]["kind"] == "namespaces"
    ns = core.read_namespace("default")
    assert ns.metadata.deletion_timestamp is None and ns.status.phase == "Active"


# -- errors as Status --------------------------------------------------------------------------


def test_not_found_status(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    status = failure(call(api_client, "GET", cm_path(namespace, "nope")), 404, "NotFound")
    assert status["message"] == 'configmaps "nope" not found'
    assert status["details"] == {"name": "nope", "kind": "configmaps"}
    assert status["metadata"] == {}
    with pytest.raises(client.ApiException) as raised:
        core.delete_namespaced_config_map("nope", namespace)
    assert raised.value.status == 404 and api_error(raised.value)["reason"] == "NotFound"
    deploy = failure(call(api_client, "GET", deploy_path(namespace, "nope")), 404, "NotFound")
    assert deploy["message"] == 'deployments.apps "nope" not found'
    assert deploy["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}


def test_already_exists_status(api_client: client.ApiClient, namespace: str) -> None:
    assert call(api_client, "POST", cm_path(namespace), configmap("dup")).status == 201
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("dup")), 409, "AlreadyExists")
    assert status["message"] == 'configmaps "dup" already exists'
    assert status["details"] == {"name": "dup", "kind": "configmaps"}


def test_stale_resource_version_on_update_is_conflict(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    first = call(api_client, "POST", cm_path(namespace), configmap("cc")).body
    core.patch_namespaced_config_map("cc", namespace, {"data": {"k": "newer"}})
    first["data"] = {"k": "lost update"}
    status = failure(call(api_client, "PUT", cm_path(namespace, "cc"), first), 409, "Conflict")
    assert status["message"] == f'Operation cannot be fulfilled on configmaps "cc": {STALE}'
    assert status["details"] == {"name": "cc", "kind": "configmaps"}
    assert core.read_namespaced_config_map("cc", namespace).data == {"k": "newer"}


def test_invalid_name_and_label_value(api_client: client.ApiClient, namespace: str) -> None:
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("Bad_Name")), 422, "Invalid")
    detail = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert status["message"] == f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {detail}'
    assert status["details"] == {
        "name": "Bad_Name",
        "kind": "ConfigMap",
        "causes": [{"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad_Name": {detail}', "field": "metadata.name"}],
    }
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("ok", labels={"app": "bad value!"})), 422, "Invalid")
    causes = status["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldValueInvalid", "metadata.labels")]
    assert causes[0]["message"].startswith(
        'Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters'
    )
    assert status["message"].startswith('ConfigMap "ok" is invalid: metadata.labels: Invalid value: "bad value!"')
    assert call(api_client, "GET", cm_path(namespace, "ok")).status == 404


def test_bad_requests(api_client: client.ApiClient, namespace: str) -> None:
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("x", namespace="elsewhere")), 400, "BadRequest")
    assert status["message"] == "the namespace of the provided object does not match the namespace sent on the request"
    assert call(api_client, "POST", cm_path(namespace), configmap("a")).status == 201
    status = failure(call(api_client, "PUT", cm_path(namespace, "a"), configmap("b")), 400, "BadRequest")
    assert status["message"] == "the name of the object (b) does not match the name on the URL (a)"
    failure(call(api_client, "POST", cm_path(namespace), b'{"metadata": {"name": "broken"'), 400, "BadRequest")
    failure(call(api_client, "PUT", cm_path(namespace, "a"), b"{not json"), 400, "BadRequest")
    assert call(api_client, "GET", cm_path(namespace, "broken")).status == 404


def test_post_to_an_item_is_method_not_allowed(api_client: client.ApiClient, namespace: str) -> None:
    assert call(api_client, "POST", cm_path(namespace), configmap("item")).status == 201
    status = failure(call(api_client, "POST", cm_path(namespace, "item"), configmap("item")), 405, "MethodNotAllowed")
    assert status["message"].startswith("the server does not allow this method on the requested resource")


def test_unsupported_patch_media_types(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("smp"))
    status = failure(
        call(api_client, "PATCH", dr_path(namespace, "smp"), {"spec": {"replicas": 2}}, content_type=STRATEGIC), 415, "UnsupportedMediaType"
    )
    assert (
        status["message"]
        == f"the body of the request was in an unknown format - accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}"
    )
    assert as_dict(custom.get_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, "smp"))["spec"]["replicas"] == 1

    assert call(api_client, "POST", cm_path(namespace), configmap("cm")).status == 201
    # built-in kinds are routed by go-restful, whose Consumes() check answers before the handler
    status = failure(
        call(api_client, "PATCH", cm_path(namespace, "cm"), '{"data": {}}', content_type="application/x-unknown-patch"),
        415,
        "UnsupportedMediaType",
    )
    assert status["message"] == "415: Unsupported Media Type"


def test_protobuf_only_accept_for_custom_resource_is_not_acceptable(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("pb"))
    failure(call(api_client, "GET", dr_path(namespace, "pb"), accept="application/vnd.kubernetes.protobuf"), 406, "NotAcceptable")
    failure(call(api_client, "GET", dr_path(namespace), accept="application/vnd.kubernetes.protobuf"), 406, "NotAcceptable")
    # a protobuf preference with a JSON fallback is served as JSON
    reply = call(api_client, "GET", dr_path(namespace, "pb"), accept="application/vnd.kubernetes.protobuf, application/json")
    assert reply.status == 200 and reply.body["metadata"]["name"] == "pb"


# -- update (PUT) ------------------------------------------------------------------------------


def test_custom_resource_update_requires_resource_version(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("norv"))
    status = failure(call(api_client, "PUT", dr_path(namespace, "norv"), darkroom("norv", replicas=2)), 422, "Invalid")
    # the registry reports it under GroupKind{group, plural} (kube 1.37 prints the uint64 0 as 0)
    assert status["message"] == (
        'darkrooms.deployments.example.com "norv" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update'
    )
    assert status["details"] == {
        "name": "norv",
        "group": DR_GROUP,
        "kind": "darkrooms",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0: must be specified for an update",
                "field": "metadata.resourceVersion",
            }
        ],
    }
    current = as_dict(custom.get_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, "norv"))
    assert current["spec"]["replicas"] == 1
    current["spec"]["replicas"] = 2
    replaced = call(api_client, "PUT", dr_path(namespace, "norv"), current)
    assert replaced.status == 200 and replaced.body["spec"]["replicas"] == 2


def test_configmap_update_without_resource_version_is_unconditional(api_client: client.ApiClient, namespace: str) -> None:
    created = call(api_client, "POST", cm_path(namespace), configmap("uncond")).body
    reply = call(api_client, "PUT", cm_path(namespace, "uncond"), configmap("uncond", {"k": "replaced"}))
    assert reply.status == 200, reply.body
    assert reply.body["data"] == {"k": "replaced"}
    assert reply.body["metadata"]["uid"] == created["metadata"]["uid"]
    assert reply.body["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    assert int(reply.body["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])


def test_no_op_writes_keep_the_resource_version(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    created = call(api_client, "POST", cm_path(namespace), configmap("noop", labels={"a": "b"})).body
    rv = created["metadata"]["resourceVersion"]
    again = call(api_client, "PUT", cm_path(namespace, "noop"), created)
    assert again.status == 200 and again.body["metadata"]["resourceVersion"] == rv
    patched = core.patch_namespaced_config_map("noop", namespace, {"data": {"k": "v"}, "metadata": {"labels": {"a": "b"}}})
    assert patched.metadata.resource_version == rv
    # nothing was written: a watch from the creation revision sees no event for the object
    events = list(watch.Watch().stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1))
    assert [e for e in events if e["object"].metadata.name == "noop"] == []


# -- patch -------------------------------------------------------------------------------------


def test_json_merge_patch(api_client: client.ApiClient, namespace: str) -> None:
    call(api_client, "POST", cm_path(namespace), configmap("mp", {"keep": "1", "drop": "2"}, labels={"x": "y"}))
    reply = call(
        api_client,
        "PATCH",
        cm_path(namespace, "mp"),
        {"data": {"drop": None, "new": "3"}, "metadata": {"labels": {"z": "w"}}},
        content_type=MERGE,
    )
    assert reply.status == 200, reply.body
    assert reply.body["data"] == {"keep": "1", "new": "3"}
    assert reply.body["metadata"]["labels"] == {"x": "y", "z": "w"}
    missing = failure(call(api_client, "PATCH", cm_path(namespace, "absent"), {"data": {}}, content_type=MERGE), 404, "NotFound")
    assert missing["message"] == 'configmaps "absent" not found'


def test_json_patch_and_failing_test_operation(api_client: client.ApiClient, namespace: str) -> None:
    created = call(api_client, "POST", cm_path(namespace), configmap("jp", {"a": "1", "b": "2"})).body
    ops = [
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "10"},
        {"op": "remove", "path": "/data/b"},
        {"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}},
    ]
    reply = call(api_client, "PATCH", cm_path(namespace, "jp"), ops, content_type=JSON_PATCH)
    assert reply.status == 200, reply.body
    assert reply.body["data"] == {"a": "10"} and reply.body["metadata"]["labels"] == {"patched": "yes"}
    rv = reply.body["metadata"]["resourceVersion"]
    assert int(rv) > int(created["metadata"]["resourceVersion"])
    failing = [{"op": "test", "path": "/data/a", "value": "1"}, {"op": "replace", "path": "/data/a", "value": "never"}]
    failure(call(api_client, "PATCH", cm_path(namespace, "jp"), failing, content_type=JSON_PATCH), 422, "Invalid")
    after = call(api_client, "GET", cm_path(namespace, "jp")).body
    assert after["data"] == {"a": "10"} and after["metadata"]["resourceVersion"] == rv
    failure(call(api_client, "PATCH", cm_path(namespace, "jp"), b'[{"op": "replace"', content_type=JSON_PATCH), 400, "BadRequest")


def test_strategic_merge_patch_on_deployment(api_client: client.ApiClient, apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("smp"))
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.26", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]},
                        {"name": "sidecar", "$patch": "delete"},
                        {"name": "extra", "image": "redis:7"},
                    ]
                }
            }
        }
    }
    reply = call(api_client, "PATCH", deploy_path(namespace, "smp"), patch, content_type=STRATEGIC)
    assert reply.status == 200, reply.body
    containers = {c["name"]: c for c in reply.body["spec"]["template"]["spec"]["containers"]}
    assert set(containers) == {"web", "extra"}
    web = containers["web"]
    assert web["image"] == "nginx:1.26"
    assert {e["name"]: e["value"] for e in web["env"]} == {"A": "1", "B": "20", "C": "3"}
    assert containers["extra"]["image"] == "redis:7"
    assert reply.body["spec"]["selector"] == {"matchLabels": {"app": "smp"}}
    assert reply.body["metadata"]["generation"] == 2
    # the same document as a JSON merge patch replaces the whole list
    merged = call(
        api_client,
        "PATCH",
        deploy_path(namespace, "smp"),
        {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "nginx:1.27"}]}}}},
        content_type=MERGE,
    )
    assert merged.status == 200, merged.body
    assert [c["name"] for c in merged.body["spec"]["template"]["spec"]["containers"]] == ["only"]


def test_patch_with_stale_resource_version_is_conflict(api_client: client.ApiClient, namespace: str) -> None:
    created = call(api_client, "POST", cm_path(namespace), configmap("prv")).body
    old_rv = created["metadata"]["resourceVersion"]
    fresh = call(api_client, "PATCH", cm_path(namespace, "prv"), {"data": {"k": "2"}}, content_type=MERGE).body
    status = failure(
        call(
            api_client,
            "PATCH",
            cm_path(namespace, "prv"),
            {"metadata": {"resourceVersion": old_rv}, "data": {"k": "3"}},
            content_type=MERGE,
        ),
        409,
        "Conflict",
    )
    assert status["message"] == f'Operation cannot be fulfilled on configmaps "prv": {STALE}'
    ok = call(
        api_client,
        "PATCH",
        cm_path(namespace, "prv"),
        {"metadata": {"resourceVersion": fresh["metadata"]["resourceVersion"]}, "data": {"k": "3"}},
        content_type=MERGE,
    )
    assert ok.status == 200 and ok.body["data"] == {"k": "3"}


# -- server-side apply -------------------------------------------------------------------------


def _apply(
    api: client.ApiClient, path: str, obj: dict[str, Any], manager: str | None, *, force: bool = False, dry_run: bool = False
) -> Reply:
    query = [("fieldManager", manager)] if manager else []
    if force:
        query.append(("force", "true"))
    if dry_run:
        query.append(("dryRun", "All"))
    return call(api, "PATCH", path, json.dumps(obj), content_type=APPLY, query=query)


def test_apply_creates_and_identical_reapply_is_a_no_op(api_client: client.ApiClient, namespace: str) -> None:
    config = configmap("ssa", {"a": "1"}, labels={"app": "ssa"})
    created = _apply(api_client, cm_path(namespace, "ssa"), config, "applier")
    assert created.status == 201, created.body
    assert created.body["data"] == {"a": "1"} and created.body["metadata"]["labels"] == {"app": "ssa"}
    [entry] = created.body["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"]) == ("applier", "Apply")
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    again = _apply(api_client, cm_path(namespace, "ssa"), config, "applier")
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"]


def test_apply_conflicts_and_force(api_client: client.ApiClient, namespace: str) -> None:
    path = cm_path(namespace, "owned")
    assert _apply(api_client, path, configmap("owned", {"shared": "alpha", "mine": "a"}), "alpha").status == 201
    status = failure(_apply(api_client, path, configmap("owned", {"shared": "beta"}), "beta"), 409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alpha": .data.shared'
    assert status["details"] == {
        "causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alpha"', "field": ".data.shared"}]
    }
    assert call(api_client, "GET", path).body["data"]["shared"] == "alpha"
    # applying the same value is shared ownership, not a conflict
    shared = _apply(api_client, path, configmap("owned", {"shared": "alpha"}), "gamma")
    assert shared.status == 200, shared.body
    # an Update manager's field conflicts too, and names the API version it used
    assert call(api_client, "PATCH", path, {"data": {"upd": "x"}}, content_type=MERGE, query=[("fieldManager", "updater")]).status == 200
    status = failure(_apply(api_client, path, configmap("owned", {"upd": "y"}), "beta"), 409, "Conflict")
    assert status["details"]["causes"][0]["field"] == ".data.upd"
    assert status["details"]["causes"][0]["message"].startswith('conflict with "updater" using v1')
    forced = _apply(api_client, path, configmap("owned", {"shared": "beta"}), "beta", force=True)
    assert forced.status == 200, forced.body
    assert forced.body["data"] == {"shared": "beta", "mine": "a", "upd": "x"}
    fields = {m["manager"]: m["fieldsV1"] for m in forced.body["metadata"]["managedFields"]}
    assert "f:shared" in fields["beta"]["f:data"]
    assert "f:shared" not in fields["alpha"]["f:data"] and "f:mine" in fields["alpha"]["f:data"]
    assert "gamma" not in fields  # it owned nothing else, so its entry is gone


def test_apply_removes_fields_dropped_from_the_config(api_client: client.ApiClient, namespace: str) -> None:
    path = cm_path(namespace, "shrink")
    _apply(api_client, path, configmap("shrink", {"a": "1", "b": "2"}, labels={"x": "1", "y": "2"}), "applier")
    assert (
        call(api_client, "PATCH", path, {"data": {"other": "kept"}}, content_type=MERGE, query=[("fieldManager", "someone")]).status == 200
    )
    reply = _apply(api_client, path, configmap("shrink", {"a": "1"}, labels={"x": "1"}), "applier")
    assert reply.status == 200, reply.body
    assert reply.body["data"] == {"a": "1", "other": "kept"}
    assert reply.body["metadata"]["labels"] == {"x": "1"}


def test_apply_requires_field_manager(api_client: client.ApiClient, namespace: str) -> None:
    status = failure(_apply(api_client, cm_path(namespace, "anon"), configmap("anon"), None), 422, "Invalid")
    assert status["message"] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    assert status["details"]["group"] == "meta.k8s.io" and status["details"]["kind"] == "PatchOptions"
    assert status["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}
    ]
    assert call(api_client, "GET", cm_path(namespace, "anon")).status == 404


# -- dry run -----------------------------------------------------------------------------------


def test_dry_run_changes_nothing(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    dry = [("dryRun", "All")]
    created = call(api_client, "POST", cm_path(namespace), configmap("dry"), query=dry)
    assert created.status == 201 and created.body["metadata"]["name"] == "dry" and created.body["metadata"]["uid"]
    assert call(api_client, "GET", cm_path(namespace, "dry")).status == 404

    real = call(api_client, "POST", cm_path(namespace), configmap("real")).body
    rv = real["metadata"]["resourceVersion"]
    updated = call(api_client, "PUT", cm_path(namespace, "real"), configmap("real", {"k": "dry-put"}), query=dry)
    assert updated.status == 200 and updated.body["data"] == {"k": "dry-put"}
    patched = call(api_client, "PATCH", cm_path(namespace, "real"), {"data": {"k": "dry-patch"}}, content_type=MERGE, query=dry)
    assert patched.status == 200 and patched.body["data"] == {"k": "dry-patch"}
    applied = _apply(api_client, cm_path(namespace, "real"), configmap("real", {"k": "dry-apply"}), "applier", force=True, dry_run=True)
    assert applied.status == 200 and applied.body["data"] == {"k": "dry-apply"}
    stored = call(api_client, "GET", cm_path(namespace, "real")).body
    assert stored["data"] == {"k": "v"} and stored["metadata"]["resourceVersion"] == rv

    deleted = call(api_client, "DELETE", cm_path(namespace, "real"), query=dry)
    assert deleted.status == 200, deleted.body
    assert core.read_namespaced_config_map("real", namespace).metadata.resource_version == rv
    dry_apply_create = _apply(api_client, cm_path(namespace, "ghost"), configmap("ghost"), "applier", dry_run=True)
    assert dry_apply_create.status == 201
    assert call(api_client, "GET", cm_path(namespace, "ghost")).status == 404


def test_dry_run_in_delete_options_body_deletes_nothing(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    # kubectl delete --dry-run=server and the Python client's body=V1DeleteOptions(dry_run=["All"]) send
    # dryRun in the DeleteOptions body, not in the query: it must count just the same
    call(api_client, "POST", cm_path(namespace), configmap("keep", labels={"tier": "x"}))
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]}
    assert call(api_client, "DELETE", cm_path(namespace, "keep"), body).status == 200
    assert call(api_client, "GET", cm_path(namespace, "keep")).status == 200
    core.delete_namespaced_config_map("keep", namespace, body=client.V1DeleteOptions(dry_run=["All"]))
    core.delete_collection_namespaced_config_map(namespace, body=client.V1DeleteOptions(dry_run=["All"]), label_selector="tier=x")
    assert call(api_client, "GET", cm_path(namespace, "keep")).status == 200
    ns = call(api_client, "DELETE", f"/api/v1/namespaces/{namespace}", body)
    assert ns.status == 200 and ns.body["status"]["phase"] == "Terminating"  # what it would be
    assert core.read_namespace(namespace).status.phase == "Active"
    assert call(api_client, "GET", cm_path(namespace, "keep")).status == 200


def test_unsupported_dry_run_value_is_invalid(api_client: client.ApiClient, namespace: str) -> None:
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("dr"), query=[("dryRun", "Server")]), 422, "Invalid")
    assert status["message"] == 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Server"]: supported values: "All"'
    assert status["details"]["group"] == "meta.k8s.io" and status["details"]["kind"] == "CreateOptions"
    assert status["details"]["causes"] == [
        {"reason": "FieldValueNotSupported", "message": 'Unsupported value: ["Server"]: supported values: "All"', "field": "dryRun"}
    ]
    assert call(api_client, "GET", cm_path(namespace, "dr")).status == 404
    assert call(api_client, "POST", cm_path(namespace), configmap("dr")).status == 201
    status = failure(call(api_client, "DELETE", cm_path(namespace, "dr"), query=[("dryRun", "yes")]), 422, "Invalid")
    assert status["details"]["kind"] == "DeleteOptions"
    assert call(api_client, "GET", cm_path(namespace, "dr")).status == 200


def test_invalid_write_options(api_client: client.ApiClient, namespace: str) -> None:
    status = failure(call(api_client, "POST", cm_path(namespace), configmap("fv"), query=[("fieldValidation", "Loose")]), 422, "Invalid")
    assert status["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    assert call(api_client, "POST", cm_path(namespace), configmap("fv"), query=[("fieldValidation", "")]).status == 201
    status = failure(
        call(api_client, "PATCH", cm_path(namespace, "fv"), {"data": {}}, content_type=MERGE, query=[("force", "true")]), 422, "Invalid"
    )
    assert status["message"] == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    status = failure(
        call(api_client, "PUT", cm_path(namespace, "fv"), configmap("fv"), query=[("fieldManager", "m" * 129)]), 422, "Invalid"
    )
    assert status["details"]["kind"] == "UpdateOptions"
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [("FieldValueTooLong", "fieldManager")]


# -- delete ------------------------------------------------------------------------------------


def test_delete_preconditions(api_client: client.ApiClient, namespace: str) -> None:
    created = call(api_client, "POST", cm_path(namespace), configmap("pre")).body
    uid, rv = created["metadata"]["uid"], created["metadata"]["resourceVersion"]
    wrong_uid = str(uuid.uuid4())
    # the registry checks delete preconditions itself and reports them under the kind
    status = failure(call(api_client, "DELETE", cm_path(namespace, "pre"), {"preconditions": {"uid": wrong_uid}}), 409, "Conflict")
    assert status["message"] == (
        f'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition ({wrong_uid}) does not match the UID in '
        f"record ({uid}). The object might have been deleted and then recreated"
    )
    assert status["details"] == {"name": "pre", "kind": "ConfigMap"}
    status = failure(call(api_client, "DELETE", cm_path(namespace, "pre"), {"preconditions": {"resourceVersion": "1"}}), 409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the '
        f"ResourceVersion in record ({rv}). The object might have been modified"
    )
    assert call(api_client, "GET", cm_path(namespace, "pre")).status == 200
    deleted = call(api_client, "DELETE", cm_path(namespace, "pre"), {"preconditions": {"uid": uid, "resourceVersion": rv}})
    assert deleted.status == 200, deleted.body
    assert deleted.body["kind"] == "Status" and deleted.body["status"] == "Success"
    assert deleted.body["details"] == {"name": "pre", "kind": "configmaps", "uid": uid}
    assert call(api_client, "GET", cm_path(namespace, "pre")).status == 404


def _owned(owner: dict[str, Any], name: str, *, block: bool = False) -> dict[str, Any]:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if block:
        ref["blockOwnerDeletion"] = True
    return configmap(name, ownerReferences=[ref])


def test_delete_propagation_policies(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    def exists(name: str) -> bool:
        return call(api_client, "GET", cm_path(namespace, name)).status == 200

    # Orphan: the owner goes, the dependent stays without the reference
    owner = call(api_client, "POST", cm_path(namespace), configmap("o-owner")).body
    call(api_client, "POST", cm_path(namespace), _owned(owner, "o-dep"))
    assert call(api_client, "DELETE", cm_path(namespace, "o-owner"), query=[("propagationPolicy", "Orphan")]).status == 200
    wait_for(lambda: not exists("o-owner"), message="orphaning owner removed")
    wait_for(lambda: not core.read_namespaced_config_map("o-dep", namespace).metadata.owner_references, message="owner reference dropped")

    # Background: the owner goes at once, the garbage collector then removes the dependent
    owner = call(api_client, "POST", cm_path(namespace), configmap("b-owner")).body
    call(api_client, "POST", cm_path(namespace), _owned(owner, "b-dep"))
    reply = call(api_client, "DELETE", cm_path(namespace, "b-owner"), {"propagationPolicy": "Background"})
    assert reply.status == 200 and not exists("b-owner")
    wait_for(lambda: not exists("b-dep"), message="dependent garbage-collected")

    # Foreground: the owner waits (deletionTimestamp + foregroundDeletion) for blocking dependents
    owner = call(api_client, "POST", cm_path(namespace), configmap("f-owner")).body
    dependent = _owned(owner, "f-dep", block=True)
    dependent["metadata"]["finalizers"] = ["example.com/hold"]
    call(api_client, "POST", cm_path(namespace), dependent)
    reply = call(api_client, "DELETE", cm_path(namespace, "f-owner"), {"propagationPolicy": "Foreground"})
    assert reply.status == 200, reply.body
    assert reply.body["kind"] == "ConfigMap" and reply.body["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in reply.body["metadata"]["finalizers"]
    wait_for(lambda: core.read_namespaced_config_map("f-dep", namespace).metadata.deletion_timestamp, message="dependent being deleted")
    assert exists("f-owner")
    _drop_finalizers(api_client, cm_path(namespace, "f-dep"))
    wait_for(lambda: not exists("f-dep") and not exists("f-owner"), message="foreground deletion completes")

    # DeleteOptions are validated before the object is looked up
    status = failure(call(api_client, "DELETE", cm_path(namespace, "gone"), query=[("propagationPolicy", "Sideways")]), 422, "Invalid")
    assert status["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    assert status["details"]["causes"][0]["field"] == "propagationPolicy"


def test_delete_collection_with_label_selector(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    for i in range(3):
        core.create_namespaced_config_map(namespace, configmap(f"match-{i}", labels={"batch": "one"}))
    core.create_namespaced_config_map(namespace, configmap("other", labels={"batch": "two"}))
    core.create_namespaced_config_map(namespace, configmap("unlabelled"))
    reply = call(api_client, "DELETE", cm_path(namespace), query=[("labelSelector", "batch=one")])
    assert reply.status == 200, reply.body
    assert reply.body["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in reply.body["items"]) == ["match-0", "match-1", "match-2"]
    assert sorted(cm.metadata.name for cm in core.list_namespaced_config_map(namespace).items) == ["other", "unlabelled"]


def test_finalizers_hold_deletion_until_removed(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("fin", finalizers=["example.com/a", "example.com/b"]))
    deleting = call(api_client, "DELETE", cm_path(namespace, "fin"))
    assert deleting.status == 200, deleting.body
    # Still there: the response is the object itself, marked for deletion
    assert deleting.body["kind"] == "ConfigMap"
    meta = deleting.body["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    assert meta["finalizers"] == ["example.com/a", "example.com/b"]
    stored = core.read_namespaced_config_map("fin", namespace)
    assert stored.metadata.deletion_timestamp is not None

    status = failure(
        call(
            api_client,
            "PATCH",
            cm_path(namespace, "fin"),
            {"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}},
            content_type=MERGE,
        ),
        422,
        "Invalid",
    )
    assert status["details"]["causes"][0]["field"] == "metadata.finalizers"
    assert "no new finalizers can be added if the object is being deleted" in status["message"]
    # deleting again changes nothing
    again = call(api_client, "DELETE", cm_path(namespace, "fin"))
    assert again.status == 200 and again.body["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]

    rv = meta["resourceVersion"]
    partial = call(api_client, "PATCH", cm_path(namespace, "fin"), {"metadata": {"finalizers": ["example.com/b"]}}, content_type=MERGE)
    assert partial.status == 200 and partial.body["metadata"]["finalizers"] == ["example.com/b"]
    _drop_finalizers(api_client, cm_path(namespace, "fin"))
    failure(call(api_client, "GET", cm_path(namespace, "fin")), 404, "NotFound")

    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            assert event["object"].metadata.uid == created.metadata.uid
            w.stop()
    assert seen == [("MODIFIED", "fin"), ("DELETED", "fin")]


# -- status subresource ------------------------------------------------------------------------


def test_deployment_status_subresource(api_client: client.ApiClient, apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("st"))
    wait_for(lambda: (apps.read_namespaced_deployment("st", namespace).status.ready_replicas or 0) == 1, message="deployment ready")
    current = call(api_client, "GET", deploy_path(namespace, "st")).body
    del current["metadata"]["resourceVersion"]  # the rollout controller writes status concurrently
    # main endpoint: status changes are ignored, spec changes apply
    current["status"] = {"replicas": 42, "observedGeneration": 42}
    current["spec"]["replicas"] = 2
    reply = call(api_client, "PUT", deploy_path(namespace, "st"), current)
    assert reply.status == 200, reply.body
    assert reply.body["spec"]["replicas"] == 2 and reply.body["metadata"]["generation"] == 2
    assert reply.body["status"].get("observedGeneration") != 42 and reply.body["status"].get("replicas") != 42
    assert reply.body["status"]["conditions"]

    # /status: only status is taken; spec and label changes are dropped, generation unchanged
    body = reply.body
    del body["metadata"]["resourceVersion"]
    body["spec"]["replicas"] = 5
    body["metadata"]["labels"] = {"app": "st", "sneaky": "label"}
    body["status"] = {**body["status"], "observedGeneration": 7}
    status_reply = call(api_client, "PUT", deploy_path(namespace, "st") + "/status", body)
    assert status_reply.status == 200, status_reply.body
    assert status_reply.body["status"]["observedGeneration"] == 7
    assert status_reply.body["spec"]["replicas"] == 2
    assert status_reply.body["metadata"]["labels"] == {"app": "st"}
    assert status_reply.body["metadata"]["generation"] == 2
    # and a merge patch of /status likewise ignores spec
    patched = call(
        api_client,
        "PATCH",
        deploy_path(namespace, "st") + "/status",
        {"spec": {"replicas": 9}, "status": {"observedGeneration": 8}},
        content_type=MERGE,
    )
    assert patched.status == 200 and patched.body["spec"]["replicas"] == 2 and patched.body["metadata"]["generation"] == 2


def test_custom_resource_status_subresource(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str, tmp_path: Path
) -> None:
    body = darkroom("crst")
    body["status"] = {"readyReplicas": 5}
    created = as_dict(custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, body))
    assert "status" not in created  # status is ignored on create when it is a subresource
    assert created["metadata"]["generation"] == 1

    status = call(
        api_client,
        "PATCH",
        dr_path(namespace, "crst") + "/status",
        {"status": {"readyReplicas": 1, "domains": ["img.example.com"]}},
        content_type=MERGE,
    )
    assert status.status == 200, status.body
    assert status.body["status"] == {"readyReplicas": 1, "domains": ["img.example.com"]}
    assert status.body["metadata"]["generation"] == 1

    labelled = call(api_client, "PATCH", dr_path(namespace, "crst"), {"metadata": {"labels": {"l": "1"}}}, content_type=MERGE)
    assert labelled.body["metadata"]["generation"] == 1

    # main endpoint ignores status; spec change bumps generation
    current = labelled.body
    current["status"] = {"readyReplicas": 99}
    current["spec"]["replicas"] = 3
    replaced = call(api_client, "PUT", dr_path(namespace, "crst"), current)
    assert replaced.status == 200, replaced.body
    assert replaced.body["status"] == {"readyReplicas": 1, "domains": ["img.example.com"]}
    assert replaced.body["metadata"]["generation"] == 2

    # /status ignores spec and metadata changes
    via_status = replaced.body
    via_status["spec"]["replicas"] = 7
    via_status["metadata"]["labels"] = {"l": "2"}
    via_status["status"] = {"readyReplicas": 3, "observedGeneration": 2}
    reply = call(api_client, "PUT", dr_path(namespace, "crst") + "/status", via_status)
    assert reply.status == 200, reply.body
    assert reply.body["status"] == {"readyReplicas": 3, "observedGeneration": 2}
    assert reply.body["spec"]["replicas"] == 3
    assert reply.body["metadata"]["labels"] == {"l": "1"}
    assert reply.body["metadata"]["generation"] == 2
    # status is validated against the schema too
    bad = failure(
        call(api_client, "PATCH", dr_path(namespace, "crst") + "/status", {"status": {"readyReplicas": -1}}, content_type=MERGE),
        422,
        "Invalid",
    )
    assert bad["details"]["causes"][0]["field"] == "status.readyReplicas"
    # DynamicClient sees the same object
    dynamic = DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json")).resources.get(
        api_version=f"{DR_GROUP}/{DR_VERSION}", kind="Darkroom"
    )
    fetched = dynamic.get(namespace=namespace, name="crst").to_dict()
    assert fetched["status"] == reply.body["status"] and fetched["metadata"]["resourceVersion"] == reply.body["metadata"]["resourceVersion"]


# -- Secrets and Services ----------------------------------------------------------------------


def test_secret_string_data_becomes_base64_data(api_client: client.ApiClient, namespace: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "sec"},
        "data": {"kept": "a2VwdA=="},
        "stringData": {"user": "admin", "kept": "overridden"},
    }
    reply = call(api_client, "POST", f"/api/v1/namespaces/{namespace}/secrets", body)
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"kept": "b3ZlcnJpZGRlbg==", "user": "YWRtaW4="}
    assert reply.body["type"] == "Opaque"
    assert "stringData" not in reply.body
    stored = call(api_client, "GET", f"/api/v1/namespaces/{namespace}/secrets/sec").body
    assert "stringData" not in stored and stored["data"] == reply.body["data"]
    patched = call(api_client, "PATCH", f"/api/v1/namespaces/{namespace}/secrets/sec", {"stringData": {"extra": "x"}}, content_type=MERGE)
    assert patched.status == 200 and patched.body["data"]["extra"] == "eA==" and "stringData" not in patched.body


def test_service_cluster_ip_is_allocated_and_stable(api_client: client.ApiClient, core: client.CoreV1Api, namespace: str) -> None:
    svc = {"metadata": {"name": "svc"}, "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}}
    created = core.create_namespaced_service(namespace, svc)
    ip = created.spec.cluster_ip
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", ip) and ip != "None"
    assert created.spec.cluster_ips == [ip]
    assert created.spec.type == "ClusterIP"
    patched = core.patch_namespaced_service("svc", namespace, {"metadata": {"labels": {"x": "y"}}, "spec": {"selector": {"app": "y"}}})
    assert patched.spec.cluster_ip == ip
    current = call(api_client, "GET", f"/api/v1/namespaces/{namespace}/services/svc").body
    del current["spec"]["clusterIP"]
    del current["spec"]["clusterIPs"]
    replaced = call(api_client, "PUT", f"/api/v1/namespaces/{namespace}/services/svc", current)
    assert replaced.status == 200, replaced.body
    assert replaced.body["spec"]["clusterIP"] == ip
    current = replaced.body
    current["spec"]["clusterIP"] = "10.96.0.1" if ip != "10.96.0.1" else "10.96.0.2"
    current["spec"]["clusterIPs"] = [current["spec"]["clusterIP"]]
    status = failure(call(api_client, "PUT", f"/api/v1/namespaces/{namespace}/services/svc", current), 422, "Invalid")
    assert any(c["field"].startswith("spec.clusterIP") for c in status["details"]["causes"])
    assert core.read_namespaced_service("svc", namespace).spec.cluster_ip == ip


def test_apply_accepts_yaml_and_json_bodies_and_rejects_garbage(api_client: client.ApiClient, namespace: str) -> None:
    yaml_body = f"""# applied as YAML, as `curl --data-binary @cm.yaml` would
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-yaml
  namespace: {namespace}
data:
  answer: "42"
  list: 'x, y'
"""
    reply = call(api_client, "PATCH", cm_path(namespace, "from-yaml"), yaml_body, content_type=APPLY, query=[("fieldManager", "y")])
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"answer": "42", "list": "x, y"}
    as_json = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-json", "namespace": namespace}})
    assert (
        call(api_client, "PATCH", cm_path(namespace, "from-json"), as_json, content_type=APPLY, query=[("fieldManager", "y")]).status == 201
    )
    bad = call(api_client, "PATCH", cm_path(namespace, "bad"), "kind: [unclosed", content_type=APPLY, query=[("fieldManager", "y")])
    assert bad.status == 400
    assert "error decoding YAML" in bad.body["message"]
