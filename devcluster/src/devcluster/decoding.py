"""Typed decoding of built-in objects, the way kube-apiserver decodes a request into Go structs.

kube-apiserver decodes a built-in object's JSON into its Go type (``sigs.k8s.io/json``, strict)
before anything else looks at it. devcluster has no Go types, so it walks the JSON against the
kind's schema in the bundled OpenAPI documents (compiled once per kind by ``typenodes.py``) and
does what the Go decoder does:

* unknown fields (``spec.replicass``, ``dataa``, ``spec.template.spec.containers[0].foo``) are
  dropped and reported as ``unknown field "..."``, duplicate fields (found by ``duplicates.py``)
  as ``duplicate field "..."``, in document order; :func:`field_validation` turns those into a
  strict decoding error, warnings or nothing per ``fieldValidation`` - for custom resources too,
  whose unknown fields ``schemas.prune`` finds.
* wrong JSON types fail with Go's text naming the Go struct, field path and type
  (``json: cannot unmarshal number into Go struct field ConfigMap.data of type string``; names
  from ``go_types.json.gz``). The first such error in document order wins, but an error from a
  type with its own ``UnmarshalJSON`` (Time, MicroTime, Quantity, IntOrString) ends decoding
  where it happens, as in Go. Base64 errors of ``[]byte`` fields are reported bare.
* values come out as a decode/encode round trip leaves them: ``metav1.Time`` in UTC seconds,
  ``MicroTime`` in UTC microseconds (its layout demands exactly six digits), ``[]byte`` (Secret
  data) re-encoded as standard base64 (line breaks dropped), ``resource.Quantity`` canonical
  (``quantities.py``) and, in a ``v1.ResourceList``, rounded up to milli; ``null`` fields are
  dropped and ``null`` map values / list items become their type's zero value.
* the :data:`UNSTRUCTURED` style is ``runtime.DefaultUnstructuredConverter`` instead, which is
  what decodes a strategic-merge-patched object: ``cannot convert int64 to string``,
  ``unrecognized type: int32``, ``cannot restore struct from: string``; the first error ends it,
  integral floats are accepted for integers.

Known differences: Go decodes duplicates into the value decoded so far, so duplicate objects
merge; here nested objects merge and everything else is last-wins (Go also merges the items of
duplicated lists). Nulls of Go fields that are neither pointers nor omitempty are dropped rather
than encoded as zero values, and no other zero values are added or removed (Go's encoder would
write e.g. ``"reportingComponent": ""`` on an Event). A float's original spelling is gone once
parsed, so ``1e21`` is reported as ``number 1e+21``. :data:`UNSTRUCTURED` reports the first error
in key order, Go in struct-field order.

Used by ``writing/`` (create, update, patch, apply).
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

import orjson

from devcluster import gofmt, golang, quantities, typenodes
from devcluster.duplicates import Duplicates
from devcluster.errors import StatusError
from devcluster.typenodes import (
    ANY,
    BOOL,
    BYTES,
    FLOAT,
    GO_TYPE,
    INT32,
    INT64,
    INT_OR_STRING,
    LIST,
    MAP,
    MICRO_TIME,
    QUANTITY,
    STRING,
    STRUCT,
    TIME,
    Node,
)

JSON = "json"
UNSTRUCTURED = "unstructured"

_INT_LIMITS = {INT32: (-(1 << 31), (1 << 31) - 1), INT64: (-(1 << 63), (1 << 63) - 1)}
_RESOURCE_LIST = "v1.ResourceList"
# kinds whose valid values are exactly one Python type and need no normalising
_PLAIN: dict[int, type] = {STRING: str, BOOL: bool}


class DecodeError(StatusError):
    """The object cannot be decoded; ``message`` is kube's text (a bare 400 unless a caller adds context)."""

    def __init__(self, message: str, *, strict: bool = False) -> None:
        super().__init__(400, "BadRequest", message)
        self.strict = strict


class Decoder:
    """Decodes objects of one kind (see the module docstring)."""

    def __init__(self, root: Node, kind: str) -> None:
        self.root, self.kind = root, kind

    def decode(self, obj: dict[str, Any], *, style: str = JSON, sort_keys: bool = False, duplicates: Duplicates | None = None) -> list[str]:
        """Decode ``obj`` in place; return its unknown/duplicate field problems; raise :class:`DecodeError`."""
        walk = _Walk(style, sort_keys, duplicates.orders if duplicates else None)
        walk.struct_fields(obj, self.root)
        if walk.saved:
            raise DecodeError(walk.saved)
        return walk.problems


_DECODERS: dict[tuple[str, str], Decoder | None] = {}


def decoder_for(group_version: str, kind: str) -> Decoder | None:
    """The decoder of a built-in kind (None if the bundled documents do not describe it); built once."""
    key = (group_version, kind)
    if key not in _DECODERS:
        node = typenodes.root(group_version, kind)
        _DECODERS[key] = Decoder(node, kind) if node is not None else None
    return _DECODERS[key]


# --------------------------------------------------------------------------------------------
# the walk


def _json_kind(value: Any) -> str:
    """How Go's decoder names a JSON value in UnmarshalTypeError."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "object"


def _zero(node: Node) -> Any:
    kind = node.kind
    if kind in (STRING, BYTES):
        return ""
    if kind in (INT32, INT64, FLOAT, INT_OR_STRING):
        return 0
    if kind == BOOL:
        return False
    if kind == STRUCT:
        return {}
    return "0" if kind == QUANTITY else None


class _Walk:
    """One decoding pass: collects problems and the first saved error, raises on an aborting one."""

    def __init__(self, style: str, sort_keys: bool, orders: dict[str, list[str]] | None) -> None:
        self.unstructured = style == UNSTRUCTURED
        self.sort = sort_keys or self.unstructured
        self.orders = orders
        self.problems: list[str] = []
        self.saved = ""
        self.jpath: list[str] = []  # ".spec", "[0]", ".key": the kube path of unknown/duplicate fields
        self.gpath: list[str] = []  # Go's field path: struct fields only, embedded structs named

    def path(self) -> str:
        text = "".join(self.jpath)
        return text[1:] if text.startswith(".") else text

    def keys(self, obj: dict[str, Any]) -> tuple[list[str], set[str] | None]:
        if self.orders:
            order = self.orders.get(self.path())
            if order:
                return order, set()
        return (sorted(obj) if self.sort else list(obj)), None

    def duplicate(self, key: str, seen: set[str] | None) -> bool:
        if seen is None:
            return False
        if key in seen:
            self.jpath.append("." + key)
            self.problems.append(f'duplicate field "{self.path()}"')
            self.jpath.pop()
            return True
        seen.add(key)
        return False

    # -- containers ------------------------------------------------------------------------

    def struct_fields(self, obj: dict[str, Any], node: Node) -> None:
        keys, seen = self.keys(obj)
        fields = node.fields
        for key in keys:
            if seen is not None and (self.duplicate(key, seen) or key not in obj):
                continue
            field = fields.get(key)
            if field is None:
                if not node.preserve:
                    self.jpath.append("." + key)
                    self.problems.append(f'unknown field "{self.path()}"')
                    self.jpath.pop()
                    del obj[key]
                continue
            value = obj[key]
            if value is None:
                del obj[key]
                continue
            child = field.node
            if _PLAIN.get(child.kind) is type(value) or child.kind == ANY:
                continue  # the common case, without a call
            self.jpath.append("." + key)
            self.gpath.append(field.segment)
            obj[key] = self.value(value, child, field.struct, field.types, 0)
            self.gpath.pop()
            self.jpath.pop()

    def map_values(self, obj: dict[str, Any], node: Node, struct: str, types: tuple[str, ...], depth: int) -> None:
        elem = node.elem
        assert elem is not None
        plain = _PLAIN.get(elem.kind)
        if plain is not None and not self.orders and all(type(v) is plain for v in obj.values()):
            return  # labels, annotations, ConfigMap data: nothing to do
        milli = elem.kind == QUANTITY and depth < len(types) and types[depth] == _RESOURCE_LIST
        keys, seen = self.keys(obj)
        for key in keys:
            if self.duplicate(key, seen):
                continue
            value = obj[key]
            self.jpath.append("." + key)
            if value is None:
                obj[key] = _zero(elem)
            elif milli:
                obj[key] = self.quantity(value, milli=True)
            else:
                obj[key] = self.value(value, elem, struct, types, depth + 1)
            self.jpath.pop()

    def list_items(self, items: list[Any], node: Node, struct: str, types: tuple[str, ...], depth: int) -> None:
        elem = node.elem
        assert elem is not None
        plain = _PLAIN.get(elem.kind)
        if plain is not None and all(type(v) is plain for v in items):
            return
        for i, value in enumerate(items):
            self.jpath.append(f"[{i}]")
            items[i] = _zero(elem) if value is None else self.value(value, elem, struct, types, depth + 1)
            self.jpath.pop()

    # -- one value -------------------------------------------------------------------------

    def value(self, value: Any, node: Node, struct: str, types: tuple[str, ...], depth: int) -> Any:
        kind = node.kind
        if kind == STRUCT:
            if isinstance(value, dict):
                self.struct_fields(value, node)
            else:
                self.mismatch(value, f"cannot restore struct from: {gofmt.kind_name(value)}", struct, types, depth)
        elif kind == MAP:
            if isinstance(value, dict):
                self.map_values(value, node, struct, types, depth)
            else:
                self.mismatch(value, f"cannot restore map from {gofmt.kind_name(value)}", struct, types, depth)
        elif kind == LIST:
            if isinstance(value, list):
                self.list_items(value, node, struct, types, depth)
            else:
                self.mismatch(value, f"cannot restore slice from {gofmt.kind_name(value)}", struct, types, depth)
        elif kind == ANY:
            pass
        elif kind == STRING:
            return self.string(value, struct, types, depth)
        elif kind in (INT32, INT64, FLOAT, BOOL):
            return self.number_or_bool(value, node, struct, types, depth)
        else:
            return self.special(value, node, struct, types, depth)
        return value

    def go_type(self, types: tuple[str, ...], depth: int, node: Node | None = None) -> str:
        return types[depth] if depth < len(types) else (node.go_type if node is not None else "")

    def mismatch(self, value: Any, unstructured: str, struct: str, types: tuple[str, ...], depth: int) -> None:
        """A value of the wrong JSON type: saved (JSON style) or fatal (unstructured style)."""
        if self.unstructured:
            raise DecodeError(unstructured)
        self.save(_json_kind(value), struct, types, depth)

    def save(self, what: str, struct: str, types: tuple[str, ...], depth: int) -> None:
        if not self.saved:
            self.saved = self.type_error(what, struct, self.go_type(types, depth))

    def type_error(self, what: str, struct: str, go_type: str) -> str:
        return f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(self.gpath)} of type {go_type}"

    def string(self, value: Any, struct: str, types: tuple[str, ...], depth: int) -> Any:
        if isinstance(value, str):
            return value
        if self.unstructured:
            if isinstance(value, int) and not isinstance(value, bool):
                raise DecodeError(f"cannot convert int64 to {self.go_type(types, depth)}")
            raise DecodeError("unrecognized type: string")
        self.save(_json_kind(value), struct, types, depth)
        return value

    def number_or_bool(self, value: Any, node: Node, struct: str, types: tuple[str, ...], depth: int) -> Any:
        kind = node.kind
        is_bool = isinstance(value, bool)
        if kind == BOOL:
            if is_bool:
                return value
        elif isinstance(value, int) and not is_bool:
            limits = _INT_LIMITS.get(kind)
            if limits is None or self.unstructured or limits[0] <= value <= limits[1]:
                return value
            self.save(f"number {value}", struct, types, depth)
            return value
        elif isinstance(value, float) and not is_bool:
            if kind == FLOAT:
                return value
            if self.unstructured:
                if value.is_integer():
                    return int(value)
                raise DecodeError(f"cannot convert float64 to {self.go_type(types, depth, node)}")
            self.save(f"number {value!r}", struct, types, depth)
            return value
        if self.unstructured:
            raise DecodeError(f"unrecognized type: {GO_TYPE[kind]}")
        self.save(_json_kind(value), struct, types, depth)
        return value

    def special(self, value: Any, node: Node, struct: str, types: tuple[str, ...], depth: int) -> Any:
        """Types with their own UnmarshalJSON (and []byte): their errors end decoding (base64's are saved)."""
        kind = node.kind
        if kind == BYTES:
            if not isinstance(value, str):
                self.mismatch(value, f"cannot restore slice from {gofmt.kind_name(value)}", struct, types, depth)
                return value
            try:
                return base64.b64encode(golang.b64decode(value)).decode()
            except golang.GoError as e:
                if self.unstructured:
                    raise DecodeError(str(e)) from None
                if not self.saved:
                    self.saved = str(e)
                return value
        if kind == QUANTITY:
            return self.quantity(value, milli=False)
        if kind in (TIME, MICRO_TIME):
            layout = golang.RFC3339_MICRO if kind == MICRO_TIME else golang.RFC3339
            if isinstance(value, datetime.datetime):  # an unquoted YAML timestamp (Go's YAML keeps it a string)
                return golang.format_time(value if value.tzinfo else value.replace(tzinfo=datetime.UTC), layout)
            if not isinstance(value, str):
                raise DecodeError(self.inner_type_error(_json_kind(value), struct, "string"))
            try:
                return golang.normalize_time(value, layout)
            except golang.GoError as e:
                raise DecodeError(str(e)) from None
        # INT_OR_STRING: a string, else json.Unmarshal into its int32
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if _INT_LIMITS[INT32][0] <= value <= _INT_LIMITS[INT32][1]:
                return value
            raise DecodeError(self.inner_type_error(f"number {value}", struct, "int32"))
        if isinstance(value, float) and self.unstructured and value.is_integer():
            return int(value)
        what = f"number {gofmt.format_float(value) if self.unstructured else repr(value)}" if isinstance(value, float) else None
        raise DecodeError(self.inner_type_error(what or _json_kind(value), struct, "int32"))

    def inner_type_error(self, what: str, struct: str, go_type: str) -> str:
        """An UnmarshalTypeError from a custom unmarshaler: Go adds the field context; the converter does not."""
        if self.unstructured:
            return f"json: cannot unmarshal {what} into Go value of type {go_type}"
        return self.type_error(what, struct, go_type)

    def quantity(self, value: Any, *, milli: bool) -> str:
        text = value.strip() if isinstance(value, str) else orjson.dumps(value).decode()
        try:
            parsed = quantities.parse(text)
        except quantities.QuantityError as e:
            raise DecodeError(str(e)) from None
        return quantities.canonical(quantities.round_up(parsed) if milli else parsed)


# --------------------------------------------------------------------------------------------
# fieldValidation


def field_validation(problems: list[str], directive: str) -> list[str]:
    """Apply ``fieldValidation`` to unknown/duplicate field problems: the warnings to send.

    Strict raises one strict decoding error listing every problem; Warn returns them as
    warnings; Ignore drops them.
    """
    if not problems or directive == "Ignore":
        return []
    if directive == "Strict":
        raise DecodeError("strict decoding error: " + ", ".join(problems), strict=True)
    return list(problems)
