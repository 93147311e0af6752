"""The registry of Kubernetes resources the product uses, and how their URLs are built.

One :class:`Resource` per kind we read or write (our CRs and the built-in kinds the reconciler
manages). Everything that names a resource — informers, the cached client, backend and operator
code — passes these values, so adding a kind is one entry here plus its CRD.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from kinds import darkrooms, postgresqls, tasks


@dataclass(frozen=True)
class Resource:
    """A REST resource: group/version/plural, its kind, and whether it lives in namespaces."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def base_path(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def path(self, *, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of the collection (``name`` None) or of one object (and its subresource).

        ``namespace`` None on a namespaced resource means "all namespaces" (collections only).
        """
        if subresource and not name:
            raise ValueError("a subresource needs an object name")
        if self.namespaced and name is not None and not namespace:
            raise ValueError(f"{self.plural} are namespaced: a namespace is required to address {name!r}")
        parts = [self.base_path]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name is not None:
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


# Our kinds at the version the product reads and writes, each defined in kinds/ (group, version, kind).
DARKROOMS = Resource(darkrooms.GROUP, darkrooms.VERSION, "darkrooms", darkrooms.KIND, True, ("dr",))
TASKS = Resource(tasks.GROUP, tasks.VERSION, "tasks", tasks.KIND, True)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",))
SECRETS = Resource("", "v1", "secrets", "Secret", True)
SERVICES = Resource("", "v1", "services", "Service", True, ("svc",))
EVENTS = Resource("", "v1", "events", "Event", True, ("ev",))
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False, ("ns",))
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True, ("deploy",))
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",))
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
POSTGRESQLS = Resource(postgresqls.GROUP, postgresqls.VERSION, "postgresqls", postgresqls.KIND, True, ("pg",))
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",))
PERSISTENTVOLUMECLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",))
# What the cluster's controllers make of the reconciler's children (a Deployment's ReplicaSets, their Pods; a
# StatefulSet's Pods; a Service's EndpointSlices): cached by the API for the detail pages' resource tree, never written
# by the product. A workload's pods for its logs page are listed as the person, and their logs read through pods/log.
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",))
PODS = Resource("", "v1", "pods", "Pod", True, ("po",))
ENDPOINTSLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True)

REGISTRY: tuple[Resource, ...] = (
    DARKROOMS,
    TASKS,
    POSTGRESQLS,
    CONFIGMAPS,
    SECRETS,
    SERVICES,
    EVENTS,
    NAMESPACES,
    DEPLOYMENTS,
    INGRESSES,
    LEASES,
    STATEFULSETS,
    PERSISTENTVOLUMECLAIMS,
    REPLICASETS,
    PODS,
    ENDPOINTSLICES,
)


def lookup(name: str, *, registry: tuple[Resource, ...] = REGISTRY) -> Resource:
    """A resource by plural, ``plural.group``, kind or short name (case-insensitive)."""
    wanted = name.lower()
    for resource in registry:
        names = {resource.plural, str(resource), resource.kind.lower(), *resource.short_names}
        if wanted in names:
            return resource
    raise KeyError(f"unknown resource {name!r}")
