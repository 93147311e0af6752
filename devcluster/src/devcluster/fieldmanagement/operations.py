"""The public operations: server-side ``apply`` (merge, ownership, conflicts, force) and ``record_update``
(the managedFields an update, create or patch leaves).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from devcluster.fieldmanagement.conflicts import ApplyConflict, FieldConflict
from devcluster.fieldmanagement.entries import _decode, _Entry, _finish, _is_reset, _live_entries, _set_fields, _without_managed_fields
from devcluster.fieldmanagement.fieldsets import _MISSING, _SERVER_METADATA, FieldPath, FieldSet, _iterate, field_path_string
from devcluster.fieldmanagement.walks import (
    _compare,
    _drop_nulls,
    _ensure_named_fields,
    _granular_map,
    _index_items,
    _merge,
    _nodes,
    _remove_items,
    _spath,
    _strip,
    _without,
    to_field_set,
)
from devcluster.structure import Path, Structure

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
