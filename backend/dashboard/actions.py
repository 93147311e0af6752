"""The dashboard's writes: a thin adapter from a submitted form's payload to the kind's application service.

Called by :mod:`.editing` with the friendly payload a form became (:mod:`.forms.values`). Nothing is
validated or written differently from ``POST``/``PUT``/``PATCH``/``DELETE`` on the JSON API: the same
:class:`backend.core.services.KindService` — its schemas and checks (:meth:`~backend.core.services.KindService.checked`:
every problem at once), :meth:`~backend.core.services.KindService.check_and_create` (served namespace, the kind's
own checks, then :func:`backend.core.writing.create_with_owned`: Secrets of S3 Darkrooms, undo on failure),
:meth:`~backend.core.services.KindService.check_and_replace` (conflicts: a form carries the generation it was
rendered from, so a stale form gets 409 instead of overwriting; ``If-Match`` plays no part) and
:meth:`~backend.core.services.KindService.delete`. Failures are the core's domain errors (:mod:`backend.core.errors`) —
Invalid with ``errors`` by friendly field path, Conflict on a stale form or an existing name, NotFound — for the page
to show inline (:mod:`.editing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.core import errors
from backend.core.services import KindService
from cluster import Conflict, NotFound


def create_from_form(service: KindService, payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """Validate a new object's payload and create it; the object the server stored."""
    friendly = service.checked(service.kind.create_schema, dict(payload), existing=None)
    return service.check_and_create(friendly, server="dashboard")


def replace_from_form(service: KindService, namespace: str, name: str, payload: Mapping[str, Any], *, generation: str | None) -> None:
    """Validate and replace, provided the spec is still at ``generation`` (the one the form showed; 409 otherwise).

    The generation, not the resourceVersion: the reconciler's status updates change the latter all
    the time, and a form is only stale when someone else changed what it edits. The check runs on
    the very object each write attempt is conditioned on (:meth:`backend.core.services.KindService.check_and_replace`
    retries a resourceVersion conflict on the fresh object), so a concurrent edit is never overwritten.
    """

    def build(current: Mapping[str, Any]) -> dict[str, Any]:
        friendly = service.checked(service.kind.update_schema, dict(payload), existing=current)  # every problem at once
        stored = current["metadata"].get("generation")
        if generation and stored is not None and str(stored) != generation:
            raise errors.Conflict(f'{service.title} "{namespace}/{name}" was changed by someone else since the form was opened')
        return service.with_identity(friendly, namespace, name)

    service.check_and_replace(namespace, name, build, body_version=None, wanted=None)


def change(
    service: KindService,
    namespace: str,
    name: str,
    patch: Mapping[str, Any],
    *,
    resource_version: str | None = None,
    uid: str | None = None,
) -> None:
    """Apply a JSON merge patch of friendly fields (e.g. ``{"state": "Finished"}``), as ``PATCH`` does; with ``uid``, to
    exactly that object: one that replaced it under the same name is a Conflict, never changed (the write is conditioned
    on the very object whose uid was checked, :meth:`~backend.core.services.KindService.check_and_replace`)."""
    if uid is None:
        service.patch(namespace, name, patch, body_version=resource_version or None, wanted=None)
        return

    def build(current: Mapping[str, Any]) -> dict[str, Any]:
        if current["metadata"].get("uid") != uid:
            raise errors.Conflict(replaced(service, namespace, name))
        friendly = service.checked(service.kind.update_schema, service.patched(current, patch), existing=current)
        return service.with_identity(friendly, namespace, name)

    try:
        service.check_and_replace(namespace, name, build, body_version=resource_version or None, wanted=None, verb="patch")
    except errors.NotFound:
        raise errors.NotFound(gone(service, namespace, name)) from None


def gone(service: KindService, namespace: str, name: str) -> str:
    return f'{service.title} "{namespace}/{name}" is already gone'


def replaced(service: KindService, namespace: str, name: str) -> str:
    return f'{service.title} "{namespace}/{name}" was replaced by another object of the same name; reload'


def delete(service: KindService, namespace: str, name: str, *, uid: str | None) -> bool:
    """Request deletion (of exactly the object with ``uid`` when given); True while finalizers hold it."""
    try:
        _result, terminating = service.delete(namespace, name, uid=uid or None)
    except NotFound:
        raise errors.NotFound(gone(service, namespace, name)) from None
    except Conflict:
        raise errors.Conflict(replaced(service, namespace, name)) from None
    return terminating
