"""devcluster's Go formatting prints what Go prints.

Behaviours covered (every expected string was printed by Go 1.26 for the same decoded value, or by
kube-apiserver v1.37.2 in a message):
``%v`` of floats (shortest digits, exponent form, ``-0``, ``+Inf``, ``NaN``) and of decoded JSON with
float64 or int64 numbers; ``%s`` of interface values, flagged element by element; ``%T`` and
``reflect.Kind``; ``%#v`` of an ``interface{}`` (strings quoted as ``strconv.Quote``, not as JSON);
``json.Marshal`` (sorted keys, Go's float notation, HTML-safe escapes); ``time``'s own quote.
"""

from __future__ import annotations

import math

from devcluster.gofmt import format_float, format_s, format_value, go_sharp, kind_name, marshal_json, quote, time_quote, type_name

DECODED = {"b": [1, "x", None, True, {"c": 1000000}], "a": 1.5}


def test_format_float_is_strconv_g() -> None:
    floats = (1e6, 123456.0, 1e-5, 0.0001, 80.0, 1.5, -0.0, 1e21, 1e20, 123456789.0, -2.5e-7, math.inf, math.nan)
    assert "|".join(format_float(f) for f in floats) == "1e+06|123456|1e-05|0.0001|80|1.5|-0|1e+21|1e+20|1.23456789e+08|-2.5e-07|+Inf|NaN"


def test_v_of_decoded_json() -> None:
    assert format_value(DECODED, "float64") == "map[a:1.5 b:[1 x <nil> true map[c:1e+06]]]"
    assert format_value(DECODED) == "map[a:1.5 b:[1 x <nil> true map[c:1000000]]]"  # int64 numbers (unstructured)


def test_s_flags_what_is_not_a_string() -> None:
    assert format_s(True) == "%!s(bool=true)"
    assert format_s(DECODED["b"]) == "[%!s(float64=1) x <nil> %!s(bool=true) map[c:%!s(float64=1e+06)]]"
    assert format_s("plain") == "plain"


def test_type_and_kind_names() -> None:
    assert [type_name(v) for v in (DECODED, DECODED["b"], 1.0, None)] == ["map[string]interface {}", "[]interface {}", "float64", "<nil>"]
    assert type_name(3, "int64") == "int64" and type_name(3) == "float64"
    values: tuple[object, ...] = ("s", True, 1, 1.5, [], {})
    assert [kind_name(v) for v in values] == ["string", "bool", "int64", "float64", "slice", "map"]


def test_sharp_v_quotes_strings_as_go_does() -> None:
    decoded = {"k": ["a\x01<", 2.5, 3, None, False]}
    assert go_sharp(decoded) == 'map[string]interface {}{"k":[]interface {}{"a\\x01<", 2.5, 3, interface {}(nil), false}}'
    assert quote("\x00é") == '"\\x00é"'


def test_marshal_json_is_encoding_json() -> None:
    value = {"z": "<a&b>\u2028", "a": [1e21, 1e-7, 0.5, 100.0, -0.0, "é\n\x01"]}
    assert marshal_json(value) == '{"a":[1e+21,1e-7,0.5,100,-0,"é\\n\\u0001"],"z":"\\u003ca\\u0026b\\u003e\\u2028"}'


def test_time_quote_escapes_bytes() -> None:
    assert time_quote('a"é\n') == '"a\\"\\xc3\\xa9\\x0a"'


def test_format_value_and_float_as_kube_apiserver_printed_them() -> None:
    value = {"spec": {"containers": [{"name": "c", "bogus": 1}], "bogus2": 2}, "zz": [1, "a", None, {"b": 1.5, "c": True}]}
    assert format_value(value) == "map[spec:map[bogus2:2 containers:[map[bogus:1 name:c]]] zz:[1 a <nil> map[b:1.5 c:true]]]"
    assert [format_float(f) for f in (1e6, 123456.0, 1e-5, 0.0001, 80.0, 1.5)] == ["1e+06", "123456", "1e-05", "0.0001", "80", "1.5"]
