"""The API's relist after an API server restart at many Darkrooms: its memory before / at the peak / after, and its reads meanwhile.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python bench/relist.py                        # 10,000 Darkrooms, the real control plane, main vs this tree
    nice -n 15 .venv/bin/python bench/relist.py --server dev --count 1000

Method
------
* One API server (``--server real|dev``, default real: realcluster's kube-apiserver + etcd; ``servers.py``) with the
  product's CRDs, ``scale.py``'s 50 namespaces and ``--count`` Darkrooms created as ``scale.py`` creates them (labels,
  a realistic status).
* Each product in turn (``--order``, default ``before,after``: ``before`` is the checkout of ``--baseline-ref``,
  default ``main``, exported with ``git archive``; ``after`` this working tree) is started as ``scale.py`` starts it
  (gunicorn, local mode, the admin kubeconfig) and left to settle ``--settle`` seconds. Then, while a thread reads
  ``GET /darkrooms?limit=50`` on one keep-alive connection, 10 ms after each answer (a failed or refused read
  reconnects and is counted) and another samples the gunicorn tree's RSS every 20 ms, the API server is restarted: realcluster is
  stopped (SIGTERM: kube-apiserver, the controllers and the embedded etcd) and started again on the same data dir
  and port — ``realcluster up`` runs kube-apiserver and etcd as one unit, so the one cannot restart without the
  other — and devcluster the same way. Just before the stop a ConfigMap is created (a kind the product does not
  watch), so the product's informers come back with a resourceVersion behind the new server's history (devcluster's
  starts at its revision when it starts; kube-apiserver's watch cache at etcd's current revision) and relist. The
  product's informers retry meanwhile; the run waits until its ``darkroom_api_cache_relists_total`` has grown for
  Darkrooms (the relist happened; if the watch resumes instead, the table says so after ``--relist-timeout`` s)
  and ``darkroom_api_cache_objects`` is ``--count`` again, then ``--settle`` seconds more.
* Reported per product: RSS just before the restart (the median of the last second's samples), its peak from the
  restart until the end of the window, and at the end; the page-of-50 reads during the window from the restart
  until the relist is over: count, p50 / p99 / max (nearest rank, ms) of the ones answered 200, and how many failed;
  the server's downtime (stop → answering again) and the relist (answering again → cache relisted).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import add_baseline_arguments, checkouts, exit_on_sigterm, log, machine_summary, nearest_rank, wait_until
from scale import PAGE, Product, ScaleConn, populate, prepare
from servers import make_server, realcluster_version

from tests.clusters import ClusterProcess


def metric(port: int, name: str, resource_part: str) -> float:
    """The value of ``name{resource=...<resource_part>...}`` on the product's /metrics (-1 if unreadable)."""
    try:
        conn = ScaleConn(port, timeout_s=5)
        try:
            code, body = conn.request("GET", "/metrics")
        finally:
            conn.close()
    except OSError:
        return -1.0
    for line in body.decode().splitlines() if code == 200 else ():
        if line.startswith(name + "{") and resource_part in line:
            return float(line.rsplit(" ", 1)[1])
    return -1.0


@dataclass
class Sampler:
    """RSS samples of the product's tree and back-to-back page-of-50 reads, each on a thread of its own."""

    product: Product
    stop: threading.Event = field(default_factory=threading.Event)
    rss: list[tuple[float, int]] = field(default_factory=list)
    reads: list[tuple[float, float]] = field(default_factory=list)  # (start, latency s) of reads answered 200
    failed: list[float] = field(default_factory=list)

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self._sample, daemon=True), threading.Thread(target=self._read, daemon=True)]
        for t in threads:
            t.start()
        return threads

    def _sample(self) -> None:
        while not self.stop.wait(0.02):
            self.rss.append((time.monotonic(), self.product.rss()))

    def _read(self) -> None:
        conn: ScaleConn | None = None
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                conn = conn or ScaleConn(self.product.port, timeout_s=30)
                code, _ = conn.request("GET", f"/darkrooms?limit={PAGE}")
            except OSError:
                code = 0
                if conn is not None:
                    conn.close()
                conn = None
            if code == 200:
                self.reads.append((t0, time.monotonic() - t0))
            else:
                self.failed.append(t0)
            time.sleep(0.01)  # a read every ~10 ms: often enough to see a stall, light enough to leave the API its CPU
        if conn is not None:
            conn.close()


@dataclass
class Row:
    label: str
    rss_before: int
    rss_peak: int
    rss_after: int
    reads: list[float]
    failed: int
    down_s: float
    relist_s: float
    relisted: bool


def restart(server: ClusterProcess) -> float:
    """Stop the server and start it again on the same data dir and port; seconds until it answers again."""
    conn = ScaleConn(server.endpoint)
    try:  # a write the product does not watch: its informers' resourceVersion is then behind the new server's history
        conn.expect(201, "POST", "/api/v1/namespaces/scale-00/configmaps", {"metadata": {"generateName": "before-restart-"}})
    finally:
        conn.close()
    stopped = time.monotonic()
    server.stop()
    server.start()  # realcluster's waits for the kubeconfig ``up`` writes once it is ready again
    wait_until(lambda: _answers(server), 300, "the API server to answer again", interval_s=0.1)
    return time.monotonic() - stopped


def _answers(server: ClusterProcess) -> bool:
    try:
        conn = ScaleConn(server.endpoint, timeout_s=5)
        try:
            return conn.request("GET", "/readyz")[0] == 200
        finally:
            conn.close()
    except OSError:
        return False


def measure(server: ClusterProcess, root: Path, label: str, work: Path, opts: argparse.Namespace) -> Row:
    product = Product(kubeconfig=server.kubeconfig, work=work, timeout_s=opts.ready_timeout, root=root)
    try:
        time.sleep(opts.settle)
        relists0 = metric(product.port, "darkroom_api_cache_relists_total", "darkrooms")
        sampler = Sampler(product)
        threads = sampler.start()
        time.sleep(1.0)
        began = time.monotonic()
        down_s = restart(server)
        back = time.monotonic()
        relisted = True
        try:
            wait_until(
                lambda: (
                    metric(product.port, "darkroom_api_cache_relists_total", "darkrooms") > relists0
                    and metric(product.port, "darkroom_api_cache_objects", "darkrooms") == opts.count
                ),
                opts.relist_timeout,
                "the product's relist",
                interval_s=0.05,
            )
        except TimeoutError:
            relisted = False
        over = time.monotonic()
        time.sleep(opts.settle)
        sampler.stop.set()
        for t in threads:
            t.join(35)
        before = sorted(r for t, r in sampler.rss if began - 1.0 <= t < began)
        during = [r for t, r in sampler.rss if t >= began]
        reads = sorted(lat for t, lat in sampler.reads if began <= t <= over)
        failed = sum(began <= t <= over for t in sampler.failed)
        return Row(label, before[len(before) // 2], max(during), sampler.rss[-1][1], reads, failed, down_s, over - back, relisted)
    finally:
        product.stop()


def mib(n: int) -> str:
    return f"{n / 2**20:.1f}"


def report(rows: list[Row], opts: argparse.Namespace, started: float, load_before: str, when: str, argv: list[str]) -> None:
    servers = {"dev": "devcluster", "real": f"kube-apiserver {realcluster_version()} + etcd (realcluster)"}[opts.server]
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nThe API's relist after an API server restart, {when}; {servers}; {opts.count:,} Darkrooms")
    print(f"machine: {machine_summary()}, Python {platform.python_version()}; load average at start {load_before}, at end {load_after}")
    print(f"command: nice -n 15 .venv/bin/python {' '.join(['bench/relist.py', *argv])}; total {time.monotonic() - started:.0f} s")
    print()
    print(
        "| product | API RSS before / peak / after (MiB) | page of 50 during the restart and relist: reads, p50 / p99 / max (ms), failed "
        "| server down (s) | relist after it answered (s) |"
    )
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        lat = [x * 1000 for x in r.reads]
        cells = f"{len(lat)}, {nearest_rank(lat, 50):.1f} / {nearest_rank(lat, 99):.1f} / {lat[-1]:.1f}, {r.failed}" if lat else "none"
        relist = f"{r.relist_s:.1f}" if r.relisted else f"no relist within {opts.relist_timeout:g} s (the watch resumed)"
        print(f"| {r.label} | {mib(r.rss_before)} / {mib(r.rss_peak)} / {mib(r.rss_after)} | {cells} | {r.down_s:.1f} | {relist} |")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The API's memory and reads while its informers relist after an API server restart.")
    parser.add_argument("--count", type=int, default=10_000, help="Darkrooms (default 10,000)")
    parser.add_argument("--server", choices=("dev", "real"), default="real", help="API server (default real)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after start-up and after the relist (default 5)")
    parser.add_argument("--relist-timeout", type=float, default=120.0, help="seconds to wait for the relist (default 120)")
    parser.add_argument("--writers", type=int, default=4, help="writer processes creating Darkrooms (default 4)")
    parser.add_argument("--threads", type=int, default=4, help="threads per writer process (default 4)")
    parser.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for the product's /readyz (default 900)")
    add_baseline_arguments(parser, "product")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    exit_on_sigterm()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="bench-relist-"))
    rows: list[Row] = []
    try:
        products = checkouts(opts, work)
        server = make_server(opts.server, work / "server")
        with server:
            prepare(server)
            created = populate(server, 0, opts.count, writers=opts.writers, threads=opts.threads)
            log(f"{opts.count:,} Darkrooms created in {created:.0f} s")
            for label in opts.order.split(","):
                row = measure(server, products[label], label, work, opts)
                log(f"{label}: RSS {mib(row.rss_before)} / {mib(row.rss_peak)} / {mib(row.rss_after)} MiB, {len(row.reads)} reads")
                rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, opts, started, load_before, when, argv)
    return 0 if all(r.relisted for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
