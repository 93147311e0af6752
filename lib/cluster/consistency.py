"""Read-your-writes: what a client has written, and waiting until its cache has caught up.

:class:`Expectations` is owned by one :class:`cluster.clients.CachedClient`. Each successful write
records, per object, the resourceVersion the server returned (or, for a completed delete, that the
object with that UID must be gone). A read through the same client first waits — on the informer's
store condition — until the cache holds that version or newer (or has applied a later
resourceVersion anywhere in the collection), so once a write returns, reads never go back in time.
A satisfied expectation is dropped; one the cache does not reach within the timeout raises
:class:`cluster.errors.Unavailable` (the watch is down) and is dropped too.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cluster import errors
from cluster.bodies import object_key, version_at_least
from cluster.informers import Informer
from cluster.resources import Resource
from cluster.selectors import parse
from cluster.stores import Store

_PRUNE_ABOVE = 256


@dataclass(frozen=True)
class Expectation:
    """The cache must show ``version`` (or newer) of this object — or, when ``gone``, not this ``uid``."""

    version: str
    uid: str
    gone: bool = False

    def met(self, store: Store, key: str) -> bool:
        obj = store.get(key)
        if self.gone:
            # without a uid (a Status that did not name it), only the key's absence shows the delete
            return obj is None or (bool(self.uid) and obj["metadata"].get("uid") != self.uid)
        if obj is not None and version_at_least(str(obj["metadata"].get("resourceVersion", "")), self.version):
            return True
        return bool(store.progress) and version_at_least(store.progress, self.version)


class Expectations:
    """Per-resource expectations of one client. Thread-safe."""

    def __init__(self, *, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pending: dict[Resource, dict[str, Expectation]] = {}

    def record(self, informer: Informer | None, written: Mapping[str, Any], *, deleted: bool = False) -> None:
        """Remember a write's result (the object the server returned) if the informer will see it."""
        if informer is None or not isinstance(written.get("metadata"), Mapping):
            return
        meta = written["metadata"]
        if not meta.get("name"):
            return
        if informer.namespace is not None and meta.get("namespace") != informer.namespace:
            return
        still_there = bool(meta.get("deletionTimestamp")) and bool(meta.get("finalizers"))
        gone = deleted and not still_there
        # A delete's answer may be a Status without the object's labels: its absence is expected whatever the
        # informer's selector (met at once when the informer never held it).
        if not gone and informer.label_selector and not parse(informer.label_selector).matches(meta.get("labels")):
            return
        expectation = Expectation(str(meta.get("resourceVersion", "")), str(meta.get("uid", "")), gone=gone)
        if not gone and not expectation.version:
            return
        with self._lock:
            pending = self._pending.setdefault(informer.resource, {})
            pending[object_key(written)] = expectation
            if len(pending) > _PRUNE_ABOVE:
                # A client that writes much and reads little: drop what the cache has already reached.
                for k, e in list(pending.items()):
                    if e.met(informer.store, k):
                        del pending[k]

    def settle(self, informer: Informer, *, key: str | None = None, namespace: str | None = None) -> None:
        """Wait until the expectations a read depends on are met: one key, a namespace, or all."""
        with self._lock:
            pending = self._pending.get(informer.resource)
            if not pending:
                return
            if key is not None:
                wanted = {key: pending[key]} if key in pending else {}
            elif namespace is not None:
                prefix = namespace + "/"
                wanted = {k: e for k, e in pending.items() if k.startswith(prefix)}
            else:
                wanted = dict(pending)
        if not wanted:
            return
        store = informer.store
        met = store.wait(lambda: all(e.met(store, k) for k, e in wanted.items()), self.timeout_s)
        with self._lock:
            pending = self._pending.get(informer.resource, {})
            for k, e in wanted.items():
                if pending.get(k) is e:
                    del pending[k]
        if not met:
            raise errors.Unavailable(
                f"the cache of {informer.resource} did not catch up with this client's writes within {self.timeout_s}s (is the watch down?)"
            )
