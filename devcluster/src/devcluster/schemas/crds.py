"""``validate_crd``: the ``ValidateCustomResourceDefinition`` checks that matter to devcluster (names, scope,
versions, structural schemas, defaults, additionalPrinterColumns).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from devcluster.errors import Cause, forbidden, invalid_value, not_supported, required
from devcluster.naming import dns1035_label_errors, dns1123_subdomain_errors, validate_object_meta
from devcluster.schemas.paths import _OPENAPI_TYPES, EMBEDDED, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, PRESERVE
from devcluster.schemas.pruning import _prune
from devcluster.schemas.validation import _list_checks, _Validator

# --------------------------------------------------------------------------- CRDs

_PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
_PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]


def validate_crd(crd: dict[str, Any]) -> list[Cause]:
    """The ``ValidateCustomResourceDefinition`` checks for an ``apiextensions.k8s.io/v1`` CRD.

    v1 defaulting is assumed first (``names.singular`` = lowercase kind, ``names.listKind`` =
    kind + "List") as kube-apiserver defaults before it validates.
    """
    meta = crd.get("metadata") if isinstance(crd.get("metadata"), dict) else {}
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    assert isinstance(meta, dict) and isinstance(spec, dict)
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    assert isinstance(names, dict)
    group = str(spec.get("group") or "")
    return [
        *_metadata_causes(meta, f"{names.get('plural') or ''}.{group}"),
        *_group_causes(group),
        *_scope_causes(str(spec.get("scope") or "")),
        *_versions_causes(spec.get("versions")),
        *_names_causes(names),
    ]


def _metadata_causes(meta: dict[str, Any], expected_name: str) -> list[Cause]:
    """metadata: a DNS subdomain that is exactly <plural>.<group>."""
    name = str(meta.get("name") or "")
    meta_for_checks = {k: v for k, v in meta.items() if k not in ("name", "generateName")}
    meta_for_checks["name"] = name or "x"  # the name itself is checked below with the CRD rule
    causes = validate_object_meta(meta_for_checks, name_rule="subdomain", namespaced=False, creating=True)
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        msgs = dns1123_subdomain_errors(name)
        if name != expected_name:
            msgs.append('must be spec.names.plural+"."+spec.group')
        causes.extend(invalid_value("metadata.name", name, m) for m in msgs)
    return causes


def _group_causes(group: str) -> list[Cause]:
    if not group:
        return [required("spec.group")]
    if errs := dns1123_subdomain_errors(group):
        return [invalid_value("spec.group", group, ",".join(errs))]
    if len(group.split(".")) < 2:
        return [invalid_value("spec.group", group, "should be a domain with at least one dot")]
    return []


def _scope_causes(scope: str) -> list[Cause]:
    if not scope:
        return [required("spec.scope")]
    if scope not in ("Cluster", "Namespaced"):
        return [not_supported("spec.scope", scope, ["Cluster", "Namespaced"])]
    return []


def _versions_causes(versions: Any) -> list[Cause]:
    """Each version's name, schema and printer columns; unique names; exactly one storage version."""
    if not isinstance(versions, list):
        versions = []
    causes: list[Cause] = []
    if not versions:
        causes.append(required("spec.versions", "must have at least one version"))
    storage = 0
    seen_names: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        vpath = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            causes.append(invalid_value(vpath, version, "must be an object"))
            continue
        if version.get("storage") is True:
            storage += 1
        vname = str(version.get("name") or "")
        if vname in seen_names:
            unique = False
        seen_names.add(vname)
        if errs := dns1035_label_errors(vname):
            causes.append(invalid_value(f"{vpath}.name", vname, ",".join(errs)))
        causes.extend(_validate_version_schema(version, f"{vpath}.schema"))
        for j, column in enumerate(version.get("additionalPrinterColumns") or []):
            causes.extend(_validate_printer_column(column, f"{vpath}.additionalPrinterColumns[{j}]"))
    if not unique:
        causes.append(invalid_value("spec.versions", versions, "must contain unique version names"))
    if storage != 1:
        causes.append(invalid_value("spec.versions", versions, "must have exactly one version marked as storage version"))
    return causes


def _name_causes(path: str, value: str, *, mixed_case: bool = False) -> list[Cause]:
    """A required DNS-1035 label (kinds: may have mixed case, checked lowercased)."""
    if not value:
        return [required(path)]
    if errs := dns1035_label_errors(value.lower() if mixed_case else value):
        prefix = "may have mixed case, but should otherwise match: " if mixed_case else ""
        return [invalid_value(path, value, prefix + ",".join(errs))]
    return []


def _names_causes(names: dict[str, Any]) -> list[Cause]:
    """spec.names, after v1 defaulting of singular and listKind."""
    npath = "spec.names"
    kind = str(names.get("kind") or "")
    list_kind = str(names.get("listKind") or (kind + "List" if kind else ""))
    causes = [
        *_name_causes(f"{npath}.plural", str(names.get("plural") or "")),
        *_name_causes(f"{npath}.singular", str(names.get("singular") or kind.lower())),
        *_name_causes(f"{npath}.kind", kind, mixed_case=True),
        *_name_causes(f"{npath}.listKind", list_kind, mixed_case=True),
    ]
    if kind and kind == list_kind:
        causes.append(invalid_value(f"{npath}.listKind", list_kind, "kind and listKind may not be the same"))
    for field_name in ("shortNames", "categories"):
        for j, item in enumerate(names.get(field_name) or []):
            if errs := dns1035_label_errors(str(item)):
                causes.append(invalid_value(f"{npath}.{field_name}[{j}]", item, ",".join(errs)))
    return causes


def _validate_printer_column(column: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(column, dict):
        return [invalid_value(path, column, "must be an object")]
    if not column.get("name"):
        causes.append(required(f"{path}.name"))
    col_type = column.get("type")
    must = "must be one of " + ",".join(_PRINTER_COLUMN_TYPES)
    if not col_type:
        causes.append(required(f"{path}.type", must))
    elif col_type not in _PRINTER_COLUMN_TYPES:
        causes.append(invalid_value(f"{path}.type", col_type, must))
    fmt = column.get("format")
    if fmt and fmt not in _PRINTER_COLUMN_FORMATS:
        causes.append(invalid_value(f"{path}.format", fmt, "must be one of " + ",".join(_PRINTER_COLUMN_FORMATS)))
    json_path = column.get("jsonPath")
    if not json_path:
        causes.append(required(f"{path}.jsonPath"))
    elif not str(json_path).startswith("."):
        causes.append(invalid_value(f"{path}.jsonPath", json_path, "must be a simple json path starting with ."))
    return causes


def _validate_version_schema(version: dict[str, Any], path: str) -> list[Cause]:
    schema = version.get("schema")
    root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
    spath = f"{path}.openAPIV3Schema"
    if not isinstance(root, dict):
        return [required(spath, "schemas are required")]
    causes: list[Cause] = []
    _structural(root, "root", spath, causes)
    return causes


def _structural(s: Any, level: str, path: str, causes: list[Cause]) -> None:
    """Structural-schema invariants for one node and its children (``schema/validation.go`` + apiextensions checks)."""
    if not isinstance(s, dict):
        causes.append(invalid_value(path, s, "must be an object"))
        return
    t = s.get("type")
    causes.extend(_type_causes(s, t, level, path))
    causes.extend(_object_causes(s, path))
    causes.extend(_pattern_causes(s, path))
    causes.extend(_list_type_causes(s, t, path))
    if level == "root":
        causes.extend(_root_meta_causes(s, path))
    if "default" in s:
        causes.extend(_validate_default(s, path, level))

    for key, prop in (s.get("properties") or {}).items():
        _structural(prop, "field", f"{path}.properties[{key}]", causes)
    if isinstance(s.get("additionalProperties"), dict):
        _structural(s["additionalProperties"], "field", f"{path}.additionalProperties", causes)
    if isinstance(s.get("items"), dict):
        _structural(s["items"], "item", f"{path}.items", causes)


_EMPTY_TYPE = {
    "root": "must not be empty at the root",
    "item": "must not be empty for specified array items",
    "field": "must not be empty for specified object fields",
}


def _type_causes(s: dict[str, Any], t: Any, level: str, path: str) -> list[Cause]:
    """``type``: a known one, ``items`` for arrays, empty for int-or-string, object when embedded or at the root."""
    causes: list[Cause] = []
    if t is not None and t != "" and t not in _OPENAPI_TYPES:
        causes.append(not_supported(f"{path}.type", t, _OPENAPI_TYPES))
    if t == "array" and not isinstance(s.get("items"), dict):
        causes.append(required(f"{path}.items", "must be specified"))
    if s.get(INT_OR_STRING) and t:
        causes.append(invalid_value(f"{path}.type", t, "must be empty if x-kubernetes-int-or-string is true"))
    if s.get(EMBEDDED) and t != "object":
        if not t:
            causes.append(required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
        else:
            causes.append(invalid_value(f"{path}.type", t, "must be object if x-kubernetes-embedded-resource is true"))
    elif not t and not s.get(EMBEDDED) and not s.get(INT_OR_STRING) and not s.get(PRESERVE):
        causes.append(required(f"{path}.type", _EMPTY_TYPE[level]))
    if level == "root" and t and t != "object":
        causes.append(invalid_value(f"{path}.type", t, "must be object at the root"))
    return causes


def _object_causes(s: dict[str, Any], path: str) -> list[Cause]:
    """``properties`` / ``additionalProperties`` together, and what an embedded resource needs."""
    causes: list[Cause] = []
    if s.get("properties") and "additionalProperties" in s and s.get("additionalProperties") is not True:
        causes.append(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
    if s.get(EMBEDDED) and "additionalProperties" in s:
        causes.append(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
    if s.get(EMBEDDED) and not s.get(PRESERVE) and not s.get("properties"):
        causes.append(
            required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            )
        )
    return causes


def _pattern_causes(s: dict[str, Any], path: str) -> list[Cause]:
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            return [invalid_value(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}")]
    return []


def _list_type_causes(s: dict[str, Any], t: Any, path: str) -> list[Cause]:
    """``x-kubernetes-list-type`` (on arrays; ``map`` needs ``x-kubernetes-list-map-keys``, which needs ``map``)."""
    causes: list[Cause] = []
    list_type = s.get(LIST_TYPE)
    if list_type is not None:
        if list_type not in ("atomic", "set", "map"):
            causes.append(not_supported(f"{path}.{LIST_TYPE}", list_type, ["atomic", "set", "map"]))
        elif t != "array":
            causes.append(invalid_value(f"{path}.type", t, "must be array if x-kubernetes-list-type is specified"))
        elif list_type == "map" and not s.get(LIST_MAP_KEYS):
            causes.append(required(f"{path}.{LIST_MAP_KEYS}", "must not be empty if x-kubernetes-list-type is map"))
    if s.get(LIST_MAP_KEYS) and list_type != "map":
        causes.append(forbidden(f"{path}.{LIST_MAP_KEYS}", "must not be set if x-kubernetes-list-type is not map"))
    return causes


def _root_meta_causes(s: dict[str, Any], path: str) -> list[Cause]:
    """At the root, ``apiVersion`` and ``kind`` (when described) are strings."""
    causes: list[Cause] = []
    for meta_key in ("apiVersion", "kind"):
        prop = (s.get("properties") or {}).get(meta_key)
        if isinstance(prop, dict) and prop.get("type") != "string":
            causes.append(invalid_value(f"{path}.properties[{meta_key}].type", prop.get("type") or "", "must be string"))
    return causes


def _validate_default(s: dict[str, Any], path: str, level: str) -> list[Cause]:
    default = s["default"]
    dpath = f"{path}.default"
    if level == "root":
        return [forbidden(dpath, "must not be set at the root")]
    if default is None:
        if s.get("nullable"):
            return []
        return [forbidden(dpath, "must not be null for a non-nullable field")]
    if isinstance(default, dict):
        pruned, unknown = _prune_default(default, s)
        if unknown:
            return [invalid_value(dpath, default, "must not have unknown fields")]
        default = pruned
    found: list[Cause] = []
    _Validator(found).node(default, s, "")
    found.extend(_list_checks(default, s, ""))
    out = []
    for cause in found:
        where = dpath if not cause.field else (cause.field if cause.field == "<nil>" else f"{dpath}.{cause.field}")
        out.append(Cause(where, cause.reason, cause.message))
    return out


def _prune_default(default: dict[str, Any], s: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    out = copy.deepcopy(default)
    pruned: list[str] = []
    _prune(out, s, "", pruned)
    return out, pruned
