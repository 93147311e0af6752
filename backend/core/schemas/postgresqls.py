"""Postgresql payload schemas: what clients send (create, replace, merge patch) and what they get back.

Every rule comes from :mod:`kinds.postgresqls` (patterns, the allowlist of postgresql.conf
parameters with :func:`~kinds.postgresqls.parameter_problem`, the reserved user, defaults) and
:mod:`kinds.quantities`; none is restated here. Names are DNS labels starting with a letter (the
client Service is named after the Postgresql) of at most
:data:`~kinds.postgresqls.MAX_NAME_LENGTH` characters (its StatefulSet's revision label);
quantities must match the CRD's pattern *and* be a Kubernetes quantity; unknown fields, also in
``parameters`` and ``resources``, are errors; ``null`` counts as absent.

``password`` is write-only (``writeOnly`` in the OpenAPI document, never in a response): the API
stores it in the Secret ``<name>-credentials`` (:mod:`backend.core.kinds.postgresqls`); it cannot be combined
with ``passwordSecretRef``. Rules that need the stored object (storage never shrinks, its class
never changes) are :meth:`backend.core.kinds.postgresqls.PostgresqlKind.check`. Used by
:mod:`backend.core.kinds.postgresqls` (validation) and by the OpenAPI document (``backend.core.kinds.registry.SCHEMAS``).
"""

from __future__ import annotations

import re
from typing import Any

from marshmallow import Schema, ValidationError, fields, pre_load, validate, validates_schema

from backend.core.schemas.common import (
    DNS_1035_LABEL,
    DNS_SUBDOMAIN,
    IGNORED,
    LABEL_1035_MESSAGE,
    SUBDOMAIN_MESSAGE,
    ConditionSchema,
    ObjectFields,
    ReadOnlyFields,
    RequestSchema,
    all_optional,
    boolean,
    dns_label,
    dns_subdomain,
    integer,
    list_schema,
    state_fields,
)
from kinds import postgresqls as kind
from kinds.quantities import quantity_value

QUANTITY_MESSAGE = "must be a quantity such as 500m, 1, 256Mi or 10Gi: digits, an optional fraction and an optional suffix"
NAME_MESSAGE = (
    f"must be at most {kind.MAX_NAME_LENGTH} characters: the StatefulSet's pods carry a revision label <name>-<hash> of at most 63"
)
PASSWORD_MIN, PASSWORD_MAX = kind.PASSWORD_MIN_LENGTH, kind.PASSWORD_MAX_LENGTH
PASSWORD_MESSAGE = f"must be {PASSWORD_MIN} to {PASSWORD_MAX} characters without control characters"
PASSWORD_NOTE = (
    f"Write-only, {PASSWORD_MIN} to {PASSWORD_MAX} characters: stored in the Secret <name>-credentials (keys password, username) "
    "owned by the Postgresql, never returned (passwordSet says whether one is stored). "
    "postgres takes it only when it first initialises its data directory; changing it later updates the Secret only, "
    "not the password inside the database. Not with passwordSecretRef. Omitted on create: the reconciler generates one."
)
POLICIES = " or ".join(kind.DELETION_POLICIES)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_QUANTITY = re.compile(kind.QUANTITY_PATTERN)


class FullMatch(validate.Regexp):
    """``validate.Regexp`` that must match the whole value (Python's ``$`` also matches before a final newline);
    published as the same ``pattern``."""

    def __init__(self, regex: str, *, error: str) -> None:
        super().__init__(regex, error=error)
        self.whole = re.compile(regex)

    def __call__(self, value: str) -> str:  # type: ignore[override]  # str only (marshmallow also overloads bytes)
        if not isinstance(value, str) or self.whole.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


def quantity(description: str, *, positive: bool = False) -> fields.String:
    """A quantity as the CRD takes it (unsigned, no exponent) that :func:`kinds.quantities.quantity_value` reads."""

    def readable(value: str) -> None:
        if not isinstance(value, str) or _QUANTITY.fullmatch(value) is None:
            return  # the pattern says so
        try:
            amount = quantity_value(value)
        except ValueError:
            raise ValidationError(QUANTITY_MESSAGE) from None
        if positive and amount <= 0:
            raise ValidationError("must be more than 0")

    return fields.String(
        allow_none=True,
        validate=[
            validate.Length(max=32, error="must be at most {max} characters"),
            FullMatch(kind.QUANTITY_PATTERN, error=QUANTITY_MESSAGE),
            readable,
        ],
        metadata={"description": description},
    )


def identifier(description: str) -> fields.String:
    message = "must be an unquoted PostgreSQL identifier: a lowercase letter or '_', then lowercase letters, digits or '_', 63 at most"
    return fields.String(allow_none=True, validate=FullMatch(kind.IDENTIFIER_PATTERN, error=message), metadata={"description": description})


def _password(value: str) -> None:
    if PASSWORD_MIN <= len(value) <= PASSWORD_MAX and _CONTROL.search(value):  # a wrong length: Length says so
        raise ValidationError(PASSWORD_MESSAGE)  # never quotes the value


# -- input ----------------------------------------------------------------------------------------


class PostgresqlStorageInputSchema(RequestSchema):
    """The data volume, as sent by a client."""

    size = quantity(f'Size of the data volume, e.g. "10Gi" (default {kind.DEFAULT_STORAGE}). It can grow but never shrink.', positive=True)
    storageClassName = fields.String(
        allow_none=True,
        validate=[validate.Length(min=1, max=253, error=SUBDOMAIN_MESSAGE), FullMatch(DNS_SUBDOMAIN, error=SUBDOMAIN_MESSAGE)],
        metadata={"description": "StorageClass of the data volume (omitted: the cluster's default); fixed at creation."},
    )


class PostgresqlSecretRefInputSchema(RequestSchema):
    """A Secret in the Postgresql's namespace that holds the password."""

    name = dns_subdomain("Name of the Secret.", required=True)
    key = fields.String(
        allow_none=True,
        validate=[
            validate.Length(min=1, max=253, error="must be 1 to {max} characters"),
            FullMatch(kind.SECRET_KEY_PATTERN, error="must be a Secret key: letters, digits, '-', '_' or '.'"),
        ],
        metadata={"description": f'Key of the password in the Secret (default "{kind.PASSWORD_KEY}").'},
    )


class PostgresqlResourceListInputSchema(RequestSchema):
    """Quantities of the database container by resource."""

    cpu = quantity('CPU, e.g. "500m" or "2".')
    memory = quantity('Memory, e.g. "512Mi" or "2Gi".')


class PostgresqlResourcesInputSchema(RequestSchema):
    """Compute resources of the database container."""

    requests = fields.Nested(
        PostgresqlResourceListInputSchema, allow_none=True, metadata={"description": "What the pod is scheduled with."}
    )
    limits = fields.Nested(
        PostgresqlResourceListInputSchema, allow_none=True, metadata={"description": "What the container may use at most."}
    )

    @validates_schema(skip_on_field_errors=False)  # beside other fields' errors; data holds only the valid fields
    def _requests_within_limits(self, data: dict[str, Any], **_: Any) -> None:
        requests, limits = data.get("requests") or {}, data.get("limits") or {}
        errors = {
            name: [f"must not exceed the {name} limit ({limits[name]})"]
            for name in ("cpu", "memory")
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


PostgresqlParametersInputSchema: type[Schema] = type(
    "PostgresqlParametersInputSchema",
    (_ParametersBase,),
    {"__doc__": "postgresql.conf settings from the allowlist; values are strings.", **{n: _parameter_field(n) for n in kind.PARAMETERS}},
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


class PostgresqlUpdateSchema(ReadOnlyFields):
    """PUT body: the whole friendly Postgresql. ``name``/``namespace`` come from the URL (may repeat them).

    Omitted fields take the CRD's defaults (the API server fills them in).
    """

    name = fields.String(allow_none=True, metadata={"description": "Name of the Postgresql; must match the URL."})
    namespace = fields.String(allow_none=True, metadata={"description": "Namespace of the Postgresql; must match the URL."})
    version = fields.String(
        allow_none=True,
        validate=FullMatch(
            kind.VERSION_PATTERN,
            error=f"must be a PostgreSQL major version ({', '.join(kind.VERSIONS)}), optionally with a minor, e.g. 16.4",
        ),
        metadata={
            "description": f'PostgreSQL version, the tag of the official image, e.g. "17" or "16.4" (default "{kind.DEFAULT_VERSION}").'
        },
    )
    storage = fields.Nested(PostgresqlStorageInputSchema, allow_none=True, metadata={"description": "The data volume."})
    databaseName = identifier(f'Database created on first start (default "{kind.DEFAULT_DATABASE}").')
    user = identifier(
        f'Owner of the database, created on first start (default "{kind.DEFAULT_USER}"; not {", ".join(kind.RESERVED_USERS)}).'
    )
    password = fields.String(
        allow_none=True,
        load_only=True,
        validate=[validate.Length(min=PASSWORD_MIN, max=PASSWORD_MAX, error=PASSWORD_MESSAGE), _password],
        metadata={"description": PASSWORD_NOTE},
    )
    passwordSecretRef = fields.Nested(
        PostgresqlSecretRefInputSchema,
        allow_none=True,
        metadata={"description": "Use the password in this Secret instead of <name>-credentials; not with password."},
    )
    passwordSet = boolean(allow_none=True, metadata={"description": IGNORED})
    resources = fields.Nested(
        PostgresqlResourcesInputSchema, allow_none=True, metadata={"description": "Requests and limits of cpu and memory."}
    )
    parameters = fields.Nested(
        PostgresqlParametersInputSchema, allow_none=True, metadata={"description": "postgresql.conf settings (a change rolls the pod)."}
    )
    deletionPolicy = fields.String(
        allow_none=True,
        validate=validate.OneOf(kind.DELETION_POLICIES, error=f"must be {POLICIES}"),
        metadata={"description": f"What happens to the data volumes on deletion: {POLICIES} (default {kind.DEFAULT_DELETION_POLICY})."},
    )
    status = fields.Nested(PostgresqlStatusInputSchema, allow_none=True, metadata={"description": IGNORED})

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


class PostgresqlCreateSchema(PostgresqlUpdateSchema):
    """POST body: a new Postgresql."""

    name = fields.String(
        required=True,
        validate=[validate.Length(max=kind.MAX_NAME_LENGTH, error=NAME_MESSAGE), FullMatch(DNS_1035_LABEL, error=LABEL_1035_MESSAGE)],
        metadata={"description": f"Name of the Postgresql: a DNS label starting with a letter, at most {kind.MAX_NAME_LENGTH} characters."},
    )
    namespace = dns_label('Namespace of the Postgresql (default "default"); must exist.', load_default="default")


# -- output ---------------------------------------------------------------------------------------


class PostgresqlStorageSchema(Schema):
    size = fields.String(required=True, metadata={"description": "Requested size of the data volume."})
    storageClassName = fields.String(required=True, allow_none=True, metadata={"description": "null: the cluster's default StorageClass."})


class PostgresqlSecretRefSchema(Schema):
    name = fields.String(required=True)
    key = fields.String(required=True)


class PostgresqlResourceListSchema(Schema):
    cpu = fields.String(required=True, allow_none=True)
    memory = fields.String(required=True, allow_none=True)


class PostgresqlResourcesSchema(Schema):
    requests = fields.Nested(PostgresqlResourceListSchema, required=True)
    limits = fields.Nested(PostgresqlResourceListSchema, required=True)


class PostgresqlSchema(ObjectFields):
    """A Postgresql as returned by the API (never the password)."""

    version = fields.String(required=True)
    storage = fields.Nested(PostgresqlStorageSchema, required=True)
    databaseName = fields.String(required=True)
    user = fields.String(required=True)
    passwordSecretRef = fields.Nested(
        PostgresqlSecretRefSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "The Secret holding the password; null: <name>-credentials (generated, or the password given to the API)."
        },
    )
    passwordSet = fields.Boolean(
        required=True,
        metadata={
            "description": "A password is stored where the pods read it (the Secret <name>-credentials, or the one passwordSecretRef "
            "names, exists and holds the key), as the reconciler last saw it (status.passwordSecret): false until it has looked. "
            "The password itself is never returned."
        },
    )
    resources = fields.Nested(PostgresqlResourcesSchema, required=True)
    parameters = fields.Dict(
        keys=fields.String(), values=fields.String(), required=True, metadata={"description": "postgresql.conf settings."}
    )
    deletionPolicy = fields.String(required=True, validate=validate.OneOf(kind.DELETION_POLICIES))
    status = fields.Nested(PostgresqlStatusSchema, required=True)


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
