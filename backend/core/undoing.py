"""Finishing the undo of a create the API server cut short, once the server is back: :func:`undo_later`.

A create with owned objects (:func:`backend.core.writing.create_with_owned`) writes the object first, marked as
unfinished (:meth:`backend.core.kinds.base.Kind.resumable`: a Darkroom's ``credentials-pending`` annotation), then
what it owns, then clears the mark. When a later step fails, the object is deleted again; when the server went away
so that even that delete failed, the client got a 503 and the object stayed, half made. **Decision:** the outcome
is all or nothing from the user's view, and nothing wins unless the client retries first:

- the client's retry of the same create completes the object (:func:`~backend.core.writing.create_with_owned`);
- otherwise this module keeps trying the delete in a background thread, as the same person, until the server
  answers (at most :data:`PATIENCE_S`): the object goes, and with it, through its ownerReference, anything of it
  that was written;
- the two never undo each other: each delete is preceded by a fresh read and is sent with the UID and the
  resourceVersion read, only while the object still carries the unfinished mark. A retry that completed it in
  between changed the version: the delete is refused (409), the next read finds it finished, and nothing more is
  done.

Only a process that dies as well (the API restarted before the server came back) leaves the unfinished object to
the client's retry. This module knows no HTTP; its thread is a daemon and never holds a request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from backend.core.kinds.base import Kind
from cluster import ClusterError, Conflict, NotFound
from cluster.acting import ActingClient

log = logging.getLogger(__name__)

PATIENCE_S = 300.0
FIRST_WAIT_S, LONGEST_WAIT_S = 0.2, 5.0
_threads: set[threading.Thread] = set()


def running() -> list[threading.Thread]:
    """The undos still trying (to wait for them: a test, a shutdown)."""
    return [thread for thread in list(_threads) if thread.is_alive()]


def undo_later(kind: Kind, client: ActingClient, written: Mapping[str, Any]) -> threading.Thread:
    """Delete ``written`` (a create cut short) once the server answers, unless it was finished meanwhile."""
    meta = written["metadata"]
    thread = threading.Thread(
        target=_undo,
        args=(kind, client, meta["namespace"], meta["name"], meta["uid"]),
        name=f"undo-{kind.plural}-{meta['namespace']}-{meta['name']}",
        daemon=True,
    )
    _threads.add(thread)
    thread.start()
    return thread


def _undo(kind: Kind, client: ActingClient, namespace: str, name: str, uid: str) -> None:
    try:
        _try_undo(kind, client, namespace, name, uid)
    finally:
        _threads.discard(threading.current_thread())


def _try_undo(kind: Kind, client: ActingClient, namespace: str, name: str, uid: str) -> None:
    deadline, wait = time.monotonic() + PATIENCE_S, FIRST_WAIT_S
    while time.monotonic() < deadline:
        try:
            current = client.get(kind.resource, name, namespace=namespace, fresh=True)
            meta = current["metadata"]
            if meta["uid"] != uid or not kind.resumable(current):
                return  # another object of that name, or a retry finished this one: nothing to undo
            client.delete(kind.resource, name, namespace=namespace, uid=uid, resource_version=meta["resourceVersion"])
            log.info("undid the create of %s %s/%s the API server had cut short", kind.title, namespace, name)
            return
        except NotFound:
            return
        except Conflict:
            continue  # it changed since the read (a retry, the reconciler's status): read it again
        except ClusterError as e:
            if not e.retryable and e.status != 0:
                log.error("could not undo the cut-short create of %s %s/%s: %s", kind.title, namespace, name, e.message)
                return
        time.sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT_S)
    log.error("gave up undoing the cut-short create of %s %s/%s: the API server did not answer", kind.title, namespace, name)
