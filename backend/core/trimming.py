"""What the API keeps of the objects it caches only to draw them: the reconciler's children and what the cluster makes of them.

The API caches every Deployment, Service, Ingress and StatefulSet the reconciler made, and the ReplicaSets, Pods,
PersistentVolumeClaims and EndpointSlices under them (:data:`backend.core.access.RELATED`), so that a detail page's
resource tree, timeline and logs page, and a list's Warning badges, are drawn from memory. The dashboard draws them
from a few fields — states, replicas and selectors (:mod:`kinds.workloads`), a Service's ports, an Ingress's hosts
and TLS, the containers' names and the claims a Pod mounts — and shows one whole only as YAML, read then from the API
server as the person (:data:`TRIMMED`, :mod:`backend.dashboard.yamlview`). The largest parts of those objects are
drawn nowhere: a workload's pod template (a copy of the Pod's spec, in each Deployment and each of its ReplicaSets),
a Pod's containers' specs (images, env, probes, resources, mounts), its volumes other than claims and its status'
addresses, images and times, an EndpointSlice's addresses, and annotations. The API's informers drop them before
storing (:data:`cluster.informers.Transform`). With a reconciler's children per Darkroom they are most of the API's
memory (``docs/performance.md``, "API and dashboard at scale").

Kept of every trimmed object: :data:`KEPT_METADATA` (identity, ownership, labels for selectors, times); of a Pod's
status what its state is read from (:data:`POD_STATUS`), of the others' the whole status. A field the dashboard
starts to draw from one of these kinds is added here: the tests that draw each field on both clusters (tree, timeline,
logs, detail pages) fail otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cluster import DEPLOYMENTS, ENDPOINTSLICES, INGRESSES, PERSISTENTVOLUMECLAIMS, PODS, REPLICASETS, SERVICES, STATEFULSETS
from cluster.resources import Resource

__all__ = ["KEPT_METADATA", "POD_STATUS", "TRANSFORMS", "TRIMMED", "trim_endpointslice", "trim_metadata", "trim_pod", "trim_workload"]

#: The metadata kept of a trimmed object: who it is, who controls it, its labels (selectors match them), its times.
KEPT_METADATA = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "labels",
    "ownerReferences",
)


def trim_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with only :data:`KEPT_METADATA` in its metadata (annotations and the rest dropped); spec and status kept."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        obj["metadata"] = {key: meta[key] for key in KEPT_METADATA if key in meta}
    return obj


def trim_workload(obj: dict[str, Any]) -> dict[str, Any]:
    """A Deployment, ReplicaSet or StatefulSet without its pod template (replicas, selector and the rest of its spec
    kept: :func:`kinds.workloads.replicas` and the logs page's selector read them)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.pop("template", None)
    return trim_metadata(obj)


def _names(containers: Any) -> list[dict[str, Any]]:
    return [_only(c, ("name",)) for c in containers or () if isinstance(c, Mapping) and "name" in c]


def trim_endpointslice(obj: dict[str, Any]) -> dict[str, Any]:
    """An EndpointSlice whose endpoints keep only their conditions (:func:`kinds.workloads.endpointslice_state` counts
    the ready ones; its ports are kept)."""
    if isinstance(obj.get("endpoints"), list):
        obj["endpoints"] = [_only(e, ("conditions",)) for e in obj["endpoints"]]
    return trim_metadata(obj)


#: What a Pod's state is read from (:func:`kinds.workloads.pod_state`, :func:`kinds.workloads.restarts`): of its status,
#: of each condition and of each container's status.
POD_STATUS = ("phase", "reason", "message", "conditions", "containerStatuses", "initContainerStatuses")
POD_CONDITION = ("type", "status", "reason", "message")
CONTAINER_STATUS = ("name", "ready", "restartCount", "state")


def _only(obj: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: obj[key] for key in keys if key in obj} if isinstance(obj, Mapping) else {}


def trim_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """A Pod with only its containers' and init containers' names, its node and the volumes that mount claims
    (:func:`kinds.workloads.mounted_claims`) left of its spec, and of its status what its state is read from
    (:data:`POD_STATUS`; no addresses, images, times)."""
    status = obj.get("status")
    if isinstance(status, dict):
        kept_status = _only(status, POD_STATUS)
        if "conditions" in kept_status:
            kept_status["conditions"] = [_only(c, POD_CONDITION) for c in kept_status["conditions"] or ()]
        for key in ("containerStatuses", "initContainerStatuses"):
            if key in kept_status:
                kept_status[key] = [_only(c, CONTAINER_STATUS) for c in kept_status[key] or ()]
        obj["status"] = kept_status
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kept: dict[str, Any] = {"containers": _names(spec.get("containers"))}
        if spec.get("initContainers"):
            kept["initContainers"] = _names(spec["initContainers"])
        claims = [v for v in spec.get("volumes") or () if isinstance(v, Mapping) and v.get("persistentVolumeClaim")]
        if claims:
            kept["volumes"] = claims
        if spec.get("nodeName"):
            kept["nodeName"] = spec["nodeName"]
        obj["spec"] = kept
    return trim_metadata(obj)


#: The transform of each trimmed kind's informer.
TRANSFORMS: Mapping[Resource, Callable[[dict[str, Any]], dict[str, Any]]] = {
    DEPLOYMENTS: trim_workload,
    REPLICASETS: trim_workload,
    STATEFULSETS: trim_workload,
    PODS: trim_pod,
    SERVICES: trim_metadata,
    INGRESSES: trim_metadata,
    PERSISTENTVOLUMECLAIMS: trim_metadata,
    ENDPOINTSLICES: trim_endpointslice,
}
#: The kinds whose cached objects are trimmed: shown whole only when read from the API server.
TRIMMED: frozenset[Resource] = frozenset(TRANSFORMS)
