"""Built-in kinds decode against their real schemas: fieldValidation, type errors, normalised values, explain.

Every test runs on devcluster and on the real control plane (``--cluster=both``) with the same
assertions, so the expected answers below are kube-apiserver's own:

- create/update (POST/PUT) of ConfigMaps, Deployments, Secrets: unknown fields per
  ``fieldValidation`` - Strict → 400 ``<Kind> in version "v1" cannot be handled as a <Kind>: strict
  decoding error: unknown field "..."`` listing every one (metadata too, nested list items by
  index); Warn (also the default) → stored without them plus one ``Warning: 299`` header each;
  Ignore → dropped silently. Duplicate fields in the JSON body the same way (``duplicate field``),
  in document order with unknown fields, repeated objects merged.
- wrong JSON types → 400 in every mode, Go's text: ``json: cannot unmarshal number into Go struct
  field ConfigMap.data of type string``, named Go types (``v1.Protocol``), time and quantity
  errors; a type error wins over unknown fields.
- patches: JSON merge and JSON patch decode the patched object (Strict → 422 Invalid on field
  ``patch`` showing the patched JSON; Warn → warnings), strategic merge patches show the patch as
  Go's ``%v`` and the unstructured converter's errors; duplicate fields of a patch body count too;
  custom resources get the same 422 for a strict merge patch.
- server-side apply: an undeclared field or a wrongly typed value is a 500 ``failed to create typed
  patch object`` whatever fieldValidation says.
- normalised values: line-wrapped base64 in Secret data is accepted and stored canonical; Event
  timestamps in UTC; quantities canonical (``0.5`` → ``500m``, ``1024Mi`` → ``1Gi``).
- kubectl: ``explain deployment.spec.replicas`` / ``configmap.data`` / ``pod.spec.containers.ports``
  show the fields' types and descriptions; ``create -f`` with a misspelt field fails (kubectl sends
  Strict), ``--validate=false`` creates it without the field.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client

from tests.support import Kubectl

JSON = "application/json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
CM = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@dataclass
class Reply:
    status: int
    warnings: list[str]
    body: Any


def call(
    api: client.ApiClient, method: str, path: str, body: Any = None, *, content_type: str = JSON, query: list[tuple[str, str]] | None = None
) -> Reply:
    """One raw request (the body sent as exact bytes); never raises."""
    headers = {"Accept": JSON, "Content-Type": content_type}
    method, url, headers, _, _ = api.param_serialize(
        method, path, query_params=query or [], header_params=headers, auth_settings=["BearerToken"]
    )
    raw = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    response = api.rest_client.pool_manager.request(method, url, body=raw, headers=headers, preload_content=True)
    return Reply(response.status, list(response.headers.getlist("Warning")), json.loads(response.data) if response.data else None)


def warning(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def strict(mode: str) -> list[tuple[str, str]]:
    return [("fieldValidation", mode)]


def bad_request(reply: Reply, message: str) -> None:
    assert reply.status == 400, (reply.status, reply.body)
    assert reply.body["reason"] == "BadRequest" and reply.body["code"] == 400
    assert reply.body["message"] == message


def invalid_patch(reply: Reply) -> tuple[Any, str]:
    """A 422 on field ``patch``: returns (the value shown, the error after it)."""
    assert reply.status == 422, (reply.status, reply.body)
    body = reply.body
    assert body["reason"] == "Invalid"
    prefix = ' "" is invalid: patch: Invalid value: '
    assert body["message"].startswith(prefix)
    (cause,) = body["details"]["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    assert body["message"] == prefix + cause["message"].removeprefix("Invalid value: ")
    shown, end = json.JSONDecoder().raw_decode(cause["message"].removeprefix("Invalid value: "))  # a quoted string
    rest = cause["message"].removeprefix("Invalid value: ")[end:]
    assert rest.startswith(": ")
    return json.loads(shown), rest[2:]


def cm_path(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


def deploy_path(namespace: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/deployments" + (f"/{name}" if name else "")


def deployment(name: str, spec: dict[str, Any] | None = None, container: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27", **(container or {})}]},
            },
            **(spec or {}),
        },
    }


# -- create / update ---------------------------------------------------------------------------


def test_unknown_fields_per_field_validation(api_client: client.ApiClient, namespace: str) -> None:
    def body(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "foo": 1}, "dataa": {"x": "y"}, "data": {"n": "1"}}

    reply = call(api_client, "POST", cm_path(namespace), body("strict"), query=strict("Strict"))
    bad_request(
        reply,
        CM + 'strict decoding error: unknown field "metadata.foo", unknown field "dataa"',
    )
    assert call(api_client, "GET", cm_path(namespace, "strict")).status == 404

    for name, query in (("warn", strict("Warn")), ("default", [])):
        reply = call(api_client, "POST", cm_path(namespace), body(name), query=query)
        assert reply.status == 201, reply.body
        assert reply.warnings == [warning('unknown field "metadata.foo"'), warning('unknown field "dataa"')]
        stored = call(api_client, "GET", cm_path(namespace, name)).body
        assert "dataa" not in stored and "foo" not in stored["metadata"] and stored["data"] == {"n": "1"}

    reply = call(api_client, "POST", cm_path(namespace), body("ignore"), query=strict("Ignore"))
    assert reply.status == 201 and reply.warnings == [] and "dataa" not in reply.body

    replaced = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warn"}, "data": {"a": "b"}, "bogus": True}
    reply = call(api_client, "PUT", cm_path(namespace, "warn"), replaced, query=strict("Strict"))
    bad_request(reply, CM + 'strict decoding error: unknown field "bogus"')
    reply = call(api_client, "PUT", cm_path(namespace, "warn"), replaced)
    assert reply.status == 200 and reply.warnings == [warning('unknown field "bogus"')]
    assert reply.body["data"] == {"a": "b"} and "bogus" not in reply.body


def test_unknown_fields_in_nested_lists(api_client: client.ApiClient, namespace: str) -> None:
    body = deployment("nested", spec={"replicass": 2}, container={"ports": [{"containerPort": 80, "x": 1}], "y": 2})
    reply = call(api_client, "POST", deploy_path(namespace), body, query=strict("Strict"))
    bad_request(
        reply,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].ports[0].x", unknown field "spec.template.spec.containers[0].y", '
        'unknown field "spec.replicass"',
    )
    reply = call(api_client, "POST", deploy_path(namespace), body)
    assert reply.status == 201, reply.body
    assert len(reply.warnings) == 3
    container = reply.body["spec"]["template"]["spec"]["containers"][0]
    assert "y" not in container and container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert reply.body["spec"]["replicas"] == 0


def test_duplicate_fields(api_client: client.ApiClient, namespace: str) -> None:
    raw = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","bogus":1,"name":"dup",'
        b'"labels":{"a":"1","a":"2"}},"data":{"k":"v"},"data":{"k2":"v"}}'
    )
    reply = call(api_client, "POST", cm_path(namespace), raw, query=strict("Strict"))
    bad_request(
        reply,
        CM + 'strict decoding error: unknown field "metadata.bogus", '
        'duplicate field "metadata.name", duplicate field "metadata.labels.a", duplicate field "data"',
    )
    reply = call(api_client, "POST", cm_path(namespace), raw)
    assert reply.status == 201, reply.body
    assert reply.warnings == [
        warning('unknown field "metadata.bogus"'),
        warning('duplicate field "metadata.name"'),
        warning('duplicate field "metadata.labels.a"'),
        warning('duplicate field "data"'),
    ]
    assert reply.body["data"] == {"k": "v", "k2": "v"}
    assert reply.body["metadata"]["labels"] == {"a": "2"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"metadata": {"name": "t1"}, "zzz": 1, "data": {"n": 1}},
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            {"metadata": {"name": "t2", "labels": {"a": 1}}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            {"metadata": {"name": "t3", "creationTimestamp": "yesterday"}},
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
        (
            {"metadata": {"name": "t4"}, "binaryData": {"b": "aGVsbG8"}},
            "illegal base64 data at input byte 4",
        ),
    ],
)
def test_configmap_type_errors(api_client: client.ApiClient, namespace: str, body: dict[str, Any], message: str) -> None:
    for mode in ("Strict", "Warn", "Ignore"):
        bad_request(call(api_client, "POST", cm_path(namespace), body, query=strict(mode)), CM + message)


def test_deployment_type_errors(api_client: client.ApiClient, namespace: str) -> None:
    prefix = 'Deployment in version "v1" cannot be handled as a Deployment: '
    cases = [
        (
            deployment("d1", spec={"replicas": "x"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment("d2", container={"ports": [{"containerPort": 80, "protocol": 5}]}),
            "json: cannot unmarshal number into Go struct field ContainerPort.spec.template.spec.containers.ports.protocol "
            "of type v1.Protocol",
        ),
        (
            deployment("d3", container={"ports": [{"containerPort": 80.0}]}),
            "json: cannot unmarshal number 80.0 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort "
            "of type int32",
        ),
        (
            deployment("d4", spec={"strategy": {"rollingUpdate": {"maxSurge": True}}}),
            "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
        ),
        (deployment("d5", container={"resources": {"limits": {"cpu": "abc"}}}), QUANTITY_ERROR),
    ]
    for body, message in cases:
        bad_request(call(api_client, "POST", deploy_path(namespace), body, query=strict("Ignore")), prefix + message)


def test_values_are_normalised(api_client: client.ApiClient, namespace: str) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrapped"}, "data": {"a": "aGVs\nbG8=", "b": "aGVsbG8=\n"}}
    reply = call(api_client, "POST", f"/api/v1/namespaces/{namespace}/secrets", secret)
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"a": "aGVsbG8=", "b": "aGVsbG8="}
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "ev"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": namespace},
        "reason": "Test",
        "lastTimestamp": "2024-01-01T10:00:00.5-07:30",
        "firstTimestamp": "2024-01-01T10:00:00+02:00",
    }
    reply = call(api_client, "POST", f"/api/v1/namespaces/{namespace}/events", event)
    assert reply.status == 201, reply.body
    assert (reply.body["firstTimestamp"], reply.body["lastTimestamp"]) == ("2024-01-01T08:00:00Z", "2024-01-01T17:30:00Z")
    body = deployment("quantities", container={"resources": {"limits": {"cpu": "0.5", "memory": "1024Mi"}, "requests": {"cpu": 0.25}}})
    reply = call(api_client, "POST", deploy_path(namespace), body)
    assert reply.status == 201, reply.body
    resources = reply.body["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "250m"}}


# -- patches -----------------------------------------------------------------------------------


def test_merge_and_json_patches_decode_the_patched_object(api_client: client.ApiClient, namespace: str) -> None:
    assert call(api_client, "POST", cm_path(namespace), {"metadata": {"name": "p"}, "data": {"x": "y"}}).status == 201
    path = cm_path(namespace, "p")
    reply = call(api_client, "PATCH", path, {"dataa": {"a": "b"}, "metadata": {"qq": 1}}, content_type=MERGE, query=strict("Strict"))
    shown, error = invalid_patch(reply)
    assert error == 'strict decoding error: unknown field "dataa", unknown field "metadata.qq"'
    assert shown["dataa"] == {"a": "b"} and shown["metadata"]["qq"] == 1 and shown["metadata"]["name"] == "p"
    reply = call(api_client, "PATCH", path, {"dataa": {"a": "b"}, "metadata": {"qq": 1}}, content_type=MERGE)
    assert reply.status == 200 and reply.warnings == [warning('unknown field "dataa"'), warning('unknown field "metadata.qq"')]
    assert "dataa" not in reply.body
    shown, error = invalid_patch(call(api_client, "PATCH", path, {"data": {"a": 1}}, content_type=MERGE, query=strict("Ignore")))
    assert error == "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    assert shown["data"] == {"a": 1, "x": "y"}
    ops = [{"op": "add", "path": "/dataa", "value": {}}]
    shown, error = invalid_patch(call(api_client, "PATCH", path, ops, content_type=JSON_PATCH, query=strict("Strict")))
    assert error == 'strict decoding error: unknown field "dataa"' and shown["dataa"] == {}
    raw = b'{"data":{"k":"v"},"data":{"k2":"v"}}'
    shown, error = invalid_patch(call(api_client, "PATCH", path, raw, content_type=MERGE, query=strict("Strict")))
    assert error == 'strict decoding error: duplicate field "data"' and shown["data"] == {"k2": "v", "x": "y"}


def test_strategic_merge_patch_errors(api_client: client.ApiClient, namespace: str) -> None:
    assert call(api_client, "POST", deploy_path(namespace), deployment("smp")).status == 201
    path = deploy_path(namespace, "smp")
    cases = [
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "bogus": 1}], "bogus2": 2}}}, "zz": [1, "a", None, {"b": 1.5}]},
            "Strict",
            'Invalid value: "map[spec:map[template:map[spec:map[bogus2:2 containers:[map[bogus:1 name:web]]]]] '
            'zz:[1 a <nil> map[b:1.5]]]": '
            'strict decoding error: unknown field "spec.template.spec.bogus2", unknown field "spec.template.spec.containers[0].bogus", '
            'unknown field "zz"',
        ),
        ({"spec": {"replicas": "x"}}, "Ignore", 'Invalid value: "map[spec:map[replicas:x]]": unrecognized type: int32'),
        ({"spec": {"replicas": 1.5}}, "Ignore", 'Invalid value: "map[spec:map[replicas:1.5]]": cannot convert float64 to int32'),
        ({"spec": {"template": "x"}}, "Ignore", 'Invalid value: "map[spec:map[template:x]]": cannot restore struct from: string'),
        (
            {"metadata": {"labels": {"a": 5}}},
            "Ignore",
            'Invalid value: "map[metadata:map[labels:map[a:5]]]": cannot convert int64 to string',
        ),
    ]
    for patch, mode, detail in cases:
        reply = call(api_client, "PATCH", path, patch, content_type=STRATEGIC, query=strict(mode))
        assert reply.status == 422, reply.body
        assert reply.body["message"] == ' "" is invalid: patch: ' + detail
        assert reply.body["details"] == {"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]}
    reply = call(api_client, "PATCH", path, {"spec": {"replicass": 3}}, content_type=STRATEGIC)
    assert reply.status == 200 and reply.warnings == [warning('unknown field "spec.replicass"')]


def test_strict_merge_patch_of_a_custom_resource(api_client: client.ApiClient, crds_installed: None, namespace: str) -> None:
    path = f"/apis/deployments.example.com/v1/namespaces/{namespace}/darkrooms"
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "cr"},
        "spec": {"version": "v0.1.0", "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": ["img"]},
    }
    assert call(api_client, "POST", path, body).status == 201
    shown, error = invalid_patch(call(api_client, "PATCH", f"{path}/cr", {"spec": {"zz": 1}}, content_type=MERGE, query=strict("Strict")))
    assert error == 'strict decoding error: unknown field "spec.zz"' and shown["spec"]["zz"] == 1


# -- server-side apply -------------------------------------------------------------------------


def test_apply_rejects_undeclared_fields_and_wrong_types(api_client: client.ApiClient, namespace: str) -> None:
    path = cm_path(namespace, "applied")
    query = [("fieldManager", "test")]
    base = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}}
    for mode in ("Strict", "Warn", "Ignore"):
        reply = call(api_client, "PATCH", path, {**base, "dataa": {"a": "b"}}, content_type=APPLY, query=[*query, *strict(mode)])
        assert reply.status == 500, reply.body
        assert "reason" not in reply.body
        assert (
            reply.body["message"]
            == "failed to create typed patch object (/applied; /v1, Kind=ConfigMap): .dataa: field not declared in schema"
        )
    reply = call(api_client, "PATCH", path, {**base, "data": {"a": 5}}, content_type=APPLY, query=query)
    assert reply.status == 500
    assert reply.body["message"] == (
        "failed to create typed patch object (/applied; /v1, Kind=ConfigMap): "
        ".data.a: expected string, got &value.valueUnstructured{Value:5}"
    )
    assert call(api_client, "GET", path).status == 404
    reply = call(api_client, "PATCH", path, {**base, "data": {"a": "b"}}, content_type=APPLY, query=query)
    assert reply.status == 201 and reply.warnings == []


# -- kubectl -----------------------------------------------------------------------------------


def test_kubectl_explain_descends_into_builtin_fields(kubectl: Kubectl) -> None:
    replicas = kubectl.run("explain", "deployment.spec.replicas").stdout
    assert replicas.startswith("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: replicas <integer>\n")
    assert "Number of desired pods." in replicas
    data = kubectl.run("explain", "configmap.data").stdout
    assert "FIELD: data <map[string]string>" in data and "Data contains the configuration data." in data
    ports = kubectl.run("explain", "pod.spec.containers.ports").stdout
    assert "FIELD: ports <[]ContainerPort>" in ports
    assert "containerPort\t<integer> -required-" in ports and "protocol\t<string>" in ports


def test_kubectl_create_with_a_misspelt_field(kubectl: Kubectl, namespace: str) -> None:
    name = f"typo-{uuid.uuid4().hex[:6]}"
    manifest = json.dumps({**deployment(name, spec={"replicass": 2}), "metadata": {"name": name, "namespace": namespace}})
    result = kubectl.run("create", "-f", "-", input_text=manifest, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: '
        'strict decoding error: unknown field "spec.replicass"'
    )
    created = kubectl.run("create", "--validate=false", "-f", "-", input_text=manifest)
    assert created.stdout.strip() == f"deployment.apps/{name} created"
    spec = json.loads(kubectl.run("get", "deployment", name, "-n", namespace, "-o", "json").stdout)["spec"]
    assert "replicass" not in spec and spec["replicas"] == 0
