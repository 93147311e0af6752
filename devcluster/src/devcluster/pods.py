"""Simulated pods: a workload controller's pod from its template (:func:`new_pod`), and the simulated
kubelet (:class:`Kubelet`) that turns pods on :data:`NODE_NAME` Running and Ready, as realcluster's
simulated node (kwok-style) does.

No container ever runs. A pod the ReplicaSet or StatefulSet simulation creates is bound to
:data:`NODE_NAME` at creation (devcluster has no scheduler; a Pod created without ``spec.nodeName``
stays Pending); ``ready_delay_s`` after the kubelet first sees it, its status says what a kubelet
reports once every container started: ``Running``, conditions ``PodReadyToStartContainers``,
``Initialized``, ``Ready``, ``ContainersReady``, ``PodScheduled``, one running container status per
container (``ready``, ``started``, ``restartCount: 0``), a pod IP of 10.244.0.0/16 and the host IP
127.0.0.1 (the same shape realcluster writes). Run-to-completion pods (restartPolicy Never/OnFailure)
go ``Succeeded``. A pod whose Deployment (through its ReplicaSet) or StatefulSet carries
``simulation.example.com/unready: "true"`` stays ``Ready=False``/``ContainersNotReady`` until the
annotation goes. Logs of these containers: :mod:`devcluster.podlogs`.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from typing import Any

from devcluster.catalog import Catalog
from devcluster.store import Change, Store
from devcluster.writing import WriteOptions, Writer, copy

NODE_NAME = "devcluster-node"
HOST_IP = "127.0.0.1"
PODS = "/pods"
UNREADY_ANNOTATION = "simulation.example.com/unready"  # Deployments and StatefulSets; realcluster's node honours it too
_KUBELET_STATUS = WriteOptions(manager="kubelet", field_validation="Ignore", subresource="status")
_OWNERS = {"ReplicaSet": "apps/replicasets", "StatefulSet": "apps/statefulsets", "Deployment": "apps/deployments"}


def controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")), None)


def owner_reference(owner: dict[str, Any], kind: str) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": "apps/v1", "kind": kind, "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def new_pod(template: dict[str, Any], owner: dict[str, Any], kind: str, *, labels: dict[str, str], **meta: Any) -> dict[str, Any]:
    """A pod of ``template`` controlled by ``owner`` (a ``kind``), bound to :data:`NODE_NAME`; ``meta`` adds
    ``name`` or ``generateName`` and such."""
    template_meta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        **meta,
        "namespace": owner["metadata"]["namespace"],
        "labels": {**(template_meta.get("labels") or {}), **labels},
        "ownerReferences": [owner_reference(owner, kind)],
    }
    if template_meta.get("annotations"):
        metadata["annotations"] = dict(template_meta["annotations"])
    spec = copy(template.get("spec") or {})
    spec["nodeName"] = NODE_NAME
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def pod_ip(pod: dict[str, Any]) -> str:
    n = zlib.crc32(pod["metadata"]["uid"].encode()) % 65000 + 2
    return f"10.244.{n >> 8}.{n & 255}"


def simulated_status(pod: dict[str, Any], now: str, *, unready: bool) -> dict[str, Any]:
    """What a kubelet reports once every container started (realcluster's simulatedStatus)."""
    spec = pod.get("spec") or {}
    completes = spec.get("restartPolicy") in ("Never", "OnFailure")
    phase, ready, reason = "Running", "True", ""
    if completes:
        phase, ready, reason = "Succeeded", "False", "PodCompleted"
    elif unready:
        ready, reason = "False", "ContainersNotReady"

    def condition(ctype: str, status: str, why: str = "") -> dict[str, Any]:
        return {"type": ctype, "status": status, "lastTransitionTime": now, **({"reason": why} if why else {})}

    def container_status(container: dict[str, Any], *, terminated: bool) -> dict[str, Any]:
        image = container.get("image", "")
        state = (
            {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}
            if terminated
            else {"running": {"startedAt": now}}
        )
        return {
            "name": container.get("name", ""),
            "state": state,
            "lastState": {},
            "ready": not terminated and not unready,
            "restartCount": 0,
            "image": image,
            "imageID": f"devcluster://{image}",
            "containerID": f"devcluster://{pod['metadata']['uid']}/{container.get('name', '')}",
            "started": not terminated,
        }

    ip = pod_ip(pod)
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": [
            condition("PodReadyToStartContainers", "True"),
            condition("Initialized", "True"),
            condition("Ready", ready, reason),
            condition("ContainersReady", ready, reason),
            condition("PodScheduled", "True"),
        ],
        "hostIP": HOST_IP,
        "hostIPs": [{"ip": HOST_IP}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": now,
        "qosClass": (pod.get("status") or {}).get("qosClass", "BestEffort"),
        "containerStatuses": [container_status(c, terminated=completes) for c in spec.get("containers") or []],
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [container_status(c, terminated=True) for c in spec["initContainers"]]
    return status


def is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or ())


class Simulation:
    """What the timed simulations (:class:`Kubelet`, :class:`~devcluster.statefulsets.StatefulSets`) share: the
    store and writer, the ready delay, the caller's scheduling, their own timers (cancelled by :meth:`stop`)."""

    def __init__(
        self,
        *,
        store: Store,
        catalog: Catalog,
        writer: Writer,
        clock: Callable[[], str],
        ready_delay_s: float,
        schedule: Callable[..., None],
        run: Callable[[tuple[Any, ...]], None],
    ) -> None:
        self.store, self.catalog, self.writer, self.clock = store, catalog, writer, clock
        self.ready_delay_s, self._schedule, self._run = ready_delay_s, schedule, run
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self.loop: asyncio.AbstractEventLoop | None = None

    def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()


class Kubelet(Simulation):
    """The simulated node's kubelet: pod status after the ready delay."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seen: dict[str, float] = {}  # pod uid -> when the kubelet first saw it (its ready delay counts from there)

    def on_change(self, change: Change) -> None:
        """Schedule the pods a committed change concerns: a pod on the node, or every pod of an owner whose
        unready annotation came or went."""
        if change.resource == PODS:
            if change.type == "DELETED":
                self._seen.pop(change.obj["metadata"].get("uid", ""), None)
                if timer := self._timers.pop((change.namespace, change.name), None):
                    timer.cancel()
            elif (change.obj.get("spec") or {}).get("nodeName") == NODE_NAME:
                self._schedule("pod", change.namespace, change.name)
        elif change.resource in ("apps/deployments", "apps/statefulsets") and change.prev is not None and change.type == "MODIFIED":
            before = (change.prev["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION)
            after = (change.obj["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION)
            if before != after:
                for pod in self._pods_of(change.obj["metadata"].get("uid", "")):
                    self._schedule("pod", change.namespace, pod)

    def _pods_of(self, uid: str) -> list[str]:
        names = []
        for resource, namespace, name in self.store.dependents(uid):
            if resource == PODS:
                names.append(name)
            elif resource == "apps/replicasets":
                rs = self.store.get(resource, namespace, name)
                names += self._pods_of(rs["metadata"]["uid"]) if rs else []
        return names

    def held_unready(self, pod: dict[str, Any]) -> bool:
        """The pod's StatefulSet, or its ReplicaSet's Deployment, carries the unready annotation."""
        ref, namespace = controller_of(pod), pod["metadata"]["namespace"]
        while ref is not None and ref.get("kind") in _OWNERS:
            owner = self.store.get(_OWNERS[ref["kind"]], namespace, ref.get("name", ""))
            if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
                return False
            if ref["kind"] != "ReplicaSet":
                return (owner["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION) == "true"
            ref = controller_of(owner)
        return False

    def sync_pod(self, namespace: str, name: str) -> None:
        pod = self.store.get(PODS, namespace, name)
        if pod is None or pod["metadata"].get("deletionTimestamp") or (pod.get("spec") or {}).get("nodeName") != NODE_NAME:
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            return
        unready = self.held_unready(pod)
        if phase == "Running":
            if is_ready(pod) == (not unready):
                return
            status = copy(pod["status"])
            fresh = simulated_status(pod, self.clock(), unready=unready)
            status["conditions"] = [
                next((c for c in fresh["conditions"] if c["type"] == old["type"]), old)
                if old["type"] in ("Ready", "ContainersReady")
                else old
                for old in status.get("conditions") or []
            ]
            for entry in status.get("containerStatuses") or []:
                entry["ready"] = not unready
        else:
            first = self._seen.setdefault(pod["metadata"]["uid"], time.monotonic())
            wait = first + self.ready_delay_s - time.monotonic()
            if wait > 0:
                self._arm_timer(namespace, name, wait)
                return
            status = simulated_status(pod, self.clock(), unready=unready)
        pods = self.catalog.builtin("", "pods")
        self.writer.update(pods, namespace, name, {**copy(pod), "status": status}, _KUBELET_STATUS)

    def _arm_timer(self, namespace: str, name: str, delay_s: float) -> None:
        if self.loop is None or (namespace, name) in self._timers:
            return
        self._timers[(namespace, name)] = self.loop.call_later(delay_s, self._timer_fired, namespace, name)

    def _timer_fired(self, namespace: str, name: str) -> None:
        self._timers.pop((namespace, name), None)
        self._run(("pod", namespace, name))
