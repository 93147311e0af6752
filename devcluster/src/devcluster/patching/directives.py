"""Strategic merge patch directives and their checks: ``$patch``, ``$retainKeys``,
``$deleteFromPrimitiveList``, ``$setElementOrder``, apimachinery's sentinel errors, Go's ``==`` on decoded
JSON and the cleaning of directives out of a patch.
"""

from __future__ import annotations

from typing import Any, NoReturn

from devcluster import gofmt
from devcluster.patching.common import PatchError

# --------------------------------------------------------------------------------------------
# Strategic merge patch (port of k8s.io/apimachinery/pkg/util/strategicpatch, server side)
# --------------------------------------------------------------------------------------------

_DIRECTIVE = "$patch"
_DELETE = "delete"
_REPLACE = "replace"
_MERGE = "merge"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

# apimachinery's mergepatch sentinel errors (interpretStrategicMergePatchError maps them to 400/422).
_ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"
_ERR_RETAIN_KEYS = "invalid patch format of retainKeys"
_ERR_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
_ERR_LIST_OF_LISTS = "lists of lists are not supported"

_MAP_KIND = "map"


def _fail(message: str, code: int = 400) -> NoReturn:
    raise PatchError(code, message)


def _bad_arg_type(expected: str, actual: Any) -> NoReturn:
    _fail(f"expected a {expected}, but received a {gofmt.type_name(actual)}")


def _no_merge_key(item: dict[str, Any], merge_key: str) -> NoReturn:
    _fail(f"map: {gofmt.format_value(item, 'float64')} does not contain declared merge key: {merge_key}")


def _bad_patch_type(directive: Any, item: dict[str, Any]) -> NoReturn:
    # not one of mergepatch's sentinel errors, so kube-apiserver answers it as a plain 500
    _fail(f"unknown patch type: {gofmt.format_s(directive)} in map: {gofmt.format_value(item, 'float64')}", 500)


def _go_eq(left: Any, right: Any) -> bool:
    """Go ``==`` on decoded JSON values: bools never equal numbers, ints equal floats (both float64)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return float(left) == float(right)
    if type(left) is not type(right):
        return False
    return bool(left == right)


def _kind(value: Any) -> str:
    """``reflect.Kind`` class of a decoded JSON value, as far as merging cares."""
    if isinstance(value, dict):
        return _MAP_KIND
    if isinstance(value, list):
        return "slice"
    return gofmt.type_name(value)


def _is_directive_key(key: str) -> bool:
    return (
        key in (_DIRECTIVE, _RETAIN_KEYS) or key.startswith(_DELETE_FROM_PRIMITIVE_LIST + "/") or key.startswith(_SET_ELEMENT_ORDER + "/")
    )


def _extract_key(key: str, prefix: str) -> str:
    parts = key.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        _fail(_ERR_PRIMITIVE_LIST if prefix == _DELETE_FROM_PRIMITIVE_LIST else _ERR_SET_ELEMENT_ORDER)
    return parts[1]


def _slice_element_kind(*slices: list[Any]) -> str:
    """apimachinery's ``sliceElementType``: all elements must share one type, and not be lists."""
    previous: str | None = None
    for items in slices:
        for item in items:
            current = gofmt.type_name(item)
            if previous is None:
                previous = current
                if isinstance(item, list):
                    _fail(_ERR_LIST_OF_LISTS, 422)
            elif previous != current:
                _fail(f"list element types are not identical: {gofmt.format_value(list(slices), 'float64')}")
    if previous is None:
        _fail("no elements in any of the given slices")
    return _MAP_KIND if previous == "map[string]interface {}" else previous


def _clean(value: Any) -> tuple[Any, bool]:
    """A fresh copy of a patch value with directives resolved/removed and null map values dropped.

    Returns ``(value, keep)``; ``keep`` is false for a ``{"$patch": "delete"}`` map. Mirrors
    apimachinery's ``removeDirectives`` + ``discardNullValuesFromPatch`` for values the original
    object does not have, plus typed decoding dropping directive keys.
    """
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            directive = value[_DIRECTIVE]
            if directive == _REPLACE:
                return _clean_map_body({k: v for k, v in value.items() if k != _DIRECTIVE}), True
            if directive == _DELETE:
                return None, False
            _bad_patch_type(directive, value)
        return _clean_map_body(value), True
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            if isinstance(item, dict) and _DIRECTIVE in item:
                if item[_DIRECTIVE] not in (_DELETE, _REPLACE, _MERGE):
                    _bad_patch_type(item[_DIRECTIVE], item)
                continue
            cleaned, keep = _clean(item)
            if keep:
                out.append(cleaned)
        return out, True
    return value, True


def _clean_map_body(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None or _is_directive_key(key):
            continue
        cleaned, keep = _clean(item)
        if keep:
            out[key] = cleaned
    return out


def _clean_list(value: list[Any]) -> list[Any]:
    cleaned, _ = _clean(value)
    assert isinstance(cleaned, list)
    return cleaned
