"""How far devcluster goes: its memory, CPU per write and full-LIST time at 1,000, 10,000 and 100,000 Darkrooms.

Never run by the test suite; run it with::

    nice -n 15 .venv/bin/python devcluster/bench/capacity.py                       # 1,000, 10,000 and 100,000 (~15 min)
    nice -n 15 .venv/bin/python devcluster/bench/capacity.py --counts 1000,10000   # ~1.5 min
    nice -n 15 .venv/bin/python devcluster/bench/capacity.py --devcluster-src /tmp/before/devcluster/src   # another
        # checkout's devcluster (``git archive main devcluster/src | tar -x -C /tmp/before``): a before/after

devcluster is ``make api``'s default API server; this says what it costs as the Darkrooms grow, and where it stops
being usable. Method:

* One ``python -m devcluster serve`` (``bench/servers.py``'s dev server: its defaults, ``--history-size`` 10,000,
  data on disk as ``make api`` keeps it) with the product's CRDs and ``bench/scale.py``'s 50 namespaces. Darkrooms
  are added in steps up to each ``--counts`` figure (the same server throughout, as ``bench/scale.py`` grows it):
  each a create and a status write (PUT of the status subresource), ``bench/scale.py``'s bodies, by ``--writers``
  processes of ``--threads`` keep-alive connections.
* At each count:

  - *RSS per Darkroom*: the devcluster process's ``VmRSS`` (``/proc``) after the step minus its ``VmRSS`` before the
    first Darkroom, divided by the count;
  - *CPU per write*: the devcluster process's user+system CPU during the step's writes divided by the writes (two per
    Darkroom: the create and the status write), and the step's wall-clock writes per second;
  - *full LIST*: what an informer's initial list does: ``GET /apis/<group>/v1/darkrooms?limit=500`` across all
    namespaces, then each ``continue`` page until there is none, on one keep-alive connection; checked: every Darkroom
    once, in the first page's resourceVersion. Wall time of the whole LIST (median of ``--list-runs``), its pages, the
    slowest page, and devcluster's CPU for it; then the RSS again, after the LISTs.

Prints one markdown table, a column per count.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from common import Conn, cpu_seconds, exit_on_sigterm, log, machine_summary
from scale import NAMESPACES, populate, prepare
from servers import make_server

from kinds import darkrooms as darkroom_kind
from tests.clusters import ClusterProcess

PAGE = 500  # client-go's informers (the product's) list 500 at a time
LIST_PATH = f"/apis/{darkroom_kind.GROUP_VERSION}/darkrooms"


class ListConn(Conn):
    USER_AGENT = "devcluster-capacity-bench/1"
    RECV_BYTES = 1 << 20


def rss_bytes(pid: int) -> int:
    """``VmRSS`` of ``pid`` (/proc), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@dataclass
class Listed:
    seconds: float
    pages: int
    slowest_page_s: float
    server_cpu_s: float


def full_list(server: ClusterProcess, count: int) -> Listed:
    """One paginated LIST of every Darkroom, checked: each once, every page at the first page's resourceVersion."""
    assert server.proc is not None
    conn = ListConn(server.endpoint)
    seen: set[str] = set()
    pages, slowest, token, revision = 0, 0.0, "", ""
    cpu0, began = cpu_seconds(server.proc.pid), time.perf_counter()
    try:
        while True:
            path = f"{LIST_PATH}?limit={PAGE}" + (f"&continue={quote(token)}" if token else "")
            page_began = time.perf_counter()
            code, body = conn.request("GET", path)
            slowest = max(slowest, time.perf_counter() - page_began)
            if code != 200:
                raise RuntimeError(f"GET {path}: {code}: {body[:300]!r}")
            data = orjson.loads(body)
            pages += 1
            revision = revision or data["metadata"]["resourceVersion"]
            if data["metadata"]["resourceVersion"] != revision:
                raise RuntimeError(f"page {pages} at resourceVersion {data['metadata']['resourceVersion']}, the first at {revision}")
            seen.update(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in data["items"])
            token = data["metadata"].get("continue", "")
            if not token:
                break
    finally:
        conn.close()
    elapsed = time.perf_counter() - began
    if len(seen) != count:
        raise RuntimeError(f"the LIST returned {len(seen)} distinct Darkrooms, expected {count}")
    return Listed(elapsed, pages, slowest, cpu_seconds(server.proc.pid) - cpu0)


@dataclass
class Row:
    count: int
    rss: int
    bytes_per: float
    writes: int
    write_s: float
    cpu_per_write_ms: float
    lists: list[Listed]
    rss_after: int

    @property
    def list_s(self) -> float:
        return statistics.median(x.seconds for x in self.lists)


def measure(work: Path, counts: list[int], args: argparse.Namespace) -> tuple[int, list[Row]]:
    """RSS before any Darkroom, then one :class:`Row` per count."""
    rows: list[Row] = []
    with make_server("dev", work / "dev") as server:
        assert server.proc is not None
        prepare(server)
        time.sleep(0.5)
        base = rss_bytes(server.proc.pid)
        log(f"devcluster RSS with the CRDs and {NAMESPACES} namespaces: {base / 2**20:.1f} MiB")
        have = 0
        for count in counts:
            cpu0 = cpu_seconds(server.proc.pid)
            seconds = populate(server, have, count, writers=args.writers, threads=args.threads)
            writes = 2 * (count - have)
            cpu = cpu_seconds(server.proc.pid) - cpu0
            have = count
            time.sleep(0.5)
            rss = rss_bytes(server.proc.pid)
            log(
                f"{count:,}: {writes:,} writes in {seconds:.1f} s ({writes / seconds:,.0f}/s), {1000 * cpu / writes:.2f} ms CPU "
                f"per write; RSS {rss / 2**20:.1f} MiB"
            )
            lists = []
            for run in range(args.list_runs):
                listed = full_list(server, count)
                log(f"  LIST {run + 1}: {listed.seconds:.2f} s, {listed.pages} pages, slowest page {1000 * listed.slowest_page_s:.0f} ms")
                lists.append(listed)
            rows.append(Row(count, rss, (rss - base) / count, writes, seconds, 1000 * cpu / writes, lists, rss_bytes(server.proc.pid)))
    return base, rows


def table(base: int, rows: list[Row]) -> list[str]:
    def line(label: str, cells: list[str]) -> str:
        return f"| {label} | " + " | ".join(cells) + " |"

    median = statistics.median
    return [
        line("Darkrooms", [f"{r.count:,}" for r in rows]),
        "|---|" + "---:|" * len(rows),
        line(f"devcluster RSS (MiB; {base / 2**20:.1f} before the first Darkroom)", [f"{r.rss / 2**20:.1f}" for r in rows]),
        line("RSS per Darkroom (RSS - RSS before, / count; bytes)", [f"{r.bytes_per:,.0f}" for r in rows]),
        line("devcluster CPU per write (create or status; ms)", [f"{r.cpu_per_write_ms:.2f}" for r in rows]),
        line("writes per second while adding them (create + status each)", [f"{r.writes / r.write_s:,.0f}" for r in rows]),
        line(
            f"full LIST, limit={PAGE} pages (s; median of {len(rows[0].lists)})",
            [f"{r.list_s:.2f}" for r in rows],
        ),
        line("its pages / slowest page (ms)", [f"{r.lists[0].pages} / {1000 * max(x.slowest_page_s for x in r.lists):.0f}" for r in rows]),
        line("devcluster CPU per LIST (s)", [f"{median(x.server_cpu_s for x in r.lists):.2f}" for r in rows]),
        line("devcluster RSS after the LISTs (MiB)", [f"{r.rss_after / 2**20:.1f}" for r in rows]),
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="devcluster's memory, CPU per write and full-LIST time as Darkrooms grow.")
    parser.add_argument("--counts", default="1000,10000,100000", help="Darkroom counts, ascending (default 1000,10000,100000)")
    parser.add_argument("--list-runs", type=int, default=3, help="full LISTs per count; the table shows their median (default 3)")
    parser.add_argument("--writers", type=int, default=2, help="writer processes (default 2)")
    parser.add_argument("--threads", type=int, default=4, help="keep-alive connections per writer process (default 4)")
    parser.add_argument(
        "--devcluster-src", type=Path, default=None, help="run the devcluster package found in this directory (another checkout's src/)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    exit_on_sigterm()
    counts = sorted(int(c.replace("_", "")) for c in args.counts.split(","))
    source = "this checkout"
    if args.devcluster_src is not None:
        if not (args.devcluster_src / "devcluster" / "__main__.py").is_file():
            raise SystemExit(f"--devcluster-src: no devcluster package in {args.devcluster_src}")
        source = str(args.devcluster_src)
        # The server subprocess inherits it: PYTHONPATH comes before the venv's editable install.
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.devcluster_src.resolve()), os.environ.get("PYTHONPATH")]))
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.monotonic()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    work = Path(tempfile.mkdtemp(prefix="bench-capacity-"))
    try:
        base, rows = measure(work, counts, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = " ".join(["devcluster/bench/capacity.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"\ndevcluster capacity, {when}; devcluster from {source}, nice {os.nice(0)}")
    print(f"machine: {machine_summary()}, Python {platform.python_version()}; load average at start {load_before}, at end {load_after}")
    print(
        f"command: .venv/bin/python {command}; {NAMESPACES} namespaces, {args.writers}x{args.threads} writers; "
        f"total {time.monotonic() - started:.0f} s\n"
    )
    for row in table(base, rows):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
