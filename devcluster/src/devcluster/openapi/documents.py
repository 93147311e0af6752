"""Whole documents: ``/openapi/v3`` (the root with hash-pinned URLs) and one group/version's document.

Built-in kinds serve the bundled kube-apiserver document trimmed to the paths devcluster routes
(``served_paths``); custom resources, and built-ins the bundle lacks, get generated paths and schemas.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from devcluster import bundled_openapi
from devcluster.openapi.names import INFO, OPENAPI_VERSION, openapi_path, schema_name
from devcluster.openapi.operations import resource_paths
from devcluster.openapi.schemas import kind_schema, list_schema, meta_schemas, scale_schemas
from devcluster.resources import ResourceType

# --------------------------------------------------------------------------------------------
# documents


def served_paths(resource: ResourceType) -> set[str]:
    """The path templates devcluster routes for ``resource`` (``serving/``): collection, item, the
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
