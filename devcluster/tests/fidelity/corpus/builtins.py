"""Built-in kinds one by one: what create returns (defaults, server-set fields) and what each kind's
validation rejects — Namespaces, Events, Pods, ServiceAccounts, Leases, RBAC, Ingresses,
NetworkPolicies, PodDisruptionBudgets."""

from __future__ import annotations

from fidelity.corpus import sequence
from fidelity.transcript import MERGE, Side


@sequence("builtins.namespace", namespaced=False)
def namespace(s: Side) -> None:
    created = s.post("create", "/api/v1/namespaces", {"metadata": {"name": s.ns, "labels": {"team": "a"}}})
    s.cleanup(f"/api/v1/namespaces/{s.ns}")
    s.get("get", f"/api/v1/namespaces/{s.ns}")
    s.patch("change-name-label", f"/api/v1/namespaces/{s.ns}", {"metadata": {"labels": {"kubernetes.io/metadata.name": "other"}}}, MERGE)
    s.patch("drop-name-label", f"/api/v1/namespaces/{s.ns}", {"metadata": {"labels": {"kubernetes.io/metadata.name": None}}}, MERGE)
    s.get("selector-by-name-label", "/api/v1/namespaces", query={"labelSelector": f"kubernetes.io/metadata.name={s.ns}"})
    s.put("update", f"/api/v1/namespaces/{s.ns}", {**(created.json or {}), "metadata": {"name": s.ns, "labels": {"team": "b"}}})
    s.post("create-bad-name", "/api/v1/namespaces", {"metadata": {"name": "has.dots"}})
    s.post("create-dry-run", "/api/v1/namespaces", {"metadata": {"name": f"{s.ns}-dry"}}, query={"dryRun": "All"})
    s.post("create-generate-name", "/api/v1/namespaces", {"metadata": {"generateName": f"{s.ns}-g-"}}, query={"dryRun": "All"})
    s.post(
        "create-spec-finalizer-bad",
        "/api/v1/namespaces",
        {"metadata": {"name": f"{s.ns}-f"}, "spec": {"finalizers": ["bad finalizer"]}},
        query={"dryRun": "All"},
    )


@sequence("builtins.namespace-content")
def namespace_content(s: Side) -> None:
    """What a new namespace holds before anyone writes to it (the controllers' doing)."""
    s.get("configmaps", f"/api/v1/namespaces/{s.ns}/configmaps")
    s.get("serviceaccounts", f"/api/v1/namespaces/{s.ns}/serviceaccounts")
    s.get("secrets", f"/api/v1/namespaces/{s.ns}/secrets")


@sequence("builtins.events")
def events(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/events"
    involved = {"kind": "ConfigMap", "namespace": s.ns, "name": "cm", "apiVersion": "v1"}
    for label, event_type in (("normal", "Normal"), ("warning", "Warning"), ("custom", "Info"), ("empty", "")):
        body = {"metadata": {"name": f"ev-{label}"}, "involvedObject": involved, "reason": "Tested", "message": "m", "type": event_type}
        s.post(f"create-{label}", base, body)
    s.post("create-no-involved", base, {"metadata": {"name": "ev-none"}, "reason": "R"})
    s.post("create-other-namespace", base, {"metadata": {"name": "ev-other"}, "involvedObject": {**involved, "namespace": "elsewhere"}})
    s.post(
        "create-full",
        base,
        {
            "metadata": {"name": "ev-full"},
            "involvedObject": involved,
            "reason": "Full",
            "message": "all fields",
            "type": "Normal",
            "source": {"component": "fidelity"},
            "count": 3,
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:01:00Z",
            "reportingComponent": "fidelity",
            "reportingInstance": "x",
        },
    )
    s.get("by-type", base, query={"fieldSelector": "type=Info"})
    s.get("by-involved", base, query={"fieldSelector": "involvedObject.name=cm,involvedObject.kind=ConfigMap,reason=Full"})
    s.get("by-source", base, query={"fieldSelector": "source=fidelity"})
    s.get("by-reporting", base, query={"fieldSelector": "reportingComponent=fidelity"})


@sequence("builtins.pod")
def pod(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/pods"
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
    s.post("create-dry-run", base, body, query={"dryRun": "All"})
    s.post("create-no-containers", base, {"metadata": {"name": "empty"}, "spec": {"containers": []}}, query={"dryRun": "All"})
    s.post("create-no-image", base, {"metadata": {"name": "noimg"}, "spec": {"containers": [{"name": "c"}]}}, query={"dryRun": "All"})
    s.post(
        "create-missing-sa",
        base,
        {"metadata": {"name": "sa"}, "spec": {"serviceAccountName": "nobody", "containers": [{"name": "c", "image": "x"}]}},
        query={"dryRun": "All"},
    )
    s.post(
        "create-probes-and-ports",
        base,
        {
            "metadata": {"name": "probes"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "nginx:latest",
                        "ports": [{"containerPort": 80}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                        "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    }
                ],
                "automountServiceAccountToken": False,
            },
        },
        query={"dryRun": "All"},
    )


@sequence("builtins.serviceaccount-lease-rbac")
def serviceaccount_lease_rbac(s: Side) -> None:
    ns = s.ns
    s.get("default-serviceaccount", f"/api/v1/namespaces/{ns}/serviceaccounts/default")
    s.post(
        "serviceaccount", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": "robot"}, "automountServiceAccountToken": False}
    )
    s.post(
        "lease",
        f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
        {
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2024-01-01T00:00:00.000000Z"},
        },
    )
    s.post(
        "lease-bad-duration",
        f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
        {"metadata": {"name": "bad"}, "spec": {"leaseDurationSeconds": 0}},
    )
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    s.post(
        "role",
        f"{rbac}/namespaces/{ns}/roles",
        {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]},
    )
    s.post(
        "role-no-verbs",
        f"{rbac}/namespaces/{ns}/roles",
        {"metadata": {"name": "r2"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"]}]},
    )
    s.post(
        "rolebinding",
        f"{rbac}/namespaces/{ns}/rolebindings",
        {
            "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": ns}],
        },
    )
    s.post("rolebinding-no-roleref", f"{rbac}/namespaces/{ns}/rolebindings", {"metadata": {"name": "rb2"}, "subjects": []})
    rb = s.send("GET", f"{rbac}/namespaces/{ns}/rolebindings/rb").json or {}
    s.put(
        "rolebinding-change-roleref",
        f"{rbac}/namespaces/{ns}/rolebindings/rb",
        {**rb, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "other"}},
    )
    s.post(
        "clusterrole",
        f"{rbac}/clusterroles",
        {"metadata": {"name": f"{ns}-cr"}, "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
        query={"dryRun": "All"},
    )
    s.post(
        "clusterrole-aggregation",
        f"{rbac}/clusterroles",
        {"metadata": {"name": f"{ns}-agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": ns}}]}},
        query={"dryRun": "All"},
    )


@sequence("builtins.networking-policy")
def networking_policy(s: Side) -> None:
    ns = s.ns
    net = f"/apis/networking.k8s.io/v1/namespaces/{ns}"
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    s.post(
        "ingress",
        f"{net}/ingresses",
        {
            "metadata": {"name": "i"},
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}],
            },
        },
    )
    s.post(
        "ingress-no-path-type",
        f"{net}/ingresses",
        {"metadata": {"name": "i2"}, "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": backend}]}}]}},
    )
    s.post(
        "ingress-bad-path-type",
        f"{net}/ingresses",
        {"metadata": {"name": "i3"}, "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Glob", "backend": backend}]}}]}},
    )
    s.post("ingress-default-backend", f"{net}/ingresses", {"metadata": {"name": "i4"}, "spec": {"defaultBackend": backend}})
    s.post(
        "networkpolicy",
        f"{net}/networkpolicies",
        {
            "metadata": {"name": "np"},
            "spec": {"podSelector": {}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"a": "b"}}}], "ports": [{"port": 80}]}]},
        },
    )
    pdb = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    s.post(
        "pdb",
        pdb,
        {"metadata": {"name": "pdb"}, "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "x"}}}},
        ignore=("body.status",),
    )
    s.post("pdb-both", pdb, {"metadata": {"name": "pdb2"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}})
