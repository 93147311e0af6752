"""What everyone else's objects cost the reconciler: its metadata-only watch of the kinds it owns, per foreign object.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python bench/foreign.py                      # real control plane, 20,000 ConfigMaps, 3 runs
    nice -n 15 .venv/bin/python bench/foreign.py --server dev --count 5000

Why
---
The reconciler learns which child names someone else holds from a metadata-only list and watch of every ConfigMap,
Deployment, Service, Ingress and StatefulSet it does not manage (``darkroom_operator.runtime.owning``), instead of a
dry-run create per child. So its memory and its CPU grow with the cluster's other objects of those kinds, which no other
benchmark has: their namespaces hold only ours. This one measures that growth.

Method
------
* One server (``--server real``: realcluster; ``dev``: devcluster), the product's CRDs, no Darkroom.
* The operator as deployed: ``python -m darkroom_operator`` over all namespaces, 4 workers, no leader election.
* Each run starts it, waits for ``/readyz`` (every informer listed, the metadata-only ones too) and 2 s more, and
  reads its resident memory (``VmRSS``) and CPU (``/proc``); then ``--changes`` merge patches of foreign ConfigMaps'
  data (one connection, one after the other) and, once the operator's CPU has been still for 2 s, its CPU again.
* First ``--runs`` runs with no foreign object, then ``--count`` ConfigMaps (512 bytes of data, a label, an
  annotation; 10 namespaces, made on 4 connections), then ``--runs`` runs again. The table gives the medians; the
  difference per foreign object is the cost of the metadata-only watch.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import HOST, ROOT, Conn, cpu_seconds, free_port, install_crds, log, machine_summary, stop_process, wait_until
from servers import choose_servers, make_server

NAMESPACES = 10
WRITERS = 4
STILL_S = 2.0  # the operator's CPU unchanged this long: the watch events are handled


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def configmap(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"other-{i}", "labels": {"app": f"other-{i % 100}"}, "annotations": {"team": "someone-else"}},
        "data": {"config": f"{i:08d}" * 64},
    }


def create_foreign(server: Any, count: int) -> None:
    """``count`` ConfigMaps someone else made, over :data:`NAMESPACES` namespaces, on :data:`WRITERS` connections."""
    conn = Conn(server.endpoint)
    for n in range(NAMESPACES):
        conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": f"others-{n}"}})
    conn.close()

    def write(start: int) -> None:
        own = Conn(server.endpoint)
        for i in range(start, count, WRITERS):
            own.expect(201, "POST", f"/api/v1/namespaces/others-{i % NAMESPACES}/configmaps", configmap(i))
        own.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class Operator:
    """``python -m darkroom_operator`` over every namespace, as deployed."""

    def __init__(self, kubeconfig: Path, work: Path) -> None:
        self.kubeconfig, self.work = kubeconfig, work
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [
            sys.executable, "-m", "darkroom_operator", "--kubeconfig", str(self.kubeconfig), "--workers", "4",
            "--health-port", str(self.port), "--health-host", HOST, "--no-leader-election",
        ]  # fmt: skip
        env = {**os.environ, "DARKROOM_OPERATOR_LOG_LEVEL": "WARNING"}
        with (self.work / "operator.log").open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"the operator exited with {self.proc.returncode}: {(self.work / 'operator.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.port}/readyz", timeout=5) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


def wait_still(pid: int) -> float:
    """The process's CPU seconds once they have not moved for :data:`STILL_S`."""
    last, since = cpu_seconds(pid), time.monotonic()
    while time.monotonic() - since < STILL_S:
        time.sleep(0.25)
        now = cpu_seconds(pid)
        if now != last:
            last, since = now, time.monotonic()
    return last


def one_run(server: Any, work: Path, foreign: int, changes: int, round_: int) -> dict[str, float]:
    operator = Operator(server.kubeconfig, work)
    started = time.monotonic()
    operator.start()
    try:
        wait_until(operator.ready, 600.0, "the operator's /readyz", interval_s=0.1)
        ready_s = time.monotonic() - started
        assert operator.proc is not None
        pid = operator.proc.pid
        time.sleep(2.0)
        result = {"ready_s": ready_s, "rss_mib": rss_mib(pid), "start_cpu_s": cpu_seconds(pid)}
        if foreign:
            before = wait_still(pid)
            conn = Conn(server.endpoint)
            for c in range(changes):
                i = (round_ * changes + c) % foreign
                patch = json.dumps({"data": {"config": f"{round_}-{c}" * 64}}).encode()
                path = f"/api/v1/namespaces/others-{i % NAMESPACES}/configmaps/other-{i}"
                code, answer = conn.request("PATCH", path, patch, content_type="application/merge-patch+json")
                if code != 200:
                    raise RuntimeError(f"PATCH {path}: {code} {answer[:300]!r}")
            conn.close()
            result["change_us"] = (wait_still(pid) - before) / changes * 1e6
        return result
    finally:
        operator.stop()


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", choices=("dev", "real"), default="real", help="the API server (default real)")
    parser.add_argument("--count", type=int, default=20_000, help="foreign ConfigMaps (default 20,000)")
    parser.add_argument("--changes", type=int, default=2_000, help="changes of foreign ConfigMaps per run (default 2,000)")
    parser.add_argument("--runs", type=int, default=3, help="operator starts with and without them (default 3)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    load_start = os.getloadavg()[0]
    kinds, note = choose_servers(args.server)
    if note:
        log(note)
    with tempfile.TemporaryDirectory(prefix="bench-foreign-") as tmp:
        work = Path(tmp)
        server = make_server(kinds[0], work / "server")
        server.start()
        try:
            conn = Conn(server.endpoint)
            install_crds(conn, namespace="foreign-crds", probe_path="/apis/deployments.example.com/v1/darkrooms")
            conn.close()
            without = []
            for run in range(args.runs):
                without.append(one_run(server, work, 0, 0, run))
                log(f"run {run + 1}/{args.runs}, no foreign object: {without[-1]}")
            t0 = time.monotonic()
            create_foreign(server, args.count)
            log(f"created {args.count:,} foreign ConfigMaps in {time.monotonic() - t0:.0f} s")
            with_them = []
            for run in range(args.runs):
                with_them.append(one_run(server, work, args.count, args.changes, run))
                log(f"run {run + 1}/{args.runs}, {args.count:,} foreign ConfigMaps: {with_them[-1]}")
        finally:
            server.close()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"\nforeign objects and the reconciler, {kinds[0]} server, {now}; {machine_summary()}; load average at start {load_start:.2f}")
    print(f"command: bench/foreign.py {command}; median of {args.runs} runs each; total {time.monotonic() - started:.0f} s\n")
    grown = median(with_them, "rss_mib") - median(without, "rss_mib")
    rows = [
        ("operator RSS after its informers listed (MiB)", "{:.1f}", "rss_mib"),
        ("start until /readyz (s)", "{:.2f}", "ready_s"),
        ("operator CPU until /readyz and 2 s (s)", "{:.2f}", "start_cpu_s"),
    ]
    print(f"| | no foreign object | {args.count:,} foreign ConfigMaps |")
    print("|---|---:|---:|")
    for title, form, key in rows:
        print(f"| {title} | {form.format(median(without, key))} | {form.format(median(with_them, key))} |")
    print(f"| RSS per foreign object (bytes) | | {grown * 1024 * 1024 / args.count:,.0f} |")
    print(f"| operator CPU per change of a foreign ConfigMap (µs) | | {median(with_them, 'change_us'):,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
