"""Custom resources against their CRD's structural ``openAPIV3Schema``, as kube-apiserver does it.

Pure functions on plain JSON values (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``);
inputs are never mutated.

* :func:`prune` - ``apiextensions-apiserver/pkg/apiserver/schema/pruning``: properties the schema
  does not know are dropped (and reported as ``spec.foo``-style paths, which the server turns into
  ``unknown field "spec.foo"`` warnings or strict-decoding errors with ``decoding.field_validation``,
  as it does for built-in kinds), except under
  ``x-kubernetes-preserve-unknown-fields: true``. The root, like every
  ``x-kubernetes-embedded-resource``, keeps ``apiVersion``/``kind`` (strings) and ``metadata``
  (an object); ``additionalProperties`` schemas apply to every key.
* :func:`apply_defaults` - ``schema/defaulting``: a property's ``default`` is set when the
  property is missing (or a non-nullable ``null``) and its parent object exists; defaults are
  applied top-down, so defaults nested in a defaulted object apply too. Non-nullable ``null``s
  without a default are removed first (``PruneNonNullableNullsWithoutDefaults``). The root's
  ``apiVersion``/``kind``/``metadata`` are never defaulted.
* :func:`validate` - ``apiserver/validation`` over kube-openapi's validator, with its error texts
  and its translation to field errors (``kubeOpenAPIResultToFieldErrors``), plus the
  ``x-kubernetes-list-type`` set/map uniqueness checks (``schema/listtype``) and the
  apiVersion/kind checks of embedded resources. The root ``metadata`` is left to
  :mod:`devcluster.naming`. ``allOf``/``anyOf``/``oneOf``/``not`` failures are reported as kube
  reports them: field ``<nil>``, ``Invalid value: "": "spec.x" must validate ...``.
* :func:`validate_crd` - the ``ValidateCustomResourceDefinition`` checks that matter here:
  name = plural.group, group, names, scope, versions (one storage version), structural schemas,
  defaults valid against their schema, additionalPrinterColumns.

Known differences from kube-apiserver:

* ``x-kubernetes-validations`` (CEL rules) are **not evaluated**; neither are
  transition rules or ratcheting of unchanged invalid values on update.
* String formats are those kube supports (``date-time``, ``date``, ``byte``, ``uri``, ``email``,
  ``uuid``/``uuid3``/``uuid4``/``uuid5``, ``hostname``, ``ipv4``, ``ipv6``, ``cidr``, ``mac``,
  ``duration``, ``hexcolor``, ``bsonobjectid``, ...); like kube, unsupported formats - including
  the numeric ``int32``/``int64``/``float``/``double`` - are ignored. ``email``/``uri``/``hostname``
  are close approximations of the Go parsers.
* Patterns are matched with Python's ``re`` (search semantics, like Go's ``MatchString``); RE2 and
  Python agree on everything CRDs normally use.
* Errors inside one object come in schema-property order (kube's order follows Go map iteration,
  i.e. is unspecified).
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
import ipaddress
import math
import re
from typing import Any, TypeGuard

import orjson

from devcluster.errors import Cause, duplicate, forbidden, invalid_value, not_supported, required, too_long, too_many, type_name
from devcluster.gofmt import format_float
from devcluster.naming import dns1035_label_errors, dns1123_subdomain_errors, validate_object_meta

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


# --------------------------------------------------------------------------- pruning


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return ``(pruned copy of obj, sorted paths of the dropped fields)``.

    The root is treated as an embedded resource: ``apiVersion``/``kind`` (if strings) and
    ``metadata`` (if an object) are kept whatever the schema says; the metadata's own fields are
    not looked at here.
    """
    out = copy.deepcopy(obj)
    root = dict(schema or {})
    root[EMBEDDED] = True
    pruned: list[str] = []
    _prune(out, root, "", pruned)
    return out, sorted(pruned)


def _is_embedded_meta(key: str, value: Any) -> bool:
    if key in ("apiVersion", "kind"):
        return isinstance(value, str)
    if key == "metadata":
        return isinstance(value, dict)
    return False


def _prune(x: Any, s: dict[str, Any] | None, path: str, pruned: list[str]) -> None:
    if s is not None and s.get(PRESERVE) is True:
        _skip_prune(x, s, path, pruned)
        return
    if isinstance(x, dict):
        if s is None:
            for key in list(x):
                pruned.append(_child(path, key))
                del x[key]
            return
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for key in list(x):
            value = x[key]
            if s.get(EMBEDDED) and _is_embedded_meta(key, value):
                continue
            if key in props:
                _prune(value, _schema(props[key]), _child(path, key), pruned)
            elif isinstance(extra, dict):
                _prune(value, extra, _child(path, key), pruned)
            elif extra is True:
                continue
            else:
                pruned.append(_child(path, key))
                del x[key]
    elif isinstance(x, list):
        items = None if s is None else _schema(s.get("items"))
        for i, item in enumerate(x):
            _prune(item, items, _index(path, i), pruned)


def _skip_prune(x: Any, s: dict[str, Any] | None, path: str, pruned: list[str]) -> None:
    """Below ``x-kubernetes-preserve-unknown-fields``: unknown keys stay, known ones are pruned."""
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        extra = _additional(s)
        for key, value in x.items():
            if s.get(EMBEDDED) and key in _META_FIELDS:
                continue
            if key in props:
                _prune(value, _schema(props[key]), _child(path, key), pruned)
            elif extra is not None:
                _prune(value, extra, _child(path, key), pruned)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for i, item in enumerate(x):
            _skip_prune(item, items, _index(path, i), pruned)


# --------------------------------------------------------------------------- defaulting


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``obj`` with the schema's ``default`` values filled in (see module doc)."""
    out = copy.deepcopy(obj)
    _prune_nulls(out, schema, root=True)
    _default(out, schema, root=True)
    return out


def _is_non_nullable_null(value: Any, s: dict[str, Any]) -> bool:
    return value is None and not s.get("nullable")


def _prune_nulls(x: Any, s: dict[str, Any] | None, *, root: bool = False) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        extra = _additional(s)
        for key in list(x):
            if root and key in _META_FIELDS:
                continue
            if key in props:
                sub = _schema(props[key])
                if sub is None:
                    continue
                if x[key] is None and sub.get("default") is None and not sub.get("nullable"):
                    del x[key]
                else:
                    _prune_nulls(x[key], sub)
            elif extra is not None:
                if x[key] is None and not extra.get("nullable"):
                    del x[key]
                else:
                    _prune_nulls(x[key], extra)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for item in x:
            _prune_nulls(item, items)


def _default(x: Any, s: dict[str, Any] | None, *, root: bool = False) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for key, prop in props.items():
            if root and key in _META_FIELDS:
                continue
            if not isinstance(prop, dict) or prop.get("default") is None:
                continue
            if key not in x or _is_non_nullable_null(x[key], prop):
                x[key] = copy.deepcopy(prop["default"])
        extra = _additional(s)
        for key, value in x.items():
            if root and key in _META_FIELDS:
                continue
            if key in props:
                _default(value, _schema(props[key]))
            elif extra is not None:
                _default(value, extra)
    elif isinstance(x, list):
        items = _schema(s.get("items"))
        for item in x:
            _default(item, items)


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


# --------------------------------------------------------------------------- formats

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_TIME_RE = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_UUID_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_EMAIL_ADDR_RE = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.\[\]:-]+$")
_EMAIL_NAMED_RE = re.compile(r"^[^<>]*<([^<>]+)>$")
_HOSTNAME_RE = re.compile(
    r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}([a-zA-Z]){2,63})$"
)
_URI_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MAC_RE = re.compile(
    r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}"
    r"|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$"
)
_DURATION_GO_RE = re.compile(r"^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$")
_DURATION_WORDS_RE = re.compile(
    r"^(?:[0-9]+)\s*(?:ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$",
    re.IGNORECASE,
)
_HEXCOLOR_RE = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR_RE = re.compile(rf"^rgb\({_OCTET},{_OCTET},{_OCTET}\)$")
_BSON_RE = re.compile(r"^[0-9a-fA-F]{24}$")
_SSN_RE = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10_RE = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13_RE = re.compile(r"^(?:[0-9]{13})$")
_CREDITCARD_RE = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$"
)


def _is_date(value: str) -> bool:
    if not _DATE_RE.fullmatch(value):
        return False
    try:
        datetime.date(int(value[0:4]), int(value[5:7]), int(value[8:10]))
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    """kube-openapi ``strfmt.IsDateTime``: RFC 3339 full-date "T" full-time (case-insensitive)."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _DATETIME_TIME_RE.match(parts[1])
    if not m:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _is_byte(value: str) -> bool:
    try:
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_uri(value: str) -> bool:
    """Approximates Go's ``url.ParseRequestURI``: an absolute URI or an absolute path."""
    if not value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    if value.startswith("/"):
        return True
    if not _URI_SCHEME_RE.match(value):
        return False
    rest = value.split(":", 1)[1]
    if rest.startswith("//"):
        host = rest[2:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if " " in host:
            return False
    return True


def _is_email(value: str) -> bool:
    """Approximates Go's ``mail.ParseAddress``: ``local@domain`` or ``Name <local@domain>``."""
    m = _EMAIL_NAMED_RE.match(value.strip())
    address = m.group(1) if m else value.strip()
    if not _EMAIL_ADDR_RE.match(address):
        return False
    local, _, domain = address.rpartition("@")
    return bool(local) and bool(domain) and not local.startswith(".") and not local.endswith(".") and ".." not in local


def _is_ip(value: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(value).version == version
    except ValueError:
        return False


def _is_cidr(value: str) -> bool:
    if "/" not in value:
        return False
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _is_isbn(value: str, kind: str) -> bool:
    digits = value.replace("-", "").replace(" ", "")
    if kind in ("isbn", "isbn10") and _ISBN10_RE.match(digits):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
        return total % 11 == 0
    if kind in ("isbn", "isbn13") and _ISBN13_RE.match(digits):
        total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits))
        return total % 10 == 0
    return False


def _format_ok(fmt: str, value: str) -> bool | None:
    """Whether ``value`` has format ``fmt``; ``None`` when kube ignores the format."""
    name = fmt.replace("-", "")
    checks: dict[str, Any] = {
        "datetime": _is_date_time,
        "date": _is_date,
        "byte": _is_byte,
        "uri": _is_uri,
        "email": _is_email,
        "uuid": lambda v: bool(_UUID_RE.match(v)),
        "uuid3": lambda v: bool(_UUID3_RE.match(v)),
        "uuid4": lambda v: bool(_UUID4_RE.match(v)),
        "uuid5": lambda v: bool(_UUID5_RE.match(v)),
        "hostname": lambda v: len(v) <= 255 and bool(_HOSTNAME_RE.match(v)),
        "ipv4": lambda v: _is_ip(v, 4),
        "ipv6": lambda v: _is_ip(v, 6),
        "cidr": _is_cidr,
        "mac": lambda v: bool(_MAC_RE.match(v)),
        "duration": lambda v: bool(_DURATION_GO_RE.match(v) or _DURATION_WORDS_RE.match(v)),
        "hexcolor": lambda v: bool(_HEXCOLOR_RE.match(v)),
        "rgbcolor": lambda v: bool(_RGBCOLOR_RE.match(v)),
        "bsonobjectid": lambda v: bool(_BSON_RE.match(v)),
        "ssn": lambda v: bool(_SSN_RE.match(v)),
        "isbn": lambda v: _is_isbn(v, "isbn"),
        "isbn10": lambda v: _is_isbn(v, "isbn10"),
        "isbn13": lambda v: _is_isbn(v, "isbn13"),
        "creditcard": lambda v: bool(_CREDITCARD_RE.match(re.sub(r"[^0-9]", "", v))),
        "password": lambda v: True,
    }
    check = checks.get(name)
    if check is None:
        return None
    return bool(check(value))


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


# --------------------------------------------------------------------------- CRDs

_PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
_PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]


def validate_crd(crd: dict[str, Any]) -> list[Cause]:
    """The ``ValidateCustomResourceDefinition`` checks for an ``apiextensions.k8s.io/v1`` CRD.

    v1 defaulting is assumed first (``names.singular`` = lowercase kind, ``names.listKind`` =
    kind + "List") as kube-apiserver defaults before it validates.
    """
    causes: list[Cause] = []
    meta = crd.get("metadata") if isinstance(crd.get("metadata"), dict) else {}
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    assert isinstance(meta, dict) and isinstance(spec, dict)
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    assert isinstance(names, dict)
    group = str(spec.get("group") or "")
    plural = str(names.get("plural") or "")
    kind = str(names.get("kind") or "")
    singular = str(names.get("singular") or kind.lower())
    list_kind = str(names.get("listKind") or (kind + "List" if kind else ""))

    # metadata: a DNS subdomain that is exactly <plural>.<group>
    name = str(meta.get("name") or "")
    meta_for_checks = {k: v for k, v in meta.items() if k not in ("name", "generateName")}
    meta_for_checks["name"] = name or "x"  # the name itself is checked below with the CRD rule
    causes.extend(validate_object_meta(meta_for_checks, name_rule="subdomain", namespaced=False, creating=True))
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        msgs = dns1123_subdomain_errors(name)
        if name != f"{plural}.{group}":
            msgs.append('must be spec.names.plural+"."+spec.group')
        causes.extend(invalid_value("metadata.name", name, m) for m in msgs)

    # group
    if not group:
        causes.append(required("spec.group"))
    elif errs := dns1123_subdomain_errors(group):
        causes.append(invalid_value("spec.group", group, ",".join(errs)))
    elif len(group.split(".")) < 2:
        causes.append(invalid_value("spec.group", group, "should be a domain with at least one dot"))

    # scope
    scope = str(spec.get("scope") or "")
    if not scope:
        causes.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))

    # versions
    versions = spec.get("versions")
    if not isinstance(versions, list):
        versions = []
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

    # names
    npath = "spec.names"
    if not plural:
        causes.append(required(f"{npath}.plural"))
    elif errs := dns1035_label_errors(plural):
        causes.append(invalid_value(f"{npath}.plural", plural, ",".join(errs)))
    if not singular:
        causes.append(required(f"{npath}.singular"))
    elif errs := dns1035_label_errors(singular):
        causes.append(invalid_value(f"{npath}.singular", singular, ",".join(errs)))
    if not kind:
        causes.append(required(f"{npath}.kind"))
    elif errs := dns1035_label_errors(kind.lower()):
        causes.append(invalid_value(f"{npath}.kind", kind, "may have mixed case, but should otherwise match: " + ",".join(errs)))
    if not list_kind:
        causes.append(required(f"{npath}.listKind"))
    elif errs := dns1035_label_errors(list_kind.lower()):
        causes.append(invalid_value(f"{npath}.listKind", list_kind, "may have mixed case, but should otherwise match: " + ",".join(errs)))
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
    """Structural-schema invariants for one node (``schema/validation.go`` + apiextensions checks)."""
    if not isinstance(s, dict):
        causes.append(invalid_value(path, s, "must be an object"))
        return
    t = s.get("type")
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
        detail = {
            "root": "must not be empty at the root",
            "item": "must not be empty for specified array items",
            "field": "must not be empty for specified object fields",
        }[level]
        causes.append(required(f"{path}.type", detail))
    if level == "root" and t and t != "object":
        causes.append(invalid_value(f"{path}.type", t, "must be object at the root"))
    if s.get("properties") and "additionalProperties" in s:
        extra = s.get("additionalProperties")
        if extra is not True:
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
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            causes.append(invalid_value(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}"))
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
    if level == "root":
        for meta_key in ("apiVersion", "kind"):
            prop = (s.get("properties") or {}).get(meta_key)
            if isinstance(prop, dict) and prop.get("type") != "string":
                causes.append(invalid_value(f"{path}.properties[{meta_key}].type", prop.get("type") or "", "must be string"))
    if "default" in s:
        causes.extend(_validate_default(s, path, level))

    for key, prop in (s.get("properties") or {}).items():
        _structural(prop, "field", f"{path}.properties[{key}]", causes)
    if isinstance(s.get("additionalProperties"), dict):
        _structural(s["additionalProperties"], "field", f"{path}.additionalProperties", causes)
    if isinstance(s.get("items"), dict):
        _structural(s["items"], "item", f"{path}.items", causes)


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
