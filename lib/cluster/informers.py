"""The informer: a list+watch loop that keeps a :class:`cluster.stores.Store` current for one resource.

Created by :class:`cluster.caches.Cache` (or directly by tests and tools) with a
:class:`cluster.requesting.Transport`. One daemon thread per informer: a paginated list (a
consistent snapshot), then watches from the list's resourceVersion with ``allowWatchBookmarks``.
Each watch carries a server-side ``timeoutSeconds`` and a client-side read timeout: a watch silent that long is
opened again at once, without a warning (routine for a quiet resource: kube-apiserver sends Events no periodic
bookmarks), which also notices a connection that silently stopped delivering. A
watch that ends or breaks resumes from the last resourceVersion seen (events and bookmarks); 410
Gone (history compacted) triggers a relist, whose differences from the cache become add / update /
delete deltas, so nothing is lost and nothing phantom stays. A relist keeps the cached object of every
item whose resourceVersion did not change (after an API server restart, nearly all), so it holds one page
and the changed objects beside the cache, never a second copy of it. Failures back off exponentially with
jitter. Deltas go to handlers through a :class:`cluster.dispatching.Dispatcher`.

An informer may be given a ``transform`` (client-go's ``SetTransform``): it receives each object as parsed (without
``metadata.managedFields``) and returns what the store keeps — a process that draws only part of an object need not
hold the rest. Its handlers get the transformed objects (a change still reaches them when it touched only what the
transform drops: the object's resourceVersion moved). ``packed`` and ``orders`` are its store's
(:class:`cluster.stores.Store`): a process that reads few of many objects at a time keeps them as their JSON text.
A ``metadata_only`` informer (client-go's metadata informer) asks the server for each object's metadata alone
(``PartialObjectMetadata``) and keeps that: who holds which name, at a fraction of the objects' bytes.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cluster import errors
from cluster.bodies import FrozenDict, freeze_over, object_key, resource_version, share_labels, strip_managed_fields
from cluster.dispatching import Dispatcher, Handler
from cluster.indexers import IndexFunction
from cluster.orders import Order
from cluster.requesting import JSON, METADATA_LIST, METADATA_WATCH, Stream, Transport
from cluster.resources import Resource
from cluster.settings import InformerSettings
from cluster.stores import Store

log = logging.getLogger(__name__)

Transform = Callable[[dict[str, Any]], dict[str, Any]]
"""What a store keeps of an object: given the parsed object (mutable, ``managedFields`` gone), returns it trimmed."""


@dataclass(frozen=True)
class InformerStats:
    """Counters for metrics: ``seconds_since_last_event`` counts bookmarks too (None: nothing yet)."""

    resource: str
    objects: int
    synced: bool
    watch_restarts: int
    relists: int
    seconds_since_last_event: float | None


class Informer:
    """List+watch one resource (all namespaces or one, optionally label-filtered) into a store."""

    def __init__(
        self,
        *,
        transport: Transport,
        resource: Resource,
        settings: InformerSettings,
        namespace: str | None = None,
        label_selector: str | None = None,
        indexers: Mapping[str, IndexFunction] | None = None,
        transform: Transform | None = None,
        packed: bool = False,
        orders: Iterable[Order] = (),
        metadata_only: bool = False,
    ) -> None:
        self.transport = transport
        self.metadata_only = metadata_only
        self._transform = transform
        self.resource = resource
        self.settings = settings
        self.namespace = namespace
        self.label_selector = label_selector
        self.store = Store(index_functions=indexers, packed=packed, orders=orders)
        self._dispatcher = Dispatcher(name=f"informer-handlers-{self.name}")
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.name}", daemon=True)
        self._stream: Stream | None = None
        self._lock = threading.Lock()
        self._random = random.Random()
        self._version = ""
        self.watch_restarts = 0
        self.relists = 0
        self._last_event_at: float | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def add_handler(
        self,
        *,
        on_add: Callable[[FrozenDict], Any] | None = None,
        on_update: Callable[[FrozenDict, FrozenDict], Any] | None = None,
        on_delete: Callable[[FrozenDict], Any] | None = None,
        on_initial_add: Callable[[FrozenDict], Any] | None = None,
        replay: bool = True,
    ) -> None:
        """Subscribe to changes. Added after sync, the handler first gets every cached object as an add (``replay``
        False: only the changes from now on). The adds of that replay and of the first list go to ``on_initial_add``
        when given (:class:`~cluster.dispatching.Handler`)."""
        handler = Handler(on_add, on_update, on_delete, on_initial_add)
        with self.store.changed:
            self._dispatcher.add(handler, replay=self.store.list() if replay and self._synced.is_set() else ())

    def start(self) -> Informer:
        self._dispatcher.start()
        self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the threads to end and unblock a watch read; returns at once (see :meth:`stop`)."""
        self._stop.set()
        with self._lock:
            if self._stream is not None:
                self._stream.interrupt()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop watching and dispatching; joins both threads. Idempotent."""
        self.request_stop()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        self._dispatcher.stop(timeout_s)

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout_s: float) -> bool:
        return self._synced.wait(timeout_s)

    @property
    def name(self) -> str:
        """The resource, and whether only its metadata is watched: names the informer's threads and its stats."""
        return f"{self.resource} (metadata)" if self.metadata_only else str(self.resource)

    def stats(self) -> InformerStats:
        last = self._last_event_at
        return InformerStats(
            resource=self.name,
            objects=len(self.store),
            synced=self.has_synced,
            watch_restarts=self.watch_restarts,
            relists=self.relists,
            seconds_since_last_event=None if last is None else time.monotonic() - last,
        )

    # -- the loop ----------------------------------------------------------------------------

    def _run(self) -> None:
        backoff_s = self.settings.backoff_initial_s
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                    backoff_s = self.settings.backoff_initial_s
                if self._watch():
                    backoff_s = self.settings.backoff_initial_s
                self.watch_restarts += 1
                continue
            except errors.Gone:
                log.info("%s: resourceVersion %s is too old; relisting", self.resource, self._version)
                need_list = True
                self.watch_restarts += 1
                continue
            except errors.ClusterError as e:
                if self._stop.is_set():
                    return
                if "Too large resource version" in e.message:
                    need_list = True  # the server's history restarted below our version
                log.warning("%s: list/watch failed (%s); retrying in %.1fs", self.resource, e, backoff_s)
                if not need_list:
                    self.watch_restarts += 1
            except Exception:
                log.exception("%s: unexpected informer failure", self.resource)
            self._stop.wait(backoff_s * self._random.uniform(0.8, 1.2))
            backoff_s = min(backoff_s * 2, self.settings.backoff_max_s)

    def _selection(self) -> dict[str, str | int | bool | None]:
        return {"labelSelector": self.label_selector}

    def _list(self) -> None:
        objects: list[Any] = []  # as the store holds them (packed: texts, so the list is never held decoded)
        unchanged: list[str] = []  # a relist keeps what did not change: no second copy of the cache
        token = ""
        path = self.resource.path(namespace=self.namespace)
        while True:
            page = self.transport.request(
                "GET",
                path,
                query={**self._selection(), "limit": self.settings.page_size, "continue": token or None},
                accept=METADATA_LIST if self.metadata_only else JSON,
            )
            meta = page.get("metadata") or {}
            if not token:
                version = str(meta.get("resourceVersion", ""))
            for item in page.get("items") or ():
                key = object_key(item)
                if self.store.version(key) == resource_version(item):
                    unchanged.append(key)
                    continue
                # Items of built-in lists omit kind/apiVersion; the cache holds objects as a GET returns them.
                item.setdefault("apiVersion", self.resource.api_version)
                item.setdefault("kind", self.resource.kind)
                objects.append(self.store.hold(self._stored(item, None if self.store.packed else self.store.get(key))))
            token = str(meta.get("continue") or "")
            if self._stop.is_set():
                return  # never swap in half a list
            if not token:
                break
        if self._synced.is_set():
            self.relists += 1
        with self._lock:
            self._version = version
        # Under the store's lock: a handler added meanwhile (add_handler takes it) gets either these deltas or the
        # replay of the synced cache, never neither; with no handler yet there are none to keep.
        with self.store.changed:
            initial = not self._synced.is_set()
            deltas = self.store.replace(objects, version, unchanged=unchanged, report=self._dispatcher.has_handlers)
            del objects
            self._dispatcher.publish(deltas, initial=initial)
            self._synced.set()
        self._last_event_at = time.monotonic()

    def _stored(self, raw: dict[str, Any], previous: FrozenDict | None = None) -> FrozenDict:
        """The form the store keeps of an object parsed from the server; ``previous``: the cached version it replaces,
        whose unchanged parts it keeps (:func:`cluster.bodies.freeze_over`)."""
        if self.metadata_only:  # a server that answered with whole objects (the JSON fallback): their metadata
            raw = {"apiVersion": raw.get("apiVersion"), "kind": raw.get("kind"), "metadata": raw.get("metadata") or {}}
        obj = share_labels(strip_managed_fields(raw))
        return freeze_over(self._transform(obj) if self._transform is not None else obj, previous)

    def _watch(self) -> bool:
        """One watch request from the last version; True when it delivered anything."""
        timeout = int(self.settings.watch_timeout_s * self._random.uniform(1.0, 2.0))
        query = {
            **self._selection(),
            "watch": True,
            "allowWatchBookmarks": True,
            "resourceVersion": self._version,
            "timeoutSeconds": timeout,
        }
        path = self.resource.path(namespace=self.namespace)
        delivered = False
        accept = METADATA_WATCH if self.metadata_only else JSON
        with self.transport.stream(path, query=query, read_timeout_s=self.settings.read_timeout_s, accept=accept) as stream:
            with self._lock:
                if self._stop.is_set():
                    return False
                self._stream = stream
            try:
                for event in stream:
                    if self._stop.is_set():
                        break
                    self._handle(event)
                    delivered = True
            finally:
                with self._lock:
                    self._stream = None
        if stream.went_silent:  # no failure: watched again at once, from the same version
            quiet_s = self.settings.read_timeout_s
            log.debug("%s: the watch sent nothing for %.0f s; watching again from %s", self.name, quiet_s, self._version)
        return delivered

    def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        raw = event.get("object") or {}
        self._last_event_at = time.monotonic()
        if kind == "ERROR":
            raise errors.from_status(int(raw.get("code") or 500), raw, what=f"watch {self.resource}")
        version = str((raw.get("metadata") or {}).get("resourceVersion", ""))
        if kind == "BOOKMARK":
            self.store.advance(version)
        elif kind in ("ADDED", "MODIFIED", "DELETED"):
            # A frozen store hands out its object as it is: a new version reuses its unchanged parts. (Packed, reading
            # it would decode it: no gain.)
            previous = self.store.get(object_key(raw)) if kind == "MODIFIED" and not self.store.packed else None
            delta = self.store.apply(kind, self._stored(raw, previous))
            if delta is not None:
                self._dispatcher.publish((delta,))
        else:
            log.warning("%s: ignoring watch event of type %r", self.resource, kind)
            return
        if version:
            self._version = version
