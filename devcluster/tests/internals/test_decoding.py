"""Typed decoding of built-in kinds (devcluster.decoding, .typenodes, .duplicates) against the bundled kube-apiserver schemas.

Behaviours covered (expected texts are what kube-apiserver v1.37.2 answered for the same bodies):
- every built-in kind has a decoder, compiled once (the same object on every call); custom kinds
  and unknown kinds have none.
- unknown fields are dropped and reported in document order with kube's paths (list indices,
  map keys after a dot), also inside metadata; a valid object is left as it was.
- wrong JSON types: Go's UnmarshalTypeError text with the Go struct, field path (embedded structs
  named) and Go type (named types such as ``v1.Protocol``, ``[]uint8``, ``v1.ResourceList``); the
  first error in document order wins over later ones and over unknown fields; errors from
  Time/Quantity/IntOrString end decoding at once (and win over an earlier saved error); 80.0 and
  out-of-range numbers are not int32s.
- normalisation: Time → UTC seconds, MicroTime kept at microseconds, Secret data re-encoded
  (line breaks dropped), quantities canonical and ResourceList values rounded up to milli, null
  fields dropped, null map values → "".
- the unstructured-converter style of strategic merge patches: its messages (``cannot convert
  int64 to string``, ``unrecognized type: int32``, ``cannot restore struct from: string``,
  ``json: cannot unmarshal bool into Go value of type int32``) and integral floats accepted.
- duplicates.loads: no duplicates → None (also with ``":`` inside strings and spaced colons);
  duplicates reported in document order (interleaved with unknown fields by the decoder);
  repeated objects merge for bodies, last wins for patches.
- field_validation: Strict raises one strict decoding error, Warn returns warnings, Ignore nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from devcluster import decoding
from devcluster.decoding import UNSTRUCTURED, DecodeError, Decoder, decoder_for, field_validation
from devcluster.duplicates import loads
from devcluster.resources import BUILTINS, from_crd


def deployment(spec: dict[str, Any] | None = None, container: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i", **(container or {})}]},
            },
            **(spec or {}),
        },
    }
    body.update(top)
    return body


def decoder(group_version: str, kind: str) -> Decoder:
    found = decoder_for(group_version, kind)
    assert found is not None
    return found


def error_of(group_version: str, kind: str, body: dict[str, Any], **options: Any) -> str:
    with pytest.raises(DecodeError) as raised:
        decoder(group_version, kind).decode(body, **options)
    return raised.value.message


def test_every_builtin_has_one_compiled_decoder() -> None:
    for resource in BUILTINS:
        assert decoder_for(resource.group_version, resource.kind) is decoder(resource.group_version, resource.kind)
    assert decoder_for("v1", "NoSuchKind") is None
    crd = {
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "names": {"plural": "foos", "kind": "Foo"}, "versions": [{"name": "v1", "served": True}]},
    }
    (custom,) = from_crd(crd)
    assert decoder_for(custom.group_version, custom.kind) is None


def test_unknown_fields_are_dropped_in_document_order() -> None:
    body = deployment(spec={"replicass": 2}, container={"ports": [{"containerPort": 80, "x": 1}], "y": 2})
    body["metadata"]["foo"] = 1
    problems = decoder("apps/v1", "Deployment").decode(body)
    assert problems == [
        'unknown field "metadata.foo"',
        'unknown field "spec.template.spec.containers[0].ports[0].x"',
        'unknown field "spec.template.spec.containers[0].y"',
        'unknown field "spec.replicass"',
    ]
    assert body == deployment(container={"ports": [{"containerPort": 80}]})
    valid = deployment(container={"ports": [{"containerPort": 80, "protocol": "TCP"}]})
    before = copy.deepcopy(valid)
    assert decoder("apps/v1", "Deployment").decode(valid) == []
    assert valid == before
    configmap = {"metadata": {"name": "c", "zz": 1}, "zzz": 1, "aaa": 2, "data": {"x": "y"}}
    assert decoder("v1", "ConfigMap").decode(configmap) == ['unknown field "metadata.zz"', 'unknown field "zzz"', 'unknown field "aaa"']


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            deployment(spec={"replicas": "x"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment(container={"ports": [{"containerPort": "80"}]}),
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort "
            "of type int32",
        ),
        (
            deployment(container={"ports": [{"containerPort": 80.0}]}),
            "json: cannot unmarshal number 80.0 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort "
            "of type int32",
        ),
        (
            deployment(container={"ports": [{"containerPort": 3000000000}]}),
            "json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort "
            "of type int32",
        ),
        (
            deployment(container={"ports": {"containerPort": 80}}),
            "json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.ports of type []v1.ContainerPort",
        ),
        (
            deployment(container={"ports": [{"containerPort": 80, "protocol": 5}]}),
            "json: cannot unmarshal number into Go struct field ContainerPort.spec.template.spec.containers.ports.protocol "
            "of type v1.Protocol",
        ),
        (
            deployment(container={"args": ["a", 5]}),
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.args of type string",
        ),
        (
            deployment(container={"resources": {"limits": "x"}}),
            "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.template.spec.containers.resources.limits "
            "of type v1.ResourceList",
        ),
        (
            deployment(spec={"template": {"spec": {"volumes": [{"name": "v", "configMap": {"name": 5}}]}}}),
            "json: cannot unmarshal number into Go struct field ConfigMapVolumeSource.spec.template.spec.volumes.VolumeSource.configMap."
            "LocalObjectReference.name of type string",
        ),
        (
            deployment(spec={"template": "x"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec",
        ),
        (
            deployment(spec={"selector": []}),
            "json: cannot unmarshal array into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector",
        ),
        (deployment(spec={"paused": "true"}), "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"),
        (deployment(metadata="x"), "json: cannot unmarshal string into Go struct field Deployment.metadata of type v1.ObjectMeta"),
        (
            deployment(status={"replicas": "x"}),
            "json: cannot unmarshal string into Go struct field DeploymentStatus.status.replicas of type int32",
        ),
        (
            deployment(metadata={"name": "web", "creationTimestamp": 5}),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
        ),
        (
            deployment(metadata={"name": "web", "creationTimestamp": "yesterday"}),
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
        (
            deployment(spec={"strategy": {"rollingUpdate": {"maxSurge": True}}}),
            "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
        ),
        (
            deployment(spec={"strategy": {"rollingUpdate": {"maxSurge": 1.5}}}),
            "json: cannot unmarshal number 1.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge "
            "of type int32",
        ),
        (
            deployment(container={"resources": {"limits": {"cpu": "abc"}}}),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            deployment(container={"resources": {"limits": {"cpu": True}}}),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
)
def test_type_errors(body: dict[str, Any], message: str) -> None:
    assert error_of("apps/v1", "Deployment", body) == message


def test_first_saved_error_wins_but_custom_unmarshalers_abort() -> None:
    configmap = {"metadata": {"name": "c"}, "zzz": 1, "data": {"x": 2, "y": True}}
    assert error_of("v1", "ConfigMap", configmap) == "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    # a saved type error earlier in the document loses to a Time error later
    body = deployment(spec={"paused": "x", "template": {"metadata": {"creationTimestamp": "x"}, "spec": {"containers": []}}})
    assert error_of("apps/v1", "Deployment", body).startswith('parsing time "x"')
    secret = {"metadata": {"name": "s"}, "data": {"a": 5}}
    assert error_of("v1", "Secret", secret) == "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
    assert (
        error_of("v1", "Secret", {"data": "x"})
        == "json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8"
    )
    assert error_of("v1", "Secret", {"data": {"a": "aGVsbG8"}}) == "illegal base64 data at input byte 4"
    assert (
        error_of("v1", "Secret", {"stringData": {"a": 1}})
        == "json: cannot unmarshal number into Go struct field Secret.stringData of type string"
    )
    labels = {"metadata": {"name": "c", "labels": {"a": 1}}}
    assert (
        error_of("v1", "ConfigMap", labels)
        == "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
    )


def test_values_are_normalised() -> None:
    secret = {"metadata": {"name": "s"}, "data": {"a": "aGVs\nbG8=", "b": "aGVsbG8=\n", "c": None, "d": ""}, "type": None}
    assert decoder("v1", "Secret").decode(secret) == []
    assert secret == {"metadata": {"name": "s"}, "data": {"a": "aGVsbG8=", "b": "aGVsbG8=", "c": "", "d": ""}}
    event = {"metadata": {"name": "e"}, "involvedObject": {"name": "x"}, "lastTimestamp": "2024-01-01T10:00:00.5-07:30"}
    decoder("v1", "Event").decode(event)
    assert event["lastTimestamp"] == "2024-01-01T17:30:00Z"
    lease = {"metadata": {"name": "l"}, "spec": {"acquireTime": "2024-01-01T10:00:00.123456+01:00"}}
    decoder("coordination.k8s.io/v1", "Lease").decode(lease)
    assert lease["spec"]["acquireTime"] == "2024-01-01T09:00:00.123456Z"
    body = deployment(container={"resources": {"limits": {"cpu": "0.5", "memory": "1024Mi", "x/y": "1n"}}}, spec={"replicas": None})
    decoder("apps/v1", "Deployment").decode(body)
    assert body["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi", "x/y": "1m"}}
    assert "replicas" not in body["spec"]
    volume = {"name": "v", "emptyDir": {"sizeLimit": "1n"}}
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"containers": [], "volumes": [volume]}}
    decoder("v1", "Pod").decode(pod)
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "1n"  # not a ResourceList: no milli rounding


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (deployment(spec={"replicas": "x"}), "unrecognized type: int32"),
        (deployment(spec={"replicas": 1.5}), "cannot convert float64 to int32"),
        (deployment(spec={"paused": "x"}), "unrecognized type: bool"),
        (deployment(spec={"paused": 1}), "unrecognized type: bool"),
        (deployment(spec={"template": "x"}), "cannot restore struct from: string"),
        (deployment(spec={"selector": [1]}), "cannot restore struct from: slice"),
        (deployment(spec={"revisionHistoryLimit": True}), "unrecognized type: int32"),
        (deployment(container={"ports": [{"containerPort": 80, "protocol": 5}]}), "cannot convert int64 to v1.Protocol"),
        (deployment(container={"args": [5]}), "cannot convert int64 to string"),
        (deployment(metadata={"name": "web", "creationTimestamp": 5}), "json: cannot unmarshal number into Go value of type string"),
        (deployment(spec={"strategy": {"rollingUpdate": {"maxSurge": True}}}), "json: cannot unmarshal bool into Go value of type int32"),
        (
            deployment(spec={"strategy": {"rollingUpdate": {"maxSurge": 1.5}}}),
            "json: cannot unmarshal number 1.5 into Go value of type int32",
        ),
        (deployment(metadata={"name": "web", "labels": {"a": 5}}), "cannot convert int64 to string"),
    ],
)
def test_unstructured_converter_style(body: dict[str, Any], message: str) -> None:
    assert error_of("apps/v1", "Deployment", body, style=UNSTRUCTURED) == message


def test_unstructured_style_accepts_integral_floats_and_sorts_unknown_fields() -> None:
    body = deployment(spec={"replicas": 2.0, "zz": 1, "bogus": 2})
    problems = decoder("apps/v1", "Deployment").decode(body, style=UNSTRUCTURED)
    assert problems == ['unknown field "spec.bogus"', 'unknown field "spec.zz"']
    assert body["spec"]["replicas"] == 2 and isinstance(body["spec"]["replicas"], int)


def test_loads_finds_duplicates() -> None:
    assert loads(b'{"a": {"b": "x:\\"y\\":"}, "c": ["d", {"e": 1}]}') == ({"a": {"b": 'x:"y":'}, "c": ["d", {"e": 1}]}, None)
    assert loads(b'{"a" : 1, "b":\n {"c" :2}}') == ({"a": 1, "b": {"c": 2}}, None)
    spaced_value, spaced = loads(b'{"a" : 1, "a" :2}')
    assert spaced_value == {"a": 2} and spaced is not None and spaced.paths == ["a"]
    raw = b'{"metadata":{"name":"x1","bogus":1,"name":"x2","labels":{"a":"1","a":"2"}},"data":{"k":"v"},"data":{"k2":"v"},"zz":1}'
    value, duplicates = loads(raw)
    assert duplicates is not None
    assert duplicates.paths == ["metadata.name", "metadata.labels.a", "data"]
    assert value["metadata"] == {"name": "x2", "bogus": 1, "labels": {"a": "2"}}
    assert value["data"] == {"k": "v", "k2": "v"}  # Go decodes the second object into the first
    problems = decoder("v1", "ConfigMap").decode(value, duplicates=duplicates)
    assert problems == [  # document order, as kube-apiserver lists them
        'unknown field "metadata.bogus"',
        'duplicate field "metadata.name"',
        'duplicate field "metadata.labels.a"',
        'duplicate field "data"',
        'unknown field "zz"',
    ]
    patch, patch_duplicates = loads(b'{"data":{"k":"v"},"data":{"k3":"v"}}', merge=False)
    assert patch == {"data": {"k3": "v"}}
    assert patch_duplicates is not None and patch_duplicates.problems() == ['duplicate field "data"']


def test_field_validation() -> None:
    problems = ['unknown field "a"', 'duplicate field "b"']
    assert field_validation(problems, "Ignore") == []
    assert field_validation(problems, "Warn") == problems
    assert field_validation([], "Strict") == []
    with pytest.raises(DecodeError) as raised:
        field_validation(problems, "Strict")
    assert raised.value.message == 'strict decoding error: unknown field "a", duplicate field "b"'
    assert raised.value.code == 400 and raised.value.strict
    assert decoding.JSON != decoding.UNSTRUCTURED
