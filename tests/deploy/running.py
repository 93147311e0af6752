"""Running the product's components as their Deployments in deploy/ run them, outside a pod: helpers of the RBAC tests.

:class:`Process` (a child with its output in a file), :func:`resolve_env` (a container's env as the
kubelet would set it), :func:`http` (one request to the API with a bearer token), :func:`status_of`
(the status code of a GET, 0 when nothing answers), :func:`service_account_kubeconfig` (credentials
of a ServiceAccount). Used by tests/deploy/test_rbac_audit.py and
tests/deploy/test_rbac_real.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from support import ROOT, ClusterProcess, Kubectl

from .manifests import NAMESPACE, env_of


def login_cookie(base: str, token: str) -> str | None:
    """``name=value`` of the session cookie ``POST /login`` hands out for ``token`` (None: refused)."""
    request = urllib.request.Request(
        base + "/login", data=json.dumps({"token": token}).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            cookie = response.headers.get("Set-Cookie")
    except OSError:
        return None
    return cookie.split(";", 1)[0] if cookie else None


def service_account_kubeconfig(cluster: ClusterProcess, namespace: str, name: str, path: Path) -> Path:
    """A kubeconfig that authenticates as ServiceAccount ``namespace/name`` with a TokenRequest token (what
    a pod's projected token is). devcluster authenticates nobody: there it is the cluster's kubeconfig."""
    if cluster.kind == "dev":
        return cluster.kubeconfig
    kubectl = Kubectl(cluster.kubeconfig, path.parent / "kubectl-cache")
    token = kubectl.run("create", "token", name, "-n", namespace, "--duration=2h").stdout.strip()
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


class Process:
    """A child process with its output in a file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name, self.log = name, log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n{self.log.read_text()[-4000:]}")
        return True

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(30)


def resolve_env(container: dict[str, Any], *, pod: str, secret_values: dict[str, str]) -> dict[str, str]:
    """The container's env as the kubelet would set it (fieldRef and secretKeyRef resolved)."""
    resolved = {}
    for name, entry in env_of(container).items():
        if "value" in entry:
            resolved[name] = entry["value"]
            continue
        source = entry["valueFrom"]
        if "fieldRef" in source:
            resolved[name] = {"metadata.name": pod, "metadata.namespace": NAMESPACE}[source["fieldRef"]["fieldPath"]]
        elif "secretKeyRef" in source:
            resolved[name] = secret_values[source["secretKeyRef"]["key"]]
        else:
            raise AssertionError(f"unsupported env source {source}")
    return resolved


def http(
    method: str, url: str, token: str, body: Any = None, content_type: str = "application/json", *, if_match: str | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", **({"If-Match": if_match} if if_match else {})}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    if data is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, decoded(response.read(), response.headers.get("Content-Type", ""))
    except urllib.error.HTTPError as e:
        raw, content_type = e.read(), e.headers.get("Content-Type", "")
        e.close()
        return e.code, decoded(raw, content_type)


def decoded(raw: bytes, content_type: str) -> Any:
    return json.loads(raw) if raw and "json" in content_type else raw.decode(errors="replace")


def page(url: str, cookie: str) -> tuple[int, str]:
    """A dashboard page as a logged-in browser gets it: status code and HTML (0 and "" when nothing answers)."""
    request = urllib.request.Request(url, headers={"Cookie": cookie, "Accept": "text/html"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read().decode(errors="replace")
    except OSError:
        return 0, ""


UNREADABLE_CHILD = "could not read it"  # how a detail page's children panel shows a child the API may not read


def status_of(url: str, *, method: str = "GET", headers: dict[str, str] | None = None, timeout_s: float = 2.0) -> int:
    """The status code of one request (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method, headers=headers or {}), timeout=timeout_s) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        e.close()
        return int(e.code)
    except OSError:
        return 0
