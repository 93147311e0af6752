"""Typed walks over objects: the field set an object owns under its structure (list types, map keys,
atomic maps and structs), and the comparison of two objects that decides what an apply changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from devcluster.fieldmanagement.fieldsets import _KEY_DEFAULTS, _MISSING, _SERVER_METADATA, _STRIPPED, FieldPath, FieldSet, _trie
from devcluster.structure import ListSemantics, Path, Structure

# --------------------------------------------------------------------------------------------
# Typed walks over objects


def _spath(fpath: FieldPath) -> Path:
    """Structure path of a field path (list items become ``"[]"``)."""
    return tuple(e[2:] if e.startswith("f:") else "[]" for e in fpath)


def _item_element(item: Any, semantics: ListSemantics) -> str | None:
    if semantics.kind == "set":
        if isinstance(item, (dict, list)):
            return None
        return "v:" + orjson.dumps(item).decode()
    if semantics.kind == "map" and isinstance(item, dict) and semantics.keys:
        key: dict[str, Any] = {}
        for name in sorted(semantics.keys):
            if name in item:
                key[name] = item[name]
            elif name in _KEY_DEFAULTS:
                key[name] = _KEY_DEFAULTS[name]
        if not key:
            return None
        return "k:" + orjson.dumps(key).decode()
    return None


def _index_items(items: list[Any], semantics: ListSemantics) -> list[tuple[str, Any]] | None:
    """``(element, item)`` pairs, first occurrence of each element; None if an item has none."""
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for item in items:
        elem = _item_element(item, semantics)
        if elem is None:
            return None
        if elem not in seen:
            seen.add(elem)
            out.append((elem, item))
    return out


def _granular_list(value: Any, structure: Structure, spath: Path) -> ListSemantics | None:
    semantics = structure.list_semantics(spath)
    if semantics.kind == "atomic" or _index_items(value, semantics) is None:
        return None
    return semantics


def _granular_map(structure: Structure, spath: Path) -> bool:
    return not (spath and structure.map_is_atomic(spath))


def to_field_set(obj: dict[str, Any], structure: Structure) -> FieldSet:
    """The fields ``obj`` sets (structured-merge-diff ``ToFieldSet``), server-owned paths included."""
    out: FieldSet = set()

    def walk(value: Any, spath: Path, fpath: FieldPath) -> None:
        if isinstance(value, dict):
            if not _granular_map(structure, spath):
                out.add(fpath)
                return
            string_map = structure.is_string_map(spath)
            for key, child in value.items():
                cpath = (*fpath, "f:" + key)
                walk(child, (*spath, key), cpath)
                if child is None or child == {} or string_map:
                    out.add(cpath)
        elif isinstance(value, list):
            semantics = _granular_list(value, structure, spath)
            if semantics is None:
                out.add(fpath)
                return
            for elem, item in _index_items(value, semantics) or []:
                ipath = (*fpath, elem)
                if semantics.kind == "map":
                    walk(item, (*spath, "[]"), ipath)
                out.add(ipath)
        else:
            out.add(fpath)

    walk(obj, (), ())
    out.discard(())
    return out


def _nodes(obj: dict[str, Any], structure: Structure) -> FieldSet:
    """Every node ``obj`` has: map entries and list items, leaves or not."""
    out: FieldSet = set()

    def walk(value: Any, spath: Path, fpath: FieldPath) -> None:
        out.add(fpath)
        if isinstance(value, dict) and _granular_map(structure, spath):
            for key, child in value.items():
                walk(child, (*spath, key), (*fpath, "f:" + key))
        elif isinstance(value, list):
            semantics = _granular_list(value, structure, spath)
            if semantics is not None:
                for elem, item in _index_items(value, semantics) or []:
                    walk(item, (*spath, "[]"), (*fpath, elem))

    walk(obj, (), ())
    return out


def _ensure_named_fields(paths: FieldSet, structure: Structure) -> FieldSet:
    """Make struct fields that have owned children members (``EnsureNamedFieldsAreMembers``)."""
    out = set(paths)
    for path in paths:
        for i in range(1, len(path)):
            if path[i - 1].startswith("f:") and not structure.is_string_map(_spath(path[: i - 1])):
                out.add(path[:i])
    return out


def _merge(live: Any, config: Any, spath: Path, structure: Structure) -> Any:
    """Merge ``config`` into ``live`` (structured-merge-diff ``Merge``); nulls in config drop the field."""
    if isinstance(live, dict) and isinstance(config, dict) and _granular_map(structure, spath):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            elif key in live:
                out[key] = _merge(live[key], value, (*spath, key), structure)
            else:
                out[key] = _drop_nulls(value)
        return out
    if isinstance(live, list) and isinstance(config, list):
        semantics = _granular_list(config, structure, spath)
        if semantics is not None and _index_items(live, semantics) is not None:
            return _merge_list(live, config, semantics, spath, structure)
    return _drop_nulls(config)


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _merge_list(live: list[Any], config: list[Any], semantics: ListSemantics, spath: Path, structure: Structure) -> list[Any]:
    """Port of structured-merge-diff's ordering: live order, config items placed in config order."""
    lhs = _index_items(live, semantics) or []
    rhs = _index_items(config, semantics) or []
    observed_l = dict(lhs)
    observed_r = dict(rhs)
    item_spath = (*spath, "[]")

    def merged_item(elem: str) -> Any:
        if elem in observed_l and semantics.kind == "map":
            return _merge(observed_l[elem], observed_r[elem], item_spath, structure)
        return _drop_nulls(observed_r[elem])

    shared = [elem for elem, _ in rhs if elem in observed_l]
    shared.reverse()
    next_shared = shared.pop() if shared else None
    merged_rhs: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs) and ri < len(rhs):
            elem = lhs[li][0]
            if elem == rhs[ri][0]:
                merged_rhs.add(elem)
                out.append(merged_item(elem))
                li += 1
                ri += 1
                next_shared = shared.pop() if shared else None
                continue
            if elem in observed_r and next_shared is not None and next_shared != elem:
                li += 1
                continue
        if li < len(lhs):
            elem, item = lhs[li]
            if elem not in observed_r:
                out.append(item)
                li += 1
                continue
            if elem in merged_rhs:
                li += 1
                continue
        if ri < len(rhs):
            elem = rhs[ri][0]
            merged_rhs.add(elem)
            out.append(merged_item(elem))
            ri += 1
            if next_shared is not None and next_shared == elem:
                next_shared = shared.pop() if shared else None
        else:  # pragma: no cover - defensive: lhs item seen in rhs but never merged
            li += 1
    return out


def _remove_items(obj: dict[str, Any], paths: FieldSet, structure: Structure) -> dict[str, Any]:
    """``obj`` without the nodes in ``paths`` (whole subtrees); containers emptied this way go too."""

    def walk(value: Any, spath: Path, node: dict[Any, Any]) -> Any:
        if isinstance(value, dict):
            if not _granular_map(structure, spath):
                return value
            out: dict[str, Any] = {}
            for key, child in value.items():
                sub = node.get("f:" + key)
                if sub is None:
                    out[key] = child
                elif sub.get(None):
                    continue
                else:
                    kept = walk(child, (*spath, key), sub)
                    if kept is not _MISSING:
                        out[key] = kept
            return out if out or not value else _MISSING
        if isinstance(value, list):
            semantics = _granular_list(value, structure, spath)
            if semantics is None:
                return value
            items: list[Any] = []
            for item in value:
                elem = _item_element(item, semantics) or ""
                sub = node.get(elem)
                if sub is None:
                    items.append(item)
                elif sub.get(None):
                    continue
                else:
                    kept = walk(item, (*spath, "[]"), sub)
                    if kept is not _MISSING:
                        items.append(kept)
            return items if items or not value else _MISSING
        return value

    result = walk(obj, (), _trie(paths))
    return result if isinstance(result, dict) else {}


@dataclass
class _Comparison:
    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def exclude(self, ignored: frozenset[str]) -> _Comparison:
        return _Comparison(_without(self.added, ignored), _without(self.modified, ignored), _without(self.removed, ignored))


def _compare(old: dict[str, Any], new: dict[str, Any], structure: Structure) -> _Comparison:
    """structured-merge-diff ``Compare``: leaves and inner nodes added/modified/removed by ``new``."""
    cmp = _Comparison(set(), set(), set())

    def leaf(lhs: Any, rhs: Any, fpath: FieldPath) -> None:
        if lhs is _MISSING:
            cmp.added.add(fpath)
        elif rhs is _MISSING:
            cmp.removed.add(fpath)
        elif lhs != rhs:
            cmp.modified.add(fpath)

    def walk(lhs: Any, rhs: Any, spath: Path, fpath: FieldPath) -> None:
        lv = None if lhs is _MISSING else lhs
        rv = None if rhs is _MISSING else rhs
        if isinstance(lv, dict) or isinstance(rv, dict):
            if (lv is not None and not isinstance(lv, dict)) or (rv is not None and not isinstance(rv, dict)):
                leaf(lhs, rhs, fpath)
                return
            if not _granular_map(structure, spath) or (not lv and not rv):
                leaf(lhs, rhs, fpath)
                return
            lm: dict[str, Any] = lv or {}
            rm: dict[str, Any] = rv or {}
            for key in {**lm, **rm}:
                walk(lm.get(key, _MISSING), rm.get(key, _MISSING), (*spath, key), (*fpath, "f:" + key))
        elif isinstance(lv, list) or isinstance(rv, list):
            if (lv is not None and not isinstance(lv, list)) or (rv is not None and not isinstance(rv, list)):
                leaf(lhs, rhs, fpath)
                return
            semantics = structure.list_semantics(spath)
            li = _index_items(lv or [], semantics) if semantics.kind != "atomic" else None
            ri = _index_items(rv or [], semantics) if semantics.kind != "atomic" else None
            if li is None or ri is None or (not lv and not rv):
                leaf(lhs, rhs, fpath)
                return
            ld, rd = dict(li), dict(ri)
            for elem, item in ri:
                walk(ld.get(elem, _MISSING), item, (*spath, "[]"), (*fpath, elem))
            for elem, item in li:
                if elem not in rd:
                    walk(item, _MISSING, (*spath, "[]"), (*fpath, elem))
        else:
            leaf(lhs, rhs, fpath)
            return
        if lhs is _MISSING:
            cmp.added.add(fpath)
        elif rhs is _MISSING:
            cmp.removed.add(fpath)

    walk(old, new, (), ())
    for s in (cmp.added, cmp.modified, cmp.removed):
        s.discard(())
    return cmp


def _without(paths: FieldSet, ignored: frozenset[str]) -> FieldSet:
    """Recursive difference with the top-level fields in ``ignored``."""
    if not ignored:
        return set(paths)
    prefixes = {"f:" + name for name in ignored}
    return {p for p in paths if p[0] not in prefixes}


def _strip(paths: FieldSet) -> FieldSet:
    return {p for p in paths if p not in _STRIPPED and not (len(p) > 2 and p[0] == "f:metadata" and p[1][2:] in _SERVER_METADATA)}
