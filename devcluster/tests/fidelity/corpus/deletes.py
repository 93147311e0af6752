"""Delete and deletecollection: preconditions, dry-run (query parameter AND DeleteOptions body),
option validation, response shapes (Status or the object), objects held by finalizers.

Dry-run in the body is the data-loss case: a server that ignores ``{"dryRun": ["All"]}`` really
deletes — ``kubectl delete ns x --dry-run=server`` (``corpus/kubectl.py``) and the official Python
client's ``body=V1DeleteOptions(dry_run=["All"])`` send exactly that body. Every dry-run delete is
followed by a read proving the object is still there.
"""

from __future__ import annotations

from typing import Any

from fidelity.corpus import sequence
from fidelity.transcript import Side

DELETE_OPTIONS = {"apiVersion": "v1", "kind": "DeleteOptions"}


def _uid(reply_json: Any) -> str:
    return str(((reply_json or {}).get("metadata") or {}).get("uid", ""))


def _rv(reply_json: Any) -> str:
    return str(((reply_json or {}).get("metadata") or {}).get("resourceVersion", ""))


@sequence("deletes.preconditions")
def preconditions(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "p"}, "data": {"a": "b"}})
    uid, rv = _uid(created.json), _rv(created.json)
    s.delete("wrong-uid", f"{base}/p", {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})
    s.delete("wrong-rv", f"{base}/p", {"preconditions": {"resourceVersion": "1"}})
    s.delete("right-both", f"{base}/p", {**DELETE_OPTIONS, "preconditions": {"uid": uid, "resourceVersion": rv}})
    s.get("get-after", f"{base}/p")
    s.delete("missing", f"{base}/p")
    svc = s.post("create-svc", f"/api/v1/namespaces/{s.ns}/services", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    s.delete("svc-right-uid", f"/api/v1/namespaces/{s.ns}/services/svc", {"preconditions": {"uid": _uid(svc.json)}})


@sequence("deletes.dry-run-query")
def dry_run_query(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "keep"}, "data": {"a": "b"}})
    s.delete("dry-run", f"{base}/keep", query={"dryRun": "All"})
    s.get("still-there", f"{base}/keep")
    s.delete("dry-run-bad-value", f"{base}/keep", query={"dryRun": "Yes"})
    s.post("create-svc", f"/api/v1/namespaces/{s.ns}/services", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    s.delete("svc-dry-run", f"/api/v1/namespaces/{s.ns}/services/svc", query={"dryRun": "All"})
    s.get("svc-still-there", f"/api/v1/namespaces/{s.ns}/services/svc")
    s.delete("namespace-dry-run", f"/api/v1/namespaces/{s.ns}", query={"dryRun": "All"})
    s.get("namespace-still-active", f"/api/v1/namespaces/{s.ns}")


@sequence("deletes.dry-run-body")
def dry_run_body(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "keep"}, "data": {"a": "b"}})
    s.delete("dry-run-body", f"{base}/keep", {**DELETE_OPTIONS, "dryRun": ["All"]})
    s.get("still-there", f"{base}/keep")
    s.delete("dry-run-body-no-kind", f"{base}/keep", {"dryRun": ["All"], "propagationPolicy": "Background"})
    s.get("still-there-2", f"{base}/keep")
    s.delete("dry-run-body-bad-value", f"{base}/keep", {"dryRun": ["Some"]})
    s.delete("dry-run-body-and-query", f"{base}/keep", {"dryRun": ["All"]}, query={"dryRun": "All"})
    s.get("still-there-3", f"{base}/keep")
    s.post("create-finalized", base, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    s.delete("dry-run-finalized", f"{base}/held", {"dryRun": ["All"]})
    s.get("finalized-not-terminating", f"{base}/held")
    s.patch("release", f"{base}/held", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
    s.delete("namespace-dry-run-body", f"/api/v1/namespaces/{s.ns}", {**DELETE_OPTIONS, "dryRun": ["All"]})
    s.get("namespace-still-active", f"/api/v1/namespaces/{s.ns}")
    s.get("content-still-there", f"{base}/keep")
    # A body without dryRun and the query's dryRun=All: kube reads the options from the body alone and
    # deletes for real (what cluster.CachedClient.delete once did: the dryRun must be in the body).
    s.post("create-query-only", base, {"metadata": {"name": "query-only"}})
    s.delete("dry-run-query-with-body", f"{base}/query-only", {"propagationPolicy": "Background"}, query={"dryRun": "All"})
    s.get("query-only-gone", f"{base}/query-only")


@sequence("deletes.python-client-dry-run")
def python_client_dry_run(s: Side) -> None:
    from kubernetes import client, config

    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "keep"}, "data": {"a": "b"}})
    api = config.new_client_from_config(config_file=str(s.endpoint.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        status = core.delete_namespaced_config_map("keep", s.ns, body=client.V1DeleteOptions(dry_run=["All"]))
        s.fact("configmap-dry-run-status", api.sanitize_for_serialization(status).get("status"))
        s.get("configmap-still-there", f"{base}/keep")
        core.delete_collection_namespaced_config_map(s.ns, body=client.V1DeleteOptions(dry_run=["All"]), label_selector="!nothing")
        s.get("configmap-still-there-after-collection", f"{base}/keep")
        ns = core.delete_namespace(s.ns, body=client.V1DeleteOptions(dry_run=["All"]))
        s.fact("namespace-dry-run-phase", (api.sanitize_for_serialization(ns).get("status") or {}).get("phase"))
        s.get("namespace-still-there", f"/api/v1/namespaces/{s.ns}")
    finally:
        api.close()


@sequence("deletes.collection")
def collection(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/secrets"
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        s.post(f"create-{name}", base, {"metadata": {"name": name, "labels": {"tier": tier}}, "stringData": {"k": "v"}})
    s.delete("collection-dry-run-query", base, query={"labelSelector": "tier=x", "dryRun": "All"})
    s.get("list-after-dry-query", base)
    s.delete("collection-dry-run-body", base, {**DELETE_OPTIONS, "dryRun": ["All"]}, query={"labelSelector": "tier=x"})
    s.get("list-after-dry-body", base)
    s.delete("collection-selector", base, query={"labelSelector": "tier=x"})
    s.get("list-after", base)
    s.delete("collection-field-selector", base, query={"fieldSelector": "metadata.name=c"})
    s.get("list-empty", base)
    s.delete("collection-bad-selector", base, query={"labelSelector": "tier in (x"})
    s.delete("collection-namespaces", "/api/v1/namespaces", query={"labelSelector": "fidelity-none=1", "dryRun": "All"})


@sequence("deletes.options")
def options(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "o"}})
    s.delete("bad-policy", f"{base}/o", {"propagationPolicy": "Sideways"})
    s.delete("policy-and-orphan", f"{base}/o", {"propagationPolicy": "Orphan", "orphanDependents": True})
    s.delete("policy-query-bad", f"{base}/o", query={"propagationPolicy": "Nope"})
    s.delete("grace-negative", f"{base}/o", {"gracePeriodSeconds": -5})
    s.delete("body-not-json", f"{base}/o", b"{nope")
    s.delete("body-wrong-kind", f"{base}/o", {"apiVersion": "v1", "kind": "ConfigMap"})
    s.get("still-there", f"{base}/o")
    s.delete("orphan-query", f"{base}/o", query={"orphanDependents": "false"})
    s.get("gone", f"{base}/o")


@sequence("deletes.finalizers")
def finalizers(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "f", "finalizers": ["example.com/hold"]}})
    s.delete("delete-held", f"{base}/f")
    s.get("terminating", f"{base}/f")
    s.delete("delete-again", f"{base}/f")
    s.patch(
        "add-finalizer-refused",
        f"{base}/f",
        {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}},
        "application/merge-patch+json",
    )
    s.patch("change-data-while-terminating", f"{base}/f", {"data": {"a": "b"}}, "application/merge-patch+json")
    s.patch("release", f"{base}/f", {"metadata": {"finalizers": []}}, "application/merge-patch+json")
    s.get("gone", f"{base}/f")
    s.post("create-bad-finalizer", base, {"metadata": {"name": "bad", "finalizers": ["no-slash"]}})
    s.post(
        "create-svc",
        f"/api/v1/namespaces/{s.ns}/services",
        {"metadata": {"name": "svc", "finalizers": ["example.com/hold"]}, "spec": {"ports": [{"port": 80}]}},
    )
    s.delete("svc-held", f"/api/v1/namespaces/{s.ns}/services/svc")
    s.patch("svc-release", f"/api/v1/namespaces/{s.ns}/services/svc", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
