"""Darkroom: friendly payload ↔ ``deployments.example.com/v1alpha1`` Darkroom CR.

Called by :mod:`backend.darkrooms` (writes and responses) and by the unit tests. S3 keys never
enter the CR: a payload's ``accessKey``/``secretKey`` go to the Secret
``<name>-s3-credentials`` (:mod:`backend.credentials`) and the spec only names it in
``source.credentialsSecretRef``; responses say ``credentialsSet``. ``status.tls`` is the
reconciler's (its Ingress serves the domains over TLS: link them with
:func:`kinds.darkrooms.domain_url`); absent (an older reconciler) reads as false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.conversions import conditions, current_and_true, object_fields
from kinds import darkrooms as kind
from kinds.darkrooms import READY, SOURCE_SPEC_FIELDS, credentials_secret_name

__all__ = ["credentials_secret_name"]  # re-exported: callers of this module name the Secret through it
# Server paths below spec that have no friendly field of their own.
RENAMES = {"source.credentialsSecretRef.name": "source", "source.credentialsSecretRef": "source"}  # first match wins


def credentials_ref(obj: Mapping[str, Any] | None) -> str | None:
    """Name of the Secret a Darkroom's spec refers to (None: no credentials)."""
    if obj is None:
        return None
    ref = ((obj.get("spec") or {}).get("source") or {}).get("credentialsSecretRef") or {}
    name = ref.get("name")
    return str(name) if name else None


def to_friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The friendly Darkroom (``version``: the CRD default when a stored object predates it, as kube does on read)."""
    spec = obj.get("spec") or {}
    source = spec.get("source") or {}
    status = obj.get("status") or {}
    return {
        **object_fields(obj),
        "version": spec.get("version") or kind.DEFAULT_VERSION,
        "replicas": spec.get("replicas"),
        "source": {
            "type": source.get("type") or kind.DEFAULT_SOURCE_TYPE,
            **{k: source.get(k) for k in SOURCE_SPEC_FIELDS},
            "credentialsSet": credentials_ref(obj) is not None,
        },
        "subDomains": list(spec.get("subDomains") or ()),
        "cacheTime": spec.get("cacheTime"),
        "status": {
            "state": (state := kind.state(obj)).key,
            "stateMessage": state.detail,
            "ready": current_and_true(obj, READY),
            "domains": list(status.get("domains") or ()),
            "tls": status.get("tls") is True,
            "readyReplicas": status.get("readyReplicas") or 0,
            "conditions": conditions(status),
            "observedGeneration": status.get("observedGeneration"),
        },
    }


def to_spec(friendly: Mapping[str, Any], *, secret_name: str | None) -> dict[str, Any]:
    """The CR spec of a validated friendly Darkroom; ``secret_name`` goes into credentialsSecretRef."""
    given = friendly["source"]
    source: dict[str, Any] = {"type": given["type"]}
    for key in SOURCE_SPEC_FIELDS:
        if given.get(key) is not None:
            source[key] = given[key]
    if secret_name:
        source["credentialsSecretRef"] = {"name": secret_name}
    spec: dict[str, Any] = {"source": source, "subDomains": list(friendly["subDomains"])}
    for key in ("version", "replicas", "cacheTime"):
        if friendly.get(key) is not None:
            spec[key] = friendly[key]
    return spec


def keys_of(friendly: Mapping[str, Any]) -> tuple[str, str] | None:
    """The S3 keys a payload carries (both or none: the schema enforces pairs)."""
    source = friendly.get("source") or {}
    keys = kind.variant(source.get("type")).keys
    if source.get("type") in kind.SOURCES and keys and all(source.get(k) is not None for k in keys):
        access_key, secret_key = (str(source[k]) for k in keys)
        return access_key, secret_key
    return None


def rebase_for_type_change(base: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Before merging a PATCH that switches the source type, drop the old type's fields from the base.

    So ``{"source": {"type": "S3", "bucket": ..., ...}}`` on a WebFolder Darkroom does not also
    need ``"baseUrl": null``.
    """
    new_type = patch.get("source", {}).get("type") if isinstance(patch, Mapping) and isinstance(patch.get("source"), Mapping) else None
    source = base.get("source")
    if not new_type or not isinstance(source, dict) or new_type == source.get("type"):
        return base
    drop = set(kind.foreign_fields(new_type))
    return {**base, "source": {k: v for k, v in source.items() if k not in drop}}
