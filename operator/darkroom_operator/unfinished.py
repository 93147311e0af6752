"""Creates the API never finished: removed, so that a create either completes or leaves nothing.

The API makes an S3 Darkroom (or a Postgresql with a given password) in two writes: the object, carrying an
*unfinished mark* (the annotation :data:`kinds.darkrooms.CREDENTIALS_PENDING_ANNOTATION` /
:data:`kinds.postgresqls.PASSWORD_PENDING_ANNOTATION`, whose value is a random token of that attempt), then the
Secret that belongs to it, then it clears the mark. When a write fails it deletes the object again; when the API
server went away between the writes, even that delete fails, and the object stays marked. A client's retry of the
same request takes the object over (it writes a new token: :func:`backend.core.writing.create_with_owned`) and
finishes it. Without a retry, this module removes it.

:meth:`Unfinished.check` is called by the Darkroom and Postgresql reconcilers on every reconcile. The grace period
(``OperatorSettings.unfinished_create_grace_s``) is counted on this reconciler's own clock from when it first saw
the object with that token — never by comparing another machine's clock — so clock skew cannot shorten it, and a
retry's new token starts it again. When it has passed, the object is deleted with preconditions on its UID and
on the resourceVersion the decision was made on: if a retry wrote the object in between (a new resourceVersion),
the server refuses the delete (409) and the next reconcile sees the new token. A Warning Event
``UnfinishedCreateRemoved`` says why the object went (it stays listable after the object is gone).

A restart of the reconciler starts every grace period again (the sightings are in memory): removal is only ever
later, never earlier. A user who sets the mark by hand on an object asks for this: the annotation is ours.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from cluster import ClusterError, Conflict, NotFound, Resource
from darkroom_operator.runtime.reconciling import Context

log = logging.getLogger(__name__)

REMOVED_REASON = "UnfinishedCreateRemoved"


class Unfinished:
    """The sightings of marked objects of one kind (``resource``), and their removal once the grace period passed."""

    def __init__(self, context: Context, *, resource: Resource, mark: str, what: str) -> None:
        self.context = context
        self.resource = resource
        self.mark = mark
        self.what = what  # what the API had still to write, for the Event: "its S3 credentials Secret"
        self._first_seen: dict[tuple[str, str], datetime] = {}
        self._lock = threading.Lock()

    def check(self, obj: Mapping[str, Any]) -> float | None:
        """None: ``obj`` carries no mark. A positive number: the seconds left before it is removed (reconcile it as
        usual, and again then). 0: its time is up and it was removed (or it changed meanwhile, which brings a
        reconcile of its own): nothing more to do with this version of it."""
        meta = obj["metadata"]
        token = (meta.get("annotations") or {}).get(self.mark)
        uid = str(meta.get("uid") or "")
        if token is None:
            self._forget(uid)
            return None
        now = self.context.now()
        with self._lock:
            first = self._first_seen.setdefault((uid, str(token)), now)
            for key in [k for k in self._first_seen if k[0] == uid and k[1] != str(token)]:
                del self._first_seen[key]  # a retry's new token: its own grace period
        left = self.context.settings.unfinished_create_grace_s - (now - first).total_seconds()
        if left > 0:
            return left
        self._remove(obj)
        return 0.0

    def forget(self, obj: Mapping[str, Any]) -> None:
        """``obj`` is gone or being deleted: drop its sightings."""
        self._forget(str(obj["metadata"].get("uid") or ""))

    def _forget(self, uid: str) -> None:
        with self._lock:
            for key in [k for k in self._first_seen if k[0] == uid]:
                del self._first_seen[key]

    def _remove(self, obj: Mapping[str, Any]) -> None:
        meta = obj["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        grace = self.context.settings.unfinished_create_grace_s
        try:
            self.context.client.delete(self.resource, name, namespace=namespace, uid=meta["uid"], resource_version=meta["resourceVersion"])
        except (NotFound, Conflict):
            log.info("not removing %s %s/%s: it changed or went meanwhile", self.resource.kind, namespace, name)
            return  # a retry took it over (new resourceVersion), or it is gone: the next reconcile sees which
        self._forget(str(meta["uid"]))
        log.warning("removed the unfinished create of %s %s/%s", self.resource.kind, namespace, name)
        message = (
            f"removed: the create of this {self.resource.kind} was cut short before the API wrote {self.what}, "
            f"and no retry finished it within {grace:g} s; create it again"
        )
        try:
            self.context.recorder.event(obj, type_="Warning", reason=REMOVED_REASON, message=message)
        except ClusterError:
            log.warning("could not record event %s on %s %s/%s", REMOVED_REASON, self.resource.kind, namespace, name)
