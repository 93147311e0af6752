"""The spec part of the friendly ↔ CR conversion, for any kind: driven by its CRD and its overlay (:mod:`kinds.fields`).

:func:`friendly_spec` is what a response shows of a stored spec: every field the API shows (hidden ones
left out), in CRD order, under its friendly name; a field the stored object lacks is null, or the
overlay's ``shown_default``; a list is always a list and an object always an object. :func:`cr_spec` is
the spec a validated friendly payload asks for: the fields it gives (null is absent), under their spec
names, the CRD's required ones first (kube fills the CRD's defaults); a timestamp in UTC (:func:`rfc3339`). A kind's module
(:mod:`backend.core.kinds.darkrooms`) adds what is no spec field: computed response fields, the status,
what the write-only fields stand in for. Pure functions: no Flask, no cluster access.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from backend.core.crds import absent_is_null, members
from kinds.fields import Overlay


def friendly_spec(overlay: Overlay, spec: Mapping[str, Any] | None, path: str = "", *, defaults: bool = True) -> dict[str, Any]:
    """The friendly fields of a stored ``spec`` (or of its object at friendly ``path``). ``defaults``: a missing field
    shows the overlay's ``shown_default`` (False: as stored, the base a merge patch applies to)."""
    given = spec or {}
    shown: dict[str, Any] = {}
    for member in members(overlay, path):
        value = given.get(member.spec_name)
        kind = member.schema.get("type")
        if kind == "object" and value is None and not member.required and absent_is_null(member.schema):
            shown[member.name] = None
        elif kind == "object" and "properties" not in member.schema and member.path not in overlay.keys:
            shown[member.name] = dict(value or {})  # a map, as stored
        elif kind == "object":
            shown[member.name] = friendly_spec(overlay, value, member.path, defaults=defaults)
        elif kind == "array":
            shown[member.name] = list(value or ())
        else:
            default = overlay.words(member.path).shown_default if defaults else None
            shown[member.name] = value if default is None else value or default
    return shown


def cr_spec(overlay: Overlay, friendly: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """The CR spec (or its object at friendly ``path``) of a validated friendly payload. An object the CRD neither
    requires nor gives a default that ends up empty is left out (it would say nothing)."""
    spec: dict[str, Any] = {}
    fields = members(overlay, path)
    for member in (*(m for m in fields if m.required), *(m for m in fields if not m.required)):
        value = friendly.get(member.name)
        if value is None:
            continue
        kind = member.schema.get("type")
        if kind == "object":
            if "properties" in member.schema or member.path in overlay.keys:
                inner = cr_spec(overlay, value, member.path)
            else:  # a map: its entries given
                inner = {key: entry for key, entry in value.items() if entry is not None}
            if inner or member.required or "default" in member.schema:
                spec[member.spec_name] = inner
        elif kind == "array":
            spec[member.spec_name] = list(value)
        elif isinstance(value, datetime):  # a date-time field, loaded as a datetime
            spec[member.spec_name] = rfc3339(value)
        else:
            spec[member.spec_name] = value
    return spec


def rfc3339(moment: datetime) -> str:
    """UTC, ``Z`` suffix, fractions only when present."""
    text = moment.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"
