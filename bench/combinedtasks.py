"""Benchmark the combinedtasks aggregated API server: list as a Table vs the seed's approach, and watch latency.

Never run by the test suite; run it with::

    .venv/bin/python bench/combinedtasks.py                        # 1,000 Tasks x 10 Events, median of 5 runs (real control plane)
    .venv/bin/python bench/combinedtasks.py --tasks 100 --runs 2 --watch-writes 50   # sanity run (~1 min)

``--server real`` (the default and, for now, the only choice: devcluster serves neither TokenReview,
SubjectAccessReview nor the requestheader ConfigMap the server needs, beyond its own admin token).

Method
------
* A fresh realcluster (``bench/servers.py``: kube-apiserver + etcd + controllers) with the product's
  CRDs and the namespace ``bench``; the aggregated server's ServiceAccount and RBAC from
  ``deploy/components/aggregator/rbac.yaml`` (created with the admin token), a TokenRequest token for
  it in its own kubeconfig, and ``python -m aggregator`` on a free 127.0.0.1 port (self-signed serving
  certificate; log level WARNING) — as the integration tests run it (tests/aggregator).
* ``--tasks`` Tasks, each with ``--events`` Events labelled ``example.example.com/task-uid`` (as the
  reconciler records them), POSTed to kube-apiserver by ``--clients`` threads; then this process waits
  until the aggregated server lists every Task with all its Events.
* **List**, per run, both in the same run on the same cluster, after one warm-up of each:
  (a) ``GET /apis/search.task.example.example.com/v1/namespaces/bench/combinedtasks`` from the
  aggregated server directly, over HTTPS with the admin bearer token, ``Accept:
  application/json;as=Table;g=meta.k8s.io;v=v1`` (what ``kubectl get ct`` asks for) — the whole
  Table body received; (b) the seed's approach against kube-apiserver itself (no server of ours in
  between, which favours it): list the Tasks, then one ``events?labelSelector=example.example.com/task-uid=<uid>``
  list per Task, one keep-alive HTTPS connection, bodies parsed as JSON (what any client must do to
  join them). Ratio = (b) / (a). kube-apiserver answers each labelled events list by filtering all
  the namespace's Events (here 10,000 and more), so (b) grows with Tasks x Events: 0.2-1 s a list
  on the 2-core dev VM, minutes per run at 1,000 Tasks.
* **Watch**: a watch on the aggregated server (``?watch=1&resourceVersion=<the list's>``, JSON lines on
  one HTTPS stream, read by a thread). ``--watch-writes`` times, one Event is POSTed to kube-apiserver
  for a Task (round robin); latency = from just before the POST to the watch event (MODIFIED) whose
  CombinedTask's ``status.events`` first holds that Event. Closed loop: the next write goes once the
  previous was seen (so writes never queue behind each other). p50 / p99 per run.
* Each figure in the table is the median over ``--runs`` runs. Results depend on the machine and on
  what else runs on it (header line: nproc, load average): the cluster, the aggregated server and
  this client share its cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from common import (
    ROOT,
    Conn,
    Endpoint,
    exit_on_sigterm,
    free_port,
    install_crds,
    log,
    machine_summary,
    nearest_rank,
    stop_process,
    wait_until,
)
from servers import choose_servers, realcluster_version

from tests.clusters import RealclusterProcess

NAMESPACE = "bench"
SYSTEM_NAMESPACE = "darkroom-system"
ACCOUNT = "darkroom-aggregator"
TASKS = f"/apis/example.example.com/v1/namespaces/{NAMESPACE}/tasks"
EVENTS = f"/api/v1/namespaces/{NAMESPACE}/events"
COMBINED = f"/apis/search.task.example.example.com/v1/namespaces/{NAMESPACE}/combinedtasks"
TABLE = b"application/json;as=Table;g=meta.k8s.io;v=v1"
RBAC = ROOT / "deploy" / "components" / "aggregator" / "rbac.yaml"
UID_LABEL = "example.example.com/task-uid"
PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}
TARGET_RATIO, TARGET_WATCH_P99_MS = 20.0, 100.0


class TableConn(Conn):
    """A connection that asks for server-side Tables."""

    USER_AGENT = "bench-combinedtasks/1"

    def __init__(self, target: Endpoint) -> None:
        super().__init__(target)
        self.prefix = self.prefix.replace(b"Accept: application/json", b"Accept: " + TABLE)


# --- setup ------------------------------------------------------------------------------------


def install_aggregator_rbac(conn: Conn) -> None:
    conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": SYSTEM_NAMESPACE}})
    for doc in yaml.safe_load_all(RBAC.read_text()):
        if doc:
            namespace = (
                doc["metadata"].setdefault("namespace", SYSTEM_NAMESPACE) if doc["kind"] in ("ServiceAccount", "RoleBinding") else ""
            )
            conn.expect(201, "POST", PATHS[doc["kind"]].format(ns=namespace), doc)


def aggregator_kubeconfig(conn: Conn, cluster: RealclusterProcess, path: Path) -> Path:
    """A kubeconfig with a TokenRequest token of the aggregated server's ServiceAccount (as in a pod)."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 4 * 3600}}
    token = conn.expect(201, "POST", f"/api/v1/namespaces/{SYSTEM_NAMESPACE}/serviceaccounts/{ACCOUNT}/token", request)["status"]["token"]
    server = {"server": f"https://127.0.0.1:{cluster.port}", "certificate-authority": str(cluster.ca_path)}
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "real", "cluster": server}],
                "users": [{"name": ACCOUNT, "user": {"token": token}}],
                "contexts": [{"name": ACCOUNT, "context": {"cluster": "real", "user": ACCOUNT}}],
                "current-context": ACCOUNT,
            }
        )
    )
    return path


def start_aggregator(kubeconfig: Path, work: Path, token: str) -> tuple[subprocess.Popen[bytes], Endpoint]:
    port = free_port()
    certs = work / "certs"
    argv = [sys.executable, "-m", "aggregator", "--kubeconfig", str(kubeconfig), "--bind-address", "127.0.0.1"]
    argv += ["--secure-port", str(port), "--cert-dir", str(certs), "--log-level", "WARNING"]
    with (work / "aggregator.log").open("ab") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    endpoint = Endpoint(port, ca_file=str(certs / "apiserver.crt"), token=token)

    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"the aggregated server exited with {proc.returncode}: {(work / 'aggregator.log').read_text()[-3000:]}")
        if not (certs / "apiserver.crt").exists():
            return False
        try:
            conn = Conn(endpoint, timeout_s=2.0)
            try:
                return conn.request("GET", "/readyz")[0] == 200
            finally:
                conn.close()
        except OSError:
            return False

    try:
        wait_until(ready, 90, "the aggregated server's /readyz", interval_s=0.2)
    except BaseException:
        stop_process(proc)
        raise
    return proc, endpoint


def event_body(task: dict[str, Any], name: str, n: int) -> dict[str, Any]:
    meta = task["metadata"]
    stamp = f"2030-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {UID_LABEL: meta["uid"]}},
        "involvedObject": {
            "apiVersion": "example.example.com/v1",
            "kind": "Task",
            "name": meta["name"],
            "namespace": NAMESPACE,
            "uid": meta["uid"],
        },
        "reason": "TaskUpdated",
        "message": f"{meta['name']} changed ({n})",
        "type": "Normal",
        "count": 1,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "source": {"component": "bench"},
    }


def populate(endpoint: Endpoint, opts: argparse.Namespace) -> list[dict[str, Any]]:
    """``--tasks`` Tasks and ``--events`` Events each, by ``--clients`` threads; the created Tasks."""
    local = threading.local()

    def conn() -> Conn:
        if not hasattr(local, "conn"):
            local.conn = Conn(endpoint)
        return local.conn  # type: ignore[no-any-return]

    def make_task(i: int) -> dict[str, Any]:
        body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": f"task-{i:05d}"},
                "spec": {"priority": i % 11, "deadline": "2031-01-01T00:00:00Z", "details": f"Task {i}"}}  # fmt: skip
        return conn().expect(201, "POST", TASKS, body)

    def make_events(task: dict[str, Any]) -> None:
        for n in range(opts.events):
            conn().expect(201, "POST", EVENTS, event_body(task, f"{task['metadata']['name']}.{n:03d}", n))

    started = time.monotonic()
    with ThreadPoolExecutor(opts.clients) as pool:
        tasks = list(pool.map(make_task, range(opts.tasks)))
        list(pool.map(make_events, tasks))
    log(f"created {opts.tasks} Tasks and {opts.tasks * opts.events} Events in {time.monotonic() - started:.1f} s")
    return tasks


# --- measurements -------------------------------------------------------------------------------


def aggregated_table(conn: TableConn) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    code, body = conn.request("GET", COMBINED)
    elapsed = time.perf_counter() - started
    if code != 200:
        raise RuntimeError(f"GET {COMBINED} as Table: {code} {body[:300]!r}")
    return elapsed, json.loads(body)


def seed_approach(conn: Conn) -> tuple[float, int]:
    """List the Tasks, then one labelled events list per Task (the seed's aggregated server's calls); (seconds, events)."""
    started = time.perf_counter()
    tasks = conn.expect(200, "GET", TASKS)["items"]
    found = 0
    for task in tasks:
        found += len(conn.expect(200, "GET", f"{EVENTS}?labelSelector={UID_LABEL}%3D{task['metadata']['uid']}")["items"])
    return time.perf_counter() - started, found


def all_combined(table: dict[str, Any], opts: argparse.Namespace) -> bool:
    rows = table.get("rows") or []
    events_column = [c["name"] for c in table["columnDefinitions"]].index("Events")
    return len(rows) == opts.tasks and all(r["cells"][events_column] == opts.events for r in rows)


def watch_lines(endpoint: Endpoint, sock: socket.socket, path: str) -> Iterator[bytes]:
    """The lines of a chunked streaming response on ``sock`` (one JSON watch event each); ends when ``sock`` is shut down."""
    auth = f"Authorization: Bearer {endpoint.token}\r\n"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\nAccept: application/json\r\n{auth}\r\n".encode())
    buf = bytearray()
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(1 << 16)
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"watch: {head[:200]!r}")
    raw, body = bytearray(rest), bytearray()
    try:
        while True:
            eol = raw.find(b"\r\n")
            while eol < 0:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return
                raw += chunk
                eol = raw.find(b"\r\n")
            size = int(bytes(raw[:eol]).split(b";", 1)[0], 16)
            while len(raw) < eol + 4 + size:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return
                raw += chunk
            body += raw[eol + 2 : eol + 2 + size]
            del raw[: eol + 4 + size]
            if size == 0:
                return
            while (nl := body.find(b"\n")) >= 0:
                yield bytes(body[:nl])
                del body[: nl + 1]
    finally:
        sock.close()


def watch_latencies(aggregator: Endpoint, cluster: Endpoint, tasks: list[dict[str, Any]], rv: str, run: int, writes: int) -> list[float]:
    """Seconds from before each Event's POST to the watch event that shows it in its CombinedTask."""
    seen: dict[str, float] = {}
    arrived = threading.Condition()
    ready = threading.Event()

    sock = aggregator.connect(60.0)

    def reader() -> None:
        ready.set()
        for line in watch_lines(aggregator, sock, f"{COMBINED}?watch=1&resourceVersion={rv}&timeoutSeconds=600"):
            now = time.perf_counter()
            event = json.loads(line)
            if event["type"] != "MODIFIED":
                continue
            names = [e["metadata"]["name"] for e in event["object"]["status"]["events"] if ".w" in e["metadata"]["name"]]
            with arrived:
                for name in names:
                    seen.setdefault(name, now)
                arrived.notify_all()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    ready.wait(10)
    time.sleep(0.5)  # the watch is open and past its (empty) backlog
    writer = Conn(cluster)
    latencies = []
    try:
        for i in range(writes):
            task = tasks[i % len(tasks)]
            name = f"{task['metadata']['name']}.w{run:02d}{i:04d}"
            started = time.perf_counter()
            writer.expect(201, "POST", EVENTS, event_body(task, name, 1000 + i))
            with arrived:
                if not arrived.wait_for(lambda name=name: name in seen, timeout=10):  # type: ignore[misc]
                    raise RuntimeError(f"the watch never showed Event {name}")
                latencies.append(seen[name] - started)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # ends the reader
        thread.join(10)
    return latencies


# --- the run --------------------------------------------------------------------------------------


def measure(opts: argparse.Namespace, work: Path) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"ours": [], "seed": [], "ratio": [], "p50": [], "p99": []}
    (work / "real").mkdir()
    with RealclusterProcess(work / "real") as cluster:
        assert cluster.endpoint is not None
        admin = Conn(cluster.endpoint)
        install_crds(admin, namespace=NAMESPACE, probe_path=TASKS)
        install_aggregator_rbac(admin)
        kubeconfig = aggregator_kubeconfig(admin, cluster, work / "aggregator.kubeconfig")
        proc, aggregator = start_aggregator(kubeconfig, work, cluster.token())
        try:
            tasks = populate(cluster.endpoint, opts)
            table_conn = TableConn(aggregator)
            wait_until(lambda: all_combined(aggregated_table(table_conn)[1], opts), 300, "every Task with its Events", interval_s=1.0)
            admin.expect(200, "GET", f"{EVENTS}?labelSelector={UID_LABEL}%3D{tasks[0]['metadata']['uid']}")  # warm-up of both
            for run in range(opts.runs):
                ours, table = aggregated_table(table_conn)
                seed, found = seed_approach(admin)
                assert found == opts.tasks * opts.events + run * opts.watch_writes, found
                lat = sorted(
                    watch_latencies(aggregator, cluster.endpoint, tasks, table["metadata"]["resourceVersion"], run, opts.watch_writes)
                )
                row = {"ours": ours, "seed": seed, "ratio": seed / ours, "p50": nearest_rank(lat, 50), "p99": nearest_rank(lat, 99)}
                for key, value in row.items():
                    results[key].append(value)
                log(
                    f"run {run + 1}: table {ours * 1e3:.0f} ms ({len(table['rows'])} rows), seed {seed * 1e3:.0f} ms "
                    f"({seed / (opts.tasks + 1) * 1e3:.0f} ms a list), "
                    f"ratio {seed / ours:.1f}x, watch p50 {row['p50'] * 1e3:.1f} ms p99 {row['p99'] * 1e3:.1f} ms"
                )
            table_conn.close()
        finally:
            stop_process(proc)
            admin.close()
    return results


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report(results: dict[str, list[float]], opts: argparse.Namespace) -> str:
    med = {k: statistics.median(v) for k, v in results.items()}
    load = os.getloadavg()[0]
    lines = [
        f"combinedtasks: {opts.tasks:,} Tasks x {opts.events} Events, median of {opts.runs} runs; real control plane "
        f"(Kubernetes {realcluster_version()}); {machine_summary()}, Python {sys.version.split()[0]}, load {load:.1f}",
        "",
        "| measurement | result | target | |",
        "|---|---:|---:|---|",
        f"| list all as a Table, aggregated server (1 request) | {med['ours'] * 1e3:,.0f} ms | | |",
        f"| list all, seed's approach (tasks list + {opts.tasks:,} events lists) | {med['seed'] * 1e3:,.0f} ms | | |",
        f"| ratio seed / aggregated | {med['ratio']:.1f}x | >= {TARGET_RATIO:.0f}x | {verdict(med['ratio'] >= TARGET_RATIO)} |",
        f"| Event written -> watch sees the CombinedTask, p50 | {med['p50'] * 1e3:.1f} ms | | |",
        f"| Event written -> watch sees the CombinedTask, p99 ({opts.watch_writes} writes/run) | {med['p99'] * 1e3:.1f} ms "
        f"| <= {TARGET_WATCH_P99_MS:.0f} ms | {verdict(med['p99'] * 1e3 <= TARGET_WATCH_P99_MS)} |",
    ]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmark the combinedtasks aggregated API server (list as Table, watch latency).")
    parser.add_argument("--server", choices=["real"], default="real", help="the real control plane (devcluster has no aggregation yet)")
    parser.add_argument("--tasks", type=int, default=1000, help="Tasks (default 1,000)")
    parser.add_argument("--events", type=int, default=10, help="Events per Task (default 10)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the table shows medians (default 5)")
    parser.add_argument(
        "--watch-writes", type=int, default=200, help="Events written one at a time per run for the watch latency (default 200)"
    )
    parser.add_argument("--clients", type=int, default=8, help="threads creating the Tasks and Events (default 8)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    opts = parse_args(argv)
    exit_on_sigterm()  # the finally blocks stop the aggregated server and realcluster
    _, note = choose_servers(opts.server)  # exits when realcluster cannot run
    if note:
        log(note)
    work = Path(tempfile.mkdtemp(prefix="bench-combinedtasks-"))
    try:
        results = measure(opts, work)
    finally:
        if opts.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results, opts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
