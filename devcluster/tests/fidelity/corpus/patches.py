"""Every patch type: JSON patch, merge patch, strategic merge patch (built-ins), server-side apply.

Apply covers create-by-apply, the idempotent re-apply, conflicts between managers (409 with the
conflicting fields as causes), ``force=true``, field removal by the owning manager, shared
ownership, apply to the status subresource, dry-run apply and the option checks; managedFields are
compared after each step.
"""

from __future__ import annotations

from fidelity.corpus import sequence
from fidelity.transcript import APPLY, DEPLOYMENT_CONTROLLED, JSON_PATCH, MERGE, STRATEGIC, Side


def _deployment(name: str, image: str = "nginx:1.27") -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "main", "image": image, "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                        {"name": "side", "image": "busybox:1.36", "ports": [{"containerPort": 8080}]},
                    ]
                },
            },
        },
    }


@sequence("patches.json-patch")
def json_patch(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "p", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}})
    path = f"{base}/p"
    s.patch("add", path, [{"op": "add", "path": "/data/z", "value": "3"}], JSON_PATCH)
    s.patch("remove", path, [{"op": "remove", "path": "/data/x"}], JSON_PATCH)
    s.patch("replace", path, [{"op": "replace", "path": "/data/y", "value": "two"}], JSON_PATCH)
    s.patch(
        "move-copy",
        path,
        [{"op": "copy", "from": "/data/y", "path": "/data/w"}, {"op": "move", "from": "/data/z", "path": "/data/v"}],
        JSON_PATCH,
    )
    s.patch(
        "test-ok",
        path,
        [{"op": "test", "path": "/data/y", "value": "two"}, {"op": "add", "path": "/metadata/labels/b", "value": "2"}],
        JSON_PATCH,
    )
    s.patch("test-fails", path, [{"op": "test", "path": "/data/y", "value": "nope"}], JSON_PATCH)
    s.patch("remove-missing", path, [{"op": "remove", "path": "/data/missing"}], JSON_PATCH)
    s.patch("replace-missing", path, [{"op": "replace", "path": "/data/missing", "value": "x"}], JSON_PATCH)
    s.patch("add-bad-parent", path, [{"op": "add", "path": "/nothere/x", "value": "x"}], JSON_PATCH)
    s.patch("bad-op", path, [{"op": "frobnicate", "path": "/data/y"}], JSON_PATCH)
    s.patch("not-array", path, {"op": "add"}, JSON_PATCH)
    s.patch("not-json", path, b"[{", JSON_PATCH)
    s.patch("stale-rv", path, [{"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}], JSON_PATCH)
    s.patch("rename", path, [{"op": "replace", "path": "/metadata/name", "value": "q"}], JSON_PATCH)
    s.patch("invalid-result", path, [{"op": "add", "path": "/data/bad key", "value": "x"}], JSON_PATCH)
    s.patch("missing-object", f"{base}/absent", [{"op": "add", "path": "/data/z", "value": "3"}], JSON_PATCH)
    s.patch("empty", path, [], JSON_PATCH)


@sequence("patches.merge-patch")
def merge_patch(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create", base, {"metadata": {"name": "m", "labels": {"a": "1", "b": "2"}}, "data": {"x": "1", "y": "2"}})
    path = f"{base}/m"
    s.patch("set-and-delete", path, {"metadata": {"labels": {"a": None, "c": "3"}}, "data": {"x": None, "z": "3"}}, MERGE)
    s.patch("noop", path, {"data": {"z": "3"}}, MERGE)
    s.patch("null-data", path, {"data": None}, MERGE)
    s.patch("array-body", path, [1], MERGE)
    s.patch("not-json", path, b"{", MERGE)
    s.patch("wrong-kind", path, {"kind": "Secret"}, MERGE)
    s.patch("uid-mismatch", path, {"metadata": {"uid": "00000000-0000-0000-0000-000000000001"}}, MERGE)
    s.patch("unsupported-type", path, {"data": {"a": "b"}}, "application/xml")
    s.patch("missing-object", f"{base}/absent", {"data": {"a": "b"}}, MERGE)
    s.patch("create-via-patch-not-allowed", f"{base}/new", {"metadata": {"name": "new"}}, MERGE)


@sequence("patches.strategic-merge")
def strategic_merge(s: Side) -> None:
    s.default_ignore = DEPLOYMENT_CONTROLLED
    base = f"/apis/apps/v1/namespaces/{s.ns}/deployments"
    s.post("create", base, _deployment("smp"))
    path = f"{base}/smp"
    s.patch(
        "merge-container-by-name",
        path,
        {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.28", "env": [{"name": "C", "value": "3"}]}]}}}},
        STRATEGIC,
    )
    s.patch("delete-container", path, {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}, STRATEGIC)
    s.patch(
        "delete-env-by-key",
        path,
        {"spec": {"template": {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "$patch": "delete"}]}]}}}},
        STRATEGIC,
    )
    s.patch(
        "set-element-order",
        path,
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "extra"}, {"name": "main"}],
                        "containers": [{"name": "extra", "image": "busybox:1.36"}],
                    }
                }
            }
        },
        STRATEGIC,
    )
    s.patch("replace-strategy", path, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, STRATEGIC)
    s.patch(
        "list-replace",
        path,
        {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "a:1"}], "$patch": "replace"}}}},
        STRATEGIC,
    )
    s.patch("bad-directive", path, {"spec": {"$patch": "explode"}}, STRATEGIC)
    s.patch("array-body", path, [{"a": 1}], STRATEGIC)
    s.get("final", path)
    s.default_ignore = ()
    cm_base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.post("create-cm", cm_base, {"metadata": {"name": "c", "finalizers": ["a.example.com/x"]}, "data": {"a": "1"}})
    s.patch("cm-labels", f"{cm_base}/c", {"metadata": {"labels": {"l": "1"}, "finalizers": ["b.example.com/y"]}}, STRATEGIC)
    s.patch(
        "cm-delete-finalizer",
        f"{cm_base}/c",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x", "b.example.com/y"]}},
        STRATEGIC,
    )


@sequence("patches.apply")
def server_side_apply(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    path = f"{base}/a"
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"owner": "one"}},
        "data": {"k1": "v1", "k2": "v2"},
    }
    s.patch("apply-create", path, config, APPLY, query={"fieldManager": "one"})
    again = s.patch("apply-again", path, config, APPLY, query={"fieldManager": "one"})
    s.fact("reapply-status", again.status)
    s.patch("apply-conflict", path, {**config, "data": {"k1": "other"}}, APPLY, query={"fieldManager": "two"})
    s.patch(
        "apply-shared",
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k1": "v1"}},
        APPLY,
        query={"fieldManager": "two"},
    )
    s.patch(
        "apply-force",
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k2": "forced"}},
        APPLY,
        query={"fieldManager": "two", "force": "true"},
    )
    s.patch(
        "apply-drop-field",
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k1": "v1"}},
        APPLY,
        query={"fieldManager": "one"},
    )
    s.patch("update-by-other", path, {"data": {"k3": "v3"}}, MERGE, query={"fieldManager": "three"})
    s.patch(
        "apply-takes-from-update",
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k3": "mine"}},
        APPLY,
        query={"fieldManager": "one"},
    )
    s.patch(
        "apply-dry-run",
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k9": "dry"}},
        APPLY,
        query={"fieldManager": "one", "dryRun": "All"},
    )
    s.get("get", path)
    s.patch("apply-no-manager", path, config, APPLY)
    s.patch("apply-force-non-apply", path, {"data": {}}, MERGE, query={"force": "true"})
    s.patch("apply-no-kind", path, {"metadata": {"name": "a"}, "data": {"k": "v"}}, APPLY, query={"fieldManager": "one"})
    s.patch(
        "apply-wrong-name", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}, APPLY, query={"fieldManager": "one"}
    )
    s.patch(
        "apply-yaml",
        f"{base}/yml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  a: b\n",
        APPLY,
        query={"fieldManager": "yaml"},
    )
    s.patch("apply-bad-yaml", f"{base}/yml", "apiVersion: v1\nkind: [", APPLY, query={"fieldManager": "yaml"})
    s.patch(
        "apply-managed-fields-set",
        path,
        {**config, "metadata": {"name": "a", "managedFields": [{"manager": "x", "operation": "Apply"}]}},
        APPLY,
        query={"fieldManager": "one"},
    )
    s.patch("apply-long-manager", path, config, APPLY, query={"fieldManager": "m" * 129})


@sequence("patches.apply-deployment")
def apply_deployment(s: Side) -> None:
    s.default_ignore = DEPLOYMENT_CONTROLLED
    path = f"/apis/apps/v1/namespaces/{s.ns}/deployments/ad"
    s.patch("apply-create", path, _deployment("ad"), APPLY, query={"fieldManager": "tool"})
    s.patch(
        "apply-image-other-manager",
        path,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "ad"},
            "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}},
        },
        APPLY,
        query={"fieldManager": "other"},
    )
    s.patch(
        "apply-image-force",
        path,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "ad"},
            "spec": {
                "selector": {"matchLabels": {"app": "ad"}},
                "template": {"metadata": {"labels": {"app": "ad"}}, "spec": {"containers": [{"name": "main", "image": "nginx:2"}]}},
            },
        },
        APPLY,
        query={"fieldManager": "other", "force": "true"},
    )
    s.patch(
        "apply-replicas-by-scaler",
        path,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ad"}, "spec": {"replicas": 3}},
        APPLY,
        query={"fieldManager": "scaler"},
    )
    s.patch(
        "apply-status",
        f"{path}/status",
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ad"}, "status": {"observedGeneration": 7}},
        APPLY,
        query={"fieldManager": "statuser", "force": "true"},
    )
    s.patch(
        "apply-missing-status",
        f"/apis/apps/v1/namespaces/{s.ns}/deployments/none/status",
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "none"}},
        APPLY,
        query={"fieldManager": "statuser"},
    )
