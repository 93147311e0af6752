"""Benchmark the REST API: ``GET /darkrooms`` through gunicorn, against a passthrough baseline, as a markdown table.

Never run by the test suite; run it with::

    .venv/bin/python bench/api.py            # full: 100 and 1,000 Darkrooms, median of 5 runs x 3 s (~2 min)
    .venv/bin/python bench/api.py --quick    # sanity run: 1 run x 1 s per row (~30 s)

Method
------
* One fresh ``python -m devcluster serve`` subprocess (free 127.0.0.1 port, temp data dir,
  ``--log-level WARNING``) with the product's CRDs installed. Darkrooms are created in one
  namespace straight through the API server (8 writer threads, raw keep-alive HTTP), each with two
  labels, a WebFolder source, two subdomains and a realistic status (two domains, ready replicas,
  observed generation, a Ready condition) written through the status subresource.
* Two gunicorn servers, both started with the product's configuration
  (``gunicorn -c backend/server/gunicorn_conf.py``: one worker process, gthread, 32 threads, access log on):
  the product (``backend.server.wsgi:app``, reading through its informer cache) and the baseline
  (``bench/api_passthrough.py``: the same friendly JSON, but one LIST to the API server per request
  and every object converted and encoded each time). Before measuring, the two bodies are checked
  to be the same JSON, and the product's cache to hold every object.
* Load: ``--clients`` closed-loop clients, each a separate process (fork) with one keep-alive
  connection and a minimal raw-socket HTTP/1.1 client (cheap per request, so the load generators
  are not what is measured), sending ``GET /darkrooms`` back to back for ``--duration`` seconds
  after a discarded warm-up. req/s is the sum over clients of requests / elapsed; p50 / p99 are
  over every request of the run. Product and baseline runs alternate, so drift on a shared machine
  hits both. Each number in the table is the median over ``--runs`` runs. "server CPU" is the
  gunicorn process tree's CPU time per wall second (100% = one core); for the baseline the
  devcluster process does most of the work, shown as "API server CPU".
* Targets (the REST API's acceptance targets): ≥ 700 req/s at 100 Darkrooms; ≥ 20x the baseline at 1,000 Darkrooms.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import multiprocessing as mp
import os
import platform
import shutil
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
    free_port,
    install_crds,
    join_processes,
    log,
    machine_summary,
    merged_latencies,
    pythonpath,
    ready_status,
    stop_process,
)
from common import Conn as BaseConn
from common import nearest_rank as percentile

from kinds import darkrooms as darkroom_kind
from tests.clusters import DevclusterProcess

NAMESPACE = "bench"
DARKROOMS_PATH = f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{NAMESPACE}/darkrooms"
PATH = "/darkrooms"
TARGET_RPS_AT_100 = 700.0
TARGET_RATIO_AT_1000 = 20.0


def wait_http(url: str, *, proc: subprocess.Popen[bytes], log_path: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}: {log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer 200 within {timeout_s}s")


def tree_cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of ``pid`` and its descendants (Linux /proc; 0 where unavailable)."""
    total = 0.0
    pending = [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
    return total


class Conn(BaseConn):
    USER_AGENT = "api-bench/1"
    RECV_BYTES = 1 << 20


# -- the cluster ------------------------------------------------------------------------------


class Cluster:
    """A started devcluster in ``data_dir`` (``tests/clusters.py``), with the CRDs and Darkrooms the benchmark needs."""

    def __init__(self, data_dir: Path) -> None:
        self.server = DevclusterProcess(data_dir, log_level="WARNING").start(timeout_s=60.0)
        assert self.server.proc is not None
        self.port, self.proc, self.kubeconfig = self.server.port, self.server.proc, self.server.kubeconfig

    def install(self) -> None:
        conn = Conn(self.port)
        install_crds(conn, namespace=NAMESPACE, probe_path=DARKROOMS_PATH)
        conn.close()

    def populate(self, start: int, stop: int) -> None:
        """Darkrooms dr-<start> .. dr-<stop-1>, each with a status, by 8 writer threads."""

        def writer(indexes: list[int]) -> None:
            conn = Conn(self.port)
            for i in indexes:
                created = conn.expect(201, "POST", DARKROOMS_PATH, darkroom(i))
                created["status"] = status(created["metadata"]["name"])
                conn.expect(200, "PUT", f"{DARKROOMS_PATH}/{created['metadata']['name']}/status", created)
            conn.close()

        indexes = list(range(start, stop))
        threads = [threading.Thread(target=writer, args=(indexes[t::8],)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def darkroom(i: int) -> dict[str, Any]:
    return {
        "apiVersion": darkroom_kind.GROUP_VERSION,
        "kind": "Darkroom",
        "metadata": {
            "name": f"dr-{i:05}",
            "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "darkroom", "team": f"team-{i % 7}"},
        },
        "spec": {
            "version": "v0.1.0",
            "replicas": 1 + i % 3,
            "source": {"type": "WebFolder", "baseUrl": f"https://example.com/images/{i}"},
            "subDomains": ["images", "cdn"],
        },
    }


def status(name: str) -> dict[str, Any]:
    return ready_status([f"images.{name}.example.com", f"cdn.{name}.example.com"], message="all replicas serve")


# -- the servers --------------------------------------------------------------------------------


class Gunicorn:
    """A gunicorn subprocess with the product's configuration serving ``target``."""

    def __init__(self, name: str, target: str, *, kubeconfig: Path, data_dir: Path, root: Path = ROOT) -> None:
        """``root``: the checkout whose product is served (another one: bench/ui.py's before/after)."""
        self.name = name
        self.port = free_port()
        self.log_path = data_dir / f"gunicorn-{name}.log"
        env = {
            **os.environ,
            "PYTHONPATH": pythonpath(root, ROOT / "bench"),
            "DARKROOM_API_KUBECONFIG": str(kubeconfig),
            "DARKROOM_API_LOG_LEVEL": "WARNING",
            "PORT": str(self.port),
        }
        conf = root / "backend" / "server" / "gunicorn_conf.py"
        if not conf.exists():  # a checkout from before backend/ had layer folders (bench/ui.py --product, a before/after)
            conf, target = root / "backend" / "gunicorn_conf.py", target.replace("backend.server.wsgi:", "backend.wsgi:")
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(conf), target]
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        wait_http(
            f"http://{HOST}:{self.port}{PATH}?limit=1" if name == "product" else f"http://{HOST}:{self.port}{PATH}",
            proc=self.proc,
            log_path=self.log_path,
        )

    def get(self, path: str = PATH) -> dict[str, Any]:
        conn = Conn(self.port)
        try:
            return conn.expect(200, "GET", path)
        finally:
            conn.close()


# -- load -----------------------------------------------------------------------------------------


def client(port: int, duration_s: float, barrier: Any, results: Any) -> None:
    out: dict[str, Any] = {"count": 0, "elapsed": 0.0, "lat": b"", "error": ""}
    try:
        conn = Conn(port)
        latencies = array("d")
        barrier.wait(60)
        clock = time.perf_counter
        start = clock()
        end = start + duration_s
        while True:
            t0 = clock()
            code, data = conn.request("GET", PATH)
            t1 = clock()
            if code != 200:
                out["error"] = f"GET {PATH} -> {code}: {data[:300]!r}"
                break
            latencies.append(t1 - t0)
            if t1 >= end:
                break
        out.update(count=len(latencies), elapsed=clock() - start, lat=latencies.tobytes())
        conn.close()
    except Exception as e:  # reported to the parent, which fails the run
        out["error"] = f"client crashed: {e!r}"
    results.put(out)


@dataclass
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    server_cpu: float
    cluster_cpu: float


def measure(server: Gunicorn, cluster: Cluster, *, clients: int, duration_s: float) -> Run:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(clients + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=client, args=(server.port, duration_s, barrier, results), daemon=True) for _ in range(clients)]
    for p in procs:
        p.start()
    outs = []
    try:
        barrier.wait(60)
        cpu0, cluster0, wall0 = tree_cpu_seconds(server.proc.pid), tree_cpu_seconds(cluster.proc.pid), time.perf_counter()
        time.sleep(duration_s)
        outs = [results.get(timeout=duration_s + 120) for _ in procs]
        wall = time.perf_counter() - wall0
        cpu = (tree_cpu_seconds(server.proc.pid) - cpu0) / wall
        cluster_cpu = (tree_cpu_seconds(cluster.proc.pid) - cluster0) / wall
    finally:
        join_processes(procs)
    errors = [o["error"] for o in outs if o["error"]]
    if errors:
        raise RuntimeError(f"{server.name}: {errors[0]}")
    latencies = merged_latencies(outs)
    rps = sum(o["count"] / o["elapsed"] for o in outs if o["elapsed"] > 0)
    return Run(rps, percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000, len(latencies), cpu, cluster_cpu)


def median_run(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.rps for r in runs),
        statistics.median(r.p50_ms for r in runs),
        statistics.median(r.p99_ms for r in runs),
        sum(r.requests for r in runs),
        statistics.median(r.server_cpu for r in runs),
        statistics.median(r.cluster_cpu for r in runs),
    )


def machine_line() -> str:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"machine: {machine_summary()}, Python {platform.python_version()}, load average before: {load}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark GET /darkrooms through gunicorn against a passthrough baseline.")
    parser.add_argument("--quick", action="store_true", help="sanity run: 1 run of 1 s per row")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per row; the table shows their median (default 5)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured run (default 3)")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds of discarded warm-up per server and size (default 0.5)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent keep-alive connections (default 8)")
    parser.add_argument("--sizes", default="100,1000", help="Darkroom counts to measure at, ascending (default 100,1000)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.duration, args.warmup = 1, 1.0, 0.3
    sizes = sorted(int(s) for s in args.sizes.split(","))
    header = machine_line()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    cluster = Cluster(data_dir)
    servers: list[Gunicorn] = []
    results: dict[tuple[int, str], Run] = {}
    try:
        cluster.install()
        product = Gunicorn("product", "backend.server.wsgi:app", kubeconfig=cluster.kubeconfig, data_dir=data_dir)
        servers.append(product)
        baseline = Gunicorn("baseline", "api_passthrough:app", kubeconfig=cluster.kubeconfig, data_dir=data_dir)
        servers.append(baseline)
        have = 0
        for size in sizes:
            started = time.monotonic()
            cluster.populate(have, size)
            have = size
            log(f"{size} Darkrooms in the cluster ({time.monotonic() - started:.1f}s)")
            deadline = time.monotonic() + 60
            while product.get(f"{PATH}?limit=1")["total"] != size:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the product's cache did not reach {size} Darkrooms")
                time.sleep(0.05)
            product_body, baseline_body = product.get(), baseline.get()
            if product_body != baseline_body or len(product_body["items"]) != size:
                raise RuntimeError("the product and the baseline answer different JSON")
            for server in (product, baseline):
                measure(server, cluster, clients=args.clients, duration_s=args.warmup)
            runs: dict[str, list[Run]] = {"product": [], "baseline": []}
            for i in range(args.runs):
                for server in (product, baseline) if i % 2 == 0 else (baseline, product):
                    run = measure(server, cluster, clients=args.clients, duration_s=args.duration)
                    runs[server.name].append(run)
                    log(f"  {size} {server.name} run {i + 1}: {run.rps:,.0f} req/s, p50 {run.p50_ms:.2f} ms, p99 {run.p99_ms:.2f} ms")
            for name, measured in runs.items():
                results[(size, name)] = median_run(measured)
    finally:
        for server in servers:
            stop_process(server.proc)
        stop_process(cluster.proc)
        shutil.rmtree(data_dir, ignore_errors=True)

    print(f"\nREST API benchmark: GET /darkrooms, {args.clients} connections - {datetime.date.today().isoformat()}")
    print(header)
    print(f"command: .venv/bin/python bench/api.py{' --quick' if args.quick else ''} (median of {args.runs} runs x {args.duration:g} s)\n")
    print("| Darkrooms | server | req/s | p50 ms | p99 ms | server CPU | API server CPU | vs baseline | target | result |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
    verdicts = _print_rows(sizes, results)
    return 0 if all(verdicts) else 1


def _print_rows(sizes: list[int], results: dict[tuple[int, str], Run]) -> list[bool]:
    """The table's rows (product and baseline per size); the verdict of each size that has a target."""
    verdicts: list[bool] = []
    for size in sizes:
        ours, theirs = results[(size, "product")], results[(size, "baseline")]
        ratio = ours.rps / theirs.rps if theirs.rps else float("inf")
        target, ok = "", None
        if size == 100:
            target, ok = f">= {TARGET_RPS_AT_100:.0f} req/s", ours.rps >= TARGET_RPS_AT_100
        elif size == 1000:
            target, ok = f">= {TARGET_RATIO_AT_1000:.0f}x baseline", ratio >= TARGET_RATIO_AT_1000
        if ok is not None:
            verdicts.append(ok)
        for name, run in (("product (cache)", ours), ("baseline (passthrough)", theirs)):
            is_product = run is ours
            cells = [
                f"{size:,}",
                name,
                f"{run.rps:,.0f}",
                f"{run.p50_ms:.2f}",
                f"{run.p99_ms:.2f}",
                f"{run.server_cpu:.0%}",
                f"{run.cluster_cpu:.0%}",
                f"{ratio:,.1f}x" if is_product else "1x",
                target if is_product else "",
                ("PASS" if ok else "MISS") if is_product and ok is not None else "",
            ]
            print("| " + " | ".join(cells) + " |")
    return verdicts


if __name__ == "__main__":
    sys.exit(main())
