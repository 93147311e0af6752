"""The aggregated API server as its tests reach it (helpers, no tests, no fixtures).

:class:`Aggregator` is what the conftest's ``aggregator`` fixture (session) yields: ``python -m aggregator`` on the
session realcluster, called over HTTPS with a bearer token, the front-proxy client certificate and ``X-Remote-*``
headers, or nothing; :data:`GROUP_PATH` is its API group's path. :func:`service_account_kubeconfig` is a kubeconfig
for the server's own ServiceAccount (in :data:`SYSTEM_NAMESPACE`), as the conftest and the kube-aggregator test run it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

from tests.clusters import RealclusterProcess
from tests.support import Kubectl

GROUP_PATH = "/apis/search.task.example.example.com/v1"
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


def service_account_kubeconfig(cluster: RealclusterProcess, kubectl: Kubectl, path: Path) -> Path:
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
