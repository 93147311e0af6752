"""The API servers the benchmarks run against, behind one interface, and their audit logs read as one format.

Used by ``devcluster/bench/apiserver.py`` and ``bench/reconcile.py`` (``--server dev|real|both``); never by the
product or the tests. Two kinds:

* ``dev``: :class:`DevServer`, ``python -m devcluster serve`` (plain HTTP, no authentication; one
  process, which also simulates Deployment readiness).
* ``real``: :class:`RealServer`, ``realcluster/bin/realcluster up`` (built by
  ``scripts/build_realcluster.sh``): a real kube-apiserver with etcd, kube-controller-manager,
  kube-scheduler and a simulated node that makes pods Running/Ready after ``--pod-ready-delay``.
  HTTPS on 127.0.0.1 with the cluster's CA and the admin bearer token (``pki/tokens.csv``).
  ``up`` runs etcd and the node simulator in its own process and the three components as child
  processes, so its CPU is split in two: :meth:`RealServer.cpu_seconds` = kube-apiserver + ``up``
  (etcd, node simulator), :meth:`RealServer.controllers_cpu_seconds` = controller manager + scheduler.

Each server lives in a work dir of its own (data, logs, kubeconfig, audit log); :meth:`stop` signals
only the process it started, by PID (realcluster stops its children itself).

:class:`AuditLog` reads either server's ``--audit-log`` incrementally into :class:`AuditRecord`
(devcluster: one JSON line per request; kube-apiserver: audit Events at level Metadata, taken at
stage ResponseComplete, a watch at ResponseStarted since it completes only when it ends).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, Self
from urllib.parse import parse_qs, urlsplit

import orjson
from common import ROOT, Endpoint, cpu_seconds, free_port, start_devcluster, stop_process, wait_until

SERVER_KINDS = ("dev", "real")
REALCLUSTER_BIN = ROOT / "realcluster" / "bin" / "realcluster"
BUILD_SCRIPT = ROOT / "scripts" / "build_realcluster.sh"
READ_VERBS = frozenset({"get", "list", "watch"})


def realcluster_unavailable() -> str:
    """Why the real control plane cannot run here ("" if it can). Runs the build script first, which is
    a no-op when the binary is up to date and needs Go otherwise; a binary that is there is used even
    when the script cannot run (no Go toolchain: exit 3)."""
    try:
        result = subprocess.run([str(BUILD_SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        failed = f"exit {result.returncode}: {(result.stderr.strip().splitlines() or ['no output'])[-1]}" if result.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as e:
        failed = repr(e)
    if REALCLUSTER_BIN.exists():
        return ""
    return f"realcluster/bin/realcluster is not built and scripts/build_realcluster.sh could not build it ({failed or 'no binary'})"


def choose_servers(server: str | None) -> tuple[list[str], str]:
    """The server kinds for ``--server`` (None: both if realcluster is usable, else dev) and a note for stderr."""
    if server == "dev":
        return ["dev"], ""
    why_not = realcluster_unavailable()
    if server is not None and why_not:
        raise SystemExit(f"--server {server}: {why_not}")
    if why_not:
        return ["dev"], f"note: benchmarking devcluster only: {why_not}"
    return (["real"] if server == "real" else list(SERVER_KINDS)), ""


def realcluster_version() -> str:
    """The Kubernetes version realcluster is built from (``realcluster version``), "?" if it does not answer."""
    try:
        out = subprocess.run([str(REALCLUSTER_BIN), "version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out or "?"


class ApiServer:
    """One API server process in ``work``; subclasses say how to start it."""

    kind = ""

    def __init__(self, work: Path, *, ready_delay_s: float | None = None, audit: bool = False) -> None:
        self.work = work
        self.ready_delay_s = ready_delay_s
        self.audit_path: Path | None = work / "audit.jsonl" if audit else None
        self.port = free_port()
        self.endpoint = Endpoint(self.port)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def kubeconfig(self) -> Path:
        raise NotImplementedError

    @property
    def log_path(self) -> Path:
        raise NotImplementedError

    def start(self) -> Self:
        raise NotImplementedError

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the API server and its storage."""
        return cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def controllers_cpu_seconds(self) -> float:
        """CPU seconds used so far by controllers running beside the API server (none for devcluster)."""
        return 0.0

    def profiled_pids(self) -> list[tuple[str, int]]:
        """(label, pid) of the server processes worth profiling."""
        return [(self.kind, self.proc.pid)] if self.proc is not None else []

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout_s=60)
            self.proc = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class DevServer(ApiServer):
    """``python -m devcluster serve`` with ``--deployment-ready-delay``, a large watch history and
    (optionally) an audit log."""

    kind = "dev"

    def __init__(self, work: Path, *, ready_delay_s: float | None = None, audit: bool = False, extra_args: Sequence[str] = ()) -> None:
        super().__init__(work, ready_delay_s=ready_delay_s, audit=audit)
        self.extra_args = list(extra_args)

    @property
    def kubeconfig(self) -> Path:
        return self.work / "kubeconfig"

    @property
    def log_path(self) -> Path:
        return self.work / "devcluster.log"

    def start(self) -> Self:
        extra = ["--kubeconfig", str(self.kubeconfig), *self.extra_args]
        if self.ready_delay_s is not None:
            extra += ["--deployment-ready-delay", str(self.ready_delay_s)]
        if self.audit_path is not None:
            extra += ["--audit-log", str(self.audit_path)]
        self.proc = start_devcluster(
            port=self.port, data_dir=self.work / "data", log_path=self.log_path, extra_args=extra, kubeconfig=self.kubeconfig
        )
        return self


def child_pids(parent: int) -> dict[str, int]:
    """argv[1] → PID of ``parent``'s direct children (from /proc; realcluster re-executes itself per component)."""
    found: dict[str, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == parent:
                argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
                found[argv[1].decode() if len(argv) > 1 else "?"] = int(stat.parent.name)
    return found


class RealServer(ApiServer):
    """``realcluster up`` (real kube-apiserver + etcd + controller manager + scheduler + simulated node)."""

    kind = "real"
    COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")

    def __init__(self, work: Path, *, ready_delay_s: float | None = None, audit: bool = False) -> None:
        super().__init__(work, ready_delay_s=ready_delay_s, audit=audit)
        self.data_dir = work / "realcluster"
        self.children: dict[str, int] = {}

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    @property
    def log_path(self) -> Path:
        return self.work / "realcluster.log"

    def component_log(self, name: str) -> Path:
        """The log file of ``kube-apiserver``, ``kube-controller-manager`` or ``kube-scheduler``."""
        return self.data_dir / "logs" / f"{name}.log"

    def admin_token(self) -> str:
        for line in (self.data_dir / "pki" / "tokens.csv").read_text().splitlines():
            fields = line.split(",")
            if len(fields) >= 2 and fields[1] == "admin":
                return fields[0]
        raise RuntimeError(f"no admin token in {self.data_dir / 'pki' / 'tokens.csv'}")

    def start(self, timeout_s: float = 180.0) -> Self:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(REALCLUSTER_BIN), "up", "--data-dir", str(self.data_dir), "--port", str(self.port)]
        if self.ready_delay_s is not None:
            argv += ["--pod-ready-delay", f"{self.ready_delay_s:g}s"]
        if self.audit_path is not None:
            argv += ["--audit-log", str(self.audit_path)]
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_until(self._ready, timeout_s, "realcluster's kubeconfig", interval_s=0.1)
            self.endpoint = Endpoint(self.port, ca_file=str(self.data_dir / "pki" / "ca.crt"), token=self.admin_token())
            self.children = child_pids(self.proc.pid)
            missing = set(self.COMPONENTS) - set(self.children)
            if missing:
                raise RuntimeError(f"realcluster's {sorted(missing)} not found among its children {self.children}")
        except BaseException:
            self.stop()
            raise
        return self

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"realcluster exited with {self.proc.returncode}: {self.log_tail()}")
        return self.kubeconfig.exists()

    def cpu_seconds(self) -> float:
        """kube-apiserver + the ``up`` process (embedded etcd, node simulator)."""
        if self.proc is None:
            return 0.0
        return cpu_seconds(self.proc.pid) + cpu_seconds(self.children["kube-apiserver"])

    def controllers_cpu_seconds(self) -> float:
        """kube-controller-manager + kube-scheduler."""
        return sum(cpu_seconds(self.children[name]) for name in ("kube-controller-manager", "kube-scheduler")) if self.proc else 0.0

    def profiled_pids(self) -> list[tuple[str, int]]:
        return [("kube-apiserver", self.children["kube-apiserver"])] if self.proc is not None else []


def make_server(
    kind: str, work: Path, *, ready_delay_s: float | None = None, audit: bool = False, dev_args: Sequence[str] = ()
) -> ApiServer:
    """A (not yet started) server of ``kind`` in ``work`` (created if missing). ``ready_delay_s`` is
    devcluster's ``--deployment-ready-delay`` or realcluster's ``--pod-ready-delay`` (None: their default)."""
    work.mkdir(parents=True, exist_ok=True)
    if kind == "dev":
        return DevServer(work, ready_delay_s=ready_delay_s, audit=audit, extra_args=dev_args)
    if kind == "real":
        return RealServer(work, ready_delay_s=ready_delay_s, audit=audit)
    raise ValueError(kind)


# --------------------------------------------------------------------------------------------
# Audit logs


class AuditRecord(NamedTuple):
    """One resource request as either server's audit log saw it."""

    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    user_agent: str
    user: str
    dry_run: bool


def kube_record(entry: dict[str, Any]) -> AuditRecord | None:
    """A kube-apiserver audit Event: once per request (ResponseComplete; a watch at ResponseStarted)."""
    ref = entry.get("objectRef")
    stage, verb = entry.get("stage"), entry.get("verb", "")
    if ref is None or stage != ("ResponseStarted" if verb == "watch" else "ResponseComplete"):
        return None
    uri = entry.get("requestURI", "")
    dry_run = "dryRun=" in uri and "All" in parse_qs(urlsplit(uri).query).get("dryRun", [])
    return AuditRecord(
        verb=verb,
        resource=ref.get("resource", ""),
        subresource=ref.get("subresource", ""),
        namespace=ref.get("namespace", ""),
        name=ref.get("name", ""),
        code=int((entry.get("responseStatus") or {}).get("code", 0)),
        user_agent=entry.get("userAgent", ""),
        user=(entry.get("user") or {}).get("username", ""),
        dry_run=dry_run,
    )


def dev_record(entry: dict[str, Any]) -> AuditRecord | None:
    """A devcluster audit line (no authentication: no user)."""
    if not entry.get("resource"):
        return None
    return AuditRecord(
        verb=entry.get("verb", ""),
        resource=entry["resource"],
        subresource=entry.get("subresource") or "",
        namespace=entry.get("namespace") or "",
        name=entry.get("name") or "",
        code=int(entry.get("code", 0)),
        user_agent=entry.get("userAgent") or "",
        user="",
        dry_run=bool(entry.get("dryRun")),
    )


class AuditLog:
    """Reads a ``--audit-log`` file of either server incrementally (:meth:`poll`) into :attr:`records`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[AuditRecord] = []
        self._offset = 0
        self._partial = b""

    def poll(self) -> int:
        """Parse the lines appended since the last call; returns the number of records so far."""
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
            self._offset += len(data)
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                if line:
                    entry = orjson.loads(line)
                    record = kube_record(entry) if entry.get("kind") == "Event" else dev_record(entry)
                    if record is not None:
                        self.records.append(record)
        return len(self.records)

    def mark(self) -> int:
        """The index the next record will have: the start of a window for :meth:`writes`."""
        return self.poll()

    def writes(self, agents: tuple[str, ...], start: int, end: int | None = None) -> list[AuditRecord]:
        """Non-dry-run writes (any verb but get/list/watch) by User-Agents starting with ``agents``, records [start, end)."""
        self.poll()
        return [r for r in self.records[start:end] if r.verb not in READ_VERBS and r.user_agent.startswith(agents) and not r.dry_run]

    def watching(self, agents: tuple[str, ...], resources: tuple[str, ...], since: int) -> bool:
        """Whether those agents have started a watch on each of ``resources`` since record ``since``."""
        self.poll()
        seen = {r.resource for r in self.records[since:] if r.verb == "watch" and r.user_agent.startswith(agents)}
        return all(resource in seen for resource in resources)

    def agents(self) -> Counter[str]:
        """How many records each User-Agent (first 40 characters) has: for error messages."""
        self.poll()
        return Counter(r.user_agent[:40] for r in self.records)
