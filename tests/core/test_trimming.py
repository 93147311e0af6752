"""What the API's cache keeps of the children it only draws (backend.core.trimming).

Behaviours: a workload loses its pod template and keeps replicas and selector; a Pod keeps its containers' and init
containers' names, its node and only the volumes that mount claims; every trimmed object keeps identity, ownership,
labels and times of its metadata and its whole status, and loses annotations and the rest; objects without a spec or
metadata pass through; every cached kind of the reconciler's children and their descendants is trimmed.
"""

from __future__ import annotations

import copy
from typing import Any

from backend.core import trimming
from backend.core.access import CHILDREN, GRANDCHILDREN
from kinds import workloads

META = {
    "name": "web",
    "namespace": "team",
    "uid": "u-1",
    "resourceVersion": "7",
    "generation": 3,
    "creationTimestamp": "2026-01-01T00:00:00Z",
    "labels": {"app": "web"},
    "ownerReferences": [{"kind": "Darkroom", "name": "web", "uid": "d-1", "controller": True}],
    "annotations": {"deployment.kubernetes.io/revision": "4", "big": "x" * 500},
    "finalizers": ["example.com/f"],
}
STATUS = {"replicas": 2, "readyReplicas": 1, "conditions": [{"type": "Available", "status": "False"}]}


def test_a_workload_loses_its_pod_template_only() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i", "env": []}]}}
    obj: dict[str, Any] = {"kind": "Deployment", "metadata": dict(META), "status": STATUS,
                           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}}  # fmt: skip
    trimmed = trimming.trim_workload(obj)
    assert trimmed["spec"] == {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}
    assert trimmed["status"] == STATUS and trimmed["kind"] == "Deployment"
    assert trimmed["metadata"] == {k: v for k, v in META.items() if k not in ("annotations", "finalizers")}


def test_a_pod_keeps_container_names_its_node_and_claims() -> None:
    spec = {
        "containers": [{"name": "app", "image": "i", "env": [{"name": "SECRETISH", "value": "v"}]}, {"name": "sidecar"}],
        "initContainers": [{"name": "init", "image": "i"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}, {"name": "token", "projected": {}}],
        "nodeName": "node-1",
        "tolerations": [{"key": "k"}],
    }
    status = {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "startTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "m", "lastTransitionTime": "t"}],
        "containerStatuses": [{"name": "app", "ready": False, "restartCount": 3, "image": "i", "imageID": "sha",
                               "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}, "lastState": {}}],
    }  # fmt: skip
    trimmed = trimming.trim_pod({"metadata": dict(META), "spec": spec, "status": status})
    assert trimmed["spec"] == {
        "containers": [{"name": "app"}, {"name": "sidecar"}],
        "initContainers": [{"name": "init"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}],
        "nodeName": "node-1",
    }
    assert trimmed["status"] == {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "m"}],
        "containerStatuses": [
            {"name": "app", "ready": False, "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}}
        ],
    }
    assert workloads.pod_state(trimmed) == workloads.pod_state({"status": status}) and workloads.restarts(trimmed) == 3
    bare = trimming.trim_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert bare["spec"] == {"containers": [{"name": "c"}]}  # no init containers, claims or node: none invented


def test_an_endpointslice_keeps_its_endpoints_conditions_and_ports() -> None:
    whole = {"metadata": dict(META), "addressType": "IPv4", "ports": [{"port": 80}],
             "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}, "targetRef": {"kind": "Pod"}},
                           {"addresses": ["10.0.0.2"], "conditions": {"ready": False}, "nodeName": "n"}]}  # fmt: skip
    trimmed = trimming.trim_endpointslice(copy.deepcopy(whole))
    assert trimmed["endpoints"] == [{"conditions": {"ready": True}}, {"conditions": {"ready": False}}]
    assert workloads.endpointslice_state(trimmed) == workloads.endpointslice_state(whole)


def test_objects_without_spec_or_metadata_pass() -> None:
    assert trimming.trim_workload({"kind": "ReplicaSet"}) == {"kind": "ReplicaSet"}
    assert trimming.trim_pod({"kind": "Pod"}) == {"kind": "Pod"}
    assert trimming.trim_metadata({"metadata": {"name": "s", "annotations": {}}, "spec": {"ports": [1]}}) == {
        "metadata": {"name": "s"},
        "spec": {"ports": [1]},
    }


def test_every_cached_child_kind_is_trimmed() -> None:
    assert frozenset((*CHILDREN, *GRANDCHILDREN)) == trimming.TRIMMED
