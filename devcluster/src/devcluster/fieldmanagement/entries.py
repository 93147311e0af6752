"""``managedFields`` entries: reading, merging and writing them in kube's order (operation, time in whole
seconds, manager, apiVersion, subresource).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from devcluster.fieldmanagement.fieldsets import FieldSet, fields_to_set, set_to_fields

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
