"""Benchmark the reconciler against a kopf peer: 1,000 Darkrooms created at once → all Ready, printed as a markdown table.

Never run by the test suite; run it with::

    .venv/bin/python bench/reconcile.py                  # full: 1,000 Darkrooms, median of 3 runs per operator and server
    .venv/bin/python bench/reconcile.py --server dev     # devcluster only (~7 min)
    .venv/bin/python bench/reconcile.py --count 100 --runs 1 --resync-s 10   # sanity run
    .venv/bin/python bench/reconcile.py --operators kopf       # one side only

``--server dev|real|both`` (default: both if ``realcluster/bin/realcluster`` exists or can be built,
else dev with a note) picks the API server: devcluster, the real control plane (realcluster: etcd,
kube-apiserver, kube-controller-manager, kube-scheduler, a simulated node), or both in the same
invocation, side by side in one table.

Method
------
* Operators: ``ours`` = ``python -m darkroom_operator --kubeconfig K --namespace bench --workers W
  --health-port P --no-leader-election`` (``DARKROOM_OPERATOR_RESYNC_S`` = ``--resync-s``, log
  level WARNING); ``kopf`` = ``python -m kopf run --standalone --namespace bench --quiet
  bench/peers/kopf_darkroom.py`` (the peer's module docstring says what it does and why;
  ``KOPF_PEER_WORKERS`` = W). Leader election is off for both (kopf ``--standalone``: no peering).
* Every (run, server, operator) triple gets a fresh server on a free 127.0.0.1 port with a temp
  data dir, the same flags for both operators, the product's CRDs and one namespace (``servers.py``).
  dev: ``python -m devcluster serve --deployment-ready-delay <--ready-delay> --history-size 200000
  --audit-log`` (no watch ever gets 410; devcluster itself marks a Deployment available after the
  delay). real: ``realcluster up --pod-ready-delay <--ready-delay> --audit-log``: a Darkroom's
  Deployment becomes available only when the real Deployment controller has made a ReplicaSet,
  the ReplicaSet controller a pod, the scheduler has bound it and the simulated node has made it
  Ready after the delay — the whole chain a real cluster runs, with every step an API request.
  The operators get the server's kubeconfig (real: HTTPS, cluster CA, admin bearer token; the
  kopf peer loads it with the official client and kopf logs in from the same file).
  The order of the operators alternates between runs. Each figure in the table is the median over
  ``--runs`` runs; both operators run in the same invocation on the same machine.
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
* Writes: audit-log records (``--audit-log`` of devcluster; kube-apiserver's audit Events at stage
  ResponseComplete for the real server) whose verb is not get/list/watch, that are not dry runs,
  and whose User-Agent is the operator's (ours ``darkroom-operator``; kopf ``kopf/`` and the peer's
  client ``kopf-peer/``), from the first POST until the writes are quiet.
* Server CPU: dev = the devcluster process (which also plays the Deployment controller); real =
  kube-apiserver + the ``realcluster up`` process (embedded etcd, node simulator), and in a row of
  its own kube-controller-manager + kube-scheduler (the Deployment → ReplicaSet → pod → binding
  chain), from the first POST until all are Ready.
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
  with ``--profile-server`` to devcluster (not to the real server: it is Go), from ready until all
  Darkrooms are Ready (collapsed stacks; add ``--profile-idle`` for waiting threads).
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

from common import ROOT, Endpoint, cpu_seconds, exit_on_sigterm, free_port, install_crds, log, machine_summary, stop_process, wait_until
from common import Conn as BaseConn
from common import quantile as percentile
from servers import ApiServer, AuditLog, AuditRecord, choose_servers, make_server, realcluster_version

sys.path.insert(0, str(ROOT))

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, INGRESSES, SERVICES, Cache, ConnectionSettings, InformerSettings, connect

HOST = "127.0.0.1"
NAMESPACE = "bench"
PEER = ROOT / "bench" / "peers" / "kopf_darkroom.py"
CHILD_KINDS = (CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES)


def proc_status(pid: int) -> dict[str, str]:
    with contextlib.suppress(OSError):
        return dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {}


def peak_rss_mib(pid: int) -> float:
    value = proc_status(pid).get("VmHWM", "0 kB").split()
    return int(value[0]) / 1024 if value else 0.0


# --------------------------------------------------------------------------------------------
# The cluster: devcluster or the real control plane, with an audit log


def breakdown(records: list[AuditRecord]) -> str:
    counts = Counter(f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}" for r in records)
    return ", ".join(f"{what} {n}" for what, n in counts.most_common()) or "none"


class Cluster:
    """One API server of ``kind`` (temp work dir, audit log), the CRDs installed, the bench namespace created."""

    def __init__(self, kind: str, work: Path, *, ready_delay_s: float) -> None:
        self.dir = work
        self.server: ApiServer = make_server(kind, work, ready_delay_s=ready_delay_s, audit=True, dev_args=["--history-size", "200000"])
        assert self.server.audit_path is not None
        self.audit = AuditLog(self.server.audit_path)

    @property
    def kind(self) -> str:
        return self.server.kind

    @property
    def endpoint(self) -> Endpoint:
        return self.server.endpoint

    @property
    def kubeconfig(self) -> Path:
        return self.server.kubeconfig

    def start(self) -> Cluster:
        self.server.start()
        try:
            conn = Conn(self.endpoint)
            install_crds(conn, namespace=NAMESPACE, probe_path=DARKROOMS.path(namespace=NAMESPACE), timeout_s=30)
            conn.close()
        except BaseException:
            self.server.stop()
            raise
        return self

    def cpu_seconds(self) -> float:
        return self.server.cpu_seconds()

    def controllers_cpu_seconds(self) -> float:
        return self.server.controllers_cpu_seconds()

    def stop(self) -> None:
        self.server.stop()


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

    def wait_for_children(self, endpoint: Endpoint, timeout_s: float) -> dict[str, float]:
        """Done time per Darkroom: when it was Ready, or later when a missing child appeared."""
        with self.lock:
            done = dict(self.ready_at)
        missing = {(str(kind), name) for kind in CHILD_KINDS for name in done}
        conn = Conn(endpoint)
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
    """Darkroom ``dr-<i>`` with two sub-domains of its own: equal sub-domains would be a host conflict
    that only the oldest Darkroom wins (the reconciler's hosts rule; the kopf peer has no such rule)."""
    body = {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": f"dr-{i:05}", "labels": {"team": f"team-{i % 7}"}},
        "spec": {
            "version": "v0.1.0",
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": [f"images-{i:05}", f"cdn-{i:05}"],
        },
    }
    return json.dumps(body).encode()


def create_all(endpoint: Endpoint, count: int, clients: int) -> tuple[float, dict[str, float]]:
    """POST ``count`` Darkrooms from ``clients`` threads (one keep-alive connection each); (first send time, ack time per name)."""
    acked: dict[str, float] = {}
    errors: list[str] = []
    start = threading.Barrier(clients + 1)
    path = DARKROOMS.path(namespace=NAMESPACE)

    def worker(indexes: range) -> None:
        conn = Conn(endpoint)
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
    server: str
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
    controllers_cpu_s: float | None
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


def run_once(server: str, kind: str, opts: argparse.Namespace, work: Path) -> RunResult:
    cluster = Cluster(server, work, ready_delay_s=opts.ready_delay).start()
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
        server_cpu0, controllers_cpu0, bench_cpu0 = cluster.cpu_seconds(), cluster.controllers_cpu_seconds(), time.process_time()
        first_sent, acked = create_all(cluster.endpoint, opts.count, opts.clients)
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
        controllers_cpu = cluster.controllers_cpu_seconds() - controllers_cpu0 if server == "real" else None
        overlap = isinstance(operator, Ours) and time.monotonic() - operator.started_mono >= opts.resync_s
        if overlap:
            log(f"    WARNING: a periodic resync ran before all were Ready (raise --resync-s above {opts.resync_s:g} s)")
        bench_cpu = time.process_time() - bench_cpu0
        done_at = tracker.wait_for_children(cluster.endpoint, 60)
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
            server=server,
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
            controllers_cpu_s=controllers_cpu,
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
    if opts.profile_server and operator.cluster.kind == "dev":
        targets += operator.cluster.server.profiled_pids()
    elif opts.profile_server:
        log("    --profile-server: not for the real server (Go); profiling the operator only")
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


def machine_line(servers: list[str]) -> str:
    import kopf

    real = f", real = kube-apiserver {realcluster_version()} + etcd (realcluster)" if "real" in servers else ""
    return f"{machine_summary()}, Python {platform.python_version()}, kopf {kopf.__version__}{real}"


def controllers_cpu(r: RunResult) -> float | None:
    """The controller manager + scheduler row: left out of the table without a real server."""
    return r.controllers_cpu_s


ROWS: list[tuple[str, Callable[[RunResult], float | None], str, str]] = [
    # (metric, value, format, text where the value is None)
    ("time until all Darkrooms Ready with 4 children (s)", lambda r: r.time_to_ready_s, "{:.1f}", ""),
    ("Darkrooms Ready per second", lambda r: r.darkrooms_per_s, "{:.1f}", ""),
    ("create → Ready per Darkroom, p50 (s)", lambda r: r.latency_p50_s, "{:.1f}", ""),
    ("create → Ready per Darkroom, p99 (s)", lambda r: r.latency_p99_s, "{:.1f}", ""),
    ("reconciles (handler runs for kopf)", lambda r: r.reconciles, "{:,.0f}", ""),
    ("reconciles per second", lambda r: r.reconciles_per_s, "{:.1f}", ""),
    ("API writes until converged", lambda r: r.writes, "{:,.0f}", ""),
    ("operator CPU until all Ready (s)", lambda r: r.cpu_s, "{:.1f}", ""),
    ("API server CPU until all Ready (s; real: kube-apiserver + etcd)", lambda r: r.server_cpu_s, "{:.1f}", ""),
    ("controller manager + scheduler CPU until all Ready (s)", controllers_cpu, "{:.1f}", "n/a (in devcluster)"),
    ("peak RSS of the operator (MiB)", lambda r: r.peak_rss_mib, "{:.0f}", ""),
    ("API writes during a periodic resync of the converged set", lambda r: r.resync_writes, "{:,.0f}", "n/a (no resync)"),
    ("duration of that resync (s)", lambda r: r.resync_s, "{:.1f}", "n/a (no resync)"),
    ("API writes after a restart (re-handling every Darkroom; kopf's only resync)", lambda r: r.restart_writes, "{:,.0f}", ""),
    ("time to re-handle every Darkroom after a restart (s)", lambda r: r.restart_s, "{:.1f}", ""),
]
NAMES = {"ours": "darkroom-operator", "kopf": "kopf peer"}


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def table(results: dict[tuple[str, str], list[RunResult]], servers: list[str], kinds: list[str]) -> str:
    """One row per metric; per server a column per operator (and kopf / ours when both ran)."""
    both_kinds, both_servers = len(kinds) == 2, len(servers) == 2
    header = ["metric"]
    for server in servers:
        where = f" ({server})" if both_servers else ""
        header += [NAMES[k] + where for k in kinds] + (["kopf / ours" + where] if both_kinds else [])
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for metric, value, fmt, na in ROWS:
        if value is controllers_cpu and "real" not in servers:
            continue
        cells = [metric]
        for server in servers:
            medians = {k: median([value(r) for r in results[server, k]]) for k in kinds}
            cells += [fmt.format(m) if m is not None else na for m in medians.values()]
            if both_kinds:
                ours, kopf_value = medians["ours"], medians["kopf"]
                cells.append(f"{kopf_value / ours:.2f}x" if ours is not None and kopf_value is not None and ours != 0 else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark the reconciler against a kopf peer (fresh API server per run).")
    parser.add_argument(
        "--server",
        choices=("dev", "real", "both"),
        default=None,
        help="API server: devcluster, the real control plane, or both (default: both if realcluster/bin/realcluster exists "
        "or can be built, else dev)",
    )
    parser.add_argument("--count", type=int, default=1000, help="Darkrooms created at once (default 1000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per operator; the table shows medians (default 3)")
    parser.add_argument("--operators", default="ours,kopf", help="comma-separated: ours, kopf (default both)")
    parser.add_argument("--workers", type=int, default=4, help="reconcile workers / kopf handler threads (default 4)")
    parser.add_argument("--clients", type=int, default=8, help="threads POSTing the Darkrooms (default 8)")
    parser.add_argument(
        "--ready-delay",
        type=float,
        default=0.5,
        help="devcluster --deployment-ready-delay / realcluster --pod-ready-delay in s (default 0.5)",
    )
    parser.add_argument(
        "--resync-s", type=float, default=60.0, help="DARKROOM_OPERATOR_RESYNC_S for ours; keep it above the convergence time (default 60)"
    )
    parser.add_argument("--settle-s", type=float, default=2.0, help="writes quiet this long = settled (default 2)")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="give up on a phase after this long (default 600)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (logs, audit logs)")
    parser.add_argument("--profile", metavar="DIR", help="py-spy record each operator from ready to all Ready into DIR (collapsed stacks)")
    parser.add_argument("--profile-idle", action="store_true", help="with --profile: include idle (waiting) stacks")
    parser.add_argument("--profile-server", action="store_true", help="with --profile: profile devcluster too (not the real server)")
    opts = parser.parse_args(argv)
    opts.kinds = [k.strip() for k in opts.operators.split(",") if k.strip()]
    if not opts.kinds or set(opts.kinds) - set(OPERATORS):
        parser.error(f"--operators: choose from {sorted(OPERATORS)}")
    if opts.count < 1 or opts.runs < 1 or opts.workers < 1 or opts.clients < 1 or opts.resync_s <= 0:
        parser.error("--count, --runs, --workers, --clients must be >= 1 and --resync-s > 0")
    return opts


def log_run(r: RunResult) -> None:
    resync = "" if r.resync_writes is None else f"; resync: {r.resync_writes} writes ({r.resync_detail}) in {r.resync_s:.1f} s"
    controllers = "" if r.controllers_cpu_s is None else f", kcm+sched CPU {r.controllers_cpu_s:.1f} s"
    log(
        f"    {r.server}/{r.operator}: all Ready in {r.time_to_ready_s:.1f} s (create {r.create_s:.1f} s), p50/p99 "
        f"{r.latency_p50_s:.1f}/{r.latency_p99_s:.1f} s, {r.reconciles} reconciles, {r.writes} writes ({r.writes_detail}), "
        f"CPU {r.cpu_s:.1f} s, server CPU {r.server_cpu_s:.1f} s{controllers}, bench CPU {r.extra['bench_cpu_s']:.1f} s, "
        f"peak RSS {r.peak_rss_mib:.0f} MiB{resync}; "
        f"restart: {r.restart_writes} writes ({r.restart_detail}) in {r.restart_s:.1f} s"
    )


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    exit_on_sigterm()
    started = datetime.datetime.now().astimezone()
    load_at_start = os.getloadavg()[0]
    servers, note = choose_servers(opts.server)
    if note:
        log(note)
    machine = machine_line(servers)
    log(machine)
    results: dict[tuple[str, str], list[RunResult]] = {(s, k): [] for s in servers for k in opts.kinds}
    base = Path(tempfile.mkdtemp(prefix="bench-reconcile-"))
    try:
        for run in range(opts.runs):
            order = opts.kinds if run % 2 == 0 else list(reversed(opts.kinds))
            for server in servers:
                for kind in order:
                    log(f"run {run + 1}/{opts.runs}: {server} server, {kind}, {opts.count} Darkrooms")
                    work = base / f"run{run + 1}-{server}-{kind}"
                    work.mkdir()
                    r = run_once(server, kind, opts, work)
                    results[server, kind].append(r)
                    log_run(r)
    finally:
        if opts.keep:
            log(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    command = " ".join(["bench/reconcile.py", *(sys.argv[1:] if argv is None else argv)])
    load = f"load average at start {load_at_start:.2f}, at end {os.getloadavg()[0]:.2f}"
    where = " and ".join({"dev": "devcluster (dev)", "real": "the real control plane (real)"}[s] for s in servers)
    print(f"reconcile benchmark on {where}, {started:%Y-%m-%d %H:%M %Z}; {machine}; {load}")
    print(
        f"command: .venv/bin/python {command}; {opts.count:,} Darkrooms, median of {opts.runs} run(s), {opts.workers} workers, "
        f"deployment (dev) / pod (real) ready delay {opts.ready_delay:g} s, resync {opts.resync_s:g} s (ours); total {elapsed:.0f} s"
    )
    overlapped = sum(1 for s in servers for r in results.get((s, "ours"), []) if r.extra["resync_overlap"])
    if overlapped:
        print(f"WARNING: in {overlapped} run(s) a periodic resync of ours ran before all Darkrooms were Ready (raise --resync-s)")
    print()
    print(table(results, servers, opts.kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
