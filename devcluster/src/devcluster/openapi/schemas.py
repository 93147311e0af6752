"""The ``components.schemas`` of a generated document: the kind, its List, and the meta/v1 and autoscaling/v1
definitions they refer to (taken from the bundled Kubernetes definitions, not copied here).
Used by ``documents.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from devcluster import bundled_openapi
from devcluster.openapi.names import (
    _LIST_METADATA_DESCRIPTION,
    DELETE_OPTIONS,
    LIST_META,
    META,
    OBJECT_META,
    PATCH,
    SCALE,
    STATUS,
    _gvk,
    _ref,
    _ref_property,
    schema_name,
)
from devcluster.resources import ResourceType

# --------------------------------------------------------------------------------------------
# schemas


# The properties every object has, as the Kubernetes definitions describe them (a ConfigMap's are TypeMeta's and
# ObjectMeta's doc comments, the same text kube's CRD documents carry).
_OBJECT_PROPERTIES = ("apiVersion", "kind", "metadata")
# What kube's generated documents refer to from every group/version's paths (the rest is what these reach).
_META_ROOTS = (DELETE_OPTIONS, OBJECT_META, LIST_META, STATUS, PATCH)


def _definition(name: str) -> dict[str, Any]:
    found = bundled_openapi.definitions().get(name)
    if found is None:  # pragma: no cover - the bundle is package data, regenerated with its README
        raise LookupError(f"{name} is not in the bundled Kubernetes definitions (devcluster/builtin_openapi)")
    return copy.deepcopy(found)


def _reachable(roots: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The bundled definitions named in ``roots`` and every definition their ``$ref``s reach."""
    found: dict[str, dict[str, Any]] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found[name] = _definition(name)
        pending.extend(_refs(found[name]))
    return found


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rpartition("/")[2]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _object_properties() -> dict[str, Any]:
    """``apiVersion``, ``kind`` and ``metadata`` as the Kubernetes definitions describe them."""
    properties = _definition("io.k8s.api.core.v1.ConfigMap")["properties"]
    return {name: properties[name] for name in _OBJECT_PROPERTIES}


def kind_schema(resource: ResourceType) -> dict[str, Any]:
    """The ``components.schemas`` entry of the resource's kind."""
    gvk = [_gvk(resource.group, resource.version, resource.kind)]
    if resource.is_custom:
        schema = copy.deepcopy(resource.schema) if resource.schema is not None else {}
        schema.setdefault("type", "object")
        schema.setdefault("properties", {}).update(_object_properties())
        schema["x-kubernetes-group-version-kind"] = gvk
        return schema
    # A built-in kind the bundled documents do not describe (bundled_openapi.py): an open object.
    return {
        "description": f"{resource.kind} is a {resource.group_version} resource.",
        "type": "object",
        "properties": _object_properties(),
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-group-version-kind": gvk,
    }


def list_schema(resource: ResourceType) -> dict[str, Any]:
    """The ``components.schemas`` entry of the resource's List kind (apiextensions-apiserver's own wording)."""
    properties = _object_properties()
    return {
        "description": f"{resource.list_kind} is a list of {resource.kind} objects.",
        "type": "object",
        "properties": {
            "apiVersion": properties["apiVersion"],
            "items": {
                "description": f"List of {resource.plural}.",
                "type": "array",
                "items": {"allOf": [_ref(schema_name(resource))], "default": {}},
            },
            "kind": properties["kind"],
            "metadata": _ref_property(LIST_META, _LIST_METADATA_DESCRIPTION, default={}),
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [_gvk(resource.group, resource.version, resource.list_kind)],
    }


def meta_schemas(group: str, version: str) -> dict[str, dict[str, Any]]:
    """The apimachinery meta/v1 schemas every group/version document refers to, from the bundled definitions.

    DeleteOptions is tagged with the core group's GVK and this group/version's, as kube tags it.
    """
    schemas = _reachable(_META_ROOTS)
    delete_options_gvks = [_gvk("", "v1", "DeleteOptions")]
    if group:
        delete_options_gvks.append(_gvk(group, version, "DeleteOptions"))
    schemas[DELETE_OPTIONS]["x-kubernetes-group-version-kind"] = delete_options_gvks
    return schemas


def scale_schemas() -> dict[str, dict[str, Any]]:
    """autoscaling/v1 Scale, which ``/scale`` subresources read and write, from the bundled definitions."""
    return {name: schema for name, schema in _reachable([SCALE]).items() if not name.startswith(META)}
