"""Shared fixtures: a devcluster process on a free port with a temp data dir, clients for it.

``devcluster`` (session) is a real ``python -m devcluster serve`` subprocess so tests talk to it
over HTTP exactly as kubectl and the official client do; ``fresh_devcluster`` starts a private one
for tests that restart or kill it. ``kubectl`` runs the kubectl on PATH against a cluster with a
private discovery cache. ``namespace`` gives each test its own namespace.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DevclusterProcess:
    """A devcluster subprocess; restartable on the same port and data dir."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def start(self, timeout_s: float = 30.0) -> DevclusterProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "devcluster.log"
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "devcluster", "serve", "--port", str(self.port), "--data-dir", str(self.data_dir), *self.extra_args],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"devcluster exited with {self.proc.returncode}: {self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as response:
                    if response.status == 200 and self.kubeconfig.exists():
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("devcluster did not become ready")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        self.proc = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


def _start(tmp: Path, extra: list[str]) -> DevclusterProcess:
    return DevclusterProcess(tmp, extra_args=extra).start()


SESSION_ARGS = ["--bookmark-interval", "1", "--deployment-ready-delay", "0.3", "--log-level", "WARNING"]


@pytest.fixture(scope="session")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    cluster = _start(tmp_path_factory.mktemp("devcluster"), SESSION_ARGS)
    yield cluster
    if cluster.proc is not None:
        cluster.stop()


@pytest.fixture
def fresh_devcluster(tmp_path: Path) -> Iterator[Callable[..., DevclusterProcess]]:
    """Factory for private devclusters (extra CLI args allowed); all stopped at teardown."""
    started: list[DevclusterProcess] = []

    def make(*extra: str) -> DevclusterProcess:
        cluster = _start(tmp_path / f"dc{len(started)}", [*SESSION_ARGS, *extra])
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        if cluster.proc is not None:
            cluster.stop(signal.SIGKILL)


@dataclass
class Kubectl:
    kubeconfig: Path
    cache_dir: Path

    def run(self, *args: str, check: bool = True, input_text: str | None = None, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            capture_output=True,
            text=True,
            input=input_text,
            timeout=timeout_s,
            cwd=ROOT,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.fail("kubectl is not on PATH: the conformance suite needs it as the independent client")
    return path


@pytest.fixture
def kubectl(devcluster: DevclusterProcess, kubectl_binary: str, tmp_path: Path) -> Kubectl:
    return Kubectl(devcluster.kubeconfig, tmp_path / "kubectl-cache")


@pytest.fixture(scope="session")
def api_client(devcluster: DevclusterProcess) -> Iterator[object]:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(devcluster.kubeconfig))
    yield api
    api.close()
    del client


@pytest.fixture
def namespace(api_client: object) -> Iterator[str]:
    from kubernetes import client

    name = f"t-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(api_client)  # type: ignore[arg-type]
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        core.delete_namespace(name)
    except client.ApiException as e:
        if e.status != 404:
            raise


@pytest.fixture(scope="session")
def crds_installed(devcluster: DevclusterProcess, api_client: object) -> None:
    """The product's CRDs, applied server-side from crds/."""
    import yaml
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)  # type: ignore[arg-type]
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        try:
            ext.create_custom_resource_definition(body)
        except client.ApiException as e:
            if e.status != 409:
                raise


def wait_for(predicate: Callable[[], object], timeout_s: float = 10.0, interval_s: float = 0.05, message: str = "condition") -> object:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {message}")
        time.sleep(interval_s)


os.environ.setdefault("PYTHONUNBUFFERED", "1")
