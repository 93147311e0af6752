"""Schema pieces shared by every kind: name rules, object metadata, conditions, lists and problems.

Imported by :mod:`backend.core.schemas.darkrooms` and :mod:`backend.core.schemas.tasks`. Request schemas
(``...Create``/``...Update``/``...Patch``) validate input and set ``Meta.unknown = RAISE`` so unknown
fields are named in a 422 (apispec then publishes ``additionalProperties: false``); their messages
are reworded in our style (:mod:`backend.core.schemas.messages`). Response schemas
are never used to dump — :mod:`backend.core.conversions` builds responses — but document them exactly;
unit tests check conversion output against the published JSON schema. No ``Meta.description``:
apispec would then drop ``additionalProperties``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from marshmallow import EXCLUDE, RAISE, Schema, ValidationError, fields, missing, validate

from backend.core.schemas.messages import restyle
from kinds.names import DNS_SUBDOMAIN, SUBDOMAIN_MESSAGE
from kinds.quantities import quantity_value
from kinds.states import State

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_1035_LABEL = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
# No whitespace and no control characters (NUL, ESC, DEL, ...) anywhere: the URL is copied into a ConfigMap and logs.
HTTP_URL = r"^https?://[^\s\x00-\x1f\x7f/?#@]+([/?#][^\s\x00-\x1f\x7f]*)?$"

LABEL_MESSAGE = "must be a DNS label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit"
LABEL_1035_MESSAGE = (
    "must be a DNS label: at most 63 lowercase letters, digits or '-', starting with a letter and ending with a letter or digit"
)
URL_MESSAGE = "must be an http:// or https:// URL with a host, without spaces or control characters"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})$")
TIMESTAMP_MESSAGE = "must be an RFC 3339 timestamp with a timezone, such as 2027-03-31T17:00:00Z"


def label_checks(*, letter_first: bool = False) -> list[validate.Validator]:
    """The rules of a DNS-1123 label (or DNS-1035 when ``letter_first``: e.g. names that become Service names)."""
    pattern, message = (DNS_1035_LABEL, LABEL_1035_MESSAGE) if letter_first else (DNS_LABEL, LABEL_MESSAGE)
    return [validate.Length(min=1, max=63, error=message), validate.Regexp(pattern, error=message)]


def dns_label(description: str, *, required: bool = False, letter_first: bool = False, **kwargs: Any) -> fields.String:
    """A DNS-1123 label (or DNS-1035 when ``letter_first``: e.g. names that become Service names)."""
    return fields.String(
        required=required, validate=label_checks(letter_first=letter_first), metadata={"description": description}, **kwargs
    )


def subdomain_checks() -> list[validate.Validator]:
    """The rules of a DNS-1123 subdomain."""
    return [validate.Length(min=1, max=253, error=SUBDOMAIN_MESSAGE), validate.Regexp(DNS_SUBDOMAIN, error=SUBDOMAIN_MESSAGE)]


def dns_subdomain(description: str, *, required: bool = False) -> fields.String:
    return fields.String(required=required, validate=subdomain_checks(), metadata={"description": description})


class FullMatch(validate.Regexp):
    """``validate.Regexp`` that must match the whole value (Python's ``$`` also matches before a final newline);
    published as the same ``pattern``."""

    def __init__(self, regex: str, *, error: str | None = None) -> None:
        super().__init__(regex, error=error)
        self.whole = re.compile(regex)

    def __call__(self, value: str) -> str:  # type: ignore[override]  # str only (marshmallow also overloads bytes)
        if not isinstance(value, str) or self.whole.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


def quantity_check(pattern: str, message: str, *, positive: bool = False) -> Callable[[str], None]:
    """A value ``pattern`` lets through must also be a quantity :func:`kinds.quantities.quantity_value` reads (more than
    zero when ``positive``); one it refuses is that pattern's to report."""
    shape = re.compile(pattern)

    def readable(value: str) -> None:
        if not isinstance(value, str) or shape.fullmatch(value) is None:
            return  # the pattern says so
        try:
            amount = quantity_value(value)
        except ValueError:
            raise ValidationError(message) from None
        if positive and amount <= 0:
            raise ValidationError("must be more than 0")

    return readable


CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


def printable_check(message: str, *, min_length: int | None, max_length: int | None) -> Callable[[str], None]:
    """No control characters, judged on a value of the right length (a wrong one is the length rule's to report);
    ``message`` never quotes the value (a password's)."""

    def printable(value: str) -> None:
        if (min_length or 0) <= len(value) <= (max_length or len(value)) and CONTROL_CHARACTERS.search(value):
            raise ValidationError(message)

    return printable


URL_MAX_LENGTH = 2048


def url_checks(max_length: int = URL_MAX_LENGTH) -> list[validate.Validator]:
    """The rules of an http(s) URL with a host (at most ``max_length`` characters)."""
    return [validate.Length(max=max_length, error=f"must be at most {max_length} characters"), validate.Regexp(HTTP_URL, error=URL_MESSAGE)]


def http_url(description: str, *, max_length: int = URL_MAX_LENGTH) -> fields.String:
    return fields.String(allow_none=True, validate=url_checks(max_length), metadata={"description": description})


IGNORED = "Read-only (as in responses); ignored."


class JsonBoolean(fields.Boolean):
    """A JSON boolean: only ``true``/``false`` (marshmallow's Boolean also takes 0, 1, "yes", ...)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input="")
        return value


def state_fields(states: Sequence[State], kind: str) -> tuple[fields.String, fields.String]:
    """``state`` and ``stateMessage`` of a kind's status: the one state :mod:`kinds` defines, as the dashboard shows it."""
    listed = "; ".join(f"{s.key} ({s.word})" for s in states)
    state = fields.String(
        required=True,
        validate=validate.OneOf([s.key for s in states]),
        metadata={"description": f"The {kind}'s state, as the dashboard shows it: {listed}."},
    )
    message = fields.String(required=True, metadata={"description": "Why it is in that state, in a sentence (may be empty)."})
    return state, message


def boolean(**kwargs: Any) -> fields.Boolean:
    return JsonBoolean(**kwargs)


def integer(**kwargs: Any) -> fields.Integer:
    """A JSON integer (not 1.0, "1" or true)."""
    return fields.Integer(strict=True, **kwargs)


class Rfc3339(fields.AwareDateTime):
    """An RFC 3339 ``date-time`` with a timezone (Python's ISO parser alone also takes other ISO 8601 forms)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        if not isinstance(value, str) or not RFC3339.match(value):
            raise ValidationError(TIMESTAMP_MESSAGE)
        parsed: datetime = super()._deserialize(value.upper(), attr, data, **kwargs)
        return parsed


def timestamp(**kwargs: Any) -> Rfc3339:
    messages: dict[str, Any] = {"invalid": TIMESTAMP_MESSAGE, "invalid_awareness": TIMESTAMP_MESSAGE}
    return Rfc3339(format="iso", error_messages=messages, **kwargs)


def resolve_aliases(data: Any, aliases: Mapping[str, str]) -> Any:
    """``data`` with each alias field renamed to the field it stands for (``aliases``: alias → field).

    Sending both with different values is an error naming both; with equal values, or only one, the
    field keeps the value. Called after the fields were validated (each under the name it was sent as).
    """
    if not isinstance(data, Mapping) or not any(alias in data for alias in aliases):
        return data
    resolved = dict(data)
    errors: dict[str, list[str]] = {}
    for alias, field in aliases.items():
        if alias not in resolved:
            continue
        value = resolved.pop(alias)
        if field in resolved and resolved[field] != value:
            message = f"{alias} is another name for {field}; they differ: send one of them"
            errors.update({field: [message], alias: [message]})
            continue
        resolved[field] = value
    if errors:
        raise ValidationError(errors)
    return resolved


class RequestSchema(Schema):
    """Base of request bodies: unknown fields are errors, named in the 422; every message in our style
    (:mod:`backend.core.schemas.messages`)."""

    class Meta:
        unknown = RAISE

    def handle_error(self, error: ValidationError, data: Any, *, many: bool, **kwargs: Any) -> None:
        raise ValidationError(restyle(error.messages), data=error.data, valid_data=error.valid_data)


class ReadOnlyFields(RequestSchema):
    """Response fields a client may send back unchanged (e.g. a GET result): accepted if well-typed, then ignored.

    ``resourceVersion`` is the exception: in a PUT or PATCH body it is a precondition, like
    Kubernetes' own (a stale value gets 409). Each kind adds its ``status`` (an all-optional
    variant of its response status, see :func:`all_optional`).
    """

    resourceVersion = fields.String(
        allow_none=True, metadata={"description": "Precondition on PUT/PATCH (409 when stale); ignored on POST."}
    )
    uid = fields.String(allow_none=True, metadata={"description": IGNORED})
    generation = integer(allow_none=True, metadata={"description": IGNORED})
    creationTimestamp = fields.String(allow_none=True, metadata={"description": IGNORED})
    deletionTimestamp = fields.String(allow_none=True, metadata={"description": IGNORED})
    terminating = boolean(allow_none=True, metadata={"description": IGNORED})
    labels = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True, metadata={"description": IGNORED})


class ConditionSchema(Schema):
    """One status condition (metav1.Condition)."""

    type = fields.String(required=True, metadata={"description": 'Condition type, e.g. "Ready".'})
    status = fields.String(required=True, validate=validate.OneOf(["True", "False", "Unknown"]))
    reason = fields.String(allow_none=True)
    message = fields.String(allow_none=True)
    lastTransitionTime = timestamp(allow_none=True)
    observedGeneration = integer(allow_none=True)


class ObjectFields(Schema):
    """Metadata every response object carries."""

    name = fields.String(required=True)
    namespace = fields.String(required=True)
    uid = fields.String(required=True)
    resourceVersion = fields.String(required=True, metadata={"description": "Also the ETag of the object; send it in If-Match."})
    generation = integer(required=True, allow_none=True)
    creationTimestamp = timestamp(required=True, allow_none=True)
    deletionTimestamp = timestamp(
        required=True, allow_none=True, metadata={"description": "Set once deletion was requested while finalizers hold the object."}
    )
    terminating = fields.Boolean(required=True, metadata={"description": "Deletion requested; finalizers still hold the object."})
    labels = fields.Dict(keys=fields.String(), values=fields.String(), required=True)


def list_schema(item: type[Schema], description: str) -> dict[str, fields.Field[Any]]:
    """The fields of a paginated list response of ``item``."""
    return {
        "items": fields.List(fields.Nested(item), required=True, metadata={"description": description}),
        "continue": fields.String(
            required=True,
            allow_none=True,
            metadata={"description": "Opaque token for the next page (pass as ?continue=); null on the last page."},
        ),
        "total": integer(required=True, metadata={"description": "Number of objects matching the query, on all pages."}),
    }


class ProblemSchema(Schema):
    """RFC 9457 problem details; ``errors`` maps a friendly field path to messages. Open to extension members."""

    class Meta:
        unknown = EXCLUDE  # apispec then leaves additionalProperties open (e.g. /readyz adds "checks")

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = integer(required=True)
    detail = fields.String()
    instance = fields.String()
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": 'Messages by field path, e.g. "source.baseUrl" or "subDomains.1"; "$" is the body as a whole.'},
    )


class NamespaceSchema(Schema):
    name = fields.String(required=True)
    phase = fields.String(required=True, allow_none=True, metadata={"description": "Active or Terminating."})


class NamespaceListSchema(Schema):
    items = fields.List(fields.Nested(NamespaceSchema), required=True)


def all_optional(base: type[Schema], name: str, *, nested: Mapping[str, type[Schema]] | None = None) -> type[Schema]:
    """A request schema with the fields of ``base``, every one optional and nullable (unknown fields still rejected).

    Two uses: the JSON merge patch (RFC 7386) shape of a PUT schema — documentation only, since a
    PATCH is merged into the current object and the result validated by the PUT schema, so errors
    carry the same field paths — and the input form of a response status, which a client may send
    back (ignored). ``nested`` replaces nested fields by (already relaxed) schemas.
    """
    declared: dict[str, fields.Field[Any]] = {}
    for field_name, field in base._declared_fields.items():
        if nested and field_name in nested:
            description = {k: v for k, v in field.metadata.items() if k == "description"}
            declared[field_name] = fields.Nested(nested[field_name], allow_none=True, metadata=description)
            continue
        copied = copy.deepcopy(field)
        copied.required = False
        copied.allow_none = True
        copied.load_default = missing
        declared[field_name] = copied
    relaxed: type[Schema] = type(name, (RequestSchema,), declared)
    return relaxed


# The shared schemas the OpenAPI document names, nested ones first (apispec registers in order):
# backend.core.kinds.registry.SCHEMAS joins them with each registered kind's.
SCHEMAS: dict[str, type[Schema]] = {
    "Problem": ProblemSchema,
    "Condition": ConditionSchema,
    "Namespace": NamespaceSchema,
    "NamespaceList": NamespaceListSchema,
}
