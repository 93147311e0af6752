"""Writes with the objects a kind owns, undone on failure: :func:`create_with_owned` and :func:`replace_with_owned`.

Called by the application service (:meth:`backend.core.services.KindService.check_and_create` and
:meth:`~backend.core.services.KindService.check_and_replace`, once their checks passed). The CR is written first
(it is the object everything else is
owned by, and the write itself runs the API server's validation); then the kind's
:meth:`backend.core.kinds.base.Kind.after_write` writes what belongs to it (a Darkroom's credentials
Secret). If that fails, the CR write is undone — a created object is deleted (UID precondition),
an updated one gets its previous spec back — and the original error is raised. A create cut short
so early that even the undo failed keeps its unfinished mark (:attr:`backend.core.kinds.base.Kind.unfinished_mark`):
the next create of that name completes it, and without one the reconciler removes it after a grace period
(``darkroom_operator.unfinished``) — all or nothing, as the client was told. API server
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
        try:
            return dict(kind.after_dry_run(client, friendly, written, previous=previous))
        except errors.Failure as failure:
            raise _amended(failure, _unchanged(kind, previous)) from failure.__cause__
    try:
        written = dict(kind.after_write(client, friendly, written, previous=previous))
    except Exception as failure:
        try:
            undo(written)
        except ClusterError as failed:
            log.error("could not undo the write of %s %s/%s after a failure: %s", kind.title, namespace, name, failed.message)
            if isinstance(failure, errors.Failure) and previous is None and kind.resumable(written):
                left = f"the {kind.title} was made but not finished, and the API server did not answer its removal: "
                if isinstance(failure, errors.Unavailable):
                    left += "send the same request again to finish it; otherwise the reconciler removes it after a grace period"
                else:
                    left += "the reconciler removes it after a grace period"
                raise _amended(failure, left) from failure.__cause__
            raise
        if isinstance(failure, errors.Failure):
            raise _amended(failure, _unchanged(kind, previous)) from failure.__cause__
        raise
    return written


def _unchanged(kind: Kind, previous: Mapping[str, Any] | None) -> str:
    """What a failed write leaves, once undone (or never stored: a dry run)."""
    return "nothing was created" if previous is None else f"the {kind.title} was left as it was"


def _amended(failure: errors.Failure, told: str) -> errors.Failure:
    """``failure`` with ``told`` added to its detail (what became of the object)."""
    failure.detail = f"{failure.detail}; {told}"
    failure.args = (failure.detail,)
    return failure


def create_with_owned(kind: Kind, client: ActingClient, friendly: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
    """Create the object (and what belongs to it); the server's answer. Undo: delete it (by UID).

    If the name is taken by a create that was cut short (the API server went away between the object
    and what belongs to it, so even the undo failed: :meth:`Kind.resumable`), this create takes it over and
    completes it instead of answering 409 — a client's retry succeeds: :func:`_take_over`.
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
            undo=lambda written: _delete(kind, client, written),
            dry_run=dry_run,
        )
    except errors.Failure as failure:
        if not isinstance(failure.__cause__, AlreadyExists):
            raise
        try:  # the server just said it exists: ask it, the cache may not have seen the object yet
            existing = client.get(kind.resource, friendly["name"], namespace=friendly["namespace"], fresh=True)
        except NotFound:
            raise failure from None
        if not kind.resumable(existing) or existing["metadata"].get("deletionTimestamp"):
            raise
        log.info("completing the cut-short create of %s %s/%s", kind.title, friendly["namespace"], friendly["name"])
        try:
            return _take_over(kind, client, friendly, existing=existing, dry_run=dry_run)
        except NotFound:  # removed meanwhile (the reconciler's grace period for it ran out): the name is free again
            return create_with_owned(kind, client, friendly, dry_run=dry_run)


def _take_over(
    kind: Kind, client: ActingClient, friendly: Mapping[str, Any], *, existing: Mapping[str, Any], dry_run: bool
) -> dict[str, Any]:
    """Complete the cut-short create ``existing`` with ``friendly``'s spec, as a create: the object is written at
    its resourceVersion with a new unfinished mark (the reconciler's removal of the old attempt, preconditioned on the
    old resourceVersion, is refused from then on, and the new mark has a grace period of its own), then what belongs
    to it; a failure deletes it (the create leaves nothing)."""
    body = kind.replaced_object(friendly, existing=existing, resource_version=existing["metadata"]["resourceVersion"])
    kind.mark_unfinished(body)
    return _write(
        kind,
        client,
        friendly,
        write=lambda: client.update(kind.resource, body, dry_run=dry_run),
        previous=None,
        undo=lambda written: _delete(kind, client, written),
        dry_run=dry_run,
    )


def _delete(kind: Kind, client: ActingClient, written: Mapping[str, Any]) -> Any:
    meta = written["metadata"]
    return client.delete(kind.resource, meta["name"], namespace=meta["namespace"], uid=meta["uid"])


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
