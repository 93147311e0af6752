"""Simulated EndpointSlices: kube-controller-manager's EndpointSlice controller, in miniature; run by
:class:`~devcluster.controllers.Controllers`, which schedules ``endpointslices`` work from :meth:`EndpointSlices.on_change`.

- **Which Services**: those with a ``spec.selector`` (a Service without one has the slices its owner writes, as
  an APIService's: devcluster/aggregation); ``type: ExternalName`` none.
- **The slice**: one per Service (kube splits at 100 endpoints; a devcluster Service never has that many pods),
  ``generateName: <service>-``, a controller reference to the Service (the garbage collector deletes it with it),
  the Service's labels with ``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by:
  endpointslice-controller.k8s.io`` (and ``service.kubernetes.io/headless`` for a headless Service), as kube's
  ``setEndpointSliceLabels`` writes them; ``addressType: IPv4``.
- **Endpoints**: one per pod of the namespace the selector matches that has an IP and is not finished (Succeeded,
  Failed), sorted by name: its IP, ``conditions`` ``ready``/``serving`` (the pod's Ready condition; ``ready`` false
  while terminating) and ``terminating``, ``nodeName``, a ``targetRef`` to the pod. **Ports**: the Service's, each with
  its ``targetPort`` (a number; a name is looked up in the first matching pod's container ports), name and protocol.
- Re-written when a Service or a pod it selects (before or after the change) changes, only when something differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devcluster.catalog import Catalog
from devcluster.pods import PODS, controller_of, is_ready
from devcluster.store import Change, Store
from devcluster.writing import WriteOptions, Writer, copy

SERVICES = "/services"
ENDPOINTSLICES = "discovery.k8s.io/endpointslices"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
_CONTROLLER = WriteOptions(manager="kube-controller-manager", field_validation="Ignore")


def selects(service: dict[str, Any], pod: dict[str, Any] | None) -> bool:
    """Whether the Service's selector matches the pod's labels (an empty or absent selector matches nothing here)."""
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _target_port(port: dict[str, Any], pods: list[dict[str, Any]]) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    for pod in pods[:1]:
        for container in (pod.get("spec") or {}).get("containers") or ():
            for declared in container.get("ports") or ():
                if declared.get("name") == target:
                    return int(declared["containerPort"])
    return None


def wanted_slice(service: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any]:
    """What the Service's slice holds (its labels, endpoints and ports), without its name."""
    meta, spec = service["metadata"], service.get("spec") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL)}
    labels.update({SERVICE_NAME_LABEL: meta["name"], MANAGED_BY_LABEL: CONTROLLER_NAME})
    if spec.get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    endpoints = []
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        terminating = bool(pod["metadata"].get("deletionTimestamp"))
        ready = is_ready(pod)
        endpoint: dict[str, Any] = {
            "addresses": [pod["status"]["podIP"]],
            "conditions": {"ready": ready and not terminating, "serving": ready, "terminating": terminating},
            "targetRef": {"kind": "Pod", "namespace": meta["namespace"], "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
        }
        if (pod.get("spec") or {}).get("nodeName"):
            endpoint["nodeName"] = pod["spec"]["nodeName"]
        endpoints.append(endpoint)
    ports = []
    for port in spec.get("ports") or ():
        number = _target_port(port, pods)
        if number is not None:
            ports.append({"name": port.get("name", ""), "port": number, "protocol": port.get("protocol", "TCP")})
    return {"labels": labels, "endpoints": endpoints, "ports": ports}


class EndpointSlices:
    """The EndpointSlice controller; the caller's scheduling."""

    def __init__(self, *, store: Store, catalog: Catalog, writer: Writer, schedule: Callable[..., None]) -> None:
        self.store, self.catalog, self.writer, self._schedule = store, catalog, writer, schedule

    def on_change(self, change: Change) -> None:
        """A Service changed, or a pod one of its namespace's Services selects (before or after): sync that Service."""
        if change.resource == SERVICES and change.type != "DELETED":
            self._schedule("endpointslices", change.namespace, change.name)
        elif change.resource == PODS:
            for service in self.store.items(SERVICES, change.namespace):
                if selects(service, change.obj) or selects(service, change.prev):
                    self._schedule("endpointslices", change.namespace, service["metadata"]["name"])
        elif change.resource == ENDPOINTSLICES and change.type == "DELETED":  # someone deleted ours: made again
            ref = controller_of(change.obj)
            if ref is not None and ref.get("kind") == "Service":
                self._schedule("endpointslices", change.namespace, ref.get("name", ""))

    def _owned(self, service: dict[str, Any]) -> list[dict[str, Any]]:
        uid, namespace = service["metadata"]["uid"], service["metadata"]["namespace"]
        found = (self.store.get(r, namespace, n) for r, _, n in self.store.dependents(uid) if r == ENDPOINTSLICES)
        return [
            s
            for s in found
            if s is not None
            and (controller_of(s) or {}).get("uid") == uid
            and (s["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == CONTROLLER_NAME
        ]

    def sync_endpointslices(self, namespace: str, name: str) -> None:
        service = self.store.get(SERVICES, namespace, name)
        spec = (service or {}).get("spec") or {}
        if (
            service is None
            or service["metadata"].get("deletionTimestamp")
            or not spec.get("selector")
            or spec.get("type") == "ExternalName"
        ):
            return  # gone: the garbage collector deletes its slices
        pods = [
            p
            for p in self.store.items(PODS, namespace)
            if selects(service, p)
            and (p.get("status") or {}).get("podIP")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        wanted = wanted_slice(service, pods)
        resource = self.catalog.builtin("discovery.k8s.io", "endpointslices")
        owned = sorted(self._owned(service), key=lambda s: s["metadata"]["name"])
        if not owned:
            reference = {"apiVersion": "v1", "kind": "Service", "name": name, "uid": service["metadata"]["uid"]}
            body = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "generateName": f"{name}-",
                    "namespace": namespace,
                    "labels": wanted["labels"],
                    "ownerReferences": [{**reference, "controller": True, "blockOwnerDeletion": True}],
                },
                "addressType": "IPv4",
                "endpoints": wanted["endpoints"],
                "ports": wanted["ports"],
            }
            self.writer.create(resource, namespace, body, _CONTROLLER)
            return
        first, *extra = owned
        current = {
            "labels": first["metadata"].get("labels") or {},
            "endpoints": first.get("endpoints") or [],
            "ports": first.get("ports") or [],
        }
        if current != wanted:
            new = copy(first)
            new["metadata"]["labels"] = wanted["labels"]
            new["endpoints"], new["ports"] = wanted["endpoints"], wanted["ports"]
            self.writer.update(resource, namespace, first["metadata"]["name"], new, _CONTROLLER)
        for surplus in extra:
            self.writer.delete(resource, namespace, surplus["metadata"]["name"], {}, _CONTROLLER)
