"""``validate``: a custom resource against its structural schema, with kube-openapi's error texts and their
translation to field errors, list-type uniqueness and embedded-resource checks.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from devcluster.errors import Cause, duplicate, invalid_value, not_supported, required, too_long, too_many
from devcluster.gofmt import format_float
from devcluster.naming import dns1035_label_errors
from devcluster.schemas.formats import _format_ok
from devcluster.schemas.paths import _META_FIELDS, EMBEDDED, LIST_MAP_KEYS, LIST_TYPE, _additional, _child, _index, _schema
from devcluster.schemas.values import _declared_types, _is_int, _is_json_integer, _is_number, _json_equal, _json_type, _q, _type_matches

# --------------------------------------------------------------------------- validation


def validate(obj: dict[str, Any], schema: dict[str, Any]) -> list[Cause]:
    """Validate a custom resource against its version's ``openAPIV3Schema`` (see module doc).

    Returns the causes kube-apiserver would put in its 422 (empty when valid). The root
    ``metadata`` is not looked at; CEL ``x-kubernetes-validations`` are not evaluated.
    """
    causes: list[Cause] = []
    _Validator(causes).node(obj, schema, "", root=True)
    causes.extend(_embedded_checks(obj, schema, "", root=True))
    # kube reports a cause once even when the schema and the list-type checks both find it
    # (e.g. a list-map item missing its key is also a missing required property).
    causes.extend(c for c in _list_checks(obj, schema, "") if c not in causes)
    return causes


def _subject(path: str) -> str:
    return f"{path} in body" if path else "in body"


def _type_cause(path: str, shown: str, detail: str) -> Cause:
    """``field.TypeInvalid``: kube shows the offending type name (or formatted string) as the value."""
    return Cause(path, "FieldValueTypeInvalid", f"Invalid value: {_q(shown)}: {detail}")


def _fewest(results: list[list[Cause]]) -> list[Cause]:
    """The alternative with the fewest errors (kube-openapi keeps the one with the most passing checks)."""
    best = results[0]
    for result in results[1:]:
        if len(result) < len(best):
            best = result
    return best


def _composite(path: str, message: str) -> Cause:
    """A kube-openapi composite error: not a ``*Validation``, so kube reports it at field ``<nil>``."""
    return Cause("<nil>", "FieldValueInvalid", f'Invalid value: "": {_q(path)} {message}')


class _Validator:
    """kube-openapi's SchemaValidator: type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object."""

    def __init__(self, causes: list[Cause]) -> None:
        self.causes = causes

    def add(self, cause: Cause) -> None:
        self.causes.append(cause)

    def node(self, value: Any, s: Any, path: str, *, root: bool = False) -> None:
        if not isinstance(s, dict):
            return
        types = _declared_types(s)
        if value is None:
            if types and "null" not in types and not s.get("nullable"):
                self.add(_type_cause(path, "null", f'{_subject(path)} must be of type {",".join(types)}: "null"'))
            self._enum(value, s, path)
            return
        if types and not _type_matches(value, types):
            actual = _json_type(value)
            self.add(_type_cause(path, actual, f"{_subject(path)} must be of type {','.join(types)}: {_q(actual)}"))
        self._composites(value, s, path)
        if isinstance(value, str):
            self._string(value, s, path)
        elif _is_number(value):
            self._number(value, s, path)
        elif isinstance(value, list):
            self._array(value, s, path)
        self._enum(value, s, path)
        if isinstance(value, dict):
            self._object(value, s, path, root=root)

    def _sub(self, value: Any, s: Any, path: str) -> list[Cause]:
        sub: list[Cause] = []
        _Validator(sub).node(value, s, path)
        return sub

    def _composites(self, value: Any, s: dict[str, Any], path: str) -> None:
        any_of = s.get("anyOf")
        if isinstance(any_of, list) and any_of:
            results = [self._sub(value, alt, path) for alt in any_of]
            if all(results):
                self.add(_composite(path, "must validate at least one schema (anyOf)"))
                self.causes.extend(_fewest(results))
        one_of = s.get("oneOf")
        if isinstance(one_of, list) and one_of:
            results = [self._sub(value, alt, path) for alt in one_of]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                self.add(_composite(path, f"must validate one and only one schema (oneOf). {extra}"))
                if valid == 0:
                    self.causes.extend(_fewest(results))
        all_of = s.get("allOf")
        if isinstance(all_of, list) and all_of:
            results = [self._sub(value, alt, path) for alt in all_of]
            failed = [r for r in results if r]
            for r in results:
                self.causes.extend(r)
            if failed:
                extra = ". None validated" if len(failed) == len(results) else ""
                self.add(_composite(path, f"must validate all the schemas (allOf){extra}"))
        not_schema = s.get("not")
        if isinstance(not_schema, dict) and not self._sub(value, not_schema, path):
            self.add(_composite(path, "must not validate the schema (not)"))

    def _string(self, value: str, s: dict[str, Any], path: str) -> None:
        max_length = s.get("maxLength")
        if _is_int(max_length) and len(value) > max_length:
            self.add(too_long(path, max_length))
        min_length = s.get("minLength")
        if _is_int(min_length) and len(value) < min_length:
            self.add(invalid_value(path, value, f"{_subject(path)} should be at least {min_length} chars long"))
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            try:
                matched = re.search(pattern, value) is not None
            except re.error:
                matched = True  # validate_crd rejects such schemas; nothing sensible to report here
            if not matched:
                self.add(invalid_value(path, value, f"{_subject(path)} should match '{pattern}'"))
        fmt = s.get("format")
        if isinstance(fmt, str) and fmt and _format_ok(fmt, value) is False:
            self.add(_type_cause(path, value, f"{_subject(path)} must be of type {fmt}: {_q(value)}"))

    def _number(self, value: float, s: dict[str, Any], path: str) -> None:
        def bound_text(bound: float) -> str:
            return str(int(bound)) if _is_int(value) else format_float(float(bound))

        def as_bound(bound: float) -> float:
            return int(bound) if _is_int(value) else float(bound)  # kube compares ints with int64(bound)

        multiple = s.get("multipleOf")
        if _is_number(multiple) and multiple > 0:
            if _is_int(value) and int(multiple) != 0:
                if value % int(multiple) != 0:
                    self.add(invalid_value(path, value, f"{_subject(path)} should be a multiple of {int(multiple)}"))
            else:
                factor = float(multiple)
                mult = (1 / factor * value) if factor < 1 else (value / factor)
                if not _is_json_integer(float(mult)):
                    self.add(invalid_value(path, value, f"{_subject(path)} should be a multiple of {format_float(factor)}"))
        maximum = s.get("maximum")
        if _is_number(maximum):
            limit = as_bound(maximum)
            if s.get("exclusiveMaximum") is True and value >= limit:
                self.add(invalid_value(path, value, f"{_subject(path)} should be less than {bound_text(maximum)}"))
            elif value > limit:
                self.add(invalid_value(path, value, f"{_subject(path)} should be less than or equal to {bound_text(maximum)}"))
        minimum = s.get("minimum")
        if _is_number(minimum):
            limit = as_bound(minimum)
            if s.get("exclusiveMinimum") is True and value <= limit:
                self.add(invalid_value(path, value, f"{_subject(path)} should be greater than {bound_text(minimum)}"))
            elif value < limit:
                self.add(invalid_value(path, value, f"{_subject(path)} should be greater than or equal to {bound_text(minimum)}"))

    def _array(self, value: list[Any], s: dict[str, Any], path: str) -> None:
        size = len(value)
        min_items = s.get("minItems")
        if _is_int(min_items) and size < min_items:
            self.add(invalid_value(path, size, f"{_subject(path)} should have at least {min_items} items"))
        max_items = s.get("maxItems")
        if _is_int(max_items) and size > max_items:
            self.add(too_many(path, size, max_items))
        if s.get("uniqueItems") is True:
            seen: list[Any] = []
            for item in value:
                if any(_json_equal(item, other) for other in seen):
                    self.add(invalid_value(path, "", f"{_subject(path)} shouldn't contain duplicates"))
                    break
                seen.append(item)
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                self.node(item, items, _index(path, i))

    def _enum(self, value: Any, s: dict[str, Any], path: str) -> None:
        enum = s.get("enum")
        if not isinstance(enum, list) or not enum:
            return
        if any(_json_equal(value, allowed) for allowed in enum):
            return
        shown = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in enum]
        self.add(not_supported(path, value, shown))

    def _object(self, value: dict[str, Any], s: dict[str, Any], path: str, *, root: bool) -> None:
        count = len(value)
        min_props = s.get("minProperties")
        if _is_int(min_props) and count < min_props:
            self.add(invalid_value(path, count, f"{_subject(path)} should have at least {min_props} properties"))
            return
        max_props = s.get("maxProperties")
        if _is_int(max_props) and count > max_props:
            self.add(too_many(path, count, max_props))
            return
        for key in s.get("required") or []:
            if root and key == "metadata":
                continue
            if key not in value:
                self.add(required(_child(path, str(key))))
        props = s.get("properties") or {}
        for key, prop in props.items():
            if root and key == "metadata":
                continue
            if key in value:
                self.node(value[key], prop, _child(path, key))
        extra = _additional(s)
        if extra is not None:
            for key, item in value.items():
                if key in props or (root and key in _META_FIELDS):
                    continue
                self.node(item, extra, _child(path, key))


def _embedded_checks(x: Any, s: Any, path: str, *, root: bool = False) -> list[Cause]:
    """``objectmeta.Validate``'s apiVersion/kind checks of ``x-kubernetes-embedded-resource`` objects."""
    causes: list[Cause] = []
    if not isinstance(s, dict):
        return causes
    if isinstance(x, dict):
        if s.get(EMBEDDED) and not root:
            causes.extend(_embedded_type_meta(x, path))
        props = s.get("properties") or {}
        extra = _additional(s)
        for key, value in x.items():
            if root and key == "metadata":
                continue
            if key in props:
                causes.extend(_embedded_checks(value, props[key], _child(path, key)))
            elif extra is not None:
                causes.extend(_embedded_checks(value, extra, _child(path, key)))
    elif isinstance(x, list):
        for i, item in enumerate(x):
            causes.extend(_embedded_checks(item, s.get("items"), _index(path, i)))
    return causes


def _embedded_type_meta(x: dict[str, Any], path: str) -> list[Cause]:
    """An embedded object's apiVersion and kind: present, non-empty strings, and kind a DNS-1035 label (any case)."""
    causes: list[Cause] = []
    if "apiVersion" not in x:
        causes.append(required(_child(path, "apiVersion"), "must not be empty"))
    if "kind" not in x:
        causes.append(required(_child(path, "kind"), "must not be empty"))
    for key in ("apiVersion", "kind"):
        if key not in x:
            continue
        v = x[key]
        if not isinstance(v, str):
            causes.append(invalid_value(_child(path, key), v, "must be a string"))
        elif not v:
            causes.append(invalid_value(_child(path, key), v, "must not be empty"))
        elif key == "kind" and (errs := dns1035_label_errors(v.lower())):
            causes.append(invalid_value(_child(path, key), v, "may have mixed case, but should otherwise match: " + ",".join(errs)))
    return causes


def _list_checks(x: Any, s: Any, path: str) -> list[Cause]:
    """``structurallisttype.ValidateListSetsAndMaps``: set items unique, map keys present and unique."""
    causes: list[Cause] = []
    if not isinstance(s, dict):
        return causes
    if isinstance(x, list):
        list_type = s.get(LIST_TYPE)
        if list_type == "set":
            seen: dict[bytes, int] = {}
            for i, item in enumerate(x):
                key = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
                if isinstance(item, bool) or item is None:
                    key = b"s:" + key
                times = seen.get(key, 0)
                seen[key] = times + 1
                if times == 1:
                    causes.append(duplicate(_index(path, i), item))
        elif list_type == "map":
            causes.extend(_list_map_checks(x, s, path))
        for i, item in enumerate(x):
            causes.extend(_list_checks(item, s.get("items"), _index(path, i)))
    elif isinstance(x, dict):
        props = s.get("properties") or {}
        extra = _additional(s)
        for key, value in x.items():
            if key in props:
                causes.extend(_list_checks(value, props[key], _child(path, key)))
            elif extra is not None:
                causes.extend(_list_checks(value, extra, _child(path, key)))
    return causes


def _list_map_checks(x: list[Any], s: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    keys = [str(k) for k in s.get(LIST_MAP_KEYS) or []]
    item_schema = _schema(s.get("items")) or {}
    item_props = item_schema.get("properties") or {}
    seen: set[bytes] = set()
    for i, item in enumerate(x):
        if not isinstance(item, dict):
            causes.append(invalid_value(_index(path, i), item, "must be an object for an array of list-type map"))
            continue
        ident: dict[str, Any] = {}
        for key in keys:
            if key in item:
                ident[key] = item[key]
            else:
                default = (_schema(item_props.get(key)) or {}).get("default")
                if default is None:
                    causes.append(required(_child(_index(path, i), key)))
                    continue
                ident[key] = default
        token = orjson.dumps(ident, option=orjson.OPT_SORT_KEYS)
        if token in seen:
            causes.append(duplicate(_index(path, i), ident))
        seen.add(token)
    return causes
