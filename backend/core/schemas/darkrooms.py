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
one source table in :mod:`kinds.darkrooms`. Used by
:mod:`backend.core.kinds.darkrooms` (validation) and by the OpenAPI document (``backend.core.kinds.registry.SCHEMAS``).
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from backend.core.schemas.common import (
    IGNORED,
    ConditionSchema,
    ObjectFields,
    ReadOnlyFields,
    RequestSchema,
    all_optional,
    boolean,
    dns_label,
    http_url,
    integer,
    list_schema,
    state_fields,
)
from kinds import darkrooms as kind
from kinds.darkrooms import SOURCE_TYPES

VERSION = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
REGION = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
ABSENT: dict[str, Any] = {"nullable": True, "enum": [None]}
KEY_MAX_LENGTH = 1024  # an S3 key's characters


def source_variants() -> list[dict[str, Any]]:
    """The per-type rules of ``source`` as JSON schemas (documentation of :meth:`DarkroomSourceInputSchema._per_type`).

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


def _key_field(description: str) -> fields.String:
    return fields.String(
        allow_none=True,
        load_only=True,
        validate=validate.Length(min=1, max=KEY_MAX_LENGTH),
        metadata={"description": description + " Write-only."},
    )


class DarkroomSourceInputSchema(RequestSchema):
    """Where the originals live, as sent by a client."""

    type = fields.String(
        load_default=kind.DEFAULT_SOURCE_TYPE,
        validate=validate.OneOf(SOURCE_TYPES),
        metadata={"description": f"{' or '.join(SOURCE_TYPES)}; default {kind.DEFAULT_SOURCE_TYPE}."},
    )
    baseUrl = http_url('WebFolder only (required there): URL the image paths are appended to, e.g. "https://example.com/images".')
    bucket = fields.String(
        allow_none=True,
        validate=validate.Regexp(BUCKET, error="must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-'"),
        metadata={"description": "S3 only (required there): bucket holding the originals."},
    )
    region = fields.String(
        allow_none=True,
        validate=validate.Regexp(REGION, error="must be a region name such as eu-west-1"),
        metadata={"description": f"S3 only. {kind.REGION_NOTE}"},
    )
    endpoint = http_url("S3 only: endpoint of an S3-compatible service (MinIO, Ceph, ...); omit for AWS.")
    pathPrefix = fields.String(
        allow_none=True, validate=validate.Length(max=1024), metadata={"description": "Prefix prepended to every image path."}
    )
    accessKey = _key_field(
        "S3 only: access key id, stored in a Secret owned by the Darkroom. Give both keys or neither: "
        "none reads a public bucket (on an update, none keeps the stored keys)."
    )
    secretKey = _key_field("S3 only: secret access key, stored in a Secret owned by the Darkroom; given together with accessKey.")
    credentialsSet = boolean(allow_none=True, metadata={"description": IGNORED})
    credentialsSecret = fields.Dict(allow_none=True, metadata={"description": IGNORED})

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


class DarkroomSourceSchema(Schema):
    """Where the originals live, as returned (never the keys)."""

    type = fields.String(required=True, validate=validate.OneOf(SOURCE_TYPES))
    baseUrl = fields.String(required=True, allow_none=True)
    bucket = fields.String(required=True, allow_none=True)
    region = fields.String(required=True, allow_none=True)
    endpoint = fields.String(required=True, allow_none=True)
    pathPrefix = fields.String(required=True, allow_none=True)
    credentialsSet = fields.Boolean(
        required=True, metadata={"description": "Whether S3 credentials are stored (their values never are returned)."}
    )
    credentialsSecret = fields.Nested(
        DarkroomCredentialsSecretSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The Secret the pods read the S3 keys from; null: none (a WebFolder, or a public bucket)."},
    )


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


class DarkroomUpdateSchema(ReadOnlyFields):
    """PUT body: the whole friendly Darkroom. ``name``/``namespace`` come from the URL (may repeat them).

    The S3 keys may be omitted: the stored credentials are kept (none stored: a public bucket).
    """

    name = fields.String(allow_none=True, metadata={"description": "Name of the Darkroom; must match the URL."})
    namespace = fields.String(allow_none=True, metadata={"description": "Namespace of the Darkroom; must match the URL."})
    version = fields.String(
        allow_none=True,
        validate=validate.Regexp(VERSION, error="must be an image tag: letters, digits, '_', '.' or '-', at most 128 characters"),
        metadata={"description": 'Darkroom image tag, e.g. "0.1.0" or "v0.1.0"; omitted: "latest" (the CRD default).'},
    )
    replicas = integer(allow_none=True, validate=validate.Range(min=0, max=100), metadata={"description": "Pods to run (default 1)."})
    source = fields.Nested(DarkroomSourceInputSchema, required=True, metadata={"oneOf": source_variants()})
    subDomains = fields.List(
        dns_label("One sub-domain, e.g. images."),
        required=True,
        validate=validate.Length(min=1, max=50, error="must list between {min} and {max} sub-domains"),
        metadata={"description": "Sub-domains to serve on: unique DNS labels.", "uniqueItems": True},
    )
    cacheTime = integer(
        allow_none=True,
        # the bound of the CRD's int64, said in words: nobody caches for 292 billion years
        validate=[validate.Range(min=0, error="must be 0 or more"), validate.Range(max=2**63 - 1, error="must be a smaller number")],
        metadata={"description": "Seconds clients may cache a processed image (default one year)."},
    )
    status = fields.Nested(DarkroomStatusInputSchema, allow_none=True, metadata={"description": IGNORED})

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


class DarkroomCreateSchema(DarkroomUpdateSchema):
    """POST body: a new Darkroom (the seed's payload is valid here); an S3 source without keys reads a public bucket."""

    name = dns_label("Name of the Darkroom (a DNS label starting with a letter).", required=True, letter_first=True)
    namespace = dns_label('Namespace of the Darkroom (default "default"); must exist.', load_default="default")


class DarkroomSchema(ObjectFields):
    """A Darkroom as returned by the API."""

    version = fields.String(required=True, metadata={"description": 'Image tag (the CRD default "latest" when the payload had none).'})
    replicas = integer(required=True, allow_none=True)
    source = fields.Nested(DarkroomSourceSchema, required=True)
    subDomains = fields.List(fields.String(), required=True)
    cacheTime = integer(required=True, allow_none=True)
    status = fields.Nested(DarkroomStatusSchema, required=True)


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
