"""The public API: :func:`columns_for` a resource and :func:`table` (the ``meta.k8s.io/v1`` Table envelope,
``includeObject``, suppressed headers).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from devcluster.printing.builtins import _BUILTIN_COLUMNS, _DEFAULT_COLUMNS
from devcluster.printing.cells import Column, _meta
from devcluster.printing.custom import _custom_columns
from devcluster.resources import ResourceType

# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def columns_for(resource: ResourceType) -> list[Column]:
    """The columns kube-apiserver prints for ``resource`` (all priorities; the server prints wide)."""
    if resource.is_custom:
        return _custom_columns(resource)
    return list(_BUILTIN_COLUMNS.get((resource.group, resource.plural), _DEFAULT_COLUMNS))


def table(
    resource: ResourceType,
    objects: list[dict[str, Any]],
    *,
    include_object: str,
    now: datetime,
    list_meta: dict[str, Any],
    include_definitions: bool = True,
    api_version: str = "meta.k8s.io/v1",
) -> dict[str, Any]:
    """A ``meta.k8s.io`` Table for ``objects``.

    ``include_object`` is the ``includeObject`` query parameter: ``"Metadata"`` (or ``""``) puts a
    PartialObjectMetadata in each row, ``"Object"`` the object itself, ``"None"`` a null ``object``
    (Go's RawExtension marshals an empty object as ``null``). Anything else raises ValueError with
    kube's BadRequest message. ``include_definitions=False`` (watch events after the first) gives
    ``"columnDefinitions": null``, as kube's ``NoHeaders`` does.
    """
    if include_object not in ("", "Metadata", "Object", "None"):
        raise ValueError(f"unrecognized includeObject value: {include_object!r}".replace("'", '"'))
    columns = columns_for(resource)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [column.cell(obj, now) for column in columns]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": _meta(obj)}
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": list_meta,
        "columnDefinitions": [column.definition() for column in columns] if include_definitions else None,
        "rows": rows,
    }
