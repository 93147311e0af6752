"""Cluster access of the API process: one connection, the informer cache and the cached client.

:meth:`ClusterAccess.start` is called once by :func:`backend.app.create_app` (or handed in by tests
and entry points). Reads go through an informer per registered kind (:data:`backend.core.kinds.registry.KINDS`:
Darkrooms, Tasks, Postgresqls) plus Events, Namespaces and the kinds of the reconciler's children (:data:`CHILDREN`:
ConfigMaps, Deployments, Services, Ingresses, StatefulSets labelled with who manages them — indexed by their
controller's UID, :data:`CONTROLLER_UID`, so a detail page finds an object's children, and its live stream their
changes, by one index lookup) and of what the cluster's controllers make of those (:data:`GRANDCHILDREN`: ReplicaSets,
Pods, PersistentVolumeClaims, EndpointSlices, which inherit the label from the pod and claim templates and the Service;
the same index, and Pods by the claims they mount, :data:`CLAIM`: the detail pages' resource tree,
:mod:`backend.dashboard.tree`) — trimmed to what the dashboard draws of them (:mod:`backend.core.trimming`);
writes go straight to the API server through :class:`cluster.CachedClient`. The informers are the API's
own (its service account lists and watches), shared by everyone; a request reads and writes through
:meth:`ClusterAccess.acting_as`, which authorizes the person's reads of the cache and sends everything else
with their credentials (:mod:`cluster.acting`). The reviews that takes — TokenReview, SubjectAccessReview,
SelfSubjectAccessReview, each cached ``settings.review_cache_ttl_s`` — are built here once.

Secrets: the API lists none of the cluster's. When people log in (not in the local mode) it watches the
Secrets of its own namespace that hold login sessions (:mod:`backend.identity.sessions` writes them): their
labels, :data:`SESSIONS_LABELS`, are declared here, with the informer that selects by them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from backend.core import ordering, trimming
from backend.core.kinds.base import Kind
from backend.core.kinds.registry import KINDS
from backend.settings import ApiSettings
from cluster import (
    DEPLOYMENTS,
    ENDPOINTSLICES,
    EVENTS,
    INGRESSES,
    NAMESPACES,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    REPLICASETS,
    SECRETS,
    SERVICES,
    STATEFULSETS,
    Cache,
    CachedClient,
    ClientSettings,
    ClusterError,
    Connection,
    ConnectionSettings,
    InformerSettings,
    connect,
)
from cluster.acting import ActingClient, Actor
from cluster.resources import Resource
from cluster.reviewing import AccessReviewer, SelfAccessReviewer, TokenReviewer
from cluster.taskevents import INDEXERS as EVENT_INDEXERS
from cluster.taskevents import INVOLVED_UID, TASK_UID
from kinds.names import MANAGED_BY_LABEL
from kinds.workloads import mounted_claims

__all__ = [
    "CHILDREN",
    "CLAIM",
    "CONTROLLER_UID",
    "GRANDCHILDREN",
    "INVOLVED_UID",
    "RELATED",
    "SESSIONS_LABELS",
    "SESSIONS_SELECTOR",
    "TASK_UID",
    "ClusterAccess",
    "claims",
    "controller_uid",
]

#: The kinds of the objects the reconciler makes for a Darkroom or a Postgresql, cached for everyone (reads authorized
#: per person, as every read of the cache) and indexed by :data:`CONTROLLER_UID`. Only objects that say who manages
#: them (:data:`CHILDREN_SELECTOR`: the reconciler labels its children so) are cached. ConfigMaps are left out: the
#: right to list them cluster-wide would let the API's own account read every ConfigMap's data; a child ConfigMap
#: changes only with its owner's spec (which refreshes the page's regions too), and a page reads it by name as the person.
CHILDREN: tuple[Resource, ...] = (DEPLOYMENTS, SERVICES, INGRESSES, STATEFULSETS)
CHILDREN_SELECTOR = MANAGED_BY_LABEL  # the label's presence (its value, the reconciler's name, is the reconciler's setting)
CONTROLLER_UID = "controller-uid"
#: What the cluster's controllers make of the children, cached as they are (the same selector and index): a
#: Deployment's ReplicaSets and their Pods, a StatefulSet's Pods and PersistentVolumeClaims, a Service's EndpointSlices.
#: Their pod and claim templates carry the reconciler's labels (operator/: darkroomchildren, pgchildren), which the
#: Deployment, ReplicaSet and StatefulSet controllers copy onto what they create, and the EndpointSlice controller
#: copies a Service's labels onto its slices — so the API caches these, never the cluster's other Pods. A claim of a
#: StatefulSet has a controller reference only under ``whenDeleted: Delete``: it is found through the Pod that mounts
#: it (:data:`CLAIM`), by name.
GRANDCHILDREN: tuple[Resource, ...] = (REPLICASETS, PODS, PERSISTENTVOLUMECLAIMS, ENDPOINTSLICES)
CLAIM = "claim"  # Pods by the claims they mount, ``<namespace>/<claim name>``: a claim's change finds its Pod
#: What the dashboard's detail pages show about an object besides it: its children, theirs, and the Events about
#: it or its children.
RELATED: tuple[Resource, ...] = (*CHILDREN, *GRANDCHILDREN, EVENTS)


def controller_uid(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The UID of the object's controller ownerReference (none, or one): the index :data:`CONTROLLER_UID`."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid"):
            return (str(ref["uid"]),)
    return ()


def claims(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """``<namespace>/<claim>`` of every PersistentVolumeClaim the pod mounts: the index :data:`CLAIM`."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    return tuple(f"{namespace}/{name}" for name in mounted_claims(pod))


# The labels of the login sessions' Secrets (backend.identity.sessions), and the informer's selector.
SESSIONS_LABELS = {"app.kubernetes.io/managed-by": "darkroom-control-panel", "app.kubernetes.io/component": "api-session"}
SESSIONS_SELECTOR = ",".join(f"{k}={v}" for k, v in SESSIONS_LABELS.items())


def kind_store(kind: Kind) -> dict[str, Any]:
    """How the cache keeps one of our kinds (:meth:`cluster.caches.Cache.add`'s arguments): with the kind's indexes, packed
    (the API reads a page of many objects at a time: :mod:`cluster.packing`, ~1,300 bytes less per cached Darkroom than
    frozen bodies), with every sortable column's order kept from the start (``docs/performance.md``) and an index of each
    selectable field (:attr:`backend.core.kinds.base.Kind.field_indexes`)."""
    return {"indexers": {**kind.indexers, **kind.field_indexers}, "packed": True, "orders": ordering.kept_orders(kind.sorts)}


@dataclass
class ClusterAccess:
    """The API's view of the cluster. ``synced`` / ``reachable`` feed ``/readyz``."""

    connection: Connection
    cache: Cache
    client: CachedClient
    tokens: TokenReviewer
    access_reviews: AccessReviewer
    self_reviews: SelfAccessReviewer

    @classmethod
    def of(cls, settings: ApiSettings, connection: Connection, cache: Cache) -> ClusterAccess:
        """The access over an existing connection and started cache (the reviews built here)."""
        transport = connection.transport
        ttl_s = settings.review_cache_ttl_s
        return cls(
            connection=connection,
            cache=cache,
            client=CachedClient(transport=transport, cache=cache, settings=ClientSettings(field_manager=settings.field_manager)),
            tokens=TokenReviewer(transport=transport, ttl_s=ttl_s),
            access_reviews=AccessReviewer(
                transport=transport, allow_ttl_s=ttl_s, deny_ttl_s=ttl_s, stream_ttl_s=settings.stream_review_ttl_s
            ),
            self_reviews=SelfAccessReviewer(transport=transport, ttl_s=ttl_s),
        )

    def acting_as(self, actor: Actor) -> ActingClient:
        """The cached client as ``actor`` sees it: their reads of the cache authorized, the rest sent as them."""
        return ActingClient(self.client, actor=actor, reviewer=self.access_reviews)

    @classmethod
    def start(cls, settings: ApiSettings, *, environ: Mapping[str, str] | None = None) -> ClusterAccess:
        """Connect (without probing: an unreachable cluster makes /readyz fail, not startup) and start informers."""
        connection = connect(
            ConnectionSettings(kubeconfig=settings.kubeconfig, probe=False), environ=os.environ if environ is None else environ
        )
        connection.api_client.user_agent = "darkroom-control-panel-api/0.1.0"
        cache = Cache(transport=connection.transport, settings=InformerSettings())
        for kind in KINDS:
            cache.add(kind.resource, namespace=settings.namespace, **kind_store(kind))
        cache.add(EVENTS, namespace=settings.namespace, indexers=EVENT_INDEXERS)
        cache.add(NAMESPACES)
        for child in (*CHILDREN, *GRANDCHILDREN):
            indexers = {CONTROLLER_UID: controller_uid, **({CLAIM: claims} if child is PODS else {})}
            cache.add(
                child,
                namespace=settings.namespace,
                label_selector=CHILDREN_SELECTOR,
                indexers=indexers,
                transform=trimming.TRANSFORMS.get(child),
            )
        if not settings.local:  # login sessions (an absent namespace just lists empty; a login then says so)
            cache.add(SECRETS, namespace=settings.session_namespace, label_selector=SESSIONS_SELECTOR)
        cache.start()
        cache.wait_for_sync(settings.cache_sync_timeout_s)
        return cls.of(settings, connection, cache)

    @property
    def synced(self) -> bool:
        return self.cache.has_synced

    def reachable(self, timeout_s: float = 2.0) -> str | None:
        """None when the API server answers ``/version``; otherwise why not."""
        try:
            self.connection.transport.request("GET", "/version", timeout_s=timeout_s)
        except ClusterError as e:
            return e.message
        return None

    def stop(self) -> None:
        self.cache.stop()
        self.connection.close()
