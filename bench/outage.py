"""How fast the reconciler converges after the API server goes away and comes back (without charging the outage to every key's retries).

Scenario, per run, on a fresh devcluster (a subprocess on a free port, Deployments ready 0.5 s after
each change): ``--count`` Darkrooms (default 5,000) are created at once (8 clients, about a second);
``--outage-after`` seconds later, while the reconciler is still working through them, the API server
is killed (``kill -9``: every acknowledged create survives) and restarted on the same port and data
dir ``--outage`` seconds later (default 5 s; devcluster's watch history does not survive, so every
informer relists). Measured from the moment the server answers
again until every Darkroom is converged: Ready=True with its generation observed (a full list every
0.25 s), and the reconcilers' per-key rate-limited retries (``workqueue_retries_total``) charged
during the run. The creation wave itself takes most of that time, outage or not, so the figure the
target (10 s) applies to is what the outage *adds*: the total with the cut minus the total of the
"no outage" row (the cut's own seconds included).

Two reconcilers in the same run, on identical scenarios: **ours** (the working tree) and the
**baseline**: the reconciler as it was before the connection backoff (``--baseline-ref``, default
``dc526a2``, checked out with ``git worktree`` into a temporary directory and run from there), which
charged every failed reconcile to the per-key limiter and the shared 10 qps / 100 burst bucket. A
third row, "no outage", times the same creation wave without a cut.

    .venv/bin/python bench/outage.py                  # 5,000 Darkrooms, 5 s outage, 1 run each
    .venv/bin/python bench/outage.py --count 500 --outage 2 --runs 1     # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, Conn, free_port, log, machine_summary, pythonpath, stop_process, wait_until

from kinds import darkrooms as darkroom_kind
from tests.clusters import DevclusterProcess

NAMESPACE = "bench"
DARKROOMS = f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/bench/darkrooms"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def install(server: DevclusterProcess) -> None:
    import yaml

    conn = Conn(server.port)
    try:
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            conn.expect(201, "POST", CRDS, yaml.safe_load(path.read_text()))
        conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        wait_until(lambda: conn.request("GET", DARKROOMS)[0] == 200, 30, "the CRDs")
    finally:
        conn.close()


def create(server: DevclusterProcess, count: int, clients: int = 8) -> None:
    def worker(indexes: range) -> None:
        conn = Conn(server.port)
        try:
            for i in indexes:
                body = {
                    "apiVersion": darkroom_kind.GROUP_VERSION,
                    "kind": "Darkroom",
                    "metadata": {"name": f"dr-{i:05}"},
                    "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/i"}, "subDomains": [f"d{i:05}"]},
                }
                status, data = conn.request("POST", DARKROOMS, json.dumps(body).encode())
                if status != 201:
                    raise RuntimeError(f"create dr-{i:05}: {status} {data[:200]!r}")
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(range(t, count, clients),)) for t in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def converged(server: DevclusterProcess, count: int) -> int:
    """How many Darkrooms are Ready with their generation observed (0 while the server is away)."""
    try:
        conn = Conn(server.port, timeout_s=10)
    except OSError:
        return 0
    try:
        status, data = conn.request("GET", DARKROOMS)
    except OSError:
        return 0
    finally:
        conn.close()
    if status != 200:
        return 0
    done = 0
    for item in json.loads(data)["items"]:
        st = item.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or ())
        done += ready and st.get("observedGeneration") == item["metadata"].get("generation")
    return done


class Reconciler:
    """``python -m darkroom_operator`` from ``source`` (the working tree, or a baseline checkout)."""

    def __init__(self, source: Path, server: DevclusterProcess, work: Path) -> None:
        self.source, self.server, self.work = source, server, work
        self.health = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DARKROOM_")}
        # PYTHONPATH comes before the editable install on sys.path: a baseline checkout runs its own code.
        env.update(PYTHONPATH=pythonpath(self.source), DARKROOM_OPERATOR_LOG_LEVEL="WARNING")
        argv = [sys.executable, "-m", "darkroom_operator", "--kubeconfig", str(self.server.kubeconfig), "--namespace", NAMESPACE]
        argv += ["--no-leader-election", "--health-port", str(self.health)]
        with (self.work / "operator.log").open("ab") as out:
            self.proc = subprocess.Popen(argv, cwd=self.source, env=env, stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: self.metric("workqueue_depth") is not None, 60, "the reconciler's /metrics")

    def metric(self, name: str) -> float | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/metrics", timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(f'{name}{{name="darkroom"}}'):
                return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


@dataclass
class Result:
    label: str
    converge_after_return_s: float
    total_s: float
    retries: float


def run(label: str, source: Path, opts: argparse.Namespace, *, outage: bool) -> Result:
    work = Path(tempfile.mkdtemp(prefix="bench-outage-"))
    server = DevclusterProcess(work / "data", ready_delay_s=0.5, log_level="WARNING")
    reconciler = Reconciler(source, server, work)
    try:
        server.start()
        install(server)
        reconciler.start()
        started = time.monotonic()
        create(server, opts.count)  # ~1 s: the reconciler has barely started on them
        returned = started
        if outage:
            time.sleep(opts.outage_after)  # mid-way through converging: reconciles that need writes fail
            server.kill()
            time.sleep(opts.outage)
            server.start()
            returned = time.monotonic()
        total = converged(server, opts.count)
        while total < opts.count:
            time.sleep(0.25)
            total = converged(server, opts.count)
        done = time.monotonic()
        retries = reconciler.metric("workqueue_retries_total") or 0.0
        return Result(label, done - returned, done - started, retries)
    finally:
        reconciler.stop()
        server.close()
        shutil.rmtree(work, ignore_errors=True)


def baseline_checkout(ref: str) -> Path:
    """The reconciler as of ``ref``, in a temporary git worktree (removed at exit by :func:`drop_checkout`)."""
    path = Path(tempfile.mkdtemp(prefix="bench-outage-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(path), ref], cwd=ROOT, check=True, capture_output=True)
    return path


def drop_checkout(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=5000, help="Darkrooms (default 5000)")
    parser.add_argument("--outage", type=float, default=5.0, help="seconds the API server is away (default 5)")
    parser.add_argument("--outage-after", type=float, default=10.0, help="seconds after the creates the cut comes (default 10)")
    parser.add_argument("--runs", type=int, default=1, help="runs per row; the table shows medians (default 1)")
    parser.add_argument("--baseline-ref", default="dc526a2", help="git ref of the reconciler without the connection backoff")
    opts = parser.parse_args(argv)
    log(machine_summary())
    baseline = baseline_checkout(opts.baseline_ref)
    rows: list[tuple[str, Path, bool]] = [
        ("ours, no outage", ROOT, False),
        ("ours", ROOT, True),
        (f"baseline ({opts.baseline_ref})", baseline, True),
    ]
    results: dict[str, list[Result]] = {}
    try:
        for _ in range(opts.runs):
            for label, source, outage in rows:
                log(f"{label}: {opts.count} Darkrooms" + (f", {opts.outage:g} s outage after {opts.outage_after:g} s" if outage else ""))
                result = run(label, source, opts, outage=outage)
                log(f"  converged {result.converge_after_return_s:.1f} s after the server returned; retries charged {result.retries:.0f}")
                results.setdefault(label, []).append(result)
    finally:
        drop_checkout(baseline)
    print(f"\nReconciler convergence after an API-server outage - {time.strftime('%Y-%m-%d')}")
    print(machine_summary())
    print(f"command: .venv/bin/python bench/outage.py --count {opts.count} --outage {opts.outage:g} --runs {opts.runs}\n")
    header = "| reconciler | outage | converged after the server returned (s) | total from the creates (s) | added by the outage (s) "
    print(header + "| per-key retries charged | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    calm = statistics.median(r.total_s for r in results[rows[0][0]])
    for label, _, outage in rows:
        runs = results[label]
        after = statistics.median(r.converge_after_return_s for r in runs)
        total = statistics.median(r.total_s for r in runs)
        retries = statistics.median(r.retries for r in runs)
        added = f"{total - calm:.1f}" if outage else ""
        target = ("PASS" if total - calm <= 10 else "MISS") + " (added <= 10 s)" if outage and label == "ours" else ""
        print(
            f"| {label} | {f'{opts.outage:g} s' if outage else 'none'} | {after:.1f} | {total:.1f} | {added} | {retries:,.0f} | {target} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
