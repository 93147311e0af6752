"""Server-side apply's typed check of built-in apply configurations (devcluster.typedpatch).

Behaviours covered (expected texts are what kube-apiserver v1.37.2 answered for the same configs):
- a valid configuration passes; nulls are accepted anywhere.
- undeclared fields and wrongly typed values fail with 500 and no reason, ``failed to create typed
  patch object (<namespace>/<name>; <group>/<version>, Kind=<kind>): ...``, with structured-merge-
  diff's paths (list items by key: ``containers[name="c"]``, ``ports[containerPort=80,protocol=5]``;
  atomic lists by index) and messages (``field not declared in schema``, ``expected numeric (int or
  float), got string``, ``expected boolean, got &{y}``, ``expected map, got &{x}``, ``expected
  string, got &value.valueUnstructured{Value:5}``); several errors are listed under ``errors:``;
  the first undeclared field ends the walk of its object.
- conversion_error: the message of a merged object the Go type cannot hold.
"""

from __future__ import annotations

from typing import Any

import pytest

from devcluster import typedpatch
from devcluster.decoding import Decoder, decoder_for
from devcluster.errors import StatusError

PREFIX = "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "


def deployment_decoder() -> Decoder:
    found = decoder_for("apps/v1", "Deployment")
    assert found is not None
    return found


def config(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", **meta}, "spec": spec}


def failure(body: dict[str, Any]) -> StatusError:
    with pytest.raises(StatusError) as raised:
        typedpatch.check(body, deployment_decoder().root, group_version="apps/v1", kind="Deployment")
    return raised.value


def test_valid_configuration_passes() -> None:
    spec = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
        "template": {
            "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": 1}}}]},
        },
    }
    typedpatch.check(config(spec), deployment_decoder().root, group_version="apps/v1", kind="Deployment")


@pytest.mark.parametrize(
    ("spec", "detail"),
    [
        ({"replicas": "x"}, ".spec.replicas: expected numeric (int or float), got string"),
        ({"paused": "y"}, ".spec.paused: expected boolean, got &{y}"),
        ({"template": "x"}, ".spec.template: expected map, got &{x}"),
        ({"bogus": 1, "replicas": "x"}, ".spec.bogus: field not declared in schema"),
        (
            {
                "template": {
                    "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": 5, "bog": 1}], "args": ["a", 5]}]}
                }
            },
            "errors:\n"
            '  .spec.template.spec.containers[name="c"].args[1]: expected string, got &value.valueUnstructured{Value:5}\n'
            '  .spec.template.spec.containers[name="c"].ports[containerPort=80,protocol=5].bog: field not declared in schema',
        ),
        (
            {"template": {"spec": {"containers": [{"name": "c"}], "volumes": [{"name": "v", "bogus": 1}], "tolerations": [{"bogus": 2}]}}},
            "errors:\n"
            "  .spec.template.spec.tolerations[0].bogus: field not declared in schema\n"
            '  .spec.template.spec.volumes[name="v"].bogus: field not declared in schema',
        ),
        (
            {"minReadySeconds": "z", "paused": "y", "replicas": "x"},
            "errors:\n"
            "  .spec.minReadySeconds: expected numeric (int or float), got string\n"
            "  .spec.paused: expected boolean, got &{y}\n"
            "  .spec.replicas: expected numeric (int or float), got string",
        ),
    ],
)
def test_errors(spec: dict[str, Any], detail: str) -> None:
    error = failure(config(spec))
    assert error.code == 500
    assert error.message == PREFIX + detail
    assert "reason" not in error.body()


def test_metadata_and_namespace() -> None:
    error = failure(config({"bogus": 1}, namespace="default"))
    assert (
        error.message
        == "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema"
    )
    assert failure(config({}, bogus=1)).message == PREFIX + ".metadata.bogus: field not declared in schema"


def test_conversion_error() -> None:
    error = typedpatch.conversion_error(config({}), "cannot convert float64 to int32", group_version="apps/v1", kind="Deployment")
    assert error.code == 500
    assert error.message == (
        "failed to convert new object (/web; apps/v1, Kind=Deployment) to proper version: "
        "unable to convert unstructured object to apps/v1, Kind=Deployment: cannot convert float64 to int32"
    )
