"""Field paths and sets: the types (:data:`FieldPath`, :data:`FieldSet`), the server-owned metadata no manager
owns, FieldsV1 (``f:``/``k:``/``v:``/``i:`` elements) to sets of paths and back, and a path as kube prints it
(``.spec.containers[name="app"].image``). The base of ``devcluster.fieldmanagement``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from devcluster import gofmt

# --------------------------------------------------------------------------------------------
# FieldsV1 <-> set


FieldPath = tuple[str, ...]
FieldSet = set[FieldPath]


_SERVER_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    }
)
_STRIPPED: frozenset[FieldPath] = frozenset(
    {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {("f:metadata", "f:" + name) for name in _SERVER_METADATA}
)
# Key fields kube's OpenAPI defaults, so an applied item that omits them still matches the live one.
_KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}

_MISSING: Any = object()


def fields_to_set(fields: dict[str, Any] | None) -> FieldSet:
    """Decode a FieldsV1 object into a set of paths (``"."`` marks an owned inner node)."""
    out: FieldSet = set()

    def walk(node: dict[str, Any], prefix: FieldPath) -> None:
        for key, child in node.items():
            if key == ".":
                if prefix:
                    out.add(prefix)
                continue
            path = (*prefix, key)
            if isinstance(child, dict) and child:
                walk(child, path)
            else:
                out.add(path)

    if isinstance(fields, dict):
        walk(fields, ())
    return out


def _elem_rank(elem: str) -> tuple[int, str]:
    return ({"f": 0, "k": 1, "v": 2}.get(elem[:1], 3), elem)


def _trie(paths: Iterable[FieldPath]) -> dict[Any, Any]:
    """Nested dict: element -> node; a node's ``None`` key marks membership."""
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for elem in path:
            node = node.setdefault(elem, {})
        node[None] = True
    return root


def set_to_fields(paths: Iterable[FieldPath]) -> dict[str, Any]:
    """Encode a set of paths as FieldsV1 (``"."`` on owned nodes that also have owned children)."""

    def emit(node: dict[Any, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        children = sorted((k for k in node if k is not None), key=_elem_rank)
        if node.get(None) and children:
            out["."] = {}
        for key in children:
            out[key] = emit(node[key])
        return out

    root = _trie(paths)
    root.pop(None, None)
    return emit(root)


def _iterate(paths: Iterable[FieldPath]) -> Iterator[FieldPath]:
    """Paths in structured-merge-diff's Set.Iterate order: members of a level, then children."""

    def walk(node: dict[Any, Any], prefix: FieldPath) -> Iterator[FieldPath]:
        keys = sorted((k for k in node if k is not None), key=_elem_rank)
        for key in keys:
            if node[key].get(None):
                yield (*prefix, key)
        for key in keys:
            yield from walk(node[key], (*prefix, key))

    yield from walk(_trie(paths), ())


def _value_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return gofmt.quote(value)
    if isinstance(value, float):
        return gofmt.format_float(value)
    if isinstance(value, int):
        return str(value)
    return orjson.dumps(value).decode()


def field_path_string(path: FieldPath) -> str:
    """A path as kube prints it: ``.spec.containers[name="app"].image``, ``.metadata.finalizers[="x"]``."""
    parts: list[str] = []
    for elem in path:
        kind, text = elem[:2], elem[2:]
        if kind == "f:":
            parts.append("." + text)
        elif kind == "k:":
            keys = json.loads(text)
            parts.append("[" + ",".join(f"{name}={_value_string(v)}" for name, v in keys.items()) + "]")
        elif kind == "v:":
            parts.append(f"[={_value_string(json.loads(text))}]")
        else:
            parts.append(elem)
    return "".join(parts)
