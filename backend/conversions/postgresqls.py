"""Postgresql: friendly payload ↔ ``database.db.example.com/v1`` Postgresql CR.

Called by :mod:`backend.postgresqls` (writes and responses) and by the unit tests. The friendly
shape is the spec's own (``version``, ``storage``, ``databaseName``, ``user``,
``passwordSecretRef``, ``resources``, ``parameters``, ``deletionPolicy``) with every CRD default
shown (the API server stores them on write, so what is shown is what is stored), plus ``status``
with the one ``state`` of :func:`kinds.postgresqls.state`. A payload's ``password`` never enters
the CR: :func:`password_of` hands it to the Secret write, :func:`to_spec` leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.conversions import conditions, current_and_true, object_fields
from kinds import postgresqls as kind
from kinds.postgresqls import READY

# The friendly shape is the spec's: no server path needs renaming.
RENAMES: Mapping[str, str] = {}
RESOURCE_NAMES = ("cpu", "memory")
LIMITS = ("requests", "limits")


def to_friendly(obj: Mapping[str, Any], *, raw: bool = False) -> dict[str, Any]:
    """The friendly Postgresql. ``raw``: the spec as stored, without falling back on the defaults (a PATCH's base)."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    storage = spec.get("storage") or {}
    ref = spec.get("passwordSecretRef")
    resources = spec.get("resources") or {}

    def stored(value: Any, default: Any) -> Any:
        return value if value is not None or raw else default

    return {
        **object_fields(obj),
        "version": stored(spec.get("version"), kind.DEFAULT_VERSION),
        "storage": {"size": stored(storage.get("size"), kind.DEFAULT_STORAGE), "storageClassName": storage.get("storageClassName")},
        "databaseName": stored(spec.get("databaseName"), kind.DEFAULT_DATABASE),
        "user": stored(spec.get("user"), kind.DEFAULT_USER),
        "passwordSecretRef": {"name": ref.get("name"), "key": stored(ref.get("key"), kind.PASSWORD_KEY)} if ref else None,
        "resources": {group: {r: (resources.get(group) or {}).get(r) for r in RESOURCE_NAMES} for group in LIMITS},
        "parameters": dict(spec.get("parameters") or {}),
        "deletionPolicy": stored(spec.get("deletionPolicy"), kind.DEFAULT_DELETION_POLICY),
        "status": {
            "state": (state := kind.state(obj)).key,
            "stateMessage": state.detail,
            "phase": status.get("phase"),
            "ready": current_and_true(obj, READY),
            "readyReplicas": status.get("readyReplicas") or 0,
            "endpoint": _endpoint(status.get("endpoint")),
            "conditions": conditions(status),
            "observedGeneration": status.get("observedGeneration"),
        },
    }


def _endpoint(endpoint: Any) -> dict[str, Any] | None:
    """``{host, port}`` once the reconciler has written both, else None."""
    if not isinstance(endpoint, Mapping) or endpoint.get("host") is None or endpoint.get("port") is None:
        return None
    return {"host": endpoint["host"], "port": endpoint["port"]}


def _present(values: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (values or {}).items() if v is not None}


def to_spec(friendly: Mapping[str, Any]) -> dict[str, Any]:
    """The CR spec of a validated friendly Postgresql (absent and null fields left to the CRD's defaults; never the password)."""
    spec: dict[str, Any] = {}
    for key in ("version", "databaseName", "user", "deletionPolicy"):
        if friendly.get(key) is not None:
            spec[key] = friendly[key]
    if friendly.get("storage") is not None:
        spec["storage"] = _present(friendly["storage"])
    if friendly.get("passwordSecretRef") is not None:
        spec["passwordSecretRef"] = _present(friendly["passwordSecretRef"])
    resources = {group: _present(values) for group, values in (friendly.get("resources") or {}).items() if _present(values)}
    if resources:
        spec["resources"] = resources
    parameters = _present(friendly.get("parameters"))
    if parameters:
        spec["parameters"] = parameters
    return spec


def password_of(friendly: Mapping[str, Any]) -> str | None:
    """The password a payload carries for the Secret ``<name>-credentials`` (None: none given)."""
    password = friendly.get("password")
    return str(password) if password is not None else None


def stored_storage(obj: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """The stored object's ``storage.size`` (the CRD's default when absent) and ``storageClassName``."""
    storage = ((obj or {}).get("spec") or {}).get("storage") or {}
    return str(storage.get("size") or kind.DEFAULT_STORAGE), storage.get("storageClassName")
