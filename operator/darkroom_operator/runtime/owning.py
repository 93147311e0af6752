"""Children a primary object owns: read them from the cache, tell ours from anyone else's, apply, withdraw.

Shared by every reconciler that creates children (:mod:`darkroom_operator.darkrooms`,
:mod:`darkroom_operator.postgresqls`), so "is this ours?", "is it up to date?" and "how do we write
it?" are answered once:

- **ours** means a controller ownerReference to the primary's UID. A name taken by anything else —
  another controller's object, an orphan, an object someone created by hand — is a
  :class:`ChildConflict`: never modified, adopted or deleted. Children carry our managed-by label,
  which the owned informers select on; everyone else's objects of those kinds are known by their metadata alone
  (a metadata-only informer selecting the label's absence, :func:`darkroom_operator.runtime.controllers.declare_informers`),
  so a name missing from both caches is free without asking the server. Like the dry-run create this replaced (a
  request per child of every new primary), that is a check before the write: an object made by someone else in the
  moment before our first apply (before its watch event reaches us) is taken over. Without that informer (a caller
  outside the runtime) a dry-run create asks the server whether the name is free (409 if not), and a taken name is
  then looked up on the server (a list by name: ``list`` permission) so our own child that the cache has not caught
  up with is not mistaken for someone else's.
- **applying** is server-side apply of a :func:`~darkroom_operator.runtime.comparing.stamp` ed body, skipped
  when the live object is :func:`~darkroom_operator.runtime.comparing.up_to_date` (a converged resync writes
  nothing). When another field manager's list entries make the merge invalid or undroppable (an
  edited Service port), the child is replaced with our fields laid over it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from cluster import AlreadyExists, CachedClient, ClusterError, Invalid, NotFound, Resource
from darkroom_operator.runtime.comparing import differences, overlay, up_to_date

log = logging.getLogger(__name__)


class ChildConflict(ClusterError):
    """A child's name is taken by an object another controller owns; we never take it over."""


def controller_uid(obj: Mapping[str, Any] | None) -> str | None:
    refs = (obj or {}).get("metadata", {}).get("ownerReferences") or ()
    return next((ref.get("uid") for ref in refs if ref.get("controller")), None)


def owner_reference(owner: Mapping[str, Any], primary: Resource) -> dict[str, Any]:
    """A controller ownerReference to ``owner`` of kind ``primary`` (blockOwnerDeletion: foreground deletion waits for the child)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner.get("apiVersion") or primary.api_version,
        "kind": owner.get("kind") or primary.kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


class Children:
    """The children of one reconciler's primary objects, written as ``field_manager``."""

    def __init__(self, client: CachedClient, *, controller: str, owner_kind: str, field_manager: str) -> None:
        self.client = client
        self.controller = controller
        self.owner_kind = owner_kind
        self.field_manager = field_manager

    def cached(self, resource: Resource, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The cached object (whoever owns it), or None — a server round trip only without an informer."""
        try:
            return self.client.peek(resource, name, namespace=namespace)
        except KeyError:  # no informer for this kind (a caller outside the runtime): ask the server
            try:
                return self.client.get(resource, name, namespace=namespace)
            except NotFound:
                return None

    def controlled(self, resource: Resource, owner: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
        """The cached child ``name`` if ``owner`` controls it, else None (for status; never raises a conflict)."""
        live = self.cached(resource, owner["metadata"]["namespace"], name)
        return live if controller_uid(live) == owner["metadata"]["uid"] else None

    def ours(self, resource: Resource, owner: Mapping[str, Any], desired: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Our child named like ``desired``, or None when the name is free; :class:`ChildConflict` when taken."""
        name, namespace = desired["metadata"]["name"], owner["metadata"]["namespace"]
        live = self.cached(resource, namespace, name)
        if live is None:
            try:
                # Not labelled ours: someone else's, or our child whose label was taken off (our apply puts it back).
                live = self.client.peek_metadata(resource, name, namespace=namespace)
            except KeyError:  # no metadata-only informer (a caller outside the runtime): ask the server
                return self._ask_server(resource, owner, desired)
            if live is None:
                return None
        if controller_uid(live) != owner["metadata"]["uid"]:
            raise self.conflict(resource, name, live)
        return live

    def _ask_server(self, resource: Resource, owner: Mapping[str, Any], desired: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """:meth:`ours` for a name missing from the cache, without a cache of the others' names: a dry-run create."""
        name, namespace = desired["metadata"]["name"], owner["metadata"]["namespace"]
        try:
            self.client.create(resource, desired, dry_run=True)
        except AlreadyExists as e:
            # Taken — by someone else, or by our own child the cache has not seen yet (a watch that
            # is catching up after an outage): ask the server before calling it a conflict.
            live = self.client.lookup(resource, name, namespace=namespace)
            if live is None or controller_uid(live) != owner["metadata"]["uid"]:
                raise self.conflict(resource, name, live) from e
            return live
        return None

    def apply(
        self, resource: Resource, owner: Mapping[str, Any], desired: Mapping[str, Any], live: Mapping[str, Any] | None
    ) -> Mapping[str, Any]:
        """Make our child match ``desired`` (a stamped body); ``live`` is it as :meth:`ours` found it."""
        if live is not None and up_to_date(live, desired):
            return live
        meta = owner["metadata"]
        where = {"controller": self.controller, "key": f"{meta['namespace']}/{meta['name']}", "kind": resource.kind}
        # What changed is for the log line only: not worked out when INFO is off.
        changed: list[str] = []
        if log.isEnabledFor(logging.INFO):
            changed = differences(live, desired) if live is not None else ["(not in cache)"]
        log.info("applying child", extra={**where, "changed": changed[:10]})
        try:
            applied = self.client.apply(resource, desired, field_manager=self.field_manager, force=True)
        except Invalid as e:
            existing = self._diagnose(resource, owner, desired, e)
            # Ours, but the merge of our fields with another manager's list entries is invalid (an edited
            # Service port keeps its name: two "http" ports). kube-apiserver rejects the whole apply, so
            # repair by replacing, as below.
            log.info("replacing child", extra={**where, "changed": changed[:10]})
            applied = self.client.update(resource, overlay(existing, desired), field_manager=self.field_manager)
        if not up_to_date(applied, desired):
            # Entries another field manager owns in our lists (an edited port): apply cannot drop them; replace.
            log.info("replacing child", extra={**where, "changed": differences(applied, desired)[:10]})
            applied = self.client.update(resource, overlay(applied, desired), field_manager=self.field_manager)
        return applied

    def withdraw(self, resource: Resource, live: Mapping[str, Any] | None) -> None:
        """Delete our child (exactly that object: UID precondition) that must not exist any more."""
        if live is None:
            return
        meta = live["metadata"]
        log.info(
            "deleting child", extra={"controller": self.controller, "key": f"{meta['namespace']}/{meta['name']}", "kind": resource.kind}
        )
        with contextlib.suppress(NotFound):
            self.client.delete(resource, meta["name"], namespace=meta["namespace"], uid=meta["uid"])

    def _diagnose(self, resource: Resource, owner: Mapping[str, Any], desired: Mapping[str, Any], error: Invalid) -> Mapping[str, Any]:
        """After a rejected apply: our child (to be repaired by replacing it), else the original error."""
        live = self.controlled(resource, owner, desired["metadata"]["name"])
        if live is None:
            raise error
        return live

    def conflict(self, resource: Resource, name: str, existing: Mapping[str, Any] | None) -> ChildConflict:
        """``existing``: the object, when the cache has it (a dry-run create only tells that the name is taken)."""
        owner = controller_uid(existing) if existing is not None else None
        whose = f"controlled by another owner (uid {owner})" if owner else f"not controlled by this {self.owner_kind}"
        return ChildConflict(
            f'{resource.kind} "{name}" already exists and is {whose}: it is left alone; '
            f"delete or rename it, or rename the {self.owner_kind}",
            status=409,
            reason="Conflict",
        )
