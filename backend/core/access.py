"""Cluster access of the API process: one connection, the informer cache and the cached client.

:meth:`ClusterAccess.start` is called once by :func:`backend.app.create_app` (or handed in by tests
and entry points). Reads go through an informer per registered kind (:data:`backend.core.kinds.registry.KINDS`:
Darkrooms, Tasks, Postgresqls) plus Events and Namespaces;
writes go straight to the API server through :class:`cluster.CachedClient`. The API never reads
Secrets: it only writes the credential and password Secrets it owns, so it needs no Secret informer (and no
list/watch permission on Secrets). It also watches the one ConfigMap that lists logged-out sessions
(:mod:`backend.identity.revocation` writes it): its labels, :data:`SESSIONS_LABELS`, are declared here, with
the informer that selects by them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from backend.core.kinds.registry import KINDS
from backend.settings import ApiSettings
from cluster import (
    CONFIGMAPS,
    EVENTS,
    NAMESPACES,
    Cache,
    CachedClient,
    ClientSettings,
    ClusterError,
    Connection,
    ConnectionSettings,
    InformerSettings,
    connect,
)
from cluster.taskevents import INDEXERS as EVENT_INDEXERS
from cluster.taskevents import INVOLVED_UID, TASK_UID

__all__ = ["INVOLVED_UID", "SESSIONS_LABELS", "SESSIONS_SELECTOR", "TASK_UID", "ClusterAccess"]

# The labels of the ConfigMap of logged-out sessions (backend.identity.revocation), and the informer's selector.
SESSIONS_LABELS = {"app.kubernetes.io/managed-by": "darkroom-control-panel", "app.kubernetes.io/component": "api-sessions"}
SESSIONS_SELECTOR = ",".join(f"{k}={v}" for k, v in SESSIONS_LABELS.items())


@dataclass
class ClusterAccess:
    """The API's view of the cluster. ``synced`` / ``reachable`` feed ``/readyz``."""

    connection: Connection
    cache: Cache
    client: CachedClient

    @classmethod
    def start(cls, settings: ApiSettings, *, environ: Mapping[str, str] | None = None) -> ClusterAccess:
        """Connect (without probing: an unreachable cluster makes /readyz fail, not startup) and start informers."""
        connection = connect(
            ConnectionSettings(kubeconfig=settings.kubeconfig, probe=False), environ=os.environ if environ is None else environ
        )
        connection.api_client.user_agent = "darkroom-control-panel-api/0.1.0"
        cache = Cache(transport=connection.transport, settings=InformerSettings())
        for kind in KINDS:
            cache.add(kind.resource, namespace=settings.namespace)
        cache.add(EVENTS, namespace=settings.namespace, indexers=EVENT_INDEXERS)
        cache.add(NAMESPACES)
        # The shared list of logged-out sessions (consulted only when authentication is on; an absent
        # namespace just lists empty).
        cache.add(CONFIGMAPS, namespace=settings.session_namespace, label_selector=SESSIONS_SELECTOR)
        cache.start()
        cache.wait_for_sync(settings.cache_sync_timeout_s)
        client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager=settings.field_manager))
        return cls(connection=connection, cache=cache, client=client)

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
