"""A kind's request and response schemas derived from its CRD and its overlay (:class:`kinds.fields.Overlay`).

The CRD says each spec field once — its name, type, nesting, whether it is required, its enum, bounds,
pattern and list rules — and these become marshmallow fields, so marshmallow stays the validation
engine and apispec publishes them as the OpenAPI components, as it did for the hand-written ones. The
overlay adds only the API's words (descriptions, messages), its own format rules where they are stricter
than the CRD's, defaults, renames, hidden spec fields and write-only fields. Used by each kind's schemas
module (:mod:`backend.core.schemas.darkrooms`), which adds what is not a spec field (name, namespace,
status, computed response fields) and the rules across fields (hooks of its ``base`` classes).

A ``format: date-time`` string is a timestamp (RFC 3339 with a timezone, loaded as a datetime; the CR gets it in
UTC: :func:`backend.core.conversions.specs.cr_spec`); a response shows it as stored.

Requests: a field the CRD requires is required (unless the overlay gives it a request default), any
other may be null (null is absent). Responses: every field is present; it may be null unless the CRD
requires it, the overlay shows a default, or it is a list or an object (always shown, maybe empty) — except an
optional object with required fields and no CRD default (:func:`backend.core.crds.absent_is_null`). A map (an object with
``additionalProperties``) is an object of the keys the overlay names (:attr:`kinds.fields.Overlay.keys`), or else,
in a response, shown as stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from marshmallow import Schema, fields, validate

from backend.core.crds import absent_is_null, members, spec_schema
from backend.core.schemas.common import (
    FullMatch,
    boolean,
    integer,
    label_checks,
    printable_check,
    quantity_check,
    subdomain_checks,
    timestamp,
    url_checks,
)
from kinds.fields import ITEM, ApiField, Overlay

FORMAT_MAXIMUM = {"int32": 2**31 - 1, "int64": 2**63 - 1}  # the bound of an integer format without a maximum
WRITE_ONLY = "Write-only"
TOO_LARGE = "must be a smaller number"  # that bound, said in words (nobody caches for 292 billion years)

Nested = Mapping[str, tuple[type[Schema], Mapping[str, Any]]]  # friendly path → its schema and extra metadata
Check = Callable[[Any], Any]  # a marshmallow validator (a Validator, or a function raising ValidationError)


def _error(words: ApiField) -> dict[str, Any]:
    """The overlay's message for a rule, where it has one (else marshmallow's, reworded by :mod:`.messages`)."""
    return {"error": words.message} if words.message else {}


def _described(words: str | None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {**({"description": words} if words is not None else {}), **(extra or {})}


# -- requests -------------------------------------------------------------------------------------


def _string_checks(overlay: Overlay, words: ApiField, prop: Mapping[str, Any]) -> list[Check]:
    if words.check == "url":
        return [*url_checks(*([prop["maxLength"]] if "maxLength" in prop else []))]
    if words.check in ("dns-label", "dns-1035-label"):
        return [*label_checks(letter_first=words.check == "dns-1035-label")]
    if words.check == "dns-subdomain":
        return [*subdomain_checks()]
    checks: list[Check] = []
    if "enum" in prop:
        checks.append(validate.OneOf(prop["enum"], **_error(words)))
    pattern = words.pattern or prop.get("pattern")
    low, high = words.min_length or prop.get("minLength"), words.max_length or prop.get("maxLength")
    # A pattern says the length too (the CRD's patterns bound it; the API's own are stricter), unless the overlay
    # gives bounds or a length message of its own.
    own_length = words.min_length is not None or words.max_length is not None or words.length_message is not None
    if (low is not None or high is not None) and (not pattern or own_length):
        checks.append(validate.Length(min=low, max=high, error=words.length_message or words.message))
    if pattern:
        checks.append((FullMatch if overlay.full_match else validate.Regexp)(pattern, **_error(words)))
    if words.check in ("quantity", "positive-quantity") and pattern:
        checks.append(quantity_check(pattern, words.message or "", positive=words.check == "positive-quantity"))
    return checks


def _integer_checks(words: ApiField, prop: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        checks.append(validate.Range(min=low, max=high, **_error(words)))
    if high is None and prop.get("format") in FORMAT_MAXIMUM:
        checks.append(validate.Range(max=FORMAT_MAXIMUM[prop["format"]], error=TOO_LARGE))
    return checks


def request_field(overlay: Overlay, path: str, prop: Mapping[str, Any], *, required: bool, nested: Nested) -> fields.Field[Any]:
    """The request field of friendly ``path`` from its CRD schema ``prop``."""
    words = overlay.words(path)
    ask = words.ask.replace("{default}", str(prop.get("default"))) if words.ask else None  # "Pods to run (default 1)."
    presence: dict[str, Any] = {}
    if words.default is not None:
        presence["load_default"] = words.default
    elif required:
        presence["required"] = True
    elif not path.endswith(ITEM):
        presence["allow_none"] = True
    kind = prop.get("type")
    if kind == "object":
        schema, extra = nested[path]
        return fields.Nested(schema, **presence, metadata=_described(ask, extra))
    if kind == "array":
        item = request_field(overlay, path + ITEM, prop["items"], required=False, nested=nested)
        low, high = prop.get("minItems"), prop.get("maxItems")
        bounds = [validate.Length(min=low, max=high, **_error(words))] if low is not None or high is not None else []
        unique = {"uniqueItems": True} if prop.get("x-kubernetes-list-type") == "set" else {}
        return fields.List(item, **presence, validate=bounds, metadata=_described(ask, unique))
    if kind == "integer":
        return integer(**presence, validate=_integer_checks(words, prop), metadata=_described(ask))
    if kind == "boolean":
        return boolean(**presence, metadata=_described(ask))
    if prop.get("format") == "date-time":  # an RFC 3339 timestamp with a timezone; the CR gets it in UTC (cr_spec)
        return timestamp(**presence, metadata=_described(ask))
    return fields.String(**presence, validate=_string_checks(overlay, words, prop), metadata=_described(ask))


def write_only_field(words: ApiField) -> fields.String:
    """A field that never enters the CR (an S3 key, a password): accepted, never returned (``load_only``), said so in its
    description (unless its ``ask`` opens with it)."""
    length = validate.Length(min=words.min_length, max=words.max_length, **_error(words))
    checks: list[Check] = [length]
    if words.check == "printable":
        checks.append(printable_check(words.message or "", min_length=words.min_length, max_length=words.max_length))
    ask = words.ask or ""
    said = ask if ask.startswith(WRITE_ONLY) else f"{ask} {WRITE_ONLY}."
    return fields.String(allow_none=True, load_only=True, validate=checks, metadata=_described(said))


def request_fields(overlay: Overlay, path: str = "", *, nested: Nested | None = None) -> dict[str, fields.Field[Any]]:
    """The request fields of the object at friendly ``path`` ('': the spec): its CRD members, with its write-only
    fields after the member each names (:attr:`kinds.fields.ApiField.after`; none: after them all)."""
    found = {m.name: request_field(overlay, m.path, m.schema, required=m.required, nested=nested or {}) for m in members(overlay, path)}
    for friendly, words in overlay.write_only.items():
        parent, _, name = friendly.rpartition(".")
        if parent == path:
            found = inserted(found, words.after, {name: write_only_field(words)})
    return found


def inserted(
    found: Mapping[str, fields.Field[Any]], after: str | None, extra: Mapping[str, fields.Field[Any]]
) -> dict[str, fields.Field[Any]]:
    """``found`` with the fields of ``extra`` after its field ``after`` (None: at the end): where the API lists them."""
    if after is None:
        return {**found, **extra}
    placed: dict[str, fields.Field[Any]] = {}
    for name, made in found.items():
        placed[name] = made
        if name == after:
            placed.update(extra)
    if after not in found:
        raise KeyError(f"no field {after} to place {', '.join(extra)} after")
    return placed


# -- responses ------------------------------------------------------------------------------------


def response_field(overlay: Overlay, path: str, prop: Mapping[str, Any], *, required: bool, nested: Nested) -> fields.Field[Any]:
    """The response field of friendly ``path``: always present; null only where the stored object may lack it."""
    words = overlay.words(path)
    kind = prop.get("type")
    item = path.endswith(ITEM)
    shown = required or words.shown_default is not None or kind == "array" or (kind == "object" and not absent_is_null(prop))
    presence: dict[str, Any] = {} if item else {"required": True, **({} if shown else {"allow_none": True})}
    metadata = _described(words.tell)
    if kind == "object" and path not in nested and "additionalProperties" in prop:  # a map shown as it is stored
        values = response_field(overlay, path + ITEM, prop["additionalProperties"], required=False, nested=nested)
        return fields.Dict(keys=fields.String(), values=values, **presence, metadata=metadata)
    if kind == "object":
        schema, extra = nested[path]
        return fields.Nested(schema, **presence, metadata={**metadata, **extra})
    if kind == "array":
        return fields.List(
            response_field(overlay, path + ITEM, prop["items"], required=False, nested=nested), **presence, metadata=metadata
        )
    if kind == "integer":
        return integer(**presence, metadata=metadata)
    if kind == "boolean":
        return fields.Boolean(**presence, metadata=metadata)
    checks = [validate.OneOf(prop["enum"])] if "enum" in prop else []
    return fields.String(**presence, validate=checks, metadata=metadata)


def response_fields(overlay: Overlay, path: str = "", *, nested: Nested | None = None) -> dict[str, fields.Field[Any]]:
    """The response fields of the object at friendly ``path`` ('': the spec), in CRD order (write-only fields never)."""
    return {m.name: response_field(overlay, m.path, m.schema, required=m.required, nested=nested or {}) for m in members(overlay, path)}


def stored_fields(kind: str, path: str = "") -> dict[str, fields.Field[Any]]:
    """The fields of a kind's spec as stored — CRD names, the CRD's descriptions, required where the CRD requires them —
    for objects served raw (a CombinedTask's ``spec``), not friendly payloads."""
    schema = spec_schema(kind, path)
    required = set(schema.get("required") or ())
    made: dict[str, fields.Field[Any]] = {}
    for name, prop in schema["properties"].items():
        presence: dict[str, Any] = {"required": name in required, "metadata": _described(prop.get("description"))}
        kind_of = prop.get("type")
        if kind_of == "integer":
            made[name] = integer(**presence)
        elif kind_of == "boolean":
            made[name] = fields.Boolean(**presence)
        elif kind_of == "object":
            made[name] = fields.Dict(**presence)
        elif kind_of == "array":
            made[name] = fields.List(fields.Raw(), **presence)
        else:
            made[name] = fields.String(**presence, validate=[validate.OneOf(prop["enum"])] if "enum" in prop else [])
    return made


def schema(name: str, base: type[Schema], *parts: Mapping[str, fields.Field[Any]]) -> type[Schema]:
    """A schema class named ``name`` on ``base`` (its fields first, its hooks kept) with the fields of ``parts`` in order."""
    declared: dict[str, Any] = {}
    for part in parts:
        declared.update(part)
    made: type[Schema] = type(name, (base,), declared)
    return made
