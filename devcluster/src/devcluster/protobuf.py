"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies into the JSON an object has.

client-go's typed clients (``kubectl create deployment|configmap|secret|...`` among them) send
request bodies as protobuf: the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message
(``typeMeta{apiVersion, kind}``, ``raw`` = the object's own protobuf, ``contentEncoding``,
``contentType``). :func:`decode` turns that into the dict the Go object would marshal to as JSON,
using the field tables of ``protobuf_schema.py`` (generated from the upstream generated.proto
files and Go struct tags): JSON names, inlined structs, ``omitempty`` on non-pointer scalars
(gogo protobuf writes their zero values; Go's JSON drops them), ``metav1.Time`` / ``MicroTime``
as RFC 3339 strings (a zero Time as null), ``IntOrString`` as int or string, ``Quantity`` as its
string, ``FieldsV1`` as the JSON it holds, ``map<string,bytes>`` and ``bytes`` as base64.
Absent fields and empty repeated fields stay absent; unknown field numbers are skipped, as Go's
unmarshaller does. Anything malformed is a 400 BadRequest. devcluster only ever answers JSON.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from devcluster import errors
from devcluster.protobuf_schema import MESSAGES, ROOTS, SPECIAL

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_VARINT_TYPES = frozenset({"int32", "int64", "uint32", "uint64", "bool", "sint32", "sint64"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO = {"string": "", "bytes": "", "bool": False}
_UNDECODABLE = "the body of the request could not be decoded"


class _Malformed(Exception):
    pass


def decode(raw: bytes, expect_kind: str | None = None) -> dict[str, Any]:
    """Decode a protobuf-enveloped object into its JSON form (400 BadRequest when impossible).

    ``expect_kind``: the only kind the body may hold (``DeleteOptions`` for DELETE bodies).
    """
    if not raw.startswith(MAGIC):
        raise errors.bad_request(f"{_UNDECODABLE}: provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")
    try:
        envelope = _fields(raw, len(MAGIC), len(raw))
        type_meta = _fields(raw, *_span(envelope.get(1)))
        api_version = _text(raw, type_meta.get(1))
        kind = _text(raw, type_meta.get(2))
        encoding = _text(raw, envelope.get(3))
        content_type = _text(raw, envelope.get(4))
        start, end = _span(envelope.get(2))
    except _Malformed as e:
        raise errors.bad_request(f"{_UNDECODABLE}: {e}") from e
    if encoding:
        raise errors.bad_request(f"{_UNDECODABLE}: unsupported content encoding {encoding!r}")
    if content_type not in ("", MEDIA_TYPE):
        raise errors.bad_request(f"{_UNDECODABLE}: unsupported content type {content_type!r} inside the protobuf envelope")
    if not kind:
        raise errors.bad_request("Object 'Kind' is missing in protobuf request body")
    if expect_kind is not None and kind != expect_kind:
        raise errors.bad_request(f'{_UNDECODABLE}: expected a {expect_kind}, got kind "{kind}" of version "{api_version}"')
    root = ROOTS.get((api_version, kind)) or ROOTS.get(("*", kind))
    if root is None:
        raise errors.bad_request(f'no kind "{kind}" is registered for version "{api_version}" in protobuf request bodies')
    try:
        body = _message(root, raw, start, end)
    except _Malformed as e:
        raise errors.bad_request(f"the body of the request could not be decoded as {kind}: {e}") from e
    return {"apiVersion": api_version, "kind": kind, **body}


# -- wire format -----------------------------------------------------------------------------


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise _Malformed("unexpected end of varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Malformed("varint overflow")


def _next_field(buf: bytes, pos: int, end: int) -> tuple[int, int, Any, int]:
    """One field at ``pos``: (number, wire type, value, next pos); a length-delimited value is its (start, end)."""
    key, pos = _varint(buf, pos, end)
    number, wire = key >> 3, key & 7
    if number == 0:
        raise _Malformed("illegal field number 0")
    if wire == _VARINT:
        value, pos = _varint(buf, pos, end)
        return number, wire, value, pos
    if wire == _LENGTH:
        length, pos = _varint(buf, pos, end)
        if length > end - pos:
            raise _Malformed(f"field {number}: length {length} runs past the end of the message")
        return number, wire, (pos, pos + length), pos + length
    if wire == _FIXED64:
        if pos + 8 > end:
            raise _Malformed(f"field {number}: truncated fixed64")
        return number, wire, int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
    if wire == _FIXED32:
        if pos + 4 > end:
            raise _Malformed(f"field {number}: truncated fixed32")
        return number, wire, int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
    raise _Malformed(f"field {number}: unsupported wire type {wire}")


def _fields(buf: bytes, start: int, end: int) -> dict[int, list[Any]]:
    """All fields of a small message by number, values in order (length-delimited ones as (start, end))."""
    out: dict[int, list[Any]] = {}
    pos = start
    while pos < end:
        number, _, value, pos = _next_field(buf, pos, end)
        out.setdefault(number, []).append(value)
    return out


def _span(values: list[Any] | None) -> tuple[int, int]:
    if not values:
        return 0, 0
    if not isinstance(values[-1], tuple):
        raise _Malformed("expected a length-delimited field")
    return values[-1]


def _text(buf: bytes, values: list[Any] | None) -> str:
    if not values:
        return ""
    value = values[-1]
    if not isinstance(value, tuple):
        raise _Malformed("expected a string")
    return buf[value[0] : value[1]].decode("utf-8", "replace")


# -- messages --------------------------------------------------------------------------------


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _scalar(kind: str, wire: int, value: Any, buf: bytes) -> Any:
    if kind in ("string", "bytes"):
        if wire != _LENGTH:
            raise _Malformed(f"expected a {kind}, got wire type {wire}")
        data = buf[value[0] : value[1]]
        return data.decode("utf-8", "replace") if kind == "string" else base64.b64encode(data).decode("ascii")
    if kind in _VARINT_TYPES:
        if wire != _VARINT:
            raise _Malformed(f"expected a varint ({kind}), got wire type {wire}")
        if kind == "bool":
            return value != 0
        if kind == "int32":
            return _signed(value, 32)
        if kind == "int64":
            return _signed(value, 64)
        if kind == "uint32":
            return value & 0xFFFFFFFF
        if kind in ("sint32", "sint64"):
            return (value >> 1) ^ -(value & 1)
        return value
    raise _Malformed(f"unsupported scalar type {kind}")


def _packed(kind: str, buf: bytes, start: int, end: int) -> list[Any]:
    values = []
    pos = start
    while pos < end:
        value, pos = _varint(buf, pos, end)
        values.append(_scalar(kind, _VARINT, value, buf))
    return values


def _value(type_name: str, buf: bytes, start: int, end: int) -> Any:
    if type_name in SPECIAL:
        return _special(type_name, buf, start, end)
    return _message(type_name, buf, start, end)


def _message(type_name: str, buf: bytes, start: int, end: int) -> dict[str, Any]:
    table = MESSAGES[type_name]
    out: dict[str, Any] = {}
    pos = start
    while pos < end:
        number, wire, value, pos = _next_field(buf, pos, end)
        spec = table.get(number)
        if spec is None:
            continue  # unknown fields are skipped, as Go's unmarshaller does
        name, kind, target, repeated, omit_zero = spec
        if kind == "scalar":
            if repeated and wire == _LENGTH and target in _VARINT_TYPES:
                out.setdefault(name, []).extend(_packed(target, buf, *value))
                continue
            decoded = _scalar(target, wire, value, buf)
            if repeated:
                out.setdefault(name, []).append(decoded)
            elif omit_zero and decoded in ("", 0, False):
                out.pop(name, None)
            else:
                out[name] = decoded
            continue
        if wire != _LENGTH:
            raise _Malformed(f"{type_name} field {number} ({name or target}): expected a message, got wire type {wire}")
        if kind == "map":
            key, item = _map_entry(target, buf, *value)
            out.setdefault(name, {})[key] = item
        elif kind == "inline":
            out.update(_message(target, buf, *value))
        elif repeated:
            out.setdefault(name, []).append(_value(target, buf, *value))
        else:
            out[name] = _value(target, buf, *value)
    return out


def _map_entry(value_type: str, buf: bytes, start: int, end: int) -> tuple[str, Any]:
    key, item = "", None
    pos = start
    while pos < end:
        number, wire, value, pos = _next_field(buf, pos, end)
        if number == 1:
            key = _scalar("string", wire, value, buf)
        elif number == 2:
            if value_type in MESSAGES or value_type in SPECIAL:
                if wire != _LENGTH:
                    raise _Malformed(f"map value: expected a message, got wire type {wire}")
                item = _value(value_type, buf, *value)
            else:
                item = _scalar(value_type, wire, value, buf)
    if item is None:  # an absent value is the zero value
        item = _value(value_type, buf, 0, 0) if value_type in MESSAGES or value_type in SPECIAL else _ZERO.get(value_type, 0)
    return key, item


def _special(type_name: str, buf: bytes, start: int, end: int) -> Any:
    if type_name.endswith(".ExtraValue"):  # Go's []string: every field 1 in order, as a JSON array
        return [_text(buf, [value]) for value in _fields(buf, start, end).get(1, [])]
    fields: dict[int, tuple[int, Any]] = {}
    pos = start
    while pos < end:
        number, wire, value, pos = _next_field(buf, pos, end)
        fields[number] = (wire, value)
    if type_name in ("meta.v1.Time", "meta.v1.MicroTime"):
        if start == end:
            return None  # a zero Time is written as no bytes; its JSON is null
        seconds = _scalar("int64", *fields.get(1, (_VARINT, 0)), buf)
        nanos = _scalar("int32", *fields.get(2, (_VARINT, 0)), buf)
        micros = 0 if type_name == "meta.v1.Time" else nanos // 1000  # Time's Unmarshal drops nanos
        try:
            moment = _EPOCH + timedelta(seconds=seconds, microseconds=micros)
        except OverflowError as e:
            raise _Malformed(f"timestamp out of range: {seconds}s") from e
        text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
        return f"{text}Z" if type_name == "meta.v1.Time" else f"{text}.{moment.microsecond:06d}Z"
    if type_name == "intstr.IntOrString":
        kind = _scalar("int64", *fields.get(1, (_VARINT, 0)), buf)
        if kind == 0:
            return _scalar("int32", *fields.get(2, (_VARINT, 0)), buf)
        if kind == 1:
            return _scalar("string", *fields.get(3, (_LENGTH, (0, 0))), buf)
        raise _Malformed(f"impossible IntOrString.Type {kind}")
    if type_name == "resource.Quantity":
        text = _scalar("string", *fields.get(1, (_LENGTH, (0, 0))), buf)
        return text or "0"
    if type_name == "meta.v1.FieldsV1":
        wire, value = fields.get(1, (_LENGTH, (0, 0)))
        if wire != _LENGTH:
            raise _Malformed(f"FieldsV1: expected bytes, got wire type {wire}")
        if value[0] == value[1]:
            return None
        try:
            return orjson.loads(buf[value[0] : value[1]])
        except orjson.JSONDecodeError as e:
            raise _Malformed(f"FieldsV1 does not hold JSON: {e}") from e
    raise _Malformed(f"unsupported message {type_name}")
