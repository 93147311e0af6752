"""``apply_defaults``: apiextensions-apiserver's defaulting, top-down, after dropping non-nullable nulls
without a default.
"""

from __future__ import annotations

import copy
from typing import Any

from devcluster.schemas.paths import _META_FIELDS, _additional, _schema

# --------------------------------------------------------------------------- defaulting


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``obj`` with the schema's ``default`` values filled in (see module doc)."""
    out = copy.deepcopy(obj)
    _prune_nulls(out, schema, root=True)
    _default(out, schema, root=True)
    return out


def _is_non_nullable_null(value: Any, s: dict[str, Any]) -> bool:
    return value is None and not s.get("nullable")


def _prune_nulls(x: Any, s: dict[str, Any] | None, *, root: bool = False) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        extra = _additional(s)
        for key in list(x):
            if root and key in _META_FIELDS:
                continue
            if key in props:
                sub = _schema(props[key])
                if sub is None:
                    continue
                if x[key] is None and sub.get("default") is None and not sub.get("nullable"):
                    del x[key]
                else:
                    _prune_nulls(x[key], sub)
            elif extra is not None:
                if x[key] is None and not extra.get("nullable"):
                    del x[key]
                else:
                    _prune_nulls(x[key], extra)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for item in x:
            _prune_nulls(item, items)


def _default(x: Any, s: dict[str, Any] | None, *, root: bool = False) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for key, prop in props.items():
            if root and key in _META_FIELDS:
                continue
            if not isinstance(prop, dict) or prop.get("default") is None:
                continue
            if key not in x or _is_non_nullable_null(x[key], prop):
                x[key] = copy.deepcopy(prop["default"])
        extra = _additional(s)
        for key, value in x.items():
            if root and key in _META_FIELDS:
                continue
            if key in props:
                _default(value, _schema(props[key]))
            elif extra is not None:
                _default(value, extra)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for item in x:
            _default(item, items)
