"""Benchmark serving under stream load: GET /darkrooms and /healthz while 1,000 SSE clients and 50 slow clients are connected.

Never run by the test suite; run it with::

    .venv/bin/python bench/streams.py            # full: median of 3 runs x 5 s per row (~3 min)
    .venv/bin/python bench/streams.py --quick    # sanity run: 1 run x 2 s, 200 streams (~1 min)

Method
------
* One fresh ``python -m devcluster serve`` subprocess with the product's CRDs and ``--darkrooms``
  (100) Darkrooms with a realistic status, as in ``bench/api.py``.
* Two servers from the same code and ``backend/server/gunicorn_conf.py``, each started afresh per run: the product
  (the configuration's worker, :class:`backend.server.workers.StreamingWorker`: one event loop, Flask in a
  thread pool, streams on the loop) and the baseline, the configuration before this change:
  ``-k gthread --threads 32`` (every request, stream and slow client on one of 32 threads).
* Background load ("1,000 SSE + 50 slow"): ``--streams`` ``GET /watch`` connections from 4 processes
  (non-blocking sockets, from 50 loopback source addresses: 20 per address, under the per-client
  cap), each reading everything it is sent; 50 slow clients (25 sending request headers, 25 a
  request body, one byte per second, reconnecting when cut off); one Darkroom patched twice a
  second, so every stream gets events. A row without background load is measured too.
* Measured for ``--duration`` seconds once the streams are open (or after 10 s, for those that do
  not open): ``--clients`` (8) closed-loop keep-alive clients, each its own process, ``GET /darkrooms``
  back to back with a 2 s timeout (a timeout counts as failed and reconnects); /healthz asked every
  0.25 s on a new connection with a 1 s timeout (answered or not, slowest answer); SSE events
  received per second by all streams; the worker's resident memory (VmRSS).
* Each number is the median over ``--runs`` runs (/healthz: answered summed, slowest the maximum).
  Target (the serving hardening's): under the background load GET /darkrooms p99 <= 50 ms and every /healthz answered.
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
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    HOST,
    ROOT,
    Conn,
    free_port,
    install_crds,
    join_processes,
    log,
    machine_summary,
    merged_latencies,
    nearest_rank,
    pythonpath,
    ready_status,
    stop_process,
)

from kinds import darkrooms as darkroom_kind
from tests.clusters import DevclusterProcess

NAMESPACE = "bench"
DARKROOMS = f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{NAMESPACE}/darkrooms"
PATH = "/darkrooms"
TARGET_P99_MS = 50.0
SSE_PROCESSES = 4
SSE_ADDRESSES = 50
SLOW_CLIENTS = 50
SERVERS = {"product": [], "baseline (gthread, 32 threads)": ["-k", "gthread", "--threads", "32"]}


class BenchConn(Conn):
    USER_AGENT = "streams-bench/1"
    RECV_BYTES = 1 << 20


# -- cluster and servers ----------------------------------------------------------------------------


def populate(port: int, count: int) -> None:
    conn = BenchConn(port)
    for i in range(count):
        body = {
            "apiVersion": darkroom_kind.GROUP_VERSION,
            "kind": "Darkroom",
            "metadata": {"name": f"dr-{i:05}", "namespace": NAMESPACE, "labels": {"team": f"team-{i % 7}"}},
            "spec": {"replicas": 1, "source": {"type": "WebFolder", "baseUrl": f"https://example.com/{i}"}, "subDomains": ["img"]},
        }
        created = conn.expect(201, "POST", DARKROOMS, body)
        created["status"] = ready_status([f"img.dr-{i:05}.example.com"], message="ready")
        conn.expect(200, "PUT", f"{DARKROOMS}/dr-{i:05}/status", created)
    conn.close()


class Server:
    def __init__(self, name: str, extra: list[str], *, kubeconfig: Path, data_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        self.log_path = data_dir / f"gunicorn-{name.split()[0]}.log"
        env = {
            **os.environ,
            "PYTHONPATH": pythonpath(ROOT),
            "DARKROOM_API_KUBECONFIG": str(kubeconfig),
            "DARKROOM_API_LOG_LEVEL": "WARNING",
        }
        env["PORT"] = str(self.port)
        cmd = [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(ROOT / "backend" / "server" / "gunicorn_conf.py"),
            *extra,
            "backend.server.wsgi:app",
        ]
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited: {self.log_path.read_text()[-3000:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"http://{HOST}:{self.port}/readyz", timeout=1) as response:
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not become ready")
            time.sleep(0.1)

    def worker_rss_mib(self) -> float:
        """VmRSS of the (one) worker process: the master's child."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            child = int(Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()[0])
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


# -- background load ----------------------------------------------------------------------------------


def sse_swarm(port: int, count: int, offset: int, stop: Any, opened: Any, results: Any) -> None:
    """``count`` /watch streams on non-blocking sockets; reports streams that got ``ready`` and events read."""
    sel = selectors.DefaultSelector()
    request = f"GET /watch HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    ready = events = errors = 0
    for i in range(count):
        sock = socket.socket()
        sock.bind((f"127.0.1.{1 + (offset + i) % SSE_ADDRESSES}", 0))
        sock.setblocking(False)
        sock.connect_ex((HOST, port))
        sel.register(sock, selectors.EVENT_WRITE, {"ready": False, "tail": b""})
    while not stop.is_set():
        for key, mask in sel.select(0.1):
            conn, state = key.fileobj, key.data
            assert isinstance(conn, socket.socket)
            if mask & selectors.EVENT_WRITE:
                try:
                    conn.sendall(request)
                except OSError:
                    errors += 1
                    sel.unregister(conn)
                    conn.close()
                    continue
                sel.modify(conn, selectors.EVENT_READ, state)
                continue
            try:
                chunk = conn.recv(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                errors += 1
                sel.unregister(conn)
                conn.close()
                continue
            data = state["tail"] + chunk
            if not state["ready"] and b"event: ready" in data:
                state["ready"] = True
                ready += 1
                with opened.get_lock():
                    opened.value += 1
            events += data.count(b"event: darkroom")
            state["tail"] = data[-20:].replace(b"event: darkroom", b"")
    for key in list(sel.get_map().values()):
        leftover = key.fileobj
        assert isinstance(leftover, socket.socket)
        leftover.close()
    results.put({"ready": ready, "events": events, "errors": errors})


def slow_clients(port: int, stop: Any, results: Any) -> None:
    """``SLOW_CLIENTS`` clients sending a request one byte per second, half in the headers, half in the body."""
    heads = [
        f"GET {PATH} HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: ".encode(),
        f"POST {PATH} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{{".encode(),
    ]
    cut_off = 0

    def connect(i: int) -> socket.socket:
        sock = socket.create_connection((HOST, port), timeout=5, source_address=(f"127.0.2.{1 + i % 50}", 0))
        sock.sendall(heads[i % 2])
        sock.setblocking(False)
        return sock

    socks = [connect(i) for i in range(SLOW_CLIENTS)]
    while not stop.wait(1.0):
        for i, sock in enumerate(socks):
            try:
                with contextlib.suppress(BlockingIOError):
                    if sock.recv(65536) == b"":
                        raise ConnectionError("closed")
                sock.send(b"x")
            except OSError:
                cut_off += 1
                sock.close()
                with contextlib.suppress(OSError):
                    socks[i] = connect(i)
    for sock in socks:
        sock.close()
    results.put({"cut_off": cut_off})


def writer(cluster_port: int, stop: threading.Event) -> None:
    conn = BenchConn(cluster_port)
    replicas = 1
    while not stop.wait(0.5):
        replicas = 1 + replicas % 3
        body = json.dumps({"spec": {"replicas": replicas}}).encode()
        conn.request("PATCH", f"{DARKROOMS}/dr-00000", body, "application/merge-patch+json")
    conn.close()


# -- measurement --------------------------------------------------------------------------------------


def reader(port: int, duration_s: float, barrier: Any, results: Any) -> None:
    out: dict[str, Any] = {"count": 0, "failed": 0, "elapsed": 0.0, "lat": b""}
    latencies = array("d")
    conn: BenchConn | None = None
    barrier.wait(60)
    clock = time.perf_counter
    start = clock()
    while clock() - start < duration_s:
        try:
            conn = conn or BenchConn(port, timeout_s=2.0)
            t0 = clock()
            code, _ = conn.request("GET", PATH)
            latencies.append(clock() - t0)
            if code != 200:
                out["failed"] += 1
        except OSError:
            out["failed"] += 1
            if conn is not None:
                conn.close()
            conn = None
    if conn is not None:
        conn.close()
    out.update(count=len(latencies), elapsed=clock() - start, lat=latencies.tobytes())
    results.put(out)


def probe_healthz(port: int, stop: threading.Event, answers: list[float | None]) -> None:
    while not stop.wait(0.25):
        t0 = time.perf_counter()
        try:
            conn = BenchConn(port, timeout_s=1.0)
            try:
                code, _ = conn.request("GET", "/healthz")
            finally:
                conn.close()
            answers.append(time.perf_counter() - t0 if code == 200 else None)
        except OSError:
            answers.append(None)


@dataclass
class Run:
    streams: int
    rps: float
    p50_ms: float
    p99_ms: float
    failed: int
    healthz_answered: int
    healthz_asked: int
    healthz_max_ms: float
    events_per_s: float
    cut_off: int
    rss_mib: float


def measure(server: Server, *, cluster_port: int, loaded: bool, streams: int, clients: int, duration_s: float) -> Run:
    ctx = mp.get_context("fork")
    stop, opened, bg_results = ctx.Event(), ctx.Value("i", 0), ctx.Queue()
    background: list[Any] = []
    stop_writer = threading.Event()
    writer_thread = threading.Thread(target=writer, args=(cluster_port, stop_writer), daemon=True)
    opened_count, cut_off, events = 0, 0, 0
    try:
        if loaded:
            per = streams // SSE_PROCESSES
            background = [
                ctx.Process(target=sse_swarm, args=(server.port, per, k * per, stop, opened, bg_results)) for k in range(SSE_PROCESSES)
            ]
            background.append(ctx.Process(target=slow_clients, args=(server.port, stop, bg_results)))
            for p in background:
                p.start()
            deadline = time.monotonic() + 10
            while opened.value < per * SSE_PROCESSES and time.monotonic() < deadline:
                time.sleep(0.1)
            writer_thread.start()
            time.sleep(1.0)
        opened_count = opened.value
        barrier, results = ctx.Barrier(clients + 1), ctx.Queue()
        readers = [ctx.Process(target=reader, args=(server.port, duration_s, barrier, results)) for _ in range(clients)]
        for p in readers:
            p.start()
        answers: list[float | None] = []
        stop_probe = threading.Event()
        prober = threading.Thread(target=probe_healthz, args=(server.port, stop_probe, answers), daemon=True)
        barrier.wait(60)
        prober.start()
        outs = [results.get(timeout=duration_s + 60) for _ in readers]
        rss = server.worker_rss_mib()
        stop_probe.set()
        prober.join(5)
        join_processes(readers)
    finally:
        stop.set()
        stop_writer.set()
        if writer_thread.ident is not None:
            writer_thread.join(5)
        for _ in background:
            out = bg_results.get(timeout=30)
            cut_off += out.get("cut_off", 0)
            events += out.get("events", 0)
        join_processes(background)
    latencies = merged_latencies(outs)
    answered = [a for a in answers if a is not None]
    return Run(
        streams=opened_count,
        rps=sum(o["count"] / o["elapsed"] for o in outs if o["elapsed"] > 0),
        p50_ms=nearest_rank(latencies, 50) * 1000,
        p99_ms=nearest_rank(latencies, 99) * 1000,
        failed=sum(o["failed"] for o in outs),
        healthz_answered=len(answered),
        healthz_asked=len(answers),
        healthz_max_ms=max(answered, default=float("nan")) * 1000,
        events_per_s=events / duration_s,
        cut_off=cut_off,
        rss_mib=rss,
    )


def median(runs: list[Run]) -> Run:
    def med(name: str) -> float:
        return float(statistics.median(getattr(r, name) for r in runs))

    return Run(
        streams=int(med("streams")),
        rps=med("rps"),
        p50_ms=med("p50_ms"),
        p99_ms=med("p99_ms"),
        failed=int(med("failed")),
        healthz_answered=sum(r.healthz_answered for r in runs),
        healthz_asked=sum(r.healthz_asked for r in runs),
        healthz_max_ms=max(r.healthz_max_ms for r in runs),
        events_per_s=med("events_per_s"),
        cut_off=int(med("cut_off")),
        rss_mib=med("rss_mib"),
    )


def fmt(value: float, pattern: str) -> str:
    return "—" if value != value else pattern.format(value)  # NaN: nothing measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="GET /darkrooms and /healthz under 1,000 SSE + 50 slow clients, product vs gthread.")
    parser.add_argument("--quick", action="store_true", help="sanity run: 1 run x 2 s, 200 streams")
    parser.add_argument("--runs", type=int, default=3, help="runs per row; the table shows medians (default 3)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per run (default 5)")
    parser.add_argument("--streams", type=int, default=1000, help="SSE clients of the background load (default 1000)")
    parser.add_argument("--clients", type=int, default=8, help="closed-loop GET /darkrooms clients (default 8)")
    parser.add_argument("--darkrooms", type=int, default=100, help="Darkrooms in the cluster (default 100)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.duration, args.streams = 1, 2.0, 200
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    header = f"machine: {machine_summary()}, Python {platform.python_version()}, load average before: {load}"
    data_dir = Path(tempfile.mkdtemp(prefix="bench-streams-"))
    cluster = DevclusterProcess(data_dir, log_level="WARNING").start()
    cluster_port, kubeconfig = cluster.port, cluster.kubeconfig
    try:
        conn = BenchConn(cluster_port)
        install_crds(conn, namespace=NAMESPACE, probe_path=DARKROOMS)
        conn.close()
        populate(cluster_port, args.darkrooms)
        runs: dict[tuple[str, bool], list[Run]] = {(name, loaded): [] for name in SERVERS for loaded in (True, False)}
        for i in range(args.runs):
            for (name, loaded), measured in runs.items():
                # A fresh server per run: the baseline's threads stay stuck in closed streams until a heartbeat fails.
                server = Server(name, SERVERS[name], kubeconfig=kubeconfig, data_dir=data_dir)
                try:
                    run = measure(
                        server,
                        cluster_port=cluster_port,
                        loaded=loaded,
                        streams=args.streams,
                        clients=args.clients,
                        duration_s=args.duration,
                    )
                finally:
                    stop_process(server.proc)
                measured.append(run)
                log(f"  {name} loaded={loaded} run {i + 1}: {run}")
        results = {key: median(measured) for key, measured in runs.items()}
    finally:
        cluster.close()
        shutil.rmtree(data_dir, ignore_errors=True)

    print(f"\nServing under stream load: GET /darkrooms ({args.clients} clients) and /healthz - {datetime.date.today().isoformat()}")
    print(header)
    command = " --quick" if args.quick else ""
    how = f"median of {args.runs} runs x {args.duration:g} s, {args.darkrooms} Darkrooms"
    print(f"command: .venv/bin/python bench/streams.py{command} ({how})\n")
    print(
        "| server | background load | streams open | req/s | p50 ms | p99 ms | failed (2 s timeout) "
        "| /healthz answered | slowest /healthz ms | SSE events/s | slow clients cut off | worker RSS MiB | target | result |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    ok = True
    for (name, loaded), run in results.items():
        target = result = ""
        if name == "product" and loaded:
            target = f"p99 <= {TARGET_P99_MS:.0f} ms, every /healthz"
            passed = run.p99_ms <= TARGET_P99_MS and run.healthz_answered == run.healthz_asked and run.failed == 0
            result, ok = ("PASS" if passed else "MISS"), passed
        cells = [
            name,
            f"{args.streams:,} SSE + {SLOW_CLIENTS} slow" if loaded else "none",
            f"{run.streams:,}" if loaded else "",
            f"{run.rps:,.0f}",
            fmt(run.p50_ms, "{:.2f}"),
            fmt(run.p99_ms, "{:.2f}"),
            f"{run.failed:,}",
            f"{run.healthz_answered}/{run.healthz_asked}",
            fmt(run.healthz_max_ms, "{:.1f}"),
            f"{run.events_per_s:,.0f}" if loaded else "",
            f"{run.cut_off}" if loaded else "",
            fmt(run.rss_mib, "{:.0f}"),
            target,
            result,
        ]
        print("| " + " | ".join(cells) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
