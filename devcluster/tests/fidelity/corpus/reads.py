"""Get and list: label and field selectors, limit/continue, resourceVersion semantics, Tables,
PartialObjectMetadata, YAML and all-namespaces lists."""

from __future__ import annotations

from typing import Any

from fidelity.corpus import sequence
from fidelity.transcript import TABLE, Side

PARTIAL = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"


def _rv(reply_json: Any) -> str:
    return str(((reply_json or {}).get("metadata") or {}).get("resourceVersion", ""))


def _seed_secrets(s: Side) -> str:
    base = f"/api/v1/namespaces/{s.ns}/secrets"
    for i, (tier, env) in enumerate((("web", "prod"), ("web", "dev"), ("db", "prod"), ("db", "dev"), ("cache", "")), start=1):
        labels = {"tier": tier, **({"env": env} if env else {})}
        s.send("POST", base, body={"metadata": {"name": f"s{i}", "labels": labels}, "stringData": {"k": str(i)}})
    return base


@sequence("reads.label-selectors")
def label_selectors(s: Side) -> None:
    base = _seed_secrets(s)
    for label, selector in (
        ("equals", "tier=web"),
        ("double-equals", "tier==db"),
        ("not-equals", "tier!=web"),
        ("in", "tier in (web,cache)"),
        ("notin", "tier notin (web)"),
        ("exists", "env"),
        ("not-exists", "!env"),
        ("combined", "tier in (web,db),env=prod"),
        ("gt", "tier>1"),
        ("empty-value", "env="),
    ):
        s.get(f"list-{label}", base, query={"labelSelector": selector})
    for label, selector in (("unclosed", "tier in (web"), ("bad-key", "-bad=x"), ("bad-value", "tier=a b"), ("bad-operator", "tier=~x")):
        s.get(f"list-invalid-{label}", base, query={"labelSelector": selector})


@sequence("reads.field-selectors")
def field_selectors(s: Side) -> None:
    base = _seed_secrets(s)
    s.get("name", base, query={"fieldSelector": "metadata.name=s2"})
    s.get("name-not", base, query={"fieldSelector": "metadata.name!=s2"})
    s.get("namespace", base, query={"fieldSelector": f"metadata.namespace={s.ns}"})
    s.get("secret-type", base, query={"fieldSelector": "type=Opaque"})
    s.get("combined", base, query={"fieldSelector": "metadata.name=s1,type=Opaque", "labelSelector": "tier=web"})
    s.get("unsupported", base, query={"fieldSelector": "spec.nothing=x"})
    s.get("unparsable", base, query={"fieldSelector": "metadata.name"})
    s.get("configmap-unsupported", f"/api/v1/namespaces/{s.ns}/configmaps", query={"fieldSelector": "data.x=y"})
    svc = f"/api/v1/namespaces/{s.ns}/services"
    s.send("POST", svc, body={"metadata": {"name": "cip"}, "spec": {"ports": [{"port": 80}]}})
    s.send("POST", svc, body={"metadata": {"name": "headless"}, "spec": {"clusterIP": "None", "ports": [{"port": 80}]}})
    s.send("POST", svc, body={"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}})
    s.get("services-type", svc, query={"fieldSelector": "spec.type=ExternalName"})
    s.get("services-cluster-ip-none", svc, query={"fieldSelector": "spec.clusterIP=None"})
    s.get("services-type-not", svc, query={"fieldSelector": "spec.type!=ClusterIP"})
    s.get("services-unsupported", svc, query={"fieldSelector": "spec.ports=80"})
    s.get("namespaces-phase", "/api/v1/namespaces", query={"fieldSelector": f"status.phase=Active,metadata.name={s.ns}"})
    s.get("namespaces-unsupported", "/api/v1/namespaces", query={"fieldSelector": "spec.finalizers=kubernetes"})
    s.get("deployments-unsupported", f"/apis/apps/v1/namespaces/{s.ns}/deployments", query={"fieldSelector": "spec.replicas=1"})
    s.get("pods-node", f"/api/v1/namespaces/{s.ns}/pods", query={"fieldSelector": "spec.nodeName=nowhere,status.phase=Running"})
    s.get("pods-unsupported", f"/api/v1/namespaces/{s.ns}/pods", query={"fieldSelector": "spec.hostname=x"})


@sequence("reads.pagination")
def pagination(s: Side) -> None:
    base = _seed_secrets(s)
    first = s.get("page-1", base, query={"limit": "2"})
    token = ((first.json or {}).get("metadata") or {}).get("continue", "")
    s.send("POST", base, body={"metadata": {"name": "s9", "labels": {"tier": "late"}}, "stringData": {"k": "9"}})
    second = s.get("page-2", base, query={"limit": "2", "continue": token})
    token = ((second.json or {}).get("metadata") or {}).get("continue", "")
    s.get("page-3", base, query={"limit": "2", "continue": token})
    s.get("limit-with-selector", base, query={"limit": "1", "labelSelector": "tier=db"})
    s.get("limit-zero", base, query={"limit": "0"})
    s.get("limit-negative", base, query={"limit": "-1"})
    s.get("limit-not-number", base, query={"limit": "ten"})
    s.get("continue-garbage", base, query={"continue": "garbage"})
    s.get("continue-with-rv", base, query={"continue": token or "x", "resourceVersion": "5"})
    s.get("limit-larger", base, query={"limit": "100"})


@sequence("reads.all-namespaces-key-order")
def all_namespaces_key_order(s: Side) -> None:
    """Lists across namespaces follow etcd's key order, ``<ns>/<name>`` compared as strings: ``<ns>-b/x`` sorts
    before ``<ns>/x`` ('-' < '/'); a paginated list too, every object once."""
    other = f"{s.ns}-b"
    s.post("create-namespace-b", "/api/v1/namespaces", {"metadata": {"name": other}})
    s.cleanup(f"/api/v1/namespaces/{other}")
    for namespace, name in ((s.ns, "a"), (other, "b"), (s.ns, "c"), (other, "d")):
        s.send("POST", f"/api/v1/namespaces/{namespace}/configmaps", body={"metadata": {"name": name, "labels": {"fid": s.ns}}})
    selected = {"labelSelector": f"fid={s.ns}"}
    s.get("list", "/api/v1/configmaps", query=selected)
    paged: list[str] = []
    token = ""
    for _ in range(10):  # 4 objects, one a page: every page until no continue token is left (bounded)
        page = s.send("GET", "/api/v1/configmaps", query={**selected, "limit": "1", **({"continue": token} if token else {})}).json or {}
        paged += [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in page.get("items") or ()]
        token = (page.get("metadata") or {}).get("continue", "")
        if not token:
            break
    s.fact("paged-one-at-a-time", [key.replace(s.ns, "<ns>") for key in paged])


@sequence("reads.resource-version")
def resource_version(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "v", "labels": {"pick": "me"}}, "data": {"n": "1"}})
    at_create = _rv(created.json)
    s.patch("modify", f"{base}/v", {"data": {"n": "2"}}, "application/merge-patch+json")
    pick = {"labelSelector": "pick=me"}
    # resourceVersion=0 is "any version": kube-apiserver serves it from its watch cache, which may not have seen the
    # patch yet on a busy machine. A consistent list first (served from that cache once it has caught up with etcd)
    # makes the cache current, so rv-0 compares the same object on both servers.
    s.get("consistent", base, query=pick)
    s.get("rv-0", base, query={**pick, "resourceVersion": "0"})
    s.get("rv-exact-old", base, query={**pick, "resourceVersion": at_create, "resourceVersionMatch": "Exact"})
    s.get("rv-not-older", base, query={**pick, "resourceVersion": at_create, "resourceVersionMatch": "NotOlderThan"})
    s.get("rv-legacy", base, query={**pick, "resourceVersion": at_create})
    s.get("rv-limit-exact", base, query={**pick, "resourceVersion": at_create, "limit": "5"})
    s.get("rv-match-without-rv", base, query={**pick, "resourceVersionMatch": "Exact"})
    s.get("rv-match-bogus", base, query={**pick, "resourceVersion": at_create, "resourceVersionMatch": "Sometime"})
    s.get("rv-exact-zero", base, query={**pick, "resourceVersion": "0", "resourceVersionMatch": "Exact"})
    s.get("rv-not-a-number", base, query={**pick, "resourceVersion": "abc"})
    s.get("rv-too-large", base, query={**pick, "resourceVersion": str(int(at_create) + 10_000_000), "resourceVersionMatch": "NotOlderThan"})
    s.get("rv-compacted-exact", base, query={**pick, "resourceVersion": "1", "resourceVersionMatch": "Exact"})
    s.get("get-rv-0", f"{base}/v", query={"resourceVersion": "0"})
    s.get("get-rv-old", f"{base}/v", query={"resourceVersion": at_create})


@sequence("reads.tables")
def tables(s: Side) -> None:
    cms = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.send("POST", cms, body={"metadata": {"name": "t1", "labels": {"t": "1"}}, "data": {"a": "1", "b": "2"}})
    s.send("POST", cms, body={"metadata": {"name": "t2", "labels": {"t": "1"}}})
    s.get("configmaps-table", cms, query={"labelSelector": "t=1"}, headers={"Accept": TABLE})
    s.get("configmap-table", f"{cms}/t1", headers={"Accept": TABLE})
    s.get("table-include-object", cms, query={"labelSelector": "t=1", "includeObject": "Object"}, headers={"Accept": TABLE})
    s.get("table-include-none", cms, query={"labelSelector": "t=1", "includeObject": "None"}, headers={"Accept": TABLE})
    s.get("table-v1beta1", cms, query={"labelSelector": "t=1"}, headers={"Accept": "application/json;as=Table;v=v1beta1;g=meta.k8s.io"})
    s.get(
        "table-fallback",
        cms,
        query={"labelSelector": "t=1"},
        headers={"Accept": "application/json;as=Table;v=v9;g=meta.k8s.io, application/json"},
    )
    s.get("partial", f"{cms}/t1", headers={"Accept": PARTIAL})
    s.get("partial-list", cms, query={"labelSelector": "t=1"}, headers={"Accept": PARTIAL_LIST})
    s.get("list-yaml", cms, query={"labelSelector": "t=1"}, headers={"Accept": "application/yaml"})
    svc = f"/api/v1/namespaces/{s.ns}/services"
    s.send(
        "POST",
        svc,
        body={
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP", "name": "dns"}],
            },
        },
    )
    s.get("services-table", svc, headers={"Accept": TABLE})
    secrets = f"/api/v1/namespaces/{s.ns}/secrets"
    s.send("POST", secrets, body={"metadata": {"name": "sec"}, "stringData": {"a": "b"}})
    s.get("secrets-table", secrets, headers={"Accept": TABLE})
    s.get("namespace-table", f"/api/v1/namespaces/{s.ns}", headers={"Accept": TABLE})
    s.get("serviceaccounts-table", f"/api/v1/namespaces/{s.ns}/serviceaccounts", headers={"Accept": TABLE})
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{s.ns}/leases"
    s.send("POST", leases, body={"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 10}})
    s.get("leases-table", leases, headers={"Accept": TABLE})
    roles = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{s.ns}/roles"
    s.send("POST", roles, body={"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
    s.get("roles-table", roles, headers={"Accept": TABLE})
    bindings = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{s.ns}/rolebindings"
    s.send(
        "POST",
        bindings,
        body={
            "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    s.get("rolebindings-table", bindings, headers={"Accept": TABLE})
    ingresses = f"/apis/networking.k8s.io/v1/namespaces/{s.ns}/ingresses"
    s.send(
        "POST",
        ingresses,
        body={
            "metadata": {"name": "ing"},
            "spec": {
                "rules": [
                    {
                        "host": "a.example.com",
                        "http": {
                            "paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]
                        },
                    }
                ]
            },
        },
    )
    s.get("ingresses-table", ingresses, headers={"Accept": TABLE})
    pdbs = f"/apis/policy/v1/namespaces/{s.ns}/poddisruptionbudgets"
    s.send("POST", pdbs, body={"metadata": {"name": "pdb"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    s.get("pdbs-table", pdbs, headers={"Accept": TABLE}, ignore=("body.rows",))
    netpols = f"/apis/networking.k8s.io/v1/namespaces/{s.ns}/networkpolicies"
    s.send("POST", netpols, body={"metadata": {"name": "np"}, "spec": {"podSelector": {"matchLabels": {"app": "web"}}}})
    s.get("networkpolicies-table", netpols, headers={"Accept": TABLE})


@sequence("reads.all-namespaces")
def all_namespaces(s: Side) -> None:
    label = f"fid={s.ns}"
    s.send("POST", f"/api/v1/namespaces/{s.ns}/configmaps", body={"metadata": {"name": "b", "labels": {"fid": s.ns}}})
    s.send("POST", f"/api/v1/namespaces/{s.ns}/configmaps", body={"metadata": {"name": "a", "labels": {"fid": s.ns}}})
    s.get("list", "/api/v1/configmaps", query={"labelSelector": label})
    s.get("list-default-ns", "/api/v1/namespaces/default/configmaps", query={"labelSelector": label})
    s.get("list-table", "/api/v1/configmaps", query={"labelSelector": label}, headers={"Accept": TABLE})
    s.get("cluster-scoped-in-namespace", f"/api/v1/namespaces/{s.ns}/namespaces")
    s.get("unknown-resource", f"/api/v1/namespaces/{s.ns}/nonsense")
    s.get("unknown-group", "/apis/nonsense.example.com/v1/things")
    s.get("subresource-unknown", f"/api/v1/namespaces/{s.ns}/configmaps/a/status")
