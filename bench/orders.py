"""The cache's kept sort orders at many objects: what each costs in memory, a list each way, a watch event.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python bench/orders.py                          # 100,000 Darkrooms, main vs this tree, 3 runs
    nice -n 15 .venv/bin/python bench/orders.py --count 10000 --runs 5

Method
------
* No API server: one :class:`cluster.stores.Store` in a fresh process per run, as the checkout's API keeps Darkrooms
  (:func:`backend.core.access.kind_store` where it has one: packed, the four orders kept from the start; else frozen,
  with the Darkroom indexes :attr:`backend.core.kinds.darkrooms.DarkroomKind.indexers`), filled with ``--count`` Darkrooms as kube-apiserver
  serves them (``scale.py``'s bodies: 50 namespaces, labels, a Ready status; plus a uid, a resourceVersion, a
  creationTimestamp ~200 to a second and a condition time of their own), one ``ADDED`` each, made as the checkout's
  informer makes them (``share_labels`` before ``freeze`` where it has one).
* Then the dashboard's four orders (:attr:`~backend.core.kinds.darkrooms.DarkroomKind.sorts`: name, namespace, state,
  age), each made by its first list. Its memory is what that first list leaves allocated (``tracemalloc``, the list
  itself dropped), per object; the store's, the process's RSS after a full collection, before and after the fill.
  Each list, ascending and descending (``?sort=<key>``, ``?sort=-<key>``; "age" ascending is youngest first, so it is
  the rows' descending list), is timed 7 times (median). The store with its four orders: RSS after them, before the
  fill. A page: the list by age and its first 50 objects read (a packed store decodes them), 7 times (median); one
  object: ``Store.get`` of 200 keys (median).
* A label selector (``team=team-3``, every seventh Darkroom) over the whole store, in key order and by age, 7 times each
  (median).
* With the four orders kept: 200 ``ADDED`` events (new Darkrooms), 200 ``MODIFIED`` events that change a status
  message only (every order's value unchanged) and 200 that turn a Darkroom's Ready condition False (its state
  changes), each timed around ``Store.apply`` (median, µs).
* Each checkout in turn (``--order``; ``before`` is ``--baseline-ref``, default main, exported with ``git archive``;
  ``after`` this tree), ``--runs`` times, alternating; the table gives the median of the runs. A run imports the
  checkout's own ``lib`` and ``backend`` (``PYTHONPATH``), the bodies come from this tree's ``scale.py`` for both.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

from common import add_baseline_arguments, checkouts, log, measured, print_medians

HERE = Path(__file__).resolve().parent
SORTS = ("name", "namespace", "state", "age")
SELECTOR = "team=team-3"  # every seventh Darkroom (scale.py's labels)
EVENTS = 200
LISTS = 7


def body(i: int) -> dict[str, Any]:
    """Darkroom ``i`` as kube-apiserver serves it (without managedFields, which the informers drop)."""
    from scale import darkroom, name_of, status

    obj = darkroom(i)
    obj["status"] = status(name_of(i))
    obj["metadata"].update(
        uid=str(uuid.UUID(int=i)),
        resourceVersion=str(1_000_000 + i),
        generation=1,
        creationTimestamp=f"2026-12-03T{12 + i // 200 // 3600:02}:{i // 200 // 60 % 60:02}:{i // 200 % 60:02}Z",
    )
    obj["status"]["conditions"][0]["lastTransitionTime"] = f"2026-12-03T13:{i % 60:02}:{i * 7 % 60:02}Z"
    return obj


def rss() -> int:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def measure(count: int) -> dict[str, float]:
    """One run in this process (the checkout's modules on ``PYTHONPATH``): the figures of the table, by name."""
    from backend.core import access, ordering
    from backend.core.kinds.darkrooms import DarkroomKind
    from cluster import bodies
    from cluster.bodies import freeze
    from cluster.selectors import parse
    from cluster.stores import Store

    stored = getattr(bodies, "share_labels", lambda obj: obj)  # what the informer does before freezing, where it exists
    kind_store = getattr(access, "kind_store", None)  # how the API keeps Darkrooms, where the checkout says
    options = {"indexers": DarkroomKind.indexers} if kind_store is None else dict(kind_store(DarkroomKind()))
    store = Store(index_functions=options.pop("indexers"), **options)
    before = rss()
    for i in range(count):
        store.apply("ADDED", freeze(stored(body(i))))
    found: dict[str, float] = {"store": (rss() - before) / count}
    for key in SORTS:
        ascending, descending = (ordering.order_of(sort, DarkroomKind.sorts) for sort in (key, "-" + key))
        tracemalloc.start()
        store.list(order=ascending)  # the list itself is dropped at once: what stays allocated is the order's rows
        found[f"{key} memory"] = tracemalloc.get_traced_memory()[0] / count
        tracemalloc.stop()
        for label, order in (("", ascending), ("-", descending)):
            times = []
            for _ in range(LISTS):
                started = time.perf_counter()
                listed = store.list(order=order)
                times.append(time.perf_counter() - started)
            assert len(listed) == count
            found[f"{label}{key} list"] = statistics.median(times) * 1000
    found["with orders"] = (rss() - before) / count
    by_age = ordering.order_of("age", DarkroomKind.sorts)
    times = []
    for _ in range(LISTS):
        started = time.perf_counter()
        page = [obj["metadata"]["name"] for obj in store.list(order=by_age)[:50]]
        times.append(time.perf_counter() - started)
    assert len(page) == 50
    found["page"] = statistics.median(times) * 1000
    times = []
    for n in range(EVENTS):
        key = f"scale-{n * 397 % count % 50:02}/dr-{n * 397 % count:06}"
        started = time.perf_counter()
        got = store.get(key)
        times.append(time.perf_counter() - started)
        assert got is not None and got["metadata"]["name"] == key.split("/")[1]
    found["get"] = median_us(times)
    selector = parse(SELECTOR)
    for key, order in (("", None), ("age", ordering.order_of("age", DarkroomKind.sorts))):
        times = []
        for _ in range(LISTS):
            started = time.perf_counter()
            listed = store.list(order=order, selector=selector)
            times.append(time.perf_counter() - started)
        assert len(listed) == len(range(3, count, 7))
        found[f"selector {key}"] = statistics.median(times) * 1000
    for event in ("added", "status", "state"):
        times = []
        for n in range(EVENTS):
            obj = body(count + n if event == "added" else n * 397 % count)
            meta, condition = obj["metadata"], obj["status"]["conditions"][0]
            meta["resourceVersion"] = str(5_000_000 + n)
            condition["message"] = f"change {n}"
            if event == "state":
                condition.update(status="False", reason="Unavailable")
            frozen = freeze(stored(obj))
            started = time.perf_counter()
            store.apply("ADDED" if event == "added" else "MODIFIED", frozen)
            times.append(time.perf_counter() - started)
        found[f"{event} event"] = median_us(times)
    return found


ROWS: tuple[tuple[str, str, str], ...] = (
    ("store", "the store before any list: bytes per Darkroom (RSS)", "{:,.0f}"),
    *((f"{k} memory", f"`sort={k}`'s first list: bytes per Darkroom it leaves (tracemalloc)", "{:,.0f}") for k in SORTS),
    ("with orders", "the store with its four orders: bytes per Darkroom (RSS)", "{:,.0f}"),
    *((f"{s}{k} list", f"`sort={s}{k}`: the list (ms, median of {LISTS})", "{:.2f}") for k in SORTS for s in ("", "-")),
    ("selector ", f"`labelSelector={SELECTOR}` in key order: the list (ms, median of {LISTS})", "{:.2f}"),
    ("selector age", f"`labelSelector={SELECTOR}&sort=age`: the list (ms, median of {LISTS})", "{:.2f}"),
    ("page", f"`sort=age`: the list and its first 50 objects read (ms, median of {LISTS})", "{:.2f}"),
    ("get", "one object by key (µs)", "{:.1f}"),
    ("added event", "an ADDED event, four orders kept (µs)", "{:.0f}"),
    ("status event", "a MODIFIED event, status message only (µs)", "{:.0f}"),
    ("state event", "a MODIFIED event that changes the state (µs)", "{:.0f}"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=100_000, help="Darkrooms in the store (default 100,000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, alternating (default 3)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one run, JSON on stdout
    add_baseline_arguments(parser, "tree")
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.count)))
        return 0
    started = time.monotonic()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-orders-") as work:
        trees = checkouts(args, Path(work))
        names = [name.strip() for name in args.order.split(",") if name.strip()]
        results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for run in range(args.runs):
            for name in names:
                root = trees[name]
                log(f"run {run + 1}/{args.runs}: {name} ({root})")
                measuring = [str(HERE / "orders.py"), "--measure", "--count", str(args.count)]
                results[name].append(measured(measuring, (root, root / "lib", root / "lib" / "shared", HERE)))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(argv if argv is not None else sys.argv[1:])
    line = f"bench/orders.py {command}; median of {args.runs} runs; total {time.monotonic() - started:.0f} s"
    print_medians(f"The cache's kept sort orders at {args.count:,} Darkrooms, {now}", line, load_start[0], names, ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
