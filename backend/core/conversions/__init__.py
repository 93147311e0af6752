"""Conversion between friendly payloads and CR objects: the parts every kind shares.

Each kind's module (:mod:`backend.core.kinds.darkrooms`, :mod:`backend.core.kinds.tasks`, :mod:`backend.core.kinds.postgresqls`) builds its
friendly shape from :func:`object_fields` (metadata a client sees) and :func:`conditions`, and map
the API server's field paths back to friendly ones with :func:`friendly_path` — so a server-side
validation error on ``spec.subDomains[1]`` is reported on ``subDomains.1``, exactly where our own
validation would put it. Pure functions: no Flask, no cluster access.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from cluster import Invalid

CONDITION_FIELDS = ("type", "status", "reason", "message", "lastTransitionTime", "observedGeneration")
ROOT = "$"  # the error path of the body as a whole
_INDEX = re.compile(r"\[(\d+)\]")


def object_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata part of every friendly object (schema :class:`backend.core.schemas.common.ObjectFields`)."""
    meta = obj["metadata"]
    deletion = meta.get("deletionTimestamp")
    return {
        "name": meta["name"],
        "namespace": meta.get("namespace", ""),
        "uid": meta.get("uid", ""),
        "resourceVersion": str(meta.get("resourceVersion", "")),
        "generation": meta.get("generation"),
        "creationTimestamp": meta.get("creationTimestamp"),
        "deletionTimestamp": deletion,
        "terminating": deletion is not None,
        "labels": meta.get("labels") or {},
    }


def conditions(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Status conditions, restricted to the metav1.Condition fields."""
    return [
        {k: c[k] for k in CONDITION_FIELDS if c.get(k) is not None}
        for c in status.get("conditions") or ()
        if isinstance(c, Mapping) and c.get("type") and c.get("status")
    ]


def condition(items: Sequence[Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    return next((c for c in items if c.get("type") == type_), None)


def current_and_true(obj: Mapping[str, Any], type_: str) -> bool:
    """Whether condition ``type_`` is True and was set for the object's current generation."""
    status = obj.get("status") or {}
    found = condition(status.get("conditions") or (), type_)
    if found is None or found.get("status") != "True":
        return False
    generation = obj["metadata"].get("generation")
    observed = found.get("observedGeneration", status.get("observedGeneration", generation))
    return generation is None or observed is None or observed >= generation


def friendly_path(field: str, *, renames: Mapping[str, str] | None = None) -> str:
    """``spec.subDomains[1]`` → ``subDomains.1``; ``metadata.name`` → ``name``; renames apply to spec paths."""
    if not field:
        return ROOT
    path = _INDEX.sub(r".\1", field)
    if path.startswith("metadata."):
        rest = path.removeprefix("metadata.")
        return rest if rest in ("name", "namespace") else ROOT
    if path.startswith("spec."):
        path = path.removeprefix("spec.")
        for cr_name, friendly in (renames or {}).items():
            if path == cr_name or path.startswith(cr_name + "."):
                path = friendly + path[len(cr_name) :]
                break
        return path
    return ROOT


def invalid_errors(error: Invalid, *, renames: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The API server's validation causes keyed by friendly field path (messages say the friendly path too)."""
    found: dict[str, list[str]] = {}
    for cause in error.causes:
        path = friendly_path(cause.field, renames=renames)
        message = cause.message or cause.reason
        if cause.field:
            message = message.replace(cause.field, path)
        found.setdefault(path, []).append(message)
    if not found:
        found[ROOT] = [error.message]
    return found
