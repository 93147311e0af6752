"""The three PATCH body formats kube-apiserver accepts, applied to plain JSON-like objects.

This module owns the *patch arithmetic* of devcluster: the request handlers apply a PATCH body to
the stored object with it, then validate and persist the result themselves.

* :func:`merge_patch` -- ``application/merge-patch+json`` (RFC 7386; ``null`` deletes a key).
* :func:`json_patch` -- ``application/json-patch+json`` (RFC 6902, through the ``jsonpatch``
  library). kube-apiserver answers 400 when the body is not a list of operation objects and 422
  (with the patch library's text) when an operation cannot be applied.
* :func:`strategic_merge_patch` -- ``application/strategic-merge-patch+json``, a port of
  ``k8s.io/apimachinery/pkg/util/strategicpatch`` (the server-side ``StrategicMergeMapPatch``):
  maps merge per key, lists merge according to a :class:`~devcluster.structure.Structure`
  (``map`` lists by merge key, ``set`` lists by value, ``atomic`` lists are replaced), and the
  directives ``$patch`` (``replace``/``delete``), ``$deleteFromPrimitiveList/<field>``,
  ``$setElementOrder/<field>`` and ``$retainKeys`` are honoured and never left in the result.

Every function is pure: inputs are never mutated and the result shares no mutable object with them.
Failures raise :class:`PatchError` carrying the HTTP status kube-apiserver answers with.

Deliberate fidelity notes (apimachinery behaviour, kept on purpose):

* Without ``$setElementOrder``, items a strategic patch adds to a merging list are placed *before*
  the items only the server had (apimachinery's ``normalizeElementOrder``/``mergeSortedSlice``);
  kubectl apply sends ``$setElementOrder`` to control the order.
* ``{"$patch": "merge"}`` is rejected, as apimachinery rejects it (only ``replace`` and ``delete``
  are accepted in a map; ``merge`` in a list item gives "merging lists cannot yet be specified").

Error codes follow ``interpretStrategicMergePatchError``: malformed directive lists are 400 and
lists of lists 422. Errors kube-apiserver passes through unclassified (unknown ``$patch`` value,
missing merge key, ``$setElementOrder`` mismatch; a 500 there) are reported as 400 here.

Where apimachinery would store a directive verbatim (its typed decoding drops it later) devcluster,
which stores unstructured objects, drops it instead: a ``{"$patch": "delete"}`` map removes the
field, and directive keys or ``null`` values inside newly added values are not kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import jsonpatch
import jsonpointer

from devcluster import gofmt
from devcluster.structure import Path, Structure, TableStructure

__all__ = ["PatchError", "json_patch", "merge_patch", "strategic_merge_patch"]


class PatchError(Exception):
    """A patch that cannot be applied; .code is the HTTP status kube-apiserver uses (400 or 422), .message the text."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"PatchError({self.code!r}, {self.message!r})"


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    """Deep copy of a JSON-like value (faster than ``copy.deepcopy`` for dict/list/scalars)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch
# --------------------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch: objects merge per key, ``null`` deletes, anything else replaces."""
    return _merge_patch(_copy(target), patch)


def _merge_patch(target: Any, patch: Any) -> Any:
    # ``target`` is owned (already a copy); ``patch`` is read-only.
    if not isinstance(patch, dict):
        return _copy(patch)
    result: dict[str, Any] = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


# --------------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# --------------------------------------------------------------------------------------------

_JSON_KIND = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def json_patch(target: Any, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch (a list of operation objects).

    A body that is not a list of objects is a 400 (kube-apiserver cannot decode it); an operation
    that cannot be applied (missing path, failed ``test``, bad index, unknown op) is a 422 carrying
    the patch library's message. A ``null`` body is an empty patch, as in Go.
    """
    if operations is None:
        return _copy(target)
    if not isinstance(operations, list):
        kind = _JSON_KIND.get(type(operations), "value")
        raise PatchError(400, f"error decoding patch: json: cannot unmarshal {kind} into Go value of type []handlers.jsonPatchOp")
    for op in operations:
        if not isinstance(op, dict) and op is not None:
            kind = _JSON_KIND.get(type(op), "value")
            raise PatchError(400, f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Operation")
    if any(op is None for op in operations):
        raise PatchError(422, "Unexpected kind: unknown")
    try:
        document = _copy(target)
        for op in _copy(operations):
            if op.get("op") == "replace" and _missing_map_key(document, op.get("path")):
                # evanphx/json-patch v4 (kube's) replaces a missing key of an object: it adds it
                op = {**op, "op": "add"}
            document = jsonpatch.JsonPatch([op]).apply(document, in_place=True)
        return document
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise PatchError(422, str(exc)) from exc
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise PatchError(422, str(exc) or type(exc).__name__) from exc


def _missing_map_key(document: Any, path: Any) -> bool:
    """True when ``path`` names a key its (existing) parent object does not have."""
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    try:
        pointer = jsonpointer.JsonPointer(path)
        parent = jsonpointer.JsonPointer.from_parts(pointer.parts[:-1]).resolve(document)
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError):
        return False
    return isinstance(parent, dict) and bool(pointer.parts) and pointer.parts[-1] not in parent


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


# ---- ordering (normalizeElementOrder & friends) ---------------------------------------------


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    """apimachinery's ``index``: position of ``value`` in ``items`` (by merge key for maps), or -1."""

    def key_of(item: Any) -> Any:
        if kind == _MAP_KIND:
            return item.get(merge_key) if isinstance(item, dict) else None
        return item

    wanted = key_of(value)
    for i, item in enumerate(items):
        if _go_eq(wanted, key_of(item)):
            return i
    return -1


def _go_stable_sort(data: list[Any], less: Callable[[int, int], bool]) -> None:
    """Go's ``sort.SliceStable`` (insertion sort blocks of 20 + SymMerge), in place, index-based ``less``.

    Reproduced exactly because apimachinery's comparators are not strict weak orders when an item
    is missing from the order list, so the resulting order depends on the algorithm.
    """

    def swap(i: int, j: int) -> None:
        data[i], data[j] = data[j], data[i]

    def insertion_sort(a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and less(j, j - 1):
                swap(j, j - 1)
                j -= 1

    def swap_range(a: int, b: int, n: int) -> None:
        for i in range(n):
            swap(a + i, b + i)

    def rotate(a: int, m: int, b: int) -> None:
        i = m - a
        j = b - m
        while i != j:
            if i > j:
                swap_range(m - i, m, j)
                i -= j
            else:
                swap_range(m - i, m + j - i, i)
                j -= i
        swap_range(m - i, m, i)

    def sym_merge(a: int, m: int, b: int) -> None:
        if m - a == 1:
            i, j = m, b
            while i < j:
                h = (i + j) >> 1
                if less(h, a):
                    i = h + 1
                else:
                    j = h
            for k in range(a, i - 1):
                swap(k, k + 1)
            return
        if b - m == 1:
            i, j = a, m
            while i < j:
                h = (i + j) >> 1
                if not less(m, h):
                    i = h + 1
                else:
                    j = h
            for k in range(m, i, -1):
                swap(k, k - 1)
            return
        mid = (a + b) >> 1
        n = mid + m
        if m > mid:
            start, r = n - b, mid
        else:
            start, r = a, m
        p = n - 1
        while start < r:
            c = (start + r) >> 1
            if not less(p - c, c):
                start = c + 1
            else:
                r = c
        end = n - start
        if start < m < end:
            rotate(start, m, end)
        if a < start < mid:
            sym_merge(a, start, mid)
        if mid < end < b:
            sym_merge(mid, end, b)

    n = len(data)
    block = 20
    a, b = 0, block
    while b <= n:
        insertion_sort(a, b)
        a = b
        b += block
    insertion_sort(a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            sym_merge(a, a + block, b)
            a = b
            b += 2 * block
        m = a + block
        if m < n:
            sym_merge(a, m, n)
        block *= 2


def _validate_merge_key_in_lists(merge_key: str, *lists: list[Any]) -> None:
    for items in lists:
        for item in items:
            if not isinstance(item, dict):
                _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                _no_merge_key(item, merge_key)


def _extract_to_delete_items(items: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    delete: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            _bad_arg_type("map[string]interface {}", item)
        if item.get(_DIRECTIVE) == _DELETE:
            delete.append(item)
        else:
            keep.append(item)
    return keep, delete


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    to_delete: list[Any] = []
    if kind == _MAP_KIND:
        _validate_merge_key_in_lists(merge_key, to_sort, order)
        to_sort, to_delete = _extract_to_delete_items(to_sort)
    data = list(to_sort)

    def less(i: int, j: int) -> bool:
        ii = _index(order, data[i], merge_key, kind)
        if ii >= 0:
            ij = _index(order, data[j], merge_key, kind)
            if ij >= 0:
                return ii < ij
        return True

    _go_stable_sort(data, less)
    return data + to_delete


def _merge_sorted_slice(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """Interleave server-only items (``left``) into patch items (``right``) by their live-object order."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _normalize_element_order(
    patch: list[Any], server_only: list[Any], patch_order: list[Any], server_order: list[Any], merge_key: str, kind: str
) -> list[Any]:
    patch = _normalize_slice_order(patch, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted_slice(server_only, patch, server_order, merge_key, kind)


def _partition_primitives(items: list[Any], partition_by: list[Any]) -> tuple[list[Any], list[Any]]:
    present: list[Any] = []
    absent: list[Any] = []
    for item in items:
        (present if any(_go_eq(item, p) for p in partition_by) else absent).append(item)
    return present, absent


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            _fail(f"value for key {i} is not a map.")
        if merge_key in item and _go_eq(item[merge_key], value):
            return i
    return -1


def _partition_maps(items: list[Any], partition_by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    present: list[Any] = []
    absent: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            _bad_arg_type("map[string]interface {}", item)
        if merge_key not in item:
            _no_merge_key(item, merge_key)
        (present if _find_by_key(partition_by, merge_key, item[merge_key]) >= 0 else absent).append(item)
    return present, absent


def _go_deduplicate_scalars(items: list[Any]) -> list[Any]:
    """apimachinery's ``deduplicateScalars`` (swaps the last element into a duplicate's slot)."""
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _go_eq(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


# ---- the merge itself -------------------------------------------------------------------------


class _StrategicMerger:
    def __init__(self, structure: Structure) -> None:
        self.structure = structure

    def _merge_key(self, path: Path) -> tuple[bool, str]:
        """(list merges?, merge key) for the list at ``path``."""
        semantics = self.structure.list_semantics(path)
        if semantics.kind == "map":
            return True, semantics.keys[0] if semantics.keys else ""
        if semantics.kind == "set":
            return True, ""
        return False, ""

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any], path: Path) -> dict[str, Any]:
        """``mergeMap``: ``original`` is owned and updated in place; ``patch`` is read-only."""
        if _DIRECTIVE in patch:
            directive = patch[_DIRECTIVE]
            if directive == _REPLACE:
                return _clean_map_body({k: v for k, v in patch.items() if k != _DIRECTIVE})
            if directive == _DELETE:
                return {}
            _bad_patch_type(directive, patch)
        patch = dict(patch)
        self._apply_retain_keys(original, patch)
        self._apply_set_element_order(original, patch, path)

        for key, patch_value in patch.items():
            field = key
            is_delete_list = False
            if key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
                field = _extract_key(key, _DELETE_FROM_PRIMITIVE_LIST)
                is_delete_list = True
            if patch_value is None:
                original.pop(field, None)
                continue
            if field not in original or _kind(original[field]) != _kind(patch_value):
                if not is_delete_list:
                    self._set_cleaned(original, field, patch_value)
                continue
            child = (*path, field)
            current = original[field]
            if isinstance(current, dict):
                # built-ins merge by their Go patch tags, which know nothing of +mapType/+structType=atomic (SSA's)
                if not isinstance(self.structure, TableStructure) and self.structure.map_is_atomic(child):
                    self._set_cleaned(original, field, patch_value)
                elif patch_value.get(_DIRECTIVE) == _DELETE:
                    del original[field]
                else:
                    original[field] = self.merge_map(current, patch_value, child)
            elif isinstance(current, list):
                original[field] = self.merge_slice_handler(current, patch_value, child, is_delete_list)[0]
            else:
                original[field] = patch_value
        return original

    @staticmethod
    def _set_cleaned(original: dict[str, Any], field: str, patch_value: Any) -> None:
        cleaned, keep = _clean(patch_value)
        if keep:
            original[field] = cleaned
        else:
            original.pop(field, None)

    @staticmethod
    def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
        """``$retainKeys``: drop the original's keys not listed; every set patch key must be listed."""
        if _RETAIN_KEYS not in patch:
            return
        retain = patch.pop(_RETAIN_KEYS)
        if not isinstance(retain, list):
            _fail(_ERR_RETAIN_KEYS)
        for key, value in patch.items():
            if value is None or key.startswith(_DELETE_FROM_PRIMITIVE_LIST) or key.startswith(_SET_ELEMENT_ORDER):
                continue
            if key not in retain:
                _fail(_ERR_RETAIN_KEYS)
        for key in [k for k in original if k not in retain]:
            del original[key]

    def _apply_set_element_order(self, original: dict[str, Any], patch: dict[str, Any], path: Path) -> None:
        """``mergePatchIntoOriginal``: merge each list that has a ``$setElementOrder/<field>`` and order it."""
        for key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
            order = patch.pop(key)
            if not isinstance(order, list):
                _bad_arg_type("[]interface {}", order)
            field = _extract_key(key, _SET_ELEMENT_ORDER)
            found_original = field in original
            found_patch = field in patch
            original_list: list[Any] = []
            patch_list: list[Any] = []
            if found_original:
                if not isinstance(original[field], list):
                    _bad_arg_type("[]interface {}", original[field])
                original_list = original[field]
            if found_patch:
                if not isinstance(patch[field], list):
                    _bad_arg_type("[]interface {}", patch[field])
                patch_list = patch[field]
            child = (*path, field)
            _, merge_key = self._merge_key(child)
            _validate_patch_with_set_order_list(patch_list, order, merge_key)

            # ``view`` is what apimachinery's ``originalFieldValue`` holds after the merge: Go deletes
            # list items and appends new ones in the slice's shared backing array, and the ordering
            # below uses that (partly overwritten) array as the live order. Mirrored for fidelity.
            if found_original and found_patch:
                merged, view = self.merge_slice_handler(original_list, patch_list, child, False)
            elif found_original:
                merged, view = original_list, original_list
            elif found_patch:
                merged, view = _clean_list(patch_list), []
            else:
                continue

            kind = _slice_element_kind(view, patch_list)
            if merge_key:
                patch_items, server_only = _partition_maps(merged, order, merge_key)
            elif kind == _MAP_KIND:
                # A list of objects without a merge key (devcluster's structure calls it atomic):
                # apimachinery cannot order it either; keep the merged list as it is.
                original[field] = merged
                patch.pop(field, None)
                continue
            else:
                patch_items, server_only = _partition_primitives(merged, order)
            original[field] = _normalize_element_order(patch_items, server_only, order, view, merge_key, kind)
            patch.pop(field, None)

    def merge_slice_handler(self, original: list[Any], patch: list[Any], path: Path, is_delete_list: bool) -> tuple[list[Any], list[Any]]:
        """``mergeSliceHandler``: returns the merged list and the Go view of the original slice afterwards."""
        merges, merge_key = self._merge_key(path)
        if not merges and not is_delete_list:  # delete lists apply whatever the field's strategy
            return _clean_list(patch), original
        return self.merge_slice(original, patch, path, merge_key, is_delete_list)

    def merge_slice(
        self, original: list[Any], patch: list[Any], path: Path, merge_key: str, is_delete_list: bool
    ) -> tuple[list[Any], list[Any]]:
        """``mergeSlice``: ``original`` items are owned; ``patch`` is read-only.

        Returns ``(merged, view)`` where ``view`` emulates the caller's Go slice header over the
        backing array that ``deleteMatchingEntries`` and ``append`` wrote into.
        """
        if not original and not patch:
            return original, original
        kind = _slice_element_kind(original, patch)
        if kind != _MAP_KIND:
            if is_delete_list:
                return [item for item in original if not any(_go_eq(item, d) for d in patch)], original
            merged = _go_deduplicate_scalars(original + list(patch))
            patch_items, server_only = _partition_primitives(merged, patch)
            return _normalize_element_order(patch_items, server_only, list(patch), original, merge_key, kind), original

        if not merge_key:
            _fail(f"cannot merge lists without merge key for type {_MAP_KIND}")
        backing = _GoSlice(original)
        plain_patch, replace_with = self._merge_special_elements(backing, patch, merge_key)
        if replace_with is not None:
            # apimachinery continues with the replacement list as "original" and an empty patch.
            return _normalize_element_order([], replace_with, [], replace_with, merge_key, kind), backing.view()
        live = backing.items()
        for item in plain_patch:
            if merge_key not in item:
                _no_merge_key(item, merge_key)
            at = _find_by_key(backing.items(), merge_key, item[merge_key])
            if at >= 0:
                backing.set(at, self.merge_map(backing.items()[at], item, (*path, "[]")))
            else:
                backing.append(_clean(item)[0])
        merged = backing.items()
        live = merged[: len(live)]
        patch_items, server_only = _partition_maps(merged, plain_patch, merge_key)
        return _normalize_element_order(patch_items, server_only, plain_patch, live, merge_key, kind), backing.view()

    @staticmethod
    def _merge_special_elements(backing: _GoSlice, patch: list[Any], merge_key: str) -> tuple[list[Any], list[Any] | None]:
        """``mergeSliceWithSpecialElements``: apply ``$patch`` items (delete by key / replace whole list).

        Returns the patch items without directives and, for a ``replace`` item, the replacement list.
        """
        plain: list[Any] = []
        replace = False
        for item in patch:
            if _DIRECTIVE not in item:
                plain.append(item)
                continue
            directive = item[_DIRECTIVE]
            if directive == _DELETE:
                if merge_key not in item:
                    _no_merge_key(item, merge_key)
                backing.delete_matching(merge_key, item[merge_key])
            elif directive == _REPLACE:
                replace = True
            elif directive == _MERGE:
                _fail("merging lists cannot yet be specified in the patch")
            else:
                _bad_patch_type(directive, item)
        if replace:
            return [], [_clean(item)[0] for item in plain]
        return plain, None


class _GoSlice:
    """A Go slice over a backing array shared with the caller's slice header of the original length.

    ``append(s[:i], s[i+1:]...)`` shifts items left inside the array and appends past the current
    length write into it while there is room; the caller's header (length ``len(original)``) sees
    those writes. Capacity beyond the original length is never visible to that header.
    """

    def __init__(self, original: list[Any]) -> None:
        self._array = list(original)
        self._window = len(original)
        self._extra: list[Any] = []  # items appended past the visible window
        self._length = len(original)  # length of this slice within the array

    def items(self) -> list[Any]:
        return self._array[: self._length] + self._extra

    def view(self) -> list[Any]:
        return list(self._array)

    def set(self, index: int, value: Any) -> None:
        if index < self._length:
            self._array[index] = value
        else:
            self._extra[index - self._length] = value

    def append(self, value: Any) -> None:
        if self._length < self._window:
            self._array[self._length] = value
            self._length += 1
        else:
            self._extra.append(value)

    def delete_matching(self, merge_key: str, value: Any) -> None:
        """``deleteMatchingEntries`` (only ever called before anything is appended)."""
        while True:
            current = self._array[: self._length]
            at = _find_by_key(current, merge_key, value)
            if at < 0:
                return
            self._array[at : self._length - 1] = self._array[at + 1 : self._length]
            self._length -= 1


def _validate_patch_with_set_order_list(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """``validatePatchWithSetOrderList``: patch items must appear in the order list, in the same order."""
    if not order or not patch_list:
        return
    non_delete = _extract_to_delete_items(patch_list)[0] if merge_key else patch_list
    pi = si = 0
    while pi < len(non_delete) and si < len(order):
        item = non_delete[pi]
        if isinstance(item, dict) and _DIRECTIVE in item:
            pi += 1
            continue
        if _merge_key_value_equal(item, order[si], merge_key):
            pi += 1
        si += 1
    if pi < len(non_delete) and si >= len(order):
        shown, wanted = gofmt.format_value(patch_list, "float64"), gofmt.format_value(order, "float64")
        _fail(f"the order in patch list:\n{shown}\n doesn't match {_SET_ELEMENT_ORDER} list:\n{wanted}")


def _merge_key_value_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _go_eq(left, right)
    if not isinstance(left, dict):
        _bad_arg_type("map[string]interface {}", left)
    if not isinstance(right, dict):
        _bad_arg_type("map[string]interface {}", right)
    if merge_key not in left:
        _no_merge_key(left, merge_key)
    if merge_key not in right:
        _no_merge_key(right, merge_key)
    return _go_eq(left[merge_key], right[merge_key])


def strategic_merge_patch(target: dict[str, Any], patch: dict[str, Any], structure: Structure) -> dict[str, Any]:
    """Apply a strategic merge patch to ``target`` the way kube-apiserver does (``StrategicMergeMapPatch``).

    ``structure`` tells which lists merge (and by which key) and which maps are atomic. A ``null``
    patch is an empty patch; any other non-object patch is a 400, as kube-apiserver cannot decode it.
    """
    if patch is None:
        return _copy(target) if isinstance(target, dict) else {}
    if not isinstance(patch, dict):
        kind = _JSON_KIND.get(type(patch), "value")
        raise PatchError(400, f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    original = _copy(target) if isinstance(target, dict) else {}
    return _StrategicMerger(structure).merge_map(original, patch, ())
