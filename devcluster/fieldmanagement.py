"""Server-side apply and ``metadata.managedFields`` bookkeeping, as structured-merge-diff does it.

Owns: the managedFields bookkeeping for every write (create, update, patch, status update:
:func:`record_update`) and the server-side apply merge (:func:`apply`). The request handlers call
these after decoding the request and before validation/storage; both are pure functions that never
mutate their inputs.

Model (mirrors ``sigs.k8s.io/structured-merge-diff``):

* A *field set* is a ``set`` of paths; a path is a tuple of FieldsV1 path elements:
  ``"f:<name>"`` (a struct field or a string-map key), ``"k:<json>"`` (an item of a map-list,
  identified by its key fields, sorted by name, compact JSON) and ``"v:<json>"`` (an item of a
  set-list). :func:`fields_to_set` / :func:`set_to_fields` convert to and from FieldsV1.
* Each managedFields entry is one manager's set, identified by (manager, operation, subresource).
* ``apply`` merges the applied configuration into the live object (list semantics from a
  :class:`~devcluster.structure.Structure`), prunes what this manager applied last time but no
  longer applies (unless someone else owns it), then detects conflicts: fields another manager
  owns whose value the apply changes. Without ``force`` they raise :class:`ApplyConflict`; with it
  the other managers lose those fields.
* ``record_update`` compares old and new: changed/added fields move to the writer's Update entry,
  other managers lose changed or removed fields.

Server-owned paths (apiVersion, kind, metadata.name/namespace/uid/resourceVersion/generation/
creationTimestamp/deletionTimestamp/deletionGracePeriodSeconds/selfLink/managedFields) are never in
a field set. Entry ``time`` only moves when an entry's set changes or its manager changed the object,
so a no-op apply returns an object equal to the live one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from devcluster import gofmt
from devcluster.errors import Cause
from devcluster.structure import ListSemantics, Path, Structure

FieldPath = tuple[str, ...]
FieldSet = set[FieldPath]

__all__ = [
    "ApplyConflict",
    "FieldConflict",
    "apply",
    "field_path_string",
    "fields_to_set",
    "record_update",
    "set_to_fields",
    "to_field_set",
]

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


# --------------------------------------------------------------------------------------------
# Conflicts


@dataclass(frozen=True)
class FieldConflict:
    """One field the apply would change that another manager owns."""

    manager: str
    api_version: str
    field: str
    operation: str = "Update"
    subresource: str = ""

    def manager_text(self) -> str:
        """The manager as kube prints it (``printManager``): ``"m"``, ``"m" using v1``, ..."""
        text = gofmt.quote(self.manager)
        if self.subresource:
            text += f" with subresource {gofmt.quote(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def _identifier(self) -> str:
        """Sort key: the JSON manager identifier kube sorts conflicts by."""
        ident: dict[str, str] = {"manager": self.manager, "operation": self.operation}
        if self.operation == "Update" and self.api_version:
            ident["apiVersion"] = self.api_version
        if self.subresource:
            ident["subresource"] = self.subresource
        return orjson.dumps(ident).decode()


class ApplyConflict(Exception):
    """Apply would change fields other managers own (kube answers 409 Conflict)."""

    def __init__(self, conflicts: list[FieldConflict]) -> None:
        self.conflicts = list(conflicts)
        super().__init__(self.message())

    def message(self) -> str:
        """kube's ``Apply failed with N conflict(s): ...`` text."""
        if len(self.conflicts) == 1:
            c = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {c.manager_text()}: {c.field}"
        grouped: dict[str, list[FieldConflict]] = {}
        for c in self.conflicts:
            grouped.setdefault(c._identifier(), []).append(c)
        lines: list[str] = []
        for ident in sorted(grouped):
            group = grouped[ident]
            lines.append(f"conflicts with {group[0].manager_text()}:")
            lines.extend(f"- {c.field}" for c in group)
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def causes(self) -> list[Cause]:
        return [Cause(c.field, "FieldManagerConflict", f"conflict with {c.manager_text()}") for c in self.conflicts]


# --------------------------------------------------------------------------------------------
# FieldsV1 <-> set


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


# --------------------------------------------------------------------------------------------
# managedFields entries


@dataclass
class _Entry:
    manager: str
    operation: str
    subresource: str
    api_version: str
    time: Any
    fields: FieldSet
    original: dict[str, Any] | None  # the stored entry, returned verbatim while unchanged

    @property
    def ident(self) -> tuple[str, str, str]:
        return (self.manager, self.operation, self.subresource)

    def render(self) -> dict[str, Any]:
        if self.original is not None:
            return copy.deepcopy(self.original)
        entry: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = set_to_fields(self.fields)
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


def _decode(entries: Any) -> list[_Entry] | None:
    """Parse a managedFields list; None when it is not valid (kube then falls back to the live one)."""
    if not isinstance(entries, list):
        return None
    out: dict[tuple[str, str, str], _Entry] = {}
    for raw in entries:
        if not isinstance(raw, dict):
            return None
        operation = raw.get("operation")
        if operation not in ("Apply", "Update") or not raw.get("apiVersion") or raw.get("fieldsType") != "FieldsV1":
            return None
        fields_v1 = raw.get("fieldsV1")
        if fields_v1 is not None and not isinstance(fields_v1, dict):
            return None
        entry = _Entry(
            str(raw.get("manager", "")),
            operation,
            str(raw.get("subresource", "") or ""),
            str(raw["apiVersion"]),
            raw.get("time"),
            fields_to_set(fields_v1),
            raw,
        )
        if entry.ident in out:
            previous = out[entry.ident]
            previous.fields = previous.fields | entry.fields
            previous.original = None
        else:
            out[entry.ident] = entry
    return list(out.values())


def _is_reset(entries: Any) -> bool:
    return isinstance(entries, list) and (not entries or (len(entries) == 1 and entries[0] == {}))


def _live_entries(obj: dict[str, Any] | None) -> list[_Entry]:
    if not obj:
        return []
    return _decode((obj.get("metadata") or {}).get("managedFields") or []) or []


def _set_fields(entry: _Entry, fields: FieldSet) -> None:
    if fields != entry.fields:
        entry.fields = fields
        entry.original = None


def _finish(obj: dict[str, Any], entries: list[_Entry]) -> dict[str, Any]:
    """Store the non-empty entries as ``metadata.managedFields`` (absent when there are none)."""
    metadata = dict(obj.get("metadata") or {})
    # kube's sortEncodedManagedFields: by operation, time (whole seconds; none first), manager, apiVersion, subresource
    ordered = sorted(entries, key=lambda e: (e.operation, str(e.time or "")[:19], e.manager, e.api_version, e.subresource))
    rendered = [e.render() for e in ordered if e.fields]
    if rendered:
        metadata["managedFields"] = rendered
    else:
        metadata.pop("managedFields", None)
    out = dict(obj)
    out["metadata"] = metadata
    return out


def _without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any]:
    out = copy.deepcopy(obj) if obj else {}
    metadata = out.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return out


# --------------------------------------------------------------------------------------------
# Public operations


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    *,
    manager: str,
    force: bool,
    structure: Structure,
    api_version: str,
    now: str,
    reset_fields: frozenset[str] = frozenset(),
    subresource: str = "",
) -> dict[str, Any]:
    """Server-side apply ``config`` onto ``live`` (None: create) as ``manager``; returns the new object.

    Raises :class:`ApplyConflict` when, without ``force``, the apply changes fields other managers own.
    """
    entries = _live_entries(live)
    base = _without_managed_fields(live)
    applied = _without_managed_fields(config)
    for name in reset_fields:
        applied.pop(name, None)

    new_set = _strip(_without(to_field_set(applied, structure), reset_fields))
    ident = (manager, "Apply", subresource)
    own = next((e for e in entries if e.ident == ident), None)
    last_set = _without(own.fields, reset_fields) if own else set()

    merged = _merge(base, applied, (), structure) if live is not None else _drop_nulls(applied)

    # Prune what this manager applied last time and dropped now, unless someone still owns it.
    if last_set:
        managed: FieldSet = set(new_set)
        for entry in entries:
            if entry is not own:
                managed |= entry.fields
        doomed = (
            _ensure_named_fields(to_field_set(merged, structure), structure) & _ensure_named_fields(last_set, structure)
        ) - _ensure_named_fields(managed, structure)
        # Nodes the config itself spells out (e.g. an emptied list) stay, with the config's value.
        doomed -= _nodes(applied, structure)
        if doomed:
            merged = _merge(_remove_items(merged, doomed, structure), applied, (), structure)

    # Server-owned and reset fields come from live.
    if live is not None:
        _keep_from(merged, base, ("apiVersion", "kind"))
        metadata = dict(merged.get("metadata") or {})
        _keep_from(metadata, base.get("metadata") or {}, _SERVER_METADATA)
        merged["metadata"] = metadata
        _keep_from(merged, base, reset_fields)

    cmp = _compare(base, merged, structure).exclude(reset_fields)
    changed = cmp.added | cmp.modified
    conflicts: list[FieldConflict] = []
    for entry in entries:
        if entry is own:
            continue
        lost = entry.fields & changed
        for path in _iterate(lost):
            conflicts.append(FieldConflict(entry.manager, entry.api_version, field_path_string(path), entry.operation, entry.subresource))
    if conflicts and not force:
        conflicts.sort(key=lambda c: c._identifier())
        raise ApplyConflict(conflicts)

    for entry in entries:
        if entry is not own:
            _set_fields(entry, entry.fields - changed - cmp.removed)

    object_changed = bool(changed or cmp.removed)
    if own is None:
        # A first apply that changes nothing (it only shares ownership) gets no time, as in kube.
        own = _Entry(manager, "Apply", subresource, api_version, now if object_changed or live is None else None, new_set, None)
        entries.append(own)
    elif new_set != own.fields or own.api_version != api_version or object_changed:
        own.fields, own.api_version, own.time, own.original = new_set, api_version, now, None
    return _finish(merged, entries)


def _keep_from(target: dict[str, Any], source: dict[str, Any], names: Iterable[str]) -> None:
    for name in names:
        if name in source:
            target[name] = copy.deepcopy(source[name])
        else:
            target.pop(name, None)


def _struct_node(path: FieldPath, new: dict[str, Any], structure: Structure) -> bool:
    """True for a node the Go type's zero value already holds, so kube's typed Update does not record it:
    a struct field holding a non-empty struct (unless the field is a pointer) or a list that is not
    omitempty (``TableStructure.pointer_structs`` / ``zero_lists``)."""
    if not path[-1].startswith("f:") or structure.is_string_map(_spath(path[:-1])):
        return False
    spath = _spath(path)
    if spath in getattr(structure, "zero_lists", ()):
        return True
    if spath in getattr(structure, "zero_structs", ()) and _lookup(new, path, structure) == {}:
        return True
    if structure.is_string_map(spath) or not _granular_map(structure, spath) or spath in getattr(structure, "pointer_structs", ()):
        return False
    value = _lookup(new, path, structure)
    return isinstance(value, dict) and bool(value)


def _lookup(obj: Any, path: FieldPath, structure: Structure) -> Any:
    spath: Path = ()
    for elem in path:
        if elem.startswith("f:"):
            if not isinstance(obj, dict) or elem[2:] not in obj:
                return _MISSING
            obj = obj[elem[2:]]
            spath = (*spath, elem[2:])
        else:
            if not isinstance(obj, list):
                return _MISSING
            semantics = structure.list_semantics(spath)
            obj = dict(_index_items(obj, semantics) or []).get(elem, _MISSING)
            spath = (*spath, "[]")
    return obj


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    structure: Structure,
    api_version: str,
    now: str,
    reset_fields: frozenset[str] = frozenset(),
    subresource: str = "",
    typed: bool = True,
) -> dict[str, Any]:
    """managedFields bookkeeping for a non-apply write of ``new`` over ``old`` (None: create).

    ``typed``: the kind is a Go type (built-in). Its zero value already holds the non-pointer
    structs, so an Update does not record those as set; an unstructured object (custom resource)
    starts empty and every map it gains is recorded (``"."``).
    An update of an object that has no managedFields is not tracked (structured-merge-diff's
    skip-non-applied manager): it stays without managedFields until someone applies or the
    update itself sets them.
    """
    requested = (new.get("metadata") or {}).get("managedFields") if isinstance(new.get("metadata"), dict) else None
    entries: list[_Entry]
    if old is not None and not (old.get("metadata") or {}).get("managedFields") and (subresource or not requested):
        return _finish(_without_managed_fields(new), [])
    if subresource or requested is None:
        entries = _live_entries(old)
    elif _is_reset(requested):
        entries = []
    else:
        decoded = _decode(requested)
        entries = decoded if decoded else _live_entries(old)

    before = _without_managed_fields(old)
    after = _without_managed_fields(new)
    cmp = _compare(before, after, structure).exclude(reset_fields)
    changed = cmp.added | cmp.modified

    for entry in entries:
        _set_fields(entry, entry.fields - changed - cmp.removed)

    ops = _strip(changed - cmp.removed)
    if typed:
        ops = {p for p in ops if not _struct_node(p, after, structure)}
    ident = (manager, "Update", subresource)
    own = next((e for e in entries if e.ident == ident), None)
    # kube's scale subresource carries managedFields through the Scale object, which loses their times
    stamp = None if subresource == "scale" else now
    if ops:
        if own is None:
            entries.append(_Entry(manager, "Update", subresource, api_version, stamp, ops, None))
        else:
            own.fields, own.api_version, own.time, own.original = own.fields | ops, api_version, stamp, None
    return _finish(after, entries)
