"""Test support shared by every suite: cluster subprocess handles, a kubectl runner, waiting.

Two kinds of API server run under the tests, with one interface (:class:`ClusterProcess`):
:class:`DevclusterProcess` (``kind == "dev"``, our embedded emulator over plain HTTP) and
:class:`RealclusterProcess` (``kind == "real"``, the real control plane of realcluster/: etcd,
kube-apiserver, kube-controller-manager, kube-scheduler and a simulated node, over TLS with token
authentication). Imported by ``sharedfixtures.py`` (the fixtures plugin) and by test modules of both trees, tests/ and
devcluster/tests (``from tests.support import wait_for``: the repository root is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

ROOT = Path(__file__).resolve().parent.parent
REALCLUSTER_BIN = ROOT / "realcluster" / "bin" / "realcluster"
ClusterKind = Literal["dev", "real"]
# ConfigMaps a real control plane puts into every namespace (kube-controller-manager's root-CA publisher);
# tests that count a namespace's ConfigMaps leave these out. devcluster publishes none (devcluster/DIFFERENCES.md).
PUBLISHED_CONFIGMAPS = frozenset({"kube-root-ca.crt"})
# Both simulators keep a Deployment or StatefulSet unready while it carries this annotation set to "true": devcluster
# holds its simulated status at 0 available, realcluster's simulated node reports its pods not Ready.
UNREADY_ANNOTATION = "simulation.example.com/unready"
# kube's garbage collector watches a kind only after its discovery resync (every 30 s) has seen it, so
# dependents of an object of a freshly installed CRD may wait that long; devcluster collects at once.
GC_TIMEOUT_S = 60.0


class ClusterProcess(Protocol):
    """What tests may rely on for either kind of cluster."""

    data_dir: Path
    port: int
    proc: subprocess.Popen[bytes] | None

    @property
    def kind(self) -> ClusterKind: ...

    @property
    def url(self) -> str: ...

    @property
    def kubeconfig(self) -> Path: ...

    def start(self, timeout_s: float = ...) -> ClusterProcess: ...

    def stop(self, sig: int = ..., timeout_s: float = ...) -> int: ...

    def kill(self) -> None: ...


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports: each socket is held until all are picked (two :func:`free_port` calls
    may be handed the same port, and a process binding both then fails with "address already in use")."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]


@dataclass
class _ServerProcess:
    """What both kinds of cluster subprocess share: a data dir, a port, the process and stopping it."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        self.proc = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


@dataclass
class DevclusterProcess(_ServerProcess):
    """A devcluster subprocess; restartable on the same port and data dir."""

    @property
    def kind(self) -> ClusterKind:
        return "dev"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 30.0) -> DevclusterProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "devcluster.log"
        with self.log_path.open("ab") as log:
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


@dataclass
class RealclusterProcess(_ServerProcess):
    """``realcluster up`` as a subprocess (real etcd, kube-apiserver, controller manager, scheduler and a
    simulated node); restartable on the same port and data dir, which keeps every object.

    ``start`` waits for the kubeconfig, which realcluster writes only once the node is Ready and the
    ``default`` service account exists. The admin kubeconfig authenticates with a static token
    (system:masters); :meth:`token` gives the token of another static user (``alice``, ``bob``).
    """

    @property
    def kind(self) -> ClusterKind:
        return "real"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_path(self) -> Path:
        return self.data_dir / "pki" / "ca.crt"

    def token(self, user: str = "admin") -> str:
        for line in (self.data_dir / "pki" / "tokens.csv").read_text().splitlines():
            fields = line.split(",")
            if len(fields) >= 2 and fields[1] == user:
                return fields[0]
        raise KeyError(user)

    def start(self, timeout_s: float = 120.0) -> RealclusterProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "realcluster.log"
        self.kubeconfig.unlink(missing_ok=True)  # realcluster writes it once ready; a stale one would say so too early
        with self.log_path.open("ab") as log:
            argv = [str(REALCLUSTER_BIN), "up", "--data-dir", str(self.data_dir), "--port", str(self.port), *self.extra_args]
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"realcluster exited with {self.proc.returncode}: {self.log_path.read_text()[-3000:]}")
            if self.kubeconfig.exists():
                return self
            time.sleep(0.1)
        raise RuntimeError(f"realcluster was not ready within {timeout_s}s: {self.log_path.read_text()[-3000:]}")


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


@dataclass(frozen=True)
class AuditRecord:
    """One completed API request as an audit log saw it, whichever server wrote the log."""

    verb: str
    api_group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    user_agent: str
    user: str


def read_audit_log(path: Path) -> list[AuditRecord]:
    """The records of a ``--audit-log`` file: devcluster's lines, or kube-apiserver's audit Events
    (realcluster, level Metadata, stage ResponseComplete; a watch appears once it ends, as
    ResponseStarted first). Non-resource requests (``/healthz``, discovery) are left out."""
    import json

    records: list[AuditRecord] = []
    if not path.exists():
        return records
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("kind") == "Event":  # kube-apiserver
            ref = entry.get("objectRef")
            if ref is None or entry.get("stage") not in ("ResponseComplete", "ResponseStarted"):
                continue
            if entry["stage"] == "ResponseStarted" and entry["verb"] != "watch":
                continue
            if entry["stage"] == "ResponseComplete" and entry["verb"] == "watch":
                continue
            records.append(
                AuditRecord(
                    verb=entry["verb"],
                    api_group=ref.get("apiGroup", ""),
                    resource=ref.get("resource", ""),
                    subresource=ref.get("subresource", ""),
                    namespace=ref.get("namespace", ""),
                    name=ref.get("name", ""),
                    code=int((entry.get("responseStatus") or {}).get("code", 0)),
                    user_agent=entry.get("userAgent", ""),
                    user=(entry.get("user") or {}).get("username", ""),
                )
            )
        elif entry.get("resource"):  # devcluster (no authentication: no user)
            records.append(
                AuditRecord(
                    verb=entry["verb"],
                    api_group=entry.get("apiGroup") or "",
                    resource=entry["resource"],
                    subresource=entry.get("subresource") or "",
                    namespace=entry.get("namespace") or "",
                    name=entry.get("name") or "",
                    code=int(entry["code"]),
                    user_agent=entry.get("userAgent") or "",
                    user="",
                )
            )
    return records


def install_crds(kubeconfig: Path, timeout_s: float = 30.0, *, directory: Path = ROOT / "crds", replace: bool = False) -> None:
    """Create the product's CRDs (crds/*.yaml, or those of ``directory``) in the cluster behind ``kubeconfig`` and wait
    until each is Established, as a real API server serves a new kind only then (idempotent). ``replace``: a CRD that
    exists is replaced by the file's (an upgrade of the CRDs, as ``kubectl apply`` makes it)."""
    import yaml
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        ext = client.ApiextensionsV1Api(api)
        names = []
        for path in sorted(directory.glob("*.yaml")):
            body = yaml.safe_load(path.read_text())
            names.append(body["metadata"]["name"])
            try:
                ext.create_custom_resource_definition(body)
            except client.ApiException as e:
                if e.status != 409:
                    raise
                if replace:
                    current = api.sanitize_for_serialization(ext.read_custom_resource_definition(body["metadata"]["name"]))
                    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                    ext.replace_custom_resource_definition(body["metadata"]["name"], body)

        def established(name: str) -> bool:
            crd = api.sanitize_for_serialization(ext.read_custom_resource_definition(name))
            return any(c["type"] == "Established" and c["status"] == "True" for c in crd.get("status", {}).get("conditions") or [])

        for name in names:
            wait_for(lambda name=name: established(name), timeout_s=timeout_s, message=f"CRD {name} Established")  # type: ignore[misc]
    finally:
        api.close()


def as_dict(answer: object) -> dict[str, Any]:
    """A CustomObjectsApi answer: the client annotates it ``object``; it is the decoded JSON object."""
    assert isinstance(answer, dict), answer
    return answer


_T = TypeVar("_T")


def wait_for(predicate: Callable[[], _T | None], timeout_s: float = 10.0, interval_s: float = 0.05, message: str = "condition") -> _T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {message}")
        time.sleep(interval_s)
