"""Server-side apply's typed view of a built-in apply configuration (structured-merge-diff).

Before merging, kube-apiserver converts an apply configuration into a typed value against the
kind's schema (``typeConverter.ObjectToTyped``). A field the schema does not declare or a value
of the wrong shape fails the request with a 500 and structured-merge-diff's messages, whatever
``fieldValidation`` says::

    failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicass: field not declared in schema

After the merge, the merged object is converted to the Go type (``decoding.UNSTRUCTURED``);
errors there (a bad quantity, ``1.5`` replicas) are :func:`conversion_error`.

structured-merge-diff walks maps in Go's random order and stops at the first undeclared field
of a map; devcluster walks them in sorted order, so with several problems in one object it
reports a deterministic subset. List items are named the way structured-merge-diff names them:
by their keys (``containers[name="web"]``, from ``x-kubernetes-list-map-keys`` or the patch merge
key), by value in sets (``[="x"]``), by index otherwise. Used by ``writing/``.
"""

from __future__ import annotations

import datetime
from typing import Any

import orjson

from devcluster import gofmt
from devcluster.errors import StatusError
from devcluster.typenodes import ANY, BOOL, FLOAT, INT32, INT64, INT_OR_STRING, LIST, MAP, QUANTITY, STRUCT, Node


class UnknownStatusError(StatusError):
    """A plain Go error turned into a Status by kube-apiserver: no reason (``StatusReasonUnknown``)."""

    def body(self) -> dict[str, Any]:
        body = super().body()
        body.pop("reason", None)
        return body


def _object(config: dict[str, Any], group_version: str, kind: str) -> str:
    meta = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    group, _, version = group_version.rpartition("/")
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {group}/{version}, Kind={kind}"


def check(config: dict[str, Any], root: Node, *, group_version: str, kind: str) -> None:
    """Raise the 500 kube-apiserver answers when ``config`` does not fit the kind's schema."""
    found: list[str] = []
    _walk(config, root, "", found)
    if found:
        detail = found[0] if len(found) == 1 else "errors:\n  " + "\n  ".join(found)
        raise UnknownStatusError(500, "", f"failed to create typed patch object ({_object(config, group_version, kind)}): {detail}")


def conversion_error(config: dict[str, Any], message: str, *, group_version: str, kind: str) -> StatusError:
    """The 500 for a merged object the Go type cannot hold (``message``: the converter's error)."""
    group, _, version = group_version.rpartition("/")
    return UnknownStatusError(
        500,
        "",
        f"failed to convert new object ({_object(config, group_version, kind)}) to proper version: "
        f"unable to convert unstructured object to {group}/{version}, Kind={kind}: {message}",
    )


def _held(value: Any) -> str:
    """``%v`` of structured-merge-diff's ``&valueUnstructured{Value: value}``."""
    return "&{" + gofmt.format_value(value) + "}"


def _item_name(item: Any, node: Node, index: int) -> str:
    if node.list_type == "set":
        return f"[={orjson.dumps(item).decode()}]"
    if node.list_type == "map" and isinstance(item, dict) and all(key in item for key in node.list_keys):
        return "[" + ",".join(f"{key}={orjson.dumps(item[key]).decode()}" for key in node.list_keys) + "]"
    return f"[{index}]"


def _walk_map(value: Any, node: Node, path: str, found: list[str]) -> None:
    """A struct's or map's entries, in key order; the first field the schema does not declare ends the walk."""
    if not isinstance(value, dict):
        found.append(f"{path}: expected map, got {_held(value)}")
        return
    for key in sorted(value):
        if node.kind == MAP:
            assert node.elem is not None
            _walk(value[key], node.elem, f"{path}.{key}", found)
            continue
        field = node.fields.get(key)
        if field is None:
            if not node.preserve:
                found.append(f"{path}.{key}: field not declared in schema")
                return
            continue
        _walk(value[key], field.node, f"{path}.{key}", found)


def _walk(value: Any, node: Node, path: str, found: list[str]) -> None:
    if value is None:
        return
    kind = node.kind
    if kind in (STRUCT, MAP):
        _walk_map(value, node, path, found)
    elif kind == LIST:
        if not isinstance(value, list):
            found.append(f"{path}: expected list, got {_held(value)}")
            return
        assert node.elem is not None
        for i, item in enumerate(value):
            _walk(item, node.elem, path + _item_name(item, node, i), found)
    elif kind in (INT32, INT64, FLOAT):
        if isinstance(value, bool) or not isinstance(value, int | float):
            found.append(f"{path}: expected numeric (int or float), got {gofmt.type_name(value)}")
    elif kind == BOOL:
        if not isinstance(value, bool):
            found.append(f"{path}: expected boolean, got {_held(value)}")
    elif kind in (QUANTITY, INT_OR_STRING, ANY):
        return  # untyped scalars (or anything) in structured-merge-diff's schema
    elif not isinstance(value, str | datetime.date):  # a date: an unquoted YAML timestamp, a string in Go
        found.append(f"{path}: expected string, got &value.valueUnstructured{{Value:{gofmt.go_sharp(value)}}}")
