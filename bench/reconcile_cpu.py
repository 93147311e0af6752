"""The reconciler's own CPU per new Darkroom, measured away from the control plane's load: its requests, its events.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python bench/reconcile_cpu.py --baseline-ref main        # 300 Darkrooms, real, 3 runs each
    nice -n 15 .venv/bin/python bench/reconcile_cpu.py --server dev --count 100 --runs 5

Why beside ``reconcile.py``
---------------------------
``reconcile.py`` runs the whole operator while the control plane converges thousands of Darkrooms on the same two
cores: its "operator CPU per Darkroom" moves with how long the control plane takes (1,000 Darkrooms, one tree, five
runs: 10.1 to 13.0 s of operator CPU for 58.6 to 78.4 s until all Ready), more than a change of a few hundred µs per request
shows. This script takes the reconciler's work apart, one step at a time, on a server that has nothing else to do.

Method
------
* One server (``--server real``: realcluster, pods Ready 0.5 s after they land; ``dev``: devcluster), the product's
  CRDs; each run gets a namespace of its own.
* A run is a fresh process that imports the checkout's own ``operator`` and ``lib`` (``PYTHONPATH``) and wires the
  Darkroom reconciler as ``python -m darkroom_operator`` does (which, as it starts, keeps the dev toolchain's
  ``kubernetes_validate`` out: ``envsettings.startup``) — its :class:`cluster.Cache` declared by
  ``darkroom_operator.runtime.controllers.declare_informers``, a :class:`cluster.CachedClient`, an ``EventRecorder`` —
  but calls ``reconcile(key)`` itself, in one thread, with no workqueue and no event handlers:
  1. ``--count`` Darkrooms (``workloads.darkroom_body``) are created on another connection; once the cache holds them,
     **the first reconcile** of each (the children applied, the first status);
  2. until every Deployment is available and the watches have been quiet for 2 s: **the events** the control plane's
     work causes (the informers parse and store the children, their status updates, the Darkrooms' status);
  3. **the second reconcile** of each (status Ready, an Event).
* Each step's CPU: the reconciling thread's (``time.thread_time``) for 1 and 3; the process's minus that thread's for
  the events (informer threads, over all three steps). Per Darkroom, in ms; requests per Darkroom by step (counted at
  ``cluster.Transport.request``: applies, status writes, Events, dry-run creates).
* Each checkout in turn (``--order``; ``before`` is ``--baseline-ref``, default main, exported with ``git archive``;
  ``after`` this tree), ``--runs`` times, alternating; the table gives the median of the runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from common import Conn, add_baseline_arguments, checkouts, install_crds, log, measured, print_medians, wait_until
from servers import choose_servers, make_server

HERE = Path(__file__).resolve().parent
QUIET_S = 2.0
ROWS = (
    ("first_ms", "first reconcile: the reconciling thread's CPU per Darkroom (ms)", "{:.2f}"),
    ("first_requests", "first reconcile: requests per Darkroom", "{:.1f}"),
    ("events_ms", "events: the informers' CPU per Darkroom (ms)", "{:.2f}"),
    ("second_ms", "second reconcile: the reconciling thread's CPU per Darkroom (ms)", "{:.2f}"),
    ("second_requests", "second reconcile: requests per Darkroom", "{:.1f}"),
    ("total_ms", "the process's CPU per Darkroom over the three steps (ms)", "{:.2f}"),
)


def measure(kubeconfig: str, namespace: str, count: int) -> dict[str, float]:
    """One run in this process, against ``kubeconfig``'s server, in ``namespace`` (which exists and is empty)."""
    from darkroom_operator.darkrooms import DarkroomReconciler
    from darkroom_operator.runtime.controllers import declare_informers
    from darkroom_operator.runtime.reconciling import Context
    from darkroom_operator.runtime.recording import EventRecorder
    from darkroom_operator.settings import OperatorSettings
    from workloads import darkroom_body

    from cluster import DARKROOMS, DEPLOYMENTS, Cache, CachedClient, ClientSettings, ConnectionSettings, InformerSettings, connect

    settings = OperatorSettings(namespace=namespace, leader_election=False, health_port=-1, identity="bench")
    connection = connect(ConnectionSettings(kubeconfig=Path(kubeconfig)), environ=os.environ)
    user = connect(ConnectionSettings(kubeconfig=Path(kubeconfig)), environ=os.environ)
    sent = [0]
    request = connection.transport.request

    def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            sent[0] += 1
        return request(method, path, *args, **kwargs)

    connection.transport.request = counted  # type: ignore[method-assign]
    cache = Cache(transport=connection.transport, settings=InformerSettings())
    client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager=settings.field_manager))

    def now() -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    context = Context(client=client, recorder=EventRecorder(client=client, settings=settings, now=now), settings=settings, now=now)
    reconciler = DarkroomReconciler(context)
    declare_informers(cache, [reconciler], settings)
    assert cache.start().wait_for_sync(60), "the cache did not sync"
    names = [f"cpu-{i:05d}" for i in range(count)]
    for i, name in enumerate(names):
        body = darkroom_body(name, i)
        body["metadata"]["namespace"] = namespace
        user.transport.request("POST", DARKROOMS.path(namespace=namespace), body=body)
    darkrooms, deployments = cache.informer(DARKROOMS), cache.informer(DEPLOYMENTS)
    assert darkrooms is not None and deployments is not None
    wait_until(lambda: len(darkrooms.store) == count, 120, "the cache to hold every Darkroom")
    keys = [f"{namespace}/{name}" for name in names]

    def reconcile_all() -> tuple[float, int]:
        before, sent[0] = time.thread_time(), 0
        for key in keys:
            reconciler.reconcile(key)
        return time.thread_time() - before, sent[0]

    process_start, thread_start = time.process_time(), time.thread_time()
    first_s, first_requests = reconcile_all()

    def available() -> bool:
        ready = [d for d in deployments.store.list() if ((d.get("status") or {}).get("availableReplicas") or 0) >= 1]
        return len(ready) == count

    wait_until(available, 600, "every Deployment to be available", interval_s=0.5)
    wait_quiet(cache)
    second_s, second_requests = reconcile_all()
    wait_quiet(cache)
    process_s, thread_s = time.process_time() - process_start, time.thread_time() - thread_start
    cache.stop()
    connection.close()
    user.close()
    return {
        "first_ms": first_s / count * 1e3,
        "first_requests": first_requests / count,
        "events_ms": (process_s - thread_s) / count * 1e3,
        "second_ms": second_s / count * 1e3,
        "second_requests": second_requests / count,
        "total_ms": process_s / count * 1e3,
    }


def wait_quiet(cache: Any) -> None:
    """Until no informer of ``cache`` has had an event (or bookmark) for :data:`QUIET_S`."""

    def quiet() -> bool:
        ages = [s.seconds_since_last_event for s in cache.stats()]
        return all(age is None or age >= QUIET_S for age in ages)

    wait_until(quiet, 120, "the watches to be quiet", interval_s=0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", choices=("dev", "real"), default="real", help="the API server (default real)")
    parser.add_argument("--count", type=int, default=300, help="new Darkrooms per run (default 300)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, alternating (default 3)")
    parser.add_argument("--measure", nargs=2, metavar=("KUBECONFIG", "NAMESPACE"), help=argparse.SUPPRESS)  # one run
    add_baseline_arguments(parser, "tree")
    args = parser.parse_args(argv)
    if args.measure:
        from envsettings.startup import skip_kubernetes_validate

        skip_kubernetes_validate()  # as the operator starts: the dev toolchain's validator would add its objects to each GC
        print(json.dumps(measure(args.measure[0], args.measure[1], args.count)))
        return 0
    started = time.monotonic()
    load_start = os.getloadavg()
    kinds, note = choose_servers(args.server)
    if note:
        log(note)
    names = [name.strip() for name in args.order.split(",") if name.strip()]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-reconcile-cpu-") as work:
        trees = checkouts(args, Path(work))
        server = make_server(kinds[0], Path(work) / "server", ready_delay_s=0.5)
        server.start()
        try:
            conn = Conn(server.endpoint)
            install_crds(conn, namespace="reconcile-cpu-0", probe_path="/apis/deployments.example.com/v1/darkrooms")
            for run in range(args.runs):
                for name in names:
                    namespace = f"reconcile-cpu-{run + 1}-{name}"
                    conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
                    root = trees[name]
                    log(f"run {run + 1}/{args.runs}: {name} ({root}), {args.count} Darkrooms in {namespace}")
                    measuring = [str(HERE / "reconcile_cpu.py"), "--count", str(args.count), "--measure", str(server.kubeconfig), namespace]
                    results[name].append(measured(measuring, (root / "operator", root / "lib", root / "lib" / "shared", HERE)))
                    log(f"    {results[name][-1]}")
            conn.close()
        finally:
            server.close()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(argv if argv is not None else sys.argv[1:])
    total = f"{args.count} Darkrooms per run, median of {args.runs} runs; total {time.monotonic() - started:.0f} s"
    title = f"The reconciler's own CPU per new Darkroom on an otherwise idle {kinds[0]} server, {now}"
    print_medians(title, f"bench/reconcile_cpu.py {command}; {total}", load_start[0], names, ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
