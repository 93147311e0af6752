"""The Postgresql kind (``database.db.example.com/v1``, seed 003), described once.

Who reads what:
- the field rules (:data:`PARAMETERS` allowlist, name patterns, defaults, :func:`spec_problems`) —
  the API's schemas and the reconciler's validation of CRs written with kubectl;
- the names (the generated-password Secret and its keys, the children's names, the finalizer, the
  password-pending annotation) — the API (which writes a given password into the Secret) and the
  reconciler;
- the phases, the conditions and :func:`state` — the reconciler writes ``status.phase`` and the
  conditions, the API returns ``status.state`` and the dashboard shows its word and tone;
- what the data volume holds (:class:`DataVolume`, :func:`data_volume_message`) and where the password is
  (:class:`PasswordSecret`) — the reconciler writes ``status.dataVolume`` and ``status.passwordSecret``, the API
  returns them (and, on a create that finds a kept data volume, :data:`RETAINED_DATA_ANNOTATION` before the
  reconciler has looked), the dashboard shows the sentence.

**Data kept with its password.** With ``deletionPolicy: Retain`` (the default) a deleted Postgresql's data
volume — the PVC :func:`claim_name` — stays, and so does the Secret :func:`password_secret_name` that holds the
password the data was initialised with: the reconciler gives that Secret a second ownerReference, to the data
PVC, so garbage collection keeps it as long as the volume exists and removes it with the volume (with
``Delete``, the StatefulSet owns the PVC, which goes, and the Secret with it). A new Postgresql of the same name
runs on that data (the StatefulSet reuses the PVC by name, and postgres takes a password only when it first
initialises its data): it takes the kept Secret back (:data:`KEPT`) and says so; without a kept Secret its
password is :data:`NEW` and not the data's, which it says as a Warning.

``tests/kinds/test_kinds.py`` holds ``crds/postgresqls.database.db.example.com.yaml`` against this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

from kinds.fields import ApiField, Overlay
from kinds.names import SUBDOMAIN_MESSAGE
from kinds.states import ConditionMeaning, Lifecycle, State

# -- names ---------------------------------------------------------------------------------------

GROUP = "database.db.example.com"
VERSION = "v1"  # the API version (served and stored, the only one), not postgres's: VERSIONS
GROUP_VERSION = f"{GROUP}/{VERSION}"
KIND = "Postgresql"
FINALIZER = "database.db.example.com/volumes"  # honours spec.deletionPolicy for the data volumes, then goes
CONFIG_HASH_ANNOTATION = "database.db.example.com/config-hash"  # on the pod template: a new value rolls the pod
PASSWORD_KEY = "password"  # the key of the password in the generated Secret (and the default of passwordSecretRef.key)
USERNAME_KEY = "username"  # the generated Secret also names the user, for clients that read both from it
# Set by the API on a create that carries a password, removed once the password is in the Secret: while
# it is there the reconciler should neither generate the Secret nor start the database (postgres takes
# the password only when it first initialises its data directory).
PASSWORD_PENDING_ANNOTATION = "database.db.example.com/password-pending"
# Set by the API on a create that finds the data volume of a former Postgresql of the same name (value: the PVC's
# name), so its answer says so before the reconciler has looked; the reconciler's status.dataVolume then says more.
RETAINED_DATA_ANNOTATION = "database.db.example.com/retained-data"
PORT = 5432
PASSWORD_LENGTH = 32  # of a generated password
# A password given to the API (or the dashboard's form): at least this long, at most PASSWORD_MAX_LENGTH characters.
PASSWORD_MIN_LENGTH = 8
PASSWORD_MAX_LENGTH = 1024
DATA_VOLUME = "data"  # the volumeClaimTemplate: PVCs are data-<name>-<ordinal>


def password_secret_name(name: str) -> str:
    """The Secret the reconciler generates (or the API fills) when no passwordSecretRef is given."""
    return f"{name}-credentials"


def config_map_name(name: str) -> str:
    return f"{name}-config"


def headless_service_name(name: str) -> str:
    """The StatefulSet's governing Service (stable pod DNS names); the client Service is named like the Postgresql."""
    return f"{name}-headless"


def claim_name(name: str, ordinal: int = 0) -> str:
    """The PVC the StatefulSet controller creates for pod ``ordinal``."""
    return f"{DATA_VOLUME}-{name}-{ordinal}"


# -- field rules ---------------------------------------------------------------------------------

# A StatefulSet stamps each pod with ``controller-revision-hash: <name>-<10-character hash>``, a label
# value of at most 63 characters: a longer name makes a StatefulSet whose pods can never be created.
MAX_NAME_LENGTH = 52
# An unsigned quantity without exponent, as the CRD states it for storage.size and resources (the API
# server's Quantity type also takes signs and exponents; the CRD does not).
QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$"
SECRET_KEY_PATTERN = r"^[-._a-zA-Z0-9]+$"  # a key of a Secret's data (passwordSecretRef.key), at most 253 characters

DEFAULT_VERSION = "17"
VERSIONS = ("13", "14", "15", "16", "17", "18")  # postgres major versions with an official image; a minor may follow
VERSION_PATTERN = r"^(13|14|15|16|17|18)(\.[0-9]{1,2})?$"
IDENTIFIER_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"  # an unquoted PostgreSQL identifier, 63 bytes at most
DEFAULT_DATABASE = "app"
DEFAULT_USER = "app"
RESERVED_USERS = ("postgres",)  # the image's superuser: an application user of its own is what we create
DEFAULT_STORAGE = "1Gi"
DELETION_POLICIES = ("Retain", "Delete")
DEFAULT_DELETION_POLICY = "Retain"  # data outlives its Postgresql unless the user says otherwise

# postgresql.conf settings a user may set, with what each takes; everything else is ours (listen
# address, data directory, ...) or a foot-gun (fsync). Values are strings as in postgresql.conf.
PARAMETERS: Mapping[str, str] = {
    "max_connections": "integer",
    "shared_buffers": "memory",
    "work_mem": "memory",
    "maintenance_work_mem": "memory",
    "effective_cache_size": "memory",
    "max_wal_size": "memory",
    "min_wal_size": "memory",
    "checkpoint_completion_target": "real",
    "random_page_cost": "real",
    "statement_timeout": "duration",
    "idle_in_transaction_session_timeout": "duration",
    "lock_timeout": "duration",
    "log_min_duration_statement": "duration",
    "log_statement": "none|ddl|mod|all",
    "timezone": "text",
}
_VALUE_PATTERNS: Mapping[str, str] = {
    "integer": r"^[0-9]{1,9}$",
    "memory": r"^[0-9]{1,9}(B|kB|MB|GB|TB)?$",
    "real": r"^[0-9]{1,6}(\.[0-9]{1,6})?$",
    "duration": r"^-?[0-9]{1,9}(us|ms|s|min|h|d)?$",
    "text": r"^[A-Za-z0-9_/+:.-]{1,64}$",
}


def parameter_problem(name: str, value: Any) -> str | None:
    """Why ``name = value`` cannot go into postgresql.conf, or None."""
    kind = PARAMETERS.get(name)
    if kind is None:
        return f"not an allowed parameter (allowed: {', '.join(sorted(PARAMETERS))})"
    if not isinstance(value, str):
        return "must be a string, as in postgresql.conf"
    if "|" in kind:
        return None if value in kind.split("|") else f"must be one of {', '.join(kind.split('|'))}"
    return None if re.fullmatch(_VALUE_PATTERNS[kind], value) else f"must be {_WORDS[kind]}, e.g. {_EXAMPLES[kind]}"


_EXAMPLES = {"integer": "100", "memory": "128MB", "real": "0.9", "duration": "30s", "text": "UTC"}
# What each kind of value is, in plain words (the messages people read).
_WORDS = {
    "integer": "a whole number",
    "memory": "an amount of memory (a whole number, optionally with B, kB, MB, GB or TB)",
    "real": "a decimal number",
    "duration": "a duration (a whole number, optionally with us, ms, s, min, h or d)",
    "text": "up to 64 letters, digits or _ / + : . -",
}


def spec_problems(spec: Mapping[str, Any]) -> dict[str, list[str]]:
    """What the CRD schema cannot say about a stored spec, by path below ``spec`` (the reconciler's check)."""
    errors: dict[str, list[str]] = {}
    for name, value in sorted((spec.get("parameters") or {}).items()):
        problem = parameter_problem(name, value)
        if problem:
            errors[f"parameters.{name}"] = [problem]
    if spec.get("user") in RESERVED_USERS:
        errors["user"] = [f"{spec['user']!r} is the image's superuser; choose an application user"]
    return errors


# -- what the API says of the spec fields -----------------------------------------------------------

RESOURCE_NAMES = ("cpu", "memory")  # the keys of resources.requests and resources.limits the API takes and shows
RESOURCE_GROUPS = ("requests", "limits")
QUANTITY_MESSAGE = "must be a quantity such as 500m, 1, 256Mi or 10Gi: digits, an optional fraction and an optional suffix"
QUANTITY_MAX_LENGTH = 32  # the CRD's bound of storage.size, also the API's for the quantities of resources
IDENTIFIER_MESSAGE = (
    "must be an unquoted PostgreSQL identifier: a lowercase letter or '_', then lowercase letters, digits or '_', 63 at most"
)
PASSWORD_MESSAGE = f"must be {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters without control characters"
PASSWORD_NOTE = (
    f"Write-only, {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters: stored in the Secret <name>-credentials "
    "(keys password, username) owned by the Postgresql, never returned (passwordSet says whether one is stored). "
    "postgres takes it only when it first initialises its data directory; changing it later updates the Secret only, "
    "not the password inside the database. Not with passwordSecretRef. Omitted on create: the reconciler generates one."
)
POLICIES_WORDS = " or ".join(DELETION_POLICIES)


def _quantity(ask: str, *, positive: bool = False, tell: str | None = None, shown_default: str | None = None) -> ApiField:
    """A quantity as the CRD takes it (unsigned, no exponent) that :func:`kinds.quantities.quantity_value` reads."""
    return ApiField(
        ask=ask,
        tell=tell,
        shown_default=shown_default,
        check="positive-quantity" if positive else "quantity",
        max_length=QUANTITY_MAX_LENGTH,
        length_message="must be at most {max} characters",
        message=QUANTITY_MESSAGE,
    )


def _identifier(ask: str, default: str) -> ApiField:
    return ApiField(ask=ask, message=IDENTIFIER_MESSAGE, shown_default=default)


# The API's words for the spec fields (the CRD says the rest: types, patterns, bounds, the enum, its defaults):
# kinds.fields. Patterns match whole values. passwordSet is no spec field: the API computes it (backend.core.kinds).
API = Overlay(
    kind=KIND,
    full_match=True,
    fields={
        "version": ApiField(
            ask=f'PostgreSQL version, the tag of the official image, e.g. "17" or "16.4" (default "{DEFAULT_VERSION}").',
            message=f"must be a PostgreSQL major version ({', '.join(VERSIONS)}), optionally with a minor, e.g. 16.4",
            shown_default=DEFAULT_VERSION,
        ),
        "storage": ApiField(ask="The data volume."),
        "storage.size": _quantity(
            'Size of the data volume, e.g. "10Gi" (default {default}). It can grow but never shrink.',
            positive=True,
            tell="Requested size of the data volume.",
            shown_default=DEFAULT_STORAGE,
        ),
        "storage.storageClassName": ApiField(
            ask="StorageClass of the data volume (omitted: the cluster's default); fixed at creation.",
            tell="null: the cluster's default StorageClass.",
            min_length=1,
            message=SUBDOMAIN_MESSAGE,
        ),
        "databaseName": _identifier(f'Database created on first start (default "{DEFAULT_DATABASE}").', DEFAULT_DATABASE),
        "user": _identifier(
            f'Owner of the database, created on first start (default "{DEFAULT_USER}"; not {", ".join(RESERVED_USERS)}).', DEFAULT_USER
        ),
        "passwordSecretRef": ApiField(
            ask="Use the password in this Secret instead of <name>-credentials; not with password.",
            tell="The Secret holding the password; null: <name>-credentials (generated, or the password given to the API).",
        ),
        "passwordSecretRef.name": ApiField(ask="Name of the Secret.", check="dns-subdomain"),
        "passwordSecretRef.key": ApiField(
            ask='Key of the password in the Secret (default "{default}").',
            min_length=1,
            length_message="must be 1 to {max} characters",
            message="must be a Secret key: letters, digits, '-', '_' or '.'",
            shown_default=PASSWORD_KEY,
        ),
        "resources": ApiField(ask="Requests and limits of cpu and memory."),
        "resources.requests": ApiField(ask="What the pod is scheduled with."),
        "resources.limits": ApiField(ask="What the container may use at most."),
        **{
            f"resources.{group}.{name}": _quantity(ask)
            for group in RESOURCE_GROUPS
            for name, ask in zip(RESOURCE_NAMES, ('CPU, e.g. "500m" or "2".', 'Memory, e.g. "512Mi" or "2Gi".'), strict=True)
        },
        "parameters": ApiField(ask="postgresql.conf settings (a change rolls the pod).", tell="postgresql.conf settings."),
        "deletionPolicy": ApiField(
            ask=f"What happens to the data volumes on deletion: {POLICIES_WORDS} (default {DEFAULT_DELETION_POLICY}).",
            message=f"must be {POLICIES_WORDS}",
            shown_default=DEFAULT_DELETION_POLICY,
        ),
    },
    write_only={
        "password": ApiField(
            ask=PASSWORD_NOTE,
            after="user",
            min_length=PASSWORD_MIN_LENGTH,
            max_length=PASSWORD_MAX_LENGTH,
            message=PASSWORD_MESSAGE,
            check="printable",
        ),
    },
    keys={f"resources.{group}": RESOURCE_NAMES for group in RESOURCE_GROUPS},
)


# -- typed shapes ----------------------------------------------------------------------------------


class Storage(TypedDict, total=False):
    size: str
    storageClassName: str


class SecretKeyRef(TypedDict, total=False):
    name: str
    key: str


class PostgresqlSpec(TypedDict, total=False):
    """``spec`` of a stored Postgresql (kube has filled in the CRD's defaults; a raw body may lack them): the reconciler
    reads it with the defaults filled in (``darkroom_operator.pgchildren.spec_of``)."""

    version: str
    storage: Storage
    databaseName: str
    user: str
    passwordSecretRef: SecretKeyRef
    resources: dict[str, dict[str, str]]
    parameters: dict[str, str]
    deletionPolicy: str


class FriendlyStorage(TypedDict, total=False):
    size: str | None
    storageClassName: str | None


class FriendlyPostgresql(TypedDict, total=False):
    """A Postgresql as the API takes it (validated): the friendly payload of a create, replace or merged patch — its
    spec fields, the write-only password (never in the CR) after ``user``, as the request lists them."""

    name: str
    namespace: str
    version: str | None
    storage: FriendlyStorage | None
    databaseName: str | None
    user: str | None
    password: str | None
    passwordSecretRef: SecretKeyRef | None
    resources: dict[str, dict[str, str | None] | None] | None
    parameters: dict[str, str | None] | None
    deletionPolicy: str | None


class Endpoint(TypedDict):
    host: str
    port: int


class PasswordSecret(TypedDict):
    """Where the pods read the password from, and whether it is there (the Secret exists and holds the key)."""

    name: str
    key: str
    present: bool


class DataVolume(TypedDict, total=False):
    """The data volume of pod 0: ``reused`` when it held a former Postgresql's data before this one existed;
    then ``password`` says whose password the data has (:data:`PASSWORD_ORIGINS`)."""

    claim: str
    reused: bool
    password: str


class PostgresqlStatus(TypedDict, total=False):
    phase: str
    conditions: list[dict[str, Any]]
    observedGeneration: int
    endpoint: Endpoint
    readyReplicas: int
    passwordSecret: PasswordSecret
    dataVolume: DataVolume


# -- a data volume kept from a former Postgresql ----------------------------------------------------

KEPT = "Kept"  # the former password Secret was kept with the data and is this Postgresql's: the password shown is the data's
NEW = "New"  # no Secret was kept with the data: this Postgresql's password (generated or given) is not the data's
REFERENCED = "Referenced"  # this Postgresql reads its password from the user's Secret: the data keeps the one it was initialised with
PASSWORD_ORIGINS = (KEPT, NEW, REFERENCED)
DATA_REUSED = "DataReused"  # Event: the database runs on kept data, with its password
DATA_PASSWORD_UNKNOWN = "DataPasswordUnknown"  # Warning Event: the database runs on kept data whose password nobody has


def data_volume_message(name: str, data: Mapping[str, Any] | None, *, user: str, secret: str) -> str:
    """The sentence about a Postgresql's data volume (``data``: its ``status.dataVolume``; ``secret``: where the pods
    read the password from), for the API, the dashboard and the reconciler's Events. Empty for fresh data."""
    if not data or not data.get("reused"):
        return ""
    kept = f'the database runs on the data volume {data.get("claim")} kept from a former Postgresql "{name}"'
    origin = data.get("password")
    if origin == KEPT:
        return f"{kept}: its data and its password, which Secret {secret} (kept with the volume) holds"
    if origin == NEW:
        return (
            f"{kept}, whose password was not kept with it: the password in Secret {secret} is not the database's. "
            f"Set it in the database (ALTER ROLE {user} PASSWORD ...) or delete this Postgresql and the volume to start afresh"
        )
    if origin == REFERENCED:
        return (
            f"{kept}: its data, and the password it was initialised with; if Secret {secret} holds another, "
            f"set that one in the database (ALTER ROLE {user} PASSWORD ...)"
        )
    return f"{kept}: its data, and the password it was initialised with (postgres takes a password only when it first initialises its data)"


# -- phases, conditions, state -------------------------------------------------------------------

PHASES = ("Pending", "Running", "Failed", "Terminating")  # status.phase, as `kubectl get pg` shows it
READY = "Ready"  # does the database accept connections? (its pod passes pg_isready)
RECONCILED = "Reconciled"  # did the last reconcile apply every child?

STATEFULSET_MISSING = "StatefulSetMissing"
ROLLOUT_IN_PROGRESS = "RolloutInProgress"
POD_NOT_READY = "PodNotReady"
PASSWORD_SECRET_MISSING = "PasswordSecretMissing"  # the referenced Secret or its key does not exist
DATABASE_READY = "DatabaseReady"
APPLIED = "Applied"
INVALID_SPEC = "InvalidSpec"
CHILD_CONFLICT = "ChildConflict"
APPLY_FAILED = "ApplyFailed"
STORAGE_SIZE_FIXED = "StorageSizeFixed"  # spec.storage.size differs from the data volume's: resizing is not supported yet

PASSWORD_PENDING = "PasswordPending"  # the API has not written the given password yet (PASSWORD_PENDING_ANNOTATION)

STARTING_REASONS = frozenset({STATEFULSET_MISSING, ROLLOUT_IN_PROGRESS, POD_NOT_READY, PASSWORD_PENDING})

STATE_READY = State("Ready", "Ready", "good")
STATE_STARTING = State("Starting", "Starting", "progress")
STATE_RECONCILING = State("Reconciling", "Reconciling", "progress")
STATE_TERMINATING = State("Terminating", "Terminating", "idle")
STATE_FAILED = State("Failed", "Failed", "bad")
LIFECYCLE = Lifecycle(
    ready=STATE_READY,
    starting=STATE_STARTING,
    reconciling=STATE_RECONCILING,
    terminating=STATE_TERMINATING,
    failed=STATE_FAILED,
    starting_reasons=STARTING_REASONS,
    terminating_detail="deletion requested; the data volumes follow spec.deletionPolicy",
    ready_type=READY,
    reconciled_type=RECONCILED,
)
STATES: tuple[State, ...] = LIFECYCLE.states
CONDITIONS: Mapping[str, ConditionMeaning] = LIFECYCLE.condition_meanings()


def state(obj: Mapping[str, Any]) -> State:
    """The one state of a stored Postgresql, with the sentence that explains it (:class:`Lifecycle`, as Darkrooms')."""
    return LIFECYCLE.state(obj)


def phase(obj: Mapping[str, Any]) -> str:
    """``status.phase`` for a state: Running when Ready, Failed, Terminating, else Pending."""
    key = state(obj).key
    return {"Ready": "Running", "Failed": "Failed", "Terminating": "Terminating"}.get(key, "Pending")
