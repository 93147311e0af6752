"""JSON merge patch (RFC 7386, ``application/merge-patch+json``): the one implementation of the product.

The API's PATCH (``backend.core.validation``) and devcluster's ``application/merge-patch+json`` (``devcluster.patching``)
both apply it. A leaf package: it imports nothing else of ours, so both may import it.

* :func:`merge_patch` - RFC 7386 section 2's ``MergePatch(Target, Patch)``: a patch that is not an object replaces
  the target; an object patch merges into the target key by key (a target that is not an object is taken as ``{}``),
  a ``null`` value removes its key, and nested objects merge the same way.
* :func:`copy_json` - a deep copy of a decoded JSON value (dicts, lists, scalars), in plain dicts and lists
  (a read-only cached body's dict subclass and tuples, ``cluster.bodies.freeze``, come out mutable).

Copying semantics: neither the target nor the patch is ever mutated, and the result shares no dict or list with them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["copy_json", "merge_patch"]


def copy_json(value: Any) -> Any:
    """Deep copy of a decoded JSON value (faster than ``copy.deepcopy`` for dicts, lists and scalars)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(v) for v in value]
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with the RFC 7386 merge ``patch`` applied: objects merge per key, ``null`` removes, anything else replaces."""
    return _merge_into(copy_json(target), patch)


def _merge_into(target: Any, patch: Any) -> Any:
    # ``target`` is owned (already a copy) and may be changed in place; ``patch`` is only read.
    if not isinstance(patch, dict):
        return copy_json(patch)
    result: dict[str, Any] = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_into(result.get(key), value)
    return result
