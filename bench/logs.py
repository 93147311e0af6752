"""Benchmark opening a workload's pod logs: a Darkroom with 10 pods of 1,000+ log lines each, all pods interleaved.

Never run by the test suite; run it with::

    .venv/bin/python bench/logs.py                  # both servers (devcluster only without Go), 10 runs a row
    .venv/bin/python bench/logs.py --server dev --runs 3

Method
------
* Per server (``--server dev|real|both``; ``servers.py``): a fresh API server with the product's CRDs, one Darkroom
  and the Deployment the reconciler would make for it (labelled as it labels them, controlled by the Darkroom) with
  ``--pods`` (10) replicas whose pod template carries the simulation's log rate annotation
  (``simulation.example.com/log-lines-per-second``, ``--rate`` 1,000): both clusters' simulated kubelets then write
  that many lines a second per container, line i stamped the container's start + i/rate s. The benchmark waits until
  the pods run, the product lists them all on the logs page, and every container has written ``--lines`` (1,000)
  lines at least (they keep writing: the log is a function of time).
* The product: a fresh ``gunicorn`` with ``backend/server/gunicorn_conf.py`` (the production worker: Flask in a thread
  pool, the log streams on its event loop), reading the cluster with the server's admin kubeconfig.
* Measured ``--runs`` times, each on a new connection, in this order:

  - **page**: ``GET /ui/darkrooms/<ns>/<name>/logs?follow=1`` until its body is read;
  - **first line**: ``GET .../logs/stream?tail=500&follow=1`` (the stream the page opens: every pod, interleaved)
    from the request until the first log line (an ``event: lines`` frame with a line of a pod, not a note) arrives;
  - **page + first line**: the two above back to back, as a browser opening the page waits;
  - **all lines**: ``GET .../logs/stream?tail=<lines>`` (no follow) until ``event: done``: the last ``--lines`` lines
    of each pod (10,000), counted as received (and as said skipped, should the buffer have dropped any).

  Each row prints the median, p99 (nearest rank) and maximum. Target: the first line within 1 s (median and p99).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import HOST, Conn, install_crds, log, machine_summary, nearest_rank, stop_process, wait_until
from servers import choose_servers, make_server, realcluster_version
from streams import Server as ProductServer

from kinds import darkrooms as darkroom_kind
from tests.clusters import ClusterProcess
from tests.sseframes import FrameSplitter

NAMESPACE = "bench"
NAME = "busy"
RATE_ANNOTATION = "simulation.example.com/log-lines-per-second"
MANAGED = {"app.kubernetes.io/managed-by": "darkroom-operator"}
TARGET_S = 1.0
FIRST_LINE = re.compile(r'<div class="log-line"><span class="log-pod">')  # a pod's line (a note has log-note)
SKIPPED = re.compile(r"(\d+) lines? skipped")


class BenchConn(Conn):
    USER_AGENT = "logs-bench/1"


# -- the cluster's side -------------------------------------------------------------------------------------------------


def create_workload(conn: Conn, pods: int, rate: int) -> None:
    """The Darkroom and the Deployment the reconciler would make for it, its pods writing ``rate`` lines a second."""
    darkrooms = f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{NAMESPACE}/darkrooms"
    darkroom = {
        "apiVersion": darkroom_kind.GROUP_VERSION,
        "kind": "Darkroom",
        "metadata": {"name": NAME},
        "spec": {"version": "v0.1.0", "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": ["img"]},
    }
    owner = conn.expect(201, "POST", darkrooms, darkroom)
    labels = {"app": NAME}
    reference = {"apiVersion": darkroom_kind.GROUP_VERSION, "kind": "Darkroom", "name": NAME, "uid": owner["metadata"]["uid"]}
    container = {"name": "web", "image": "nginx:1.27", "args": ["--port", "8080"]}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "labels": {**MANAGED, **labels}, "ownerReferences": [{**reference, "controller": True}]},
        "spec": {
            "replicas": pods,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {**MANAGED, **labels}, "annotations": {RATE_ANNOTATION: str(rate)}},
                "spec": {"containers": [container]},
            },
        },
    }
    conn.expect(201, "POST", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", deployment)


def running_since(conn: Conn, pods: int) -> list[datetime.datetime] | None:
    """The start of each pod's container once ``pods`` pods run (None before)."""
    status, body = conn.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app%3D{NAME}")
    if status != 200:
        return None
    starts = []
    for pod in json.loads(body)["items"]:
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") != "Running":
            continue
        for entry in pod["status"].get("containerStatuses") or []:
            if (entry.get("state") or {}).get("running"):
                starts.append(datetime.datetime.fromisoformat(entry["state"]["running"]["startedAt"].replace("Z", "+00:00")))
    return starts if len(starts) == pods else None


# -- the client's side --------------------------------------------------------------------------------------------------


def get_page(port: int, path: str) -> tuple[int, bytes, float]:
    conn = BenchConn(port, timeout_s=30)
    try:
        began = time.perf_counter()
        status, body = conn.request("GET", path)
        return status, body, time.perf_counter() - began
    finally:
        conn.close()


@dataclass
class Streamed:
    first_line_s: float = float("nan")
    done_s: float = float("nan")
    lines: int = 0
    skipped: int = 0


def stream(port: int, path: str, *, until_done: bool, timeout_s: float = 60) -> Streamed:
    """GET ``path`` (SSE) on a new connection: when its first log line came, and (``until_done``) when ``done`` came,
    with the lines received and said skipped on the way."""
    sock = BenchConn(port, timeout_s=timeout_s).sock
    result = Streamed()
    frames = FrameSplitter(http_head=True)
    tail = b""
    try:
        began = time.perf_counter()
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n".encode())
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError(f"the stream closed early: {tail!r}")
            tail = (tail + chunk)[-500:]
            for frame in frames.feed(chunk):
                text = frame.data or ""
                result.lines += len(FIRST_LINE.findall(text))
                result.skipped += sum(int(n) for n in SKIPPED.findall(text))
                if result.lines and result.first_line_s != result.first_line_s:
                    result.first_line_s = time.perf_counter() - began
                    if not until_done:
                        return result
                if until_done and frame.event == "done":
                    result.done_s = time.perf_counter() - began
                    return result
            if time.perf_counter() - began > timeout_s:
                raise RuntimeError(f"no {'done' if until_done else 'first line'} within {timeout_s} s")
    finally:
        sock.close()


# -- one server -----------------------------------------------------------------------------------------------------------


@dataclass
class Results:
    kind: str
    page_s: list[float] = field(default_factory=list)
    first_line_s: list[float] = field(default_factory=list)
    page_first_line_s: list[float] = field(default_factory=list)
    all_lines_s: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    setup_s: float = 0.0


def bench_server(kind: str, opts: argparse.Namespace, work: Path) -> Results:
    results = Results(kind)
    began = time.monotonic()
    server: ClusterProcess = make_server(kind, work / kind, ready_delay_s=0.3)
    with server:
        conn = BenchConn(server.endpoint, timeout_s=30)
        install_crds(conn, namespace=NAMESPACE, probe_path=f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{NAMESPACE}/darkrooms")
        create_workload(conn, opts.pods, opts.rate)
        starts = wait_until(lambda: running_since(conn, opts.pods), 120, f"{opts.pods} running pods")
        product = ProductServer("product", [], kubeconfig=server.kubeconfig, data_dir=work / kind)
        try:
            base = f"/ui/darkrooms/{NAMESPACE}/{NAME}/logs"

            def listed() -> bool:
                status, body, _ = get_page(product.port, f"{base}?follow=1")
                return status == 200 and body.count(b'<option value="busy-') == opts.pods

            wait_until(listed, 60, "the logs page listing every pod")
            enough = max(starts) + datetime.timedelta(seconds=opts.lines / opts.rate + 0.2)
            while datetime.datetime.now(datetime.UTC) < enough:  # every container has written --lines lines
                time.sleep(0.05)
            results.setup_s = time.monotonic() - began
            log(f"{kind}: {opts.pods} pods at {opts.rate} lines/s, listed on the logs page after {results.setup_s:.1f} s")
            stream_path = f"{base}/stream?tail=500&follow=1"
            for run in range(opts.runs):
                status, _, page_s = get_page(product.port, f"{base}?follow=1")
                assert status == 200, status
                first = stream(product.port, stream_path, until_done=False).first_line_s
                results.page_s.append(page_s)
                results.first_line_s.append(first)
                results.page_first_line_s.append(page_s + first)
                whole = stream(product.port, f"{base}/stream?tail={opts.lines}", until_done=True)
                results.all_lines_s.append(whole.done_s)
                results.lines.append(whole.lines)
                results.skipped.append(whole.skipped)
                log(f"{kind} run {run + 1}: page {page_s:.3f} s, first line {first:.3f} s, {whole.lines} lines in {whole.done_s:.3f} s")
        finally:
            stop_process(product.proc)
        conn.close()
    return results


# -- report -----------------------------------------------------------------------------------------------------------------


def row(name: str, values_by_kind: list[list[float]], fmt: str = "{:.3f}") -> str:
    cells = []
    for values in values_by_kind:
        ordered = sorted(values)
        cells += [fmt.format(statistics.median(ordered)), fmt.format(nearest_rank(ordered, 99)), fmt.format(ordered[-1])]
    return f"| {name} | " + " | ".join(cells) + " |"


def report(all_results: list[Results], opts: argparse.Namespace, started: str, load: tuple[float, float]) -> str:
    names = {"dev": "devcluster", "real": "real control plane"}
    header = "| metric | " + " | ".join(f"{names[r.kind]} {q}" for r in all_results for q in ("median", "p99", "max")) + " |"
    align = "|---|" + "---:|" * (3 * len(all_results))
    versions = f", real = kube-apiserver {realcluster_version()} + etcd (realcluster)" if any(r.kind == "real" for r in all_results) else ""
    command = " ".join([".venv/bin/python", "bench/logs.py", *sys.argv[1:]])
    lines = [
        f"logs benchmark, {started}; {machine_summary()}, Python {platform.python_version()}{versions}; "
        f"load average at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}",
        "",
        f"command: {command}; a Darkroom with {opts.pods} pods writing {opts.rate} lines/s each ({opts.lines:,}+ lines each "
        f"when measured), {opts.runs} runs per server",
        "",
        header,
        align,
        row("logs page GET (s)", [r.page_s for r in all_results]),
        row("stream (all pods, tail=500, follow) → first log line (s)", [r.first_line_s for r in all_results]),
        row("page + stream → first log line (s)", [r.page_first_line_s for r in all_results]),
        row(f"stream tail={opts.lines}, no follow → done (s)", [r.all_lines_s for r in all_results]),
        row("  lines received in it", [[float(n) for n in r.lines] for r in all_results], "{:,.0f}"),
        row("  lines said skipped in it", [[float(n) for n in r.skipped] for r in all_results], "{:,.0f}"),
        "",
    ]
    for r in all_results:
        p99 = nearest_rank(sorted(r.page_first_line_s), 99)
        verdict = "met" if p99 <= TARGET_S else "MISSED"
        lines.append(f"target page + first line p99 <= {TARGET_S:.0f} s on {names[r.kind]}: {verdict} ({p99:.3f} s)")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", choices=("dev", "real", "both"), default=None, help="default: both if realcluster builds, else dev")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--rate", type=int, default=1000, help="lines a second each pod's container writes")
    parser.add_argument("--lines", type=int, default=1000, help="lines each container has written at least when measured")
    opts = parser.parse_args()
    kinds, note = choose_servers(None if opts.server == "both" else opts.server)
    if opts.server == "both" and kinds != ["dev", "real"]:
        raise SystemExit(f"--server both: {note}")
    if note:
        log(note)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="logs-bench-") as tmp:
        all_results = [bench_server(kind, opts, Path(tmp)) for kind in kinds]
    print(report(all_results, opts, started, (load[0], os.getloadavg()[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
