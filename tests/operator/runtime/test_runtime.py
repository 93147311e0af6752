"""The operator process end to end (``python -m darkroom_operator`` against devcluster): the runtime's behaviours.

Covers: ``/healthz``, ``/readyz`` and ``/metrics`` content; JSON log lines; SIGTERM → exit 0;
two replicas with leader election → exactly one leads (Lease holder, leader gauge) and only it
reconciles; SIGKILL of the leader → the standby takes over and reconciles; a graceful stop of the
leader releases the Lease; devcluster restarted under a running operator → informers recover and
reconciling goes on; a watch resumed from a compacted revision (410) → relist, reconciling goes on;
a missing Lease namespace → a clear error, exit 2. The observable of reconciling is the Darkroom
reconciler's ConfigMap (named after the Darkroom) appearing.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from tests.clusters import ROOT, ClusterProcess, DevclusterProcess
from tests.operator.operator_process import OperatorProcess
from tests.support import wait_for

pytestmark = pytest.mark.slow

LEASE = "darkroom-operator"
OPERATOR = [sys.executable, "-m", "darkroom_operator"]


def darkroom(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": name},
        "spec": {
            "version": "0.1.0",
            "replicas": 1,
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": ["img"],
        },
    }


class Api:
    """The few official-client calls these tests need, on any cluster."""

    def __init__(self, api_client: Any) -> None:
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.coordination = client.CoordinationV1Api(api_client)

    def create_darkroom(self, namespace: str, name: str) -> None:
        self.custom.create_namespaced_custom_object("deployments.example.com", "v1", namespace, "darkrooms", darkroom(name))

    def configmap(self, namespace: str, name: str) -> Any:
        try:
            return self.core.read_namespaced_config_map(name, namespace)
        except client.ApiException as e:
            if e.status == 404:
                return None
            raise

    def holder(self, namespace: str) -> str | None:
        try:
            spec = self.coordination.read_namespaced_lease(LEASE, namespace).spec
            return spec.holder_identity if spec else None
        except client.ApiException as e:
            if e.status == 404:
                return None
            raise

    def wait_for_configmap(self, namespace: str, name: str, timeout_s: float = 30) -> Any:
        return wait_for(lambda: self.configmap(namespace, name), timeout_s=timeout_s, message=f"ConfigMap {namespace}/{name}")


@pytest.fixture
def api(api_client: Any) -> Api:
    return Api(api_client)


@pytest.fixture
def cluster_api() -> Iterator[Callable[[ClusterProcess], Api]]:
    opened: list[Any] = []

    def make(cluster: ClusterProcess) -> Api:
        api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
        opened.append(api_client)
        return Api(api_client)

    yield make
    for api_client in opened:
        api_client.close()


def reconciles(op: OperatorProcess) -> float:
    """Total reconciles (every controller, every result) according to the process's /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    code, text = op.get("/metrics")
    assert code == 200
    return sum(s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == "darkroom_operator_reconcile_total")


def new_namespace(api: Api) -> str:
    name = f"t-{uuid.uuid4().hex[:10]}"
    api.core.create_namespace({"metadata": {"name": name}})
    return name


# -- probes, metrics, logs, signals ------------------------------------------------------------


def test_probes_metrics_and_logs(run_operator: Callable[..., OperatorProcess], namespace: str, api: Api) -> None:
    op = run_operator(namespace=namespace)
    assert op.get("/healthz") == (200, "ok\n")
    code, text = op.get("/readyz")
    assert code == 200
    assert "[+]informers ok" in text and "[+]controllers ok" in text
    assert op.status("/nothing-here") == 404

    api.create_darkroom(namespace, "probe")
    api.wait_for_configmap(namespace, "probe")
    wait_for(lambda: (op.metric("darkroom_operator_reconcile_total", {"controller": "darkroom", "result": "success"}) or 0) >= 1)

    code, text = op.get("/metrics")
    assert code == 200
    for sample in (
        'darkroom_operator_reconcile_total{controller="task",result="error"}',
        'darkroom_operator_reconcile_duration_seconds_count{controller="darkroom"}',
        'workqueue_depth{name="darkroom"}',
        'workqueue_adds_total{name="darkroom"}',
        'workqueue_retries_total{name="task"}',
        'workqueue_longest_running_processor_seconds{name="darkroom"}',
        'darkroom_operator_informer_objects{resource="configmaps"}',
        'darkroom_operator_informer_relists_total{resource="darkrooms.deployments.example.com"}',
    ):
        assert sample in text, sample
    assert op.metric("darkroom_operator_leader") == 1.0  # no leader election: always acting as leader
    assert op.metric("darkroom_operator_informer_synced", {"resource": "darkrooms.deployments.example.com"}) == 1.0
    assert op.metric("darkroom_operator_informer_objects", {"resource": "darkrooms.deployments.example.com"}) == 1.0
    assert (op.metric("workqueue_adds_total", {"name": "darkroom"}) or 0) >= 1

    records = op.logs()
    assert records and all("raw" not in r for r in records), "every log line is a JSON object"
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    assert any(r["message"] == "controllers started" and r["workers"] == 4 for r in records)
    assert any(r["message"] == "reconciled" and r.get("key") == f"{namespace}/probe" for r in records)

    assert op.stop() == 0
    assert any(r["message"] == "stopped" for r in op.logs())


def test_sigint_also_stops_gracefully(run_operator: Callable[..., OperatorProcess], namespace: str) -> None:
    import signal

    op = run_operator(namespace=namespace)
    assert op.stop(sig=signal.SIGINT) == 0


def test_a_missing_lease_namespace_is_a_clear_startup_error(kube: ClusterProcess, crds_installed: None) -> None:
    result = subprocess.run(
        [*OPERATOR, "--kubeconfig", str(kube.kubeconfig), "--health-port", "-1", "--lease-namespace", "no-such-namespace-here"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "leader Lease namespace 'no-such-namespace-here' does not exist" in result.stderr


def test_bad_settings_are_a_clear_startup_error(kube: ClusterProcess) -> None:
    result = subprocess.run(
        [*OPERATOR, "--kubeconfig", str(kube.kubeconfig), "--workers", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "workers must be at least 1" in result.stderr


def test_a_taken_health_port_is_a_clear_startup_error(kube: ClusterProcess, crds_installed: None) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*OPERATOR, "--kubeconfig", str(kube.kubeconfig), "--no-leader-election", "--health-port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert "cannot start" in result.stderr and "Address already in use" in result.stderr


# -- leader election ---------------------------------------------------------------------------


def test_one_leader_among_two_replicas_and_takeover(run_operator: Callable[..., OperatorProcess], namespace: str, api: Api) -> None:
    first = run_operator(namespace=namespace, leader_election=True, identity="replica-a")
    second = run_operator(namespace=namespace, leader_election=True, identity="replica-b")
    replicas = {"replica-a": first, "replica-b": second}

    holder = wait_for(lambda: api.holder(namespace), timeout_s=30, message="a Lease holder")
    assert holder in replicas
    leader = replicas[str(holder)]
    standby = second if leader is first else first
    wait_for(lambda: (leader.metric("darkroom_operator_leader"), standby.metric("darkroom_operator_leader")) == (1.0, 0.0))
    assert standby.status("/readyz") == 200, "a healthy standby is ready"
    assert "[+]leader-election ok" in standby.get("/readyz")[1]

    api.create_darkroom(namespace, "before")
    api.wait_for_configmap(namespace, "before")
    wait_for(lambda: reconciles(leader) >= 1, message="the leader's reconcile counted")
    assert reconciles(standby) == 0, "only the leader reconciles"
    assert api.holder(namespace) == holder

    leader.kill()
    wait_for(lambda: api.holder(namespace) == standby.args[standby.args.index("--identity") + 1], timeout_s=30, message="takeover")
    wait_for(lambda: standby.metric("darkroom_operator_leader") == 1.0)
    api.create_darkroom(namespace, "after")
    api.wait_for_configmap(namespace, "after")
    wait_for(lambda: reconciles(standby) >= 1, message="the new leader's reconcile counted")
    assert any(r["message"] == "became the leader" for r in standby.logs())

    assert standby.stop() == 0
    assert api.holder(namespace) == "", "a graceful stop releases the Lease"
    assert any(r["message"] == "released the leader Lease" for r in standby.logs())


def test_a_released_lease_is_taken_over_by_the_standby(run_operator: Callable[..., OperatorProcess], namespace: str, api: Api) -> None:
    first = run_operator(namespace=namespace, leader_election=True, identity="one")
    wait_for(lambda: api.holder(namespace) == "one", timeout_s=30, message="first replica leads")
    # A long lease: the standby can only take over this quickly because the leader releases it.
    second = run_operator(
        namespace=namespace,
        leader_election=True,
        identity="two",
        env={"DARKROOM_OPERATOR_LEASE_DURATION_S": "300", "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "4"},
    )
    assert first.stop() == 0
    wait_for(lambda: api.holder(namespace) == "two", timeout_s=30, message="the standby takes the released Lease")
    api.create_darkroom(namespace, "handed-over")
    api.wait_for_configmap(namespace, "handed-over")
    assert second.metric("darkroom_operator_leader") == 1.0


def test_a_leader_that_cannot_renew_stops_and_exits_non_zero(
    run_operator: Callable[..., OperatorProcess], namespace: str, api: Api
) -> None:
    leader = run_operator(namespace=namespace, leader_election=True, identity="usurped")
    wait_for(lambda: api.holder(namespace) == "usurped", timeout_s=30, message="it leads")
    # Someone else holds the Lease now: every renew fails until the renew deadline passes.
    api.coordination.patch_namespaced_lease(LEASE, namespace, {"spec": {"holderIdentity": "intruder"}})
    assert leader.wait_exit(timeout_s=30) == 1
    records = leader.logs()
    assert any(r["message"] == "lost the leader Lease; stopping" and r["level"] == "error" for r in records)
    assert not any(r["message"] == "released the leader Lease" for r in records)
    assert api.holder(namespace) == "intruder"


def test_a_leader_cut_off_from_the_api_server_exits_non_zero(
    fresh_devcluster: Callable[..., DevclusterProcess],  # first: torn down last, after the operator stopped
    run_operator: Callable[..., OperatorProcess],
    cluster_api: Callable[[DevclusterProcess], Api],
) -> None:
    cluster = fresh_devcluster()
    namespace = new_namespace(cluster_api(cluster))
    leader = run_operator(namespace=namespace, cluster=cluster, leader_election=True, identity="cut-off")
    wait_for(lambda: leader.metric("darkroom_operator_leader") == 1.0, timeout_s=30, message="it leads")
    cluster.kill()
    assert leader.wait_exit(timeout_s=30) == 1
    assert any(r["message"] == "leader election attempt failed" for r in leader.logs()), "transport errors are survived and logged"


# -- surviving the API server ------------------------------------------------------------------


def test_api_server_restart_under_a_running_operator(
    fresh_kube: Callable[..., ClusterProcess],  # first: torn down last, after the operator stopped
    run_operator: Callable[..., OperatorProcess],
    cluster_api: Callable[[ClusterProcess], Api],
) -> None:
    cluster = fresh_kube()
    api = cluster_api(cluster)
    namespace = new_namespace(api)
    op = run_operator(namespace=namespace, cluster=cluster)
    api.create_darkroom(namespace, "first")
    api.wait_for_configmap(namespace, "first")

    cluster.stop()
    cluster.start()

    api.create_darkroom(namespace, "second")
    api.wait_for_configmap(namespace, "second", timeout_s=60)
    api.core.delete_namespaced_config_map("first", namespace)
    wait_for(lambda: api.configmap(namespace, "first"), timeout_s=60, message="the deleted ConfigMap is recreated")
    assert op.running
    assert op.status("/readyz") == 200


def test_an_outage_pauses_the_workers_without_charging_every_key(
    fresh_kube: Callable[..., ClusterProcess],  # first: torn down last, after the operator stopped
    run_operator: Callable[..., OperatorProcess],
    cluster_api: Callable[[ClusterProcess], Api],
) -> None:
    """An outage is not a failure: reconciles that meet a vanished API server are re-added with no per-key failure (no
    rate-limited retries), the workers pause together, and everything converges once it is back."""
    cluster = fresh_kube()
    api = cluster_api(cluster)
    namespace = new_namespace(api)
    op = run_operator(namespace=namespace, cluster=cluster, env={"DARKROOM_OPERATOR_WORKERS": "1"})
    names = [f"dr-{i:02}" for i in range(30)]
    for name in names:
        api.create_darkroom(namespace, name)
    cluster.kill()  # with work in the queue: one worker is still applying children
    wait_for(
        lambda: (op.metric("darkroom_operator_reconcile_total", {"controller": "darkroom", "result": "unavailable"}) or 0) >= 3,
        timeout_s=30,
    )
    retried = op.metric("workqueue_retries_total", {"name": "darkroom"}) or 0
    time.sleep(2)  # the outage goes on: the paused workers keep meeting it
    cluster.start()
    api = cluster_api(cluster)
    for name in names:
        api.wait_for_configmap(namespace, name, timeout_s=60)
    # No key was charged for the outage. A reconcile right after it may still meet a conflict of its own (a cache that
    # has not caught up with what was written just before the cut): such a charge is logged with its cause, never a
    # server that was away (a transport error, 429 or 5xx).
    charged = (op.metric("workqueue_retries_total", {"name": "darkroom"}) or 0) - retried
    logs = op.logs()
    causes = [r for r in logs if r["message"] in ("conflict, retrying", "reconcile failed")]
    assert len(causes) >= charged, f"{charged} charges, causes logged: {causes}"
    assert not [r for r in causes if r.get("status") in (0, 429) or int(r.get("status") or 0) >= 500], causes
    assert any(r["message"] == "server unavailable, pausing" for r in logs)
    assert op.running


def test_a_compacted_watch_relists_and_reconciling_continues(
    fresh_devcluster: Callable[..., DevclusterProcess],  # first: torn down last, after the operator stopped
    run_operator: Callable[..., OperatorProcess],
    cluster_api: Callable[[DevclusterProcess], Api],
) -> None:
    # No bookmarks: informers only learn revisions from their own events, so they fall behind.
    cluster = fresh_devcluster("--history-size", "5", "--bookmark-interval", "3600")
    api = cluster_api(cluster)
    namespace = new_namespace(api)
    op = run_operator(namespace=namespace, cluster=cluster)
    api.create_darkroom(namespace, "first")
    api.wait_for_configmap(namespace, "first")
    for i in range(10):  # changes no informer of the operator sees (unlabelled ConfigMaps)
        api.core.create_namespaced_config_map(namespace, {"metadata": {"name": f"noise-{i}"}})

    # A restarted devcluster keeps no history below its current revision: every resumed watch
    # that is behind answers 410 Gone, and the informers must relist.
    cluster.stop()
    cluster.start()
    wait_for(
        lambda: (op.metric("darkroom_operator_informer_relists_total", {"resource": "tasks.example.example.com"}) or 0) >= 1,
        timeout_s=60,
        message="a relist after 410",
    )
    api.create_darkroom(namespace, "second")
    api.wait_for_configmap(namespace, "second", timeout_s=60)
    api.core.delete_namespaced_config_map("first", namespace)
    wait_for(lambda: api.configmap(namespace, "first"), timeout_s=60, message="the deleted ConfigMap is recreated")
    assert op.running


def test_run_operator_logs_land_in_the_temp_dir(run_operator: Callable[..., OperatorProcess], namespace: str, tmp_path: Path) -> None:
    op = run_operator(namespace=namespace)
    assert op.log_path.parent == tmp_path
    assert op.health_url.startswith("http://127.0.0.1:")
