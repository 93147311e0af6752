"""Benchmark the resource tree live: a Darkroom with 10 pods, one pod's status changed → the tree a tab shows changed.

Never run by the test suite; run it with::

    .venv/bin/python bench/tree.py                         # both clusters, 3 runs x 40 changes each (~3 min)
    .venv/bin/python bench/tree.py --server dev            # devcluster only
    .venv/bin/python bench/tree.py --runs 1 --changes 20   # sanity run

Method
------
* Per cluster (``--server dev|real|both``, as ``bench/reconcile.py``; default both when realcluster can be built), a
  fresh API server (``servers.py``): devcluster, or the real control plane (etcd, kube-apiserver, controller manager,
  scheduler and the simulated node). The product's CRDs, namespace ``bench``, one Darkroom ``web`` and — as the
  reconciler makes them, and as the tree tests do without it — its ConfigMap, Service, Ingress and Deployment
  (``--pods`` replicas, default 10; the pod template labelled ``app.kubernetes.io/managed-by``, so the API caches the
  Pods), each controlled by the Darkroom. The cluster makes the rest: the ReplicaSet, the 10 Pods (devcluster's simulation; on the real
  control plane the ReplicaSet controller, the scheduler and the simulated node), the Service's EndpointSlice. The
  benchmark waits until they are Running and Ready.
* The product under gunicorn with its production configuration (``bench/api.py``'s ``Gunicorn``: one worker, the ASGI
  front), reading the server's kubeconfig. It waits until the detail page's tree shows the 10 Pods Ready.
* The client is what a browser tab of the detail page does, without the browser: it opens the page's one live stream
  (``GET /ui/live/darkroom/bench/web``, a raw socket read by a thread of its own: each ``event:`` line timestamped as it
  is read) and, on every ``event: children``, fetches the children region as htmx does (``GET /ui/darkrooms/bench/web``
  with ``HX-Request`` and ``HX-Target: darkroom-children``: the tree's HTML).
* A change is what a kubelet writes when a container restarts: a strategic merge patch of the pod's ``status``
  subresource raising its container's ``restartCount`` by one (round robin over the 10 Pods). Neither simulated node
  undoes it, and no controller answers it with a write of its own (a Ready flip would make the EndpointSlice and
  ReplicaSet controllers write too, and the simulated node would flip it back). The timings start when the PATCH has
  returned (its own round trip is reported apart); a frame read before that counts as 0 ms:

  - *frame*: the first ``event: children`` read on the stream after the PATCH was sent;
  - *tree*: the end of the first region fetch, made on such a frame, whose HTML shows the Pod's new restart count
    (``data-restarts`` of its node) — what the tab shows. Target: p99 ≤ 200 ms.

  ``--warmup`` changes are discarded first; then ``--runs`` runs of ``--changes`` changes, ``--gap`` seconds apart
  (each change measured before the next is sent). The table pools every sample of the runs (median, p99 and max of
  them all) and gives the median over the runs of each run's p99 as well. The region fetch alone (its round trip:
  mostly the render of a 10-Pod tree) and the product's CPU per change (its gunicorn tree, from /proc) are shown too.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api import Gunicorn, tree_cpu_seconds
from common import HOST, Conn, Endpoint, exit_on_sigterm, install_crds, log, machine_summary, nearest_rank, stop_process, wait_until
from servers import choose_servers, make_server, realcluster_version

from kinds import darkrooms as darkroom_kind
from tests.clusters import ClusterProcess
from tests.sseframes import FrameSplitter

NAMESPACE = "bench"
NAME = "web"
TARGET_P99_S = 0.200
MANAGED = {"app.kubernetes.io/managed-by": "darkroom-operator"}
POD_LABELS = {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": NAME}
DARKROOMS_PATH = f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{NAMESPACE}/darkrooms"
PODS_PATH = f"/api/v1/namespaces/{NAMESPACE}/pods"
PAGE = f"/ui/darkrooms/{NAMESPACE}/{NAME}"
STREAM = f"/ui/live/darkroom/{NAMESPACE}/{NAME}"
REGION_HEADERS = {"HX-Request": "true", "HX-Target": "darkroom-children"}
STRATEGIC = "application/strategic-merge-patch+json"
CONTAINER = "darkroom"


class BenchConn(Conn):
    USER_AGENT = "tree-bench/1"
    RECV_BYTES = 1 << 20


# -- the cluster's objects ----------------------------------------------------------------------------------------------


def controlled_by(obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj["metadata"]
    return [{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"], "controller": True}]


def create_darkroom(conn: Conn, pods: int) -> None:
    """The Darkroom and, as the reconciler makes them, its Deployment (``pods`` replicas), Service, ConfigMap and Ingress."""
    spec = {"replicas": pods, "version": "v0.1.0", "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": ["images"]}  # fmt: skip
    body = {"apiVersion": darkroom_kind.GROUP_VERSION, "kind": "Darkroom", "metadata": {"name": NAME}, "spec": spec}
    darkroom = conn.expect(201, "POST", DARKROOMS_PATH, body)
    container = {"name": CONTAINER, "image": "ghcr.io/example/darkroom:v0.1.0", "ports": [{"containerPort": 3000}]}
    template = {"metadata": {"labels": {**MANAGED, **POD_LABELS}}, "spec": {"containers": [container]}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": NAME, "labels": {**MANAGED, **POD_LABELS}, "ownerReferences": controlled_by(darkroom)},
                  "spec": {"replicas": pods, "selector": {"matchLabels": POD_LABELS}, "template": template}}  # fmt: skip
    conn.expect(201, "POST", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", deployment)
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": NAME, "labels": {**MANAGED, **POD_LABELS}, "ownerReferences": controlled_by(darkroom)},
               "spec": {"selector": POD_LABELS, "ports": [{"port": 80, "targetPort": 3000}]}}  # fmt: skip
    conn.expect(201, "POST", f"/api/v1/namespaces/{NAMESPACE}/services", service)
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"BASE_URL": "https://example.com/images"},
                  "metadata": {"name": NAME, "labels": {**MANAGED, **POD_LABELS}, "ownerReferences": controlled_by(darkroom)}}  # fmt: skip
    conn.expect(201, "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", config_map)
    backend = {"service": {"name": NAME, "port": {"number": 80}}}
    rule = {"host": "images.web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "spec": {"rules": [rule]},
               "metadata": {"name": NAME, "labels": {**MANAGED, **POD_LABELS}, "ownerReferences": controlled_by(darkroom)}}  # fmt: skip
    conn.expect(201, "POST", f"/apis/networking.k8s.io/v1/namespaces/{NAMESPACE}/ingresses", ingress)


def ready_pods(conn: Conn) -> list[str]:
    """The names of the Darkroom's Pods that are Running and Ready."""
    selector = ",".join(f"{k}={v}" for k, v in POD_LABELS.items())
    items = conn.expect(200, "GET", f"{PODS_PATH}?labelSelector={selector}")["items"]

    def ready(pod: dict[str, Any]) -> bool:
        conditions = (pod.get("status") or {}).get("conditions") or ()
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    return sorted(p["metadata"]["name"] for p in items if ready(p) and not p["metadata"].get("deletionTimestamp"))


def restart_count(conn: Conn, pod: str) -> int:
    statuses = (conn.expect(200, "GET", f"{PODS_PATH}/{pod}").get("status") or {}).get("containerStatuses") or ()
    return int(next((s.get("restartCount") or 0 for s in statuses if s.get("name") == CONTAINER), 0))


def bump_restarts(conn: Conn, pod: str, count: int) -> None:
    """What a kubelet writes when the container restarted: its restartCount, by the container's name (merge key)."""
    body = json.dumps({"status": {"containerStatuses": [{"name": CONTAINER, "restartCount": count}]}}).encode()
    status, data = conn.request("PATCH", f"{PODS_PATH}/{pod}/status", body, content_type=STRATEGIC)
    if status != 200:
        raise RuntimeError(f"PATCH {pod}/status: {status} {data[:300]!r}")


# -- the tab --------------------------------------------------------------------------------------------------------------


class Stream:
    """The detail page's live stream on a raw socket, read by a thread: (monotonic time, event name) of every event."""

    def __init__(self, port: int) -> None:
        self.frames: list[tuple[float, str]] = []
        self.ready = threading.Event()
        self.arrived = threading.Condition()
        self._sock = socket.create_connection((HOST, port), timeout=300)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request = f"GET {STREAM} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n"
        self._sock.sendall(request.encode())
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self.ready.wait(30):
            raise RuntimeError(f"no `ready` on {STREAM} within 30 s")

    def _read(self) -> None:
        frames = FrameSplitter(http_head=True)
        with contextlib.suppress(OSError, ValueError):
            while chunk := self._sock.recv(1 << 16):
                now = time.monotonic()
                for frame in frames.feed(chunk):
                    if frame.event is None:
                        continue
                    with self.arrived:
                        self.frames.append((now, frame.event))
                        self.arrived.notify_all()
                    if frame.event == "ready":
                        self.ready.set()

    def next_children(self, after: float, seen: int, timeout_s: float) -> tuple[float, int] | None:
        """The time and index of the first ``children`` frame read at or after ``after`` with index ≥ ``seen``."""
        deadline = time.monotonic() + timeout_s
        with self.arrived:
            while True:
                for i in range(seen, len(self.frames)):
                    at, name = self.frames[i]
                    if name == "children" and at >= after:
                        return at, i
                    if name == "reset":
                        raise RuntimeError("the stream said reset (it fell behind): no sample can be trusted")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.arrived.wait(remaining)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(5)


def region_conn(port: int) -> BenchConn:
    conn = BenchConn(port)
    conn.prefix += "".join(f"{k}: {v}\r\n" for k, v in REGION_HEADERS.items()).encode()
    return conn


def fetch_region(conn: Conn) -> str:
    status, body = conn.request("GET", PAGE)
    if status != 200:
        raise RuntimeError(f"GET {PAGE} (children region): {status} {body[:300]!r}")
    return body.decode()


def shows_restarts(html: str, pod: str, count: int) -> bool:
    node = re.search(rf'<li class="tree-node" data-kind="Pod" data-name="{re.escape(pod)}".*?</div>', html, re.S)
    return node is not None and f'data-restarts="{count}"' in node.group(0)


def ready_in_tree(html: str) -> int:
    return len(re.findall(r'data-kind="Pod" data-name="[^"]+" data-state="ready"', html))


# -- measuring ------------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    frame: list[float] = field(default_factory=list)  # seconds after the PATCH returned
    tree: list[float] = field(default_factory=list)
    write: list[float] = field(default_factory=list)  # the PATCH's round trip
    fetches: int = 0  # region fetches made (one per children frame read, as a tab)
    early: int = 0  # frames read before the PATCH returned
    cpu_ms: float = 0.0  # the product's CPU per change


def one_change(api: Conn, region: Conn, stream: Stream, pod: str, count: int, run: Run) -> None:
    seen = len(stream.frames)
    sent = time.monotonic()
    bump_restarts(api, pod, count)
    returned = time.monotonic()
    found = stream.next_children(sent, seen, 10.0)
    if found is None:
        raise RuntimeError(f"no children frame within 10 s of {pod}'s change")
    first, index = found
    run.frame.append(max(0.0, first - returned))
    run.early += first < returned
    run.write.append(returned - sent)
    while True:  # the tab: a region fetch per children frame, until the tree shows the change
        html = fetch_region(region)
        run.fetches += 1
        if shows_restarts(html, pod, count):
            run.tree.append(max(0.0, time.monotonic() - returned))
            return
        found = stream.next_children(sent, index + 1, 10.0)
        if found is None:
            raise RuntimeError(f"the tree did not show {pod}'s restart count {count} within 10 s of its last children frame")
        index = found[1]


def measure(api: Conn, port: int, product_pid: int, pods: list[str], *, changes: int, gap_s: float, counts: dict[str, int]) -> Run:
    run = Run()
    stream, region = Stream(port), region_conn(port)
    try:
        cpu_before = tree_cpu_seconds(product_pid)
        for n in range(changes):
            pod = pods[n % len(pods)]
            counts[pod] += 1
            one_change(api, region, stream, pod, counts[pod], run)
            time.sleep(gap_s)
        run.cpu_ms = (tree_cpu_seconds(product_pid) - cpu_before) * 1000.0 / changes
    finally:
        region.close()
        stream.close()
    return run


def region_times(port: int, count: int) -> list[float]:
    conn = region_conn(port)
    try:
        fetch_region(conn)
        times = []
        for _ in range(count):
            started = time.monotonic()
            fetch_region(conn)
            times.append(time.monotonic() - started)
        return sorted(times)
    finally:
        conn.close()


@dataclass
class Result:
    kind: str
    runs: list[Run]
    region: list[float]


def bench_server(kind: str, work: Path, args: argparse.Namespace) -> Result:
    server: ClusterProcess = make_server(kind, work, ready_delay_s=args.ready_delay)
    product: Gunicorn | None = None
    log(f"[{kind}] starting the API server ...")
    server.start()
    try:
        endpoint: Endpoint = server.endpoint
        api = BenchConn(endpoint)
        install_crds(api, namespace=NAMESPACE, probe_path=DARKROOMS_PATH)
        create_darkroom(api, args.pods)
        pods = wait_until(lambda: (found := ready_pods(api)) and len(found) == args.pods and found, 120, f"{args.pods} ready pods")
        log(f"[{kind}] {len(pods)} pods Running and Ready; starting the product ...")
        product = Gunicorn("product", "backend.server.wsgi:app", kubeconfig=server.kubeconfig, data_dir=work)
        region = region_conn(product.port)
        try:
            wait_until(lambda: ready_in_tree(fetch_region(region)) == args.pods, 60, "the tree to show every pod ready")
        finally:
            region.close()
        counts = {pod: restart_count(api, pod) for pod in pods}
        if args.warmup:
            log(f"[{kind}] {args.warmup} warm-up changes ...")
            measure(api, product.port, product.proc.pid, pods, changes=args.warmup, gap_s=args.gap, counts=counts)
        runs = []
        for number in range(args.runs):
            log(f"[{kind}] run {number + 1}/{args.runs}: {args.changes} changes ...")
            run = measure(api, product.port, product.proc.pid, pods, changes=args.changes, gap_s=args.gap, counts=counts)
            log(
                f"[{kind}] run {number + 1}: frame p50 {ms(nearest_rank(sorted(run.frame), 50))}, tree p50"
                f" {ms(nearest_rank(sorted(run.tree), 50))} p99 {ms(nearest_rank(sorted(run.tree), 99))}"
                f" max {ms(max(run.tree))}, {run.fetches / args.changes:.2f} fetches/change, product CPU {run.cpu_ms:.1f} ms/change"
            )
            runs.append(run)
        region_alone = region_times(product.port, args.renders)
        final = region_conn(product.port)
        try:  # the patches changed the restart counts only: every Pod is still Ready in the tree
            if ready_in_tree(fetch_region(final)) != args.pods:
                raise RuntimeError("after the changes the tree shows fewer ready Pods: a patch changed more than restartCount")
        finally:
            final.close()
        api.close()
        return Result(kind, runs, region_alone)
    finally:
        if product is not None:
            stop_process(product.proc)
        if args.keep:
            log(f"[{kind}] kept: {work}")
        server.close()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def report(results: list[Result], args: argparse.Namespace, header: str, command: str) -> bool:
    """Print the table; whether every cluster met the target."""
    print(header)
    print()
    print(f"command: {command}")
    print()
    print("| status change (PATCH returned) → | cluster | samples | median | p99 | max | median of runs' p99 | target |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    verdicts = []
    for result in results:
        frame = sorted(x for run in result.runs for x in run.frame)
        tree = sorted(x for run in result.runs for x in run.tree)
        p99 = nearest_rank(tree, 99)
        passed = p99 <= TARGET_P99_S
        verdicts.append(passed)
        rows = [
            ("`children` frame read on the page's stream", frame, [sorted(r.frame) for r in result.runs], ""),
            (
                "tree region fetched on a frame shows the new restart count (what the tab shows)",
                tree,
                [sorted(r.tree) for r in result.runs],
                f"p99 ≤ {TARGET_P99_S * 1000:.0f} ms: {'PASS' if passed else 'MISS'}",
            ),
        ]
        for label, values, per_run, target in rows:
            runs_p99 = statistics.median(nearest_rank(v, 99) for v in per_run)
            print(
                f"| {label} | {result.kind} | {len(values)} | {ms(nearest_rank(values, 50))} | {ms(nearest_rank(values, 99))}"
                f" | {ms(values[-1])} | {ms(runs_p99)} | {target} |"
            )
    print()
    print("| per cluster | cluster | value |")
    print("|---|---|---:|")
    for result in results:
        writes = sorted(x for run in result.runs for x in run.write)
        fetches = sum(r.fetches for r in result.runs) / sum(len(r.tree) for r in result.runs)
        early = sum(r.early for r in result.runs)
        print(f"| status PATCH round trip, median | {result.kind} | {ms(nearest_rank(writes, 50))} |")
        print(f"| children region fetch alone ({args.pods} Pods), median / p95 | {result.kind} |"
              f" {ms(nearest_rank(result.region, 50))} / {ms(nearest_rank(result.region, 95))} |")  # fmt: skip
        print(f"| region fetches per change (one per children frame) | {result.kind} | {fetches:.2f} |")
        print(f"| frames read before the PATCH returned (counted as 0 ms) | {result.kind} | {early} |")
        print(f"| product CPU per change (median of runs) | {result.kind} | {statistics.median(r.cpu_ms for r in result.runs):.1f} ms |")
    return all(verdicts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--server", choices=["dev", "real", "both"], default=None, help="the API server(s) (default: both if usable)")
    parser.add_argument("--pods", type=int, default=10, help="the Darkroom's replicas (default 10)")
    parser.add_argument("--runs", type=int, default=3, help="runs per cluster (default 3)")
    parser.add_argument("--changes", type=int, default=40, help="status changes per run (default 40)")
    parser.add_argument("--warmup", type=int, default=5, help="discarded changes before the runs (default 5)")
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between changes (default 0.2)")
    parser.add_argument("--renders", type=int, default=30, help="timed region fetches without changes (default 30)")
    parser.add_argument("--ready-delay", type=float, default=0.2, help="seconds until a new pod is Ready (default 0.2)")
    parser.add_argument("--keep", action="store_true", help="keep the work directories (logs) afterwards")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    kinds, note = choose_servers(args.server)  # both: an error when realcluster cannot run
    if note:
        log(note)
    load_before = os.getloadavg()[0]
    base = Path(tempfile.mkdtemp(prefix="bench-tree-"))
    results = []
    try:
        for kind in kinds:
            results.append(bench_server(kind, base / kind, args))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    real = f"; real = kube-apiserver {realcluster_version()} + etcd (realcluster)" if "real" in kinds else ""
    header = (
        f"resource tree benchmark, {now}: a Darkroom with {args.pods} pods, {args.runs} runs x {args.changes} changes"
        f" {args.gap:g} s apart after {args.warmup} warm-up; {machine_summary()}, Python {platform.python_version()}{real};"
        f" load average at start {load_before:.2f}, at end {os.getloadavg()[0]:.2f}"
    )
    command = " ".join([".venv/bin/python bench/tree.py", *(sys.argv[1:] if argv is None else argv)])
    return 0 if report(results, args, header, command) else 1


if __name__ == "__main__":
    sys.exit(main())
