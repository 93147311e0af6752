"""Helpers shared by corpus modules: a per-sequence CRD (named after the namespace) and small readers."""

from __future__ import annotations

import copy
import time
from typing import Any

from fidelity.transcript import Side

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
# How long a deleted CRD may take to go: kube-apiserver's finalizer removes its objects first, which took over 30 s on
# a loaded 2-core machine; devcluster is done at once. Only the end state is compared, not the time.
CRD_GONE_S = 120.0

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "red"},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                "replicas": {"type": "integer", "default": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port"],
                    "items": {
                        "type": "object",
                        "required": ["port"],
                        "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}},
                    },
                },
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "object", "properties": {"value": {"type": "string", "default": "d"}}}},
                    "default": {},
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ratio": {"type": "number"},
                "when": {"type": "string", "format": "date-time"},
                "maybe": {"type": "string", "nullable": True},
                "intOrString": {"x-kubernetes-int-or-string": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {"ready": {"type": "boolean"}, "replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}


def group_of(s: Side) -> str:
    return f"{s.ns}.fidelity.example.com"


def widget_crd(s: Side, *, scale: bool = True, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    group = group_of(s)
    subresources: dict[str, Any] = {"status": {}}
    if scale:
        subresources["scale"] = {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["fidelity"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema or WIDGET_SCHEMA)},
                    "subresources": subresources,
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "description": "the colour"},
                        {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"},
                        {"name": "Tags", "type": "string", "jsonPath": ".spec.tags", "priority": 1},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


def established(s: Side, name: str) -> bool:
    crd = s.send("GET", f"{CRDS}/{name}").json or {}
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in (crd.get("status") or {}).get("conditions") or [])


def install_crd(s: Side, crd: dict[str, Any], *, record: bool = True) -> str:
    """Create ``crd`` (recorded as step ``crd-create`` when ``record``), wait until it is served."""
    name = crd["metadata"]["name"]
    s.cleanup(f"{CRDS}/{name}")
    if record:
        s.post("crd-create", CRDS, crd)
    else:
        s.send("POST", CRDS, body=crd)
    s.wait("crd-established", lambda: established(s, name))
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    prefix = f"/apis/{spec['group']}/{version}"
    path = (
        f"{prefix}/namespaces/{s.ns}/{spec['names']['plural']}"
        if spec.get("scope") == "Namespaced"
        else f"{prefix}/{spec['names']['plural']}"
    )
    deadline = time.monotonic() + 15
    while s.send("GET", path).status != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    return path


def widget(name: str, spec: dict[str, Any], group: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name, **metadata}, "spec": spec}


def openapi_published(s: Side, key: str, timeout_s: float = 20.0) -> bool:
    """Wait until ``/openapi/v3`` lists ``key`` (e.g. ``apis/<group>/v1``): kube publishes a new CRD's
    schema a moment after the CRD is Established."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if key in ((s.send("GET", "/openapi/v3").json or {}).get("paths") or {}):
            return True
        time.sleep(0.1)
    return False
