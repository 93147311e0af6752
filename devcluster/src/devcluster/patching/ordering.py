"""Strategic merge patch ordering: ``normalizeElementOrder`` and friends (``$setElementOrder``, Go's stable
sort and the slice aliasing the Go code relies on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devcluster.patching.directives import _DELETE, _DIRECTIVE, _MAP_KIND, _bad_arg_type, _fail, _go_eq, _no_merge_key

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
