"""Benchmark the reconciler against a kopf peer: 1,000 Darkrooms created at once → all Ready, printed as a markdown table.

Never run by the test suite; run it with::

    .venv/bin/python bench/reconcile.py                  # full: 1,000 Darkrooms, median of 3 runs per operator (~7 min)
    .venv/bin/python bench/reconcile.py --count 100 --runs 1 --resync-s 10   # sanity run (~40 s)
    .venv/bin/python bench/reconcile.py --operators kopf       # one side only

Method
------
* Operators: ``ours`` = ``python -m darkroom_operator --kubeconfig K --namespace bench --workers W
  --health-port P --no-leader-election`` (``DARKROOM_OPERATOR_RESYNC_S`` = ``--resync-s``, log
  level WARNING); ``kopf`` = ``python -m kopf run --standalone --namespace bench --quiet
  bench/peers/kopf_darkroom.py`` (the peer's module docstring says what it does and why;
  ``KOPF_PEER_WORKERS`` = W). Leader election is off for both (kopf ``--standalone``: no peering).
* Every (run, operator) pair gets a fresh ``python -m devcluster serve`` on a free 127.0.0.1 port
  with a temp data dir, the same flags for both (``--deployment-ready-delay`` = ``--ready-delay``,
  ``--history-size 200000`` so no watch ever gets 410, ``--audit-log``), the product's CRDs and one
  namespace. The order of the operators alternates between runs. Each figure in the table is the
  median over ``--runs`` runs; both operators run in the same invocation on the same machine.
* Convergence: once the operator is ready (ours: ``/readyz`` 200; both: the audit log shows its
  watches on Darkrooms and Deployments), ``--count`` Darkrooms (WebFolder source, two sub-domains)
  are POSTed by ``--clients`` threads, each with one keep-alive connection. This process watches
  the Darkrooms with an informer (cluster.Cache; Darkrooms only, to keep this process's own CPU
  out of the way: ~0.7 s for 1,000) and notes when each is first seen ``Ready=True``; once all are,
  it lists the four child kinds until every Darkroom's ConfigMap, Deployment, Service and Ingress
  exist (a child missing at the first look moves its Darkroom's done time to when it showed up;
  both operators apply all four before Ready can turn True, so that never happened). "time until
  all Ready" runs from the first POST to the last Darkroom done; per Darkroom, create → Ready is
  from its POST's acknowledgement to it being done (p50 / p99).
* Reconciles: ours = ``darkroom_operator_reconcile_total{controller="darkroom"}`` (all results)
  from ``/metrics``; kopf = handler invocations (Darkroom create/update/resume handler + Deployment
  event handler), counted by the peer. Read when all are Ready; reconciles/s = that count / time
  to all Ready.
* Writes: audit-log records (``--audit-log`` of devcluster) whose verb is not get/list/watch and
  whose User-Agent is the operator's (ours ``darkroom-operator``; kopf ``kopf/`` and the peer's
  client ``kopf-peer/``), from the first POST until the writes are quiet.
* Peak RSS: ``VmHWM`` of the operator process from ``/proc/<pid>/status`` (psutil is not needed),
  read just before it is stopped, so it covers convergence and the resync; CPU = utime + stime.
* Resync (ours): after convergence, wait until the reconcile counter has grown by ``--count``
  (one full periodic resync: ``--resync-s`` after the operator started, then every ``--resync-s``;
  keep it above the convergence time so no resync runs during convergence — the run warns if one
  did) and the writes are quiet; report the writes in that window (target 0). kopf has no periodic
  resync; its level-triggered re-handling of existing objects is ``on.resume`` at startup. So both
  operators are then restarted (SIGTERM, wait, start again, same flags) and the writes until the
  new process has handled every Darkroom and gone quiet are reported as "writes on restart".
* Where the time goes: ``--profile DIR`` attaches ``py-spy record`` (in .venv) to the operator, and
  with ``--profile-server`` to devcluster, from ready until all Darkrooms are Ready (collapsed
  stacks; add ``--profile-idle`` for waiting threads).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, cpu_seconds, free_port, install_crds, log, machine_summary, start_devcluster, stop_process, wait_until
from common import Conn as BaseConn
from common import quantile as percentile

sys.path.insert(0, str(ROOT))

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, INGRESSES, SERVICES, Cache, ConnectionSettings, InformerSettings, connect

HOST = "127.0.0.1"
NAMESPACE = "bench"
PEER = ROOT / "bench" / "peers" / "kopf_darkroom.py"
READ_VERBS = frozenset({"get", "list", "watch"})
CHILD_KINDS = (CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES)


def proc_status(pid: int) -> dict[str, str]:
    with contextlib.suppress(OSError):
        return dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {}


def peak_rss_mib(pid: int) -> float:
    value = proc_status(pid).get("VmHWM", "0 kB").split()
    return int(value[0]) / 1024 if value else 0.0


# --------------------------------------------------------------------------------------------
# The cluster: devcluster with an audit log


class AuditLog:
    """Reads devcluster's audit log incrementally; counts writes by User-Agent prefix between marks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
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
            self.records.extend(json.loads(line) for line in lines if line)
        return len(self.records)

    def mark(self) -> int:
        return self.poll()

    def writes(self, agents: tuple[str, ...], start: int, end: int | None = None) -> list[dict[str, Any]]:
        self.poll()
        return [
            r
            for r in self.records[start:end]
            if r.get("verb") not in READ_VERBS and str(r.get("userAgent") or "").startswith(agents) and not r.get("dryRun")
        ]

    def watching(self, agents: tuple[str, ...], resources: tuple[str, ...], since: int) -> bool:
        self.poll()
        seen = {
            r.get("resource") for r in self.records[since:] if r.get("verb") == "watch" and str(r.get("userAgent") or "").startswith(agents)
        }
        return all(resource in seen for resource in resources)

    def agents(self) -> Counter[str]:
        self.poll()
        return Counter(str(r.get("userAgent") or "")[:40] for r in self.records)


def breakdown(records: list[dict[str, Any]]) -> str:
    counts = Counter(f"{r['verb']} {r['resource']}{'/' + r['subresource'] if r.get('subresource') else ''}" for r in records)
    return ", ".join(f"{what} {n}" for what, n in counts.most_common()) or "none"


class Cluster:
    """One devcluster subprocess (temp data dir, audit log), the CRDs installed, the bench namespace created."""

    def __init__(self, work: Path, *, ready_delay_s: float) -> None:
        self.dir = work
        self.port = free_port()
        self.kubeconfig = work / "kubeconfig"
        self.audit = AuditLog(work / "audit.jsonl")
        self.ready_delay_s = ready_delay_s
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Cluster:
        extra = [
            "--kubeconfig", str(self.kubeconfig), "--deployment-ready-delay", str(self.ready_delay_s), "--history-size", "200000",
            "--audit-log", str(self.audit.path),
        ]  # fmt: skip
        self.proc = start_devcluster(
            port=self.port, data_dir=self.dir / "data", log_path=self.dir / "devcluster.log", extra_args=extra, kubeconfig=self.kubeconfig
        )
        conn = Conn(self.port)
        install_crds(conn, namespace=NAMESPACE, probe_path=DARKROOMS.path(namespace=NAMESPACE), timeout_s=10)
        conn.close()
        return self

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc else 0.0

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


class Conn(BaseConn):
    USER_AGENT = "reconcile-bench/1"


# --------------------------------------------------------------------------------------------
# The operators under test


class Operator:
    """One operator process: how to start it, when it is ready, how many reconciles it has done."""

    label = ""
    agents: tuple[str, ...] = ()

    def __init__(self, cluster: Cluster, opts: argparse.Namespace) -> None:
        self.cluster = cluster
        self.opts = opts
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.started_at = 0  # audit-log record index when the current process was started
        self.started_mono = 0.0

    def command(self) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError

    def ready(self) -> bool:
        return self.cluster.audit.watching(self.agents, ("darkrooms", "deployments"), self.started_at)

    def reconciles(self) -> int:
        raise NotImplementedError

    def start(self) -> None:
        self.starts += 1
        self.started_at = self.cluster.audit.mark()
        self.started_mono = time.monotonic()
        cmd, env = self.command()
        with (self.cluster.dir / f"{self.label}-{self.starts}.log").open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        def ready() -> bool:
            self.check_alive()
            return self.ready()

        wait_until(ready, timeout_s, f"{self.label} to become ready", interval_s=0.1)

    def check_alive(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            tail = (self.cluster.dir / f"{self.label}-{self.starts}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.label} exited with {self.proc.returncode}:\n{tail}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


class Ours(Operator):
    label = "darkroom-operator"
    agents = ("darkroom-operator",)

    def __init__(self, cluster: Cluster, opts: argparse.Namespace) -> None:
        super().__init__(cluster, opts)
        self.health_port = free_port()

    def command(self) -> tuple[list[str], dict[str, str]]:
        cmd = [
            sys.executable, "-m", "darkroom_operator", "--kubeconfig", str(self.cluster.kubeconfig), "--namespace", NAMESPACE,
            "--workers", str(self.opts.workers), "--health-port", str(self.health_port), "--no-leader-election",
        ]  # fmt: skip
        env = {"DARKROOM_OPERATOR_RESYNC_S": str(self.opts.resync_s), "DARKROOM_OPERATOR_LOG_LEVEL": "WARNING"}
        return cmd, env

    def _get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.health_port}{path}", timeout=5) as response:
                return response.status, response.read().decode()
        except OSError:
            return 0, ""

    def ready(self) -> bool:
        return self._get("/readyz")[0] == 200 and super().ready()

    def reconciles(self) -> int:
        status, text = self._get("/metrics")
        if status != 200:
            raise RuntimeError(f"{self.label} /metrics answered {status}")
        total = 0.0
        for line in text.splitlines():
            if line.startswith("darkroom_operator_reconcile_total{") and 'controller="darkroom"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return int(total)


class Kopf(Operator):
    label = "kopf"
    agents = ("kopf/", "kopf-peer/")

    def __init__(self, cluster: Cluster, opts: argparse.Namespace) -> None:
        super().__init__(cluster, opts)
        self.stats = cluster.dir / "kopf-stats.json"

    def command(self) -> tuple[list[str], dict[str, str]]:
        self.stats.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", NAMESPACE, "--quiet", str(PEER)]
        env = {"KUBECONFIG": str(self.cluster.kubeconfig), "KOPF_PEER_STATS": str(self.stats), "KOPF_PEER_WORKERS": str(self.opts.workers)}
        return cmd, env

    def counters(self) -> dict[str, int]:
        try:
            counters: dict[str, int] = json.loads(self.stats.read_text())
        except (OSError, ValueError):
            return {}
        return counters

    def reconciles(self) -> int:
        counters = self.counters()
        return counters.get("darkroom_handler", 0) + counters.get("deployment_handler", 0)

    def darkrooms_handled(self) -> int:
        return self.counters().get("darkroom_handler", 0)


OPERATORS: dict[str, type[Operator]] = {"ours": Ours, "kopf": Kopf}


# --------------------------------------------------------------------------------------------
# Convergence tracking (informers on the namespace)


class Tracker:
    """When each Darkroom was first seen ``Ready=True`` (an informer on Darkrooms only: cheap for this process).

    The children are checked once every Darkroom is Ready (:meth:`wait_for_children`): both
    operators apply all four before Ready can turn True, so the lists normally find them all and
    change nothing; a child found missing moves its Darkroom's done time to when it showed up.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.ready_at: dict[str, float] = {}
        self.all_ready = threading.Event()
        self.lock = threading.Lock()

    def darkroom(self, obj: Any) -> None:
        conditions = (obj.get("status") or {}).get("conditions") or ()
        if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            now = time.monotonic()
            with self.lock:
                self.ready_at.setdefault(obj["metadata"]["name"], now)
                if len(self.ready_at) >= self.count:
                    self.all_ready.set()

    def watch(self, cache: Cache) -> None:
        informer = cache.add(DARKROOMS, namespace=NAMESPACE)
        informer.add_handler(on_add=self.darkroom, on_update=lambda _old, new: self.darkroom(new))

    def wait_for_children(self, port: int, timeout_s: float) -> dict[str, float]:
        """Done time per Darkroom: when it was Ready, or later when a missing child appeared."""
        with self.lock:
            done = dict(self.ready_at)
        missing = {(str(kind), name) for kind in CHILD_KINDS for name in done}
        conn = Conn(port)
        try:
            deadline = time.monotonic() + timeout_s
            first = True
            while missing:
                for kind in CHILD_KINDS:
                    items = conn.expect(200, "GET", kind.path(namespace=NAMESPACE))["items"]
                    now = time.monotonic()
                    for item in items:
                        key = (str(kind), item["metadata"]["name"])
                        if key in missing:
                            missing.discard(key)
                            if not first:
                                done[key[1]] = max(done[key[1]], now)
                first = False
                if missing and time.monotonic() > deadline:
                    raise TimeoutError(f"{len(missing)} children still missing, e.g. {sorted(missing)[:3]}")
                if missing:
                    time.sleep(0.2)
        finally:
            conn.close()
        return done


def darkroom_body(i: int) -> bytes:
    body = {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": f"dr-{i:05}", "labels": {"team": f"team-{i % 7}"}},
        "spec": {
            "version": "v0.1.0",
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": ["images", "cdn"],
        },
    }
    return json.dumps(body).encode()


def create_all(port: int, count: int, clients: int) -> tuple[float, dict[str, float]]:
    """POST ``count`` Darkrooms from ``clients`` threads (one keep-alive connection each); (first send time, ack time per name)."""
    acked: dict[str, float] = {}
    errors: list[str] = []
    start = threading.Barrier(clients + 1)
    path = DARKROOMS.path(namespace=NAMESPACE)

    def worker(indexes: range) -> None:
        conn = Conn(port)
        try:
            start.wait(30)
            for i in indexes:
                status, data = conn.request("POST", path, darkroom_body(i))
                if status != 201:
                    errors.append(f"POST dr-{i:05}: {status} {data[:300]!r}")
                    return
                acked[f"dr-{i:05}"] = time.monotonic()
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(range(t, count, clients),), daemon=True) for t in range(clients)]
    for t in threads:
        t.start()
    start.wait(30)
    first_sent = time.monotonic()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} creates failed, e.g. {errors[0]}")
    return first_sent, acked


# --------------------------------------------------------------------------------------------
# One run of one operator


@dataclass
class RunResult:
    operator: str
    time_to_ready_s: float
    create_s: float
    latency_p50_s: float
    latency_p99_s: float
    reconciles: int
    writes: int
    writes_detail: str
    peak_rss_mib: float
    cpu_s: float
    server_cpu_s: float
    resync_writes: int | None = None
    resync_detail: str = ""
    resync_s: float | None = None
    restart_writes: int = 0
    restart_detail: str = ""
    restart_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def darkrooms_per_s(self) -> float:
        return self.extra["count"] / self.time_to_ready_s

    @property
    def reconciles_per_s(self) -> float:
        return self.reconciles / self.time_to_ready_s


def wait_quiet(operator: Operator, since: int, quiet_s: float, timeout_s: float) -> None:
    """Until the operator has made no write for ``quiet_s`` (audit log, from record ``since``)."""
    audit = operator.cluster.audit
    last_count, last_change = -1, time.monotonic()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        operator.check_alive()
        n = len(audit.writes(operator.agents, since))
        now = time.monotonic()
        if n != last_count:
            last_count, last_change = n, now
        elif now - last_change >= quiet_s:
            return
        time.sleep(0.1)
    raise TimeoutError(f"{operator.label} kept writing for {timeout_s:g} s")


def run_once(kind: str, opts: argparse.Namespace, work: Path) -> RunResult:
    cluster = Cluster(work, ready_delay_s=opts.ready_delay).start()
    operator = OPERATORS[kind](cluster, opts)
    connection = connect(ConnectionSettings(kubeconfig=cluster.kubeconfig), environ={})
    cache = Cache(transport=connection.transport, settings=InformerSettings())
    tracker = Tracker(opts.count)
    tracker.watch(cache)
    try:
        cache.start()
        if not cache.wait_for_sync(30):
            raise RuntimeError("bench informers did not sync")
        operator.start()
        operator.wait_ready()
        profilers = start_profilers(operator, opts, work)
        since = cluster.audit.mark()
        server_cpu0, bench_cpu0 = cluster.cpu_seconds(), time.process_time()
        first_sent, acked = create_all(cluster.port, opts.count, opts.clients)
        create_s = max(acked.values()) - first_sent
        log(f"    created {opts.count} Darkrooms in {create_s:.1f} s")
        deadline = time.monotonic() + opts.timeout_s
        while not tracker.all_ready.wait(1.0):
            operator.check_alive()
            if time.monotonic() > deadline:
                with tracker.lock:
                    ready = len(tracker.ready_at)
                raise TimeoutError(f"{operator.label}: only {ready} of {opts.count} Darkrooms Ready after {opts.timeout_s:g} s")
        reconciles = operator.reconciles()
        cpu_at_ready = cpu_seconds(operator.pid)
        server_cpu = cluster.cpu_seconds() - server_cpu0
        overlap = isinstance(operator, Ours) and time.monotonic() - operator.started_mono >= opts.resync_s
        if overlap:
            log(f"    WARNING: a periodic resync ran before all were Ready (raise --resync-s above {opts.resync_s:g} s)")
        bench_cpu = time.process_time() - bench_cpu0
        done_at = tracker.wait_for_children(cluster.port, 60)
        latencies = [done_at[name] - acked[name] for name in acked]
        time_to_ready = max(done_at.values()) - first_sent
        for profiler in profilers:
            stop_process(profiler, timeout_s=60, sig=signal.SIGINT)
        log(f"    all Ready after {time_to_ready:.1f} s; waiting for the writes to settle")
        wait_quiet(operator, since, opts.settle_s, 120)
        converge_writes = cluster.audit.writes(operator.agents, since)
        if not converge_writes:
            raise RuntimeError(f"no writes by User-Agent {operator.agents} in the audit log; agents seen: {cluster.audit.agents()}")
        result = RunResult(
            operator=kind,
            time_to_ready_s=time_to_ready,
            create_s=create_s,
            latency_p50_s=percentile(latencies, 0.5),
            latency_p99_s=percentile(latencies, 0.99),
            reconciles=reconciles,
            writes=len(converge_writes),
            writes_detail=breakdown(converge_writes),
            peak_rss_mib=0.0,
            cpu_s=cpu_at_ready,
            server_cpu_s=server_cpu,
            extra={"count": opts.count, "bench_cpu_s": bench_cpu, "resync_overlap": overlap},
        )
        if isinstance(operator, Ours):
            resync_window(operator, result, opts)
        result.peak_rss_mib = peak_rss_mib(operator.pid)
        restart_window(operator, result, opts)
        return result
    finally:
        operator.stop()
        cache.stop()
        connection.close()
        cluster.stop()


def start_profilers(operator: Operator, opts: argparse.Namespace, work: Path) -> list[subprocess.Popen[bytes]]:
    """``py-spy record`` attached to the operator (and with ``--profile-server`` to devcluster) until all
    Darkrooms are Ready (``--profile DIR``): collapsed stacks, one file per process."""
    if not opts.profile:
        return []
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    targets = [(operator.label, operator.pid)]
    if opts.profile_server and operator.cluster.proc is not None:
        targets.append(("devcluster", operator.cluster.proc.pid))
    procs = []
    for label, pid in targets:
        out = Path(opts.profile) / f"{label}-{work.name}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [py_spy, "record", "--pid", str(pid), "--rate", "100", "--format", "raw", "--output", str(out), "--threads"]
        if opts.profile_idle:
            cmd.append("--idle")
        with (work / f"py-spy-{label}.log").open("ab") as log_file:
            procs.append(subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT))
        log(f"    profiling {label} (pid {pid}) into {out}")
    time.sleep(1.0)  # attached
    return procs


def resync_window(operator: Ours, result: RunResult, opts: argparse.Namespace) -> None:
    audit = operator.cluster.audit
    since = audit.mark()
    before = operator.reconciles()
    log(f"    waiting for a full periodic resync (every {opts.resync_s:g} s)")
    first_move: list[float] = []

    def resynced() -> bool:
        operator.check_alive()
        n = operator.reconciles()
        if n > before and not first_move:
            first_move.append(time.monotonic())
        return n >= before + opts.count

    wait_until(resynced, opts.resync_s + opts.timeout_s, "a full resync", interval_s=0.1)
    finished = time.monotonic()
    wait_quiet(operator, since, opts.settle_s, 120)
    writes = audit.writes(operator.agents, since)
    result.resync_writes, result.resync_detail = len(writes), breakdown(writes)
    result.resync_s = finished - first_move[0] if first_move else 0.0


def restart_window(operator: Operator, result: RunResult, opts: argparse.Namespace) -> None:
    """Stop the operator, start it again, and count its writes until it has handled every Darkroom and gone quiet."""
    operator.stop()
    audit = operator.cluster.audit
    since = audit.mark()
    started = time.monotonic()
    operator.start()
    operator.wait_ready()

    def handled() -> bool:
        operator.check_alive()
        n = operator.darkrooms_handled() if isinstance(operator, Kopf) else operator.reconciles()
        return n >= opts.count

    wait_until(handled, opts.timeout_s, f"{operator.label} to handle every Darkroom after a restart", interval_s=0.1)
    result.restart_s = time.monotonic() - started
    wait_quiet(operator, since, opts.settle_s, 120)
    writes = audit.writes(operator.agents, since)
    result.restart_writes, result.restart_detail = len(writes), breakdown(writes)


# --------------------------------------------------------------------------------------------
# Report


def machine_line() -> str:
    import kopf

    return f"{machine_summary()}, Python {platform.python_version()}, kopf {kopf.__version__}"


ROWS: list[tuple[str, Callable[[RunResult], float | None], str]] = [
    # (metric, value, format)
    ("time until all Darkrooms Ready with 4 children (s)", lambda r: r.time_to_ready_s, "{:.1f}"),
    ("Darkrooms Ready per second", lambda r: r.darkrooms_per_s, "{:.1f}"),
    ("create → Ready per Darkroom, p50 (s)", lambda r: r.latency_p50_s, "{:.1f}"),
    ("create → Ready per Darkroom, p99 (s)", lambda r: r.latency_p99_s, "{:.1f}"),
    ("reconciles (handler runs for kopf)", lambda r: r.reconciles, "{:,.0f}"),
    ("reconciles per second", lambda r: r.reconciles_per_s, "{:.1f}"),
    ("API writes until converged", lambda r: r.writes, "{:,.0f}"),
    ("operator CPU until all Ready (s)", lambda r: r.cpu_s, "{:.1f}"),
    ("devcluster CPU until all Ready (s)", lambda r: r.server_cpu_s, "{:.1f}"),
    ("peak RSS of the operator (MiB)", lambda r: r.peak_rss_mib, "{:.0f}"),
    ("API writes during a periodic resync of the converged set", lambda r: r.resync_writes, "{:,.0f}"),
    ("duration of that resync (s)", lambda r: r.resync_s, "{:.1f}"),
    ("API writes after a restart (re-handling every Darkroom; kopf's only resync)", lambda r: r.restart_writes, "{:,.0f}"),
    ("time to re-handle every Darkroom after a restart (s)", lambda r: r.restart_s, "{:.1f}"),
]


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def table(results: dict[str, list[RunResult]]) -> str:
    kinds = list(results)
    names = {"ours": "darkroom-operator", "kopf": "kopf peer"}
    header = "| metric | " + " | ".join(names[k] for k in kinds) + (" | kopf / ours |" if len(kinds) == 2 else " |")
    lines = [header, "|---|" + "---:|" * (len(kinds) + (1 if len(kinds) == 2 else 0))]
    for metric, value, fmt in ROWS:
        medians = [median([value(r) for r in results[k]]) for k in kinds]
        cells = [fmt.format(m) if m is not None else "n/a (no resync)" for m in medians]
        if len(kinds) == 2:
            ours, kopf_value = medians[kinds.index("ours")], medians[kinds.index("kopf")]
            if ours is not None and kopf_value is not None and ours != 0:
                cells.append(f"{kopf_value / ours:.2f}x")
            else:
                cells.append("")
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark the reconciler against a kopf peer (fresh devcluster per run).")
    parser.add_argument("--count", type=int, default=1000, help="Darkrooms created at once (default 1000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per operator; the table shows medians (default 3)")
    parser.add_argument("--operators", default="ours,kopf", help="comma-separated: ours, kopf (default both)")
    parser.add_argument("--workers", type=int, default=4, help="reconcile workers / kopf handler threads (default 4)")
    parser.add_argument("--clients", type=int, default=8, help="threads POSTing the Darkrooms (default 8)")
    parser.add_argument("--ready-delay", type=float, default=0.5, help="devcluster --deployment-ready-delay in s (default 0.5)")
    parser.add_argument(
        "--resync-s", type=float, default=60.0, help="DARKROOM_OPERATOR_RESYNC_S for ours; keep it above the convergence time (default 60)"
    )
    parser.add_argument("--settle-s", type=float, default=2.0, help="writes quiet this long = settled (default 2)")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="give up on a phase after this long (default 600)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (logs, audit logs)")
    parser.add_argument("--profile", metavar="DIR", help="py-spy record each operator from ready to all Ready into DIR (collapsed stacks)")
    parser.add_argument("--profile-idle", action="store_true", help="with --profile: include idle (waiting) stacks")
    parser.add_argument("--profile-server", action="store_true", help="with --profile: profile devcluster too")
    opts = parser.parse_args(argv)
    opts.kinds = [k.strip() for k in opts.operators.split(",") if k.strip()]
    if not opts.kinds or set(opts.kinds) - set(OPERATORS):
        parser.error(f"--operators: choose from {sorted(OPERATORS)}")
    if opts.count < 1 or opts.runs < 1 or opts.workers < 1 or opts.clients < 1 or opts.resync_s <= 0:
        parser.error("--count, --runs, --workers, --clients must be >= 1 and --resync-s > 0")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    started = datetime.datetime.now().astimezone()
    load_at_start = os.getloadavg()[0]
    machine = machine_line()
    log(machine)
    results: dict[str, list[RunResult]] = {k: [] for k in opts.kinds}
    base = Path(tempfile.mkdtemp(prefix="bench-reconcile-"))
    try:
        for run in range(opts.runs):
            order = opts.kinds if run % 2 == 0 else list(reversed(opts.kinds))
            for kind in order:
                log(f"run {run + 1}/{opts.runs}: {kind}, {opts.count} Darkrooms")
                work = base / f"run{run + 1}-{kind}"
                work.mkdir()
                r = run_once(kind, opts, work)
                results[kind].append(r)
                resync = "" if r.resync_writes is None else f"; resync: {r.resync_writes} writes ({r.resync_detail}) in {r.resync_s:.1f} s"
                log(
                    f"    {kind}: all Ready in {r.time_to_ready_s:.1f} s (create {r.create_s:.1f} s), p50/p99 "
                    f"{r.latency_p50_s:.1f}/{r.latency_p99_s:.1f} s, {r.reconciles} reconciles, {r.writes} writes ({r.writes_detail}), "
                    f"CPU {r.cpu_s:.1f} s, server CPU {r.server_cpu_s:.1f} s, bench CPU {r.extra['bench_cpu_s']:.1f} s, "
                    f"peak RSS {r.peak_rss_mib:.0f} MiB{resync}; "
                    f"restart: {r.restart_writes} writes ({r.restart_detail}) in {r.restart_s:.1f} s"
                )
    finally:
        if opts.keep:
            log(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    command = " ".join(["bench/reconcile.py", *(sys.argv[1:] if argv is None else argv)])
    load = f"load average at start {load_at_start:.2f}, at end {os.getloadavg()[0]:.2f}"
    print(f"reconcile benchmark, {started:%Y-%m-%d %H:%M %Z}; {machine}; {load}")
    print(
        f"command: .venv/bin/python {command}; {opts.count:,} Darkrooms, median of {opts.runs} run(s), {opts.workers} workers, "
        f"deployment ready delay {opts.ready_delay:g} s, resync {opts.resync_s:g} s (ours); total {elapsed:.0f} s"
    )
    overlapped = sum(1 for r in results.get("ours", []) if r.extra["resync_overlap"])
    if overlapped:
        print(f"WARNING: in {overlapped} run(s) a periodic resync of ours ran before all Darkrooms were Ready (raise --resync-s)")
    print()
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
