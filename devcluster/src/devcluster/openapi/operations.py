"""The paths and operations of a generated group/version document (``resource_paths``).

For one resource: collection, item, all-namespaces list, legacy watch paths, ``/status``, ``/scale``,
each with kube's operation ids, ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``
(kubectl reads the PATCH operations' GVK and ``fieldValidation`` parameter). Used by ``documents.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from devcluster.openapi.names import (
    DELETE_OPTIONS,
    LIST_RESPONSE_CONTENT_TYPES,
    PATCH,
    PATCH_CONTENT_TYPES,
    RESPONSE_CONTENT_TYPES,
    SCALE,
    STATUS,
    _gvk,
    _id_base,
    _ref,
    _tag,
    schema_name,
)
from devcluster.openapi.parameters import (
    _DELETE_PARAMS,
    _DELETECOLLECTION_PARAMS,
    _LIST_PARAMS,
    _PATCH_PARAMS,
    _WRITE_PARAMS,
    _name_param,
    _namespace_param,
    _params,
)
from devcluster.resources import ResourceType

# --------------------------------------------------------------------------------------------
# operations


def _content(schema: str, content_types: Iterable[str]) -> dict[str, Any]:
    return {content_type: {"schema": _ref(schema)} for content_type in content_types}


def _responses(codes: Mapping[str, str], schema: str, content_types: Iterable[str] = RESPONSE_CONTENT_TYPES) -> dict[str, Any]:
    responses: dict[str, Any] = {code: {"description": text, "content": _content(schema, content_types)} for code, text in codes.items()}
    responses["401"] = {"description": "Unauthorized"}
    return responses


_OK = {"200": "OK"}
_OK_CREATED = {"200": "OK", "201": "Created"}
_OK_CREATED_ACCEPTED = {"200": "OK", "201": "Created", "202": "Accepted"}
_OK_ACCEPTED = {"200": "OK", "202": "Accepted"}


def _operation(
    resource: ResourceType,
    *,
    operation_id: str,
    description: str,
    action: str,
    gvk: dict[str, str],
    parameters: Iterable[str] = (),
    request_body: dict[str, Any] | None = None,
    responses: dict[str, Any],
) -> dict[str, Any]:
    op: dict[str, Any] = {"tags": [_tag(resource)], "description": description, "operationId": operation_id}
    params = _params(parameters)
    if params:
        op["parameters"] = params
    if request_body is not None:
        op["requestBody"] = request_body
    op["responses"] = responses
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = dict(gvk)
    return op


def _body(schema: str) -> dict[str, Any]:
    return {"content": _content(schema, RESPONSE_CONTENT_TYPES), "required": True}


def _patch_body() -> dict[str, Any]:
    return {"content": _content(PATCH, PATCH_CONTENT_TYPES), "required": True}


def resource_paths(resource: ResourceType) -> dict[str, dict[str, Any]]:
    """The paths (with operations) kube-apiserver documents for one resource."""
    kind = resource.kind
    gvk = _gvk(resource.group, resource.version, kind)
    schema = schema_name(resource)
    list_schema = schema_name(resource, resource.list_kind)
    base = _id_base(resource)
    scope = "Namespaced" if resource.namespaced else ""
    prefix = resource.path_prefix()
    collection = f"{prefix}/namespaces/{{namespace}}/{resource.plural}" if resource.namespaced else f"{prefix}/{resource.plural}"
    item = f"{collection}/{{name}}"
    scope_params = [_namespace_param()] if resource.namespaced else []
    pretty = _params(["pretty"])
    is_namespace = resource.group == "" and resource.plural == "namespaces"
    deleted_schema = schema if resource.returns_deleted_object and not resource.is_custom and not is_namespace else STATUS

    def op_id(verb: str, infix: str = "", suffix: str = "") -> str:
        return f"{verb}{base}{infix}{scope}{kind}{suffix}"

    paths: dict[str, dict[str, Any]] = {}

    collection_ops: dict[str, Any] = {
        "get": _operation(
            resource,
            operation_id=op_id("list"),
            description=f"list or watch objects of kind {kind}",
            action="list",
            gvk=gvk,
            parameters=_LIST_PARAMS,
            responses=_responses(_OK, list_schema, LIST_RESPONSE_CONTENT_TYPES),
        ),
        "post": _operation(
            resource,
            operation_id=op_id("create"),
            description=f"create a {kind}",
            action="post",
            gvk=gvk,
            parameters=_WRITE_PARAMS,
            request_body=_body(schema),
            responses=_responses(_OK_CREATED_ACCEPTED, schema),
        ),
    }
    if not is_namespace:
        collection_ops["delete"] = _operation(
            resource,
            operation_id=op_id("delete", "Collection"),
            description=f"delete collection of {kind}",
            action="deletecollection",
            gvk=gvk,
            parameters=_DELETECOLLECTION_PARAMS,
            request_body={"content": _content(DELETE_OPTIONS, RESPONSE_CONTENT_TYPES)},
            responses=_responses(_OK, STATUS),
        )
    paths[collection] = {**collection_ops, "parameters": [*scope_params, *pretty]}

    paths[item] = {
        "get": _operation(
            resource,
            operation_id=op_id("read"),
            description=f"read the specified {kind}",
            action="get",
            gvk=gvk,
            responses=_responses(_OK, schema),
        ),
        "put": _operation(
            resource,
            operation_id=op_id("replace"),
            description=f"replace the specified {kind}",
            action="put",
            gvk=gvk,
            parameters=_WRITE_PARAMS,
            request_body=_body(schema),
            responses=_responses(_OK_CREATED, schema),
        ),
        "delete": _operation(
            resource,
            operation_id=op_id("delete"),
            description=f"delete a {kind}",
            action="delete",
            gvk=gvk,
            parameters=_DELETE_PARAMS,
            request_body={"content": _content(DELETE_OPTIONS, RESPONSE_CONTENT_TYPES)},
            responses=_responses(_OK_ACCEPTED, deleted_schema),
        ),
        "patch": _operation(
            resource,
            operation_id=op_id("patch"),
            description=f"partially update the specified {kind}",
            action="patch",
            gvk=gvk,
            parameters=_PATCH_PARAMS,
            request_body=_patch_body(),
            responses=_responses(_OK_CREATED, schema),
        ),
        "parameters": [_name_param(kind), *scope_params, *pretty],
    }

    if resource.namespaced:
        paths[f"{prefix}/{resource.plural}"] = {
            "get": _operation(
                resource,
                operation_id=f"list{base}{kind}ForAllNamespaces",
                description=f"list or watch objects of kind {kind}",
                action="list",
                gvk=gvk,
                responses=_responses(_OK, list_schema, LIST_RESPONSE_CONTENT_TYPES),
            ),
            "parameters": _params(sorted([*_LIST_PARAMS, "pretty"])),
        }

    def subresource(name: str, sub_gvk: dict[str, str], sub_schema: str) -> dict[str, Any]:
        suffix = name.capitalize()
        return {
            "get": _operation(
                resource,
                operation_id=op_id("read", suffix=suffix),
                description=f"read {name} of the specified {kind}",
                action="get",
                gvk=sub_gvk,
                responses=_responses(_OK, sub_schema),
            ),
            "put": _operation(
                resource,
                operation_id=op_id("replace", suffix=suffix),
                description=f"replace {name} of the specified {kind}",
                action="put",
                gvk=sub_gvk,
                parameters=_WRITE_PARAMS,
                request_body=_body(sub_schema),
                responses=_responses(_OK_CREATED, sub_schema),
            ),
            "patch": _operation(
                resource,
                operation_id=op_id("patch", suffix=suffix),
                description=f"partially update {name} of the specified {kind}",
                action="patch",
                gvk=sub_gvk,
                parameters=_PATCH_PARAMS,
                request_body=_patch_body(),
                responses=_responses(_OK_CREATED, sub_schema),
            ),
            "parameters": [_name_param(sub_gvk["kind"]), *scope_params, *pretty],
        }

    if resource.status_subresource:
        paths[f"{item}/status"] = subresource("status", gvk, schema)
    if resource.scale_subresource:
        paths[f"{item}/scale"] = subresource("scale", _gvk("autoscaling", "v1", "Scale"), SCALE)
    if is_namespace:
        paths[f"{item}/finalize"] = {
            "put": _operation(
                resource,
                operation_id=op_id("replace", suffix="Finalize"),
                description=f"replace finalize of the specified {kind}",
                action="put",
                gvk=gvk,
                parameters=_WRITE_PARAMS,
                request_body=_body(schema),
                responses=_responses(_OK_CREATED, schema),
            ),
            "parameters": [_name_param(kind), *pretty],
        }
    return paths
