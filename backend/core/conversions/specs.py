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

from backend.core.crds import members
from kinds.fields import Overlay


def friendly_spec(overlay: Overlay, spec: Mapping[str, Any] | None, path: str = "") -> dict[str, Any]:
    """The friendly fields of a stored ``spec`` (or of its object at friendly ``path``)."""
    given = spec or {}
    shown: dict[str, Any] = {}
    for member in members(overlay, path):
        value = given.get(member.spec_name)
        kind = member.schema.get("type")
        if kind == "object":
            shown[member.name] = friendly_spec(overlay, value, member.path)
        elif kind == "array":
            shown[member.name] = list(value or ())
        else:
            default = overlay.words(member.path).shown_default
            shown[member.name] = value if default is None else value or default
    return shown


def cr_spec(overlay: Overlay, friendly: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """The CR spec (or its object at friendly ``path``) of a validated friendly payload."""
    spec: dict[str, Any] = {}
    fields = members(overlay, path)
    for member in (*(m for m in fields if m.required), *(m for m in fields if not m.required)):
        value = friendly.get(member.name)
        if value is None:
            continue
        kind = member.schema.get("type")
        if kind == "object":
            spec[member.spec_name] = cr_spec(overlay, value, member.path)
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
