"""Running the product's components as their Deployments in deploy/ run them, outside a pod: helpers of the RBAC tests.

:class:`Process` (a child with its output in a file), :func:`resolve_env` (a container's env as the kubelet would
set it) and :func:`deployment_env` (a Deployment's, outside a pod), :func:`api_argv` (the API container's command,
run by this Python), :func:`http` (one request to the API with a person's bearer token), :class:`Browser` (a person
on the dashboard: logged-in session cookie, pages, CSRF-checked form posts), :func:`status_of` (the status code of
a request, 0 when nothing answers), :func:`service_account_kubeconfig` (credentials of a ServiceAccount) and
:func:`service_account_token` (what a person pastes to log in). Used by tests/deploy/test_rbac_audit.py and
tests/deploy/test_rbac_real.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import requests
import yaml

from tests.clusters import ROOT, ClusterProcess
from tests.support import Kubectl

from .manifests import NAMESPACE, env_of, one

# What the kubelet would name the pods (the reconciler's leader election uses its pod name as identity).
POD_NAMES = {"darkroom-operator": "darkroom-operator-7c9d8-abcde", "darkroom-api": "darkroom-api-5f6b7-fghij"}


def service_account_token(cluster: ClusterProcess, namespace: str, name: str, cache: Path) -> str:
    """A TokenRequest token of ServiceAccount ``namespace/name`` (two hours): what a pod's projected token is, and
    what a person pastes at the dashboard's login."""
    kubectl = Kubectl(cluster.kubeconfig, cache)
    return kubectl.run("create", "token", name, "-n", namespace, "--duration=2h").stdout.strip()


def service_account_kubeconfig(cluster: ClusterProcess, namespace: str, name: str, path: Path) -> Path:
    """A kubeconfig that authenticates as ServiceAccount ``namespace/name`` with a TokenRequest token."""
    token = service_account_token(cluster, namespace, name, path.parent / "kubectl-cache")
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
            key = source["secretKeyRef"]["key"]
            if key in secret_values:
                resolved[name] = secret_values[key]
            elif not source["secretKeyRef"].get("optional"):
                raise AssertionError(f"{name}: the Secret has no key {key} (and the reference is not optional)")
        else:
            raise AssertionError(f"unsupported env source {source}")
    return resolved


def deployment_env(docs: list[dict[str, Any]], name: str, *, kubeconfig: Path, secret_values: dict[str, str]) -> dict[str, str]:
    """The environment the Deployment ``name`` in ``docs`` gives its container, outside a pod: this process's
    environment without our settings, the container's env resolved, ``KUBECONFIG`` naming the ServiceAccount's
    credentials."""
    container = one(docs, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "KUBECONFIG", "PORT"))}
    env.update(resolve_env(container, pod=POD_NAMES[name], secret_values=secret_values))
    env.update({"PYTHONUNBUFFERED": "1", "KUBECONFIG": str(kubeconfig)})
    return env


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


def api_argv(container: dict[str, Any]) -> list[str]:
    """The API container's command (gunicorn with the image's config), run by this Python."""
    assert container["command"][0] == "gunicorn", container["command"]
    return [sys.executable, "-m", "gunicorn", *container["command"][1:]]


CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


class Browser:
    """A person on the dashboard: a cookie jar holding the signed session cookie (with the CSRF value flask-wtf keeps
    in it), asking for HTML like a browser. ``http`` may be a provider's browser (an OIDC login's cookies)."""

    def __init__(self, base: str, http: requests.Session | None = None) -> None:
        self.base = base
        self.http = http or requests.Session()
        self.http.headers["Accept"] = "text/html"

    def log_in(self, token: str) -> int:
        """POST /login with a pasted Kubernetes token (the JSON form); the status code (204: a session started)."""
        return self._status(lambda: self.http.post(self.base + "/login", json={"token": token}, timeout=30))

    def page(self, path: str) -> tuple[int, str]:
        """A page: status code and HTML (0 and "" when nothing answers)."""
        try:
            response = self.http.get(self.base + path, timeout=30)
        except requests.RequestException:
            return 0, ""
        return response.status_code, response.text

    def json(self, path: str) -> tuple[int, Any]:
        """A JSON endpoint with the session cookie (no bearer token)."""
        try:
            response = self.http.get(self.base + path, headers={"Accept": "application/json"}, timeout=30)
        except requests.RequestException:
            return 0, None
        return response.status_code, decoded(response.content, response.headers.get("Content-Type", ""))

    def submit(self, form_page: str, action: str, data: dict[str, str] | None = None) -> tuple[int, str]:
        """Post a dashboard form as the page ``form_page`` would (its CSRF token); status code and HTML."""
        code, html = self.page(form_page)
        match = CSRF_META.search(html)
        if code != 200 or match is None:
            return code, html
        try:
            response = self.http.post(self.base + action, data={**(data or {}), "csrf_token": match.group(1)}, timeout=30)
        except requests.RequestException:
            return 0, ""
        return response.status_code, response.text

    def log_out(self) -> int:
        """POST /logout as a JSON client (204: the session ended everywhere)."""
        return self._status(lambda: self.http.post(self.base + "/logout", headers={"Accept": "application/json"}, timeout=30))

    @staticmethod
    def _status(send: Any) -> int:
        try:
            return int(send().status_code)
        except requests.RequestException:
            return 0


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
