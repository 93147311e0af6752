"""Create and update: success shapes, defaults, conflicts, preconditions, names, dry-run, body checks."""

from __future__ import annotations

from typing import Any

from fidelity.corpus import sequence
from fidelity.transcript import DEPLOYMENT_CONTROLLED, Side


def cm(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **extra.pop("metadata", {})}, **extra}


def rv(reply_json: Any) -> str:
    return str(((reply_json or {}).get("metadata") or {}).get("resourceVersion", ""))


@sequence("writes.configmap-create-update")
def configmap_create_update(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, cm("one", metadata={"labels": {"app": "x"}, "annotations": {"a": "b"}}, data={"k": "v"}))
    s.get("get", f"{base}/one")
    s.post("create-again", base, cm("one"))
    first = created.json
    s.put("update-stale", f"{base}/one", {**first, "metadata": {**first["metadata"], "resourceVersion": "1"}, "data": {"k": "w"}})
    updated = s.put("update", f"{base}/one", {**first, "data": {"k": "w"}})
    noop = s.put("update-noop", f"{base}/one", updated.json)
    s.fact("noop-keeps-rv", rv(noop.json) == rv(updated.json))
    unconditional = {k: v for k, v in updated.json.items() if k != "metadata"}
    unconditional["metadata"] = {"name": "one", "labels": {"app": "y"}}
    s.put("update-unconditional", f"{base}/one", unconditional)
    s.put("update-wrong-name", f"{base}/one", cm("two", data={"k": "v"}))
    s.put("update-wrong-namespace", f"{base}/one", cm("one", metadata={"namespace": "elsewhere"}))
    s.put("update-uid-mismatch", f"{base}/one", cm("one", metadata={"uid": "00000000-0000-0000-0000-000000000000"}))
    s.put("update-missing", f"{base}/absent", cm("absent"))
    s.get("get-missing", f"{base}/absent")
    s.post("create-wrong-kind", base, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "w"}})
    s.post("create-wrong-version", base, {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "w"}})
    s.post("create-no-kind", base, {"metadata": {"name": "nokind"}, "data": {"a": "b"}})
    s.post("create-not-json", base, b"{not json")
    s.post("create-array", base, [1, 2])
    s.post("create-bad-name", base, cm("Bad_Name"))
    s.post("create-no-name", base, cm(""))
    s.post("create-long-name", base, cm("x" * 254))
    s.post("create-bad-label", base, cm("badlabel", metadata={"labels": {"bad key!": "v"}}))
    s.post("create-bad-data-key", base, cm("badkey", data={"bad key": "v"}))
    s.post("create-missing-namespace", "/api/v1/namespaces/does-not-exist-here/configmaps", cm("x"))
    s.post("create-namespace-mismatch", base, cm("mismatch", metadata={"namespace": "elsewhere"}))
    s.post("create-with-system-fields", base, cm("sys", metadata={"uid": "abc", "resourceVersion": "5", "generation": 7}))
    s.post("create-yaml", base, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  a: b\n", content_type="application/yaml")
    s.post("create-unknown-content-type", base, b"name=x", content_type="application/x-www-form-urlencoded")
    s.get("get-yaml", f"{base}/yml", headers={"Accept": "application/yaml"})
    s.get("get-not-acceptable", f"{base}/yml", headers={"Accept": "text/html"})


@sequence("writes.generate-name")
def generate_name(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    generated = s.post("create", base, {"metadata": {"generateName": "gen-"}, "data": {"a": "b"}})
    s.get("get", f"{base}/{(generated.json or {}).get('metadata', {}).get('name', 'x')}")
    s.post("create-dry-run", base, {"metadata": {"generateName": "dry-"}}, query={"dryRun": "All"})
    s.post("create-bad-prefix", base, {"metadata": {"generateName": "Bad_"}})
    s.post("create-name-and-prefix", base, {"metadata": {"name": "both", "generateName": "gen-"}})


@sequence("writes.dry-run")
def dry_run(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create-dry", base, cm("dry", data={"a": "b"}), query={"dryRun": "All"})
    s.get("get-after-dry-create", f"{base}/dry")
    s.post("create-dry-bad-value", base, cm("dry"), query={"dryRun": "Yes"})
    created = s.post("create", base, cm("real", data={"a": "b"}))
    dry = s.put("update-dry", f"{base}/real", {**created.json, "data": {"a": "c"}}, query={"dryRun": "All"})
    s.fact("dry-update-keeps-rv", rv(dry.json) == rv(created.json))
    s.get("get-after-dry-update", f"{base}/real")
    s.patch("patch-dry", f"{base}/real", {"data": {"a": "d"}}, "application/merge-patch+json", query={"dryRun": "All"})
    s.get("get-after-dry-patch", f"{base}/real")
    s.post("create-dry-existing", base, cm("real"), query={"dryRun": "All"})
    s.post("create-dry-invalid", base, cm("Bad_Name"), query={"dryRun": "All"})


@sequence("writes.secret")
def secret(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/secrets"
    created = s.post("create", base, {"metadata": {"name": "s"}, "stringData": {"user": "admin"}, "data": {"pw": "c2VjcmV0"}})
    s.post("create-bad-base64", base, {"metadata": {"name": "bad"}, "data": {"pw": "not base64!"}})
    s.post("create-typed", base, {"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}})
    s.post("create-tls-missing-keys", base, {"metadata": {"name": "tls2"}, "type": "kubernetes.io/tls", "data": {}})
    s.put("update-type", f"{base}/s", {**created.json, "type": "Other"})
    s.post("create-immutable", base, {"metadata": {"name": "imm"}, "immutable": True, "data": {"a": "YQ=="}})
    s.patch("patch-immutable-data", f"{base}/imm", {"data": {"a": "Yg=="}}, "application/merge-patch+json")
    s.patch("patch-immutable-flag", f"{base}/imm", {"immutable": False}, "application/merge-patch+json")


@sequence("writes.configmap-immutable")
def configmap_immutable(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, cm("imm", immutable=True, data={"a": "b"}, binaryData={"bin": "AAE="}))
    s.patch("change-data", f"{base}/imm", {"data": {"a": "c"}}, "application/merge-patch+json")
    s.patch("change-flag", f"{base}/imm", {"immutable": False}, "application/merge-patch+json")
    s.patch("change-labels", f"{base}/imm", {"metadata": {"labels": {"x": "y"}}}, "application/merge-patch+json")
    s.post("create-duplicate-keys", base, cm("dup", data={"a": "b"}, binaryData={"a": "AAE="}))


@sequence("writes.service")
def service(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/services"
    created = s.post("create", base, {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    s.post("create-two-ports-unnamed", base, {"metadata": {"name": "two"}, "spec": {"ports": [{"port": 80}, {"port": 81}]}})
    s.post("create-no-ports", base, {"metadata": {"name": "noports"}, "spec": {"selector": {"app": "x"}}})
    s.post("create-bad-port", base, {"metadata": {"name": "badport"}, "spec": {"ports": [{"port": 70000}]}})
    s.post("create-bad-name", base, {"metadata": {"name": "web.dots"}, "spec": {"ports": [{"port": 80}]}})
    s.post("create-headless", base, {"metadata": {"name": "headless"}, "spec": {"clusterIP": "None", "selector": {"app": "h"}}})
    s.post("create-external-name", base, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}})
    s.post(
        "create-nodeport",
        base,
        {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "name": "http", "targetPort": "http"}]}},
    )
    body = created.json or {}
    spec = {**body.get("spec", {}), "clusterIP": "10.96.0.99", "clusterIPs": ["10.96.0.99"]}
    s.put("update-cluster-ip", f"{base}/web", {**body, "spec": spec})
    s.patch("patch-selector", f"{base}/web", {"spec": {"selector": {"app": "other"}}}, "application/merge-patch+json")
    s.delete("delete", f"{base}/web")


@sequence("writes.deployment")
def deployment(s: Side) -> None:
    s.default_ignore = DEPLOYMENT_CONTROLLED
    base = f"/apis/apps/v1/namespaces/{s.ns}/deployments"
    body: dict[str, Any] = {
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}},
        },
    }
    created = s.post("create", base, body)
    s.fact("generation-after-create", (created.json or {}).get("metadata", {}).get("generation"))
    label_patch = s.patch("patch-label", f"{base}/web", {"metadata": {"labels": {"x": "y"}}}, "application/merge-patch+json")
    s.fact("generation-after-label", (label_patch.json or {}).get("metadata", {}).get("generation"))
    spec_patch = s.patch("patch-replicas", f"{base}/web", {"spec": {"replicas": 3}}, "application/merge-patch+json")
    s.fact("generation-after-spec", (spec_patch.json or {}).get("metadata", {}).get("generation"))
    s.post(
        "create-selector-mismatch",
        base,
        {**body, "metadata": {"name": "mismatch"}, "spec": {**body["spec"], "selector": {"matchLabels": {"app": "other"}}}},
    )
    s.post("create-no-selector", base, {"metadata": {"name": "nosel"}, "spec": {"template": body["spec"]["template"]}})
    s.post("create-negative-replicas", base, {**body, "metadata": {"name": "neg"}, "spec": {**body["spec"], "replicas": -1}})
    s.post(
        "create-no-containers",
        base,
        {
            **body,
            "metadata": {"name": "noc"},
            "spec": {**body["spec"], "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
        },
    )
    s.patch(
        "patch-selector",
        f"{base}/web",
        {"spec": {"selector": {"matchLabels": {"app": "web", "v": "2"}}, "template": {"metadata": {"labels": {"v": "2"}}}}},
        "application/strategic-merge-patch+json",
    )
