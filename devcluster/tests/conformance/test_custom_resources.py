"""Custom resources on devcluster, checked against kube-apiserver / apiextensions-apiserver behaviour.

Covers:
- structural-schema validation → 422 Invalid with exact field paths and messages: missing required
  fields (spec.source, spec.subDomains), enum (Unsupported value), minimum (replicas < 0), maximum
  (Task priority 11), pattern (subDomains item not a DNS label), ``x-kubernetes-list-type: set``
  (Duplicate value), ``format: date-time``, maxLength; several causes reported at once; the same
  validation on update and patch; nothing is stored for a rejected object.
- defaulting: Darkroom replicas 1 and cacheTime 31536000, Task taskState Pending (on create, and
  re-applied when a defaulted field is removed by a patch).
- pruning of unknown fields: fieldValidation=Warn (the default) drops them with a
  ``Warning: 299 - "unknown field \"spec.unknown\""`` header; Strict → 400 BadRequest with the
  strict decoding error; Ignore drops them silently.
- CR names must be DNS-1123 subdomains; a CRD whose name is not ``<plural>.<group>`` is 422.
- a throwaway CRD: discovery (/apis, /apis/<group>, /apis/<group>/<version>) lists it with kind,
  namespaced, verbs, shortNames, singularName and the status subresource; DynamicClient can create,
  get, list, patch and delete its objects; deleting the CRD removes its objects, then the CRD, its
  discovery entries go away, and writes to its path answer 404.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from tests.support import as_dict, wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube

DR_GROUP, DR_VERSION, DR_PLURAL = "deployments.example.com", "v1", "darkrooms"
TASK_GROUP, TASK_VERSION, TASK_PLURAL = "example.example.com", "v1", "tasks"
DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def call(
    api: client.ApiClient,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
    query: list[tuple[str, str]] | None = None,
) -> tuple[int, Any, Any]:
    """A raw request through the official client's REST layer: (status, headers, decoded JSON body)."""
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = content_type
    method, url, headers, _, _ = api.param_serialize(method, path, query_params=query or [], header_params=headers)
    response = api.call_api(method, url, header_params=headers, body=body)
    response.read()
    try:
        decoded = json.loads(response.data) if response.data else None
    except ValueError:
        decoded = response.data
    return response.status, response.headers, decoded


def invalid(
    api: client.ApiClient, path: str, body: dict[str, Any], *, method: str = "POST", content_type: str = "application/json"
) -> dict[str, Any]:
    code, _, reply = call(api, method, path, body, content_type=content_type)
    assert code == 422, reply
    assert reply["kind"] == "Status" and reply["status"] == "Failure" and reply["reason"] == "Invalid" and reply["code"] == 422
    status: dict[str, Any] = reply
    return status


def dr_path(namespace: str, name: str = "") -> str:
    return f"/apis/{DR_GROUP}/{DR_VERSION}/namespaces/{namespace}/{DR_PLURAL}" + (f"/{name}" if name else "")


def task_path(namespace: str, name: str = "") -> str:
    return f"/apis/{TASK_GROUP}/{TASK_VERSION}/namespaces/{namespace}/{TASK_PLURAL}" + (f"/{name}" if name else "")


def darkroom(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": ["img"]}
    body.update(spec)
    return {
        "apiVersion": f"{DR_GROUP}/{DR_VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": name},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def task(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"priority": 5, "deadline": "2027-03-31T17:00:00Z"}
    body.update(spec)
    return {"apiVersion": f"{TASK_GROUP}/{TASK_VERSION}", "kind": "Task", "metadata": {"name": name}, "spec": body}


def causes(reply: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in reply["details"]["causes"]]


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


# -- schema validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field", "reason", "message"),
    [
        ({"source": None}, "spec.source", "FieldValueRequired", "Required value"),
        ({"subDomains": None}, "spec.subDomains", "FieldValueRequired", "Required value"),
        (
            {"source": {"type": "FTP"}},
            "spec.source.type",
            "FieldValueNotSupported",
            'Unsupported value: "FTP": supported values: "WebFolder", "S3"',
        ),
        (
            {"replicas": -1},
            "spec.replicas",
            "FieldValueInvalid",
            "Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        ),
        (
            {"subDomains": ["Bad_Sub"]},
            "spec.subDomains[0]",
            "FieldValueInvalid",
            f"Invalid value: \"Bad_Sub\": spec.subDomains[0] in body should match '{DNS_LABEL}'",
        ),
        ({"subDomains": ["a", "b", "a"]}, "spec.subDomains[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
    ],
    ids=["no-source", "no-subdomains", "enum", "minimum", "pattern", "set-duplicate"],
)
def test_darkroom_schema_violations(
    api_client: client.ApiClient, crds_installed: None, namespace: str, spec: dict[str, Any], field: str, reason: str, message: str
) -> None:
    reply = invalid(api_client, dr_path(namespace), darkroom("bad", **spec))
    assert causes(reply) == [(field, reason, message)]
    assert reply["message"] == f'Darkroom.deployments.example.com "bad" is invalid: {field}: {message}'
    assert reply["details"]["name"] == "bad" and reply["details"]["group"] == DR_GROUP and reply["details"]["kind"] == "Darkroom"
    assert call(api_client, "GET", dr_path(namespace, "bad"))[0] == 404


@pytest.mark.parametrize(
    ("spec", "field", "reason", "message"),
    [
        (
            {"priority": 11},
            "spec.priority",
            "FieldValueInvalid",
            "Invalid value: 11: spec.priority in body should be less than or equal to 10",
        ),
        (
            {"deadline": "next tuesday"},
            "spec.deadline",
            "FieldValueTypeInvalid",
            'Invalid value: "next tuesday": spec.deadline in body must be of type date-time: "next tuesday"',
        ),
        (
            {"taskState": "Started"},
            "spec.taskState",
            "FieldValueNotSupported",
            'Unsupported value: "Started": supported values: "Pending", "Finished"',
        ),
        (
            {"priority": "high"},
            "spec.priority",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.priority in body must be of type integer: "string"',
        ),
    ],
    ids=["maximum", "date-time", "enum", "type"],
)
def test_task_schema_violations(
    api_client: client.ApiClient, crds_installed: None, namespace: str, spec: dict[str, Any], field: str, reason: str, message: str
) -> None:
    reply = invalid(api_client, task_path(namespace), task("bad", **spec))
    assert causes(reply) == [(field, reason, message)]
    assert reply["message"] == f'Task.example.example.com "bad" is invalid: {field}: {message}'


def test_too_long_string_is_rejected(api_client: client.ApiClient, crds_installed: None, namespace: str) -> None:
    reply = invalid(api_client, task_path(namespace), task("long", details="x" * 4097))
    [(field, reason, message)] = causes(reply)
    assert (field, reason) == ("spec.details", "FieldValueTooLong")
    assert message.startswith("Too long: ") and "4096" in message
    assert call(api_client, "POST", task_path(namespace), task("long", details="x" * 4096))[0] == 201


def test_several_violations_are_reported_together(api_client: client.ApiClient, crds_installed: None, namespace: str) -> None:
    body = darkroom("multi", replicas=-3, source={"type": "FTP"}, subDomains=["ok", "NOT_OK", "ok"])
    reply = invalid(api_client, dr_path(namespace), body)
    found = {(field, reason) for field, reason, _ in causes(reply)}
    assert found == {
        ("spec.replicas", "FieldValueInvalid"),
        ("spec.source.type", "FieldValueNotSupported"),
        ("spec.subDomains[1]", "FieldValueInvalid"),
        ("spec.subDomains[2]", "FieldValueDuplicate"),
    }
    assert reply["message"].startswith('Darkroom.deployments.example.com "multi" is invalid: [')
    for field, _, message in causes(reply):
        assert f"{field}: {message}" in reply["message"]


def test_validation_applies_to_updates_and_patches(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    created = as_dict(custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("upd")))
    reply = invalid(
        api_client, dr_path(namespace, "upd"), {"spec": {"replicas": 101}}, method="PATCH", content_type="application/merge-patch+json"
    )
    assert causes(reply) == [
        ("spec.replicas", "FieldValueInvalid", "Invalid value: 101: spec.replicas in body should be less than or equal to 100")
    ]
    body = {**created, "spec": {**created["spec"], "subDomains": []}}
    reply = invalid(api_client, dr_path(namespace, "upd"), body, method="PUT")
    assert [(f, r) for f, r, _ in causes(reply)] == [("spec.subDomains", "FieldValueInvalid")]
    assert "should have at least 1 items" in reply["message"]
    stored = as_dict(custom.get_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, "upd"))
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


# -- defaulting and pruning --------------------------------------------------------------------


def test_defaults_are_applied(api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str) -> None:
    created = as_dict(custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("defaults")))
    assert created["spec"]["replicas"] == 1 and created["spec"]["cacheTime"] == 31536000
    explicit = as_dict(
        custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("explicit", replicas=0, cacheTime=60))
    )
    assert explicit["spec"]["replicas"] == 0 and explicit["spec"]["cacheTime"] == 60
    made = as_dict(custom.create_namespaced_custom_object(TASK_GROUP, TASK_VERSION, namespace, TASK_PLURAL, task("t")))
    assert made["spec"]["taskState"] == "Pending"
    # removing a defaulted field puts the default back
    ops = [{"op": "remove", "path": "/spec/cacheTime"}]
    status, _, patched = call(api_client, "PATCH", dr_path(namespace, "explicit"), ops, content_type="application/json-patch+json")
    assert status == 200 and patched["spec"]["cacheTime"] == 31536000
    stored = as_dict(custom.get_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, "defaults"))
    assert stored["spec"] == created["spec"]


def _warnings(headers: Any) -> list[str]:
    return list(headers.getlist("Warning")) if hasattr(headers, "getlist") else [v for k, v in headers.items() if k.lower() == "warning"]


def test_unknown_fields_are_pruned_per_field_validation(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    def with_unknown(name: str) -> dict[str, Any]:
        body = darkroom(name)
        body["spec"]["unknown"] = "dropped"
        return body

    status, headers, created = call(api_client, "POST", dr_path(namespace), with_unknown("warn"))
    assert status == 201, created
    assert "unknown" not in created["spec"]
    assert _warnings(headers) == ['299 - "unknown field \\"spec.unknown\\""']
    assert "unknown" not in as_dict(custom.get_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, "warn"))["spec"]

    status, headers, created = call(api_client, "POST", dr_path(namespace), with_unknown("warn2"), query=[("fieldValidation", "Warn")])
    assert status == 201 and _warnings(headers) == ['299 - "unknown field \\"spec.unknown\\""']

    status, _, reply = call(api_client, "POST", dr_path(namespace), with_unknown("strict"), query=[("fieldValidation", "Strict")])
    assert status == 400, reply
    assert reply["reason"] == "BadRequest" and reply["code"] == 400
    assert (
        reply["message"] == 'Darkroom in version "v1" cannot be handled as a Darkroom: strict decoding error: unknown field "spec.unknown"'
    )
    assert call(api_client, "GET", dr_path(namespace, "strict"))[0] == 404

    status, headers, created = call(api_client, "POST", dr_path(namespace), with_unknown("ignore"), query=[("fieldValidation", "Ignore")])
    assert status == 201 and "unknown" not in created["spec"]
    assert _warnings(headers) == []

    # a known object without unknown fields raises no warning
    status, headers, _ = call(api_client, "POST", dr_path(namespace), darkroom("clean"), query=[("fieldValidation", "Strict")])
    assert status == 201 and _warnings(headers) == []


# -- names -------------------------------------------------------------------------------------


def test_custom_resource_names_must_be_dns_subdomains(
    api_client: client.ApiClient, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    reply = invalid(api_client, dr_path(namespace), darkroom("Bad_Name"))
    [(field, reason, message)] = causes(reply)
    assert (field, reason) == ("metadata.name", "FieldValueInvalid")
    assert message.startswith(
        'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters'
    )
    # dots are fine in a subdomain (not in a label)
    created = as_dict(custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, darkroom("cdn.example")))
    assert created["metadata"]["name"] == "cdn.example"
    reply = invalid(api_client, dr_path(namespace), darkroom("x" * 254))
    assert [f for f, _, _ in causes(reply)] == ["metadata.name"]


def test_crd_name_must_be_plural_dot_group(api_client: client.ApiClient) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = _crd_body(group)
    crd["metadata"]["name"] = f"gadgets.{group}"
    reply = invalid(api_client, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert ("metadata.name", "FieldValueInvalid", f'Invalid value: "gadgets.{group}": must be spec.names.plural+"."+spec.group') in causes(
        reply
    )
    assert reply["details"]["kind"] == "CustomResourceDefinition" and reply["details"]["group"] == "apiextensions.k8s.io"
    assert call(api_client, "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}")[0] == 404


# -- a throwaway CRD: discovery, dynamic client, deletion --------------------------------------


def _crd_body(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer", "default": 3}, "color": {"type": "string"}},
                                },
                                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                            },
                        }
                    },
                }
            ],
        },
    }


def test_throwaway_crd_discovery_dynamic_client_and_deletion(api_client: client.ApiClient, namespace: str, tmp_path: Path) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd_name = f"widgets.{group}"
    ext = client.ApiextensionsV1Api(api_client)
    created = ext.create_custom_resource_definition(_crd_body(group))
    assert created.metadata.name == crd_name

    def established() -> bool:
        conditions = ext.read_custom_resource_definition(crd_name).status.conditions or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    wait_for(established, message="CRD Established")

    status, _, resources = call(api_client, "GET", f"/apis/{group}/v1")
    assert status == 200, resources
    assert resources["kind"] == "APIResourceList" and resources["groupVersion"] == f"{group}/v1"
    by_name = {r["name"]: r for r in resources["resources"]}
    assert set(by_name) == {"widgets", "widgets/status"}
    widgets = by_name["widgets"]
    assert widgets["kind"] == "Widget" and widgets["namespaced"] is True and widgets["singularName"] == "widget"
    assert widgets["shortNames"] == ["wd"]
    assert sorted(widgets["verbs"]) == ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    assert by_name["widgets/status"]["kind"] == "Widget" and sorted(by_name["widgets/status"]["verbs"]) == ["get", "patch", "update"]
    status, _, group_doc = call(api_client, "GET", f"/apis/{group}")
    assert status == 200 and group_doc["preferredVersion"] == {"groupVersion": f"{group}/v1", "version": "v1"}
    status, _, groups = call(api_client, "GET", "/apis")
    assert group in {g["name"] for g in groups["groups"]}

    dynamic = DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))
    widget_api = dynamic.resources.get(api_version=f"{group}/v1", kind="Widget")
    assert widget_api.namespaced and widget_api.name == "widgets"
    made = widget_api.create(
        body={"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"color": "red"}}, namespace=namespace
    ).to_dict()
    assert made["spec"] == {"color": "red", "size": 3}
    assert made["metadata"]["generation"] == 1
    assert [w["metadata"]["name"] for w in widget_api.get(namespace=namespace).to_dict()["items"]] == ["w1"]
    patched = widget_api.patch(
        name="w1", namespace=namespace, body={"spec": {"size": 5}}, content_type="application/merge-patch+json"
    ).to_dict()
    assert patched["spec"] == {"color": "red", "size": 5} and patched["metadata"]["generation"] == 2
    status_api = widget_api.subresources["status"]
    with_status = status_api.patch(
        name="w1", namespace=namespace, body={"status": {"ready": True}}, content_type="application/merge-patch+json"
    ).to_dict()
    assert with_status["status"] == {"ready": True} and with_status["metadata"]["generation"] == 2
    widget_api.create(body={"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w2"}}, namespace=namespace)
    widget_api.delete(name="w2", namespace=namespace)
    assert call(api_client, "GET", f"/apis/{group}/v1/namespaces/{namespace}/widgets/w2")[0] == 404

    # deleting the CRD removes its objects, then the CRD itself, then its API
    deleting = call(api_client, "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}")
    assert deleting[0] == 200, deleting[2]
    assert deleting[2]["metadata"]["deletionTimestamp"]

    def crd_gone() -> bool:
        return call(api_client, "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}")[0] == 404

    wait_for(crd_gone, message="CRD deleted")
    assert call(api_client, "GET", f"/apis/{group}/v1")[0] == 404
    assert call(api_client, "GET", f"/apis/{group}")[0] == 404
    status, _, groups = call(api_client, "GET", "/apis")
    assert group not in {g["name"] for g in groups["groups"]}
    assert call(api_client, "GET", f"/apis/{group}/v1/namespaces/{namespace}/widgets/w1")[0] == 404
    status, _, reply = call(
        api_client,
        "POST",
        f"/apis/{group}/v1/namespaces/{namespace}/widgets",
        {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w3"}},
    )
    assert status == 404, reply

    # re-creating the CRD does not bring the old objects back
    ext.create_custom_resource_definition(_crd_body(group))
    wait_for(established, message="CRD Established again")
    status, _, listed = call(api_client, "GET", f"/apis/{group}/v1/namespaces/{namespace}/widgets")
    assert status == 200 and listed["items"] == []
    call(api_client, "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}")
    wait_for(crd_gone, message="CRD deleted again")
