"""The states of the built-in objects under a Darkroom or a Postgresql: Deployments, StatefulSets, ReplicaSets, Pods,
PersistentVolumeClaims and EndpointSlices (pure functions of a stored object, no I/O).

The one definition of what such an object's state *is* — its :class:`~kinds.states.State` (``key``, ``word``,
``tone``) — as :mod:`kinds.darkrooms` and :mod:`kinds.tasks` are of ours: the dashboard's resource tree
(:mod:`backend.dashboard.tree`) shows the ``word`` in the same badge, coloured by the same tones, as the lists show
a Darkroom's. A kind module rather than :mod:`kinds.states`, which holds the kind-independent types only.

Decisions:

- A **Pod** is read as ``kubectl get pods`` reads it: a container waiting for a reason that means it keeps failing
  (:data:`FAILING_REASONS`: CrashLoopBackOff, ImagePullBackOff, ...) wins over the phase and is *bad*, its word the
  reason itself (what people search for); then being deleted (idle), then the phase: Pending is progress, Running
  is *good* only when the pod's ``Ready`` condition is True (Running but not ready: *attention*), Succeeded is idle
  (Completed), Failed bad. The restarts (summed ``restartCount`` of its containers) are a number beside the state,
  not a state: a pod that restarted once and runs is fine.
- A **workload** (Deployment, StatefulSet, ReplicaSet) is *n of m ready*: 0 wanted is idle (Scaled to 0), all
  ready is good, fewer is progress (a rollout, or pods starting); a StatefulSet whose update revision is not yet its
  current one says it is rolling out.
- A **PersistentVolumeClaim** is its phase: Bound good, Pending progress, Lost bad.
- An **EndpointSlice** is how many of its endpoints are ready to take traffic: all of them good, some progress, none
  (or no endpoint at all: the Service reaches nothing) attention.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kinds.states import State, terminating

# -- Pods -------------------------------------------------------------------------------------------------------------

POD_READY = State("ready", "Running", "good")
POD_NOT_READY = State("not-ready", "Not ready", "attention")
POD_PENDING = State("pending", "Pending", "progress")
POD_COMPLETED = State("completed", "Completed", "idle")
POD_FAILED = State("failed", "Failed", "bad")
POD_UNKNOWN = State("unknown", "Unknown", "attention")
POD_TERMINATING = State("terminating", "Terminating", "idle")
#: The waiting reasons of a container that keeps failing (kubelet's words), each a state of its own.
FAILING_REASONS = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
)
POD_FAILING = {reason: State(reason.lower(), reason, "bad") for reason in FAILING_REASONS}
POD_STATES: tuple[State, ...] = (
    POD_READY,
    POD_NOT_READY,
    POD_PENDING,
    POD_COMPLETED,
    POD_FAILED,
    POD_UNKNOWN,
    POD_TERMINATING,
    *POD_FAILING.values(),
)


def _container_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())]


def restarts(pod: Mapping[str, Any]) -> int:
    """The restarts of the pod's containers (init containers too), summed, as kubectl's RESTARTS column."""
    return sum(int(c.get("restartCount") or 0) for c in _container_statuses(pod))


def mounted_claims(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the PersistentVolumeClaims the pod's volumes mount (a StatefulSet's claims among them)."""
    volumes = (pod.get("spec") or {}).get("volumes") or ()
    return tuple(str(v["persistentVolumeClaim"]["claimName"]) for v in volumes if (v.get("persistentVolumeClaim") or {}).get("claimName"))


def pod_ready(pod: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or ())


def pod_state(pod: Mapping[str, Any]) -> State:
    """The pod's state (see the module's decisions), with why in ``detail`` when there is more to say."""
    for container in _container_statuses(pod):
        waiting = (container.get("state") or {}).get("waiting") or {}
        failing = POD_FAILING.get(str(waiting.get("reason") or ""))
        if failing is not None:
            message = str(waiting.get("message") or "")
            return failing.because(f"container {container.get('name')}" + (f": {message}" if message else ""))
    if terminating(pod):
        return POD_TERMINATING
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    if phase == "Running":
        if pod_ready(pod):
            return POD_READY
        ready: Mapping[str, Any] = next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), {})
        return POD_NOT_READY.because(str(ready.get("message") or ready.get("reason") or ""))
    by_phase = {"Pending": POD_PENDING, "Succeeded": POD_COMPLETED, "Failed": POD_FAILED}
    return by_phase.get(phase, POD_UNKNOWN).because(str(status.get("message") or status.get("reason") or ""))


# -- Deployments, StatefulSets, ReplicaSets ---------------------------------------------------------------------------

WORKLOAD_READY = State("ready", "Ready", "good")
WORKLOAD_STARTING = State("starting", "Starting", "progress")
WORKLOAD_SCALED_TO_ZERO = State("scaled-to-zero", "Scaled to 0", "idle")
WORKLOAD_TERMINATING = State("terminating", "Terminating", "idle")
WORKLOAD_STATES: tuple[State, ...] = (WORKLOAD_READY, WORKLOAD_STARTING, WORKLOAD_SCALED_TO_ZERO, WORKLOAD_TERMINATING)


def replicas(obj: Mapping[str, Any]) -> tuple[int, int]:
    """(ready, wanted) of a Deployment, StatefulSet or ReplicaSet (``spec.replicas`` defaults to 1)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    wanted = spec.get("replicas")
    return int(status.get("readyReplicas") or 0), 1 if wanted is None else int(wanted)


def workload_state(obj: Mapping[str, Any]) -> State:
    """A workload's state from its replicas: "n of m ready" is its detail."""
    ready, wanted = replicas(obj)
    status = obj.get("status") or {}
    rolling = status.get("updateRevision") and status.get("currentRevision") != status.get("updateRevision")
    counted = f"{ready} of {wanted} ready" + (", rolling out" if rolling else "")
    if terminating(obj):
        return WORKLOAD_TERMINATING.because(counted)
    if wanted == 0:
        return WORKLOAD_SCALED_TO_ZERO.because(counted)
    return (WORKLOAD_READY if ready >= wanted else WORKLOAD_STARTING).because(counted)


# -- PersistentVolumeClaims -------------------------------------------------------------------------------------------

CLAIM_BOUND = State("bound", "Bound", "good")
CLAIM_PENDING = State("pending", "Pending", "progress")
CLAIM_LOST = State("lost", "Lost", "bad")
CLAIM_TERMINATING = State("terminating", "Terminating", "idle")
CLAIM_STATES: tuple[State, ...] = (CLAIM_BOUND, CLAIM_PENDING, CLAIM_LOST, CLAIM_TERMINATING)


def claim_state(claim: Mapping[str, Any]) -> State:
    """The claim's phase, its size (the bound capacity, else the request) as detail."""
    spec, status = claim.get("spec") or {}, claim.get("status") or {}
    size = (status.get("capacity") or {}).get("storage") or ((spec.get("resources") or {}).get("requests") or {}).get("storage") or ""
    if terminating(claim):
        return CLAIM_TERMINATING.because(str(size))
    by_phase = {"Bound": CLAIM_BOUND, "Lost": CLAIM_LOST}
    return by_phase.get(str(status.get("phase") or ""), CLAIM_PENDING).because(str(size))


# -- EndpointSlices ---------------------------------------------------------------------------------------------------

SLICE_READY = State("ready", "Ready", "good")
SLICE_PARTLY_READY = State("partly-ready", "Partly ready", "progress")
SLICE_NOT_READY = State("not-ready", "No ready endpoint", "attention")
SLICE_STATES: tuple[State, ...] = (SLICE_READY, SLICE_PARTLY_READY, SLICE_NOT_READY)


def endpointslice_state(endpoint_slice: Mapping[str, Any]) -> State:
    """Ready endpoints of all (an endpoint without conditions counts as ready, as kube reads it), and the ports."""
    endpoints = endpoint_slice.get("endpoints") or ()
    ready = sum(1 for e in endpoints if (e.get("conditions") or {}).get("ready") is not False)
    ports = ", ".join(str(p.get("port")) for p in endpoint_slice.get("ports") or () if p.get("port") is not None)
    detail = f"{ready} of {len(endpoints)} endpoints ready" + (f", port {ports}" if ports else "")
    if ready == 0:
        return SLICE_NOT_READY.because(detail)
    return (SLICE_READY if ready == len(endpoints) else SLICE_PARTLY_READY).because(detail)
