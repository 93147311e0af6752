"""Names in devcluster's OpenAPI v3 documents, as kube-apiserver spells them.

The document constants (version, info, meta/v1 schema names, content types), schema keys
(``io.k8s.api.core.v1.ConfigMap``, ``com.example.deployments.v1alpha1.Darkroom``), operation-id stems,
tags, ``$ref`` helpers and GVK entries. Used by the other modules of ``devcluster.openapi``.
"""

from __future__ import annotations

from typing import Any

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
