"""The dashboard's writes: a thin adapter over the JSON API's validation and write flow.

Called by :mod:`.editing` with the friendly payload a form became (:mod:`.generatedforms`). Nothing is
validated or written differently from ``POST``/``PUT``/``DELETE`` on the JSON API: the same
schemas and checks (:func:`backend.endpoints.checked`: every problem at once) and the same
module-level flows of :mod:`backend.endpoints`:
``create`` (served namespace, the kind's own checks, :mod:`backend.writing`: Secrets of S3
Darkrooms, undo on failure), ``write`` (conflicts: a form carries the generation it was rendered
from, so a stale form gets 409 instead of overwriting; ``If-Match`` plays no part) and ``delete``.
Failures are raised as :class:`backend.problems.Problem` — 422 with ``errors`` by friendly field
path, 409 on a conflict or an existing name — for the page to show inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend import endpoints
from backend.kinds import Kind
from backend.problems import Problem
from cluster import Conflict, NotFound


def create(kind: Kind, payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """Validate and create; the object the server stored."""
    return endpoints.create(kind, endpoints.checked(kind, kind.create_schema, dict(payload), existing=None), server="dashboard")


def replace(kind: Kind, namespace: str, name: str, payload: Mapping[str, Any], *, generation: str | None) -> None:
    """Validate and replace, provided the spec is still at ``generation`` (the one the form showed; 409 otherwise).

    The generation, not the resourceVersion: the reconciler's status updates change the latter all
    the time, and a form is only stale when someone else changed what it edits. The check runs on
    the very object each write attempt is conditioned on (:func:`backend.endpoints.write` retries
    a resourceVersion conflict on the fresh object), so a concurrent edit is never overwritten.
    """

    def build(current: Mapping[str, Any]) -> dict[str, Any]:
        friendly = endpoints.checked(kind, kind.update_schema, dict(payload), existing=current)  # every problem at once
        stored = current["metadata"].get("generation")
        if generation and stored is not None and str(stored) != generation:
            raise Problem(409, f'{kind.title} "{namespace}/{name}" was changed by someone else since the form was opened')
        return endpoints.with_identity(friendly, kind, namespace, name)

    endpoints.write(kind, namespace, name, None, build, wanted=None)


def change(kind: Kind, namespace: str, name: str, patch: Mapping[str, Any], *, resource_version: str | None = None) -> None:
    """Apply a JSON merge patch of friendly fields (e.g. ``{"state": "Finished"}``), as ``PATCH`` does."""

    def build(current: Mapping[str, Any]) -> dict[str, Any]:
        friendly = endpoints.checked(kind, kind.update_schema, endpoints.patched(kind, current, patch), existing=current)
        return endpoints.with_identity(friendly, kind, namespace, name)

    endpoints.write(kind, namespace, name, resource_version or None, build, wanted=None)


def delete(kind: Kind, namespace: str, name: str, *, uid: str | None) -> bool:
    """Request deletion (of exactly the object with ``uid`` when given); True while finalizers hold it."""
    try:
        _result, terminating = endpoints.delete(kind, namespace, name, uid=uid or None)
    except NotFound:
        raise Problem(404, f'{kind.title} "{namespace}/{name}" is already gone') from None
    except Conflict:
        raise Problem(409, f'{kind.title} "{namespace}/{name}" was replaced by another object of the same name; reload') from None
    return terminating
