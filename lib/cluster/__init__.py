"""cluster: shared Kubernetes access for the backend and the reconciler.

Owns the connection (:mod:`cluster.connecting`), the registry of resources we use
(:mod:`cluster.resources`), the error tree (:mod:`cluster.errors`), informers and their cache
(:mod:`cluster.informers`, :mod:`cluster.caches`) and the cached client that reads from them and
writes to the API server (:mod:`cluster.clients`), and leader election on a Lease over that client
(:mod:`cluster.electing`). No Flask, no reconciler code, and no devcluster:
entry points start devcluster themselves and pass its kubeconfig to :func:`connect`.

Typical wiring in an entry point::

    connection = connect(ConnectionSettings(kubeconfig=path), environ=os.environ)
    cache = Cache(transport=connection.transport, settings=InformerSettings())
    cache.add(DARKROOMS, indexers={OWNER_UID: by_owner_uid})
    cache.start().wait_for_sync(30)
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings())
    ...
    cache.stop(); connection.close()
"""

from cluster.bodies import FrozenDict, freeze, thaw
from cluster.caches import Cache
from cluster.clients import CachedClient
from cluster.connecting import Connection, NoCluster, connect
from cluster.errors import (
    AlreadyExists,
    BadRequest,
    Cause,
    ClusterError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    Unauthorized,
    Unavailable,
)
from cluster.indexers import NAMESPACE, OWNER_UID, by_label, by_namespace, by_owner_uid
from cluster.informers import Informer, InformerStats
from cluster.requesting import Transport
from cluster.resources import (
    CONFIGMAPS,
    DARKROOMS,
    DEPLOYMENTS,
    EVENTS,
    INGRESSES,
    LEASES,
    NAMESPACES,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    POSTGRESQLS,
    REGISTRY,
    SECRETS,
    SERVICES,
    STATEFULSETS,
    TASKS,
    Resource,
    lookup,
)
from cluster.settings import ClientSettings, ConnectionSettings, InformerSettings

__all__ = [
    "CONFIGMAPS",
    "DARKROOMS",
    "DEPLOYMENTS",
    "EVENTS",
    "INGRESSES",
    "LEASES",
    "NAMESPACE",
    "NAMESPACES",
    "OWNER_UID",
    "PERSISTENTVOLUMECLAIMS",
    "PODS",
    "POSTGRESQLS",
    "REGISTRY",
    "SECRETS",
    "SERVICES",
    "STATEFULSETS",
    "TASKS",
    "AlreadyExists",
    "BadRequest",
    "Cache",
    "CachedClient",
    "Cause",
    "ClientSettings",
    "ClusterError",
    "Conflict",
    "Connection",
    "ConnectionSettings",
    "Forbidden",
    "FrozenDict",
    "Gone",
    "Informer",
    "InformerSettings",
    "InformerStats",
    "Invalid",
    "NoCluster",
    "NotFound",
    "Resource",
    "Transport",
    "Unauthorized",
    "Unavailable",
    "by_label",
    "by_namespace",
    "by_owner_uid",
    "connect",
    "freeze",
    "lookup",
    "thaw",
]
