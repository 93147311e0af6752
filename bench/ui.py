"""Benchmark the dashboard: live list updates in many open tabs (renders per change, change → DOM), and page render time.

Never run by the test suite; run it with::

    .venv/bin/python bench/ui.py                       # 1,000 Darkrooms, 20 tabs, 100 changes, 3 runs (~3 min)
    .venv/bin/python bench/ui.py --layout windows      # the same 20 tabs each in its own window, all visible
    .venv/bin/python bench/ui.py --gap 0.5 --renders 0 # 2 changes/s instead of 10
    .venv/bin/python bench/ui.py --tabs 5 --changes 20 --runs 1 --size 200 --renders 0
    .venv/bin/python bench/ui.py --product /tmp/main   # the same against another checkout (e.g. main, for a before/after)
    .venv/bin/python bench/ui.py --size 10000 --churn 100 --renders 0   # under churn: 100 more status changes/s

Method
------
* One fresh ``python -m devcluster serve`` subprocess with the CRDs and ``--size`` Darkrooms (each
  with a status) in namespace ``bench``, written straight through the API server (bench/api.py's
  helpers). No reconciler: the benchmark writes the status itself, as the reconciler would.
* The product under gunicorn with its production configuration (``backend/server/gunicorn_conf.py``, one
  worker: the ASGI front on one event loop), exactly as ``make api`` runs it; ``--product DIR`` serves
  another checkout's product instead (``git archive main | tar -x -C DIR``), with this bench.
* Live updates: one headless chromium (/usr/bin/chromium), driven over the DevTools protocol
  (bench/ui_browser.py), opens ``--tabs`` tabs on ``/?namespace=bench`` (page 1: 50 rows). ``--layout tabs``
  (default): the tabs of one window, as a browser has them — the first in front, the others hidden (chromium
  renders no frames for them; their rows are still swapped as each change arrives). ``--layout windows``: each
  in a window of its own, all visible at once (tiled windows: every tab renders every change — the worst
  case for the machine). Each tab on a host name of its own (``t<n>.localhost``: a browser opens at most 6
  connections per host, and each tab holds an event stream). It waits until each says Live, and installs in
  each a MutationObserver that timestamps (``performance.timeOrigin + performance.now()``,
  the same wall clock as the Python side) the first time a row shows a marker. Then, per run, ``--changes``
  times: note the wall clock, JSON-merge-patch the status subresource of one of the 50 shown Darkrooms
  (round robin) with a new domain marker, pause ``--gap`` seconds. When every tab has shown every marker:
  latency = DOM time minus the time before the PATCH (the API server write, the watch event to the
  informer, the server's render, the SSE frame, the swap in the tab; before rows were pushed as HTML also each
  tab's fetch of the row), for every (tab, change). Targets (the dashboard's): p99 ≤ 100 ms in every tab.
  (Not Playwright: every page it drives reports itself visible, so it can only model all-visible tabs, and
  its own per-page instrumentation costs CPU that the tabs then compete with.)
* Server delivery, measured apart first (``--streams``, default: as many as tabs; 0 skips it): the same
  changes (markers of their own) to that many raw SSE streams on ``/ui/live/darkrooms?namespace=bench`` —
  what each tab opens — read by plain sockets in threads, no browser (bench/ui_costs.py): the time from
  before the PATCH to the frame read on each stream. What the tabs add to that is the browser side.
* Where the CPU goes (bench/ui_costs.py): per run, the CPU seconds of each kind of process (chromium's
  renderers, GPU process (the display compositor; software here), network service and browser process;
  the product's gunicorn tree; devcluster), from /proc, divided by the changes
  (and by the tabs, for "per change and tab"); and the tabs' main threads (all tasks, and script, style
  and layout among them) from the DevTools Performance domain (thread time). Before the runs, ``--idle``
  seconds with the tabs open and nothing changing give each kind's idle share (100% = one core). Each
  tab waits for the run's last marker by polling every 100 ms (every frame would add frames to measure).
* Renders per change: ``darkroom_dashboard_row_renders_total`` from ``/metrics`` (its increase over the
  run divided by the changes); a product without it (before) re-rendered the row once per tab that
  fetched it, so there the count is the row fetches the tabs made (``/ui/darkrooms/<ns>/<name>/row``),
  counted in each tab (its resource timing entries). Target: 1.
* Churn (``--churn N``): a writer process (one keep-alive connection, bench/api.py's ``Conn``) makes ``N``
  status changes per second (new domains, no marker) to Darkrooms drawn at random from all ``--size``, for the
  whole of each measured run (the raw streams' and the tabs'), while the measured changes go on as above. Per
  run: the churn rate achieved (the writer is behind when it falls short of ``N``: each PATCH waits for its
  answer), the changes the product published (``darkroom_api_watch_events_total``: its informer saw them;
  on a busy machine it can lag behind the writers), renders per change of any kind (the counter's increase
  over the published changes), renders per change of a row no tab shows (the increase less one per change of a
  shown row, over the published changes less those of shown rows: 0 when such rows are never rendered), and
  each process kind's CPU per second of the run (100% = one core). The tabs' change → DOM p50 and p99 are printed per tab.
* Each run's figures; the table shows the median over ``--runs`` runs.
* Render time: ``GET`` of the Darkrooms page over one keep-alive connection, sequentially,
  ``--renders`` times per variant after 3 discarded warm-ups; median and p95 of the round trip
  (loopback: the server's time plus well under a millisecond). Variants: the first page (50 of
  ``--size`` rows, full layout), the last page, a name filter, a sort, and the htmx fragment.
"""

from __future__ import annotations

import argparse
import html
import json
import multiprocessing as mp
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api as apibench
from common import HOST, ROOT, log, nearest_rank, stop_process, wait_until
from ui_browser import LAYOUTS, Chromium, tab_hosts
from ui_costs import RawStreams, cpu_by_kind

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TARGET_P99_S = 0.100
TARGET_RENDERS = 1.0
SHOWN = 50  # rows on the first page: the changes go to these, so every tab shows every change
STREAM_MARKERS = 1_000_000  # the raw streams' markers: never one a tab waits for
RENDERS_METRIC = 'darkroom_dashboard_row_renders_total{view="darkrooms"}'
PUBLISHED_METRIC = 'darkroom_api_watch_events_total{kind="Darkroom",type="MODIFIED"}'
MERGE_PATCH = "application/merge-patch+json"

OBSERVER = """
() => {
  window.__seen = {};
  performance.setResourceTimingBufferSize(1000000);  // every row fetch counted (ROW_FETCHES), not the first 250
  const record = (node) => {
    const text = node.textContent || '';
    for (const match of text.matchAll(/marker-(\\d+)\\./g)) {
      if (!(match[1] in window.__seen)) window.__seen[match[1]] = performance.timeOrigin + performance.now();
    }
  };
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      mutation.addedNodes.forEach(record);
      if (mutation.type === 'characterData') record(mutation.target);
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""
# The row fetches a tab made (a product before rows were pushed as HTML fetched each changed row in each tab).
ROW_FETCHES = "performance.getEntriesByType('resource').filter((e) => e.name.split('?')[0].endsWith('/row')).length"


def patch_status(port: int, name: str, marker: int) -> None:
    body = json.dumps({"status": {"domains": [f"marker-{marker}.example.com", f"cdn.{name}.example.com"]}}).encode()
    request = urllib.request.Request(
        f"http://{HOST}:{port}{apibench.DARKROOMS_PATH}/{name}/status",
        data=body,
        method="PATCH",
        headers={"Content-Type": MERGE_PATCH},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def churn_writer(port: int, size: int, rate: float, stop: Any, made: Any, shown: Any) -> None:
    """Until ``stop``: ``rate`` status changes per second to random Darkrooms of all ``size`` over one keep-alive
    connection; ``made`` and ``shown`` count the changes (and those of the shown rows). Paced on a schedule: a
    writer behind it sends at once (never sleeps) until it is on time again."""
    conn = apibench.Conn(port)
    pick = random.Random()
    start, n, run = time.monotonic(), 0, os.getpid()  # a process per run: its changes never repeat an earlier run's
    try:
        while not stop.is_set():
            index = pick.randrange(size)
            name = f"dr-{index:05}"
            body = {"status": {"domains": [f"churn-{run}-{n}.{name}.example.com", f"cdn.{name}.example.com"]}}
            code, data = conn.request("PATCH", f"{apibench.DARKROOMS_PATH}/{name}/status", json.dumps(body).encode(), MERGE_PATCH)
            if code != 200:
                raise RuntimeError(f"churn PATCH {name}: {code} {data[:300]!r}")
            n += 1
            with made.get_lock():
                made.value += 1
                if index < SHOWN:
                    shown.value += 1
            wait = start + n / rate - time.monotonic()
            if wait > 0:
                stop.wait(wait)
    finally:
        conn.close()


class Churn:
    """The churn writer process (``rate`` 0: none) and its counts."""

    def __init__(self, port: int, size: int, rate: float) -> None:
        self.port, self.size, self.rate = port, size, rate
        ctx = mp.get_context("fork")
        self._ctx = ctx
        self.made, self.shown = ctx.Value("i", 0), ctx.Value("i", 0)
        self._stop = ctx.Event()
        self._proc: Any = None

    @contextmanager
    def running(self) -> Iterator[None]:
        if not self.rate:
            yield
            return
        self._stop.clear()
        self._proc = self._ctx.Process(target=churn_writer, args=(self.port, self.size, self.rate, self._stop, self.made, self.shown))
        self._proc.start()
        try:
            time.sleep(1.0)  # on its pace before the run starts
            yield
        finally:
            self._stop.set()
            self._proc.join(10)
            if self._proc.exitcode != 0:
                raise RuntimeError(f"the churn writer failed (exit code {self._proc.exitcode}): see above")

    def counts(self) -> tuple[int, int]:
        with self.made.get_lock():
            return self.made.value, self.shown.value


@dataclass
class Mark:
    """The counters at one moment of a run: wall clock, renders, CPU per kind, churn counts."""

    at: float
    renders: float | None
    cpu: dict[str, float]
    churn: tuple[int, int]
    published: float  # Darkroom modifications the product published (its informer saw)


def mark(port: int, servers: dict[int, str], churn: Churn, extra: dict[str, float] | None = None) -> Mark:
    published = metric(port, PUBLISHED_METRIC, "darkroom_api_watch_events") or 0.0
    return Mark(time.monotonic(), renders_so_far(port), cpu_by_kind(servers) | (extra or {}), churn.counts(), published)


def churned(before: Mark, after: Mark, changes: int, shown_changes: int) -> Churned:
    """The churn figures between two marks; ``changes`` measured changes (``shown_changes`` of them of shown rows)."""
    seconds = after.at - before.at
    made, shown = after.churn[0] - before.churn[0], after.churn[1] - before.churn[1]
    renders = (after.renders or 0.0) - (before.renders or 0.0)
    # Per change the product saw (published): on a busy machine its informer can lag behind the writers.
    published = after.published - before.published
    unshown = published - shown_changes - shown
    return Churned(
        seconds=seconds,
        changes=made,
        shown=shown,
        renders_per_change=renders / published if published else 0.0,
        unshown_renders=(renders - shown_changes - shown) / unshown if unshown > 0 else 0.0,
        cpu_pct={kind: (after.cpu[kind] - before.cpu.get(kind, 0.0)) * 100.0 / seconds for kind in sorted(after.cpu)},
        published=published,
    )


def metric(port: int, sample: str, family: str) -> float | None:
    """One sample of the product's ``/metrics`` (None: a product without the metric ``family``; 0: none yet)."""
    with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith(sample):
            return float(line.rsplit(" ", 1)[1])
    return None if family not in text else 0.0


def renders_so_far(port: int) -> float | None:
    """The product's row render counter (None: a product without one)."""
    return metric(port, RENDERS_METRIC, "darkroom_dashboard_row_renders")


@dataclass
class Run:
    latencies: list[float]  # every (tab or stream, change), seconds, ascending
    worst_tab_p99: float
    renders_per_change: float
    fetches_per_change: float
    missing: int
    cpu_ms: dict[str, float] = field(default_factory=dict)  # per process kind: CPU ms per change
    per_tab: list[list[float]] = field(default_factory=list)  # each tab's (or stream's) latencies, ascending
    churn: Churned | None = None  # what the churn writer did during the run (--churn)


@dataclass
class Churned:
    """The churn of one run: the writer's changes, the renders they and the measured changes caused, CPU per second."""

    seconds: float
    changes: int  # churn changes made during the run
    shown: int  # of those, changes of a row the tabs show
    renders_per_change: float  # the counter's increase per Darkroom change the product published (measured + churn)
    unshown_renders: float  # renders per published change of a row no tab shows
    cpu_pct: dict[str, float]  # per process kind: CPU per second of the run, % of one core
    published: float  # Darkroom modifications the product published during the run

    @property
    def rate(self) -> float:
        return self.changes / self.seconds if self.seconds else 0.0


def send_changes(cluster: apibench.Cluster, first: int, changes: int, gap_s: float) -> dict[int, float]:
    """``changes`` status patches of the shown Darkrooms (round robin), markers from ``first``: marker → ms before its PATCH."""
    sent: dict[int, float] = {}
    for n in range(changes):
        marker = first + n
        sent[marker] = time.time() * 1000.0
        patch_status(cluster.port, f"dr-{n % SHOWN:05}", marker)
        time.sleep(gap_s)
    return sent


def summarize(sent: dict[int, float], seen: list[dict[str, float]], *, renders: float, fetches: float, cpu_ms: dict[str, float]) -> Run:
    per_tab = [sorted((tab[str(m)] - t) / 1000.0 for m, t in sent.items() if str(m) in tab) for tab in seen]
    every = sorted(x for tab in per_tab for x in tab)
    return Run(
        latencies=every,
        worst_tab_p99=max(nearest_rank(tab, 99) for tab in per_tab),
        renders_per_change=renders,
        fetches_per_change=fetches,
        missing=len(seen) * len(sent) - len(every),
        cpu_ms=cpu_ms,
        per_tab=per_tab,
    )


def cpu_per_change(before: dict[str, float], after: dict[str, float], changes: int) -> dict[str, float]:
    return {kind: (after[kind] - before.get(kind, 0.0)) * 1000.0 / changes for kind in sorted(after)}


def delivered(raw: RawStreams, sent: dict[int, float]) -> bool:
    return all(all(m in seen for m in sent) for seen in raw.seen)


def stream_runs(
    port: int,
    cluster: apibench.Cluster,
    servers: dict[int, str],
    churn: Churn,
    *,
    streams: int,
    changes: int,
    runs: int,
    gap_s: float,
    path: str,
) -> list[Run]:
    """Server delivery: the same changes to ``streams`` raw SSE streams (ui_costs.RawStreams) on ``path``, no browser."""
    results = []
    raw = RawStreams(HOST, port, path, streams)
    try:
        for run in range(runs):
            log(f"server delivery, run {run + 1}/{runs}: {changes} changes, {streams} raw SSE streams ...")
            with churn.running():
                before = mark(port, servers, churn)
                sent = send_changes(cluster, STREAM_MARKERS + run * changes, changes, gap_s)
                wait_until(partial(delivered, raw, sent), 60, "every stream to read every change")
                after = mark(port, servers, churn)
            renders = (after.renders or 0.0) - (before.renders or 0.0)
            seen = [{str(m): t for m, t in stream.items()} for stream in raw.seen]
            result = summarize(sent, seen, renders=renders / changes, fetches=0.0, cpu_ms=cpu_per_change(before.cpu, after.cpu, changes))
            if churn.rate:  # renders per change of any kind: the measured ones and the churn
                result.churn = churned(before, after, changes, changes)
                result.renders_per_change = result.churn.renders_per_change
            results.append(result)
    finally:
        raw.close()
    return results


MAIN_THREAD = {"TaskDuration": "all tasks", "ScriptDuration": "script", "RecalcStyleDuration": "style", "LayoutDuration": "layout"}


def main_threads(browser: Chromium, sessions: list[str]) -> dict[str, float]:
    """CPU seconds so far of the tabs' main threads (all tasks; script, style and layout among them), summed over the tabs."""
    totals = dict.fromkeys((f"tabs' main threads: {what}" for what in MAIN_THREAD.values()), 0.0)
    for session in sessions:
        for metric in browser.send("Performance.getMetrics", session=session)["metrics"]:
            if metric["name"] in MAIN_THREAD:
                totals[f"tabs' main threads: {MAIN_THREAD[metric['name']]}"] += float(metric["value"])
    return totals


def live_runs(
    port: int,
    cluster: apibench.Cluster,
    servers: dict[int, str],
    churn: Churn,
    *,
    tabs: int,
    layout: str,
    changes: int,
    runs: int,
    gap_s: float,
    idle_s: float,
) -> tuple[list[Run], dict[str, float], int]:
    """The browser side: ``tabs`` chromium tabs on the list (bench/ui_browser.py); also each process kind's CPU share
    (%) while they idle, and how many of the tabs were visible."""
    results = []
    browser = Chromium(CHROMIUM, host=HOST)
    try:
        opened = [browser.open(f"http://{host}:{port}/?namespace={apibench.NAMESPACE}", layout) for host in tab_hosts(tabs)]
        for tab in opened:
            if not browser.wait_for(tab.session, "document.querySelector('#live-indicator[data-state=live]') !== null", 60):
                raise RuntimeError("a tab did not go Live within 60 s")
            browser.evaluate(tab.session, f"({OBSERVER})()")
            browser.send("Performance.enable", {"timeDomain": "threadTicks"}, tab.session)
        visible = sum(tab.visible for tab in opened)
        log(f"{tabs} tabs open ({layout}: {visible} visible)")
        sessions = [tab.session for tab in opened]
        idle = {}
        if idle_s:
            log(f"{idle_s:g} s without changes (idle CPU) ...")
            before = cpu_by_kind(servers)
            time.sleep(idle_s)
            after = cpu_by_kind(servers)
            idle = {kind: (after[kind] - before.get(kind, 0.0)) * 100.0 / idle_s for kind in sorted(after)}
        for run in range(runs):
            log(f"run {run + 1}/{runs}: {changes} changes, {tabs} tabs ...")
            with churn.running():
                fetched_before = row_fetches(browser, sessions)
                start = mark(port, servers, churn, main_threads(browser, sessions))
                sent = send_changes(cluster, run * changes, changes, gap_s)
                wanted = json.dumps([str(m) for m in sent])
                deadline = time.monotonic() + 60
                for session in sessions:
                    browser.wait_for(session, f"{wanted}.every((m) => m in window.__seen)", max(0.0, deadline - time.monotonic()))
                end = mark(port, servers, churn, main_threads(browser, sessions))
                seen = [browser.evaluate(session, "window.__seen") for session in sessions]
                if not churn.rate:
                    time.sleep(0.5)  # renders of the last changes are counted
                    end.renders = renders_so_far(port)
            fetches = (row_fetches(browser, sessions) - fetched_before) / changes
            renders_before, renders_after = start.renders, end.renders
            renders = (renders_after - renders_before) / changes if renders_after is not None and renders_before is not None else fetches
            result = summarize(sent, seen, renders=renders, fetches=fetches, cpu_ms=cpu_per_change(start.cpu, end.cpu, changes))
            if churn.rate:
                result.churn = churned(start, end, changes, changes)
                result.renders_per_change = result.churn.renders_per_change
            results.append(result)
    finally:
        browser.close()
    return results, idle, visible


def row_fetches(browser: Chromium, sessions: list[str]) -> int:
    """The row fetches (``/row``) the tabs made so far: how a product before rows were pushed as HTML updated a row."""
    return sum(int(browser.evaluate(session, ROW_FETCHES)) for session in sessions)


def render_times(port: int, path: str, *, renders: int, headers: dict[str, str] | None = None) -> list[float]:
    conn = apibench.Conn(port)
    if headers:
        conn.prefix += "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode()
    times = []
    try:
        for i in range(renders + 3):
            start = time.perf_counter()
            code, body = conn.request("GET", path)
            elapsed = time.perf_counter() - start
            if code != 200 or b"dr-" not in body:
                raise RuntimeError(f"GET {path}: {code} {body[:300]!r}")
            if i >= 3:
                times.append(elapsed)
    finally:
        conn.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=1000, help="Darkrooms in the cluster (default 1,000)")
    parser.add_argument("--tabs", type=int, default=20, help="open tabs on the Darkrooms list (default 20)")
    parser.add_argument("--streams", type=int, default=None, help="raw SSE streams for server delivery (default: --tabs; 0: skip)")
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="tabs",
        help="tabs: one window's tabs, one visible (as a browser has them; default); windows: each in a window, all visible",
    )
    parser.add_argument("--changes", type=int, default=100, help="status changes per run (default 100)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the table shows their median (default 3)")
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between changes (default 0.1)")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds the open tabs idle first, for idle CPU (default 10; 0: skip)")
    parser.add_argument("--renders", type=int, default=30, help="timed GETs per page variant (default 30; 0: skip)")
    parser.add_argument("--product", type=Path, default=ROOT, help="the checkout whose product is served (default: this one)")
    parser.add_argument(
        "--churn", type=float, default=0.0, help="status changes per second to random Darkrooms of all --size during each run (default 0)"
    )
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"chromium not found at {CHROMIUM} (apt-get install -y chromium, or set CHROMIUM)", file=sys.stderr)
        return 2
    streams = args.tabs if args.streams is None else args.streams

    with tempfile.TemporaryDirectory(prefix="ui-bench-") as tmp:
        data_dir = Path(tmp)
        log(f"starting devcluster and {args.size:,} Darkrooms ...")
        cluster = apibench.Cluster(data_dir)
        server = None
        try:
            cluster.install()
            cluster.populate(0, args.size)
            # Each tab on a host name of its own (bench/ui_browser.py): the product serves them (DNS rebinding protection).
            os.environ["DARKROOM_API_ALLOWED_HOSTS"] = ",".join([HOST, *tab_hosts(args.tabs)])
            server = apibench.Gunicorn(
                "product", "backend.server.wsgi:app", kubeconfig=cluster.kubeconfig, data_dir=data_dir, root=args.product
            )
            servers = {server.proc.pid: "product (gunicorn)", cluster.proc.pid: "devcluster"}
            churn = Churn(cluster.port, args.size, args.churn)
            delivery = []
            if streams:
                delivery = stream_runs(
                    server.port,
                    cluster,
                    servers,
                    churn,
                    streams=streams,
                    changes=args.changes,
                    runs=args.runs,
                    gap_s=args.gap,
                    path=f"/ui/live/darkrooms?{stream_query(server.port)}",
                )
            runs, idle, visible = live_runs(
                server.port,
                cluster,
                servers,
                churn,
                tabs=args.tabs,
                layout=args.layout,
                changes=args.changes,
                runs=args.runs,
                gap_s=args.gap,
                idle_s=args.idle,
            )
            renders = render_variants(server.port, args.size, args.renders) if args.renders else []
        finally:
            if server is not None:
                stop_process(server.proc)
            stop_process(cluster.proc)

    verdict = report(args, streams, delivery, runs, idle, visible)
    if renders:
        print()
        print(f"| Darkrooms page render ({args.size:,} objects) | median | p95 |")
        print("|---|---:|---:|")
        for label, times in renders:
            print(f"| {label} | {statistics.median(times) * 1000:.1f} ms | {nearest_rank(times, 95) * 1000:.1f} ms |")
    return 0 if verdict == "PASS" else 1


def stream_query(port: int) -> str:
    """The query of the live stream a tab of the first page opens (read from the page: what the product's tabs ask for)."""
    with urllib.request.urlopen(f"http://{HOST}:{port}/?namespace={apibench.NAMESPACE}", timeout=30) as response:
        page = response.read().decode()
    found = re.search(r'sse-connect="/ui/live/darkrooms\?([^"]*)"', page)
    if found is None:
        raise RuntimeError("the Darkrooms page has no live stream")
    query = html.unescape(found.group(1))
    return "&".join(part for part in query.split("&") if not part.startswith("lastEventId="))


def render_variants(port: int, size: int, renders: int) -> list[tuple[str, list[float]]]:
    log("timing page renders ...")
    pages = size // 50 + (1 if size % 50 else 0)
    # A name prefix that matches the last ~10% of the Darkrooms (q=dr-009 at 1,000) and never nothing.
    prefix = f"dr-{size * 9 // 10:05}"[:-2]
    ns = apibench.NAMESPACE
    variants = [
        ("first page (50 rows)", f"/?namespace={ns}", None),
        (f"last page ({pages})", f"/?namespace={ns}&page={pages}", None),
        (f"name filter q={prefix}", f"/?namespace={ns}&q={prefix}", None),
        ("sorted by age, descending", f"/?namespace={ns}&sort=-age", None),
        ("htmx list fragment", f"/?namespace={ns}", {"HX-Request": "true", "HX-Target": "darkroom-list"}),
        ("all namespaces", "/", None),
    ]
    return [(label, sorted(render_times(port, path, renders=renders, headers=headers))) for label, path, headers in variants]


def report(args: argparse.Namespace, streams: int, delivery: list[Run], runs: list[Run], idle: dict[str, float], visible: int) -> str:
    """Print the tables (stdout) and each run (stderr); the verdict."""
    worst = statistics.median(r.worst_tab_p99 for r in runs)
    per_change = statistics.median(r.renders_per_change for r in runs)
    missing = sum(r.missing for r in runs)
    verdict = "PASS" if worst <= TARGET_P99_S and per_change <= TARGET_RENDERS and not missing else "MISS"
    product = "this checkout" if args.product == ROOT else str(args.product)
    print(
        f"UI benchmark — {product} · {args.size:,} Darkrooms · {args.tabs} {args.layout} ({visible} visible)"
        f" · {args.changes} changes x {args.runs} runs"
        f" {args.gap:g} s apart (median) · nproc {os.cpu_count()} · Python {platform.python_version()} · load {os.getloadavg()[0]:.2f}"
    )
    print()
    print("| status change → | renders / change | row fetches / change | p50 | p99 (all) | worst tab's / stream's p99 | missed | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    rows = [(f"frame read on each of {streams} raw SSE streams (server delivery, no browser)", delivery, "")]
    target = f"1 render, p99 ≤ {TARGET_P99_S * 1000:.0f} ms: {verdict}"
    rows.append((f"row updated in each of {args.tabs} {args.layout}, {visible} visible (DOM)", runs, target))
    for label, measured, target in rows:
        if not measured:
            continue
        print(
            f"| {label} | {statistics.median(r.renders_per_change for r in measured):.2f}"
            f" | {statistics.median(r.fetches_per_change for r in measured):.2f}"
            f" | {statistics.median(nearest_rank(r.latencies, 50) for r in measured) * 1000:.0f} ms"
            f" | {statistics.median(nearest_rank(r.latencies, 99) for r in measured) * 1000:.0f} ms"
            f" | {statistics.median(r.worst_tab_p99 for r in measured) * 1000:.0f} ms | {sum(r.missing for r in measured)} | {target} |"
        )
    print()
    print(f"| CPU by process kind | per change, {streams} raw streams | per change, {args.tabs} tabs", end="")
    print(f" | per change and tab | idle, {args.tabs} tabs open |")
    print("|---|---:|---:|---:|---:|")
    kinds = sorted({kind for r in (*delivery, *runs) for kind in r.cpu_ms} | set(idle))
    for kind in kinds:
        raw = f"{statistics.median(r.cpu_ms.get(kind, 0.0) for r in delivery):.1f} ms" if delivery else ""
        tabs = statistics.median(r.cpu_ms.get(kind, 0.0) for r in runs)
        print(f"| {kind} | {raw} | {tabs:.1f} ms | {tabs / args.tabs:.2f} ms | {idle.get(kind, 0.0):.1f}% |")
    if args.churn:
        churn_tables(args, streams, delivery, runs)
    for label, measured in (("server delivery", delivery), ("tabs", runs)):
        for number, run in enumerate(measured, 1):
            log(
                f"{label} run {number}: renders/change {run.renders_per_change:.2f}, p50 {nearest_rank(run.latencies, 50) * 1000:.0f} ms,"
                f" p99 {nearest_rank(run.latencies, 99) * 1000:.0f} ms, worst p99 {run.worst_tab_p99 * 1000:.0f} ms, missed {run.missing},"
                f" CPU ms/change {', '.join(f'{k} {v:.1f}' for k, v in run.cpu_ms.items())}"
                + (
                    f"; churn {run.churn.changes} in {run.churn.seconds:.1f} s ({run.churn.shown} of shown rows),"
                    f" renders/change {run.churn.renders_per_change:.2f}, per unshown change {run.churn.unshown_renders:.2f},"
                    f" modifications published {run.churn.published:.0f}"
                    if run.churn
                    else ""
                )
            )
    return verdict


def churn_tables(args: argparse.Namespace, streams: int, delivery: list[Run], runs: list[Run]) -> None:
    """The churn figures (median over the runs) and each tab's change → DOM p50 / p99 (all runs' changes)."""
    print()
    print(
        f"| under churn: {args.churn:g} status changes/s over all {args.size:,} | churn achieved | changes published"
        " | renders / change (any) | renders / change of a row no tab shows | product CPU | chromium CPU | devcluster CPU |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, measured in ((f"{streams} raw SSE streams", delivery), (f"{args.tabs} {args.layout}", runs)):
        churns = [r.churn for r in measured if r.churn is not None]
        if not churns:
            continue
        rate = statistics.median(c.rate for c in churns)
        behind = " (writer behind)" if rate < 0.95 * args.churn else ""

        def cpu(prefix: str, churns: list[Churned] = churns) -> str:
            return f"{statistics.median(sum(v for k, v in c.cpu_pct.items() if k.startswith(prefix)) for c in churns):.0f}%"

        print(
            f"| {label} | {rate:.0f}/s{behind} | {statistics.median(c.published / c.seconds for c in churns):.0f}/s"
            f" | {statistics.median(c.renders_per_change for c in churns):.2f}"
            f" | {statistics.median(c.unshown_renders for c in churns):.2f} | {cpu('product')} | {cpu('chromium')} | {cpu('devcluster')} |"
        )
    print()
    print(f"| tab ({len(runs)} runs x {args.changes} changes of shown rows) | p50 | p99 |")
    print("|---|---:|---:|")
    for tab in range(len(runs[0].per_tab) if runs else 0):
        pooled = sorted(x for r in runs for x in r.per_tab[tab])
        print(f"| {tab + 1} | {nearest_rank(pooled, 50) * 1000:.0f} ms | {nearest_rank(pooled, 99) * 1000:.0f} ms |")


if __name__ == "__main__":
    sys.exit(main())
