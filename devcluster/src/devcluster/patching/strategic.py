"""The strategic merge itself (port of ``k8s.io/apimachinery/pkg/util/strategicpatch``, server side):
``strategic_merge_patch`` walks the patch against the object's structure (list merge keys, patch strategies).
"""

from __future__ import annotations

from typing import Any

from devcluster import gofmt
from devcluster.patching.common import PatchError
from devcluster.patching.directives import (
    _DELETE,
    _DELETE_FROM_PRIMITIVE_LIST,
    _DIRECTIVE,
    _ERR_RETAIN_KEYS,
    _MAP_KIND,
    _MERGE,
    _REPLACE,
    _RETAIN_KEYS,
    _SET_ELEMENT_ORDER,
    _bad_arg_type,
    _bad_patch_type,
    _clean,
    _clean_list,
    _clean_map_body,
    _extract_key,
    _fail,
    _go_eq,
    _kind,
    _no_merge_key,
    _slice_element_kind,
)
from devcluster.patching.ordering import (
    _extract_to_delete_items,
    _find_by_key,
    _go_deduplicate_scalars,
    _normalize_element_order,
    _partition_maps,
    _partition_primitives,
)
from devcluster.patching.rfc6902 import _JSON_KIND
from devcluster.structure import Path, Structure, TableStructure
from mergepatch import copy_json

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
        return copy_json(target) if isinstance(target, dict) else {}
    if not isinstance(patch, dict):
        kind = _JSON_KIND.get(type(patch), "value")
        raise PatchError(400, f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    original = copy_json(target) if isinstance(target, dict) else {}
    return _StrategicMerger(structure).merge_map(original, patch, ())
