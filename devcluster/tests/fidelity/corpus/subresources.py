"""Status and scale subresources of built-in and custom resources: what each endpoint may change,
what it returns, generation, validation, missing objects."""

from __future__ import annotations

from fidelity.corpus import sequence
from fidelity.corpus.common import group_of, install_crd, widget, widget_crd
from fidelity.transcript import DEPLOYMENT_CONTROLLED, JSON_PATCH, MERGE, STRATEGIC, Side


@sequence("subresources.custom-status-and-scale")
def custom_status_and_scale(s: Side) -> None:
    path = install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    created = s.post("create", path, {**widget("w", {"size": 1, "replicas": 2}, group), "status": {"ready": True}})
    body = created.json or {}
    s.put("update-main-with-status", f"{path}/w", {**body, "spec": {**body.get("spec", {}), "size": 2}, "status": {"ready": True}})
    current = s.send("GET", f"{path}/w").json or {}
    s.put(
        "update-status-with-spec",
        f"{path}/w/status",
        {**current, "spec": {"size": 9}, "status": {"ready": True, "replicas": 2, "selector": "app=w"}},
    )
    s.patch("patch-status", f"{path}/w/status", {"status": {"ready": False}}, MERGE)
    s.patch("patch-status-invalid", f"{path}/w/status", {"status": {"replicas": "many"}}, MERGE)
    s.get("get-status", f"{path}/w/status")
    s.get("get-scale", f"{path}/w/scale")
    s.patch("patch-scale", f"{path}/w/scale", {"spec": {"replicas": 5}}, MERGE)
    scale = s.send("GET", f"{path}/w/scale").json or {}
    s.put("put-scale", f"{path}/w/scale", {**scale, "spec": {"replicas": 4}})
    s.put("put-scale-stale", f"{path}/w/scale", {**scale, "spec": {"replicas": 3}})
    s.patch("json-patch-scale", f"{path}/w/scale", [{"op": "replace", "path": "/spec/replicas", "value": 6}], JSON_PATCH)
    s.patch("patch-scale-negative", f"{path}/w/scale", {"spec": {"replicas": -1}}, MERGE)
    s.get("after", f"{path}/w")
    s.get("status-missing", f"{path}/absent/status")
    s.get("scale-missing", f"{path}/absent/scale")
    s.get("unknown-subresource", f"{path}/w/logs")


@sequence("subresources.deployment")
def deployment(s: Side) -> None:
    s.default_ignore = DEPLOYMENT_CONTROLLED
    base = f"/apis/apps/v1/namespaces/{s.ns}/deployments"
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}},
        },
    }
    s.post("create", base, body)
    s.get("get-scale", f"{base}/d/scale", ignore=("body.status",))
    scaled = s.patch("patch-scale", f"{base}/d/scale", {"spec": {"replicas": 3}}, MERGE, ignore=("body.status",))
    s.fact("scale-response-kind", (scaled.json or {}).get("kind"))
    s.patch("strategic-scale", f"{base}/d/scale", {"spec": {"replicas": 2}}, STRATEGIC, ignore=("body.status",))
    s.patch(
        "apply-scale",
        f"{base}/d/scale",
        {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": 4}},
        "application/apply-patch+yaml",
        query={"fieldManager": "scaler"},
        ignore=("body.status",),
    )
    s.put(
        "put-scale-invalid",
        f"{base}/d/scale",
        {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": -2}},
    )
    s.put(
        "put-scale-wrong-name",
        f"{base}/d/scale",
        {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "other"}, "spec": {"replicas": 2}},
    )
    s.get("after-scale", f"{base}/d")
    s.patch("status-patch-spec-ignored", f"{base}/d/status", {"spec": {"replicas": 9}}, MERGE)
    s.get("scale-missing", f"{base}/absent/scale")


@sequence("subresources.service-and-namespace-status")
def service_and_namespace_status(s: Side) -> None:
    svc = f"/api/v1/namespaces/{s.ns}/services"
    s.post(
        "create-svc",
        svc,
        {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}},
        ignore=("body.spec.ports[0].nodePort",),
    )
    s.patch(
        "svc-status",
        f"{svc}/lb/status",
        {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}},
        MERGE,
        ignore=("body.spec.ports[0].nodePort",),
    )
    s.patch(
        "svc-status-invalid",
        f"{svc}/lb/status",
        {"status": {"loadBalancer": {"ingress": [{"ip": "not-an-ip"}]}}},
        MERGE,
        ignore=("body.spec.ports[0].nodePort",),
    )
    s.get("svc-get-status", f"{svc}/lb/status", ignore=("body.spec.ports[0].nodePort",))
    s.patch("ns-status", f"/api/v1/namespaces/{s.ns}/status", {"status": {"phase": "Terminating"}}, MERGE)
    s.get("ns-get-status", f"/api/v1/namespaces/{s.ns}/status")
    s.get("configmap-status-404", f"/api/v1/namespaces/{s.ns}/configmaps/x/status")
