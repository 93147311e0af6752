"""Go's ``fmt``, ``strconv`` and ``encoding/json`` formatting: the one place devcluster renders values as Go does.

kube-apiserver's error messages and printed cells are Go formatting of decoded values; devcluster
reproduces the verbs its clients see. A value here is a decoded JSON value; ``numbers`` says which Go
type its numbers have: ``"float64"`` when ``encoding/json`` decoded it into ``interface{}``
(strategic merge patch, structured-merge-diff), ``"int64"`` when the unstructured decoder did
(integers stay ``int64``: objects, JSONPath, printer columns).

* :func:`quote` - ``strconv.Quote`` / ``%q`` / ``%#v`` of a string (defined in ``labelselectors.quoting``,
  which label-selector errors need, and re-exported here); :func:`time_quote` - ``time``'s own quote.
* :func:`format_float` - ``strconv.FormatFloat(f, 'g', -1, 64)``, i.e. ``%v`` of a float64.
* :func:`format_value` - ``%v`` (``map[a:1 b:[x y]]``); :func:`format_s` - ``%s`` of an interface value.
* :func:`go_sharp` - ``%#v`` of an ``interface{}``; :func:`type_name` - ``%T``; :func:`kind_name` - ``reflect.Kind``.
* :func:`marshal_json` - ``json.Marshal`` (sorted keys, Go's float notation, ``<>&`` escaped).

Pure functions, checked against Go's output in ``tests/internals/test_gofmt.py``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Literal

import orjson

from labelselectors.quoting import quote

__all__ = [
    "format_float",
    "format_s",
    "format_value",
    "go_sharp",
    "kind_name",
    "marshal_json",
    "quote",
    "time_quote",
    "type_name",
]

Numbers = Literal["float64", "int64"]


def time_quote(text: str) -> str:
    """``time``'s own ``quote()``: ``"`` and ``\\`` escaped, non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for char in text:
        if char < " " or ord(char) >= 0x80:
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


def format_float(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 64)`` (``%v``): shortest digits, exponent form when exp < -4 or exp >= 21."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(str(d) for d in digit_tuple)
    exp10 = len(digits) - 1 + exponent  # decimal exponent of the first digit
    neg = "-" if sign else ""
    if exp10 < -4 or exp10 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{neg}{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    if exp10 >= len(digits) - 1:
        return neg + digits + "0" * (exp10 - len(digits) + 1)
    if exp10 >= 0:
        return neg + digits[: exp10 + 1] + "." + digits[exp10 + 1 :]
    return neg + "0." + "0" * (-exp10 - 1) + digits


def format_value(value: Any, numbers: Numbers = "int64") -> str:
    """``fmt.Sprintf("%v", value)`` of a decoded JSON value (map keys sorted, as ``fmt`` sorts them)."""
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return format_float(float(value)) if numbers == "float64" else str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(format_value(v, numbers) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{format_value(value[k], numbers)}" for k in sorted(value)) + "]"
    return str(value)


def type_name(value: Any, numbers: Numbers = "float64") -> str:
    """``%T`` of a decoded JSON value (names as ``reflect.Type`` prints them)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return numbers
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def kind_name(value: Any) -> str:
    """The ``reflect.Kind`` of a value the unstructured decoder made (``int64`` integers)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "slice" if isinstance(value, list) else "map"


def format_s(value: Any, numbers: Numbers = "float64", *, top: bool = True) -> str:
    """``%s`` of an interface value: strings raw, other scalars flagged as Go does (``%!s(bool=true)``),
    slices and maps element by element (``[x %!s(float64=1)]``), a nil ``%!s(<nil>)`` (``<nil>`` inside)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)" if top else "<nil>"
    if isinstance(value, list):
        return "[" + " ".join(format_s(v, numbers, top=False) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{format_s(value[k], numbers, top=False)}" for k in sorted(value)) + "]"
    return f"%!s({type_name(value, numbers)}={format_value(value, numbers)})"


def go_sharp(value: Any) -> str:
    """``%#v`` of a value decoded into ``interface{}`` (strings as ``strconv.Quote``)."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    return "map[string]interface {}{" + ", ".join(f"{go_sharp(k)}:{go_sharp(value[k])}" for k in sorted(value)) + "}"


# encoding/json's HTML-safe escapes (and the two JavaScript line terminators), which orjson leaves as they are.
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json_string(text: str) -> str:
    encoded = orjson.dumps(text).decode()
    if any(char in encoded for char in _JSON_ESCAPES):
        encoded = "".join(_JSON_ESCAPES.get(char, char) for char in encoded)
    return encoded


def marshal_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a decoded JSON value: map keys sorted, floats in Go's notation, ``<>&`` escaped."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(str(k))}:{marshal_json(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(marshal_json(v) for v in value) + "]"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, float) and math.isfinite(value):
        if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
            return repr(value).replace("e-0", "e-").replace("e+0", "e+")
        text = format(Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return orjson.dumps(value).decode()
