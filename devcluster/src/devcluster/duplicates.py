"""Duplicate fields of a JSON request body, which ``fieldValidation`` reports like unknown fields.

kube-apiserver's strict JSON decoding notices a key repeated in one object (``duplicate field
"metadata.name"``); Python's JSON parsers keep the last one silently. :func:`loads` parses a body
and, only when a cheap count says a key is repeated, parses it again keeping every key, so the
decoder can report each repetition where it occurs (``Duplicates.orders``) and custom resources,
which have no typed decoding, can list them (``Duplicates.paths``). Called by ``serving/``
(create/update bodies) and ``writing/`` (patch bodies); the decoder is ``decoding.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class Duplicates:
    """Duplicate fields of a JSON body: ``orders`` maps an object's path to its keys as sent
    (repeats included), ``paths`` lists the repeated fields in document order."""

    orders: dict[str, list[str]]
    paths: list[str]

    def problems(self) -> list[str]:
        return [f'duplicate field "{path}"' for path in self.paths]


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"(\s*:)?')
_SPACED_COLON = re.compile(rb'"\s+:')


def _count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_keys(v) for v in value)
    return 0


def loads(raw: bytes, *, merge: bool = True) -> tuple[Any, Duplicates | None]:
    """Parse a JSON body (``orjson.JSONDecodeError`` if it is not JSON) and find its duplicate fields.

    ``merge``: a repeated object merges into the earlier one, as when Go decodes into a struct
    (approximated, see the module docstring); else the last one wins, as for a patch, which Go
    decodes into ``map[string]interface{}``. Duplicates are rare, so the check is a count: the
    object keys in the text (every string literal is matched in turn, so none is mistaken for
    another) against the keys parsed.
    """
    value = orjson.loads(raw)
    parsed = _count_keys(value)
    # Cheap first: a key directly followed by its colon is a '":' outside strings (inside one, a
    # quote is escaped). Keys spaced from their colon, or a mismatch, take the exact count.
    if not _SPACED_COLON.search(raw) and raw.count(b'":') - raw.count(b'\\":') == parsed:
        return value, None
    found = _STRINGS.findall(raw)
    if len(found) - found.count(b"") == parsed:
        return value, None
    return _with_duplicates(raw, merge)


def _merge(old: Any, new: Any) -> Any:
    """Go decodes a repeated object into the one decoded so far (approximation: lists do not merge)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in new.items():
            old[key] = _merge(old[key], value) if key in old else value
        return old
    return new


def _with_duplicates(raw: bytes, merge: bool) -> tuple[Any, Duplicates]:
    alive: list[dict[str, Any]] = []  # keeps every object alive, so no id() is reused
    orders_by_id: dict[int, list[str]] = {}

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            obj[key] = _merge(obj[key], value) if merge and key in obj else value
        if len(obj) != len(pairs):
            orders_by_id[id(obj)] = [key for key, _ in pairs]
        alive.append(obj)
        return obj

    value = json.loads(raw, object_pairs_hook=hook)
    orders: dict[str, list[str]] = {}
    paths: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            order = orders_by_id.get(id(node))
            if order:
                orders[path] = order
            seen: set[str] = set()
            for key in order or list(node):
                child = f"{path}.{key}" if path else key
                if key in seen:
                    paths.append(child)
                    continue
                seen.add(key)
                walk(node[key], child)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")

    walk(value, "")
    return value, Duplicates(orders, paths)
