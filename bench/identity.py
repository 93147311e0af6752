"""Benchmark what per-person identity costs: ``GET /darkrooms`` and live streams, login mode against the shared identity.

Never run by the test suite; run it with::

    .venv/bin/python bench/identity.py                 # full: both parts, 3 runs each (~25 min on 2 busy cores)
    .venv/bin/python bench/identity.py --quick         # sanity run: 1 run, short, 200 streams (~5 min)
    .venv/bin/python bench/identity.py --parts gets    # part 1 only; --parts streams: part 2 only
    .venv/bin/python bench/identity.py --help          # sizes, runs, durations, rate, review cache TTL, ...

Method
------
* The real control plane only: a fresh ``realcluster up`` (``bench/servers.py``; built by
  ``scripts/build_realcluster.sh``), laid out by ``bench/people.py``: 20 namespaces x 50 Darkrooms, the API's own
  ServiceAccount with only what the login mode needs, 100 people (ServiceAccounts with TokenRequest tokens), each
  allowed to list Darkrooms in a different half of the namespaces through RoleBindings of the built-in ``view``
  role (which aggregates our kinds: ``deploy/base/rbac-users.yaml``), a ``reader`` with ``view`` in every namespace
  (RoleBindings: the API asks once per namespace) and a ``cluster-reader`` with ``view`` cluster-wide (one question).
  What each may list is read back from kube-apiserver with their own tokens before anything is measured.
* The product as production serves it (``bench/panels.py``): gunicorn with ``backend/server/gunicorn_conf.py`` and
  ``backend.server.wsgi:app``, as the API's ServiceAccount, in the login mode (a bearer token per request:
  TokenReview, then SubjectAccessReviews for reads of the shared cache, both cached ``review_cache_ttl_s``, 10 s by
  default) and in the local mode (the shared identity: no credentials, no reviews), on the same cluster and data.
* Part 1, ``GET /darkrooms`` (a page: ``?limit=50``; the whole list: 1,000; one namespace: ``?namespace=team-07``),
  each as: the shared identity (local mode), ``reader`` and ``cluster-reader`` (login mode; their bodies are checked
  to equal the shared identity's), and the 100 people in turn (each request the next person's token on their own
  keep-alive connection; each body is their half; for one namespace, the 50 people who may list it).
  ``--clients`` closed-loop clients (separate processes, raw keep-alive HTTP), after one request per token and
  ``--warmup`` s that fill the review caches. Each round, for ``--duration`` s, every client sends one request of
  the shared identity, ``reader`` and ``cluster-reader`` in turn (the order rotating between rounds), so the three
  meet the same machine — on 2 shared cores the only fair way to compare p99s; "added p99" is an identity's p99
  minus the shared identity's in that interleaved run (median over ``--runs`` rounds). The 100 people are not
  interleaved (each person's half would evict the list body the next request reuses: ``backend/core/listing.py``
  keeps one per query): their latencies come from their run alone, against the same round's shared p99. Then
  each identity runs alone for ``--duration`` s: its req/s,
  the API process's CPU per request, and the reviews sent / answered from the caches (the API's
  ``darkroom_api_reviews_total``, summed over the rounds). The caches keep a decision ``review_cache_ttl_s``, so a
  request that comes after its person's decisions expired sends them again (for ``reader``'s whole list: 1 + 20
  SubjectAccessReviews, one after the other). Target: added p99 <= 2 ms (reader, every path).
* Part 2, live streams (``bench/identity_streams.py``): ``--streams`` ``/watch`` streams held by the 100 people, by
  one person, and in the shared identity, each configuration on a fresh panel, during ``--changes`` Darkroom changes
  at ``--rate``/s (after one warm-up change per namespace, delivered before measuring); delivery latency from
  just before each change's request to each stream's receipt, waited for however late (a backlog is late, not
  missing); each stream's rows against its person's listable namespaces; the API's and kube-apiserver's CPU
  per change and the reviews sent in that window. Target: people p99 <= 1.1 x person p99 of the same round (the
  median of the per-round ratios), and 0 mismatched streams. ``--review-ttl`` sets the panels' review cache
  TTL (the product's default is 10 s), to see what the reviews cost; ``--profile DIR`` attaches py-spy.

The machine line records nproc, the load average before and after; the benchmark shares 2 cores with
whatever else runs, so compare rows of one invocation, not across invocations.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import identity_streams
from common import Conn, Endpoint, exit_on_sigterm, join_processes, log, machine_summary, merged_latencies, nearest_rank
from identity_streams import StreamRun
from panels import Panel, Reviews, reviews_now
from people import World, prepare
from servers import choose_servers, realcluster_version

from tests.clusters import RealclusterProcess

TARGET_ADDED_P99_MS = 2.0
TARGET_STREAM_RATIO = 1.10
PATHS = {"page (limit=50)": "/darkrooms?limit=50", "whole list": "/darkrooms", "one namespace": "/darkrooms?namespace=team-07"}
IDENTITIES = ("shared", "reader", "cluster-reader", "100 people")
# Interleaved request by request. Not the 100 people: the list memo (backend/core/listing.py) keeps one body per query,
# so each person's half would evict the body the next lane's request could reuse — their own cost, measured alone.
PAIRED = IDENTITIES[:3]


class GetConn(Conn):
    USER_AGENT = "identity-bench/1"
    RECV_BYTES = 1 << 20


def client(lanes: list[list[Endpoint]], path: str, duration_s: float, barrier: Any, results: Any) -> None:
    """Closed loop: ``GET path`` back to back, one request of each lane in turn (so every lane meets the same machine),
    each lane's requests on the next of its endpoints' keep-alive connections. Latencies per lane."""
    out: dict[str, Any] = {"elapsed": 0.0, "lat": [], "error": ""}
    try:
        conns = [[GetConn(e) for e in lane] for lane in lanes]
        latencies = [array("d") for _ in lanes]
        turns = [0] * len(lanes)
        barrier.wait(60)
        clock = time.perf_counter
        start = clock()
        while clock() - start < duration_s and not out["error"]:
            for k, lane in enumerate(conns):
                i = turns[k] % len(lane)
                turns[k] += 1
                t0 = clock()
                try:
                    code, data = lane[i].request("GET", path)
                except ConnectionError:  # an idle keep-alive connection the server closed: not a measured request
                    lane[i].close()
                    lane[i] = GetConn(lanes[k][i])
                    continue
                latencies[k].append(clock() - t0)
                if code != 200:
                    out["error"] = f"GET {path} -> {code}: {data[:300]!r}"
                    break
        out.update(elapsed=clock() - start, lat=[a.tobytes() for a in latencies])
        for lane in conns:
            for conn in lane:
                conn.close()
    except Exception as e:  # reported to the parent, which fails the run
        out["error"] = f"client crashed: {e!r}"
    results.put(out)


@dataclass
class Latency:
    p50_ms: float
    p99_ms: float
    max_ms: float


def latency(outs: list[dict[str, Any]], lane: int) -> Latency:
    lat = merged_latencies([{"lat": o["lat"][lane]} for o in outs])
    return Latency(nearest_rank(lat, 50) * 1000, nearest_rank(lat, 99) * 1000, lat[-1] * 1000)


def load(
    lanes: list[list[Endpoint]], path: str, *, clients: int, duration_s: float, panels: list[Panel]
) -> tuple[list[Latency], float, float]:
    """``clients`` processes running :func:`client`; each lane's latencies, requests per second in all, and the CPU
    seconds ``panels`` used per request. Client ``c`` starts each lane at its ``c``-th endpoint (different people at once)."""
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(clients + 1), ctx.Queue()
    procs = [
        ctx.Process(target=client, args=([lane[c:] + lane[:c] for lane in lanes], path, duration_s, barrier, results), daemon=True)
        for c in range(clients)
    ]
    for p in procs:
        p.start()
    try:
        barrier.wait(120)
        cpu0 = sum(p.cpu_seconds() for p in panels)
        outs = [results.get(timeout=duration_s + 120) for _ in procs]
        cpu = sum(p.cpu_seconds() for p in panels) - cpu0
    finally:
        join_processes(procs)
    errors = [o["error"] for o in outs if o["error"]]
    if errors:
        raise RuntimeError(errors[0])
    count = sum(len(lane) for o in outs for lane in o["lat"]) // 8  # 8 bytes a latency
    rps = sum(len(lane) / 8 / o["elapsed"] for o in outs for lane in o["lat"] if o["elapsed"] > 0)
    return [latency(outs, k) for k in range(len(lanes))], rps, cpu / max(1, count)


def endpoints_of(identity: str, path: str, world: World, shared: Panel, login: Panel) -> tuple[Panel, list[Endpoint]]:
    """Where ``identity``'s requests go, with which tokens (of one namespace, the people who may list it)."""
    if identity == "shared":
        return shared, [shared.endpoint()]
    if identity == "reader":
        return login, [login.endpoint(world.reader.token)]
    if identity == "cluster-reader":
        return login, [login.endpoint(world.cluster_reader.token)]
    namespace = parse_qs(urlsplit(path).query).get("namespace", [""])[0]
    return login, [login.endpoint(p.token) for p in world.people if not namespace or namespace in world.may_list[p.name]]


def warm(panel: Panel, endpoints: list[Endpoint], path: str) -> None:
    """One request per endpoint: every token reviewed and every decision its body needs cached."""
    for endpoint in endpoints:
        code, body = panel.get(path, endpoint.token)
        if code != 200:
            raise RuntimeError(f"warm-up GET {path} -> {code}: {body[:300]!r}")


def check_bodies(world: World, shared: Panel, login: Panel) -> None:
    """The readers see exactly what the shared identity sees; each person their half (by kube-apiserver's answer)."""
    for path in PATHS.values():
        code, expected = shared.get(path)
        for who in (world.reader, world.cluster_reader):
            code, body = login.get(path, who.token)
            if code != 200 or body != expected:
                raise RuntimeError(f"{who.name}'s {path} differs from the shared identity's ({code}, {len(body)} vs {len(expected)} bytes)")
    for person in world.people[:5]:
        code, body = login.get("/darkrooms", person.token)
        total = sum(len(world.darkrooms[ns]) for ns in world.may_list[person.name])
        if code != 200 or f'"total":{total}}}'.encode() not in body:
            raise RuntimeError(f"{person.name}'s /darkrooms does not hold the {total} Darkrooms it may list ({code})")


@dataclass
class GetRow:
    path: str
    identity: str
    paired: list[Latency]  # per round, requests interleaved with the other identities'
    added_p99_ms: list[float]  # per round: this p99 - the shared identity's p99 of the same interleaved run
    alone_rps: list[float]  # per round, this identity alone
    alone_cpu_ms: list[float]  # the API process's CPU per request, alone
    reviews: Reviews  # sent and answered from the caches during this identity's runs alone


def measure_gets(cluster: RealclusterProcess, world: World, work: Path, args: argparse.Namespace) -> list[GetRow]:
    env = {"DARKROOM_API_REVIEW_CACHE_TTL_S": str(args.review_ttl)} if args.review_ttl is not None else {}
    shared = Panel("local", kubeconfig=world.api_kubeconfig, work=work, env=env)
    login = Panel("login", kubeconfig=world.api_kubeconfig, work=work, env=env)
    rows: list[GetRow] = []

    def reviews() -> Reviews:
        return reviews_now(login, cluster.endpoint, token=world.cluster_reader.token)

    try:
        check_bodies(world, shared, login)
        for label, path in PATHS.items():
            targets = {i: endpoints_of(i, path, world, shared, login) for i in IDENTITIES}
            found = {i: GetRow(label, i, [], [], [], [], Reviews()) for i in IDENTITIES}
            for panel, endpoints in targets.values():
                warm(panel, endpoints, path)
            load([e for _, e in targets.values()], path, clients=args.clients, duration_s=args.warmup, panels=[])
            for r in range(args.runs):
                order = PAIRED[r % len(PAIRED) :] + PAIRED[: r % len(PAIRED)]
                paired, _, _ = load([targets[i][1] for i in order], path, clients=args.clients, duration_s=args.duration, panels=[])
                by_identity = dict(zip(order, paired, strict=True))
                for identity in IDENTITIES:
                    row, panel = found[identity], targets[identity][0]
                    before = reviews()
                    alone, rps, cpu = load([targets[identity][1]], path, clients=args.clients, duration_s=args.duration, panels=[panel])
                    row.reviews = row.reviews + (reviews() - before)
                    row.alone_rps.append(rps)
                    row.alone_cpu_ms.append(cpu * 1000)
                    by_identity.setdefault(identity, alone[0])
                    row.paired.append(by_identity[identity])
                    row.added_p99_ms.append(by_identity[identity].p99_ms - by_identity["shared"].p99_ms)
                lat = ", ".join(f"{i} p50 {by_identity[i].p50_ms:.2f} p99 {by_identity[i].p99_ms:.2f}" for i in IDENTITIES)
                log(f"  {label} round {r + 1}: {lat} ms")
            rows += found.values()
    finally:
        shared.stop()
        login.stop()
    return rows


def med(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def get_table(rows: list[GetRow]) -> tuple[list[str], bool]:
    lines = [
        "| request | identity | p50 ms | p99 ms | max ms | added p99 ms | alone: req/s | alone: API CPU ms/req"
        " | reviews sent (token + access) | answered from the caches | target | result |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    ok = True
    for row in rows:
        target = result = ""
        added = med(row.added_p99_ms)
        if row.identity == "reader":
            target = f"added p99 <= {TARGET_ADDED_P99_MS:g} ms"
            passed = added <= TARGET_ADDED_P99_MS
            result, ok = ("PASS" if passed else "MISS"), ok and passed
        rv = row.reviews
        shared = row.identity == "shared"
        cells = [
            row.path,
            row.identity,
            f"{med([r.p50_ms for r in row.paired]):.2f}",
            f"{med([r.p99_ms for r in row.paired]):.2f}",
            f"{med([r.max_ms for r in row.paired]):.1f}",
            "" if shared else f"{added:+.2f}",
            f"{med(row.alone_rps):,.0f}",
            f"{med(row.alone_cpu_ms):.2f}",
            "—" if shared else f"{rv.token_sent:.0f} + {rv.access_sent:.0f}",
            "—" if shared else f"{rv.token_cached:,.0f} + {rv.access_cached:,.0f}",
            target,
            result,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, ok


def stream_table(found: dict[str, list[StreamRun]]) -> tuple[list[str], bool]:
    lines = [
        "| streams held by | streams | deliveries | p50 ms | p99 ms | max ms | p99 / person | rows received / listable"
        " | leaked | missing | mismatched streams | API CPU ms/change | kube-apiserver CPU ms/change"
        " | reviews sent (token + access) | answered from the caches | target | result |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    ok = True
    people, person = found.get("people", []), found.get("person", [])
    ratios = [a.p99_ms / b.p99_ms for a, b in zip(people, person, strict=False) if b.p99_ms > 0]
    for config, runs in found.items():
        target = result = ""
        ratio = med(ratios) if config == "people" and ratios else float("nan")
        mismatched = max(r.mismatched_streams for r in runs)
        if config == "people" and ratios:
            target = f"p99 <= {TARGET_STREAM_RATIO:.2f} x person, 0 mismatched"
            passed = ratio <= TARGET_STREAM_RATIO and mismatched == 0
            result, ok = ("PASS" if passed else "MISS"), ok and passed
        elif mismatched:
            result, ok = "MISS (rows)", False
        sent = [r.reviews for r in runs]
        label = {"people": "100 people", "person": "1 person", "shared": "shared identity (local mode)"}[config]
        lines.append(
            "| "
            + " | ".join(
                [
                    label,
                    f"{med([r.streams for r in runs]):,.0f}",
                    f"{med([r.deliveries for r in runs]):,.0f}",
                    f"{med([r.p50_ms for r in runs]):.1f}",
                    f"{med([r.p99_ms for r in runs]):.1f}",
                    f"{med([r.max_ms for r in runs]):.1f}",
                    f"{ratio:.2f}" if ratio == ratio else "",
                    f"{sum(r.received for r in runs):,} / {sum(r.expected for r in runs):,}",
                    f"{sum(r.leaked for r in runs)}",
                    f"{sum(r.missing for r in runs)}",
                    f"{sum(r.mismatched_streams for r in runs)}",
                    f"{med([r.api_cpu_ms for r in runs]):.1f}",
                    f"{med([r.kube_cpu_ms for r in runs]):.1f}",
                    f"{med([s.token_sent for s in sent]):.0f} + {med([s.access_sent for s in sent]):.0f}",
                    f"{med([s.token_cached for s in sent]):,.0f} + {med([s.access_cached for s in sent]):,.0f}",
                    target,
                    result,
                ]
            )
            + " |"
        )
    return lines, ok


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Per-person identity against the shared identity: GET /darkrooms and live streams.")
    parser.add_argument("--quick", action="store_true", help="sanity run: 1 run, 1 s per GET row, 200 streams, 20 changes")
    parser.add_argument("--parts", default="gets,streams", help="gets, streams or both (default)")
    parser.add_argument("--runs", type=int, default=3, help="runs per row; tables show medians (default 3)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured GET run (default 3)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of discarded GET warm-up per row (default 1)")
    parser.add_argument("--clients", type=int, default=1, help="closed-loop GET clients (default 1: latency, not capacity)")
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--per-namespace", type=int, default=50, help="Darkrooms per namespace (default 50)")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--streams", type=int, default=1000, help="streams per configuration (default 1000: 10 per person)")
    parser.add_argument("--changes", type=int, default=60, help="measured Darkroom changes per stream run (default 60)")
    parser.add_argument("--rate", type=float, default=2.0, help="changes per second (default 2)")
    parser.add_argument("--configs", default=",".join(identity_streams.CONFIGS), help="stream configurations (default all)")
    parser.add_argument(
        "--review-ttl", type=float, default=None, help="DARKROOM_API_REVIEW_CACHE_TTL_S for the panels (default: the product's)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory (cluster and panel logs) afterwards")
    parser.add_argument("--profile", metavar="DIR", help="py-spy record the API worker during each stream run's changes into DIR")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.duration, args.warmup, args.streams, args.changes = 1, 1.0, 0.5, 200, 20
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    exit_on_sigterm()
    choose_servers("real")  # builds realcluster if need be; exits naming why it cannot run
    parts = set(args.parts.split(","))
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = datetime.datetime.now(datetime.UTC)
    work = Path(tempfile.mkdtemp(prefix="bench-identity-"))
    cluster = RealclusterProcess(work / "realcluster")
    get_rows: list[GetRow] = []
    streams: dict[str, list[StreamRun]] = {}
    try:
        cluster.start()
        t0 = time.monotonic()
        world = prepare(cluster.endpoint, work, namespaces=args.namespaces, per_namespace=args.per_namespace, people=args.people)
        log(f"laid out {world.total} Darkrooms, {len(world.people)} people in {time.monotonic() - t0:.0f} s")
        if "gets" in parts:
            get_rows = measure_gets(cluster, world, work, args)
        if "streams" in parts:
            env = {"DARKROOM_API_REVIEW_CACHE_TTL_S": str(args.review_ttl)} if args.review_ttl is not None else {}
            profile = Path(args.profile).resolve() if args.profile else None
            if profile is not None:
                profile.mkdir(parents=True, exist_ok=True)
            opts = identity_streams.Options(
                streams=args.streams, changes=args.changes, rate=args.rate, drain_s=15.0, env=env, profile=profile
            )
            streams = identity_streams.run_all(args.configs.split(","), args.runs, cluster=cluster, world=world, work=work, opts=opts)
    finally:
        cluster.close()
        if args.keep:
            log(f"kept {work} (logs of the cluster and of every panel)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return report(args, argv, started, load_before, get_rows, streams)


def report(
    args: argparse.Namespace,
    argv: list[str] | None,
    started: datetime.datetime,
    load_before: str,
    get_rows: list[GetRow],
    streams: dict[str, list[StreamRun]],
) -> int:
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = " ".join(["bench/identity.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"\nPer-person identity vs the shared identity - {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_summary()}, Python {platform.python_version()}, Kubernetes {realcluster_version()} (realcluster)")
    print(f"load average before: {load_before}, after: {load_after}")
    print(f"command: .venv/bin/python {command} (median of {args.runs} runs)")
    ok = True
    tables: list[tuple[str, Callable[[], tuple[list[str], bool]]]] = []
    if get_rows:
        tables.append((f"\nGET /darkrooms, {args.clients} client(s), {args.duration:g} s per run:\n", lambda: get_table(get_rows)))
    if streams:
        what = f"{args.streams:,} streams, {args.changes} changes at {args.rate:g}/s"
        tables.append((f"\nLive streams ({what}):\n", lambda: stream_table(streams)))
    for title, make in tables:
        lines, passed = make()
        print(title)
        print("\n".join(lines))
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
