"""Fixtures of the aggregated API server's tests: the server as a subprocess on the session realcluster.

``aggregator`` (session) installs the CRDs and the server's RBAC from deploy/components/aggregator into the real
control plane, gives its ServiceAccount a token, and runs ``python -m aggregator`` with that identity (a self-signed
serving certificate in a temp dir, 1 s bookmarks). Tests call it directly over HTTPS (:class:`Aggregator`, in
aggregated_server.py with the other helpers they import): with a bearer token, with the realcluster's front-proxy
client certificate and ``X-Remote-*`` headers, or with nothing. Real control plane only (``realcluster_required``):
these tests need several users with RBAC (alice's ``view`` role, tokens kube issues per user), which devcluster does
not have — it authenticates its own admin token only and allows its own users. devcluster's aggregation layer
(TokenReview, SubjectAccessReview, the requestheader ConfigMap, proxying) is tested with this server behind it in
``test_devcluster.py``. ``team`` gives a test a namespace where ``alice`` has the built-in ``view`` role (which the
component's ClusterRole extends to combinedtasks).
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
import requests
import yaml

from tests.clusters import ROOT, RealclusterProcess, free_port
from tests.support import Kubectl, install_crds

from .aggregated_server import SYSTEM_NAMESPACE, Aggregator, service_account_kubeconfig

COMPONENT = ROOT / "deploy" / "components" / "aggregator" / "rbac.yaml"


def _apply_rbac(kubectl: Kubectl) -> None:
    kubectl.run("create", "namespace", SYSTEM_NAMESPACE, check=False)
    docs = [d for d in yaml.safe_load_all(COMPONENT.read_text()) if d]
    for doc in docs:
        if doc["kind"] in ("ServiceAccount",):
            doc["metadata"].setdefault("namespace", SYSTEM_NAMESPACE)
    kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-f", "-", input_text=yaml.safe_dump_all(docs))


@pytest.fixture(scope="session")
def aggregator(
    realcluster_required: None, realcluster: RealclusterProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Aggregator]:
    from kubernetes import config

    tmp = tmp_path_factory.mktemp("aggregator")
    install_crds(realcluster.kubeconfig)
    kubectl = Kubectl(realcluster.kubeconfig, tmp / "kubectl-cache")
    _apply_rbac(kubectl)
    kubeconfig = service_account_kubeconfig(realcluster, kubectl, tmp / "aggregator.kubeconfig")
    port = free_port()
    log = tmp / "aggregator.log"
    argv = [sys.executable, "-m", "aggregator", "--kubeconfig", str(kubeconfig), "--bind-address", "127.0.0.1", "--secure-port", str(port)]
    argv += ["--cert-dir", str(tmp / "certs"), "--bookmark-interval-s", "1"]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    server = Aggregator(
        url=f"https://127.0.0.1:{port}",
        ca=tmp / "certs" / "apiserver.crt",
        pki=realcluster.data_dir / "pki",
        cluster=realcluster,
        kubectl=kubectl,
        proc=proc,
        log=log,
        tmp=tmp,
        admin=config.new_client_from_config(config_file=str(realcluster.kubeconfig)),
    )
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the aggregated server exited with {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            if server.ca.exists() and server.get("/readyz").status_code == 200:
                break
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the aggregated server was not ready in 60 s: {log.read_text()[-3000:]}")
        time.sleep(0.1)
    yield server
    proc.terminate()
    proc.wait(30)
    server.admin.close()


@pytest.fixture
def team(aggregator: Aggregator) -> Iterator[str]:
    """A fresh namespace where alice has the built-in view role."""
    name = f"ct-{uuid.uuid4().hex[:8]}"
    aggregator.kubectl.run("create", "namespace", name)
    aggregator.kubectl.run("create", "rolebinding", "alice-view", "--clusterrole=view", "--user=alice", "-n", name)
    yield name
    aggregator.kubectl.run("delete", "namespace", name, "--wait=false")
