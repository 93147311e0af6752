"""The CRDs of ``crds/``, read once per process: the one description of every kind's fields.

:func:`crd_schema` gives the ``openAPIV3Schema`` of a kind's storage version; :func:`spec_schema` the schema
of an object below ``spec`` by its spec path. From them (and each kind's overlay in :mod:`kinds`) are
derived the API's request and response schemas (:mod:`backend.core.schemas.derived`), the generic
friendly ↔ CR conversion (:mod:`backend.core.conversions.specs`) and the dashboard's forms
(:mod:`backend.dashboard.forms`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

import yaml

import productfiles
from kinds.fields import ITEM, Overlay


class UnknownKind(LookupError):
    """No CRD in ``crds/`` describes the kind."""


@functools.cache
def crd_documents() -> tuple[Mapping[str, Any], ...]:
    found: list[Mapping[str, Any]] = []
    for path in productfiles.crd_files():
        found.extend(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")
    return tuple(found)


def crd_schema(kind: str) -> Mapping[str, Any]:
    """The ``openAPIV3Schema`` of the storage version of ``kind``'s CRD in ``crds/`` (files read once per process)."""
    for crd in crd_documents():
        if crd["spec"]["names"]["kind"] == kind:
            version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
            schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
            return schema
    raise UnknownKind(f"no CRD of kind {kind} in {productfiles.crd_directory()}")


def spec_schema(kind: str, path: str = "") -> Mapping[str, Any]:
    """The schema of ``spec`` (``path`` empty) or of the object at ``path`` below it (``source``)."""
    schema: Mapping[str, Any] = crd_schema(kind)["properties"]["spec"]
    for name in filter(None, path.split(".")):
        schema = schema["properties"][name]
    return schema


class Member(NamedTuple):
    """One field of an object of a kind's spec, as the API shows it."""

    name: str  # its friendly name ("state")
    path: str  # its friendly path ("source.baseUrl")
    spec_name: str  # its name in the CR ("taskState")
    schema: Mapping[str, Any]  # its CRD schema
    required: bool  # the CRD requires it


@functools.cache
def members(overlay: Overlay, path: str = "") -> tuple[Member, ...]:
    """The fields of the object at friendly ``path`` ('': the spec) the API shows, in CRD order (hidden ones left out);
    of a map, the keys the overlay names (:attr:`kinds.fields.Overlay.keys`)."""
    by_friendly = {friendly: spec for spec, friendly in overlay.renames.items()}
    spec_path = by_friendly.get(path, path)
    schema = spec_schema(overlay.kind, spec_path)
    if "properties" not in schema:  # a map: the keys the overlay names, each with the map's value schema
        value = schema["additionalProperties"]
        return tuple(Member(key, f"{path}.{key}", key, value, False) for key in overlay.keys[path])
    required = set(schema.get("required") or ())
    found = []
    for name, prop in schema["properties"].items():
        inner = f"{spec_path}.{name}" if spec_path else name
        if inner in overlay.hidden:
            continue
        friendly = overlay.friendly(inner)
        found.append(Member(friendly.rsplit(".", 1)[-1], friendly, name, prop, name in required))
    return tuple(found)


def absent_is_null(prop: Mapping[str, Any]) -> bool:
    """An object a stored spec may lack that has fields it requires and no CRD default (a Postgresql's
    ``passwordSecretRef``) is null when absent: there is nothing of it to show (:func:`backend.core.schemas.derived.response_field`,
    :func:`backend.core.conversions.specs.friendly_spec`). Any other object is always shown, maybe empty."""
    return prop.get("type") == "object" and bool(prop.get("required")) and "default" not in prop


def unknown_paths(overlay: Overlay) -> list[str]:
    """The paths an overlay names that its CRD does not have (a field renamed or removed in the CRD only): a stale overlay."""
    known: set[str] = set()

    def walk(path: str) -> None:
        for member in members(overlay, path):
            known.add(member.path)
            if member.schema.get("type") == "object" and ("properties" in member.schema or member.path in overlay.keys):
                walk(member.path)
            if member.schema.get("type") == "array":
                known.add(member.path + ITEM)

    walk("")
    parents = {p.rpartition(".")[0] for p in overlay.write_only}
    named = [*overlay.fields, *overlay.renames.values(), *(p for p in parents if p), *overlay.keys]
    return [p for p in named if p not in known]
