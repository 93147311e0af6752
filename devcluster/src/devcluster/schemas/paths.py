"""Schema extension names and the field paths custom-resource errors and warnings print (``spec.items[0].name``).

Used by every module of ``devcluster.schemas``.
"""

from __future__ import annotations

from typing import Any

PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"

_META_FIELDS = ("apiVersion", "kind", "metadata")
_OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]


# --------------------------------------------------------------------------- paths


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _schema(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _additional(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``additionalProperties`` schema, if it is one (``true`` means "anything", no schema)."""
    return _schema(schema.get("additionalProperties"))


def _has_additional(schema: dict[str, Any]) -> bool:
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict)
