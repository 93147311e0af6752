"""The Darkroom kind (``deployments.example.com/v1``), described once.

Who reads what:
- the API group and version (:data:`GROUP`, :data:`VERSION`) — every client of ours (``cluster.resources``), the
  samples and the tests; :data:`OLD_VERSIONS` are still served (the CRD marks them deprecated) and convert with the
  None strategy (same schema, only ``apiVersion`` differs), so objects written at them stay readable;
- the source table (:data:`SOURCES`, :func:`source_problems`) — the API's marshmallow schemas and
  their OpenAPI ``oneOf``, the conversions, the dashboard's form and the reconciler's own validation;
- the names (annotations, the credentials Secret and its keys) — the API and the reconciler;
- the conditions, their reasons and :func:`state` — the reconciler sets the conditions, the API
  returns ``status.state`` and the dashboard shows its word and tone;
- TLS (:func:`serves_tls`, :func:`domain_url`) — the reconciler publishes ``status.tls`` from the
  Ingress it applied (whether it has TLS depends on the reconciler's ``tls_secret`` setting, which
  the API cannot read, and the API may not read Ingresses either: ``deploy/base/rbac-api.yaml``);
  the API returns it and the dashboard links each domain with the scheme :func:`domain_url` gives;
- who holds a host (:func:`claims`, :func:`holder`) — the one rule by which the reconciler gives a
  sub-domain asked for by several Darkrooms to one of them, and by which the API names that one when
  it refuses a create or an edit asking for a sub-domain another Darkroom already asks for.

``tests/kinds/test_kinds.py`` holds ``crds/darkrooms.deployments.example.com.yaml`` against this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from kinds.fields import ITEM, ApiField, Overlay
from kinds.states import ConditionMeaning, Lifecycle, State

# -- names ---------------------------------------------------------------------------------------

GROUP = "deployments.example.com"
VERSION = "v1"  # served and the storage version (crds/darkrooms.deployments.example.com.yaml)
GROUP_VERSION = f"{GROUP}/{VERSION}"
KIND = "Darkroom"
OLD_VERSIONS = ("v1alpha1",)  # release 0.1.0's, still served, deprecated: docs/operations/upgrading.md
CREDENTIALS_PENDING_ANNOTATION = "deployments.example.com/credentials-pending"  # a create whose Secret is not written yet
CONFIG_HASH_ANNOTATION = "deployments.example.com/config-hash"  # on the pod template: a new value rolls the pods
CREDENTIALS_SECRET_SUFFIX = "-s3-credentials"  # the Secret the API writes S3 keys to: <name>-s3-credentials
DEFAULT_CACHE_TIME_S = 31536000  # the CRD's default for spec.cacheTime (its description says it in words)
DEFAULT_CACHE_TIME_WORDS = "one year"  # DEFAULT_CACHE_TIME_S as the API's and the CRD's descriptions say it
DEFAULT_VERSION = "latest"  # the CRD's default for spec.version: what kubectl, the API and the dashboard all show


def credentials_secret_name(name: str) -> str:
    """The Secret holding a Darkroom's S3 keys when the API stored them."""
    return name + CREDENTIALS_SECRET_SUFFIX


# -- the source: one table for every variant ------------------------------------------------------


@dataclass(frozen=True)
class SourceVariant:
    """The fields one ``source.type`` uses.

    ``required``: what the API demands. ``essential``: what the reconciler cannot run without (a CR
    written with kubectl may omit the rest).
    ``keys``: write-only credentials; the API stores them in the credentials Secret, never in the CR.
    They are optional but come in pairs (:func:`source_problems`): an S3 source without keys reads a
    public bucket (no Secret, no ``credentialsSecretRef``, no credentials in the pods); on an update,
    omitting them keeps the stored ones.
    """

    type: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    essential: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        """Every spec field of this variant (keys excluded: they never enter the spec)."""
        return (*self.required, *self.optional)

    @property
    def article(self) -> str:
        return "an" if self.type[:1] in "AEFHILMNORSX" else "a"


WEBFOLDER = SourceVariant("WebFolder", required=("baseUrl",), essential=("baseUrl",))
# region is optional everywhere (the CRD, the API, the form): the reconciler needs only the bucket and passes a region
# on when there is one (SOURCE_BUCKET_REGION); see REGION_NOTE.
S3 = SourceVariant("S3", required=("bucket",), optional=("region", "endpoint"), essential=("bucket",), keys=("accessKey", "secretKey"))
REGION_NOTE = (
    'Region of the bucket, e.g. "eu-west-1" (optional): give it for AWS S3, which signs requests for a region; '
    "an S3-compatible service (endpoint) may do without."
)
SOURCES: Mapping[str, SourceVariant] = {variant.type: variant for variant in (WEBFOLDER, S3)}
SOURCE_TYPES: tuple[str, ...] = tuple(SOURCES)
DEFAULT_SOURCE_TYPE = WEBFOLDER.type
SHARED_SOURCE_FIELDS = ("pathPrefix",)  # used by every variant
SOURCE_SPEC_FIELDS: tuple[str, ...] = (*dict.fromkeys(f for v in SOURCES.values() for f in v.fields), *SHARED_SOURCE_FIELDS)
KEY_FIELDS: tuple[str, ...] = tuple(dict.fromkeys(k for v in SOURCES.values() for k in v.keys))


# -- what the API says beyond the CRD: the overlay (kinds.fields) ---------------------------------

BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"  # stricter than the CRD (which takes any string)
REGION = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
KEY_MAX_LENGTH = 1024  # an S3 key's characters

API = Overlay(
    kind="Darkroom",
    fields={
        "version": ApiField(
            ask=f'Darkroom image tag, e.g. "0.1.0" or "v0.1.0"; omitted: "{DEFAULT_VERSION}" (the CRD default).',
            tell=f'Image tag (the CRD default "{DEFAULT_VERSION}" when the payload had none).',
            message="must be an image tag: letters, digits, '_', '.' or '-', at most 128 characters",
            shown_default=DEFAULT_VERSION,
        ),
        "replicas": ApiField(ask="Pods to run (default {default})."),
        "source.type": ApiField(
            ask=f"{' or '.join(SOURCE_TYPES)}; default {DEFAULT_SOURCE_TYPE}.",
            default=DEFAULT_SOURCE_TYPE,
            shown_default=DEFAULT_SOURCE_TYPE,
        ),
        "source.baseUrl": ApiField(
            ask='WebFolder only (required there): URL the image paths are appended to, e.g. "https://example.com/images".', check="url"
        ),
        "source.bucket": ApiField(
            ask="S3 only (required there): bucket holding the originals.",
            pattern=BUCKET,
            message="must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-'",
        ),
        "source.region": ApiField(ask=f"S3 only. {REGION_NOTE}", pattern=REGION, message="must be a region name such as eu-west-1"),
        "source.endpoint": ApiField(ask="S3 only: endpoint of an S3-compatible service (MinIO, Ceph, ...); omit for AWS.", check="url"),
        "source.pathPrefix": ApiField(ask="Prefix prepended to every image path.", max_length=1024),
        "subDomains": ApiField(ask="Sub-domains to serve on: unique DNS labels.", message="must list between {min} and {max} sub-domains"),
        "subDomains" + ITEM: ApiField(ask="One sub-domain, e.g. images.", check="dns-label"),
        "cacheTime": ApiField(ask=f"Seconds clients may cache a processed image (default {DEFAULT_CACHE_TIME_WORDS})."),
    },
    # The S3 keys stand in for credentialsSecretRef: the API stores them in the Secret it names.
    hidden=frozenset({"source.credentialsSecretRef"}),
    write_only={
        "source.accessKey": ApiField(
            ask="S3 only: access key id, stored in a Secret owned by the Darkroom. Give both keys or neither: "
            "none reads a public bucket (on an update, none keeps the stored keys).",
            min_length=1,
            max_length=KEY_MAX_LENGTH,
        ),
        "source.secretKey": ApiField(
            ask="S3 only: secret access key, stored in a Secret owned by the Darkroom; given together with accessKey.",
            min_length=1,
            max_length=KEY_MAX_LENGTH,
        ),
    },
)


def variant(source_type: str | None) -> SourceVariant:
    """The variant of ``source_type``; the default (WebFolder) for None or an unknown type."""
    return SOURCES.get(source_type or DEFAULT_SOURCE_TYPE, WEBFOLDER)


def foreign_fields(source_type: str) -> tuple[str, ...]:
    """Fields (keys included) of the other variants that ``source_type`` does not use."""
    own = set(variant(source_type).fields) | set(variant(source_type).keys)
    return tuple(dict.fromkeys(f for v in SOURCES.values() for f in (*v.fields, *v.keys) if f not in own))


def source_problems(source: Mapping[str, Any], *, essential_only: bool = False) -> dict[str, list[str]]:
    """What is wrong with ``source`` by field: missing fields of its type, fields of another type, half a key pair.

    ``essential_only`` is the reconciler's reading of a stored CR (only what it cannot run without;
    fields of another type are ignored there). ``None`` counts as absent. An unknown or missing type
    is reported on ``type`` (the API's schema fills in the default type before asking).
    """
    kind = source.get("type")
    if not isinstance(kind, str) or kind not in SOURCES:
        return {"type": [f"must be one of {', '.join(SOURCE_TYPES)}, not {kind!r}"]}
    chosen = SOURCES[kind]
    needed = chosen.essential if essential_only else chosen.required
    errors = {f: [f"required for {chosen.article} {kind} source"] for f in needed if source.get(f) in (None, "")}
    if essential_only:
        return errors
    for other in SOURCES.values():
        foreign = [f for f in other.fields if f not in chosen.fields and source.get(f) is not None] if other is not chosen else []
        errors.update({f: [f"only used by {other.type} sources"] for f in foreign})
    foreign_keys = [k for k in KEY_FIELDS if k not in chosen.keys and source.get(k) is not None]
    errors.update({k: [f"only used by {_users_of(k)} sources"] for k in foreign_keys})
    given = [k for k in chosen.keys if source.get(k) is not None]
    if given and len(given) < len(chosen.keys):
        errors.update({k: [f"required together with the {spoken(given[0])}"] for k in chosen.keys if k not in given})
    return errors


def spoken(field: str) -> str:
    """A field's name in plain words for a message people read: ``accessKey`` → ``access key`` (as the form labels it)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: " " + m.group(1).lower(), field)


def _users_of(field: str) -> str:
    return " and ".join(v.type for v in SOURCES.values() if field in v.fields or field in v.keys)


# -- typed shapes: the CR's (the reconciler reads them) and the API's friendly payload ----------------
# tests/kinds/test_kinds.py holds them against the CRD and the API's schemas (both derived from the CRD).


class DarkroomSource(TypedDict, total=False):
    """``spec.source`` of a stored Darkroom."""

    type: str
    baseUrl: str
    bucket: str
    region: str
    endpoint: str
    pathPrefix: str
    credentialsSecretRef: dict[str, str]


class DarkroomSpec(TypedDict, total=False):
    """``spec`` of a stored Darkroom (kube has filled in the CRD's defaults; an older object may lack them)."""

    version: str
    replicas: int
    source: DarkroomSource
    subDomains: list[str]
    cacheTime: int


class FriendlySource(TypedDict, total=False):
    """A Darkroom's source as the API takes it (validated): its spec fields, then the write-only keys (never in the CR)."""

    type: str
    baseUrl: str | None
    bucket: str | None
    region: str | None
    endpoint: str | None
    pathPrefix: str | None
    accessKey: str | None
    secretKey: str | None


class FriendlyDarkroom(TypedDict, total=False):
    """A Darkroom as the API takes it (validated): the friendly payload of a create, replace or merged patch."""

    name: str
    namespace: str
    version: str | None
    replicas: int | None
    source: FriendlySource
    subDomains: list[str]
    cacheTime: int | None


class DarkroomStatus(TypedDict, total=False):
    observedGeneration: int
    conditions: list[dict[str, Any]]
    domains: list[str]
    tls: bool
    readyReplicas: int


# -- TLS: how the domains are reached --------------------------------------------------------------


def serves_tls(ingress: Mapping[str, Any] | None) -> bool:
    """Whether ``ingress`` (an Ingress object) has hosts and serves every one of them over TLS (each rule's
    host is listed in a ``spec.tls`` entry). The reconciler publishes it as a Darkroom's ``status.tls``."""
    spec = (ingress or {}).get("spec") or {}
    hosts = [rule.get("host") for rule in spec.get("rules") or () if rule.get("host")]
    covered = {host for entry in spec.get("tls") or () for host in entry.get("hosts") or ()}
    return bool(hosts) and all(host in covered for host in hosts)


def domain_url(domain: str, *, tls: bool) -> str:
    """The URL a domain is reached at: ``https://`` when its Ingress serves it over TLS, else ``http://``."""
    return f"{'https' if tls else 'http'}://{domain}"


# -- hosts: who holds a sub-domain several Darkrooms ask for ----------------------------------------
#
# Every Darkroom of one reconciler gets the same domain, so equal sub-domains mean equal Ingress hosts.
# The older claim holds the host: a claim's age is the Darkroom's creationTimestamp, then
# namespace/name, so that equal timestamps (one-second resolution) still give one answer on every
# replica and in the API. A Darkroom being deleted claims nothing.


SUBDOMAIN_INDEX = "subdomain"  # the informer index of Darkrooms by the sub-domains they claim (its function: claims)


def claims(darkroom: Mapping[str, Any]) -> list[str]:
    """The sub-domains a stored Darkroom asks for (none while it is being deleted); also the indexer of
    :data:`SUBDOMAIN_INDEX`, through which the reconciler and the API find who asks for a sub-domain without a scan."""
    if darkroom["metadata"].get("deletionTimestamp"):
        return []
    return [str(s) for s in (darkroom.get("spec") or {}).get("subDomains") or ()]


def claim_age(darkroom: Mapping[str, Any]) -> tuple[str, str, str]:
    """The order of claims: older first (creationTimestamp, then namespace, then name)."""
    meta = darkroom["metadata"]
    return (str(meta.get("creationTimestamp") or ""), str(meta["namespace"]), str(meta["name"]))


def holder(sub_domain: str, darkrooms: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The Darkroom among ``darkrooms`` that holds ``sub_domain``'s host: the oldest that asks for it (None: nobody asks)."""
    asking = [d for d in darkrooms if sub_domain in claims(d)]
    return min(asking, key=claim_age) if asking else None


# -- conditions, reasons, state ------------------------------------------------------------------

READY = "Ready"  # does it serve images? (True only when every wanted pod runs the current template)
RECONCILED = "Reconciled"  # did the last reconcile apply every child?

# Reasons of Ready=False that are a step on the way, not a failure.
DEPLOYMENT_MISSING = "DeploymentMissing"
ROLLOUT_IN_PROGRESS = "RolloutInProgress"
PODS_UNAVAILABLE = "PodsUnavailable"
SCALED_TO_ZERO = "ScaledToZero"
# Reasons of failure.
DEPLOYMENT_UNAVAILABLE = "DeploymentUnavailable"
CHILD_CONFLICT = "ChildConflict"
HOST_CONFLICT = "HostConflict"
INVALID_SPEC = "InvalidSpec"
APPLY_FAILED = "ApplyFailed"
# Ready=True, Reconciled=True.
DEPLOYMENT_AVAILABLE = "DeploymentAvailable"
APPLIED = "Applied"

ROLLING_OUT_REASONS = frozenset({DEPLOYMENT_MISSING, ROLLOUT_IN_PROGRESS, PODS_UNAVAILABLE})

STATE_READY = State("Ready", "Ready", "good")
STATE_ROLLING_OUT = State("RollingOut", "Rolling out", "progress")
STATE_RECONCILING = State("Reconciling", "Reconciling", "progress")
STATE_SCALED_TO_ZERO = State("ScaledToZero", "Scaled to 0", "idle")
STATE_TERMINATING = State("Terminating", "Terminating", "idle")
STATE_FAILED = State("Failed", "Failed", "bad")
LIFECYCLE = Lifecycle(
    ready=STATE_READY,
    starting=STATE_ROLLING_OUT,
    reconciling=STATE_RECONCILING,
    terminating=STATE_TERMINATING,
    failed=STATE_FAILED,
    starting_reasons=ROLLING_OUT_REASONS,
    by_reason={SCALED_TO_ZERO: STATE_SCALED_TO_ZERO},
    ready_type=READY,
    reconciled_type=RECONCILED,
)
STATES: tuple[State, ...] = LIFECYCLE.states
CONDITIONS: Mapping[str, ConditionMeaning] = LIFECYCLE.condition_meanings()


def state(obj: Mapping[str, Any]) -> State:
    """The one state of a stored Darkroom (a CR object), with the sentence that explains it (:class:`Lifecycle`):
    Terminating, Reconciling, Failed (Reconciled=False, or a Ready=False that is no rollout step),
    Ready, Rolling out (a rollout step, or no Ready yet), Scaled to 0 (zero replicas on purpose)."""
    return LIFECYCLE.state(obj)
