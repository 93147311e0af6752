"""``prune``: apiextensions-apiserver's pruning of fields the structural schema does not know
(``x-kubernetes-preserve-unknown-fields``, embedded resources, ``additionalProperties``).
"""

from __future__ import annotations

import copy
from typing import Any

from devcluster.schemas.paths import _META_FIELDS, EMBEDDED, PRESERVE, _additional, _child, _index, _schema

# --------------------------------------------------------------------------- pruning


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return ``(pruned copy of obj, sorted paths of the dropped fields)``.

    The root is treated as an embedded resource: ``apiVersion``/``kind`` (if strings) and
    ``metadata`` (if an object) are kept whatever the schema says; the metadata's own fields are
    not looked at here.
    """
    out = copy.deepcopy(obj)
    root = dict(schema or {})
    root[EMBEDDED] = True
    pruned: list[str] = []
    _prune(out, root, "", pruned)
    return out, sorted(pruned)


def _is_embedded_meta(key: str, value: Any) -> bool:
    if key in ("apiVersion", "kind"):
        return isinstance(value, str)
    if key == "metadata":
        return isinstance(value, dict)
    return False


def _prune(x: Any, s: dict[str, Any] | None, path: str, pruned: list[str]) -> None:
    if s is not None and s.get(PRESERVE) is True:
        _skip_prune(x, s, path, pruned)
        return
    if isinstance(x, dict):
        if s is None:
            for key in list(x):
                pruned.append(_child(path, key))
                del x[key]
            return
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for key in list(x):
            value = x[key]
            if s.get(EMBEDDED) and _is_embedded_meta(key, value):
                continue
            if key in props:
                _prune(value, _schema(props[key]), _child(path, key), pruned)
            elif isinstance(extra, dict):
                _prune(value, extra, _child(path, key), pruned)
            elif extra is True:
                continue
            else:
                pruned.append(_child(path, key))
                del x[key]
    elif isinstance(x, list):
        items = None if s is None else _schema(s.get("items"))
        for i, item in enumerate(x):
            _prune(item, items, _index(path, i), pruned)


def _skip_prune(x: Any, s: dict[str, Any] | None, path: str, pruned: list[str]) -> None:
    """Below ``x-kubernetes-preserve-unknown-fields``: unknown keys stay, known ones are pruned."""
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        extra = _additional(s)
        for key, value in x.items():
            if s.get(EMBEDDED) and key in _META_FIELDS:
                continue
            if key in props:
                _prune(value, _schema(props[key]), _child(path, key), pruned)
            elif extra is not None:
                _prune(value, extra, _child(path, key), pruned)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for i, item in enumerate(x):
            _skip_prune(item, items, _index(path, i), pruned)
