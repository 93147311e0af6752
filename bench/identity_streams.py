"""Part 2 of ``bench/identity.py``: live streams held by many people while Darkrooms change.

:func:`measure` runs one configuration on a fresh :class:`panels.Panel` and returns a :class:`StreamRun`:

- ``people``: ``--streams`` ``/watch`` streams held by the 100 people, ``streams / 100`` each (login mode, each
  stream with its person's bearer token, from its person's loopback address);
- ``person``: as many streams, all of one person (``person-000``, whose half of the namespaces is as large as
  everyone's): the single-person figure;
- ``shared``: as many streams in the local mode (the shared identity: no reviews, every stream sees every change).

Once every stream has said ``event: ready``, :func:`change` changes Darkrooms as the reconciler and people
would, paced at ``--rate`` per second, one namespace after the other (so each change reaches the streams of
the people who may list that namespace: in ``people`` half of all streams, in ``person`` all or none): four
in five are a server-side apply of ``status`` by field manager ``darkroom-operator`` (``/status``, as the
reconciler writes it), every fifth a JSON merge patch of ``spec.replicas``. A change's time is taken just before
its request is sent; its identity is the ``resourceVersion`` the answer carries. One change per namespace
first warms up (counted for the rows, not for latency; its reviews cached), and once every stream has received it
``--changes`` are measured.

Measured: delivery latency of every (change, stream that received it), the API process's CPU (gunicorn tree)
and kube-apiserver's per measured change, the reviews sent and answered from the caches in that window, and
for every stream the changes it received against those its person may list (kube-apiserver's answer, read
with the person's own token: :func:`people.listable`): leaked (received, not listable), missing (listable,
not received), duplicated. A stream the server refused or ended counts as mismatched too.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from common import Conn, join_processes, log, nearest_rank, stop_process, wait_until
from panels import Panel, Reviews, reviews_now
from people import World, darkrooms_path
from sseclients import Received, StreamSpec, change_key, swarm

from kinds import darkrooms as darkroom_kind
from tests.clusters import RealclusterProcess

CONFIGS = ("people", "person", "shared")
PROCESSES = 4
STATUS_APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
CHANGES = itertools.count(1)
PROFILES = itertools.count(1)


@dataclass(frozen=True)
class Change:
    namespace: str
    name: str
    key: str  # namespace/name@resourceVersion of the result
    sent_at: float  # CLOCK_MONOTONIC just before the request
    measured: bool


@dataclass
class StreamRun:
    config: str
    streams: int  # that said ready
    changes: int  # measured
    deliveries: int  # (measured change, stream) pairs received
    p50_ms: float
    p99_ms: float
    max_ms: float
    expected: int  # (change, stream) pairs each stream's person may list, warm-up included
    received: int
    leaked: int
    missing: int
    duplicated: int
    mismatched_streams: int
    refused_or_ended: int
    api_cpu_ms: float  # per measured change
    kube_cpu_ms: float
    reviews: Reviews


def specs_for(config: str, world: World, streams: int) -> tuple[list[StreamSpec], dict[int, frozenset[str]]]:
    """The streams of ``config`` and the namespaces each one's person may list (by kube-apiserver's answer)."""
    every = frozenset(world.namespaces)
    if config == "people":
        per = streams // len(world.people)
        specs = [StreamSpec(p * per + k, person.token, f"127.0.1.{1 + p}") for p, person in enumerate(world.people) for k in range(per)]
        allowed = {s.index: world.may_list[world.people[s.index // per].name] for s in specs}
        return specs, allowed
    token = world.people[0].token if config == "person" else ""
    specs = [StreamSpec(i, token, f"127.0.1.{1 + i % 50}") for i in range(streams)]
    visible = world.may_list[world.people[0].name] if config == "person" else every
    return specs, {s.index: visible for s in specs}


class Writer:
    """Changes Darkrooms as the reconciler (status, server-side apply) and people (a spec field) would."""

    def __init__(self, cluster: RealclusterProcess, world: World) -> None:
        self.conn = Conn(cluster.endpoint)
        self.world = world
        self.replicas: dict[tuple[str, str], int] = {}
        self.versions: dict[tuple[str, str], str] = {}

    def target(self, i: int) -> tuple[str, str]:
        namespaces = self.world.namespaces
        namespace = namespaces[i % len(namespaces)]
        names = self.world.darkrooms[namespace]
        return namespace, names[(i // len(namespaces)) % len(names)]

    def change(self, i: int, *, measured: bool) -> Change:
        namespace, name = self.target(i)
        count = next(CHANGES)  # every change of this process: each status message is new, so each apply changes something
        path = f"{darkrooms_path(namespace)}/{name}"
        if count % 5 == 0:
            current = self.replicas.get((namespace, name)) or self.current_replicas(path)
            self.replicas[(namespace, name)] = current % 3 + 1
            body, query, content_type = orjson.dumps({"spec": {"replicas": current % 3 + 1}}), "", MERGE
        else:
            status = {
                "readyReplicas": 1,
                "observedGeneration": 1,
                "domains": [f"images.{name}.example.com", f"cdn.{name}.example.com"],
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2025-01-01T00:00:00Z",
                        "reason": "Available",
                        "message": f"all replicas serve (change {count})",
                    }
                ],
            }
            apply = {
                "apiVersion": darkroom_kind.GROUP_VERSION,
                "kind": "Darkroom",
                "metadata": {"name": name, "namespace": namespace},
            }
            body, content_type = orjson.dumps({**apply, "status": status}), STATUS_APPLY
            path, query = f"{path}/status", "?fieldManager=darkroom-operator&force=true"
        sent_at = time.monotonic()
        code, data = self.conn.request("PATCH", path + query, body, content_type)
        if code != 200:
            raise RuntimeError(f"PATCH {path}: {code} {data[:300]!r}")
        version = orjson.loads(data)["metadata"]["resourceVersion"]
        if self.versions.get((namespace, name)) == version:
            raise RuntimeError(f"PATCH {path} changed nothing: no event would follow")
        self.versions[(namespace, name)] = version
        return Change(namespace, name, change_key(namespace, name, version), sent_at, measured)

    def current_replicas(self, path: str) -> int:
        return int(self.conn.expect(200, "GET", path)["spec"]["replicas"])

    def close(self) -> None:
        self.conn.close()


def paced(writer: Writer, first: int, count: int, rate: float, *, measured: bool) -> list[Change]:
    start = time.monotonic()
    made = []
    for k in range(count):
        delay = start + k / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        made.append(writer.change(first + k, measured=measured))
    return made


def check_rows(received: list[Received], changes: list[Change], allowed: dict[int, frozenset[str]]) -> dict[str, int]:
    """Each stream's received changes against those its person may list."""
    got: dict[int, Counter[str]] = defaultdict(Counter)
    for part in received:
        for stream, key in zip(part.streams, part.changes, strict=True):
            got[stream][key] += 1
    namespace_of = {c.key: c.namespace for c in changes}
    totals = {"expected": 0, "received": 0, "leaked": 0, "missing": 0, "duplicated": 0, "mismatched_streams": 0}
    cut = {s for part in received for s in [*part.refused, *part.ended]}
    for stream, visible in allowed.items():
        expected = {c.key for c in changes if c.namespace in visible}
        seen = got.get(stream, Counter())
        leaked = sum(n for key, n in seen.items() if key not in expected or namespace_of.get(key) not in visible)
        missing = len(expected - set(seen))
        duplicated = sum(n - 1 for key, n in seen.items() if n > 1 and key in expected)
        totals["expected"] += len(expected)
        totals["received"] += sum(seen.values())
        totals["leaked"] += leaked
        totals["missing"] += missing
        totals["duplicated"] += duplicated
        totals["mismatched_streams"] += bool(leaked or missing or duplicated or stream in cut)
    return totals


def latencies_ms(received: list[Received], changes: list[Change]) -> list[float]:
    sent = {c.key: c.sent_at for c in changes if c.measured}
    found = [(t - sent[key]) * 1000 for part in received for t, key in zip(part.times, part.changes, strict=True) if key in sent]
    found.sort()
    return found


def drain(counted: Any, expected: int, *, stall_s: float, cap_s: float = 600.0) -> None:
    """Wait until the streams have received ``expected`` changes, or nothing more arrived for ``stall_s`` (a backlog
    is waited for: a late row is late, not missing), or ``cap_s`` passed."""
    start = last_change = time.monotonic()
    seen = counted.value
    while counted.value < expected and time.monotonic() - last_change < stall_s and time.monotonic() - start < cap_s:
        time.sleep(0.05)
        if counted.value != seen:
            seen, last_change = counted.value, time.monotonic()


@dataclass(frozen=True)
class Options:
    streams: int
    changes: int
    rate: float
    drain_s: float
    env: dict[str, str]
    profile: Path | None = None  # py-spy of the API worker during the measured changes, into this directory


def measure(config: str, *, cluster: RealclusterProcess, world: World, work: Path, opts: Options) -> StreamRun:
    """One configuration on a fresh panel (module docstring)."""
    specs, allowed = specs_for(config, world, opts.streams)
    panel = Panel("local" if config == "shared" else "login", kubeconfig=world.api_kubeconfig, work=work, env=opts.env)
    ctx = mp.get_context("fork")
    stop, ready, counted, results = ctx.Event(), ctx.Value("i", 0), ctx.Value("q", 0), ctx.Queue()
    procs = [ctx.Process(target=swarm, args=(panel.port, specs[k::PROCESSES], stop, ready, counted, results)) for k in range(PROCESSES)]
    writer = Writer(cluster, world)
    received: list[Received] = []
    try:
        for p in procs:
            p.start()
        wait_until(lambda: ready.value >= len(specs), 120, f"{len(specs)} streams to open (opened: {ready.value})", interval_s=0.1)
        worker = panel.worker_pid()
        changes = paced(writer, 0, len(world.namespaces), opts.rate, measured=False)
        drain(counted, sum(sum(1 for c in changes if c.namespace in allowed[s.index]) for s in specs), stall_s=opts.drain_s)
        metrics_token = world.cluster_reader.token if panel.mode == "login" else ""
        reviews0 = reviews_now(panel, cluster.endpoint, token=metrics_token)
        spy = panel.profile(opts.profile / f"{config}-{next(PROFILES)}.txt") if opts.profile else None
        cpu0, kube0 = panel.cpu_seconds(), cluster.cpu_seconds()
        changes += paced(writer, len(world.namespaces), opts.changes, opts.rate, measured=True)
        expected = sum(sum(1 for c in changes if c.namespace in allowed[s.index]) for s in specs)
        drain(counted, expected, stall_s=opts.drain_s)
        api_cpu, kube_cpu = panel.cpu_seconds() - cpu0, cluster.cpu_seconds() - kube0
        if spy is not None:
            stop_process(spy, sig=signal.SIGINT)
        reviews = reviews_now(panel, cluster.endpoint, token=metrics_token) - reviews0
        stop.set()
        received = [results.get(timeout=60) for _ in procs]
        if panel.worker_pid() != worker:
            raise RuntimeError(f"the API's gunicorn worker was restarted during the {config} run: see {panel.log_path}")
    finally:
        stop.set()
        join_processes(procs)
        writer.close()
        panel.stop()
    rows = check_rows(received, changes, allowed)
    lat = latencies_ms(received, changes)
    return StreamRun(
        config=config,
        streams=ready.value,
        changes=opts.changes,
        deliveries=len(lat),
        p50_ms=nearest_rank(lat, 50),
        p99_ms=nearest_rank(lat, 99),
        max_ms=lat[-1] if lat else float("nan"),
        refused_or_ended=len({s for part in received for s in [*part.refused, *part.ended]}),
        api_cpu_ms=api_cpu * 1000 / opts.changes,
        kube_cpu_ms=kube_cpu * 1000 / opts.changes,
        reviews=reviews,
        **rows,
    )


def summary(run: StreamRun) -> str:
    return (
        f"{run.config}: {run.streams} streams, {run.deliveries} deliveries, p50 {run.p50_ms:.1f} ms, p99 {run.p99_ms:.1f} ms,"
        f" max {run.max_ms:.1f} ms, rows {run.received}/{run.expected} (leaked {run.leaked}, missing {run.missing},"
        f" duplicated {run.duplicated}, mismatched streams {run.mismatched_streams}, refused or ended {run.refused_or_ended}),"
        f" API CPU {run.api_cpu_ms:.1f} ms/change,"
        f" reviews sent {run.reviews.token_sent:.0f} token + {run.reviews.access_sent:.0f} access,"
        f" cached {run.reviews.token_cached:.0f} + {run.reviews.access_cached:.0f}"
    )


def run_all(configs: Sequence[str], runs: int, **kwargs: Any) -> dict[str, list[StreamRun]]:
    """``runs`` rounds of every configuration, the order rotating between rounds (drift hits each alike)."""
    found: dict[str, list[StreamRun]] = {c: [] for c in configs}
    for r in range(runs):
        order = list(configs[r % len(configs) :]) + list(configs[: r % len(configs)])
        for config in order:
            run = measure(config, **kwargs)
            found[config].append(run)
            log(f"  streams run {r + 1} {summary(run)}")
    return found
