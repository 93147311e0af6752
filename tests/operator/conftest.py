"""Fixtures for the reconciler's cluster-backed tests (here and in runtime/): ``run_operator`` starts ``python -m darkroom_operator``.

The operator runs as a real subprocess against the cluster under test (``kube``, devcluster or the real
control plane; or any :class:`support.ClusterProcess` / kubeconfig a test passes, e.g. from ``fresh_kube``), so
the tests exercise the entry point, signals, leader election and the health server exactly as a
deployment would. Every process started is stopped at teardown (SIGTERM, then SIGKILL).

API (see :class:`OperatorProcess`, in operator_process.py)::

    op = run_operator(namespace=ns)                       # waits for /readyz 200
    op = run_operator(namespace=ns, leader_election=True, identity="a", lease_namespace=ns)
    op = run_operator(namespace=ns, cluster=fresh, resync_s=2, env={"DARKROOM_OPERATOR_WORKERS": "1"})
    op.health_url, op.get("/metrics"), op.metric("darkroom_operator_leader"), op.logs(), op.log_text()
    op.stop() -> exit code (SIGTERM, SIGKILL after timeout); op.kill() (SIGKILL); op.start() again
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.clusters import ClusterProcess
from tests.support import install_crds

from .operator_process import OperatorProcess, RunOperator

# Short leases for tests (the product defaults stay 15 s / 10 s / 2 s). The renew deadline leaves a
# loaded 2-core machine several attempts (each bounded by a 1 s request timeout) before a leader gives up.
TEST_LEASE_ENV = {
    "DARKROOM_OPERATOR_LEASE_DURATION_S": "6",
    "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "4",
    "DARKROOM_OPERATOR_RETRY_PERIOD_S": "0.5",
}


@pytest.fixture
def run_operator(kube: ClusterProcess, crds_installed: None, tmp_path: Path) -> Iterator[RunOperator]:
    """Factory: start ``python -m darkroom_operator``; all processes are stopped at teardown.

    ``run_operator(*extra_args, namespace=None, cluster=None, leader_election=False, identity=None,
    lease_namespace=None, resync_s=None, workers=None, env=None, wait_ready=True)``:
    ``cluster`` is a :class:`ClusterProcess` or a kubeconfig path (default: the session cluster ``kube``;
    CRDs are installed into another cluster first); ``namespace`` is watched alone (``--namespace``);
    with ``leader_election`` the Lease lives in ``lease_namespace`` (default: ``namespace``) and uses
    the short :data:`TEST_LEASE_ENV` timings unless ``env`` overrides them; ``resync_s`` sets
    ``DARKROOM_OPERATOR_RESYNC_S``; ``env`` adds/overrides variables. The health port is picked by
    the process (port 0) and read from its startup line.
    """
    started: list[OperatorProcess] = []

    def run(
        *extra_args: str,
        namespace: str | None = None,
        cluster: ClusterProcess | Path | None = None,
        leader_election: bool = False,
        identity: str | None = None,
        lease_namespace: str | None = None,
        resync_s: float | None = None,
        workers: int | None = None,
        env: Mapping[str, str] | None = None,
        wait_ready: bool = True,
    ) -> OperatorProcess:
        if cluster is None:
            kubeconfig = kube.kubeconfig
        else:
            kubeconfig = Path(cluster) if isinstance(cluster, Path) else cluster.kubeconfig
            install_crds(kubeconfig)
        args = ["--kubeconfig", str(kubeconfig), "--health-port", "0", "--health-host", "127.0.0.1"]
        if namespace:
            args += ["--namespace", namespace]
        if workers is not None:
            args += ["--workers", str(workers)]
        if leader_election:
            args += ["--lease-namespace", lease_namespace or namespace or "default"]
            if identity:
                args += ["--identity", identity]
        else:
            args += ["--no-leader-election"]
        variables = {k: v for k, v in os.environ.items() if not k.startswith("DARKROOM_OPERATOR_") and k != "KUBECONFIG"}
        variables.update({"PYTHONUNBUFFERED": "1", "DARKROOM_OPERATOR_LOG_JSON": "true", "DARKROOM_OPERATOR_LOG_LEVEL": "DEBUG"})
        if leader_election:
            variables.update(TEST_LEASE_ENV)
        if resync_s is not None:
            variables["DARKROOM_OPERATOR_RESYNC_S"] = str(resync_s)
        variables.update(env or {})
        n = len(started)
        handle = OperatorProcess(
            args=[*args, *extra_args], env=variables, log_path=tmp_path / f"operator-{n}.log", out_path=tmp_path / f"operator-{n}.out"
        )
        started.append(handle)
        return handle.start(wait_ready=wait_ready)

    yield run
    for handle in started:
        if handle.running:
            handle.stop(timeout_s=15)
