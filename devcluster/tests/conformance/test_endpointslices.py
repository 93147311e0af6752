"""A Service's EndpointSlices, on devcluster and the real control plane.

The same assertions on both servers (devcluster simulates kube-controller-manager's EndpointSlice controller in
``devcluster/endpointslices.py``; kube runs it). Covers: a Service with a selector gets an EndpointSlice
``<service>-<5 chars>`` controlled by it, labelled ``kubernetes.io/service-name``, ``endpointslice.kubernetes.io/
managed-by`` and with the Service's own labels; ``addressType: IPv4``; one endpoint per ready pod it selects (the pod's
IP, ``ready``, ``targetRef`` to the pod, ``nodeName``) and the Service's ports at their target port; scaling the
Deployment to more pods adds endpoints; deleting the Service deletes its slices (garbage collector).
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import GC_TIMEOUT_S, Kubectl, wait_for

TIMEOUT_S = 30.0
OURS = {"app.kubernetes.io/managed-by": "conformance"}


def get(kubectl: Kubectl, namespace: str, *what: str) -> Any:
    return json.loads(kubectl.run("get", *what, "-n", namespace, "-o", "json").stdout)


def apply(kubectl: Kubectl, body: dict[str, Any]) -> None:
    kubectl.run("apply", "-f", "-", input_text=json.dumps(body))


def slices(kubectl: Kubectl, namespace: str, service: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = get(kubectl, namespace, "endpointslices", "-l", f"kubernetes.io/service-name={service}")["items"]
    return found


def ready_endpoints(kubectl: Kubectl, namespace: str, service: str, count: int) -> dict[str, Any] | None:
    found = slices(kubectl, namespace, service)
    endpoints = [e for s in found for e in s.get("endpoints") or () if (e.get("conditions") or {}).get("ready")]
    return found[0] if len(found) == 1 and len(endpoints) == count else None


def test_a_services_endpointslice_follows_its_pods(kubectl: Kubectl, namespace: str) -> None:
    labels = {"app": "web"}
    container = {"name": "web", "image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 8080}]}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace, "labels": OURS},
        "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }
    apply(kubectl, deployment)
    apply(kubectl, service)
    found = wait_for(lambda: ready_endpoints(kubectl, namespace, "web", 1), TIMEOUT_S, 0.2, "one ready endpoint")
    svc = get(kubectl, namespace, "service", "web")
    assert found["metadata"]["name"].startswith("web-") and len(found["metadata"]["name"]) == len("web-") + 5
    (owner,) = found["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("Service", "web", svc["metadata"]["uid"], True)
    assert found["metadata"]["labels"] == {
        **OURS,
        "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert found["addressType"] == "IPv4"
    assert found["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    (endpoint,) = found["endpoints"]
    (pod,) = [p for p in get(kubectl, namespace, "pods", "-l", "app=web")["items"] if not p["metadata"].get("deletionTimestamp")]
    assert endpoint["addresses"] == [pod["status"]["podIP"]] and endpoint["nodeName"] == pod["spec"]["nodeName"]
    assert endpoint["conditions"]["ready"] is True and endpoint["conditions"]["serving"] is True
    target = endpoint["targetRef"]
    assert (target["kind"], target["name"], target["namespace"], target["uid"]) == (
        "Pod",
        pod["metadata"]["name"],
        namespace,
        pod["metadata"]["uid"],
    )

    kubectl.run("scale", "deployment", "web", "--replicas=2", "-n", namespace)
    wait_for(lambda: ready_endpoints(kubectl, namespace, "web", 2), TIMEOUT_S, 0.2, "two ready endpoints")

    kubectl.run("delete", "service", "web", "-n", namespace)
    wait_for(lambda: not slices(kubectl, namespace, "web"), GC_TIMEOUT_S, 0.2, "the slices garbage-collected")
