"""Darkroom payload schemas: what clients send (create, replace, merge patch) and what they get back.

A superset of the seed's payload (``{"name", "version", "source": {"type", "baseUrl"},
"subDomains"}``), validated the way a user expects: names are DNS labels (starting with a letter:
a Darkroom's Service is named after it), a WebFolder needs an http(s) ``baseUrl``, an S3 source
needs ``bucket`` (``region`` is optional: :data:`kinds.darkrooms.REGION_NOTE`), fields of the other source
type are rejected (``null`` counts as
absent), sub-domains are unique DNS labels. ``accessKey``/``secretKey`` are write-only (responses
only say ``credentialsSet``) and optional, but come in pairs: an S3 source without them reads a
public bucket; on an update, omitting them keeps the stored ones. The per-type rules are also published as a
``oneOf`` on ``source`` so the OpenAPI document says what the validation does. Both come from the
one source table in :mod:`kinds.darkrooms`.

The spec fields are not declared here: they are derived (:mod:`backend.core.schemas.derived`) from the CRD and
the kind's overlay :data:`kinds.darkrooms.API` (the API's words, its stricter formats, the write-only keys). This
module adds what is no spec field — name and namespace, the status, what a response says of the credentials —
and the rules across fields (:class:`SourceRules`, :class:`UpdateRules`). Used by
:mod:`backend.core.kinds.darkrooms` (validation) and by the OpenAPI document (``backend.core.kinds.registry.SCHEMAS``).
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validates_schema

from backend.core.schemas import derived
from backend.core.schemas.common import (
    IGNORED,
    ConditionSchema,
    ObjectFields,
    ReadOnlyFields,
    RequestSchema,
    all_optional,
    boolean,
    dns_label,
    integer,
    list_schema,
    state_fields,
)
from kinds import darkrooms as kind

ABSENT: dict[str, Any] = {"nullable": True, "enum": [None]}
KEY_MAX_LENGTH = kind.KEY_MAX_LENGTH


def source_variants() -> list[dict[str, Any]]:
    """The per-type rules of ``source`` as JSON schemas (documentation of :meth:`SourceRules._per_type`).

    Keys are never required (none: a public bucket); that they come in pairs is said in their descriptions."""
    text = {"type": "string"}
    variants = []
    for variant in kind.SOURCES.values():
        required = list(variant.required)
        variants.append(
            {
                "type": "object",
                "title": f"{variant.type} source",
                "properties": {"type": {"type": "string", "enum": [variant.type]}}
                | {f: text for f in (*required, *variant.keys)}
                | {f: ABSENT for f in kind.foreign_fields(variant.type)},
                # The default type needs no "type"; any other variant is chosen by it.
                "required": ([] if variant.type == kind.DEFAULT_SOURCE_TYPE else ["type"]) + required,
            }
        )
    return variants


class SourceRules(RequestSchema):
    """The rules of a source across its fields (the fields themselves come from the CRD: :mod:`.derived`)."""

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _per_type(self, data: dict[str, Any], original: Any, **_: Any) -> None:
        """The source table's rules, beside any field errors (so all problems are reported at once): a field the
        client sent that failed its own validation is absent from ``data``; it is not reported again as missing."""
        sent = set(original) if isinstance(original, dict) else set()
        failed = sent - set(data)
        if "type" in failed:
            return  # no variant to judge by: the type's own error says why
        errors = {path: messages for path, messages in kind.source_problems(data).items() if path not in failed}
        if errors:
            raise ValidationError(errors)


class DarkroomCredentialsSecretSchema(Schema):
    name = fields.String(required=True, metadata={"description": "The Secret's name."})
    owned = fields.Boolean(
        required=True,
        metadata={
            "description": "True: the Secret the API stores the keys in (<name>-s3-credentials), owned by the Darkroom — deleting "
            "the Darkroom deletes it. False: a Secret of yours the Darkroom only refers to; it is never deleted."
        },
    )


# What a response says about the credentials (their values never): computed, not spec fields.
CREDENTIALS_SHOWN: dict[str, fields.Field[Any]] = {
    "credentialsSet": fields.Boolean(
        required=True, metadata={"description": "Whether S3 credentials are stored (their values never are returned)."}
    ),
    "credentialsSecret": fields.Nested(
        DarkroomCredentialsSecretSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The Secret the pods read the S3 keys from; null: none (a WebFolder, or a public bucket)."},
    ),
}
CREDENTIALS_ECHOED: dict[str, fields.Field[Any]] = {  # sent back from a response: accepted, ignored
    "credentialsSet": boolean(allow_none=True, metadata={"description": IGNORED}),
    "credentialsSecret": fields.Dict(allow_none=True, metadata={"description": IGNORED}),
}

# Where the originals live, as sent by a client / as returned (never the keys).
DarkroomSourceInputSchema = derived.schema(
    "DarkroomSourceInputSchema", SourceRules, derived.request_fields(kind.API, "source"), CREDENTIALS_ECHOED
)
DarkroomSourceSchema = derived.schema("DarkroomSourceSchema", Schema, derived.response_fields(kind.API, "source"), CREDENTIALS_SHOWN)


class DarkroomStatusSchema(Schema):
    """What the reconciler observed."""

    state, stateMessage = state_fields(kind.STATES, "Darkroom")
    ready = fields.Boolean(required=True, metadata={"description": "The Ready condition is True for the current generation."})
    domains = fields.List(fields.String(), required=True)
    tls = fields.Boolean(
        required=True,
        metadata={
            "description": "The domains are served over TLS: reach them at https://<domain> (false: http://<domain>). "
            "Written by the reconciler from the Ingress it manages."
        },
    )
    readyReplicas = integer(required=True)
    conditions = fields.List(fields.Nested(ConditionSchema), required=True)
    observedGeneration = integer(required=True, allow_none=True)


DarkroomStatusInputSchema = all_optional(DarkroomStatusSchema, "DarkroomStatusInputSchema")


class UpdateRules(ReadOnlyFields):
    """The rules of a Darkroom across its fields (the spec fields come from the CRD: :mod:`.derived`)."""

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _unique(self, data: dict[str, Any], original: Any, **_: Any) -> None:
        """Sub-domains are unique, judged on the list as sent (indices stay right; also beside items' own errors)."""
        value = original.get("subDomains") if isinstance(original, dict) else None
        if not isinstance(value, list):
            return
        seen: dict[str, int] = {}
        duplicates: dict[int, list[str]] = {}
        for index, sub in enumerate(value):
            if isinstance(sub, str) and sub in seen:
                duplicates[index] = [f"the same as sub-domain {seen[sub] + 1}"]  # counted from 1, as people (and the form) count
            if isinstance(sub, str):
                seen.setdefault(sub, index)
        if duplicates:
            raise ValidationError({"subDomains": duplicates})


# PUT body: the whole friendly Darkroom. ``name``/``namespace`` come from the URL (may repeat them). The S3 keys may be
# omitted: the stored credentials are kept (none stored: a public bucket).
DarkroomUpdateSchema = derived.schema(
    "DarkroomUpdateSchema",
    UpdateRules,
    {
        "name": fields.String(allow_none=True, metadata={"description": "Name of the Darkroom; must match the URL."}),
        "namespace": fields.String(allow_none=True, metadata={"description": "Namespace of the Darkroom; must match the URL."}),
    },
    derived.request_fields(kind.API, nested={"source": (DarkroomSourceInputSchema, {"oneOf": source_variants()})}),
    {"status": fields.Nested(DarkroomStatusInputSchema, allow_none=True, metadata={"description": IGNORED})},
)
# POST body: a new Darkroom (the seed's payload is valid here); an S3 source without keys reads a public bucket.
DarkroomCreateSchema = derived.schema(
    "DarkroomCreateSchema",
    DarkroomUpdateSchema,
    {
        "name": dns_label("Name of the Darkroom (a DNS label starting with a letter).", required=True, letter_first=True),
        "namespace": dns_label('Namespace of the Darkroom (default "default"); must exist.', load_default="default"),
    },
)
# A Darkroom as returned by the API.
DarkroomSchema = derived.schema(
    "DarkroomSchema",
    ObjectFields,
    derived.response_fields(kind.API, nested={"source": (DarkroomSourceSchema, {})}),
    {"status": fields.Nested(DarkroomStatusSchema, required=True)},
)
DarkroomListSchema = Schema.from_dict(list_schema(DarkroomSchema, "Darkrooms sorted by namespace, then name."), name="DarkroomListSchema")
DarkroomSourcePatchSchema = all_optional(DarkroomSourceInputSchema, "DarkroomSourcePatchSchema")
DarkroomPatchSchema = all_optional(DarkroomUpdateSchema, "DarkroomPatchSchema", nested={"source": DarkroomSourcePatchSchema})

# This kind's schemas the OpenAPI document names, nested ones first (apispec registers in order):
# backend.core.kinds.registry.SCHEMAS joins them.
SCHEMAS: dict[str, type[Schema]] = {
    "DarkroomSourceInput": DarkroomSourceInputSchema,
    "DarkroomSourcePatch": DarkroomSourcePatchSchema,
    "DarkroomCredentialsSecret": DarkroomCredentialsSecretSchema,
    "DarkroomSource": DarkroomSourceSchema,
    "DarkroomStatus": DarkroomStatusSchema,
    "DarkroomStatusInput": DarkroomStatusInputSchema,
    "DarkroomCreate": DarkroomCreateSchema,
    "DarkroomUpdate": DarkroomUpdateSchema,
    "DarkroomPatch": DarkroomPatchSchema,
    "Darkroom": DarkroomSchema,
    "DarkroomList": DarkroomListSchema,
}
