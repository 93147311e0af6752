"""The cached (delegating) client: reads from informers, writes straight to the API server.

Constructed by entry points from a :class:`cluster.requesting.Transport`, a started
:class:`cluster.caches.Cache` and :class:`cluster.settings.ClientSettings`; used by backend views and
reconcilers alike. Reads (:meth:`get`, :meth:`list`, :meth:`by_index`) return the cache's frozen
objects (see :mod:`cluster.bodies`; a list from a packed store decodes the items read: :mod:`cluster.packing`)
and, through :mod:`cluster.consistency`, always reflect this client's own completed writes. A resource the cache
has no informer for is read from the server. Writes return the server's answer as plain dicts. All failures are
:class:`cluster.errors.ClusterError`. :meth:`CachedClient.is_echo` tells a watch event that only reports this client's
own write (the reconciler does not reconcile again for it).

Every request this client sends goes out with the process's own credentials unless a ``credentials``
argument says otherwise (:mod:`cluster.identities`): requests made for a person pass theirs, through
:class:`cluster.acting.ActingClient`, which also authorizes the reads it serves from the shared cache.
"""

from __future__ import annotations

import builtins
import threading
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from cluster import errors
from cluster.bodies import FrozenDict, freeze, object_key, strip_managed_fields, version_at_least
from cluster.caches import Cache
from cluster.consistency import Expectations
from cluster.identities import OWN, Credentials
from cluster.indexers import NAMESPACE
from cluster.informers import Informer
from cluster.orders import KeyFilter, Order, arrange, chosen
from cluster.requesting import QueryValue, Transport
from cluster.resources import Resource
from cluster.selectors import parse
from cluster.settings import ClientSettings

PatchType = Literal["merge", "json", "strategic"]
PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON
ECHOES_MAX = 65_536  # objects whose writes :meth:`CachedClient.is_echo` remembers
# Writes of one object whose watch events have not come yet (a finalizer, then a status: two writes before the first
# event), remembered in order; past that, the oldest is forgotten and its event is not called an echo.
ECHOES_PER_OBJECT = 8
# How long is_echo waits for a write of the same object still under way (its event can come before its answer): past
# that, the event is not called an echo (a controller then acts on it: the safe side).
ECHO_WAIT_S = 1.0


def _name_and_namespace(resource: Resource, body: Mapping[str, Any], namespace: str | None) -> tuple[str, str | None]:
    meta = body.get("metadata") or {}
    name = meta.get("name")
    if not name:
        raise errors.Invalid("metadata.name is required", status=422, reason="Invalid")
    return str(name), (namespace or meta.get("namespace")) if resource.namespaced else None


def _key(namespace: str | None, name: str) -> str:
    """The cache key of ``name`` in ``namespace`` (:func:`cluster.bodies.object_key`'s form)."""
    return f"{namespace}/{name}" if namespace else name


class CachedClient:
    """Cache-backed reads with read-your-writes, direct writes. Thread-safe."""

    def __init__(self, *, transport: Transport, cache: Cache, settings: ClientSettings, echoes: bool = False) -> None:
        """``echoes``: remember what each write returned, for :meth:`is_echo` (a controller's client; not the API's, which
        never asks)."""
        self.transport = transport
        self._remembers_echoes = echoes
        self.cache = cache
        self.settings = settings
        self._expectations = Expectations(timeout_s=settings.read_your_writes_timeout_s)
        # Echoes (is_echo): (resource, key) → the resourceVersions this client's writes of that cached object returned
        # whose watch events have not come yet, oldest first (the versions those events carry); and the writes under
        # way, by object. Bounded: a write whose event never came (a relist skipped it) ages out.
        self._echoes: dict[tuple[Resource, str], list[str]] = {}
        self._writing: Counter[tuple[Resource, str]] = Counter()
        self._echo_changed = threading.Condition()

    # -- reads ---------------------------------------------------------------------------------

    def _informer(self, resource: Resource, namespace: str | None) -> Informer | None:
        informer = self.cache.informer(resource)
        if informer is None or not informer.has_synced:
            return None
        if informer.namespace is not None and namespace != informer.namespace:
            return None  # the cache only holds one namespace; anything else comes from the server
        return informer

    def served_from_cache(self, resource: Resource, namespace: str | None) -> bool:
        """Whether reads of ``resource`` in ``namespace`` (None: all) come from the cache rather than the server: an
        informer holds every such object (not one filtered by a label selector)."""
        informer = self._informer(resource, namespace if resource.namespaced else None)
        return informer is not None and not informer.label_selector

    def get(
        self, resource: Resource, name: str, *, namespace: str | None = None, fresh: bool = False, credentials: Credentials = OWN
    ) -> FrozenDict:
        """One object; :class:`cluster.errors.NotFound` when absent.

        ``fresh``: from the API server, not the cache — when the server has just said the object exists
        (a create answered AlreadyExists) or a client named a version the cache may not have seen yet.
        """
        namespace = namespace if resource.namespaced else None
        informer = None if fresh else self._informer(resource, namespace)
        if informer is not None:
            key = f"{namespace}/{name}" if namespace else name
            self._expectations.settle(informer, key=key)
            obj = informer.store.get(key)
            if obj is not None:
                return obj
            if not informer.label_selector:
                raise errors.NotFound(f'{resource} "{name}" not found', status=404, reason="NotFound")
        # No informer (or one whose selector may have filtered this object out): ask the server.
        path = resource.path(namespace=namespace, name=name)
        fetched: FrozenDict = freeze(strip_managed_fields(self.transport.request("GET", path, credentials=credentials)))
        return fetched

    def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        credentials: Credentials = OWN,
        order: Order | None = None,
        name_contains: str = "",
        namespaces: Collection[str] | None = None,
        key_filter: KeyFilter | None = None,
    ) -> Sequence[FrozenDict]:
        """Objects of a namespace (None: all namespaces; ``namespaces``: only theirs), optionally label-selected and only
        those whose name contains ``name_contains`` and whose key ``key_filter`` keeps, sorted by namespace/name or in
        ``order`` (:mod:`cluster.orders`: the store keeps the order's rows; a list from the API server is filtered and
        sorted here)."""
        namespace = namespace if resource.namespaced else None
        selector = parse(label_selector)
        informer = self._informer(resource, namespace)
        if informer is None:
            query: dict[str, QueryValue] = {"labelSelector": label_selector if isinstance(label_selector, str) else (str(selector) or None)}
            page = self.transport.request("GET", resource.path(namespace=namespace), query=query, credentials=credentials)
            listed = [
                freeze(strip_managed_fields({"apiVersion": resource.api_version, "kind": resource.kind, **i}))
                for i in page.get("items") or ()
            ]
            if name_contains or namespaces is not None or key_filter is not None:
                keys = [object_key(obj) for obj in listed]
                wanted = set(chosen(keys, namespaces=namespaces, name_contains=name_contains, key_filter=key_filter))
                listed = [obj for obj in listed if object_key(obj) in wanted]
            return listed if order is None else arrange(listed, order)
        self._expectations.settle(informer, namespace=namespace)
        return informer.store.list(
            namespace=namespace, namespaces=namespaces, selector=selector, order=order, name_contains=name_contains, key_filter=key_filter
        )

    def lookup(self, resource: Resource, name: str, *, namespace: str | None = None, credentials: Credentials = OWN) -> FrozenDict | None:
        """The object named ``name`` as the API server has it now, or None — through a list with a
        ``metadata.name`` field selector, so it needs only the ``list`` permission (the reconciler has no
        ``get`` on the kinds it owns). For when the cache may lag behind the server."""
        namespace = namespace if resource.namespaced else None
        query: dict[str, QueryValue] = {"fieldSelector": f"metadata.name={name}"}
        page = self.transport.request("GET", resource.path(namespace=namespace), query=query, credentials=credentials)
        items = page.get("items") or ()
        return freeze(strip_managed_fields({"apiVersion": resource.api_version, "kind": resource.kind, **items[0]})) if items else None

    # -- consistency across clients ------------------------------------------------------------

    def written_version(self, resource: Resource) -> str | None:
        """The cache's resourceVersion for ``resource`` once it shows every write this client made (a
        token another process can wait for with :meth:`wait_for_version`); None without an informer."""
        informer = self.cache.informer(resource)
        if informer is None:
            return None
        self._expectations.settle(informer)
        return informer.store.progress or None

    def wait_for_version(self, resource: Resource, version: str, *, timeout_s: float) -> None:
        """Wait until the cache of ``resource`` has seen ``version`` (or a newer one); :class:`cluster.errors.Unavailable`
        when it does not within ``timeout_s``. No informer: nothing to wait for (reads go to the server)."""
        informer = self.cache.informer(resource)
        if informer is None:
            return
        store = informer.store
        if not store.wait(lambda: bool(store.progress) and version_at_least(store.progress, version), timeout_s):
            raise errors.Unavailable(f"the cache of {resource} did not reach resourceVersion {version} within {timeout_s}s")

    def peek(self, resource: Resource, name: str, *, namespace: str | None = None) -> FrozenDict | None:
        """The cached object or None: never a server round trip, even for a label-filtered informer.

        Read-your-writes is settled for this one key only (not for every pending write of the
        resource, as :meth:`by_index` must). ``KeyError`` when the cache has no informer for it.
        """
        informer = self.cache.informer(resource)
        if informer is None:
            raise KeyError(f"the cache has no informer for {resource}")
        namespace = namespace if resource.namespaced else None
        key = f"{namespace}/{name}" if namespace else name
        self._expectations.settle(informer, key=key)
        return informer.store.get(key)

    def peek_metadata(self, resource: Resource, name: str, *, namespace: str | None = None) -> FrozenDict | None:
        """The metadata of ``name`` as the cache's metadata-only informer of ``resource`` has it, or None: never a server
        round trip. ``KeyError`` when the cache has no such informer."""
        informer = self.cache.metadata_informer(resource)
        if informer is None:
            raise KeyError(f"the cache has no metadata-only informer for {resource}")
        namespace = namespace if resource.namespaced else None
        return informer.store.get(f"{namespace}/{name}" if namespace else name)

    def namespaces_holding(self, resource: Resource) -> builtins.list[str]:
        """The namespaces that have cached objects of ``resource`` (its store's namespace index), sorted."""
        informer = self.cache.informer(resource)
        if informer is None:
            raise KeyError(f"the cache has no informer for {resource}")
        return informer.store.index_values(NAMESPACE)

    def by_index(self, resource: Resource, index: str, value: str) -> Sequence[FrozenDict]:
        """Cached objects filed under ``value`` in the informer's index ``index`` (e.g. owner UID)."""
        informer = self.cache.informer(resource)
        if informer is None:
            raise KeyError(f"the cache has no informer for {resource}")
        self._expectations.settle(informer)
        return informer.store.by_index(index, value)

    def filed_keys(self, resource: Resource, index: str, value: str) -> builtins.list[str]:
        """The keys (``namespace/name``) of the cached objects filed under ``value`` in the informer's index ``index``."""
        informer = self.cache.informer(resource)
        if informer is None:
            raise KeyError(f"the cache has no informer for {resource}")
        self._expectations.settle(informer)
        return informer.store.filed_keys(index, value)

    # -- writes --------------------------------------------------------------------------------

    def _write(
        self,
        method: str,
        resource: Resource,
        path: str,
        body: Any,
        *,
        query: dict[str, QueryValue],
        content_type: str = "application/json",
        dry_run: bool = False,
        deleted: bool = False,
        credentials: Credentials = OWN,
        key: str | None = None,
    ) -> dict[str, Any]:
        """``key``: the written object's cache key when known before the answer (for :meth:`is_echo`)."""
        if dry_run:
            query["dryRun"] = "All"
        informer = None if dry_run else self.cache.informer(resource)
        echoed = (resource, key) if self._remembers_echoes and informer is not None and key and not deleted else None
        if echoed is not None:
            with self._echo_changed:
                self._writing[echoed] += 1
        result: dict[str, Any] | None = None
        try:
            result = self.transport.request(method, path, query=query, body=body, content_type=content_type, credentials=credentials)
        finally:
            if echoed is not None:
                self._written(echoed, result)
        if not dry_run:
            self._expectations.record(informer, result, deleted=deleted)
        return result

    def _written(self, echoed: tuple[Resource, str], result: Mapping[str, Any] | None) -> None:
        """A write of ``echoed`` is over: its answer's resourceVersion (None: it failed) is what its event will carry."""
        version = ((result or {}).get("metadata") or {}).get("resourceVersion")
        with self._echo_changed:
            self._writing[echoed] -= 1
            if not self._writing[echoed]:
                del self._writing[echoed]
            if version:
                versions = self._echoes.pop(echoed, None) or []
                versions.append(str(version))
                self._echoes[echoed] = versions[-ECHOES_PER_OBJECT:]  # re-inserted: the most recently written object is last
                if len(self._echoes) > ECHOES_MAX:
                    del self._echoes[next(iter(self._echoes))]
            self._echo_changed.notify_all()

    def is_echo(self, resource: Resource, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj``, from a watch event, is exactly what one of this client's writes of it returned (the same
        resourceVersion): the event of a change the writer already knows, which a controller need not act on again.

        Each write's echo is recognised once. Several writes of one object can be made before the first one's event
        comes; each is remembered (up to :data:`ECHOES_PER_OBJECT`). A watch reports one object's changes in order, so
        an echo also forgets the writes made before it whose events never came (a relist skipped them). A client made
        without ``echoes=True`` remembers no write. The event of a write can come before its answer: while a write of
        the same object is under way, this waits for it (up to :data:`ECHO_WAIT_S`)."""
        key = (resource, object_key(obj))
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version is None:
            return False
        with self._echo_changed:
            self._echo_changed.wait_for(lambda: version in self._echoes.get(key, ()) or key not in self._writing, ECHO_WAIT_S)
            versions = self._echoes.get(key)
            if versions is None or version not in versions:
                return False
            del versions[: versions.index(version) + 1]
            if not versions:
                del self._echoes[key]
            return True

    def create(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        credentials: Credentials = OWN,
    ) -> dict[str, Any]:
        meta = body.get("metadata") or {}
        ns = (namespace or meta.get("namespace")) if resource.namespaced else None
        if resource.namespaced and not ns:
            raise errors.Invalid("metadata.namespace is required", status=422, reason="Invalid")
        query: dict[str, QueryValue] = {"fieldManager": field_manager or self.settings.field_manager}
        key = _key(ns, meta["name"]) if meta.get("name") else None
        return self._write(
            "POST", resource, resource.path(namespace=ns), body, query=query, dry_run=dry_run, credentials=credentials, key=key
        )

    def update(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        credentials: Credentials = OWN,
    ) -> dict[str, Any]:
        """PUT the whole object (optimistic concurrency via ``metadata.resourceVersion``)."""
        name, ns = _name_and_namespace(resource, body, None)
        query: dict[str, QueryValue] = {"fieldManager": field_manager or self.settings.field_manager}
        path = resource.path(namespace=ns, name=name, subresource=subresource)
        return self._write("PUT", resource, path, body, query=query, dry_run=dry_run, credentials=credentials, key=_key(ns, name))

    def update_status(self, resource: Resource, body: Mapping[str, Any], *, field_manager: str | None = None) -> dict[str, Any]:
        return self.update(resource, body, subresource="status", field_manager=field_manager)

    def patch(
        self,
        resource: Resource,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        credentials: Credentials = OWN,
    ) -> dict[str, Any]:
        query: dict[str, QueryValue] = {"fieldManager": field_manager or self.settings.field_manager}
        ns = namespace if resource.namespaced else None
        path = resource.path(namespace=ns, name=name, subresource=subresource)
        content_type = PATCH_CONTENT_TYPES[patch_type]
        return self._write(
            "PATCH",
            resource,
            path,
            patch,
            query=query,
            content_type=content_type,
            dry_run=dry_run,
            credentials=credentials,
            key=_key(ns, name),
        )

    def apply(
        self,
        resource: Resource,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
        credentials: Credentials = OWN,
    ) -> dict[str, Any]:
        """Server-side apply of ``body`` (apiVersion, kind, metadata.name[, namespace] and the fields we own)."""
        name, ns = _name_and_namespace(resource, body, None)
        query: dict[str, QueryValue] = {"fieldManager": field_manager or self.settings.field_manager, "force": True if force else None}
        path = resource.path(namespace=ns, name=name, subresource=subresource)
        return self._write(
            "PATCH",
            resource,
            path,
            body,
            query=query,
            content_type=APPLY_CONTENT_TYPE,
            dry_run=dry_run,
            credentials=credentials,
            key=_key(ns, name),
        )

    def apply_status(
        self, resource: Resource, body: Mapping[str, Any], *, field_manager: str | None = None, force: bool = False
    ) -> dict[str, Any]:
        return self.apply(resource, body, field_manager=field_manager, force=force, subresource="status")

    def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: Literal["Foreground", "Background", "Orphan"] | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        grace_period_s: int | None = None,
        dry_run: bool = False,
        credentials: Credentials = OWN,
    ) -> dict[str, Any]:
        """Delete; returns the server's answer (the object, or a Status). Preconditions via ``uid`` / ``resource_version``."""
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_s is not None:
            options["gracePeriodSeconds"] = grace_period_s
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v}
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            # kube-apiserver reads a DELETE's options from its body when there is one and then ignores the
            # query: a dryRun only in the query would delete for real.
            options["dryRun"] = ["All"]
        path = resource.path(namespace=namespace if resource.namespaced else None, name=name)
        result = self._write("DELETE", resource, path, options, query={}, dry_run=dry_run, deleted=True, credentials=credentials)
        if result.get("kind") == "Status" and not dry_run:
            details = result.get("details") or {}
            gone = {"metadata": {"name": name, "namespace": namespace if resource.namespaced else None, "uid": details.get("uid", "")}}
            if not resource.namespaced:
                del gone["metadata"]["namespace"]
            self._expectations.record(self.cache.informer(resource), gone, deleted=True)
        return result
