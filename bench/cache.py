"""Benchmark cluster/'s informer cache: memory per object, cached vs direct lists, write→cache latency.

Never run by the test suite; run it with::

    .venv/bin/python bench/cache.py            # full: 10,000 Darkrooms, 1,000-object lists, 500 writes
    .venv/bin/python bench/cache.py --quick    # sanity run: 1,000 Darkrooms, 200-object lists, 100 writes

Method
------
* One fresh ``python -m devcluster serve`` subprocess on a free 127.0.0.1 port with a temporary
  data dir (``--log-level WARNING``, default 60 s bookmark interval), the product's CRDs installed.
  ``--objects`` Darkrooms are created in namespaces of ``--list-size`` objects each (8 writer threads,
  raw keep-alive HTTP), each with two labels and a realistic status (two domains, ready replicas,
  observed generation, a Ready condition) written through the status subresource.
* Memory: ``tracemalloc`` traced bytes held after ``gc.collect()`` once one informer over all
  Darkrooms (all namespaces, default indexes) has synced, minus the bytes before it started, divided
  by the number of cached objects. It counts everything the cache keeps: frozen bodies, keys, the
  namespace index. The average JSON size of one object (managedFields included, as served) is
  printed for scale.
* List: the median wall time of ``CachedClient.list(DARKROOMS, namespace=ns)`` (``--list-size``
  objects, sorted, read-your-writes check included) over 200 calls vs the median of 20 calls of the
  official client's ``CustomObjectsApi.list_namespaced_custom_object`` for the same namespace (its
  own JSON decoding into dicts; no typed models), after one warm-up call each, in the same process.
* Latency: a second process (``multiprocessing`` spawn) runs its own connection and an informer on
  one namespace and records ``time.monotonic()`` in an update handler for every event. This process
  merge-patches one Darkroom ``--writes`` times, one write in flight, 5 ms apart, recording when each
  write was sent and when its response arrived. Latency = handler time minus response time ("from ack")
  and minus send time ("from send"), joined on resourceVersion; p50 / p99 over all writes.
  CLOCK_MONOTONIC is shared by the processes of one machine.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import http.client
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, cast

import yaml
from common import HOST, ROOT, ready_status
from common import quantile as percentile

sys.path.insert(0, str(ROOT / "lib"))  # this checkout's cluster/ (and kinds/)

from cluster import DARKROOMS, Cache, CachedClient, ClientSettings, ConnectionSettings, InformerSettings, connect
from tests.clusters import DevclusterProcess


def call(
    conn: http.client.HTTPConnection, method: str, path: str, body: Any = None, content_type: str = "application/json"
) -> dict[str, Any]:
    payload = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=payload, headers={"Content-Type": content_type} if payload else {})
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
    parsed: dict[str, Any] = json.loads(data)
    return parsed


def darkroom(name: str, namespace: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": "darkroom", "team": f"team-{i % 7}"}},
        "spec": {
            "version": "v0.1.0",
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": ["images", "cdn"],
        },
    }


def status(namespace: str, name: str) -> dict[str, Any]:
    return ready_status(
        [f"images.{name}.{namespace}.example.com", f"cdn.{name}.{namespace}.example.com"], message="all replicas serve images"
    )


def populate(port: int, objects: int, per_namespace: int) -> list[str]:
    namespaces = [f"bench-{n}" for n in range((objects + per_namespace - 1) // per_namespace)]
    conn = http.client.HTTPConnection(HOST, port)
    for ns in namespaces:
        call(conn, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    conn.close()
    work = [(namespaces[i // per_namespace], f"dr-{i:05}", i) for i in range(objects)]

    def writer(share: list[tuple[str, str, int]]) -> None:
        c = http.client.HTTPConnection(HOST, port)
        for ns, name, i in share:
            created = call(c, "POST", DARKROOMS.path(namespace=ns), darkroom(name, ns, i))
            created["status"] = status(ns, name)
            call(c, "PUT", DARKROOMS.path(namespace=ns, name=name, subresource="status"), created)
        c.close()

    threads = [threading.Thread(target=writer, args=(work[t::8],)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return namespaces


def watcher_process(kubeconfig: str, namespace: str, ready: Any, results: Any, expected: int) -> None:
    conn = connect(ConnectionSettings(kubeconfig=Path(kubeconfig)), environ={})
    cache = Cache(transport=conn.transport, settings=InformerSettings())
    informer = cache.add(DARKROOMS, namespace=namespace)
    seen: dict[str, float] = {}
    done = threading.Event()

    def on_update(old: Any, new: Any) -> None:
        seen[new["metadata"]["resourceVersion"]] = time.monotonic()
        if len(seen) >= expected:
            done.set()

    informer.add_handler(on_update=on_update)
    cache.start().wait_for_sync(60)
    ready.set()
    done.wait(120)
    results.put(seen)
    cache.stop()
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--objects", type=int)
    parser.add_argument("--list-size", type=int)
    parser.add_argument("--writes", type=int)
    args = parser.parse_args()
    objects = args.objects or (1000 if args.quick else 10_000)
    list_size = args.list_size or (200 if args.quick else 1000)
    writes = args.writes or (100 if args.quick else 500)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    cluster = DevclusterProcess(data_dir, log_level="WARNING").start()
    port, kubeconfig = cluster.port, cluster.kubeconfig
    try:
        conn = http.client.HTTPConnection(HOST, port)
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            call(conn, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(path.read_text()))
        time.sleep(0.5)  # CRDs become Established
        conn.close()
        started = time.monotonic()
        namespaces = populate(port, objects, list_size)
        took_s = time.monotonic() - started
        print(f"populated {objects} Darkrooms in {len(namespaces)} namespaces in {took_s:.1f}s", file=sys.stderr, flush=True)
        connection = connect(ConnectionSettings(kubeconfig=kubeconfig), environ={})

        # -- memory ------------------------------------------------------------------------------
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        cache = Cache(transport=connection.transport, settings=InformerSettings())
        informer = cache.add(DARKROOMS)
        cache.start().wait_for_sync(300)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        cached = len(informer.store)
        sample = connection.transport.request("GET", DARKROOMS.path(namespace=namespaces[0], name="dr-00000"))
        json_bytes = len(json.dumps(sample, separators=(",", ":")))

        # -- list: cache vs the official client --------------------------------------------------
        from kubernetes import client as k8s
        from kubernetes import config as k8s_config

        client = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings())
        official = k8s.CustomObjectsApi(k8s_config.new_client_from_config(config_file=str(kubeconfig)))
        ns = namespaces[0]
        assert len(client.list(DARKROOMS, namespace=ns)) == list_size
        cached_times = []
        for _ in range(200):
            t0 = time.perf_counter()
            client.list(DARKROOMS, namespace=ns)
            cached_times.append(time.perf_counter() - t0)
        listed = cast(dict[str, Any], official.list_namespaced_custom_object(DARKROOMS.group, DARKROOMS.version, ns, DARKROOMS.plural))
        assert len(listed["items"]) == list_size
        direct_times = []
        for _ in range(20):
            t0 = time.perf_counter()
            official.list_namespaced_custom_object(DARKROOMS.group, DARKROOMS.version, ns, DARKROOMS.plural)
            direct_times.append(time.perf_counter() - t0)
        cache.stop()
        official.api_client.close()

        # -- write → visible in another process's cache -----------------------------------------
        ctx = mp.get_context("spawn")
        ready, results = ctx.Event(), ctx.Queue()
        target_ns = namespaces[-1]
        child = ctx.Process(target=watcher_process, args=(str(kubeconfig), target_ns, ready, results, writes))
        child.start()
        if not ready.wait(120):
            raise RuntimeError("watcher process did not sync")
        sent: dict[str, float] = {}
        acked: dict[str, float] = {}
        target = sorted(o["metadata"]["name"] for o in connection.transport.request("GET", DARKROOMS.path(namespace=target_ns))["items"])[0]
        for i in range(writes):
            t0 = time.monotonic()
            result = connection.transport.request(
                "PATCH",
                DARKROOMS.path(namespace=target_ns, name=target),
                body={"metadata": {"annotations": {"bench/i": str(i)}}},
                content_type="application/merge-patch+json",
            )
            t1 = time.monotonic()
            rv = result["metadata"]["resourceVersion"]
            sent[rv], acked[rv] = t0, t1
            time.sleep(0.005)
        seen: dict[str, float] = results.get(timeout=120)
        child.join(30)
        from_ack = [(seen[rv] - acked[rv]) * 1000 for rv in acked if rv in seen]
        from_send = [(seen[rv] - sent[rv]) * 1000 for rv in sent if rv in seen]
        connection.close()
    finally:
        cluster.close()
        shutil.rmtree(data_dir, ignore_errors=True)

    cached_ms = statistics.median(cached_times) * 1000
    direct_ms = statistics.median(direct_times) * 1000
    machine = f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}"
    print(f"\ncluster cache benchmark — {datetime.date.today().isoformat()}, {machine}")
    print(f"command: .venv/bin/python bench/cache.py{' --quick' if args.quick else ''}\n")
    print("| metric | result | target |")
    print("|---|---|---|")
    per_object = f"{held / cached / 1024:.2f} KiB (JSON as served: {json_bytes / 1024:.2f} KiB)"
    print(f"| memory per cached Darkroom at {cached:,} objects | {per_object} | ≤ 8 KiB |")
    print(f"| list {list_size:,} Darkrooms: cache (median of 200) | {cached_ms:.3f} ms | |")
    print(f"| list {list_size:,} Darkrooms: official client, direct (median of 20) | {direct_ms:.1f} ms | |")
    print(f"| list speed-up, cache vs direct | {direct_ms / cached_ms:.0f}x | ≥ 20x |")
    ack = f"{percentile(from_ack, 0.5):.2f} / {percentile(from_ack, 0.99):.2f} ms"
    print(f"| write → visible in another process's cache, from ack, p50 / p99 ({len(from_ack)} writes) | {ack} | p99 ≤ 50 ms |")
    print(f"| same, from send, p50 / p99 | {percentile(from_send, 0.5):.2f} / {percentile(from_send, 0.99):.2f} ms | |")
    missing = writes - len(from_ack)
    if missing:
        print(f"\n{missing} writes were never seen by the other process's cache", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
