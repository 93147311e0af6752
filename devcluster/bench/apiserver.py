"""Benchmark devcluster beside the real kube-apiserver: request throughput/latency and watch delivery latency.

Never run by the test suite; run it with ``make bench RUN=apiserver`` or::

    .venv/bin/python devcluster/bench/apiserver.py                # full: both servers, median of 5 runs x 3 s per scenario (~7 min)
    .venv/bin/python devcluster/bench/apiserver.py --server dev   # devcluster only (~3 min)
    .venv/bin/python devcluster/bench/apiserver.py --quick        # sanity run: 1 run x 0.5 s per scenario (~1.5 min)

devcluster's own benchmark; the servers and the raw-socket client come from the repository's ``bench/``
(``servers.py``, ``common.py``, shared with ``bench/reconcile.py``), put on ``sys.path`` below.

Prints ONE markdown table: with ``--server both`` (the default when ``realcluster/bin/realcluster``
exists or ``scripts/build_realcluster.sh`` can build it; otherwise devcluster only, with a note on
stderr) each metric has a devcluster ("dev") and a real control plane ("real") column, and the
real/dev ratio for ops/s and p99.

Method
------
* Servers: ``dev`` = ``python -m devcluster serve --port <free> --data-dir <tmp> --kubeconfig
  <tmp> --log-level WARNING`` (plain HTTP, waited for on ``/readyz``); ``real`` = ``realcluster/bin/realcluster up``
  (real etcd + kube-apiserver v1.37 + kube-controller-manager + kube-scheduler + a simulated node;
  HTTPS with the cluster CA and the admin bearer token, waited for until it writes its kubeconfig).
  Both are stopped by SIGTERM to their PID (see ``servers.py``).
* Every scenario (one table row, or the two rows of a watch scenario) gets a fresh server of each
  kind, devcluster first, so scenarios do not influence each other through history size or
  object count. The runs of one scenario share that server (create and watch runs each use their
  own namespace); a short, discarded warm-up run comes first.
* Request scenarios (create = POST configmaps; get; list = GET a namespace holding 100 configmaps;
  patch = JSON merge patch of those configmaps) run N closed-loop clients, each a separate worker
  process (``multiprocessing``, fork) with one keep-alive connection driven by a minimal raw-socket
  HTTP/1.1 client (``Conn``: much cheaper per request than ``http.client``, whose header parsing
  costs more than devcluster's answer to a get); against the real server the same client speaks
  TLS (``ssl`` over the same socket; keep-alive, so one handshake per client) and sends the bearer
  token. A client sends its next request as soon as it has read the previous answer. ops/s is the
  sum over clients of requests / elapsed; p50/p99 are over every request of the run. "server CPU"
  is CPU time per wall second while measuring (100% = one core busy): for dev the devcluster
  process (one event-loop thread, so at most ~100%); for real kube-apiserver plus the
  ``realcluster up`` process, which runs etcd (embedded) and the node simulator. The controller
  manager and scheduler run too (the garbage collector, for one, watches every configmap); their
  CPU is its own column ("kcm+sched CPU"). It shows whether the server or the load generators set
  the pace. On the real server, every namespace also holds the ``kube-root-ca.crt`` configmap that
  the controller manager publishes, so its list returns 101 items.
* Watch delivery: ``--watchers`` raw streaming ``GET ...?watch=true`` requests on one namespace,
  spread over ``--watcher-procs`` processes (each multiplexes its sockets with ``selectors`` and
  decodes the chunked stream itself). Once all are registered (response headers received), a
  writer in this process alternately creates and merge-patches configmaps with one write in
  flight, for the run's duration: paced at ``--watch-rate`` writes/s ("watch") or back to back
  ("watch-max"). Each watcher timestamps every event line as it arrives; latency is that time
  minus the time the writer received the write's acknowledgement ("from write ack", the target
  metric), or minus the time it sent the write ("from write send": includes the write's own
  latency), joined on resourceVersion, over all (watcher, event) pairs. Every watcher must see
  every write (events of objects the writer did not make, like the real server's
  ``kube-root-ca.crt``, are skipped); a watch the server ends (kube-apiserver's watch cache closes
  watchers that fall behind) is resumed from the last resourceVersion the watcher saw, and counted
  in a footnote under the table. ops/s is delivered events per second. All clocks are
  CLOCK_MONOTONIC (``time.perf_counter``), shared by every process of the machine. Over TLS the
  watchers' non-blocking sockets are read until ``SSLWantReadError``, since a readable socket can
  hold several TLS records and decrypted bytes wait inside the SSL object where the selector does
  not see them.
* Each metric is the median over ``--runs`` runs. Every loop is bounded in count and time; all
  traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import multiprocessing as mp
import os
import platform
import selectors
import shutil
import ssl
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from common import JSON, Endpoint, exit_on_sigterm, join_processes, log, machine_summary, merged_latencies
from common import Conn as BaseConn
from common import nearest_rank as percentile
from servers import choose_servers, make_server, realcluster_version

from tests.clusters import ClusterProcess, RealclusterProcess

MAX_OPS_PER_CLIENT = 2_000_000  # hard bound on any client loop, whatever the duration
MAX_WATCH_WRITES = 1_000_000
MAX_WATCH_RESUMES = 1000  # per stream and run
SCENARIOS = ("create", "get", "list", "patch", "watch", "watch-max")
SENTINEL = "bench-stop"  # created after the measured writes: tells the watchers the run is over
WRITTEN = "w-"  # prefix of the names the watch writer creates; watchers skip other objects
UNRESPONSIVE = "watcher close due to unresponsiveness"  # kube-apiserver's log line when its watch cache drops a slow watcher
LIST_SIZE = 100
TARGET_WRITES_PER_S = 1000.0
TARGET_WATCH_P99_MS = 50.0
MERGE_PATCH = "application/merge-patch+json"
CPU_NOTE = {
    False: "server CPU: the devcluster process (one event-loop thread, so at most ~100%)",
    True: "server CPU: dev = the devcluster process; real = kube-apiserver + the `realcluster up` process (embedded etcd, node "
    "simulator); kcm+sched CPU = kube-controller-manager + kube-scheduler (real only); 100% = one core; ratios are real / dev",
}


# --------------------------------------------------------------------------------------------
# The server under test


def machine_busy() -> float:
    """Non-idle CPU seconds of the whole machine so far (all cores summed; from /proc/stat, 0 where unavailable)."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def fresh_server(kind: str) -> Iterator[ClusterProcess]:
    """A started server of ``kind`` in a temporary dir, stopped and removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-server-"))
    try:
        with make_server(kind, work) as server:
            yield server
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Conn(BaseConn):
    USER_AGENT = "devcluster-bench/1"

    def __init__(self, endpoint: Endpoint, timeout_s: float = 30.0) -> None:
        super().__init__(endpoint, timeout_s)


def create_namespace(conn: Conn, name: str) -> None:
    conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})


def cm_path(ns: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/configmaps" + (f"/{name}" if name else "")


# --------------------------------------------------------------------------------------------
# Request scenarios: closed-loop clients in worker processes


@dataclass(frozen=True)
class Job:
    endpoint: Endpoint
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
        conn = Conn(job.endpoint)
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
    controllers_cpu: float = 0.0  # the same for the real server's controller manager + scheduler (0 for dev)
    resumes: int = 0  # watch runs: how often the server ended a watch that the watcher then resumed


class CpuMeter:
    """The server's (and its controllers') CPU seconds per wall second from construction to :meth:`read`."""

    def __init__(self, server: ClusterProcess) -> None:
        self.server = server
        self.cpu0, self.controllers0 = server.cpu_seconds(), server.controllers_cpu_seconds()
        self.wall0 = time.perf_counter()

    def read(self) -> tuple[float, float]:
        wall = time.perf_counter() - self.wall0
        cpu = (self.server.cpu_seconds() - self.cpu0) / wall
        return cpu, (self.server.controllers_cpu_seconds() - self.controllers0) / wall


def run_clients(job: Job, clients: int, server: ClusterProcess) -> RunResult:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(clients + 1)  # the clients and this process, which samples the server's CPU time
    results = ctx.Queue()
    procs = [ctx.Process(target=client_worker, args=(job, w, barrier, results), daemon=True) for w in range(clients)]
    for p in procs:
        p.start()
    outs = []
    try:
        barrier.wait(60)
        meter, busy0, wall0 = CpuMeter(server), machine_busy(), time.perf_counter()
        time.sleep(job.duration_s)
        cpu, controllers_cpu = meter.read()
        busy = (machine_busy() - busy0) / (time.perf_counter() - wall0)
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
    result = RunResult(ops, percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000, len(latencies), "", cpu, controllers_cpu)
    controllers = f", kcm+sched CPU {controllers_cpu:.0%}" if server.kind == "real" else ""
    result.note = (
        f"server CPU {cpu:.0%}{controllers}, clients CPU {clients_cpu:.0%}, machine busy {busy:.0%} of {100 * (os.cpu_count() or 1)}%"
    )
    return result


def request_scenario(kind: str, op: str, clients: int, opts: argparse.Namespace) -> list[RunResult]:
    with fresh_server(kind) as server:
        conn = Conn(server.endpoint)
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
            result = run_clients(Job(server.endpoint, op, ns, duration, str(run)), clients, server)
            if run:
                runs.append(result)
                log(
                    f"  {kind}: {op} x{clients} run {run}: {result.ops_per_s:,.0f} ops/s p50 {result.p50_ms:.2f} ms "
                    f"p99 {result.p99_ms:.2f} ms ({result.note})"
                )
        conn.close()
        return runs


# --------------------------------------------------------------------------------------------
# Watch delivery


class WatchStream:
    """One raw ``?watch=true`` stream (plain or TLS): decodes the chunked body and records
    (resourceVersion, receive time) per event. When the server ends the stream (kube-apiserver
    closes watchers that fall behind), :meth:`resume` opens it again from the last resourceVersion
    seen, as a client-go reflector would; ``resumes`` counts how often."""

    def __init__(self, endpoint: Endpoint, path: str, rv: str) -> None:
        self.endpoint, self.path, self.rv = endpoint, path, rv
        self.rvs: array[int] = array("q")
        self.times: array[float] = array("d")
        self.error = ""
        self.done = False
        self.ended = False  # the server ended the stream (terminating chunk or closed connection)
        self.resumes = 0
        self.open()

    def open(self) -> None:
        self.sock = self.endpoint.connect(30)
        self.tls = isinstance(self.sock, ssl.SSLSocket)
        path = f"{self.path}&resourceVersion={self.rv}"
        self.sock.sendall(b"GET %s HTTP/1.1\r\n" % path.encode() + self.endpoint.headers(Conn.USER_AGENT) + b"\r\n")
        self.raw = bytearray()  # undecoded chunked body
        self.lines = bytearray()  # decoded body not yet split into lines
        self.ended = False

    def resume(self) -> None:
        """Reopen the ended stream from the last resourceVersion seen (blocks for the connect and the headers)."""
        self.sock.close()
        self.resumes += 1
        if self.resumes > MAX_WATCH_RESUMES:
            self.finish(f"the server ended the stream {self.resumes} times")
            return
        try:
            self.open()
            self.read_headers()
        except Exception as e:
            self.finish(f"resuming the watch failed: {e!r}")

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
        if self.tls:  # bytes already decrypted with the headers: the selector would not report them
            pending = self.sock.pending()  # type: ignore[attr-defined]
            while pending:
                self.raw += self.sock.recv(pending)
                pending = self.sock.pending()  # type: ignore[attr-defined]
        self.sock.setblocking(False)

    def receive(self) -> bytes | None:
        """What can be read now without blocking (b"" = closed, None = nothing yet). A TLS socket is
        read until it would block: one recv returns at most one TLS record, and what is left of it
        waits decrypted in the SSL object, invisible to the selector."""
        if not self.tls:
            try:
                return self.sock.recv(1 << 18)
            except BlockingIOError:
                return None
        data = bytearray()
        while True:
            try:
                chunk = self.sock.recv(1 << 18)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return bytes(data) if data else None
            if not chunk:  # closed: hand over what came before; the next call reports the close
                return bytes(data)
            data += chunk

    def feed(self, data: bytes, now: float) -> None:
        raw = self.raw
        raw += data
        while True:
            eol = raw.find(b"\r\n")
            if eol < 0:
                break
            size = int(bytes(raw[:eol]).split(b";", 1)[0], 16)
            if size == 0:  # the server ended the stream
                self.ended = True
                break
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
            self.rv = meta["resourceVersion"]
            if meta["name"] == SENTINEL:
                self.finish("")
                return
            if not meta["name"].startswith(WRITTEN):  # e.g. the real server's kube-root-ca.crt
                eol = lines.find(b"\n")
                continue
            self.rvs.append(int(meta["resourceVersion"]))
            self.times.append(now)
            eol = lines.find(b"\n")

    def finish(self, error: str) -> None:
        self.error, self.done = error, True


def watcher_proc(endpoint: Endpoint, ns: str, rv: str, count: int, deadline_s: float, ready: Any, results: Any) -> None:
    """``count`` watches on ``ns`` from ``rv``, multiplexed with ``selectors``, until each sees the sentinel object."""
    streams: list[WatchStream] = []
    try:
        path = f"{cm_path(ns)}?watch=true&timeoutSeconds={int(deadline_s) + 5}"
        streams = [WatchStream(endpoint, path, rv) for _ in range(count)]
        for stream in streams:
            stream.read_headers()
    except Exception as e:
        ready.put(False)
        results.put([(b"", b"", f"watch failed to start: {e!r}", 0)])
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
                data = stream.receive()
                if data is None:
                    continue
                if data:
                    stream.feed(data, now)
                else:
                    stream.ended = True
                if stream.ended and not stream.done:
                    selector.unregister(stream.sock)
                    stream.resume()
                    if not stream.done:
                        selector.register(stream.sock, selectors.EVENT_READ, stream)
                        continue
                elif stream.done:
                    selector.unregister(stream.sock)
                if stream.done:
                    active -= 1
    for stream in streams:
        if not stream.done:
            stream.finish(f"timed out after {len(stream.rvs)} events")
        stream.sock.close()
    results.put([(s.rvs.tobytes(), s.times.tobytes(), s.error, s.resumes) for s in streams])


def _watch_writes(conn: Conn, ns: str, duration_s: float, rate: float) -> tuple[int, dict[int, float], dict[int, float], float]:
    """A watch run's writes (create, then patch, of ConfigMaps) for ``duration_s`` at ``rate``/s (0 = back to back):
    how many, when each resourceVersion was sent and acknowledged, and the seconds they took."""
    sent: dict[int, float] = {}
    acked: dict[int, float] = {}
    clock = time.perf_counter
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
        name = f"{WRITTEN}{k // 2}"
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
    return writes, sent, acked, clock() - start


def watch_run(
    server: ClusterProcess, run: int, opts: argparse.Namespace, conn: Conn, duration_s: float, rate: float
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
    args = (server.endpoint, ns, rv)
    procs = [ctx.Process(target=watcher_proc, args=(*args, n, deadline_s, ready, results), daemon=True) for n in shares]
    for p in procs:
        p.start()
    try:
        if not all(ready.get(timeout=60) for _ in procs):
            raise RuntimeError("some watches failed to connect")
        meter = CpuMeter(server)
        writes, sent, acked, write_elapsed = _watch_writes(conn, ns, duration_s, rate)
        cpu, controllers_cpu = meter.read()
        conn.expect(201, "POST", cm_path(ns), {"metadata": {"name": SENTINEL}})
        outs = [results.get(timeout=deadline_s + 30) for _ in procs]
    finally:
        join_processes(procs)
    from_ack: list[float] = []
    from_send: list[float] = []
    errors = []
    resumes = 0
    for out in outs:
        for rvs_raw, times_raw, err, stream_resumes in out:
            resumes += stream_resumes
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
    note = f"{writes} writes at {writes / write_elapsed:,.0f}/s" + (
        f", {resumes} watches ended by the server and resumed" if resumes else ""
    )
    cpus = (cpu, controllers_cpu)
    ack = RunResult(delivered, percentile(from_ack, 50) * 1000, percentile(from_ack, 99) * 1000, len(from_ack), note, *cpus, resumes)
    send = RunResult(delivered, percentile(from_send, 50) * 1000, percentile(from_send, 99) * 1000, len(from_send), note, *cpus, resumes)
    return ack, send


def watch_scenario(kind: str, opts: argparse.Namespace, rate: float) -> tuple[list[RunResult], list[RunResult]]:
    with fresh_server(kind) as server:
        conn = Conn(server.endpoint)
        runs, sends = [], []
        for run in range(opts.runs + 1):
            result, send = watch_run(server, run, opts, conn, opts.warmup if run == 0 else opts.duration, rate)
            if run:
                runs.append(result)
                sends.append(send)
                controllers = f", kcm+sched CPU {result.controllers_cpu:.0%}" if kind == "real" else ""
                log(
                    f"  {kind}: watch x{opts.watchers} at {rate or 'max'} writes/s, run {run}: {result.ops_per_s:,.0f} events/s "
                    f"({result.note}, server CPU {result.server_cpu:.0%}{controllers}); "
                    f"from ack p50 {result.p50_ms:.2f} ms p99 {result.p99_ms:.2f} ms; "
                    f"from send p50 {send.p50_ms:.2f} ms p99 {send.p99_ms:.2f} ms"
                )
        conn.close()
        if any(r.resumes for r in runs) and isinstance(server, RealclusterProcess):
            closes = server.component_log("kube-apiserver").read_text(errors="replace").count(UNRESPONSIVE)
            log(f"  {kind}: kube-apiserver logged {closes} '{UNRESPONSIVE}' (watch cache watchers that fell behind), warm-up included")
        return runs, sends


# --------------------------------------------------------------------------------------------
# Report


@dataclass
class Row:
    scenario: str
    clients: str
    runs: dict[str, list[RunResult]]  # by server kind
    target: str = ""
    verdict: Callable[[RunResult], bool] | None = field(default=None, repr=False)

    def median(self, kind: str) -> RunResult:
        runs = self.runs[kind]
        return RunResult(
            statistics.median(r.ops_per_s for r in runs),
            statistics.median(r.p50_ms for r in runs),
            statistics.median(r.p99_ms for r in runs),
            sum(r.samples for r in runs),
            server_cpu=statistics.median(r.server_cpu for r in runs),
            controllers_cpu=statistics.median(r.controllers_cpu for r in runs),
        )

    def result(self, kind: str) -> str:
        return ("PASS" if self.verdict(self.median(kind)) else "MISS") if self.verdict else ""


def machine_line(kinds: list[str]) -> str:
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    python = f"Python {platform.python_version()} ({platform.python_implementation()})"
    system = f"{platform.system()} {platform.machine()}"
    real = f", real = kube-apiserver {realcluster_version()} + etcd (realcluster)" if "real" in kinds else ""
    return f"machine: {machine_summary()}, {python}, {system}, devcluster event loop {loop}{real}"


Column = tuple[str, bool, Callable[[Row], str]]  # header, numeric (right-aligned), cell


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}x" if denominator > 0 else ""


def per_server(title: str, kinds: list[str], cell: Callable[[RunResult], str]) -> list[Column]:
    """One column per server kind; the kind is named in the header only when there are two."""

    def column(kind: str) -> Column:
        return (f"{title} {kind}" if len(kinds) > 1 else title, True, lambda row: cell(row.median(kind)))

    return [column(kind) for kind in kinds]


def real_over_dev(title: str, value: Callable[[RunResult], float]) -> Column:
    return (title, True, lambda row: ratio(value(row.median("real")), value(row.median("dev"))))


def columns(kinds: list[str]) -> list[Column]:
    both = len(kinds) > 1
    cols: list[Column] = [("scenario", False, lambda row: row.scenario), ("clients", True, lambda row: row.clients)]
    cols += per_server("ops/s", kinds, lambda m: f"{m.ops_per_s:,.0f}")
    cols += [real_over_dev("real/dev ops/s", lambda m: m.ops_per_s)] if both else []
    cols += per_server("p50 ms", kinds, lambda m: f"{m.p50_ms:.2f}")
    cols += per_server("p99 ms", kinds, lambda m: f"{m.p99_ms:.2f}")
    cols += [real_over_dev("real/dev p99", lambda m: m.p99_ms)] if both else []
    cols += per_server("server CPU", kinds, lambda m: f"{m.server_cpu:.0%}")
    if "real" in kinds:
        cols += [("kcm+sched CPU" + (" real" if both else ""), True, lambda row: f"{row.median('real').controllers_cpu:.0%}")]
    cols.append(("target", False, lambda row: row.target))
    for kind in kinds:
        cols.append((f"result {kind}" if both else "result", False, lambda row, kind=kind: row.result(kind)))  # type: ignore[misc]
    return cols


def footnotes(rows: list[Row], kinds: list[str]) -> list[str]:
    """A line per (row, server) whose watches the server ended (and the watchers resumed) in some run."""
    notes = []
    for row in rows:
        for kind in kinds:
            resumes = [r.resumes for r in row.runs[kind]]
            if any(resumes) and "from write ack" in row.scenario:
                notes.append(
                    f"{kind}, {row.scenario}: the server ended watches (resumed from the last resourceVersion seen; their "
                    f"events' latency includes it) {sum(resumes)} times over {len(resumes)} run(s): {', '.join(map(str, resumes))}"
                )
    return notes


def table(rows: list[Row], kinds: list[str]) -> str:
    cols = columns(kinds)
    lines = ["| " + " | ".join(c[0] for c in cols) + " |", "|" + "|".join("---:" if c[1] else "---" for c in cols) + "|"]
    lines += ["| " + " | ".join(c[2](row) for c in cols) + " |" for row in rows]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark devcluster beside the real kube-apiserver (starts its own servers on free 127.0.0.1 ports)."
    )
    parser.add_argument(
        "--server",
        choices=("dev", "real", "both"),
        default=None,
        help="which API servers (default: both if realcluster/bin/realcluster exists or can be built, else dev)",
    )
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
    exit_on_sigterm()
    started = datetime.datetime.now().astimezone()
    load_at_start = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?"
    kinds, note = choose_servers(opts.server)
    if note:
        log(note)
    header = machine_line(kinds)
    log(header)
    rows: list[Row] = []
    for op in ("create", "get", "list", "patch"):
        if op not in opts.op_list:
            continue
        for clients in opts.client_counts:
            runs = {}
            for kind in kinds:
                log(f"{kind}: {op} with {clients} client(s) ...")
                runs[kind] = request_scenario(kind, op, clients, opts)
            row = Row(op if op != "list" else f"list ({LIST_SIZE} items)", str(clients), runs)
            if op in ("create", "patch") and clients == 8:
                row.target, row.verdict = f"≥ {TARGET_WRITES_PER_S:,.0f} ops/s", lambda m: m.ops_per_s >= TARGET_WRITES_PER_S
            rows.append(row)
    for op, rate in (("watch", opts.watch_rate), ("watch-max", 0.0)):
        if op not in opts.op_list:
            continue
        pace = f"{rate:g} writes/s" if rate > 0 else "back-to-back writes"
        from_ack, from_send = {}, {}
        for kind in kinds:
            log(f"{kind}: watch delivery with {opts.watchers} watchers, {pace} ...")
            from_ack[kind], from_send[kind] = watch_scenario(kind, opts, rate)
        target, verdict = f"p99 ≤ {TARGET_WATCH_P99_MS:g} ms", lambda m: m.p99_ms <= TARGET_WATCH_P99_MS
        rows.append(Row(f"watch delivery from write ack, {pace}", str(opts.watchers), from_ack, target, verdict))
        rows.append(Row(f"watch delivery from write send, {pace}", str(opts.watchers), from_send))
    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    servers = " vs ".join({"dev": "devcluster (dev)", "real": "real control plane (real)"}[k] for k in kinds)
    load_line = f"load average at start {load_at_start}, at end {load[0]:.2f}"
    print(f"API server benchmark, {servers}, {started:%Y-%m-%d %H:%M %Z}; {header}; {load_line}")
    print(f"median of {opts.runs} run(s) x {opts.duration:g} s per scenario (fresh server per scenario; total {elapsed:.0f} s)")
    print(CPU_NOTE[len(kinds) > 1 or kinds == ["real"]])
    print()
    print(table(rows, kinds))
    notes = footnotes(rows, kinds)
    if notes:
        print()
        print("\n".join(f"- {note}" for note in notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
