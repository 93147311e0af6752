"""OpenAPI v3 documents: ``/openapi/v3`` and ``/openapi/v3/api/v1``, ``/openapi/v3/apis/{group}/{version}``.

Group/versions of built-in kinds serve the real kube-apiserver's documents (Kubernetes v1.37.2,
bundled by ``scripts/gen_builtin_openapi.py``, read by ``bundled_openapi.py``), trimmed to the
paths devcluster routes (:func:`served_paths`) and the schemas they reach, descriptions included.
Custom resources get documents generated here, shaped as kube-apiserver shapes CRD documents; the
meta/v1 and autoscaling/v1 schemas they refer to are the bundled definitions (no copy of their text here).

kubectl 1.32 reads these for three things, and both kinds of document serve them:

* field-validation support (``k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go``): for a
  GVK it walks the paths of the GVK's group/version document and takes the *first* PATCH operation
  whose ``x-kubernetes-group-version-kind`` equals the GVK; that operation must carry an
  ``in: query`` ``fieldValidation`` parameter. Go map order is random, so every PATCH operation
  tagged with a GVK (the item path and the ``/status`` path alike) carries it - in the real
  documents too.
* ``kubectl apply``'s patch type (``k8s.io/kubectl/pkg/cmd/apply/patcher.go``,
  ``gvkSupportsPatchOpenAPIV3``): strategic merge patch is computed from these schemas if the
  first matching PATCH operation accepts ``application/strategic-merge-patch+json``. The real
  documents list it for built-ins, so kubectl computes strategic merge patches from their
  ``x-kubernetes-patch-strategy``/``-merge-key``; generated CR documents do not, so kubectl
  sends JSON merge patches for custom resources, as with kube-apiserver.
* ``kubectl explain`` (``k8s.io/kubectl/pkg/explain/v2/templates/plaintext.tmpl``): finds the GVK
  on an operation of ``/<prefix>/<resource>``, ``.../{name}``, ``.../namespaces/{namespace}/<resource>``
  or ``.../{name}`` and then the ``components.schemas`` entry whose
  ``x-kubernetes-group-version-kind`` list contains it, and follows ``$ref``s down to any field
  (``kubectl explain deployment.spec.replicas``). Custom resources get their CRD's openAPIV3Schema.

Names mirror kube-apiserver: schema keys ``io.k8s.api.core.v1.ConfigMap`` /
``com.example.deployments.v1alpha1.Darkroom``, operation ids ``patchCoreV1NamespacedConfigMap``,
``x-kubernetes-action`` values ``get``/``list``/``post``/``put``/``patch``/``delete``/``deletecollection``.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from devcluster import bundled_openapi
from devcluster.resources import ResourceType

OPENAPI_VERSION = "3.0.0"
INFO = {"title": "Kubernetes", "version": "v1.32.0"}
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
OBJECT_META = f"{META}.ObjectMeta"
LIST_META = f"{META}.ListMeta"
STATUS = f"{META}.Status"
DELETE_OPTIONS = f"{META}.DeleteOptions"
PATCH = f"{META}.Patch"
SCALE = "io.k8s.api.autoscaling.v1.Scale"

PATCH_CONTENT_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
RESPONSE_CONTENT_TYPES = ("application/json", "application/yaml")
LIST_RESPONSE_CONTENT_TYPES = ("application/json", "application/yaml", "application/json;stream=watch")

_LIST_METADATA_DESCRIPTION = (
    "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

# Go package prefix of the built-in groups whose prefix is not io.k8s.api.<first label of group>.
_BUILTIN_PACKAGES = {
    "": "io.k8s.api.core",
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
}


# --------------------------------------------------------------------------------------------
# names


def openapi_path(group_version: str) -> str:
    """The key of ``group_version`` in ``/openapi/v3``: ``api/v1`` or ``apis/apps/v1``."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def group_version_for_path(path: str) -> str | None:
    """Inverse of :func:`openapi_path` (leading ``/openapi/v3/`` or ``/`` tolerated); None if not a GV path."""
    path = path.removeprefix("/openapi/v3").strip("/")
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "api" and parts[1]:
        return parts[1]
    if len(parts) == 3 and parts[0] == "apis" and parts[1] and parts[2]:
        return f"{parts[1]}/{parts[2]}"
    return None


def schema_name(resource: ResourceType, kind: str | None = None) -> str:
    """``components.schemas`` key of the resource's kind (or of ``kind`` in the same group/version)."""
    kind = kind or resource.kind
    if resource.is_custom:
        package = ".".join(reversed(resource.group.split(".")))
    elif resource.group in _BUILTIN_PACKAGES:
        package = _BUILTIN_PACKAGES[resource.group]
    else:
        package = "io.k8s.api." + resource.group.split(".")[0]
    return f"{package}.{resource.version}.{kind}"


def _group_camel(group: str) -> str:
    if not group:
        return "Core"
    words = group.removesuffix(".k8s.io").replace("-", ".").split(".")
    return "".join(word[:1].upper() + word[1:] for word in words if word)


def _id_base(resource: ResourceType) -> str:
    return _group_camel(resource.group) + resource.version[:1].upper() + resource.version[1:]


def _tag(resource: ResourceType) -> str:
    camel = _group_camel(resource.group)
    return f"{camel[:1].lower()}{camel[1:]}_{resource.version}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _ref_property(name: str, description: str, default: Any = None) -> dict[str, Any]:
    """A property referring to another schema, wrapped in allOf as kube's v3 documents do."""
    prop: dict[str, Any] = {"allOf": [_ref(name)]}
    if default is not None:
        prop["default"] = default
    prop["description"] = description
    return prop


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


# --------------------------------------------------------------------------------------------
# parameters


def _string_param(name: str, description: str, where: str = "query", required: bool = False) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "description": description}
    if required:
        param["required"] = True
    param["schema"] = {"type": "string", "uniqueItems": True}
    return param


def _typed_param(name: str, description: str, type_: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": True}}


_PARAMS: dict[str, dict[str, Any]] = {
    "allowWatchBookmarks": _typed_param(
        "allowWatchBookmarks",
        'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may '
        "ignore this flag and bookmarks are sent at the server's discretion.",
        "boolean",
    ),
    "continue": _string_param(
        "continue",
        "The continue option should be set when retrieving more results from the server. Since this value is server "
        "defined, clients may only use the continue value from a previous query result with identical query parameters "
        "(except for the value of continue).",
    ),
    "dryRun": _string_param(
        "dryRun",
        "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive "
        "will result in an error response and no further processing of the request. Valid values are: - All: all dry run "
        "stages will be processed",
    ),
    "fieldManager": _string_param(
        "fieldManager",
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less "
        "than or 128 characters long, and only contain printable characters, as defined by "
        "https://golang.org/pkg/unicode/#IsPrint.",
    ),
    "fieldSelector": _string_param(
        "fieldSelector", "A selector to restrict the list of returned objects by their fields. Defaults to everything."
    ),
    "fieldValidation": _string_param(
        "fieldValidation",
        "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown "
        "or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped "
        "from the object, and will ignore all but the last duplicate field that the decoder encounters. - Warn: This will "
        "send a warning via the standard warning response header for each unknown field that is dropped from the object, "
        "and for each duplicate field that is encountered. The request will still succeed if there are no other errors, "
        "and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail "
        "the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate "
        "fields are present. The error returned from the server will contain all unknown and duplicate fields "
        "encountered.",
    ),
    "force": _typed_param(
        "force",
        'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other '
        "people. Force flag must be unset for non-apply patch requests.",
        "boolean",
    ),
    "gracePeriodSeconds": _typed_param(
        "gracePeriodSeconds",
        "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero "
        "indicates delete immediately. If this value is nil, the default grace period for the specified type will be used.",
        "integer",
    ),
    "ignoreStoreReadErrorWithClusterBreakingPotential": _typed_param(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with "
        "a corrupt object error.",
        "boolean",
    ),
    "labelSelector": _string_param(
        "labelSelector", "A selector to restrict the list of returned objects by their labels. Defaults to everything."
    ),
    "limit": _typed_param(
        "limit",
        "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the "
        "`continue` field on the list metadata to a value that can be used with the same initial query to retrieve the "
        "next set of results.",
        "integer",
    ),
    "orphanDependents": _typed_param(
        "orphanDependents",
        "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects "
        'be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list.',
        "boolean",
    ),
    "pretty": _string_param(
        "pretty",
        (
            "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a "
            "browser or command-line HTTP tool (curl and wget)."
        ),
    ),
    "propagationPolicy": _string_param(
        "propagationPolicy",
        "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not "
        "both. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
    ),
    "resourceVersion": _string_param(
        "resourceVersion",
        "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset",
    ),
    "resourceVersionMatch": _string_param(
        "resourceVersionMatch",
        "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that "
        "resourceVersionMatch be set for list calls where resourceVersion is set. Defaults to unset",
    ),
    "sendInitialEvents": _typed_param(
        "sendInitialEvents",
        "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with "
        "synthetic events to produce the current state of objects in the collection.",
        "boolean",
    ),
    "timeoutSeconds": _typed_param(
        "timeoutSeconds",
        "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
        "integer",
    ),
    "watch": _typed_param(
        "watch",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove "
        "notifications. Specify resourceVersion.",
        "boolean",
    ),
}

_LIST_PARAMS = (
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
)
_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
_PATCH_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "force")
_DELETE_PARAMS = (
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
)
_DELETECOLLECTION_PARAMS = (
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
)


def _params(names: Iterable[str]) -> list[dict[str, Any]]:
    return [copy.deepcopy(_PARAMS[name]) for name in names]


def _name_param(kind: str, what: str = "") -> dict[str, Any]:
    return _string_param("name", f"name of the {what or kind}", where="path", required=True)


def _namespace_param() -> dict[str, Any]:
    return _string_param("namespace", "object name and auth scope, such as for teams and projects", where="path", required=True)


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


# --------------------------------------------------------------------------------------------
# documents


def served_paths(resource: ResourceType) -> set[str]:
    """The path templates devcluster routes for ``resource`` (``serving.py``): collection, item, the
    all-namespaces list, the legacy watch paths, its subresources and the group/version root."""
    prefix = resource.path_prefix()
    if resource.namespaced:
        collection = f"{prefix}/namespaces/{{namespace}}/{resource.plural}"
        paths = {f"{prefix}/{resource.plural}", f"{prefix}/watch/{resource.plural}"}
        paths |= {
            f"{prefix}/watch/namespaces/{{namespace}}/{resource.plural}",
            f"{prefix}/watch/namespaces/{{namespace}}/{resource.plural}/{{name}}",
        }
    else:
        collection = f"{prefix}/{resource.plural}"
        paths = {f"{prefix}/watch/{resource.plural}", f"{prefix}/watch/{resource.plural}/{{name}}"}
    item = f"{collection}/{{name}}"
    paths |= {f"{prefix}/", collection, item}
    if resource.status_subresource:
        paths.add(f"{item}/status")
    if resource.scale_subresource:
        paths.add(f"{item}/scale")
    if resource.group == "" and resource.plural == "namespaces":
        paths.add(f"{item}/finalize")
    return paths


def group_version_document(group_version: str, resources: Iterable[ResourceType]) -> dict[str, Any]:
    """``/openapi/v3/api/v1`` or ``/openapi/v3/apis/{group}/{version}`` for the resources in ``group_version``.

    ``resources`` may hold other group/versions too; only those in ``group_version`` are described.
    Built-in kinds come from the bundled kube-apiserver document (returned as is, shared, when it
    describes exactly the selected resources: do not mutate it); custom resources, and built-ins
    the bundle lacks, get generated paths and schemas.
    """
    selected = sorted((r for r in resources if r.group_version == group_version), key=lambda r: r.plural)
    bundled = bundled_openapi.document(group_version)
    described = bundled_openapi.kind_schemas(group_version)
    from_bundle = [r for r in selected if not r.is_custom and r.kind in described]
    generated = [r for r in selected if r not in from_bundle]
    if bundled is None or not from_bundle:
        return _generated_document(group_version, generated)
    wanted: set[str] = set().union(*(served_paths(r) for r in from_bundle))
    if not generated and wanted == set(bundled["paths"]):
        return bundled
    paths = {p: item for p, item in bundled["paths"].items() if p in wanted}
    schemas = dict(bundled["components"]["schemas"])
    extra = _generated_document(group_version, generated)
    paths.update(extra["paths"])
    own = {schema_name(r) for r in generated} | {schema_name(r, r.list_kind) for r in generated}
    for name, schema in extra["components"]["schemas"].items():
        if name not in schemas or name in own:  # the bundle's meta/v1 schemas are the real ones
            schemas[name] = schema
    return {
        **bundled,
        "paths": dict(sorted(paths.items())),
        "components": {**bundled["components"], "schemas": dict(sorted(schemas.items()))},
    }


def _generated_document(group_version: str, selected: list[ResourceType]) -> dict[str, Any]:
    group, _, version = group_version.rpartition("/")
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = meta_schemas(group, version)
    for resource in selected:
        paths.update(resource_paths(resource))
        schemas[schema_name(resource)] = kind_schema(resource)
        schemas[schema_name(resource, resource.list_kind)] = list_schema(resource)
        if resource.scale_subresource:
            schemas.update(scale_schemas())
    return {
        "openapi": OPENAPI_VERSION,
        "info": dict(INFO),
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "BearerToken": {"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header"}
            },
        },
        "security": [{"BearerToken": []}],
    }


def root_document(group_versions: Iterable[str], hashes: Mapping[str, str]) -> dict[str, Any]:
    """``/openapi/v3``: where each group/version document lives, with its hash for cache busting.

    ``hashes`` maps a group/version (``v1``, ``apps/v1``) to :func:`document_hash` of its document;
    a group/version without a hash gets a URL without the ``hash`` query parameter.
    """
    paths: dict[str, Any] = {}
    for group_version in sorted(set(group_versions), key=openapi_path):
        url = f"/openapi/v3/{openapi_path(group_version)}"
        digest = hashes.get(group_version)
        paths[openapi_path(group_version)] = {"serverRelativeURL": f"{url}?hash={digest}" if digest else url}
    return {"paths": paths}


def document_hash(document: Mapping[str, Any]) -> str:
    """Upper-case hex sha512 of the document's canonical JSON (sorted keys), as kube's ``?hash=`` and ETag."""
    return hashlib.sha512(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest().upper()
