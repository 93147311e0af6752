"""devcluster's ``--audit-log``: one JSON line per resource request with its RBAC verb, target, user agent and code.

Covers: verbs get/list/watch/create/update/patch/delete/deletecollection, subresources, dryRun, the
caller's User-Agent and the response code; non-resource requests (discovery, /version) are not recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clusters import DevclusterProcess
from tests.support import wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_audit_log_records_each_resource_request(fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path) -> None:
    from kubernetes import client, config, watch

    audit = tmp_path / "audit.jsonl"
    cluster = fresh_devcluster("--audit-log", str(audit))
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    api.user_agent = "audit-test/1.0"
    core = client.CoreV1Api(api)
    try:
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
        core.create_namespaced_config_map("default", {"metadata": {"name": "b"}}, dry_run="All")
        core.read_namespaced_config_map("a", "default")
        core.list_namespaced_config_map("default")
        cm = core.read_namespaced_config_map("a", "default")
        cm.data = {"k": "w"}
        core.replace_namespaced_config_map("a", "default", cm)
        core.patch_namespaced_config_map("a", "default", {"data": {"k": "x"}})
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1):
            break
        with pytest.raises(client.ApiException):
            core.read_namespaced_config_map("missing", "default")
        core.delete_namespaced_config_map("a", "default")
        core.delete_collection_namespaced_config_map("default")
        core.read_namespace_status("default")
        core.get_api_resources()
    finally:
        api.close()

    def mine() -> list[dict[str, object]]:
        return [r for r in _records(audit) if r["userAgent"] == "audit-test/1.0"]

    wait_for(lambda: len(mine()) >= 12, message="twelve audit records")
    seen = [(r["verb"], r["resource"], r["subresource"], r["name"], r["code"], r["dryRun"]) for r in mine()]
    assert seen == [
        ("create", "configmaps", "", "", 201, False),
        ("create", "configmaps", "", "", 201, True),
        ("get", "configmaps", "", "a", 200, False),
        ("list", "configmaps", "", "", 200, False),
        ("get", "configmaps", "", "a", 200, False),
        ("update", "configmaps", "", "a", 200, False),
        ("patch", "configmaps", "", "a", 200, False),
        ("watch", "configmaps", "", "", 200, False),
        ("get", "configmaps", "", "missing", 404, False),
        ("delete", "configmaps", "", "a", 200, False),
        ("deletecollection", "configmaps", "", "", 200, False),
        ("get", "namespaces", "status", "default", 200, False),
    ]
    assert all(r["namespace"] == "default" for r in mine() if r["resource"] == "configmaps")
    assert all(r["apiGroup"] == "" for r in mine())
