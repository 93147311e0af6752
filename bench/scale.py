"""The API and the dashboard at many Darkrooms: start-up, memory and the latency of each read, as a markdown table.

Never run by the test suite; run it with::

    .venv/bin/python bench/scale.py                                   # 1,000 and 10,000 Darkrooms, both servers if realcluster builds
    .venv/bin/python bench/scale.py --counts 100000 --server dev      # 100,000 Darkrooms on devcluster
    .venv/bin/python bench/scale.py --counts 1000 --children --baseline /tmp/main   # with their children, against main's

Method
------
* One API server per ``--server`` kind (``dev``: devcluster; ``real``: realcluster's kube-apiserver + etcd;
  :mod:`servers`), with the product's CRDs and :data:`NAMESPACES` namespaces. Darkrooms are created straight on the
  cluster, not through the product, round-robin over the namespaces, each with labels, a WebFolder source, two
  subdomains and a realistic status (two domains, ready replicas, observed generation, a Ready condition) written
  through the status subresource (as ``bench/api.py``), by ``--writers`` processes of ``--threads`` threads, each
  thread with its own raw keep-alive connection. The counts are reached one after the other on the same cluster
  (1,000 first, then 9,000 more for 10,000, ...).
* The product as production runs it (``gunicorn -c backend/server/gunicorn_conf.py backend.server.wsgi:app``,
  :class:`Product`), in the local mode, with the cluster's admin kubeconfig and ``DARKROOM_API_LOG_LEVEL=WARNING``,
  started afresh for each count (and once with 0 Darkrooms, before any are created). "time until /readyz" is from
  the process start to the first ``/readyz`` 200 (polled every 20 ms; 200 once its informer caches have listed).
  "API RSS" is the gunicorn process tree's (master + worker) resident memory right after that; "bytes per cached
  Darkroom" is that RSS minus the same figure at 0 Darkrooms, divided by the count (the API exposes no cache memory
  metric, only ``darkroom_api_cache_objects``; the RSS difference also counts the allocator's slack and every
  structure the API keeps per object, such as the /watch bus and indexes).
* Reads, one at a time on one keep-alive connection (no concurrency: latency, not throughput), each ``--warmup``
  requests discarded then ``--requests`` measured; p50 and p99 (nearest rank, in ms) of the measured ones:
  ``GET /darkrooms?limit=50`` (checked: 50 items, ``total`` = the count), ``?namespace=<one>&limit=50`` (50 items of
  that namespace), ``/darkrooms/<ns>/<name>`` (a different object each time), ``?q=<a name>&limit=50`` (a different
  name each time; checked: the object is among the items), ``?labelSelector=team=team-3&limit=50`` (every seventh
  Darkroom; checked: ``total``, and every item of that team), the dashboard's first page ``GET /`` (checked: 50 rows),
  and that page sorted by each sortable column both ways (``/?sort=name``, ``/?sort=-name``, ... state, age;
  checked: name and namespace orders are sorted, state and age orders are those of ``GET /darkrooms?sort=`` of the
  same key).
* A create through the API (``POST /darkrooms`` of a WebFolder Darkroom with two sub-domains of its own; the API
  checks that no other Darkroom asks for them), ``--warmup`` + ``--requests`` of them one after the other, each
  deleted again (untimed) before the next: p50 and p99 of the POSTs. No target: a write, not a read.
* ``/watch`` delivery: one open SSE stream (``GET /watch?kind=Darkroom&namespace=<one>``), read on a thread of its
  own; ``--changes`` status writes (PUT of the status subresource, a new condition message each) to objects of that
  namespace, ``--change-gap`` seconds apart; each write's latency is from the write returning (the new
  resourceVersion known) to the ``event: darkroom`` frame carrying that resourceVersion being received. An event can
  come in before the write's response is read: such a delivery counts as 0 ms.
* ``--children``: each Darkroom also gets what the reconciler would make of it and the API caches: its Deployment,
  Service and Ingress, built by the reconciler's own builders (``darkroom_operator.darkroomchildren``, default
  settings) and controlled by it; the cluster's controllers then make a ReplicaSet, ``1 + i % 3`` Pods (devcluster's
  simulation; on the real control plane the ReplicaSet controller, the scheduler and the simulated node) and an
  EndpointSlice per Darkroom, with their Events. The product is started once every Pod exists and the Pods have been
  Running for a while (:func:`wait_for_pods`). "bytes per cached Darkroom" then counts a Darkroom with its children.
* ``--baseline DIR``: before the product, another checkout's (``git archive main | tar -x -C DIR``) is started the same
  way on the same cluster for its start-up and RSS (at 0 and at each count); the table shows both.
* ``--browser``: after the reads, a person's walk through the dashboard in chromium (:mod:`scale_browser`): first
  page, next page, a name filter, State sorted both ways, each checked, with its time and the bytes it received.
* Targets (the scale issue's): every read p99 <= 100 ms, a page of 50 p99 <= 50 ms; <= 2 KiB of API memory per
  cached Darkroom. Each figure is printed with PASS or MISS where a target applies.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import multiprocessing as mp
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from api import tree_cpu_seconds
from common import (
    HOST,
    ROOT,
    Conn,
    Endpoint,
    exit_on_sigterm,
    free_port,
    install_crds,
    join_processes,
    log,
    machine_summary,
    nearest_rank,
    pythonpath,
    ready_status,
    stop_process,
)
from darkroom_operator import darkroomchildren
from darkroom_operator.settings import OperatorSettings
from scale_browser import Step, browse
from servers import choose_servers, make_server, realcluster_version

from kinds import darkrooms as darkroom_kind
from kinds.names import MANAGED_BY_LABEL
from tests.clusters import ClusterProcess
from tests.sseframes import FrameSplitter

NAMESPACES = 50
PAGE = 50
TARGET_READ_P99_MS = 100.0
TARGET_PAGE_P99_MS = 50.0
TARGET_BYTES_PER_DARKROOM = 2048.0
SORT_KEYS = ("name", "namespace", "state", "age")
ROW = re.compile(r'sse-swap="Darkroom/([^/"]+)/([^"]+)"')
Check = Callable[[int, bytes], "str | None"]  # the k-th response's body → what is wrong with it, or None


class ScaleConn(Conn):
    USER_AGENT = "scale-bench/1"
    RECV_BYTES = 1 << 20


def namespace_of(i: int) -> str:
    return f"scale-{i % NAMESPACES:02}"


def name_of(i: int) -> str:
    return f"dr-{i:06}"


def collection(namespace: str) -> str:
    return f"/apis/{darkroom_kind.GROUP_VERSION}/namespaces/{namespace}/darkrooms"


def darkroom(i: int) -> dict[str, Any]:
    return {
        "apiVersion": darkroom_kind.GROUP_VERSION,
        "kind": "Darkroom",
        "metadata": {
            "name": name_of(i),
            "namespace": namespace_of(i),
            "labels": {"app.kubernetes.io/name": "darkroom", "team": f"team-{i % 7}"},
        },
        "spec": {
            "version": "v0.1.0",
            "replicas": 1 + i % 3,
            "source": {"type": "WebFolder", "baseUrl": f"https://example.com/images/{i}"},
            "subDomains": ["images", "cdn"],
        },
    }


def children(created: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, body) of the Deployment, Service and Ingress the reconciler would make of ``created``."""
    settings = OperatorSettings()
    namespace = created["metadata"]["namespace"]
    return [
        (f"/apis/apps/v1/namespaces/{namespace}/deployments", dict(darkroomchildren.deployment(created, settings))),
        (f"/api/v1/namespaces/{namespace}/services", dict(darkroomchildren.service(created, settings))),
        (f"/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses", dict(darkroomchildren.ingress(created, settings))),
    ]


def pods_of(count: int) -> int:
    """How many Pods the first ``count`` Darkrooms' Deployments ask for (``spec.replicas`` of :func:`darkroom`)."""
    return sum(1 + i % 3 for i in range(count))


def status(name: str, message: str = "all replicas serve") -> dict[str, Any]:
    return ready_status([f"images.{name}.example.com", f"cdn.{name}.example.com"], message=message)


# -- the cluster ----------------------------------------------------------------------------------


def prepare(server: ClusterProcess) -> None:
    """The CRDs and the :data:`NAMESPACES` namespaces."""
    conn = ScaleConn(server.endpoint)
    try:
        install_crds(conn, namespace=namespace_of(0), probe_path=collection(namespace_of(0)))
        for n in range(1, NAMESPACES):
            conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace_of(n)}})
    finally:
        conn.close()


def writer_process(endpoint: Endpoint, indexes: list[int], threads: int, results: Any, with_children: bool) -> None:
    """Create the Darkrooms ``indexes`` (each then its status, and its :func:`children` when ``with_children``) on
    ``threads`` keep-alive connections."""
    errors: list[str] = []

    def write(share: list[int]) -> None:
        try:
            conn = ScaleConn(endpoint)
            for i in share:
                created = conn.expect(201, "POST", collection(namespace_of(i)), darkroom(i))
                created["status"] = status(name_of(i))
                conn.expect(200, "PUT", f"{collection(namespace_of(i))}/{name_of(i)}/status", created)
                for path, body in children(created) if with_children else ():
                    conn.expect(201, "POST", path, body)
            conn.close()
        except Exception as e:  # reported to the parent, which fails the run
            errors.append(repr(e))

    workers = [threading.Thread(target=write, args=(indexes[t::threads],)) for t in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    results.put(errors)


def populate(server: ClusterProcess, start: int, stop: int, *, writers: int, threads: int, with_children: bool = False) -> float:
    """Darkrooms ``start`` .. ``stop - 1``; the seconds it took."""
    began = time.monotonic()
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    indexes = list(range(start, stop))
    procs = [
        ctx.Process(target=writer_process, args=(server.endpoint, indexes[w::writers], threads, results, with_children), daemon=True)
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    try:
        errors = [e for _ in procs for e in results.get(timeout=7200)]
    finally:
        join_processes(procs)
    if errors:
        raise RuntimeError(f"creating Darkrooms failed: {errors[0]}")
    return time.monotonic() - began


def running_pods(server: ClusterProcess) -> int:
    """The Running Pods the API would cache (labelled by the reconciler's builders), counted page by page."""
    conn, token, running = ScaleConn(server.endpoint), "", 0
    try:
        while True:
            query = f"labelSelector={quote(MANAGED_BY_LABEL)}&limit=5000" + (f"&continue={quote(token)}" if token else "")
            page = conn.expect(200, "GET", f"/api/v1/pods?{query}")
            running += sum(1 for pod in page.get("items") or () if (pod.get("status") or {}).get("phase") == "Running")
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return running
    finally:
        conn.close()


def wait_for_pods(server: ClusterProcess, count: int, timeout_s: float) -> float:
    """Wait until the Pods of the first ``count`` Darkrooms all run, then 5 s more (their last status writes and
    Events); the seconds it took."""
    began, wanted = time.monotonic(), pods_of(count)
    while (running := running_pods(server)) < wanted:
        if time.monotonic() - began > timeout_s:
            raise RuntimeError(f"{running} of {wanted} Pods running after {timeout_s:g} s")
        time.sleep(5)
    time.sleep(5)
    return time.monotonic() - began


# -- the product ----------------------------------------------------------------------------------


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants (VmRSS, /proc)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
    return total


# ``--gc-pauses``: a sitecustomize for the product's processes that appends each full (generation 2) garbage
# collection to ``$SCALE_BENCH_GC_LOG.<pid>``: wall time at its end, its duration (ms), the objects it freed.
GC_SITECUSTOMIZE = """
import gc, os, time
_log = os.environ.get("SCALE_BENCH_GC_LOG")
_began = [0.0]
def _full_collections(phase, info):
    if info["generation"] != 2:
        return
    if phase == "start":
        _began[0] = time.perf_counter()
        return
    took = (time.perf_counter() - _began[0]) * 1000
    with open(f"{_log}.{os.getpid()}", "a") as out:
        out.write(f"{time.time():.6f} {took:.3f} {info['collected']}\\n")
if _log:
    gc.callbacks.append(_full_collections)
"""


@dataclass(frozen=True)
class Collections:
    """The full garbage collections of the product's processes in a window: how many, their total and longest (ms)."""

    count: int = 0
    total_ms: float = 0.0
    longest_ms: float = 0.0


class Product:
    """``gunicorn -c backend/server/gunicorn_conf.py backend.server.wsgi:app`` in the local mode, of the checkout ``root``
    (default this one); ``startup_s``: from the process start to the first ``/readyz`` 200. ``gc_log``: where
    ``--gc-pauses`` records full collections."""

    def __init__(self, *, kubeconfig: Path, work: Path, timeout_s: float, gc_log: Path | None = None, root: Path = ROOT) -> None:
        self.port = free_port()
        self.log_path = work / f"gunicorn-{self.port}.log"
        self.gc_log = gc_log
        more = [ROOT / "bench"]  # this checkout's bench helpers, whichever product ``root`` is
        if gc_log is not None:
            site = work / "gcsite"
            site.mkdir(exist_ok=True)
            (site / "sitecustomize.py").write_text(GC_SITECUSTOMIZE)
            more.append(site)
        env = {
            **os.environ,
            "PYTHONPATH": pythonpath(root, *more),
            "SCALE_BENCH_GC_LOG": str(gc_log or ""),
            "DARKROOM_API_KUBECONFIG": str(kubeconfig),
            "DARKROOM_API_LOG_LEVEL": "WARNING",
            "DARKROOM_API_AUTHENTICATION": "local",
            "PORT": str(self.port),
        }
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(root / "backend" / "server" / "gunicorn_conf.py"), "backend.server.wsgi:app"]
        started = time.monotonic()
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            self.startup_s = self._wait_ready(started, timeout_s)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, started: float, timeout_s: float) -> float:
        while time.monotonic() - started < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}: {self.log_path.read_text(errors='replace')[-3000:]}")
            try:
                conn = ScaleConn(self.port, timeout_s=5)
                try:
                    if conn.request("GET", "/readyz")[0] == 200:
                        return time.monotonic() - started
                finally:
                    conn.close()
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"the product's /readyz did not answer 200 within {timeout_s:g} s")

    def rss(self) -> int:
        return tree_rss_bytes(self.proc.pid)

    def log_tail(self) -> str:
        """The end of gunicorn's output (the work dir and its logs are removed when the script ends)."""
        return self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""

    def collections(self, since: float, until: float) -> Collections | None:
        """The full collections that ended between the wall times ``since`` and ``until`` (None without ``gc_log``)."""
        if self.gc_log is None:
            return None
        took = []
        for path in self.gc_log.parent.glob(f"{self.gc_log.name}.*"):
            for line in path.read_text().splitlines():
                ended, ms, _freed = line.split()
                if since <= float(ended) <= until:
                    took.append(float(ms))
        return Collections(len(took), sum(took), max(took, default=0.0))

    def stop(self) -> None:
        stop_process(self.proc)


# -- reads ------------------------------------------------------------------------------------------


@dataclass
class Read:
    label: str
    p50_ms: float
    p99_ms: float
    target_ms: float
    checked: str = ""

    @property
    def ok(self) -> bool:
        return self.p99_ms <= self.target_ms

    @property
    def verdict(self) -> str:
        return "" if self.target_ms == NO_TARGET else verdict(self.ok)

    @property
    def target(self) -> str:
        return "" if self.target_ms == NO_TARGET else f"p99 <= {self.target_ms:g}"


NO_TARGET = math.inf  # a measure the scale issue sets no target for (a write)
CREATE_LABEL = "a create through the API (`POST /darkrooms`, new sub-domains)"


def timed(conn: Conn, label: str, paths: Callable[[int], str], check: Check, *, warmup: int, requests: int, target_ms: float) -> Read:
    """``warmup`` + ``requests`` sequential GETs of ``paths(k)``; ``check(k, body)`` returns what is wrong, or None."""
    latencies: list[float] = []
    clock = time.perf_counter
    for k in range(warmup + requests):
        path = paths(k)
        t0 = clock()
        code, body = conn.request("GET", path)
        elapsed = clock() - t0
        if code != 200:
            raise RuntimeError(f"GET {path}: {code}: {body[:300]!r}")
        problem = check(k, body)
        if problem:
            raise RuntimeError(f"GET {path}: {problem}")
        if k >= warmup:
            latencies.append(elapsed * 1000)
    latencies.sort()
    return Read(label, nearest_rank(latencies, 50), nearest_rank(latencies, 99), target_ms)


def fixed(path: str) -> Callable[[int], str]:
    """The same ``path`` for every request."""
    return lambda k: path


def pick(k: int, count: int) -> int:
    """The Darkroom the ``k``-th request of a read asks for: a different one each time, spread over the whole set."""
    return (k * 7919 + 13) % count


def page_check(expect: int, count: int, namespace: str | None = None) -> Check:
    """A JSON page of ``expect`` items: of ``namespace`` if given, else with ``total`` = ``count``."""

    def check(k: int, body: bytes) -> str | None:
        data = orjson.loads(body)
        if len(data["items"]) != expect:
            return f"{len(data['items'])} items, expected {expect}"
        if namespace is None and data["total"] != count:
            return f"total {data['total']}, expected {count}"
        if namespace is not None and any(item["namespace"] != namespace for item in data["items"]):
            return "an item of another namespace"
        return None

    return check


def object_check(count: int) -> Check:
    def check(k: int, body: bytes) -> str | None:
        return None if orjson.loads(body)["name"] == name_of(pick(k, count)) else "another object"

    return check


def q_check(count: int) -> Check:
    def check(k: int, body: bytes) -> str | None:
        found = any(item["name"] == name_of(pick(k, count)) for item in orjson.loads(body)["items"])
        return None if found else "the object is not among the items"

    return check


def label_check(count: int, team: int) -> Check:
    """A page of 50 of the Darkrooms labelled ``team=team-<team>`` (:func:`darkroom`: every seventh), all of them counted."""
    expected = len(range(team, count, 7))

    def check(k: int, body: bytes) -> str | None:
        data = orjson.loads(body)
        if data["total"] != expected or len(data["items"]) != min(PAGE, expected):
            return f"total {data['total']} and {len(data['items'])} items, expected {expected} and {min(PAGE, expected)}"
        if any((item.get("labels") or {}).get("team") != f"team-{team}" for item in data["items"]):
            return "an item of another team"
        return None

    return check


def dashboard_check(conn: Conn, sort: str, count: int) -> Check:
    """A dashboard page of 50 rows (or all), in the order ``sort`` asks for: name and namespace checked by sorting
    the rows' values, state and age by comparing with the JSON API's page of that order."""
    key, descending = sort.removeprefix("-"), sort.startswith("-")
    expected: list[tuple[str, str]] = []
    if key in ("state", "age"):
        expected = [(item["namespace"], item["name"]) for item in conn.expect(200, "GET", f"/darkrooms?sort={sort}&limit={PAGE}")["items"]]

    def check(k: int, body: bytes) -> str | None:
        rows = [(namespace, name) for namespace, name in ROW.findall(body.decode())]
        if len(rows) != min(PAGE, count):
            return f"{len(rows)} rows, expected {min(PAGE, count)}"
        if key in ("name", "namespace"):
            values = [name if key == "name" else namespace for namespace, name in rows]
            if values != sorted(values, reverse=descending):
                return f"rows not sorted by {sort}"
        elif expected and rows != expected:
            return f"rows not in the order of GET /darkrooms?sort={sort}"
        return None

    return check


def reads(port: int, count: int, *, warmup: int, requests: int, sorts: tuple[str, ...]) -> list[Read]:
    """Each read of the table, measured in turn on one keep-alive connection."""
    conn = ScaleConn(port)
    ns = namespace_of(7)
    per_ns = len(range(7, count, NAMESPACES))
    cases: list[tuple[str, Callable[[int], str], Check, float]] = [
        ("page of 50 (`/darkrooms?limit=50`)", lambda k: f"/darkrooms?limit={PAGE}", page_check(PAGE, count), TARGET_PAGE_P99_MS),
        (
            "one namespace's page (`?namespace=&limit=50`)",
            lambda k: f"/darkrooms?namespace={ns}&limit={PAGE}",
            page_check(min(PAGE, per_ns), count, ns),
            TARGET_READ_P99_MS,
        ),
        (
            "one object (`/darkrooms/<ns>/<name>`)",
            lambda k: f"/darkrooms/{namespace_of(pick(k, count))}/{name_of(pick(k, count))}",
            object_check(count),
            TARGET_READ_P99_MS,
        ),
        (
            "name filter (`?q=<name>&limit=50`)",
            lambda k: f"/darkrooms?q={name_of(pick(k, count))}&limit={PAGE}",
            q_check(count),
            TARGET_READ_P99_MS,
        ),
        (
            "label selector (`?labelSelector=team=team-3&limit=50`)",
            lambda k: f"/darkrooms?labelSelector=team%3Dteam-3&limit={PAGE}",
            label_check(count, 3),
            TARGET_READ_P99_MS,
        ),
        ("dashboard first page (`GET /`)", lambda k: "/", dashboard_check(conn, "", count), TARGET_READ_P99_MS),
    ]
    for sort in sorts:
        label = f"dashboard sorted (`/?sort={sort}`)"
        cases.append((label, fixed(f"/?sort={quote(sort)}"), dashboard_check(conn, sort, count), TARGET_READ_P99_MS))
    try:
        return [
            timed(conn, label, paths, check, warmup=warmup, requests=requests, target_ms=target) for label, paths, check, target in cases
        ]
    finally:
        conn.close()


def creates(port: int, *, warmup: int, requests: int) -> Read:
    """``warmup`` + ``requests`` sequential creates through the API (``POST /darkrooms``, each with sub-domains of its
    own, so the API checks that no other Darkroom asks for them), each deleted again (untimed) before the next."""
    conn = ScaleConn(port)
    latencies: list[float] = []
    clock = time.perf_counter
    namespace = namespace_of(5)
    try:
        for k in range(warmup + requests):
            name = f"created-{k:04}"
            payload = {
                "name": name,
                "namespace": namespace,
                "source": {"type": "WebFolder", "baseUrl": f"https://example.com/created/{k}"},
                "subDomains": [f"created-{k}", f"created-{k}-cdn"],
            }
            t0 = clock()
            code, body = conn.request("POST", "/darkrooms", orjson.dumps(payload))
            elapsed = clock() - t0
            if code != 201:
                raise RuntimeError(f"POST /darkrooms: {code}: {body[:300]!r}")
            conn.expect(204, "DELETE", f"/darkrooms/{namespace}/{name}")
            if k >= warmup:
                latencies.append(elapsed * 1000)
    finally:
        conn.close()
    latencies.sort()
    return Read(CREATE_LABEL, nearest_rank(latencies, 50), nearest_rank(latencies, 99), NO_TARGET)


# -- /watch delivery --------------------------------------------------------------------------------


@dataclass
class Stream:
    """One ``/watch`` stream read on a thread: the monotonic receive time of each change's ``ns/name@rv``."""

    port: int
    namespace: str
    arrived: dict[str, float] = field(default_factory=dict)
    ready: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    error: str = ""

    def start(self) -> threading.Thread:
        self.sock = socket.create_connection((HOST, self.port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request = (
            f"GET /watch?kind=Darkroom&namespace={self.namespace} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nAccept: text/event-stream\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        thread = threading.Thread(target=self._read, daemon=True)
        thread.start()
        return thread

    def _read(self) -> None:
        frames = FrameSplitter(http_head=True)
        self.sock.settimeout(0.5)
        try:
            while not self.stop.is_set():
                try:
                    chunk = self.sock.recv(1 << 16)
                except TimeoutError:
                    continue
                now = time.monotonic()
                if not chunk:
                    self.error = "the stream ended"
                    return
                for frame in frames.feed(chunk):
                    if frame.event == "ready":
                        self.ready.set()
                    elif frame.event == "darkroom" and frame.data is not None:
                        change = orjson.loads(frame.data)
                        self.arrived.setdefault(f"{change['namespace']}/{change['name']}@{change['resourceVersion']}", now)
        except OSError as e:
            self.error = repr(e)

    def close(self) -> None:
        self.stop.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def watch_delivery(port: int, server: ClusterProcess, count: int, *, changes: int, gap_s: float) -> tuple[float, float, int]:
    """p50, p99 (ms) of write return → event received over ``changes`` status writes, and how many arrived."""
    namespace = namespace_of(3)
    stream = Stream(port, namespace)
    reader = stream.start()
    conn = ScaleConn(server.endpoint)
    latencies: list[float] = []
    try:
        if not stream.ready.wait(30):
            raise RuntimeError(f"/watch sent no ready event ({stream.error or 'no answer'})")
        targets = list(range(3, count, NAMESPACES))
        for k in range(changes):
            i = targets[(k * 37) % len(targets)]
            path = f"{collection(namespace)}/{name_of(i)}"
            current = conn.expect(200, "GET", path)
            current["status"] = status(name_of(i), message=f"change {k} at {time.time():.3f}")
            written = conn.expect(200, "PUT", f"{path}/status", current)
            returned = time.monotonic()
            key = f"{namespace}/{name_of(i)}@{written['metadata']['resourceVersion']}"
            deadline = returned + 10
            while key not in stream.arrived and time.monotonic() < deadline and not stream.error:
                time.sleep(0.0005)
            if key in stream.arrived:
                latencies.append(max(0.0, stream.arrived[key] - returned) * 1000)
            time.sleep(gap_s)
    finally:
        conn.close()
        stream.close()
        reader.join(5)
    latencies.sort()
    return nearest_rank(latencies, 50), nearest_rank(latencies, 99), len(latencies)


# -- one server ------------------------------------------------------------------------------------


@dataclass
class Row:
    count: int
    created_s: float
    startup_s: float
    rss: int
    bytes_per: float
    reads: list[Read]
    watch_p50: float
    watch_p99: float
    watch_n: int
    cpu_s: float
    rss_after: int
    collections: Collections | None
    settled_s: float = 0.0  # --children: waiting for the Pods after the writes
    baseline: Baseline | None = None
    walk: tuple[list[Step], int] | None = None  # --browser: the steps, and the walk's largest response (bytes)


@dataclass
class Baseline:
    """``--baseline``: the other checkout's start-up and RSS at /readyz."""

    startup_s: float
    rss: int
    bytes_per: float


def start_alone(kubeconfig: Path, work: Path, args: argparse.Namespace, root: Path) -> tuple[float, int]:
    """Start the product of ``root``, note its start-up and RSS at /readyz, stop it."""
    product = Product(kubeconfig=kubeconfig, work=work, timeout_s=args.ready_timeout, root=root)
    try:
        time.sleep(0.5)
        return product.startup_s, product.rss()
    finally:
        product.stop()


def run_server(kind: str, work: Path, counts: list[int], args: argparse.Namespace) -> tuple[int, float, list[Row]]:
    """Baseline (0 Darkrooms) RSS and start-up, then one :class:`Row` per count."""
    server = make_server(kind, work / kind)
    rows: list[Row] = []
    sorts = tuple(s for key in SORT_KEYS for s in ((key, f"-{key}") if args.both_directions else (key,)))
    with server:
        prepare(server)
        base_startup, base_rss = start_alone(server.kubeconfig, work, args, ROOT)
        log(f"{kind}: 0 Darkrooms: /readyz after {base_startup:.2f} s, RSS {base_rss / 2**20:.1f} MiB")
        other_base = start_alone(server.kubeconfig, work, args, args.baseline)[1] if args.baseline else 0
        have = 0
        for count in counts:
            created = populate(server, have, count, writers=args.writers, threads=args.threads, with_children=args.children)
            log(f"{kind}: {count - have:,} Darkrooms created in {created:.1f} s ({(count - have) / created:,.0f}/s)")
            settled = wait_for_pods(server, count, args.ready_timeout) if args.children else 0.0
            if args.children:
                log(f"{kind}: {pods_of(count):,} Pods running {settled:.1f} s after the writes")
            have = count
            baseline = None
            if args.baseline:
                other_startup, other_rss = start_alone(server.kubeconfig, work, args, args.baseline)
                baseline = Baseline(other_startup, other_rss, (other_rss - other_base) / count)
                log(f"{kind}: {count:,}: baseline /readyz after {other_startup:.2f} s, RSS {other_rss / 2**20:.1f} MiB")
            gc_log = work / f"gc-{kind}-{count}" if args.gc_pauses else None
            product = Product(kubeconfig=server.kubeconfig, work=work, timeout_s=args.ready_timeout, gc_log=gc_log)
            try:
                time.sleep(0.5)
                rss = product.rss()
                conn = ScaleConn(product.port)
                total = conn.expect(200, "GET", "/darkrooms?limit=1")["total"]
                conn.close()
                if total != count:
                    raise RuntimeError(f"the product's cache holds {total} Darkrooms at /readyz, expected {count}")
                log(f"{kind}: {count:,}: /readyz after {product.startup_s:.2f} s, RSS {rss / 2**20:.1f} MiB")
                cpu0, wall0 = tree_cpu_seconds(product.proc.pid), time.time()
                measured = reads(product.port, count, warmup=args.warmup, requests=args.requests, sorts=sorts)
                measured.append(creates(product.port, warmup=args.warmup, requests=args.requests))
                collections = product.collections(wall0, time.time())
                for r in measured:
                    log(f"  {r.label}: p50 {r.p50_ms:.1f} ms, p99 {r.p99_ms:.1f} ms")
                w50, w99, wn = watch_delivery(product.port, server, count, changes=args.changes, gap_s=args.change_gap)
                log(f"  /watch delivery: p50 {w50:.1f} ms, p99 {w99:.1f} ms ({wn}/{args.changes} events)")
                cpu = tree_cpu_seconds(product.proc.pid) - cpu0
                walk: tuple[list[Step], int] | None = browse(product.port, name_of(pick(7, count))) if args.browser else None
                for s in walk[0] if walk else ():
                    log(f"  browser: {s.label}: {s.ms:.0f} ms, {s.received / 1024:.1f} KiB, {s.rows} rows {s.problem or 'ok'}")
                rows.append(
                    Row(
                        count,
                        created,
                        product.startup_s,
                        rss,
                        (rss - base_rss) / count,
                        measured,
                        w50,
                        w99,
                        wn,
                        cpu,
                        product.rss(),
                        collections,
                        settled,
                        baseline,
                        walk,
                    )
                )
            except Exception:
                log(f"{kind}: {count:,}: the product's log ends with:\n{product.log_tail()}")
                raise
            finally:
                product.stop()
    return base_rss, base_startup, rows


# -- the report ------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(kind: str, base_rss: int, base_startup: float, rows: list[Row], changes: int) -> list[str]:
    counts = [f"{r.count:,}" for r in rows]
    lines = [
        f"| {kind} | " + " | ".join(counts) + " | target |",
        "|---|" + "---:|" * len(rows) + "---|",
        "| Darkrooms created on the cluster in (s) | " + " | ".join(f"{r.created_s:.1f}" for r in rows) + " | |",
        f"| time until API /readyz (s; 0 Darkrooms: {base_startup:.2f}) | " + " | ".join(f"{r.startup_s:.2f}" for r in rows) + " | |",
        f"| API RSS at /readyz, gunicorn tree (MiB; 0 Darkrooms: {base_rss / 2**20:.1f}) | "
        + " | ".join(f"{r.rss / 2**20:.1f}" for r in rows)
        + " | |",
        "| bytes per cached Darkroom (RSS - RSS at 0, / count) | "
        + " | ".join(f"{r.bytes_per:,.0f} {verdict(r.bytes_per <= TARGET_BYTES_PER_DARKROOM)}" for r in rows)
        + f" | <= {TARGET_BYTES_PER_DARKROOM:,.0f} |",
        "| API RSS after the reads below (MiB) | " + " | ".join(f"{r.rss_after / 2**20:.1f}" for r in rows) + " | |",
    ]
    if any(r.settled_s for r in rows):
        settled = " | ".join(f"{r.settled_s:.1f}" for r in rows)
        lines.insert(3, f"| Pods all Running after the writes (s; `--children`) | {settled} | |")
    if all(r.baseline is not None for r in rows):
        bases = [b for r in rows if (b := r.baseline) is not None]
        lines += [
            "| baseline (`--baseline`): time until /readyz (s) | " + " | ".join(f"{b.startup_s:.2f}" for b in bases) + " | |",
            "| baseline: API RSS at /readyz (MiB) | " + " | ".join(f"{b.rss / 2**20:.1f}" for b in bases) + " | |",
            "| baseline: bytes per cached Darkroom | "
            + " | ".join(f"{b.bytes_per:,.0f} {verdict(b.bytes_per <= TARGET_BYTES_PER_DARKROOM)}" for b in bases)
            + f" | <= {TARGET_BYTES_PER_DARKROOM:,.0f} |",
        ]
    for index, first in enumerate(rows[0].reads):
        cells = [f"{r.reads[index].p50_ms:.1f} / {r.reads[index].p99_ms:.1f} {r.reads[index].verdict}".rstrip() for r in rows]
        lines.append(f"| {first.label}, p50 / p99 (ms) | " + " | ".join(cells) + f" | {first.target} |")
    lines.append(
        "| `/watch` delivery (status write returned → event received), p50 / p99 (ms) | "
        + " | ".join(
            f"{r.watch_p50:.1f} / {r.watch_p99:.1f} {verdict(r.watch_p99 <= TARGET_READ_P99_MS)}"
            + ("" if r.watch_n == changes else f" ({r.watch_n}/{changes} arrived)")
            for r in rows
        )
        + f" | p99 <= {TARGET_READ_P99_MS:g} |"
    )
    walks = [r.walk for r in rows if r.walk is not None]
    if len(walks) == len(rows):
        for index, first_step in enumerate(walks[0][0]):
            cells = [f"{w[0][index].ms:,.0f} / {w[0][index].received / 1024:,.1f} {verdict(w[0][index].ok)}" for w in walks]
            lines.append(f"| browser (`--browser`): {first_step.label}, ms / KiB received | " + " | ".join(cells) + " | checked rows |")
        lines.append("| browser: the largest response of the walk (KiB) | " + " | ".join(f"{w[1] / 1024:,.1f}" for w in walks) + " | |")
    lines.append("| API CPU during the reads and writes above (s) | " + " | ".join(f"{r.cpu_s:.1f}" for r in rows) + " | |")
    if all(r.collections is not None for r in rows):
        cells = [f"{c.count} / {c.total_ms:,.0f} / {c.longest_ms:,.0f}" for r in rows if (c := r.collections) is not None]
        lines.append(
            "| full GC collections during the reads: count / total ms / longest ms (`--gc-pauses`) | " + " | ".join(cells) + " | |"
        )
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The API and the dashboard at many Darkrooms: start-up, memory, read latencies.")
    parser.add_argument("--counts", default="1000,10000", help="Darkroom counts, ascending (default 1000,10000)")
    parser.add_argument(
        "--server", choices=("dev", "real", "both"), default=None, help="API server(s) (default: both if realcluster builds, else dev)"
    )
    parser.add_argument("--requests", type=int, default=50, help="measured requests per read (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="discarded requests before each read (default 5)")
    parser.add_argument("--changes", type=int, default=50, help="status writes for the /watch delivery (default 50)")
    parser.add_argument("--change-gap", type=float, default=0.1, help="seconds between those writes (default 0.1)")
    parser.add_argument("--writers", type=int, default=4, help="writer processes creating Darkrooms (default 4)")
    parser.add_argument("--threads", type=int, default=4, help="threads (connections) per writer process (default 4)")
    parser.add_argument("--ascending-only", dest="both_directions", action="store_false", help="dashboard sorts ascending only")
    parser.add_argument(
        "--gc-pauses", action="store_true", help="record the product's full garbage collections during the reads (a sitecustomize hook)"
    )
    parser.add_argument(
        "--children",
        action="store_true",
        help="each Darkroom with its Deployment, Service and Ingress (and what the cluster makes of them)",
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout's product, started too for its start-up and RSS")
    parser.add_argument("--browser", action="store_true", help="a person's walk through the dashboard in chromium at each count")
    parser.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for the product's /readyz (default 900)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    exit_on_sigterm()
    counts = sorted(int(c.replace("_", "")) for c in args.counts.split(","))
    kinds, note = choose_servers(None if args.server == "both" else args.server)
    if args.server == "both" and len(kinds) < 2:
        raise SystemExit(f"--server both: {note}")
    if note:
        log(note)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.monotonic()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    results: dict[str, tuple[int, float, list[Row]]] = {}
    try:
        for kind in kinds:
            results[kind] = run_server(kind, work, counts, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    servers = ", ".join(
        {"dev": "devcluster (dev)", "real": f"kube-apiserver {realcluster_version()} + etcd (real, realcluster)"}[k] for k in kinds
    )
    command = " ".join(["bench/scale.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"\nAPI and dashboard at scale, {when}; {servers}")
    print(f"machine: {machine_summary()}, Python {platform.python_version()}; load average at start {load_before}, at end {load_after}")
    print(
        f"command: .venv/bin/python {command}; {NAMESPACES} namespaces, {args.warmup} warm-up + {args.requests} measured requests "
        f"per read (sequential, one connection), {args.changes} status writes {args.change_gap:g} s apart for /watch; "
        f"total {time.monotonic() - started:.0f} s"
    )
    ok = True
    for kind, (base_rss, base_startup, rows) in results.items():
        print()
        for line in table(kind, base_rss, base_startup, rows, args.changes):
            print(line)
        ok = ok and all(r.ok for row in rows for r in row.reads) and all(row.bytes_per <= TARGET_BYTES_PER_DARKROOM for row in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
