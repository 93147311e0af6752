"""Generate ``devcluster/protobuf_schema.py`` from a kubectl binary.

Every Go program built with k8s.io/api (kubectl included) carries the gzipped
``FileDescriptorProto`` of each upstream ``generated.proto`` (registered by ``generated.pb.go``)
and, in its reflection data, each API struct field's name and Go tag. The descriptors give field
numbers, proto types, labels and gogoproto options (``nullable=false`` means a non-pointer Go
field, ``customname`` the Go field name); the Go tags give what the proto lacks: the JSON name,
``omitempty`` and ``json:",inline"`` (proto nests inlined structs as a field of their own).

Usage: ``python devcluster/scripts/gen_protobuf_schema.py [path/to/kubectl] > devcluster/src/devcluster/protobuf_schema.py``
(defaults to the kubectl on PATH). Only standard library; the output is committed.
"""

from __future__ import annotations

import array
import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from typing import Any

PACKAGES = {
    "k8s.io/api/core/v1/generated.proto": "core.v1",
    "k8s.io/api/apps/v1/generated.proto": "apps.v1",
    "k8s.io/api/networking/v1/generated.proto": "networking.v1",
    "k8s.io/api/coordination/v1/generated.proto": "coordination.v1",
    "k8s.io/api/rbac/v1/generated.proto": "rbac.v1",
    "k8s.io/api/policy/v1/generated.proto": "policy.v1",
    "k8s.io/api/autoscaling/v1/generated.proto": "autoscaling.v1",
    "k8s.io/api/authentication/v1/generated.proto": "authentication.v1",
    "k8s.io/api/authorization/v1/generated.proto": "authorization.v1",
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto": "meta.v1",
    "k8s.io/apimachinery/pkg/util/intstr/generated.proto": "intstr",
    "k8s.io/apimachinery/pkg/api/resource/generated.proto": "resource",
    "k8s.io/apimachinery/pkg/runtime/generated.proto": "runtime",
    "k8s.io/apimachinery/pkg/runtime/schema/generated.proto": "schema",
}
PROTO_PACKAGES = {
    "k8s.io.api.core.v1": "core.v1",
    "k8s.io.api.apps.v1": "apps.v1",
    "k8s.io.api.networking.v1": "networking.v1",
    "k8s.io.api.policy.v1": "policy.v1",
    "k8s.io.api.coordination.v1": "coordination.v1",
    "k8s.io.api.rbac.v1": "rbac.v1",
    "k8s.io.api.autoscaling.v1": "autoscaling.v1",
    "k8s.io.api.authentication.v1": "authentication.v1",
    "k8s.io.api.authorization.v1": "authorization.v1",
    "k8s.io.apimachinery.pkg.apis.meta.v1": "meta.v1",
    "k8s.io.apimachinery.pkg.util.intstr": "intstr",
    "k8s.io.apimachinery.pkg.api.resource": "resource",
    "k8s.io.apimachinery.pkg.runtime": "runtime",
    "k8s.io.apimachinery.pkg.runtime.schema": "schema",
}
GO_PACKAGES = {short: full.rpartition("/")[0] for full, short in PACKAGES.items()}
# (apiVersion, kind) -> top-level message: the kinds devcluster serves (CustomResourceDefinition is
# not compiled into kubectl, so it is not covered), plus the bodies client-go sends to them.
ROOTS = {
    ("v1", "Namespace"): "core.v1.Namespace",
    ("v1", "ConfigMap"): "core.v1.ConfigMap",
    ("v1", "Secret"): "core.v1.Secret",
    ("v1", "Service"): "core.v1.Service",
    ("v1", "Event"): "core.v1.Event",
    ("v1", "Pod"): "core.v1.Pod",
    ("v1", "ServiceAccount"): "core.v1.ServiceAccount",
    ("apps/v1", "Deployment"): "apps.v1.Deployment",
    ("networking.k8s.io/v1", "Ingress"): "networking.v1.Ingress",
    ("networking.k8s.io/v1", "NetworkPolicy"): "networking.v1.NetworkPolicy",
    ("policy/v1", "PodDisruptionBudget"): "policy.v1.PodDisruptionBudget",
    ("coordination.k8s.io/v1", "Lease"): "coordination.v1.Lease",
    ("rbac.authorization.k8s.io/v1", "Role"): "rbac.v1.Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "rbac.v1.RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "rbac.v1.ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "rbac.v1.ClusterRoleBinding",
    ("autoscaling/v1", "Scale"): "autoscaling.v1.Scale",
    # kubectl auth whoami / can-i: the reviews a caller makes about itself (answered, never stored)
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "authentication.v1.SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "authorization.v1.SelfSubjectAccessReview",
    # client-go stamps DeleteOptions with the group version of the client that sends it.
    ("*", "DeleteOptions"): "meta.v1.DeleteOptions",
}
# Messages whose JSON form is not an object of their fields; protobuf.py decodes them by name.
SPECIAL = {
    "meta.v1.Time",
    "meta.v1.MicroTime",
    "meta.v1.FieldsV1",
    "intstr.IntOrString",
    "resource.Quantity",
    # Go's `type ExtraValue []string`: a message of one repeated string in protobuf, a JSON array of strings
    "authentication.v1.ExtraValue",
    "authorization.v1.ExtraValue",
}
# Messages with their own JSON form that protobuf.py does not decode: none may be reachable.
UNSUPPORTED = {"meta.v1.Duration", "runtime.RawExtension", "runtime.Unknown", "meta.v1.Patch"}
SCALARS = {
    1: "double",
    2: "float",
    3: "int64",
    4: "uint64",
    5: "int32",
    6: "fixed64",
    7: "fixed32",
    8: "bool",
    9: "string",
    12: "bytes",
    13: "uint32",
    17: "sint32",
    18: "sint64",
}
NULLABLE, CUSTOMNAME = 65001, 65004


def _varint(b: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return result, i


def _fields(b: bytes) -> list[tuple[int, Any]]:
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            value, i = b[i : i + n], i + n
        elif wire == 1:
            value, i = b[i : i + 8], i + 8
        elif wire == 5:
            value, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, value))
    return out


def _descriptors(binary: bytes) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for m in re.finditer(b"\x1f\x8b\x08\x00\x00\x00\x00\x00", binary):
        try:
            out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(binary[m.start() : m.start() + 4_000_000])
        except zlib.error:
            continue
        if out[:1] == b"\x0a" and out[1] < 0x80:
            name = out[2 : 2 + out[1]].decode("latin-1")
            if name in PACKAGES:
                found.setdefault(name, out)
    missing = set(PACKAGES) - set(found)
    if missing:
        raise SystemExit(f"descriptors not found in the binary: {sorted(missing)}")
    return found


def _elf_segments(binary: bytes) -> list[tuple[int, int, int]]:
    """PT_LOAD segments of a 64-bit little-endian ELF executable: (file offset, vaddr, size)."""
    if binary[:4] != b"\x7fELF" or binary[4] != 2 or binary[5] != 1:
        raise SystemExit("expected a 64-bit little-endian ELF kubectl (linux/amd64 or arm64)")
    (phoff,) = struct.unpack_from("<Q", binary, 32)
    phentsize, phnum = struct.unpack_from("<HH", binary, 54)
    segments = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", binary, phoff + i * phentsize)
        if p_type == 1:
            segments.append((p_offset, p_vaddr, p_filesz))
    return segments


def _struct_tags(binary: bytes) -> dict[tuple[str, str], dict[str, tuple[str, bool]]]:
    """Go reflection data: (package path, type name) -> {Go field name: (json tag, embedded)}.

    A field's name and tag are one "name" blob (flags byte, varint length, name, varint length,
    tag); a struct type (abi.StructType: 48-byte abi.Type, PkgPath, Fields slice) points at an
    array of 24-byte StructField records whose first word is the address of such a blob. Its type
    name and (through the abi.UncommonType that follows it) package path are name offsets from
    the start of the type data, which is the start of the read-only data segment.
    """
    segments = _elf_segments(binary)

    def vaddr(offset: int) -> int:
        return next(v + offset - o for o, v, n in segments if o <= offset < o + n)

    def name_at(address: int) -> str:
        offset = next(o + address - v for o, v, n in segments if v <= address < v + n)
        length, begin = _varint(binary, offset + 1)
        return binary[begin : begin + length].decode("latin-1")

    blobs: dict[int, tuple[str, str, bool]] = {}
    for m in re.finditer(rb'json:"', binary):
        start = m.start()
        for width in (1, 2):
            raw_len = binary[start - width : start]
            length, used = _varint(raw_len + b"\x00", 0)
            if used != width:
                continue
            tag = binary[start : start + length]
            if not tag.endswith(b'"'):
                continue
            name_end = start - width
            for n in range(1, 80):
                name = binary[name_end - n : name_end]
                if (
                    binary[name_end - n - 1] == n
                    and binary[name_end - n - 2] in (0x03, 0x0B)
                    and re.fullmatch(rb"[A-Z][A-Za-z0-9_]*", name)
                ):
                    blobs[vaddr(name_end - n - 2)] = (name.decode(), tag.decode(), binary[name_end - n - 2] == 0x0B)
                    break
            break
    words = array.array("Q")
    words.frombytes(binary[: len(binary) // 8 * 8])
    record_at = {vaddr(i * 8): i for i, word in enumerate(words) if word in blobs}
    types_base = segments[1][1]
    result: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {}
    for i in range(7, len(words) - 2):
        first = words[i]
        if first not in record_at or words[i + 1] != words[i + 2] or not 0 < words[i + 1] < 300:
            continue
        type_start = (i - 7) * 8  # the Fields slice header sits 56 bytes into abi.StructType
        if not binary[type_start + 20] & 1:  # TFlagUncommon: named types carry their package path
            continue
        (str_off,) = struct.unpack_from("<i", binary, type_start + 40)
        (pkg_off,) = struct.unpack_from("<i", binary, type_start + 80)
        type_name = name_at(types_base + str_off).lstrip("*")
        package = name_at(types_base + pkg_off)
        j = record_at[first]
        fields: dict[str, tuple[str, bool]] = {}
        for k in range(words[i + 1]):
            blob = blobs.get(words[j + 3 * k])
            if blob is not None:
                json_tag = re.match(r'json:"([^"]*)"', blob[1])
                assert json_tag is not None
                fields[blob[0]] = (json_tag.group(1), blob[2])
        result[(package, type_name)] = fields
    return result


def _short(type_name: str) -> str:
    package, _, name = type_name.lstrip(".").rpartition(".")
    if package in PROTO_PACKAGES:
        return f"{PROTO_PACKAGES[package]}.{name}"
    # nested (map entry) types: package.Message.Entry
    outer_package, _, outer = package.rpartition(".")
    return f"{PROTO_PACKAGES[outer_package]}.{outer}.{name}"


def _q(text: str) -> str:
    return json.dumps(text)


def _camel(name: str) -> str:
    return name[:1].upper() + name[1:]


Messages = dict[str, list[dict[str, Any]]]
MapEntries = dict[str, tuple[str, str]]
Tables = dict[str, dict[int, tuple[str, str, str, bool, bool]]]


def _messages(binary: bytes) -> tuple[Messages, MapEntries]:
    """Every message of kubectl's FileDescriptorProtos (its fields) and every map entry type (key, value)."""
    messages: Messages = {}
    map_entries: MapEntries = {}
    for file_bytes in _descriptors(binary).values():
        fd = _fields(file_bytes)
        package = PROTO_PACKAGES[next(v.decode() for n, v in fd if n == 2)]
        for number, value in fd:
            if number != 4:
                continue
            msg = _fields(value)
            name = next(v.decode() for n, v in msg if n == 1)
            for n, nested in msg:
                if n == 3:  # nested map entry types
                    entry = _fields(nested)
                    entry_name = next(v.decode() for k, v in entry if k == 1)
                    entry_fields = {dict(_fields(f))[3]: dict(_fields(f)) for k, f in entry if k == 2}
                    key, val = entry_fields[1], entry_fields[2]
                    assert key[5] == 9, f"{name}.{entry_name}: non-string map key"
                    vtype = _short(val[6].decode()) if val[5] == 11 else SCALARS[val[5]]
                    map_entries[f"{package}.{name}.{entry_name}"] = ("string", vtype)
            fields = []
            for n, f in msg:
                if n != 2:
                    continue
                d = dict(_fields(f))
                opts = dict(_fields(d.get(8, b"")))
                fields.append(
                    {
                        "name": d[1].decode(),
                        "number": d[3],
                        "repeated": d[4] == 3,
                        "type": SCALARS.get(d[5]) or _short(d[6].decode()),
                        "message": d[5] == 11,
                        "pointer": opts.get(NULLABLE, 1) != 0,
                        "go": opts[CUSTOMNAME].decode() if CUSTOMNAME in opts else _camel(d[1].decode()),
                    }
                )
            messages[f"{package}.{name}"] = fields
    return messages, map_entries


def _reachable(messages: Messages, map_entries: MapEntries) -> list[str]:
    """The messages reachable from ROOTS, in the order found."""
    reachable: list[str] = []
    todo = list(dict.fromkeys(ROOTS.values()))
    while todo:
        name = todo.pop(0)
        if name in reachable:
            continue
        reachable.append(name)
        if name in SPECIAL:
            continue
        for f in messages[name]:
            target = f["type"]
            if f["message"] and target in map_entries:
                target = map_entries[target][1]
                if target not in messages:
                    continue
            if f["message"] and target not in reachable:
                todo.append(target)
    return reachable


def _tables(
    messages: Messages, map_entries: MapEntries, reachable: list[str], tags: dict[tuple[str, str], dict[str, tuple[str, bool]]]
) -> Tables:
    """The field table of every reachable message (JSON names and options from the Go struct tags ``tags``)."""
    problems: list[str] = [f"{name}: reachable but not supported by protobuf.py" for name in reachable if name in UNSUPPORTED]
    out: Tables = {}
    for name in sorted(reachable):
        if name in SPECIAL:
            continue
        table: dict[int, tuple[str, str, str, bool, bool]] = {}
        for f in messages[name]:
            prefix, _, type_name = name.rpartition(".")
            go_type = tags.get((GO_PACKAGES[prefix], f"{GO_PACKAGES[prefix].rpartition('/')[2]}.{type_name}"))
            if go_type is None or f["go"] not in go_type:
                problems.append(f"{name}.{f['name']}: no Go struct field {f['go']} found")
                continue
            json_tag, embedded = go_type[f["go"]]
            json_name, _, options = json_tag.partition(",")
            if json_name == "-":
                continue
            inline = "inline" in options.split(",")
            json_name = json_name or ("" if inline else f["go"])  # encoding/json's default name
            if f["message"] and f["type"] in map_entries:
                kind, target = "map", map_entries[f["type"]][1]
            elif inline:
                assert f["message"] and embedded, f"{name}.{f['name']}"
                kind, target = "inline", f["type"]
            else:
                kind, target = ("message" if f["message"] else "scalar"), f["type"]
            # A non-pointer scalar whose JSON tag has omitempty: Go's JSON drops its zero value,
            # while gogo protobuf always writes it.
            omit_zero = kind == "scalar" and not f["repeated"] and not f["pointer"] and "omitempty" in options.split(",")
            table[f["number"]] = (json_name if not inline else "", kind, target, f["repeated"] and kind != "map", omit_zero)
        out[name] = table
    if problems:
        raise SystemExit("\n".join(problems))
    return out


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else shutil.which("kubectl")
    if not path:
        raise SystemExit("no kubectl binary")
    binary = open(path, "rb").read()  # noqa: SIM115
    version = subprocess.run([path, "version", "--client", "-o", "yaml"], capture_output=True, text=True, check=False).stdout
    git_version = re.search(r"gitVersion: (\S+)", version)
    messages, map_entries = _messages(binary)
    out = _tables(messages, map_entries, _reachable(messages, map_entries), _struct_tags(binary))

    build = git_version.group(1) if git_version else "(unknown)"
    release = build.split("-", 1)[0]
    lines = [
        '"""Field tables for decoding Kubernetes protobuf request bodies (see ``protobuf.py``).',
        "",
        "GENERATED by scripts/gen_protobuf_schema.py - do not edit. Derived from the upstream",
        "generated.proto files of k8s.io/api (core/v1, apps/v1, networking/v1, policy/v1, coordination/v1, rbac/v1,",
        "autoscaling/v1) and k8s.io/apimachinery (meta/v1, util/intstr, api/resource, runtime) at",
        f"Kubernetes {release}, as compiled into kubectl {build} (its FileDescriptorProtos, plus",
        "its Go struct tags for JSON names, omitempty and inline).",
        "",
        "MESSAGES: message -> {field number: (json name, kind, type, repeated, omit zero)}.",
        '  kind "scalar": type is the proto scalar type; "message": type is a message name;',
        '  "map": map<string, type> (type a scalar or message); "inline": a message whose fields',
        "  JSON merges into the parent (json name empty). omit zero: a non-pointer Go field with",
        "  omitempty, so its zero value (always written by gogo protobuf) is absent in JSON.",
        "SPECIAL: messages with their own JSON form (decoded by name in protobuf.py).",
        'ROOTS: (apiVersion, kind) -> top-level message ("*": any apiVersion).',
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "SPECIAL = frozenset(\n    {\n" + "".join(f"        {_q(s)},\n" for s in sorted(SPECIAL)) + "    }\n)",
        "",
        "ROOTS: dict[tuple[str, str], str] = {",
        *(f"    ({_q(k[0])}, {_q(k[1])}): {_q(v)}," for k, v in ROOTS.items()),
        "}",
        "",
        "MESSAGES: dict[str, dict[int, tuple[str, str, str, bool, bool]]] = {",
    ]
    for name, table in out.items():
        lines.append(f"    {_q(name)}: {{")
        lines.extend(
            f"        {number}: ({', '.join(_q(v) if isinstance(v, str) else repr(v) for v in spec)}),"
            for number, spec in sorted(table.items())
        )
        lines.append("    },")
    lines.append("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
