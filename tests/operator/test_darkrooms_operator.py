"""The Darkroom reconciler through a running operator process (``python -m darkroom_operator``).

Behaviours: a Darkroom gets its children and turns Ready when the simulated rollout completes;
the operator heals drift on its own (edited image, port and ConfigMap data reverted, a deleted
child recreated), follows the unready annotation (Ready False, then True again) and reports
invalid specs (Reconciled False); rapid spec changes converge on the last one with a new
template hash; the S3 secret value never leaves the Secret (Darkrooms, ConfigMaps, Deployments,
Services, Ingresses, Events, operator logs); deleting a Darkroom removes its children; an operator
killed in the middle of reconciling converges after a restart; a resync of converged objects
(Darkrooms, Tasks and a Postgresql) sends zero write requests (the API server's audit log, user
agent ``darkroom-operator/``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from darkroom_operator.runtime.conditions import find

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, EVENTS, INGRESSES, NAMESPACES, POSTGRESQLS, SECRETS, SERVICES, TASKS
from tests.auditlog import AuditRecord, read_audit_log
from tests.clusters import ClusterProcess
from tests.support import GC_TIMEOUT_S, UNREADY_ANNOTATION, install_crds, wait_for

from .harness import CHILD_KINDS, User, reconciles
from .operator_process import OperatorProcess, RunOperator

WEBFOLDER = {"type": "WebFolder", "baseUrl": "https://example.com/images"}
UNREADY = UNREADY_ANNOTATION
HASH = "deployments.example.com/config-hash"


@pytest.fixture
def user(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[User]:
    u = User(kube.kubeconfig, namespace)
    yield u
    u.close()


def darkroom(user: User, name: str, source: Mapping[str, Any] = WEBFOLDER, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": user.namespace},
        "spec": {"version": "0.4.2", "source": dict(source), "subDomains": [name], **spec},
    }
    return user.client.create(DARKROOMS, body)


def condition(user: User, name: str, type_: str) -> Mapping[str, Any]:
    dr = user.find(DARKROOMS, name) or {}
    return find((dr.get("status") or {}).get("conditions"), type_) or {}


def wait_condition(user: User, name: str, type_: str, status: str, timeout_s: float = 30) -> Mapping[str, Any]:
    def reached() -> Mapping[str, Any] | None:
        found = condition(user, name, type_)
        return found if found.get("status") == status else None

    result = wait_for(reached, timeout_s=timeout_s, interval_s=0.1, message=f"{type_}={status} on Darkroom {name}")
    assert isinstance(result, Mapping)
    return result


def converged(user: User, name: str) -> bool:
    """Ready, reconciled, status of the current generation, all children present."""
    dr = user.find(DARKROOMS, name)
    if dr is None:
        return False
    status = dr.get("status") or {}
    conditions = status.get("conditions")
    return (
        status.get("observedGeneration") == dr["metadata"]["generation"]
        and (find(conditions, "Ready") or {}).get("status") == "True"
        and (find(conditions, "Reconciled") or {}).get("status") == "True"
        and all(user.find(kind, name) is not None for kind in CHILD_KINDS)
    )


def container(user: User, name: str) -> Mapping[str, Any]:
    found: Mapping[str, Any] = user.get(DEPLOYMENTS, name)["spec"]["template"]["spec"]["containers"][0]
    return found


def test_operator_creates_heals_and_reports(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    darkroom(user, "live", replicas=2)
    ready = wait_condition(user, "live", "Ready", "True")
    assert ready["reason"] == "DeploymentAvailable"
    assert user.get(DARKROOMS, "live")["status"]["domains"] == ["live.darkroom.example.com"]
    want_data = user.get(CONFIGMAPS, "live")["data"]
    want_ports = user.get(SERVICES, "live")["spec"]["ports"]

    user.client.patch(
        DEPLOYMENTS,
        "live",
        {"spec": {"template": {"spec": {"containers": [{"name": "darkroom", "image": "evil:1"}]}}}},
        namespace=user.namespace,
        patch_type="strategic",
    )
    user.client.patch(
        SERVICES,
        "live",
        {"spec": {"ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]}},
        namespace=user.namespace,
    )
    user.client.patch(
        CONFIGMAPS, "live", {"data": {"LOG_LEVEL": "debug", "SOURCE_BASEURL": "https://evil.example"}}, namespace=user.namespace
    )
    user.client.delete(INGRESSES, "live", namespace=user.namespace)
    wait_for(lambda: container(user, "live")["image"] == "gojektech/darkroom:v0.4.2", timeout_s=20, message="image reverted")
    wait_for(lambda: user.get(SERVICES, "live")["spec"]["ports"] == want_ports, timeout_s=20, message="service port reverted")
    wait_for(lambda: user.get(CONFIGMAPS, "live")["data"] == want_data, timeout_s=20, message="ConfigMap data reverted")
    wait_for(lambda: user.find(INGRESSES, "live") is not None, timeout_s=20, message="Ingress recreated")

    wait_condition(user, "live", "Ready", "True")
    user.client.patch(DEPLOYMENTS, "live", {"metadata": {"annotations": {UNREADY: "true"}}}, namespace=user.namespace)
    not_ready = wait_condition(user, "live", "Ready", "False")
    assert not_ready["reason"] in ("PodsUnavailable", "RolloutInProgress")
    wait_for(lambda: condition(user, "live", "Ready").get("reason") == "PodsUnavailable", timeout_s=20, message="PodsUnavailable")
    user.client.patch(DEPLOYMENTS, "live", {"metadata": {"annotations": {UNREADY: None}}}, namespace=user.namespace)
    wait_condition(user, "live", "Ready", "True")

    darkroom(user, "invalid", source={"type": "S3"})
    invalid = wait_condition(user, "invalid", "Reconciled", "False")
    assert (invalid["reason"], invalid["message"]) == ("InvalidSpec", "spec.source.bucket: required for an S3 source")
    assert not any(user.find(kind, "invalid") for kind in CHILD_KINDS)

    user.client.delete(DARKROOMS, "live", namespace=user.namespace)
    wait_for(lambda: not any(user.find(kind, "live") for kind in CHILD_KINDS), timeout_s=GC_TIMEOUT_S, message="children garbage-collected")


def test_rapid_spec_changes_converge_on_the_last(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    darkroom(user, "rapid")
    wait_for(lambda: converged(user, "rapid"), timeout_s=30, message="first convergence")
    first_hash = user.get(DEPLOYMENTS, "rapid")["spec"]["template"]["metadata"]["annotations"][HASH]
    for i in range(1, 11):
        user.client.patch(
            DARKROOMS, "rapid", {"spec": {"version": f"0.5.{i}", "cacheTime": 1000 + i, "replicas": 1 + i % 3}}, namespace=user.namespace
        )
    wait_for(
        lambda: converged(user, "rapid") and container(user, "rapid")["image"] == "gojektech/darkroom:v0.5.10",
        timeout_s=30,
        message="last spec",
    )
    assert user.get(CONFIGMAPS, "rapid")["data"]["CACHE_TIME"] == "1010"
    deployment = user.get(DEPLOYMENTS, "rapid")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["template"]["metadata"]["annotations"][HASH] != first_hash
    assert user.get(DARKROOMS, "rapid")["status"]["readyReplicas"] == 2


def test_s3_secret_value_never_leaves_the_secret(run_operator: RunOperator, user: User) -> None:
    sentinel = "SENTINEL-s3cr3t-9f8e7d"
    encoded = base64.b64encode(sentinel.encode()).decode()
    user.client.create(
        SECRETS,
        {
            "metadata": {"name": "s3-creds", "namespace": user.namespace},
            "stringData": {"accessKey": "AKIA-" + sentinel, "secretKey": sentinel},
        },
    )
    op = run_operator(namespace=user.namespace)
    source = {"type": "S3", "bucket": "originals", "region": "eu-west-1", "credentialsSecretRef": {"name": "s3-creds"}}
    darkroom(user, "vault", source=source)
    darkroom(user, "vault-broken", source={**source, "bucket": ""})  # a failure path too: status, Warning event, logs
    wait_for(lambda: converged(user, "vault"), timeout_s=30, message="S3 Darkroom converged")
    wait_condition(user, "vault-broken", "Reconciled", "False")
    env = container(user, "vault")["env"]
    assert env == [
        {"name": "SOURCE_BUCKET_ACCESSKEY", "valueFrom": {"secretKeyRef": {"name": "s3-creds", "key": "accessKey"}}},
        {"name": "SOURCE_BUCKET_SECRETKEY", "valueFrom": {"secretKeyRef": {"name": "s3-creds", "key": "secretKey"}}},
    ]
    everything = {kind.plural: user.list(kind) for kind in (DARKROOMS, CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES, EVENTS)}
    assert everything["events"], "expected some Events to inspect"
    dumped = json.dumps(everything) + op.log_text()
    assert sentinel not in dumped and encoded not in dumped
    assert "s3-creds" in json.dumps(everything["deployments"])  # the reference is there, the value is not


def test_operator_killed_mid_reconcile_converges_after_restart(run_operator: RunOperator, user: User) -> None:
    names = [f"batch-{i}" for i in range(8)]
    for name in names:
        darkroom(user, name)
    op = run_operator(namespace=user.namespace, workers=1)
    wait_for(lambda: user.find(CONFIGMAPS, names[0]) is not None, timeout_s=30, message="some progress")
    op.kill()
    user.client.patch(DARKROOMS, names[-1], {"spec": {"version": "0.9.0"}}, namespace=user.namespace)  # changed while down
    op.start()
    wait_for(lambda: all(converged(user, name) for name in names), timeout_s=60, message="every Darkroom converged after the restart")
    assert container(user, names[-1])["image"] == "gojektech/darkroom:v0.9.0"


def _operator_writes(audit: Path, skip: int) -> list[AuditRecord]:
    """The reconciler's write requests in the audit log, after its first ``skip`` records."""
    return [
        r for r in read_audit_log(audit)[skip:] if r.user_agent.startswith("darkroom-operator/") and r.verb not in ("get", "list", "watch")
    ]


def test_converged_resync_sends_zero_write_requests(
    run_operator: RunOperator, fresh_kube: Callable[..., ClusterProcess], tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    cluster = fresh_kube(audit_log=audit)
    install_crds(cluster.kubeconfig)
    user = User(cluster.kubeconfig, "quiet")
    try:
        user.client.create(NAMESPACES, {"metadata": {"name": "quiet"}})
        for name in ("a", "b", "c"):
            darkroom(
                user, name, source={"type": "S3", "bucket": "b", "credentialsSecretRef": {"name": "creds"}} if name == "c" else WEBFOLDER
            )
        for name, deadline in (("later", "2099-01-01T00:00:00Z"), ("late", "2000-01-01T00:00:00Z")):
            task = {
                "apiVersion": "example.example.com/v1",
                "kind": "Task",
                "metadata": {"name": name, "namespace": "quiet"},
                "spec": {"priority": 1, "deadline": deadline},
            }
            user.client.create(TASKS, task)
        database = {"apiVersion": POSTGRESQLS.api_version, "kind": "Postgresql", "metadata": {"name": "db", "namespace": "quiet"}}
        user.client.create(POSTGRESQLS, {**database, "spec": {"parameters": {"work_mem": "8MB"}}})
        op: OperatorProcess = run_operator(namespace="quiet", cluster=cluster, resync_s=0.5)
        wait_for(lambda: all(converged(user, name) for name in ("a", "b", "c")), timeout_s=30, message="Darkrooms converged")
        wait_for(
            lambda: all((user.get(TASKS, n).get("status") or {}).get("observedGeneration") == 1 for n in ("later", "late")), timeout_s=30
        )
        wait_for(lambda: (user.get(POSTGRESQLS, "db").get("status") or {}).get("phase") == "Running", timeout_s=60, message="db Running")

        def resynced(controller: str, at_least: float) -> bool:
            return reconciles(op, controller) >= at_least

        # One full resync after convergence first (it absorbs the reconciles the last status writes triggered), then mark.
        for controller, count in (("darkroom", 3), ("task", 2), ("postgresql", 1)):
            target = reconciles(op, controller) + count
            wait_for(lambda c=controller, t=target: resynced(c, t), timeout_s=30, message=f"a {controller} resync")  # type: ignore[misc]
        offset = len(read_audit_log(audit))
        for controller, count in (("darkroom", 3), ("task", 2), ("postgresql", 1)):
            target = reconciles(op, controller) + 3 * count
            wait_for(lambda c=controller, t=target: resynced(c, t), timeout_s=30, message=f"three {controller} resyncs")  # type: ignore[misc]
        assert _operator_writes(audit, offset) == []
        assert _operator_writes(audit, 0), "the audit log should show the operator's writes during convergence"
    finally:
        user.close()
