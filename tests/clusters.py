"""The two kinds of API server the tests and the benchmarks run, as subprocesses with one interface.

:class:`DevclusterProcess` (``kind == "dev"``: ``python -m devcluster serve``, our embedded emulator over plain HTTP, no
authentication) and :class:`RealclusterProcess` (``kind == "real"``: ``realcluster/bin/realcluster up``, built by
``scripts/build_realcluster.sh`` — a real etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a simulated
node, over TLS with static-token authentication), both behind :class:`ClusterProcess`. Each lives in a data dir of its
own, which keeps its objects across restarts, holds its log (``devcluster.log`` / ``realcluster.log``) and the kubeconfig
it writes once ready (``<data-dir>/kubeconfig``: devcluster's default, and where realcluster writes it).

Options beside the data dir and the port, as plain optional fields: ``extra_args`` (passed through), ``audit_log``
(``--audit-log``: read it with ``tests/auditlog.py``), ``ready_delay_s`` (devcluster's ``--deployment-ready-delay``,
realcluster's ``--pod-ready-delay``) and ``log_level`` (devcluster's ``--log-level``). Once started, each gives its
:class:`Endpoint` (port, CA file, admin token: what the benchmarks' raw-socket client needs), the CPU seconds its
processes used (realcluster's are split: kube-apiserver + ``up`` itself vs controller manager + scheduler, its
``children`` found in /proc) and the tail of its log. :meth:`~_ServerProcess.stop` signals only the process it
started, by PID (realcluster stops its children itself); ``with`` stops it whatever happens.

Used by the tests' fixtures (``sharedfixtures.py``) and test modules of tests/ and devcluster/tests (the repository root
is on pytest's ``pythonpath``) and by the benchmarks (``bench/servers.py``, ``bench/common.py``: bench/common.py puts
the repository root on ``sys.path``). Imports nothing of the tests' but the standard library.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, Self

ROOT = Path(__file__).resolve().parent.parent
REALCLUSTER_BIN = ROOT / "realcluster" / "bin" / "realcluster"
HOST = "127.0.0.1"
ClusterKind = Literal["dev", "real"]
CLUSTER_KINDS: tuple[ClusterKind, ...] = ("dev", "real")
# realcluster's components, each a child process of ``realcluster up`` (it re-executes itself per component)
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
COMPONENTS_S = 15.0  # how long a started realcluster's components may take to show as its children


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports: each socket is held until all are picked (two :func:`free_port` calls
    may be handed the same port, and a process binding both then fails with "address already in use")."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind((HOST, 0))
        return [int(s.getsockname()[1]) for s in sockets]


def run_build(script: str) -> subprocess.CompletedProcess[str]:
    """Run scripts/<script> (a Go build into realcluster/bin/: ``build_realcluster.sh``, ``build_hydra.sh``) holding
    realcluster/bin/.build.lock: several pytest or benchmark processes started at once build one after the other; the
    later ones find it up to date. Exit 3: no Go toolchain. Its output is captured (``stderr`` says what it did)."""
    lock_path = ROOT / "realcluster" / "bin" / ".build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run([str(ROOT / "scripts" / script)], capture_output=True, text=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (from /proc; 0 where unavailable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(parent: int) -> dict[str, int]:
    """argv[1] → PID of ``parent``'s direct children (from /proc; realcluster re-executes itself per component)."""
    found: dict[str, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == parent:
                argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
                found[argv[1].decode() if len(argv) > 1 else "?"] = int(stat.parent.name)
    return found


def read_token(tokens_csv: Path, user: str = "admin") -> str:
    """The static token of ``user`` in a kube-apiserver ``--token-auth-file`` (``token,user,uid[,groups]``)."""
    for line in tokens_csv.read_text().splitlines():
        fields = line.split(",")
        if len(fields) >= 2 and fields[1] == user:
            return fields[0]
    raise KeyError(f"{user} (no such user in {tokens_csv})")


@functools.cache
def tls_context(ca_file: str) -> ssl.SSLContext:
    """A client context trusting only ``ca_file``, HTTP/1.1 by ALPN (one per process and CA file)."""
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(frozen=True)
class Endpoint:
    """Where an API server listens and how to reach it: plain HTTP (devcluster), or TLS verified
    against ``ca_file`` with a bearer ``token`` (the real control plane). Picklable: worker
    processes build their own TLS context from the file."""

    port: int
    ca_file: str = ""
    token: str = ""
    host: str = HOST

    def connect(self, timeout_s: float) -> socket.socket:
        """A connected socket (TCP_NODELAY), TLS-wrapped (handshake done) when ``ca_file`` is set."""
        sock = socket.create_connection((self.host, self.port), timeout=timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.ca_file:
            return sock
        try:
            return tls_context(self.ca_file).wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise

    def headers(self, user_agent: str) -> bytes:
        """The request headers every request carries (Host, User-Agent, Accept, Authorization)."""
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        return f"Host: {self.host}:{self.port}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n{auth}".encode()


class ClusterProcess(Protocol):
    """What tests and benchmarks may rely on for either kind of cluster."""

    data_dir: Path
    port: int
    proc: subprocess.Popen[bytes] | None
    audit_log: Path | None
    ready_delay_s: float | None

    @property
    def kind(self) -> ClusterKind: ...

    @property
    def url(self) -> str: ...

    @property
    def kubeconfig(self) -> Path: ...

    @property
    def endpoint(self) -> Endpoint: ...

    def start(self, timeout_s: float = ...) -> Self: ...

    def stop(self, sig: int = ..., timeout_s: float = ...) -> int: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...

    def cpu_seconds(self) -> float: ...

    def controllers_cpu_seconds(self) -> float: ...

    def profiled_pids(self) -> list[tuple[str, int]]: ...

    def log_tail(self) -> str: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass
class _ServerProcess:
    """What both kinds of cluster subprocess share: a data dir, a port, the options, the process and stopping it."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    audit_log: Path | None = None
    ready_delay_s: float | None = None
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def _popen(self, argv: list[str], log_name: str) -> subprocess.Popen[bytes]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / log_name
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        return self.proc

    def _wait_ready(self, ready: Callable[[], bool], timeout_s: float, what: str, interval_s: float) -> None:
        """Poll ``ready()`` until true; RuntimeError (the process stopped again) if it exits or ``timeout_s`` passes."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        try:
            while not ready():
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{what} exited with {self.proc.returncode}: {self.log_tail()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{what} was not ready within {timeout_s:g}s: {self.log_tail()}")
                time.sleep(interval_s)
        except BaseException:
            self.close()
            raise

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> int:
        """Signal the process (by PID) and wait for it; its exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        self.proc = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def close(self) -> None:
        """Stop it if it runs (SIGKILL if SIGTERM has not ended it within 60 s): for ``finally`` blocks and ``with``."""
        if self.proc is None:
            return
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            self.kill()

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the API server and its storage."""
        return cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def controllers_cpu_seconds(self) -> float:
        """CPU seconds used so far by controllers running beside the API server (none for devcluster)."""
        return 0.0

    def log_tail(self) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-3000:] if path is not None and path.exists() else ""

    def start(self, timeout_s: float = 30.0) -> Self:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class DevclusterProcess(_ServerProcess):
    """A devcluster subprocess; restartable on the same port and data dir. ``log_level``: its ``--log-level``."""

    log_level: str | None = None

    @property
    def kind(self) -> ClusterKind:
        return "dev"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.port)

    def start(self, timeout_s: float = 30.0) -> Self:
        argv = [sys.executable, "-m", "devcluster", "serve", "--host", HOST, "--port", str(self.port), "--data-dir", str(self.data_dir)]
        if self.ready_delay_s is not None:
            argv += ["--deployment-ready-delay", str(self.ready_delay_s)]
        if self.audit_log is not None:
            argv += ["--audit-log", str(self.audit_log)]
        if self.log_level is not None:
            argv += ["--log-level", self.log_level]
        self._popen([*argv, *self.extra_args], "devcluster.log")
        self._wait_ready(self._ready, timeout_s, "devcluster", interval_s=0.05)
        return self

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/readyz", timeout=1) as response:
                return response.status == 200 and self.kubeconfig.exists()
        except OSError:
            return False

    def profiled_pids(self) -> list[tuple[str, int]]:
        """(label, pid) of the server processes worth profiling."""
        return [("dev", self.proc.pid)] if self.proc is not None else []


@dataclass
class RealclusterProcess(_ServerProcess):
    """``realcluster up`` as a subprocess (real etcd, kube-apiserver, controller manager, scheduler and a
    simulated node); restartable on the same port and data dir, which keeps every object.

    ``start`` waits for the kubeconfig, which realcluster writes only once the node is Ready and the
    ``default`` service account exists, and finds its components among its children. The admin kubeconfig
    authenticates with a static token (system:masters); :meth:`token` gives the token of another static user
    (``alice``, ``bob``).
    """

    children: dict[str, int] = field(default_factory=dict)

    @property
    def kind(self) -> ClusterKind:
        return "real"

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.port}"

    @property
    def ca_path(self) -> Path:
        return self.data_dir / "pki" / "ca.crt"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.port, ca_file=str(self.ca_path), token=self.token())

    def token(self, user: str = "admin") -> str:
        return read_token(self.data_dir / "pki" / "tokens.csv", user)

    def component_log(self, name: str) -> Path:
        """The log file of ``kube-apiserver``, ``kube-controller-manager`` or ``kube-scheduler``."""
        return self.data_dir / "logs" / f"{name}.log"

    def start(self, timeout_s: float = 180.0) -> Self:
        self.kubeconfig.unlink(missing_ok=True)  # realcluster writes it once ready; a stale one would say so too early
        argv = [str(REALCLUSTER_BIN), "up", "--data-dir", str(self.data_dir), "--port", str(self.port)]
        if self.ready_delay_s is not None:
            argv += ["--pod-ready-delay", f"{self.ready_delay_s:g}s"]
        if self.audit_log is not None:
            argv += ["--audit-log", str(self.audit_log)]
        self._popen([*argv, *self.extra_args], "realcluster.log")
        self._wait_ready(self.kubeconfig.exists, timeout_s, "realcluster", interval_s=0.1)
        assert self.proc is not None
        # On a restart over kept data realcluster is usable at once, so its kubeconfig can come while the controller
        # manager and the scheduler it has just started are still in exec (a 139 MB binary on a busy machine): their
        # /proc cmdline reads empty for that moment. Look again until each component is there, or for COMPONENTS_S.
        deadline = time.monotonic() + COMPONENTS_S
        while True:
            self.children = child_pids(self.proc.pid)
            missing = set(COMPONENTS) - set(self.children)
            if not missing or time.monotonic() > deadline or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if missing:
            self.close()
            raise RuntimeError(f"realcluster's {sorted(missing)} not found among its children {self.children}")
        return self

    def cpu_seconds(self) -> float:
        """kube-apiserver + the ``up`` process (embedded etcd, node simulator)."""
        if self.proc is None:
            return 0.0
        return cpu_seconds(self.proc.pid) + cpu_seconds(self.children["kube-apiserver"])

    def controllers_cpu_seconds(self) -> float:
        """kube-controller-manager + kube-scheduler."""
        if self.proc is None:
            return 0.0
        return sum(cpu_seconds(self.children[name]) for name in ("kube-controller-manager", "kube-scheduler"))

    def profiled_pids(self) -> list[tuple[str, int]]:
        """(label, pid) of the server processes worth profiling: kube-apiserver."""
        return [("kube-apiserver", self.children["kube-apiserver"])] if self.proc is not None else []


def make_cluster(
    kind: str,
    data_dir: Path,
    *,
    ready_delay_s: float | None = None,
    audit_log: Path | None = None,
    dev_args: list[str] | None = None,
    log_level: str | None = None,
) -> DevclusterProcess | RealclusterProcess:
    """A (not yet started) cluster of ``kind`` in ``data_dir``; ``dev_args`` and ``log_level`` are devcluster's only."""
    if kind == "dev":
        return DevclusterProcess(
            data_dir, extra_args=list(dev_args or []), audit_log=audit_log, ready_delay_s=ready_delay_s, log_level=log_level
        )
    if kind == "real":
        return RealclusterProcess(data_dir, audit_log=audit_log, ready_delay_s=ready_delay_s)
    raise ValueError(kind)
