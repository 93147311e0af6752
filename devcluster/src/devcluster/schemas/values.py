"""Value helpers shared by validation and formats: JSON type names as kube-openapi prints them, integer
and number checks, Go's rendering of bounds.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import orjson

from devcluster.errors import type_name
from devcluster.schemas.paths import INT_OR_STRING

# --------------------------------------------------------------------------- value helpers


def _q(text: str) -> str:
    """Go's ``%q`` for the strings we print (JSON quoting is the same for printable text)."""
    return orjson.dumps(text).decode()


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return (isinstance(value, (int, float))) and not isinstance(value, bool)


_json_type = type_name


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values that does not confuse ``true`` with ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _declared_types(s: dict[str, Any]) -> list[str]:
    if s.get(INT_OR_STRING):
        return ["integer", "string"]
    t = s.get("type")
    if isinstance(t, str) and t:
        return [t]
    if isinstance(t, list):
        return [str(x) for x in t]
    return []


def _type_matches(value: Any, types: list[str]) -> bool:
    actual = _json_type(value)
    if actual in types:
        return True
    if actual == "integer" and "number" in types:
        return True
    return actual == "number" and "integer" in types and float(value).is_integer()


def _is_json_integer(f: float) -> bool:
    """go-openapi's ``swag.IsFloat64AJSONInteger`` (relative tolerance 1e-9)."""
    if math.isnan(f) or math.isinf(f):
        return False
    if f.is_integer():
        return True
    g = float(round(f))
    diff = abs(f - g)
    return diff / min(abs(f) + abs(g), 1.7976931348623157e308) < 1e-9
