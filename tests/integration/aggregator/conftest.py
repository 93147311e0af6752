"""Fixtures of the aggregated API server's tests: the server as a subprocess on the session realcluster.

``aggregator`` (session) installs the CRDs and the server's RBAC from deploy/components/aggregator into
the real control plane, gives its ServiceAccount a token, and runs ``python -m aggregator`` with that
identity (a self-signed serving certificate in a temp dir, 1 s bookmarks). Tests call it directly over
HTTPS (:class:`Aggregator`): with a bearer token, with the realcluster's front-proxy client certificate
and ``X-Remote-*`` headers, or with nothing. Real control plane only (``realcluster_required``): these
tests need several users with RBAC (alice's ``view`` role, tokens kube issues per user), which devcluster
does not have — it authenticates its own admin token only and allows its own users. devcluster's
aggregation layer (TokenReview, SubjectAccessReview, the requestheader ConfigMap, proxying) is tested
with this server behind it in ``test_devcluster.py``. ``team`` gives a test a namespace where ``alice``
has the built-in ``view`` role (which the
component's ClusterRole extends to combinedtasks).
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from support import ROOT, Kubectl, RealclusterProcess, free_port, install_crds

GROUP_PATH = "/apis/search.task.example.example.com/v1"
COMPONENT = ROOT / "deploy" / "components" / "aggregator" / "rbac.yaml"
SYSTEM_NAMESPACE = "darkroom-system"


@dataclass
class Aggregator:
    url: str
    ca: Path
    pki: Path
    cluster: RealclusterProcess
    kubectl: Kubectl
    proc: subprocess.Popen[bytes]
    log: Path
    tmp: Path
    admin: Any = field(default=None)  # kubernetes.client.ApiClient of the cluster admin

    def get(
        self,
        path: str,
        *,
        token: str | None = None,
        user: str | None = None,
        group: str | None = None,
        headers: dict[str, str] | None = None,
        cert: tuple[str, str] | None = None,
        params: dict[str, Any] | None = None,
        stream: bool = False,
        method: str = "GET",
    ) -> requests.Response:
        """A request to the server. ``user``: sent as X-Remote-User (with the front-proxy certificate unless ``cert`` says otherwise)."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if user is not None:
            sent["X-Remote-User"] = user
            cert = cert or self.front_proxy_cert
        if group is not None:
            sent["X-Remote-Group"] = group
        return requests.request(
            method, self.url + path, params=params, headers=sent, verify=str(self.ca), cert=cert, stream=stream, timeout=30
        )

    @property
    def front_proxy_cert(self) -> tuple[str, str]:
        return str(self.pki / "front-proxy-client.crt"), str(self.pki / "front-proxy-client.key")

    def token(self, user: str = "admin") -> str:
        return self.cluster.token(user)

    def metrics(self) -> dict[tuple[str, str], float]:
        """``aggregator_kube_requests_total`` by (method, resource): the API calls the server made so far."""
        text = self.get("/metrics", token=self.token()).text
        counts: dict[tuple[str, str], float] = {}
        for line in text.splitlines():
            if line.startswith("aggregator_kube_requests_total{"):
                labels, value = line[len("aggregator_kube_requests_total{") :].split("} ")
                parts = dict(p.split("=", 1) for p in labels.split(","))
                counts[(parts["method"].strip('"'), parts["resource"].strip('"'))] = float(value)
        return counts


def _apply_rbac(kubectl: Kubectl) -> None:
    kubectl.run("create", "namespace", SYSTEM_NAMESPACE, check=False)
    docs = [d for d in yaml.safe_load_all(COMPONENT.read_text()) if d]
    for doc in docs:
        if doc["kind"] in ("ServiceAccount",):
            doc["metadata"].setdefault("namespace", SYSTEM_NAMESPACE)
    kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-f", "-", input_text=yaml.safe_dump_all(docs))


def _service_account_kubeconfig(cluster: RealclusterProcess, kubectl: Kubectl, path: Path) -> Path:
    token = kubectl.run("create", "token", "darkroom-aggregator", "-n", SYSTEM_NAMESPACE, "--duration", "4h").stdout.strip()
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "real", "cluster": {"server": cluster.url, "certificate-authority": str(cluster.ca_path)}}],
                "users": [{"name": "aggregator", "user": {"token": token}}],
                "contexts": [{"name": "aggregator", "context": {"cluster": "real", "user": "aggregator"}}],
                "current-context": "aggregator",
            }
        )
    )
    return path


@pytest.fixture(scope="session")
def aggregator(
    realcluster_required: None, realcluster: RealclusterProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Aggregator]:
    from kubernetes import config

    tmp = tmp_path_factory.mktemp("aggregator")
    install_crds(realcluster.kubeconfig)
    kubectl = Kubectl(realcluster.kubeconfig, tmp / "kubectl-cache")
    _apply_rbac(kubectl)
    kubeconfig = _service_account_kubeconfig(realcluster, kubectl, tmp / "aggregator.kubeconfig")
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
