"""A person's edit during a storm: how soon the reconciler acts on a spec change while it works through thousands of keys.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python bench/storm.py                           # 10,000 Darkrooms on devcluster, main vs this tree
    nice -n 15 .venv/bin/python bench/storm.py --count 1000 --edits 10   # a quick look

Method
------
* One API server (``--server dev|real``, default dev; ``servers.py``: the product's CRDs, the ``bench`` namespace,
  devcluster with ``--history-size 200000`` and ``--deployment-ready-delay``, no audit log), ``--count``
  Darkrooms created at once (``workloads.py``: two sub-domains of their own each) and converged by this tree's
  reconciler (every Darkroom Ready), which is then stopped.
* Then each reconciler in turn (``--order``, default ``before,after``) is started on that cluster — ``before`` is the
  reconciler of ``--baseline-ref`` (default ``main``, exported with ``git archive`` into a temp dir and run from
  there with its packages first on ``PYTHONPATH``), ``after`` this working tree — exactly as ``reconcile.py`` runs
  ours (``python -m darkroom_operator --namespace bench --workers W --no-leader-election``), with
  ``DARKROOM_OPERATOR_RESYNC_S`` = ``--resync-s``. That is the storm: the restart's initial list (every
  Darkroom enqueued as its handlers attach) and a resync of all every ``--resync-s`` seconds, shorter than a
  pass over every Darkroom takes, so the queue does not drain while the edits are made.
* As soon as the reconciler answers ``/readyz`` (informers synced, controllers started: the initial list is
  queued), ``--edits`` edits are made, one every ``--edit-gap`` seconds, each a merge PATCH of ``spec.replicas``
  (1 → 2) of a different Darkroom, spread over the whole set (and different Darkrooms for each reconciler). An
  edit's latency runs from just before its PATCH is sent to this process seeing the Darkroom's Deployment with
  ``spec.replicas`` 2 (an informer on Deployments in ``bench``, opened before the reconciler starts): p50 / p99 /
  max (nearest rank) over the edits, and over those made while the reconciler's ``workqueue_depth{name="darkroom"}``,
  read just before each edit, was at least 100 (made during the storm: a resync that finished its pass leaves the
  queue empty until the next one), and the reconciler is stopped when every edit has landed
  (or after ``--timeout`` seconds).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    ROOT,
    add_baseline_arguments,
    checkouts,
    exit_on_sigterm,
    free_port,
    install_crds,
    log,
    machine_summary,
    nearest_rank,
    pythonpath,
    stop_process,
    wait_until,
)
from servers import make_server, realcluster_version
from workloads import NAMESPACE, BenchConn, Tracker, create_all, workload

from cluster import DARKROOMS, DEPLOYMENTS, Cache, ConnectionSettings, InformerSettings, connect
from tests.clusters import ClusterProcess

EDITED_REPLICAS = 2


class Reconciler:
    """``python -m darkroom_operator`` of the checkout ``product`` (its packages first on ``PYTHONPATH``), as
    ``reconcile.py`` runs ours; ready when its ``/readyz`` answers 200."""

    def __init__(self, server: ClusterProcess, opts: argparse.Namespace, product: Path, label: str, work: Path) -> None:
        self.server, self.opts, self.product, self.label = server, opts, product, label
        self.log_path = work / f"darkroom-operator-{label}.log"
        self.health_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [
            sys.executable, "-m", "darkroom_operator", "--kubeconfig", str(self.server.kubeconfig), "--namespace", NAMESPACE,
            "--workers", str(self.opts.workers), "--health-port", str(self.health_port), "--no-leader-election",
        ]  # fmt: skip
        env = {
            **os.environ,
            "PYTHONPATH": pythonpath(self.product),
            "DARKROOM_OPERATOR_RESYNC_S": str(self.opts.resync_s),
            "DARKROOM_OPERATOR_LOG_LEVEL": "WARNING",
        }
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def check_alive(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.label} exited with {self.proc.returncode}: {self.log_path.read_text(errors='replace')[-3000:]}")

    def _get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}{path}", timeout=5) as response:
                return response.status, response.read().decode()
        except OSError:
            return 0, ""

    def wait_ready(self, timeout_s: float) -> None:
        def ready() -> bool:
            self.check_alive()
            return self._get("/readyz")[0] == 200

        wait_until(ready, timeout_s, f"{self.label} to become ready", interval_s=0.1)

    def queue_depth(self) -> int:
        status, text = self._get("/metrics")
        for line in text.splitlines() if status == 200 else ():
            if line.startswith('workqueue_depth{name="darkroom"}'):
                return int(float(line.rsplit(" ", 1)[1]))
        return -1

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


class Landed:
    """When each edited Darkroom's Deployment was first seen with the edited replicas (a handler on the bench's informer)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.lock = threading.Lock()

    def seen(self, deployment: Mapping[str, Any]) -> None:
        if deployment["spec"].get("replicas") == EDITED_REPLICAS:
            now = time.monotonic()
            with self.lock:
                self.at.setdefault(deployment["metadata"]["name"], now)

    def count(self, names: list[str]) -> int:
        with self.lock:
            return sum(name in self.at for name in names)


STORMING = 100  # an edit made with at least this many keys queued was made during the storm


@dataclass
class Row:
    label: str
    latencies_s: list[float]
    storming_s: list[float]  # the latencies of the edits made during the storm
    depths: list[int]
    landed: int
    edits: int
    ready_s: float


def storm(server: ClusterProcess, reconciler: Reconciler, landed: Landed, names: list[str], opts: argparse.Namespace) -> Row:
    """Start ``reconciler`` (the storm), edit ``names`` one every ``--edit-gap`` s, wait for the Deployments."""
    started = time.monotonic()
    reconciler.start()
    try:
        reconciler.wait_ready(timeout_s=opts.timeout)
        ready_s = time.monotonic() - started
        sent: dict[str, float] = {}
        depths: list[int] = []
        conn = BenchConn(server.endpoint)
        try:
            for k, name in enumerate(names):
                depths.append(reconciler.queue_depth())
                sent[name] = time.monotonic()
                _patch(conn, name)
                if k < len(names) - 1:
                    time.sleep(max(0.0, sent[name] + opts.edit_gap - time.monotonic()))
        finally:
            conn.close()
        deadline = time.monotonic() + opts.timeout
        while landed.count(names) < len(names) and time.monotonic() < deadline:
            reconciler.check_alive()
            time.sleep(0.2)
        with landed.lock:
            took = {name: landed.at[name] - sent[name] for name in names if name in landed.at}
        storming = sorted(took[name] for name, depth in zip(names, depths, strict=True) if name in took and depth >= STORMING)
        each = [(depth, round(took.get(name, -1) * 1000)) for name, depth in zip(names, depths, strict=True)]
        log(f"{reconciler.label}: (queue depth at the edit, ms) {each}")
        return Row(reconciler.label, sorted(took.values()), storming, depths, len(took), len(names), ready_s)
    finally:
        reconciler.stop()


def _patch(conn: BenchConn, name: str) -> None:
    body = json.dumps({"spec": {"replicas": EDITED_REPLICAS}}).encode()
    status, data = conn.request("PATCH", DARKROOMS.path(namespace=NAMESPACE, name=name), body, "application/merge-patch+json")
    if status != 200:
        raise RuntimeError(f"PATCH {name}: {status} {data[:300]!r}")


def converge(server: ClusterProcess, opts: argparse.Namespace, work: Path) -> None:
    """Create ``--count`` Darkrooms and let this tree's reconciler make every one Ready."""
    load = workload("darkroom", count=opts.count, pg_count=0)
    connection = connect(ConnectionSettings(kubeconfig=server.kubeconfig), environ={})
    cache = Cache(transport=connection.transport, settings=InformerSettings())
    tracker = Tracker(load)
    tracker.watch(cache)
    operator = Reconciler(server, opts, ROOT, "converge", work)
    try:
        cache.start()
        if not cache.wait_for_sync(60):
            raise RuntimeError("bench informers did not sync")
        operator.start()
        operator.wait_ready(timeout_s=opts.timeout)
        began = time.monotonic()
        create_all(server.endpoint, load, opts.clients)
        while not tracker.all_ready.wait(2.0):
            operator.check_alive()
            if time.monotonic() - began > opts.converge_timeout:
                raise TimeoutError(f"only {tracker.ready_count()} of {opts.count} Ready after {opts.converge_timeout:g} s")
        log(f"{opts.count:,} Darkrooms created and Ready in {time.monotonic() - began:.0f} s")
        wait_until(lambda: operator.queue_depth() == 0, 300, "the converging reconciler's queue to drain", interval_s=0.5)
    finally:
        operator.stop()
        cache.stop()
        connection.close()


def edited_names(count: int, edits: int, round_: int) -> list[str]:
    """``edits`` Darkrooms spread over the whole set, different ones for each round."""
    load = workload("darkroom", count=count, pg_count=0)
    kind = load.kinds[0]
    step = max(1, count // (edits * 2 + 1))
    return [kind.name((round_ + 2 * k) * step % count) for k in range(edits)]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


def report(rows: list[Row], opts: argparse.Namespace, started: float, load_before: str, when: str, argv: list[str]) -> None:
    servers = {"dev": "devcluster", "real": f"kube-apiserver {realcluster_version()} + etcd (realcluster)"}[opts.server]
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nA spec edit during a storm, {when}; {servers}; {opts.count:,} Darkrooms")
    print(f"machine: {machine_summary()}, Python {platform.python_version()}; load average at start {load_before}, at end {load_after}")
    print(
        f"command: nice -n 15 .venv/bin/python {' '.join(['bench/storm.py', *argv])}; {opts.workers} workers, resync every "
        f"{opts.resync_s:g} s, {opts.edits} edits {opts.edit_gap:g} s apart; total {time.monotonic() - started:.0f} s"
    )
    print()
    print(
        "| reconciler | edits landed | edit → Deployment replicas p50 / p99 / max (ms) "
        f"| the same for the edits made with ≥ {STORMING} keys queued: edits, p50 / p99 / max (ms) "
        "| queue depth at the edits: min / median | /readyz after restart (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        depths = sorted(r.depths)
        storming = f"{len(r.storming_s)}, {percentiles(r.storming_s)}"
        print(
            f"| {r.label} | {r.landed}/{r.edits} | {percentiles(r.latencies_s)} | {storming} "
            f"| {depths[0]:,} / {depths[len(depths) // 2]:,} | {r.ready_s:.1f} |"
        )


def percentiles(ordered: list[float]) -> str:
    """p50 / p99 / max in ms of sorted seconds."""
    if not ordered:
        return "none"
    return f"{ms(nearest_rank(ordered, 50))} / {ms(nearest_rank(ordered, 99))} / {ms(ordered[-1])}"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Latency of spec edits while the reconciler works through a restart and resyncs.")
    parser.add_argument("--count", type=int, default=10_000, help="Darkrooms (default 10,000)")
    parser.add_argument("--server", choices=("dev", "real"), default="dev", help="API server (default dev)")
    parser.add_argument("--edits", type=int, default=30, help="edits per reconciler (default 30)")
    parser.add_argument("--edit-gap", type=float, default=1.0, help="seconds between edits (default 1)")
    parser.add_argument("--resync-s", type=float, default=10.0, help="the reconcilers' resync period during the storm (default 10)")
    parser.add_argument("--workers", type=int, default=4, help="reconcile workers (default 4)")
    parser.add_argument("--ready-delay", type=float, default=0.5, help="Deployment / pod ready delay of the server (default 0.5)")
    parser.add_argument("--clients", type=int, default=8, help="threads creating the Darkrooms (default 8)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for /readyz, and for the edits to land (default 600)")
    parser.add_argument("--converge-timeout", type=float, default=3600.0, help="seconds for every Darkroom to become Ready (default 3600)")
    add_baseline_arguments(parser, "reconciler")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    exit_on_sigterm()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="bench-storm-"))
    rows: list[Row] = []
    try:
        products = checkouts(opts, work)
        server = make_server(opts.server, work / "server", ready_delay_s=opts.ready_delay, dev_args=["--history-size", "200000"])
        with server:
            conn = BenchConn(server.endpoint)
            install_crds(conn, namespace=NAMESPACE, probe_path=DARKROOMS.path(namespace=NAMESPACE))
            conn.close()
            converge(server, opts, work)
            connection = connect(ConnectionSettings(kubeconfig=server.kubeconfig), environ={})
            cache = Cache(transport=connection.transport, settings=InformerSettings())
            landed = Landed()
            cache.add(DEPLOYMENTS, namespace=NAMESPACE).add_handler(on_add=landed.seen, on_update=lambda _old, new: landed.seen(new))
            try:
                cache.start()
                if not cache.wait_for_sync(120):
                    raise RuntimeError("the bench's Deployment informer did not sync")
                for round_, label in enumerate(opts.order.split(",")):
                    names = edited_names(opts.count, opts.edits, round_)
                    reconciler = Reconciler(server, opts, products[label], label, work)
                    log(f"{label}: restarting the reconciler, {opts.edits} edits")
                    row = storm(server, reconciler, landed, names, opts)
                    log(f"{label}: {row.landed}/{row.edits} landed")
                    rows.append(row)
            finally:
                cache.stop()
                connection.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, opts, started, load_before, when, argv)
    return 0 if all(r.landed == r.edits for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
