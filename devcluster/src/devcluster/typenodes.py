"""Built-in kinds' schemas compiled into typed nodes: the Go view of a kind that decoding walks.

The bundled kube-apiserver OpenAPI documents (``bundled_openapi.py``) say what each field holds;
``go_types.json.gz`` says how Go names it (struct, field path, type). :func:`root` compiles a kind
once, on first use, into a tree of :class:`Node` s - structs with :class:`Field` s, maps, lists and
leaves (strings, ``[]byte``, int32/int64, float64, bool, and the types with their own JSON form:
Time, MicroTime, Quantity, IntOrString; ANY for raw JSON such as RawExtension and FieldsV1).
Nodes are shared within a group/version and may be recursive (JSONSchemaProps). Used by
``decoding.py`` and ``typedpatch.py``.
"""

from __future__ import annotations

from typing import Any

from devcluster import bundled_openapi

STRUCT, MAP, LIST, STRING, BYTES, INT32, INT64, FLOAT, BOOL, TIME, MICRO_TIME, QUANTITY, INT_OR_STRING, ANY = range(14)

_SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY,
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": TIME,
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": MICRO_TIME,
}
GO_TYPE = {
    STRING: "string",
    BYTES: "[]uint8",
    INT32: "int32",
    INT64: "int64",
    FLOAT: "float64",
    BOOL: "bool",
    TIME: "v1.Time",
    MICRO_TIME: "v1.MicroTime",
    QUANTITY: "resource.Quantity",
    INT_OR_STRING: "intstr.IntOrString",
    ANY: "interface {}",
}
_REF = "#/components/schemas/"


class Node:
    """One schema, compiled: a :data:`STRUCT` with fields, a :data:`MAP`/:data:`LIST` of ``elem``, or a leaf."""

    __slots__ = ("elem", "fields", "go_type", "kind", "list_keys", "list_type", "preserve")

    def __init__(self, kind: int, go_type: str = "") -> None:
        self.kind = kind
        self.fields: dict[str, Field] = {}
        self.elem: Node | None = None
        self.preserve = False
        self.go_type = go_type or GO_TYPE.get(kind, "")
        # how server-side apply identifies list items: "atomic" (index), "map" (list_keys) or "set"
        self.list_type = "atomic"
        self.list_keys: tuple[str, ...] = ()


class Field:
    """A struct field: its node, and the names Go's errors use (struct, Go path segment, Go types)."""

    __slots__ = ("node", "segment", "struct", "types")

    def __init__(self, node: Node, struct: str, segment: str, types: tuple[str, ...]) -> None:
        self.node, self.struct, self.segment, self.types = node, struct, segment, types


def _ref_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    if ref is None and isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1 and isinstance(schema["allOf"][0], dict):
        ref = schema["allOf"][0].get("$ref")
    return ref[len(_REF) :] if isinstance(ref, str) and ref.startswith(_REF) else ""


def _kind_of(schema: dict[str, Any], name: str) -> int:
    if name in _SPECIAL:
        return _SPECIAL[name]
    if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
        return INT_OR_STRING
    t = schema.get("type")
    if t == "object":
        if schema.get("properties"):
            return STRUCT
        return MAP if isinstance(schema.get("additionalProperties"), dict) else ANY
    if t == "array":
        return LIST if isinstance(schema.get("items"), dict) else ANY
    if t == "string":
        return {"byte": BYTES, "date-time": TIME}.get(schema.get("format") or "", STRING)
    if t == "integer":
        return INT64 if schema.get("format") == "int64" else INT32
    return {"number": FLOAT, "boolean": BOOL}.get(t or "", ANY)


class _Compiler:
    """Compiles the schemas of one group/version document; nodes are shared (and may be recursive)."""

    def __init__(self, schemas: dict[str, Any], go_types: dict[str, dict[str, list[str]]]) -> None:
        self.schemas, self.go_types = schemas, go_types
        self.named: dict[str, Node] = {}

    def node(self, schema: dict[str, Any]) -> Node:
        name = _ref_name(schema)
        if name:
            return self.named[name] if name in self.named else self.build(self.schemas.get(name) or {}, name)
        return self.build(schema, "")

    def build(self, schema: dict[str, Any], name: str) -> Node:
        kind = _kind_of(schema, name)
        node = Node(kind, f"v1.{name.rsplit('.', 1)[-1]}" if kind == STRUCT and name else "")
        if name:
            self.named[name] = node  # before the fields: schemas may refer to themselves
        node.preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        if kind == STRUCT:
            short = name.rsplit(".", 1)[-1] if name else ""
            go = self.go_types.get(name, {})
            for field_name, prop in (schema.get("properties") or {}).items():
                child = self.node(prop)
                entry = go.get(field_name)
                struct, _, segment = entry[0].partition(":") if entry else (short, ":", field_name)
                types = tuple(entry[1:]) if entry and len(entry) > 1 else _derived_types(child)
                node.fields[field_name] = Field(child, struct, segment, types)
        elif kind == MAP:
            node.elem = self.node(schema["additionalProperties"])
            node.go_type = f"map[string]{node.elem.go_type}"
        elif kind == LIST:
            node.elem = self.node(schema["items"])
            node.go_type = f"[]{node.elem.go_type}"
            list_type = schema.get("x-kubernetes-list-type")
            merge_key = schema.get("x-kubernetes-patch-merge-key")
            if list_type == "map":
                node.list_type, node.list_keys = "map", tuple(schema.get("x-kubernetes-list-map-keys") or ())
            elif list_type == "set":
                node.list_type = "set"
            elif list_type is None and merge_key and "merge" in str(schema.get("x-kubernetes-patch-strategy") or ""):
                node.list_type, node.list_keys = "map", (merge_key,)
        return node


def _derived_types(node: Node) -> tuple[str, ...]:
    types = []
    current: Node | None = node
    while current is not None:
        types.append(current.go_type)
        current = current.elem
    return tuple(types)


_COMPILERS: dict[str, _Compiler] = {}
_ROOTS: dict[tuple[str, str], Node | None] = {}


def root(group_version: str, kind: str) -> Node | None:
    """The compiled schema of a built-in kind (None if the bundled documents do not describe it)."""
    key = (group_version, kind)
    if key not in _ROOTS:
        name = bundled_openapi.kind_schemas(group_version).get(kind)
        node = None
        if name:
            compiler = _COMPILERS.get(group_version)
            if compiler is None:
                compiler = _COMPILERS[group_version] = _Compiler(bundled_openapi.schemas(group_version), bundled_openapi.go_types())
            node = compiler.node({"$ref": _REF + name})
        _ROOTS[key] = node
    return _ROOTS[key]
