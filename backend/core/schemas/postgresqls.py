"""Postgresql payload schemas: what clients send (create, replace, merge patch) and what they get back.

The spec fields are not declared here: they are derived (:mod:`backend.core.schemas.derived`) from the CRD and the
kind's overlay :data:`kinds.postgresqls.API` (the API's words and messages, its stricter rules: quantities that
:mod:`kinds.quantities` reads, whole-value patterns, the write-only ``password``, the keys of ``resources``). This
module adds what is no spec field — name and namespace, the status, ``passwordSet`` — and the rules across fields or
beyond the CRD: the allowlist of postgresql.conf parameters (:func:`~kinds.postgresqls.parameter_problem`), requests
within limits, the reserved user, ``password`` not with ``passwordSecretRef``. Names are DNS labels starting with a
letter (the client Service is named after the Postgresql) of at most :data:`~kinds.postgresqls.MAX_NAME_LENGTH`
characters (its StatefulSet's revision label); unknown fields, also in ``parameters`` and ``resources``, are errors;
``null`` counts as absent.

``password`` is write-only (``writeOnly`` in the OpenAPI document, never in a response): the API
stores it in the Secret ``<name>-credentials`` (:mod:`backend.core.kinds.postgresqls`); it cannot be combined
with ``passwordSecretRef``. Rules that need the stored object (storage never shrinks, its class
never changes) are :meth:`backend.core.kinds.postgresqls.PostgresqlKind.check`. Used by
:mod:`backend.core.kinds.postgresqls` (validation) and by the OpenAPI document (``backend.core.kinds.registry.SCHEMAS``).
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, pre_load, validate, validates_schema

from backend.core.schemas import derived
from backend.core.schemas.common import (
    DNS_1035_LABEL,
    IGNORED,
    LABEL_1035_MESSAGE,
    ConditionSchema,
    FullMatch,
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
from kinds import postgresqls as kind
from kinds.quantities import quantity_value

NAME_MESSAGE = (
    f"must be at most {kind.MAX_NAME_LENGTH} characters: the StatefulSet's pods carry a revision label <name>-<hash> of at most 63"
)
PASSWORD_MIN, PASSWORD_MAX = kind.PASSWORD_MIN_LENGTH, kind.PASSWORD_MAX_LENGTH


# -- input ----------------------------------------------------------------------------------------


class ResourcesRules(RequestSchema):
    """Requests within limits (the fields come from the CRD and the overlay's keys: :mod:`.derived`)."""

    @validates_schema(skip_on_field_errors=False)  # beside other fields' errors; data holds only the valid fields
    def _requests_within_limits(self, data: dict[str, Any], **_: Any) -> None:
        requests, limits = data.get("requests") or {}, data.get("limits") or {}
        errors = {
            name: [f"must not exceed the {name} limit ({limits[name]})"]
            for name in kind.RESOURCE_NAMES
            if requests.get(name) is not None
            and limits.get(name) is not None
            and quantity_value(requests[name]) > quantity_value(limits[name])
        }
        if errors:
            raise ValidationError({"requests": errors})


def _parameter_field(name: str) -> fields.String:
    takes = kind.PARAMETERS[name]
    article = "an" if takes[:1] in "aeiou" else "a"
    what = f"one of {', '.join(takes.split('|'))}" if "|" in takes else f"{article} {takes} value"
    return fields.String(allow_none=True, metadata={"description": f"postgresql.conf {name}: {what}, as a string."})


class _ParametersBase(RequestSchema):
    @pre_load
    def _allowed(self, data: Any, **_: Any) -> Any:
        """Every key against the allowlist and every value against its kind, with the messages of :mod:`kinds.postgresqls`."""
        if not isinstance(data, dict):
            return data
        errors = {name: [problem] for name, value in data.items() if value is not None and (problem := kind.parameter_problem(name, value))}
        if errors:
            raise ValidationError(errors)
        return data


# The keys of the map spec.parameters the API takes: the allowlist (kinds.postgresqls.PARAMETERS), not the CRD's.
PostgresqlParametersInputSchema: type[Schema] = type(
    "PostgresqlParametersInputSchema",
    (_ParametersBase,),
    {"__doc__": "postgresql.conf settings from the allowlist; values are strings.", **{n: _parameter_field(n) for n in kind.PARAMETERS}},
)

# The data volume, a Secret holding the password, compute resources — as sent by a client.
PostgresqlStorageInputSchema = derived.schema("PostgresqlStorageInputSchema", RequestSchema, derived.request_fields(kind.API, "storage"))
PostgresqlSecretRefInputSchema = derived.schema(
    "PostgresqlSecretRefInputSchema", RequestSchema, derived.request_fields(kind.API, "passwordSecretRef")
)
# One schema for requests and limits (their keys and words are the same).
PostgresqlResourceListInputSchema = derived.schema(
    "PostgresqlResourceListInputSchema", RequestSchema, derived.request_fields(kind.API, "resources.requests")
)
PostgresqlResourcesInputSchema = derived.schema(
    "PostgresqlResourcesInputSchema",
    ResourcesRules,
    derived.request_fields(
        kind.API, "resources", nested={f"resources.{g}": (PostgresqlResourceListInputSchema, {}) for g in kind.RESOURCE_GROUPS}
    ),
)


class PostgresqlEndpointSchema(Schema):
    host = fields.String(required=True, metadata={"description": "<name>.<namespace>.svc"})
    port = integer(required=True)


class PostgresqlPasswordSecretSchema(Schema):
    name = fields.String(required=True, metadata={"description": "The Secret the pods read the password from."})
    key = fields.String(required=True, metadata={"description": "Its key."})
    present = fields.Boolean(
        required=True,
        metadata={"description": "The Secret exists and holds the key (false: the database waits for it; Ready says so)."},
    )


class PostgresqlDataVolumeSchema(Schema):
    claim = fields.String(required=True, metadata={"description": "The data volume's PersistentVolumeClaim (pod 0's)."})
    reused = fields.Boolean(
        required=True,
        metadata={"description": "It held a former Postgresql's data (of this name, kept: deletionPolicy Retain) before this one existed."},
    )
    password = fields.String(
        required=True,
        allow_none=True,
        validate=validate.OneOf(kind.PASSWORD_ORIGINS),
        metadata={
            "description": "Whose password reused data has: Kept (the former Secret, kept with the volume: the password shown "
            "is the database's), New (none was kept: the password shown is not the database's), Referenced (your Secret: "
            "the database keeps the one it was initialised with); null while unknown or for fresh data."
        },
    )
    message = fields.String(required=True, metadata={"description": "What that means, in a sentence (empty for fresh data)."})


class PostgresqlStatusSchema(Schema):
    """What the reconciler observed."""

    state, stateMessage = state_fields(kind.STATES, "Postgresql")
    phase = fields.String(
        required=True,
        allow_none=True,
        validate=validate.OneOf(kind.PHASES),
        metadata={"description": f"{', '.join(kind.PHASES)}, as the reconciler last wrote it; null before its first status."},
    )
    ready = fields.Boolean(required=True, metadata={"description": "The Ready condition is True for the current generation."})
    readyReplicas = integer(required=True)
    endpoint = fields.Nested(
        PostgresqlEndpointSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Where clients connect (the client Service); null until the reconciler says."},
    )
    passwordSecret = fields.Nested(
        PostgresqlPasswordSecretSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Where the password is and whether it is there; null until the reconciler has looked."},
    )
    dataVolume = fields.Nested(
        PostgresqlDataVolumeSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The data volume and whether it holds a former Postgresql's data; null until there is one."},
    )
    conditions = fields.List(fields.Nested(ConditionSchema), required=True)
    observedGeneration = integer(required=True, allow_none=True)


PostgresqlStatusInputSchema = all_optional(PostgresqlStatusSchema, "PostgresqlStatusInputSchema")


class UpdateRules(ReadOnlyFields):
    """The rules of a Postgresql across its fields (the spec fields come from the CRD: :mod:`.derived`)."""

    @validates_schema(skip_on_field_errors=False)  # reported beside any field errors (data holds only the valid fields)
    def _kind_rules(self, data: dict[str, Any], **_: Any) -> None:
        errors: dict[str, list[str]] = {}
        if data.get("password") is not None and data.get("passwordSecretRef") is not None:
            errors["password"] = ["not together with an existing Secret: the password is read from that Secret"]
        spec = {"user": data.get("user"), "parameters": {k: v for k, v in (data.get("parameters") or {}).items() if v is not None}}
        for path, messages in kind.spec_problems(spec).items():
            errors.setdefault(path, []).extend(messages)
        if errors:
            raise ValidationError(errors)


# What a response says of the password (its value never): computed, no spec field; listed after passwordSecretRef.
PASSWORD_SET_SHOWN: dict[str, fields.Field[Any]] = {
    "passwordSet": fields.Boolean(
        required=True,
        metadata={
            "description": "A password is stored where the pods read it (the Secret <name>-credentials, or the one passwordSecretRef "
            "names, exists and holds the key), as the reconciler last saw it (status.passwordSecret): false until it has looked. "
            "The password itself is never returned."
        },
    )
}
PASSWORD_SET_ECHOED: dict[str, fields.Field[Any]] = {"passwordSet": boolean(allow_none=True, metadata={"description": IGNORED})}

REQUEST_NESTED: derived.Nested = {
    "storage": (PostgresqlStorageInputSchema, {}),
    "passwordSecretRef": (PostgresqlSecretRefInputSchema, {}),
    "resources": (PostgresqlResourcesInputSchema, {}),
    "parameters": (PostgresqlParametersInputSchema, {}),
}

# PUT body: the whole friendly Postgresql. ``name``/``namespace`` come from the URL (may repeat them). Omitted fields
# take the CRD's defaults (the API server fills them in).
PostgresqlUpdateSchema = derived.schema(
    "PostgresqlUpdateSchema",
    UpdateRules,
    {
        "name": fields.String(allow_none=True, metadata={"description": "Name of the Postgresql; must match the URL."}),
        "namespace": fields.String(allow_none=True, metadata={"description": "Namespace of the Postgresql; must match the URL."}),
    },
    derived.inserted(derived.request_fields(kind.API, nested=REQUEST_NESTED), "passwordSecretRef", PASSWORD_SET_ECHOED),
    {"status": fields.Nested(PostgresqlStatusInputSchema, allow_none=True, metadata={"description": IGNORED})},
)
# POST body: a new Postgresql.
PostgresqlCreateSchema = derived.schema(
    "PostgresqlCreateSchema",
    PostgresqlUpdateSchema,
    {
        "name": fields.String(
            required=True,
            validate=[validate.Length(max=kind.MAX_NAME_LENGTH, error=NAME_MESSAGE), FullMatch(DNS_1035_LABEL, error=LABEL_1035_MESSAGE)],
            metadata={
                "description": f"Name of the Postgresql: a DNS label starting with a letter, at most {kind.MAX_NAME_LENGTH} characters."
            },
        ),
        "namespace": dns_label('Namespace of the Postgresql (default "default"); must exist.', load_default="default"),
    },
)


# -- output ---------------------------------------------------------------------------------------

PostgresqlStorageSchema = derived.schema("PostgresqlStorageSchema", Schema, derived.response_fields(kind.API, "storage"))
PostgresqlSecretRefSchema = derived.schema("PostgresqlSecretRefSchema", Schema, derived.response_fields(kind.API, "passwordSecretRef"))
PostgresqlResourceListSchema = derived.schema(
    "PostgresqlResourceListSchema", Schema, derived.response_fields(kind.API, "resources.requests")
)
PostgresqlResourcesSchema = derived.schema(
    "PostgresqlResourcesSchema",
    Schema,
    derived.response_fields(
        kind.API, "resources", nested={f"resources.{g}": (PostgresqlResourceListSchema, {}) for g in kind.RESOURCE_GROUPS}
    ),
)
# A Postgresql as returned by the API (never the password).
PostgresqlSchema = derived.schema(
    "PostgresqlSchema",
    ObjectFields,
    derived.inserted(
        derived.response_fields(
            kind.API,
            nested={
                "storage": (PostgresqlStorageSchema, {}),
                "passwordSecretRef": (PostgresqlSecretRefSchema, {}),
                "resources": (PostgresqlResourcesSchema, {}),
            },
        ),
        "passwordSecretRef",
        PASSWORD_SET_SHOWN,
    ),
    {"status": fields.Nested(PostgresqlStatusSchema, required=True)},
)


PostgresqlListSchema = Schema.from_dict(
    list_schema(PostgresqlSchema, "Postgresqls sorted by namespace, then name."), name="PostgresqlListSchema"
)
PostgresqlSecretRefPatchSchema = all_optional(PostgresqlSecretRefInputSchema, "PostgresqlSecretRefPatchSchema")
PostgresqlPatchSchema = all_optional(
    PostgresqlUpdateSchema, "PostgresqlPatchSchema", nested={"passwordSecretRef": PostgresqlSecretRefPatchSchema}
)

# This kind's schemas the OpenAPI document names, nested ones first (apispec registers in order):
# backend.core.kinds.registry.SCHEMAS joins them.
SCHEMAS: dict[str, type[Schema]] = {
    "PostgresqlStorageInput": PostgresqlStorageInputSchema,
    "PostgresqlSecretRefInput": PostgresqlSecretRefInputSchema,
    "PostgresqlSecretRefPatch": PostgresqlSecretRefPatchSchema,
    "PostgresqlResourceListInput": PostgresqlResourceListInputSchema,
    "PostgresqlResourcesInput": PostgresqlResourcesInputSchema,
    "PostgresqlParametersInput": PostgresqlParametersInputSchema,
    "PostgresqlEndpoint": PostgresqlEndpointSchema,
    "PostgresqlPasswordSecret": PostgresqlPasswordSecretSchema,
    "PostgresqlDataVolume": PostgresqlDataVolumeSchema,
    "PostgresqlStatus": PostgresqlStatusSchema,
    "PostgresqlStatusInput": PostgresqlStatusInputSchema,
    "PostgresqlStorage": PostgresqlStorageSchema,
    "PostgresqlSecretRef": PostgresqlSecretRefSchema,
    "PostgresqlResourceList": PostgresqlResourceListSchema,
    "PostgresqlResources": PostgresqlResourcesSchema,
    "PostgresqlCreate": PostgresqlCreateSchema,
    "PostgresqlUpdate": PostgresqlUpdateSchema,
    "PostgresqlPatch": PostgresqlPatchSchema,
    "Postgresql": PostgresqlSchema,
    "PostgresqlList": PostgresqlListSchema,
}
