"""Writes with the objects a kind owns, undone on failure: :func:`create_with_owned` and :func:`replace_with_owned`.

Called by the application service (:meth:`backend.core.services.KindService.check_and_create` and
:meth:`~backend.core.services.KindService.check_and_replace`, once their checks passed). The CR is written first
(it is the object everything else is
owned by, and the write itself runs the API server's validation); then the kind's
:meth:`backend.core.kinds.base.Kind.after_write` writes what belongs to it (a Darkroom's credentials
Secret). If that fails, the CR write is undone — a created object is deleted (UID precondition),
an updated one gets its previous spec back — and the original error is raised. A create cut short
so early that even the undo failed is completed by the next create of that name. API server
errors become domain errors here (:mod:`backend.core.errors`): validation causes on friendly field paths and a
missing namespace (Invalid), an existing name (Conflict). Conflicts of the cluster (stale resourceVersion)
propagate: the caller decides between a Conflict, a PreconditionFailed and a retry.

``dry_run`` (``?dryRun=All``): every write is sent with ``dryRun=All`` — the API server validates,
defaults and admits it, and stores nothing — and :meth:`backend.core.kinds.base.Kind.after_dry_run` checks
the kind's own writes the same way; there is nothing to undo.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from backend.core import errors
from backend.core.conversions import invalid_errors
from backend.core.kinds.base import Kind
from cluster import AlreadyExists, ClusterError, Invalid, NotFound, thaw
from cluster.acting import ActingClient

log = logging.getLogger(__name__)


def failure_of(kind: Kind, error: ClusterError, *, namespace: str, name: str) -> errors.Failure | None:
    """The domain error a write error means for the client (None: let the generic mapping of cluster errors handle it)."""
    if isinstance(error, Invalid):
        return errors.Invalid(
            invalid_errors(error, renames=kind.renames), f"the API server rejected the {kind.title}: fix the fields listed"
        )
    if isinstance(error, AlreadyExists):
        return errors.Conflict(f'{kind.title} "{namespace}/{name}" already exists')
    if isinstance(error, NotFound) and (error.body.get("details") or {}).get("kind") == "namespaces":
        return errors.Invalid({"namespace": [f'namespace "{namespace}" does not exist']})
    return None


def _write(
    kind: Kind,
    client: ActingClient,
    friendly: Mapping[str, Any],
    *,
    write: Callable[[], dict[str, Any]],
    previous: Mapping[str, Any] | None,
    undo: Callable[[Mapping[str, Any]], Any],
    dry_run: bool = False,
) -> dict[str, Any]:
    """``write()`` the object, then the kind's own extra writes; on their failure ``undo(written)`` and re-raise."""
    namespace, name = friendly["namespace"], friendly["name"]
    try:
        written = write()
    except ClusterError as e:
        failure = failure_of(kind, e, namespace=namespace, name=name)
        if failure is None:
            raise
        raise failure from e
    if dry_run:
        return dict(kind.after_dry_run(client, friendly, written, previous=previous))
    try:
        written = dict(kind.after_write(client, friendly, written, previous=previous))
    except Exception:
        try:
            undo(written)
        except ClusterError as failed:
            log.error("could not undo the write of %s %s/%s after a failure: %s", kind.title, namespace, name, failed.message)
        raise
    return written


def create_with_owned(kind: Kind, client: ActingClient, friendly: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
    """Create the object (and what belongs to it); the server's answer. Undo: delete it (by UID).

    If the name is taken by a create that was cut short (the API server went away between the object
    and what belongs to it, so even the undo failed: :meth:`Kind.resumable`), this create completes
    it instead of answering 409 — a client's retry succeeds.
    """
    try:
        return _write(
            kind,
            client,
            friendly,
            write=lambda: client.create(
                kind.resource, kind.new_object(friendly, client=client), namespace=friendly["namespace"], dry_run=dry_run
            ),
            previous=None,
            undo=lambda written: client.delete(
                kind.resource, friendly["name"], namespace=friendly["namespace"], uid=written["metadata"]["uid"]
            ),
            dry_run=dry_run,
        )
    except errors.Failure as failure:
        if not isinstance(failure.__cause__, AlreadyExists):
            raise
        try:  # the server just said it exists: ask it, the cache may not have seen the object yet
            existing = client.get(kind.resource, friendly["name"], namespace=friendly["namespace"], fresh=True)
        except NotFound:
            raise failure from None
        if not kind.resumable(existing):
            raise
        log.info("completing the cut-short create of %s %s/%s", kind.title, friendly["namespace"], friendly["name"])
        return replace_with_owned(
            kind, client, friendly, existing=existing, resource_version=existing["metadata"]["resourceVersion"], dry_run=dry_run
        )


def replace_with_owned(
    kind: Kind,
    client: ActingClient,
    friendly: Mapping[str, Any],
    *,
    existing: Mapping[str, Any],
    resource_version: str,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Replace the spec of ``existing`` (and what belongs to it) at ``resource_version``; the server's answer.

    ``friendly`` carries the name and namespace of ``existing``. Undo: put the previous object back.
    """
    body = kind.replaced_object(friendly, existing=existing, resource_version=resource_version)

    def restore(written: Mapping[str, Any]) -> Any:
        previous: dict[str, Any] = thaw(existing)
        previous.pop("status", None)
        previous["metadata"]["resourceVersion"] = written["metadata"]["resourceVersion"]
        return client.update(kind.resource, previous)

    return _write(
        kind,
        client,
        friendly,
        write=lambda: client.update(kind.resource, body, dry_run=dry_run),
        previous=existing,
        undo=restore,
        dry_run=dry_run,
    )
