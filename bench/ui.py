"""Benchmark the dashboard: status change in the cluster → DOM update in the browser, and page render time.

Never run by the test suite; run it with::

    .venv/bin/python bench/ui.py             # 1,000 Darkrooms, 50 changes, 30 renders per page (~1 min)
    .venv/bin/python bench/ui.py --changes 20 --renders 10 --size 200

Method
------
* One fresh ``python -m devcluster serve`` subprocess with the CRDs and ``--size`` Darkrooms (each
  with a status) in namespace ``bench``, written straight through the API server (bench/api.py's
  helpers). No reconciler: the benchmark writes the status itself, as the reconciler would.
* The product under gunicorn with its production configuration (``backend/gunicorn_conf.py``, one
  worker, gthread), exactly as ``make api`` runs it.
* Live latency: headless chromium (/usr/bin/chromium, Playwright) opens ``/?namespace=bench``, waits
  for the live indicator to say Live, and installs a MutationObserver that timestamps
  (``performance.timeOrigin + performance.now()``, the same wall clock as the Python side) the
  moment the first row's domains cell shows a marker. Then ``--changes`` times: note the wall
  clock, JSON-merge-patch the status subresource of that Darkroom with a new domain marker, wait
  until the page has shown it, pause ``--gap`` seconds. Latency = DOM time minus time before the PATCH:
  the API server write, the watch event to the informer, the SSE frame, the browser's row fetch
  (``/ui/darkrooms/<ns>/<name>/row``), the swap. Target (issue #6): p95 ≤ 1 s.
* Render time: ``GET`` of the Darkrooms page over one keep-alive connection, sequentially,
  ``--renders`` times per variant after 3 discarded warm-ups; median and p95 of the round trip
  (loopback: the server's time plus well under a millisecond). Variants: the first page (50 of
  ``--size`` rows, full layout), the last page, a name filter, and the htmx fragment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api as apibench
from common import log, nearest_rank, stop_process

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TARGET_P95_S = 1.0
FIRST = "dr-00000"

OBSERVER = """
(name) => {
  window.__seen = {};
  const key = 'Darkroom/bench/' + name;
  const check = () => {
    const cell = document.querySelector('[data-live-key="' + key + '"] .domains');
    const text = cell ? cell.textContent : '';
    const match = text.match(/marker-(\\d+)/);
    if (match && !(match[1] in window.__seen)) window.__seen[match[1]] = performance.timeOrigin + performance.now();
  };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


def patch_status(port: int, name: str, marker: int) -> None:
    body = json.dumps({"status": {"domains": [f"marker-{marker}.example.com", f"cdn.{name}.example.com"]}}).encode()
    request = urllib.request.Request(
        f"http://{apibench.HOST}:{port}{apibench.DARKROOMS_PATH}/{name}/status",
        data=body,
        method="PATCH",
        headers={"Content-Type": "application/merge-patch+json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def live_latencies(url: str, cluster: apibench.Cluster, *, changes: int, gap_s: float) -> list[float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        page = browser.new_page()
        page.goto(f"{url}/?namespace={apibench.NAMESPACE}")
        page.wait_for_selector("#live-indicator[data-state=live]", timeout=30_000)
        page.evaluate(OBSERVER, FIRST)
        latencies = []
        for n in range(changes):
            before = time.time() * 1000.0
            patch_status(cluster.port, FIRST, n)
            page.wait_for_function(f"() => '{n}' in window.__seen", timeout=30_000)
            seen = page.evaluate(f"window.__seen['{n}']")
            latencies.append((seen - before) / 1000.0)
            time.sleep(gap_s)
        browser.close()
    return latencies


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
            if code != 200 or b"data-live-key" not in body:
                raise RuntimeError(f"GET {path}: {code} {body[:300]!r}")
            if i >= 3:
                times.append(elapsed)
    finally:
        conn.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=1000, help="Darkrooms in the cluster (default 1,000)")
    parser.add_argument("--changes", type=int, default=50, help="status changes to time (default 50)")
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between changes (default 0.1)")
    parser.add_argument("--renders", type=int, default=30, help="timed GETs per page variant (default 30)")
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"chromium not found at {CHROMIUM} (apt-get install -y chromium, or set CHROMIUM)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="ui-bench-") as tmp:
        data_dir = Path(tmp)
        log(f"starting devcluster and {args.size:,} Darkrooms ...")
        cluster = apibench.Cluster(data_dir)
        server = None
        try:
            cluster.install()
            cluster.populate(0, args.size)
            server = apibench.Gunicorn("product", "backend.wsgi:app", kubeconfig=cluster.kubeconfig, data_dir=data_dir)
            url = f"http://{apibench.HOST}:{server.port}"
            log(f"timing {args.changes} live changes ...")
            latencies = sorted(live_latencies(url, cluster, changes=args.changes, gap_s=args.gap))
            log("timing page renders ...")
            pages = args.size // 50 + (1 if args.size % 50 else 0)
            # A name prefix that matches the last ~10% of the Darkrooms (q=dr-009 at 1,000) and never nothing.
            prefix = f"dr-{args.size * 9 // 10:05}"[:-2]
            variants = [
                ("first page (50 rows)", f"/?namespace={apibench.NAMESPACE}", None),
                (f"last page ({pages})", f"/?namespace={apibench.NAMESPACE}&page={pages}", None),
                (f"name filter q={prefix}", f"/?namespace={apibench.NAMESPACE}&q={prefix}", None),
                ("htmx list fragment", f"/?namespace={apibench.NAMESPACE}", {"HX-Request": "true", "HX-Target": "darkroom-list"}),
                ("all namespaces", "/", None),
            ]
            renders = [
                (label, sorted(render_times(server.port, path, renders=args.renders, headers=headers))) for label, path, headers in variants
            ]
        finally:
            if server is not None:
                stop_process(server.proc)
            stop_process(cluster.proc)

    p50, p95 = nearest_rank(latencies, 50), nearest_rank(latencies, 95)
    verdict = "PASS" if p95 <= TARGET_P95_S else "MISS"
    load = os.getloadavg()[0]
    print(f"UI benchmark — {args.size:,} Darkrooms · nproc {os.cpu_count()} · Python {platform.python_version()} · load {load:.2f}")
    print()
    print("| status change → DOM | changes | p50 | p95 | max | target |")
    print("|---|---:|---:|---:|---:|---|")
    print(
        f"| PATCH status → row updated | {len(latencies)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | {latencies[-1] * 1000:.0f} ms"
        f" | p95 ≤ {TARGET_P95_S:.0f} s: {verdict} |"
    )
    print()
    print(f"| Darkrooms page render ({args.size:,} objects) | median | p95 |")
    print("|---|---:|---:|")
    for label, times in renders:
        print(f"| {label} | {statistics.median(times) * 1000:.1f} ms | {nearest_rank(times, 95) * 1000:.1f} ms |")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
