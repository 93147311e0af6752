"""The real kube-apiserver's OpenAPI v3 documents for devcluster's built-in group/versions.

``builtin_openapi/`` holds, per group/version, the document Kubernetes v1.37.2 serves at
``/openapi/v3/<api/v1|apis/GROUP/VERSION>`` trimmed to the resources devcluster serves, plus
``go_types.json.gz`` (the Go struct and type names kube's decoding errors print); its README says
where they come from and ``scripts/gen_builtin_openapi.py`` regenerates them.

Read lazily and once per process: a document when ``/openapi/v3`` is first asked for it
(``openapi/``), schemas and Go types when the first object of a kind is decoded
(``decoding.py``), :func:`definitions` when a custom resource's document needs the meta/v1 and
autoscaling/v1 schemas (``openapi/`` takes them from here rather than keeping a copy). What these
functions return is shared: callers must not mutate it.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from typing import Any

import orjson

DIRECTORY = Path(__file__).resolve().parent / "builtin_openapi"
SOURCE_VERSION = "v1.37.2"


def file_name(group_version: str) -> str:
    """``api_v1.json.gz`` / ``apis_apps_v1.json.gz``: the bundled document of ``group_version``."""
    key = f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"
    return key.replace("/", "_") + ".json.gz"


def _read(name: str) -> Any:
    path = DIRECTORY / name
    if not path.exists():
        return None
    return orjson.loads(gzip.decompress(path.read_bytes()))


@functools.cache
def document(group_version: str) -> dict[str, Any] | None:
    """The bundled OpenAPI v3 document of ``group_version`` (None when none is bundled)."""
    found = _read(file_name(group_version))
    return found if isinstance(found, dict) else None


def schemas(group_version: str) -> dict[str, Any]:
    """``components.schemas`` of the bundled document (empty when none is bundled)."""
    doc = document(group_version)
    return doc["components"]["schemas"] if doc else {}


@functools.cache
def kind_schemas(group_version: str) -> dict[str, str]:
    """kind -> schema name, from the schemas' ``x-kubernetes-group-version-kind`` in ``group_version``."""
    group, _, version = group_version.rpartition("/")
    found: dict[str, str] = {}
    for name, schema in schemas(group_version).items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            if gvk.get("group") == group and gvk.get("version") == version:
                found[gvk["kind"]] = name
    return found


@functools.cache
def definitions() -> dict[str, Any]:
    """Every bundled ``components.schemas`` entry by name (the Kubernetes definitions: each document holds
    the same text for a name; ``x-kubernetes-group-version-kind`` lists may differ between documents)."""
    found: dict[str, Any] = {}
    for path in sorted(DIRECTORY.glob("api*.json.gz")):
        doc = _read(path.name)
        if isinstance(doc, dict):
            for name, schema in doc["components"]["schemas"].items():
                found.setdefault(name, schema)
    return found


@functools.cache
def go_types() -> dict[str, dict[str, list[str]]]:
    """schema name -> field -> ``["Struct:Go path segment", Go type, Go type of its items/values, ...]``."""
    found = _read("go_types.json.gz")
    return found if isinstance(found, dict) else {}
