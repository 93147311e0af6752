"""The cache: the set of informers a process runs, started, synced and stopped together.

Built by the entry points (backend app factory, reconciler main) from a
:class:`cluster.requesting.Transport` and :class:`cluster.settings.InformerSettings`; handed to
:class:`cluster.clients.CachedClient` for reads and to the reconciler for event handlers. Like
controller-runtime's cache, but informers are declared up front (no lazy starts behind a read). Beside the one
informer per resource, a resource may have a metadata-only informer (:meth:`Cache.add` with ``metadata_only``, read
through :meth:`Cache.metadata_informer`), which selects differently: the reconciler watches its own children whole and
everyone else's by name.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from cluster.indexers import IndexFunction
from cluster.informers import Informer, InformerStats, Transform
from cluster.orders import Order
from cluster.requesting import Transport
from cluster.resources import Resource
from cluster.settings import InformerSettings


class Cache:
    """Informers by resource. Add them with :meth:`add`, then :meth:`start`; :meth:`stop` joins every thread."""

    def __init__(self, *, transport: Transport, settings: InformerSettings) -> None:
        self.transport = transport
        self.settings = settings
        self._informers: dict[Resource, Informer] = {}
        self._metadata: dict[Resource, Informer] = {}  # the metadata-only informers
        self._lock = threading.Lock()
        self._started = False

    def add(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        indexers: Mapping[str, IndexFunction] | None = None,
        transform: Transform | None = None,
        packed: bool = False,
        orders: Iterable[Order] = (),
        metadata_only: bool = False,
    ) -> Informer:
        """Declare an informer (at most one per resource, and one metadata-only); started now if the cache already runs.
        ``transform``: what its store keeps of each object (:data:`cluster.informers.Transform`); ``packed``,
        ``orders``: how (:class:`cluster.stores.Store`)."""
        with self._lock:
            declared = self._metadata if metadata_only else self._informers
            if resource in declared:
                raise ValueError(f"the cache already has {'a metadata-only' if metadata_only else 'an'} informer for {resource}")
            informer = Informer(
                transport=self.transport,
                resource=resource,
                settings=self.settings,
                namespace=namespace,
                label_selector=label_selector,
                indexers=indexers,
                transform=transform,
                packed=packed,
                orders=orders,
                metadata_only=metadata_only,
            )
            declared[resource] = informer
            if self._started:
                informer.start()
            return informer

    def informer(self, resource: Resource) -> Informer | None:
        return self._informers.get(resource)

    def metadata_informer(self, resource: Resource) -> Informer | None:
        return self._metadata.get(resource)

    def _all(self) -> list[Informer]:
        with self._lock:
            return [*self._informers.values(), *self._metadata.values()]

    def __contains__(self, resource: object) -> bool:
        return resource in self._informers

    def start(self) -> Cache:
        with self._lock:
            self._started = True
            for informer in [*self._informers.values(), *self._metadata.values()]:
                informer.start()
        return self

    def wait_for_sync(self, timeout_s: float) -> bool:
        """True once every informer has listed; False if ``timeout_s`` passes first."""
        deadline = time.monotonic() + timeout_s
        return all(informer.wait_for_sync(max(0.0, deadline - time.monotonic())) for informer in self._all())

    @property
    def has_synced(self) -> bool:
        return all(informer.has_synced for informer in self._all())

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop every informer in parallel-ish (interrupt all, then join). Idempotent."""
        informers = self._all()
        for informer in informers:
            informer.request_stop()
        for informer in informers:
            informer.stop(timeout_s)

    def stats(self) -> list[InformerStats]:
        return [informer.stats() for informer in self._all()]
