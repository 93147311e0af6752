"""Benchmark devcluster: request throughput/latency and watch delivery latency, printed as a markdown table.

Never run by the test suite; run it with ``make bench`` or::

    .venv/bin/python bench/devcluster.py            # full: median of 5 runs x 3 s per scenario (~3 min)
    .venv/bin/python bench/devcluster.py --quick    # sanity run: 1 run x 0.5 s per scenario (~20 s)

Method
------
* Every scenario (one table row, or the two rows of a watch scenario) gets a fresh
  ``python -m devcluster serve --port <free> --data-dir <tmp> --log-level WARNING`` subprocess,
  waited for on ``/readyz`` and stopped afterwards (SIGTERM to its PID, SIGKILL after 15 s), so
  scenarios do not influence each other through history size or object count. The runs of one
  scenario share that server (create and watch runs each use their own namespace); a short,
  discarded warm-up run comes first.
* Request scenarios (create = POST configmaps; get; list = GET a namespace holding 100 configmaps;
  patch = JSON merge patch of those configmaps) run N closed-loop clients, each a separate worker
  process (``multiprocessing``, fork) with one keep-alive connection driven by a minimal raw-socket
  HTTP/1.1 client (``Conn``: much cheaper per request than ``http.client``, whose header parsing
  costs more than devcluster's answer to a get). A client sends its next request as soon as it has
  read the previous answer. ops/s is the sum over clients of requests / elapsed; p50/p99 are over
  every request of the run. "server CPU" is the server process's CPU time per wall second while
  measuring (100% = one core busy; the server is one event-loop thread), which shows whether the
  server or the load generators set the pace.
* Watch delivery: ``--watchers`` raw streaming ``GET ...?watch=true`` requests on one namespace,
  spread over ``--watcher-procs`` processes (each multiplexes its sockets with ``selectors`` and
  decodes the chunked stream itself). Once all are registered (response headers received), a
  writer in this process alternately creates and merge-patches configmaps with one write in
  flight, for the run's duration: paced at ``--watch-rate`` writes/s ("watch") or back to back
  ("watch-max"). Each watcher timestamps every event line as it arrives; latency is that time
  minus the time the writer received the write's acknowledgement ("from write ack", the target
  metric), or minus the time it sent the write ("from write send": includes the write's own
  latency), joined on resourceVersion, over all (watcher, event) pairs. Every watcher must see
  every write. ops/s is delivered events per second. All clocks are CLOCK_MONOTONIC
  (``time.perf_counter``), shared by every process of the machine.
* Each metric is the median over ``--runs`` runs. Every loop is bounded in count and time; all
  traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import platform
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from common import (
    HOST,
    JSON,
    cpu_seconds,
    free_port,
    join_processes,
    log,
    machine_summary,
    merged_latencies,
    start_devcluster,
    stop_process,
)
from common import Conn as BaseConn
from common import nearest_rank as percentile

MAX_OPS_PER_CLIENT = 2_000_000  # hard bound on any client loop, whatever the duration
MAX_WATCH_WRITES = 1_000_000
SCENARIOS = ("create", "get", "list", "patch", "watch", "watch-max")
SENTINEL = "bench-stop"  # created after the measured writes: tells the watchers the run is over
LIST_SIZE = 100
TARGET_WRITES_PER_S = 1000.0
TARGET_WATCH_P99_MS = 50.0
MERGE_PATCH = "application/merge-patch+json"


# --------------------------------------------------------------------------------------------
# The server under test


def machine_busy() -> float:
    """Non-idle CPU seconds of the whole machine so far (all cores summed; from /proc/stat, 0 where unavailable)."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class Server:
    """One devcluster subprocess with a temporary data dir."""

    def __init__(self) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix="devcluster-bench-"))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30.0) -> Server:
        log_path, data = self.data_dir / "server.log", self.data_dir / "data"
        try:
            self.proc = start_devcluster(port=self.port, data_dir=data, log_path=log_path, timeout_s=timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (from /proc; 0 where unavailable)."""
        return cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def log_tail(self) -> str:
        path = self.data_dir / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout_s=15)
            self.proc = None
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Conn(BaseConn):
    USER_AGENT = "devcluster-bench/1"

    def __init__(self, port: int, timeout_s: float = 30.0) -> None:
        super().__init__(port, timeout_s)


def create_namespace(conn: Conn, name: str) -> None:
    conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})


def cm_path(ns: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/configmaps" + (f"/{name}" if name else "")


# --------------------------------------------------------------------------------------------
# Request scenarios: closed-loop clients in worker processes


@dataclass(frozen=True)
class Job:
    port: int
    op: str  # create | get | list | patch
    namespace: str
    duration_s: float
    tag: str  # makes created names unique per run


Request = tuple[str, str, bytes | None, str, int]  # method, path, body, content type, expected status


def patch_body(mark: bytes, i: int) -> bytes:
    return b'{"data":{"v":"%s%d"}}' % (mark, i)


def request_maker(job: Job, worker: int) -> Callable[[int], Request]:
    ns = job.namespace
    if job.op == "create":
        prefix = f"c{job.tag}-{worker}-"
        return lambda i: ("POST", cm_path(ns), b'{"metadata":{"name":"%s%d"},"data":{"k":"v"}}' % (prefix.encode(), i), JSON, 201)
    if job.op == "get":
        return lambda i: ("GET", cm_path(ns, f"cm-{(worker * 13 + i) % LIST_SIZE}"), None, JSON, 200)
    if job.op == "list":
        return lambda i: ("GET", cm_path(ns), None, JSON, 200)
    if job.op == "patch":
        mark = f"{job.tag}-{worker}-".encode()
        return lambda i: ("PATCH", cm_path(ns, f"cm-{(worker * 13 + i) % LIST_SIZE}"), patch_body(mark, i), MERGE_PATCH, 200)
    raise ValueError(job.op)


def client_worker(job: Job, worker: int, barrier: Any, results: Any) -> None:
    """One closed-loop client: waits at ``barrier``, then requests back to back for ``job.duration_s``."""
    out: dict[str, Any] = {"worker": worker, "count": 0, "elapsed": 0.0, "lat": b"", "errors": 0, "first_error": ""}
    try:
        make = request_maker(job, worker)
        conn = Conn(job.port)
        latencies = array("d")
        errors = 0
        first_error = ""
        barrier.wait(60)
        clock = time.perf_counter
        cpu0 = time.process_time()
        start = clock()
        end = start + job.duration_s
        i = 0
        while i < MAX_OPS_PER_CLIENT:
            method, path, body, content_type, expected = make(i)
            t0 = clock()
            status, data = conn.request(method, path, body, content_type)
            t1 = clock()
            latencies.append(t1 - t0)
            if status != expected:
                errors += 1
                first_error = first_error or f"{method} {path} -> {status}: {data[:300]!r}"
            i += 1
            if t1 >= end:
                break
        elapsed = clock() - start
        cpu = time.process_time() - cpu0
        out.update(count=i, elapsed=elapsed, cpu=cpu, lat=latencies.tobytes(), errors=errors, first_error=first_error)
        conn.close()
    except Exception as e:  # reported to the parent, which fails the run
        out["first_error"] = f"worker {worker} crashed: {e!r}"
        out["errors"] = out["errors"] or 1
    results.put(out)


@dataclass
class RunResult:
    ops_per_s: float
    p50_ms: float
    p99_ms: float
    samples: int
    note: str = ""
    server_cpu: float = 0.0  # server CPU seconds per wall second while measuring (1.0 = one core busy)


def run_clients(job: Job, clients: int, server: Server) -> RunResult:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(clients + 1)  # the clients and this process, which samples the server's CPU time
    results = ctx.Queue()
    procs = [ctx.Process(target=client_worker, args=(job, w, barrier, results), daemon=True) for w in range(clients)]
    for p in procs:
        p.start()
    outs = []
    try:
        barrier.wait(60)
        cpu0, busy0, wall0 = server.cpu_seconds(), machine_busy(), time.perf_counter()
        time.sleep(job.duration_s)
        wall = time.perf_counter() - wall0
        cpu = (server.cpu_seconds() - cpu0) / wall
        busy = (machine_busy() - busy0) / wall
        for _ in procs:
            outs.append(results.get(timeout=job.duration_s + 90))
    finally:
        join_processes(procs)
    failed = [o for o in outs if o["errors"]]
    if failed:
        raise RuntimeError(f"{job.op}: {sum(o['errors'] for o in failed)} failed requests, e.g. {failed[0]['first_error']}")
    latencies = merged_latencies(outs)
    ops = sum(o["count"] / o["elapsed"] for o in outs if o["elapsed"] > 0)
    clients_cpu = sum(o["cpu"] / o["elapsed"] for o in outs if o["elapsed"] > 0)
    result = RunResult(ops, percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000, len(latencies), server_cpu=cpu)
    result.note = f"server CPU {cpu:.0%}, clients CPU {clients_cpu:.0%}, machine busy {busy:.0%} of {100 * (os.cpu_count() or 1)}%"
    return result


def request_scenario(op: str, clients: int, opts: argparse.Namespace) -> list[RunResult]:
    with Server() as server:
        conn = Conn(server.port)
        shared = f"bench-{op}"
        if op != "create":
            create_namespace(conn, shared)
            for i in range(LIST_SIZE):
                body = {"metadata": {"name": f"cm-{i}", "labels": {"bench": "yes"}}, "data": {"k": "v" * 32}}
                conn.expect(201, "POST", cm_path(shared), body)
        runs = []
        for run in range(opts.runs + 1):  # run 0 is the discarded warm-up
            ns = shared
            if op == "create":
                ns = f"bench-create-{run}"
                create_namespace(conn, ns)
            duration = opts.warmup if run == 0 else opts.duration
            result = run_clients(Job(server.port, op, ns, duration, str(run)), clients, server)
            if run:
                runs.append(result)
                log(
                    f"  {op} x{clients} run {run}: {result.ops_per_s:,.0f} ops/s p50 {result.p50_ms:.2f} ms p99 {result.p99_ms:.2f} ms "
                    f"({result.note})"
                )
        conn.close()
        return runs


# --------------------------------------------------------------------------------------------
# Watch delivery


class WatchStream:
    """One raw ``?watch=true`` stream: decodes the chunked body and records (resourceVersion, receive time) per event."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request = f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUser-Agent: devcluster-bench/1\r\nAccept: application/json\r\n\r\n"
        self.sock.sendall(request.encode())
        self.raw = bytearray()  # undecoded chunked body
        self.lines = bytearray()  # decoded body not yet split into lines
        self.rvs: array[int] = array("q")
        self.times: array[float] = array("d")
        self.error = ""
        self.done = False

    def read_headers(self) -> None:
        """Blocks until the response headers arrive (devcluster sends them once the watch is registered)."""
        end = self.raw.find(b"\r\n\r\n")
        while end < 0:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the watch before answering")
            self.raw += chunk
            end = self.raw.find(b"\r\n\r\n")
        head = bytes(self.raw[:end]).lower()
        del self.raw[: end + 4]
        if head[9:12] != b"200" or b"transfer-encoding: chunked" not in head:
            raise RuntimeError(f"unexpected watch response: {head[:300]!r}")
        self.sock.setblocking(False)

    def feed(self, data: bytes, now: float) -> None:
        raw = self.raw
        raw += data
        while True:
            eol = raw.find(b"\r\n")
            if eol < 0:
                break
            size = int(bytes(raw[:eol]).split(b";", 1)[0], 16)
            if size == 0:
                self.finish(f"stream ended after {len(self.rvs)} events")
                return
            if len(raw) < eol + 4 + size:
                break
            self.lines += raw[eol + 2 : eol + 2 + size]
            del raw[: eol + 4 + size]
        lines = self.lines
        eol = lines.find(b"\n")
        while eol >= 0:
            event = orjson.loads(lines[:eol])
            del lines[: eol + 1]
            if event["type"] not in ("ADDED", "MODIFIED"):
                self.finish(f"unexpected {event['type']} event: {str(event)[:300]}")
                return
            meta = event["object"]["metadata"]
            if meta["name"] == SENTINEL:
                self.finish("")
                return
            self.rvs.append(int(meta["resourceVersion"]))
            self.times.append(now)
            eol = lines.find(b"\n")

    def finish(self, error: str) -> None:
        self.error, self.done = error, True


def watcher_proc(port: int, ns: str, rv: str, count: int, deadline_s: float, ready: Any, results: Any) -> None:
    """``count`` watches on ``ns`` from ``rv``, multiplexed with ``selectors``, until each sees the sentinel object."""
    streams: list[WatchStream] = []
    try:
        path = f"{cm_path(ns)}?watch=true&resourceVersion={rv}&timeoutSeconds={int(deadline_s) + 5}"
        streams = [WatchStream(port, path) for _ in range(count)]
        for stream in streams:
            stream.read_headers()
    except Exception as e:
        ready.put(False)
        results.put([(b"", b"", f"watch failed to start: {e!r}")])
        for stream in streams:
            stream.sock.close()
        return
    ready.put(True)
    clock = time.perf_counter
    deadline = clock() + deadline_s
    with selectors.DefaultSelector() as selector:
        for stream in streams:
            selector.register(stream.sock, selectors.EVENT_READ, stream)
        active = count
        while active and clock() < deadline:
            ready_keys = selector.select(min(1.0, max(0.0, deadline - clock())))
            now = clock()  # when these sockets were seen readable: the arrival time of what they hold
            for key, _ in ready_keys:
                stream = key.data
                try:
                    data = stream.sock.recv(1 << 18)
                except BlockingIOError:
                    continue
                if data:
                    stream.feed(data, now)
                else:
                    stream.finish(f"connection closed after {len(stream.rvs)} events")
                if stream.done:
                    selector.unregister(stream.sock)
                    active -= 1
    for stream in streams:
        if not stream.done:
            stream.finish(f"timed out after {len(stream.rvs)} events")
        stream.sock.close()
    results.put([(s.rvs.tobytes(), s.times.tobytes(), s.error) for s in streams])


def watch_run(
    server: Server, run: int, opts: argparse.Namespace, conn: Conn, duration_s: float, rate: float
) -> tuple[RunResult, RunResult]:
    """One watch run (writes for ``duration_s`` at ``rate``/s, 0 = back to back): latencies from ack and from send."""
    ns = f"bench-watch-{run}"
    create_namespace(conn, ns)
    rv = conn.expect(200, "GET", cm_path(ns))["metadata"]["resourceVersion"]
    deadline_s = duration_s * 3 + 60
    ctx = mp.get_context("fork")
    ready, results = ctx.Queue(), ctx.Queue()
    nprocs = max(1, min(opts.watcher_procs, opts.watchers))
    shares = [opts.watchers // nprocs + (1 if i < opts.watchers % nprocs else 0) for i in range(nprocs)]
    args = (server.port, ns, rv)
    procs = [ctx.Process(target=watcher_proc, args=(*args, n, deadline_s, ready, results), daemon=True) for n in shares]
    for p in procs:
        p.start()
    try:
        if not all(ready.get(timeout=60) for _ in procs):
            raise RuntimeError("some watches failed to connect")
        sent: dict[int, float] = {}
        acked: dict[int, float] = {}
        clock = time.perf_counter
        cpu0 = server.cpu_seconds()
        start = clock()
        end = start + duration_s
        writes = 0
        for k in range(MAX_WATCH_WRITES):
            if rate > 0:
                delay = start + k / rate - clock()
                if delay > 0:
                    time.sleep(delay)
            if clock() >= end:
                break
            name = f"w-{k // 2}"
            t0 = clock()
            if k % 2 == 0:
                body = b'{"metadata":{"name":"%s"},"data":{"v":"0"}}' % name.encode()
                status, data = conn.request("POST", cm_path(ns), body)
                expected = 201
            else:
                status, data = conn.request("PATCH", cm_path(ns, name), b'{"data":{"v":"1"}}', MERGE_PATCH)
                expected = 200
            t1 = clock()
            if status != expected:
                raise RuntimeError(f"watch writer: {status}: {data[:300]!r}")
            written = int(json.loads(data)["metadata"]["resourceVersion"])
            sent[written], acked[written] = t0, t1
            writes += 1
        write_elapsed = clock() - start
        cpu = (server.cpu_seconds() - cpu0) / write_elapsed
        conn.expect(201, "POST", cm_path(ns), {"metadata": {"name": SENTINEL}})
        outs = [results.get(timeout=deadline_s + 30) for _ in procs]
    finally:
        join_processes(procs)
    from_ack: list[float] = []
    from_send: list[float] = []
    errors = []
    for out in outs:
        for rvs_raw, times_raw, err in out:
            if err:
                errors.append(err)
            rvs, times = array("q"), array("d")
            rvs.frombytes(rvs_raw)
            times.frombytes(times_raw)
            if not err and len(rvs) != writes:
                errors.append(f"a watcher saw {len(rvs)} events for {writes} writes")
            for event_rv, t in zip(rvs, times, strict=True):
                if event_rv not in acked:
                    errors.append(f"event for a resourceVersion the writer did not make: {event_rv}")
                    continue
                from_ack.append(t - acked[event_rv])
                from_send.append(t - sent[event_rv])
    if errors:
        raise RuntimeError(f"watch: {len(errors)} watcher errors, e.g. {errors[0]}")
    from_ack.sort()
    from_send.sort()
    # Deliveries per second of writing (the last events arrive within milliseconds of the last write).
    delivered = len(from_ack) / write_elapsed
    note = f"{writes} writes at {writes / write_elapsed:,.0f}/s"
    ack = RunResult(delivered, percentile(from_ack, 50) * 1000, percentile(from_ack, 99) * 1000, len(from_ack), note, cpu)
    send = RunResult(delivered, percentile(from_send, 50) * 1000, percentile(from_send, 99) * 1000, len(from_send), note, cpu)
    return ack, send


def watch_scenario(opts: argparse.Namespace, rate: float) -> tuple[list[RunResult], list[RunResult]]:
    with Server() as server:
        conn = Conn(server.port)
        runs, sends = [], []
        for run in range(opts.runs + 1):
            result, send = watch_run(server, run, opts, conn, opts.warmup if run == 0 else opts.duration, rate)
            if run:
                runs.append(result)
                sends.append(send)
                log(
                    f"  watch x{opts.watchers} at {rate or 'max'} writes/s, run {run}: {result.ops_per_s:,.0f} events/s ({result.note}, "
                    f"server CPU {result.server_cpu:.0%}); from ack p50 {result.p50_ms:.2f} ms p99 {result.p99_ms:.2f} ms; "
                    f"from send p50 {send.p50_ms:.2f} ms p99 {send.p99_ms:.2f} ms"
                )
        conn.close()
        return runs, sends


# --------------------------------------------------------------------------------------------
# Report


@dataclass
class Row:
    scenario: str
    clients: str
    runs: list[RunResult]
    target: str = ""
    verdict: Callable[[RunResult], bool] | None = field(default=None, repr=False)

    def median(self) -> RunResult:
        return RunResult(
            statistics.median(r.ops_per_s for r in self.runs),
            statistics.median(r.p50_ms for r in self.runs),
            statistics.median(r.p99_ms for r in self.runs),
            sum(r.samples for r in self.runs),
            server_cpu=statistics.median(r.server_cpu for r in self.runs),
        )


def machine_line() -> str:
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    python = f"Python {platform.python_version()} ({platform.python_implementation()})"
    system = f"{platform.system()} {platform.machine()}"
    return f"machine: {machine_summary()}, {python}, {system}, server event loop {loop}"


def table(rows: list[Row]) -> str:
    lines = ["| scenario | clients | ops/s | p50 ms | p99 ms | server CPU | target | result |", "|---|---:|---:|---:|---:|---:|---|---|"]
    for row in rows:
        m = row.median()
        result = ("PASS" if row.verdict(m) else "MISS") if row.verdict else ""
        numbers = [f"{m.ops_per_s:,.0f}", f"{m.p50_ms:.2f}", f"{m.p99_ms:.2f}", f"{m.server_cpu:.0%}"]
        cells = [row.scenario, row.clients, *numbers, row.target, result]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark devcluster (starts its own servers on free 127.0.0.1 ports).")
    parser.add_argument("--quick", action="store_true", help="sanity run: 1 run of 0.5 s per scenario, short watch run")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per scenario; the table shows their median (default 5)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured run (default 3)")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds of discarded warm-up per scenario (default 0.5)")
    parser.add_argument("--clients", default="1,8", help="comma-separated concurrent client counts (default 1,8)")
    parser.add_argument("--ops", default=",".join(SCENARIOS), help=f"scenarios to run (default all: {','.join(SCENARIOS)})")
    parser.add_argument("--watchers", type=int, default=50, help="concurrent watchers in the watch scenario (default 50)")
    parser.add_argument("--watcher-procs", type=int, default=5, help="processes the watchers are spread over (default 5)")
    parser.add_argument("--watch-rate", type=float, default=200.0, help="writer pace of the 'watch' scenario in writes/s (default 200)")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.runs, opts.duration, opts.warmup = 1, 0.5, 0.2
    if opts.runs < 1 or opts.duration <= 0 or opts.duration > 300 or opts.warmup <= 0 or opts.watch_rate <= 0:
        parser.error("--runs must be >= 1, --duration/--warmup in (0, 300], --watch-rate > 0")
    opts.client_counts = [int(c) for c in opts.clients.split(",") if c.strip()]
    if not opts.client_counts or min(opts.client_counts) < 1 or max(opts.client_counts) > 64:
        parser.error("--clients: counts between 1 and 64")
    opts.op_list = [o.strip() for o in opts.ops.split(",") if o.strip()]
    unknown = set(opts.op_list) - set(SCENARIOS)
    if unknown:
        parser.error(f"--ops: unknown {sorted(unknown)}")
    if not 1 <= opts.watchers <= 500:
        parser.error("--watchers: between 1 and 500")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    started = datetime.datetime.now().astimezone()
    header = machine_line()
    load_at_start = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?"
    log(header)
    rows: list[Row] = []
    for op in ("create", "get", "list", "patch"):
        if op not in opts.op_list:
            continue
        for clients in opts.client_counts:
            log(f"{op} with {clients} client(s) ...")
            row = Row(op if op != "list" else f"list ({LIST_SIZE} items)", str(clients), request_scenario(op, clients, opts))
            if op in ("create", "patch") and clients == 8:
                row.target, row.verdict = f"≥ {TARGET_WRITES_PER_S:,.0f} ops/s", lambda m: m.ops_per_s >= TARGET_WRITES_PER_S
            rows.append(row)
    for op, rate in (("watch", opts.watch_rate), ("watch-max", 0.0)):
        if op not in opts.op_list:
            continue
        pace = f"{rate:g} writes/s" if rate > 0 else "back-to-back writes"
        log(f"watch delivery with {opts.watchers} watchers, {pace} ...")
        from_ack, from_send = watch_scenario(opts, rate)
        target, verdict = f"p99 ≤ {TARGET_WATCH_P99_MS:g} ms", lambda m: m.p99_ms <= TARGET_WATCH_P99_MS
        rows.append(Row(f"watch delivery from write ack, {pace}", str(opts.watchers), from_ack, target, verdict))
        rows.append(Row(f"watch delivery from write send, {pace}", str(opts.watchers), from_send))
    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"devcluster benchmark, {started:%Y-%m-%d %H:%M %Z}; {header}; load average at start {load_at_start}, at end {load[0]:.2f}")
    print(f"median of {opts.runs} run(s) x {opts.duration:g} s per scenario (fresh server per scenario; total {elapsed:.0f} s)")
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
