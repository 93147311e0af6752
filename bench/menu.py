"""The benchmarks, each with its commands and how long each takes: what ``make bench`` prints, and runs one of.

The one list of them (:data:`BENCHMARKS`): ``make bench`` prints it (after installing requirements/bench.txt and
building the Go peer and realcluster when missing), ``make bench RUN=<name> ARGS="..."`` runs one under ``nice -n 15``
(``--run``), and bench/README.md's table is written from it (``--write-readme``; tests/e2e/test_make_bench.py fails
when the table is stale, or when an entry script of bench/ or devcluster/bench/ is missing here). The durations are
those measured in docs/performance.md and the scripts' docstrings, on this 2-core VM; the method of each benchmark
is its module docstring, its results docs/performance.md. Never imported by the product or the tests' servers.

    .venv/bin/python bench/menu.py                                   # the list
    .venv/bin/python bench/menu.py --run api -- --quick              # one, under nice -n 15
    .venv/bin/python bench/menu.py --write-readme                    # bench/README.md's table from the list
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # the repository root: where realcluster is built

from tests.clusters import REALCLUSTER_BIN, ROOT

README = ROOT / "bench" / "README.md"
TABLE_START = "<!-- bench/menu.py: table start (written by `bench/menu.py --write-readme`) -->"
TABLE_END = "<!-- bench/menu.py: table end -->"
NICE = 15  # the machine's cores are shared: benchmarks run under nice, one at a time


@dataclass(frozen=True)
class Run:
    args: str  # the script's arguments ("" for its default run)
    takes: str  # how long, as measured


@dataclass(frozen=True)
class Benchmark:
    name: str  # make bench RUN=<name>
    script: str  # from the repository's root
    what: str
    servers: str  # the API servers it starts
    runs: tuple[Run, ...]  # the first is the one docs/performance.md reports, or the default


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "apiserver",
        "devcluster/bench/apiserver.py",
        "devcluster beside kube-apiserver: create/get/list/patch throughput and latency, watch delivery",
        "both",
        (Run("", "~7 min"), Run("--server dev", "~3 min"), Run("--quick", "~1.5 min")),
    ),
    Benchmark(
        "capacity",
        "devcluster/bench/capacity.py",
        "how far devcluster goes: its RSS per Darkroom, CPU per write and full-LIST time at 1,000 to 100,000 Darkrooms",
        "dev",
        (Run("", "~9 min"), Run("--counts 1000,10000", "~1 min")),
    ),
    Benchmark(
        "api",
        "bench/api.py",
        "the REST API's GET /darkrooms through gunicorn against a no-cache passthrough baseline, 100 and 1,000 Darkrooms",
        "dev",
        (Run("", "~2 min"), Run("--quick", "~30 s")),
    ),
    Benchmark(
        "cache",
        "bench/cache.py",
        "the informer cache: memory per object, cached against direct lists, write → cache latency (10,000 Darkrooms)",
        "dev",
        (Run("", "~2.5 min"),),
    ),
    Benchmark(
        "orders",
        "bench/orders.py",
        "the cache's kept sort orders at 100,000 Darkrooms: memory per order, a list each way, a watch event; main vs this tree",
        "none",
        (Run("", "~1.5 min"), Run("--count 10000 --runs 5", "~1 min")),
    ),
    Benchmark(
        "scale",
        "bench/scale.py",
        "the API and dashboard at 1,000 to 100,000 Darkrooms: start-up, memory, p50/p99 of every read, /watch delivery, a browser walk",
        "both",
        (
            Run("--counts 1000,10000 --server both", "~3 min"),
            Run("--counts 10000 --server dev --gc-pauses", "~1 min"),
            Run("--counts 1000,10000,100000 --server real --gc-pauses --browser", "~11 min"),
            Run("--counts 100000 --server dev --ascending-only", "~17 min"),
        ),
    ),
    Benchmark(
        "streams",
        "bench/streams.py",
        "GET /darkrooms and /healthz while 1,000 SSE clients and 50 slow clients are connected",
        "dev",
        (Run("", "~3 min"), Run("--quick", "~1 min")),
    ),
    Benchmark(
        "reconcile",
        "bench/reconcile.py",
        "the reconciler against the kopf peer and the Go peer: Darkrooms created at once → all Ready, CPU, writes",
        "both",
        (
            Run("--count 100 --runs 1 --server both --operators ours,kopf,go", "~3.5 min"),
            Run("--count 1000 --runs 1 --server dev --operators ours,kopf,go --resync-s 150", "~4.5 min"),
            Run("--server both --count 1000 --runs 3 --resync-s 150", "~25 min"),
        ),
    ),
    Benchmark(
        "reconcile_cpu",
        "bench/reconcile_cpu.py",
        "the reconciler's own CPU per new Darkroom, step by step, and its requests, on an otherwise idle server; main vs this tree",
        "both",
        (Run("", "~3.5 min"), Run("--server dev --count 100 --runs 5", "~2.5 min")),
    ),
    Benchmark(
        "foreign",
        "bench/foreign.py",
        "what everyone else's objects cost the reconciler (its metadata-only watch): memory and CPU per foreign ConfigMap",
        "both",
        (Run("", "~1 min"), Run("--count 100000 --runs 1", "~3 min")),
    ),
    Benchmark(
        "outage",
        "bench/outage.py",
        "the reconciler's convergence after the API server is killed and restarted mid-wave (5,000 Darkrooms)",
        "dev",
        (Run("--count 5000 --outage 5", "~13 min"),),
    ),
    Benchmark(
        "ui",
        "bench/ui.py",
        "the dashboard in 20 tabs: renders per change, change → DOM, CPU per process kind, page render time (chromium)",
        "dev",
        (Run("", "~3 min"), Run("--gap 0.5 --renders 0", "~5.5 min")),
    ),
    Benchmark(
        "tree",
        "bench/tree.py",
        "a detail page's live resource tree: a Pod's status change → the tab's tree shows it",
        "both",
        (Run("--server both", "~3 min"),),
    ),
    Benchmark(
        "logs",
        "bench/logs.py",
        "a Darkroom's pod logs (10 pods, 1,000+ lines each): request → first line, → the 10,000th",
        "both",
        (Run("--server both --runs 10", "~2 min"),),
    ),
    Benchmark(
        "namespaces",
        "bench/namespaces.py",
        "the dashboard's namespace pickers at 100, 2,000 and 20,000 namespaces: bytes and render time",
        "dev",
        (Run("--counts 100,2000,20000 --runs 30", "~1 min"),),
    ),
    Benchmark(
        "identity",
        "bench/identity.py",
        "what per-person identity costs: GET /darkrooms and 1,000 live streams, login mode against the shared identity",
        "real",
        (Run("", "~25 min"), Run("--quick", "~5 min")),
    ),
    Benchmark(
        "combinedtasks",
        "bench/combinedtasks.py",
        "the combinedtasks aggregated server: a Table of 1,000 Tasks against the seed's per-Task lists, watch latency",
        "real",
        (Run("--runs 3", "~10 min"), Run("--tasks 100 --runs 2 --watch-writes 50", "~1 min")),
    ),
    Benchmark(
        "storm",
        "bench/storm.py",
        "a person's spec edit while the reconciler works through a restart's initial list and resyncs: edit → applied",
        "dev",
        (Run("--count 1500 --resync-s 2", "~5 min"),),
    ),
    Benchmark(
        "relist",
        "bench/relist.py",
        "the API's relist after an API server restart at 10,000 Darkrooms: its memory and a page of 50 during it",
        "real",
        (Run("", "~3 min"),),
    ),
)
SERVERS = {
    "dev": "devcluster",
    "real": "the real control plane",
    "both": "devcluster and the real control plane",
    "none": "none (in one process)",
}


def command(benchmark: Benchmark, run: Run) -> str:
    return " ".join(filter(None, [f"nice -n {NICE} .venv/bin/python", benchmark.script, run.args]))


def readiness() -> list[str]:
    """What the benchmarks need beside this venv, and whether it is here."""
    go_peer = ROOT / "bench" / "peers" / "go-darkroom" / "bin" / "go-darkroom"
    py_spy = (Path(sys.executable).parent / "py-spy").exists() or shutil.which("py-spy") is not None
    return [
        f"kopf (the kopf peer): {'installed' if _importable('kopf') else 'missing: make bench installs requirements/bench.txt'}",
        f"py-spy (reconcile.py --profile): {'installed' if py_spy else 'missing: make bench installs requirements/bench.txt'}",
        f"the Go peer: {'built' if go_peer.exists() else 'not built (scripts/build_go_peer.sh; reconcile.py leaves it out)'}",
        f"realcluster: {'built' if REALCLUSTER_BIN.exists() else 'not built (scripts/build_realcluster.sh): devcluster only'}",
    ]


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def menu() -> list[str]:
    lines = [
        "Benchmarks (never part of the test suite; one at a time, under nice: the cores are shared). Nothing runs now;",
        'make bench RUN=<name> ARGS="<arguments>" runs one. Method: each script\'s docstring; results: docs/performance.md.',
        "",
        *(f"  {line}" for line in readiness()),
    ]
    for b in BENCHMARKS:
        lines += ["", f"{b.name}: {b.what} [{SERVERS[b.servers]}]"]
        width = max(len(command(b, r)) for r in b.runs)
        lines += [f"    {command(b, r):<{width}}   {r.takes}" for r in b.runs]
    return lines


def markdown_table() -> list[str]:
    lines = ["| `RUN=` | what it measures | servers | command | takes |", "|---|---|---|---|---|"]
    for b in BENCHMARKS:
        for index, run in enumerate(b.runs):
            first = index == 0
            name, what, servers = (f"`{b.name}`", b.what, SERVERS[b.servers]) if first else ("", "", "")
            lines.append(f"| {name} | {what} | {servers} | `{command(b, run)}` | {run.takes} |")
    return lines


def readme_with_table(text: str) -> str:
    """bench/README.md's ``text`` with the table between its markers written anew."""
    start, end = text.index(TABLE_START), text.index(TABLE_END)
    return text[: start + len(TABLE_START)] + "\n\n" + "\n".join(markdown_table()) + "\n\n" + text[end:]


def run(name: str, args: list[str]) -> int:
    chosen = next((b for b in BENCHMARKS if b.name == name), None)
    if chosen is None:
        print(f"RUN: no benchmark named {name!r}; one of: {', '.join(b.name for b in BENCHMARKS)}", file=sys.stderr)
        return 2
    argv = ["nice", "-n", str(NICE), sys.executable, str(ROOT / chosen.script), *args]
    print(f"make bench: {' '.join(argv)}", file=sys.stderr, flush=True)
    os.chdir(ROOT)
    os.execvp(argv[0], argv)


def main(argv: list[str]) -> int:
    """``[--run NAME [-- ARGS...]]`` (``make bench`` always passes ``--run "$(RUN)" --``: an empty NAME lists them) or
    ``--write-readme``."""
    options, rest = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    if options[:1] == ["--run"] and len(options) == 2:
        if options[1]:
            return run(options[1], rest)
        if rest:
            print(f"ARGS ({' '.join(rest)}) without RUN: say which benchmark, e.g. make bench RUN=api ARGS=--quick", file=sys.stderr)
            return 2
        options = []
    if options == ["--write-readme"]:
        README.write_text(readme_with_table(README.read_text()))
        return 0
    if options:
        print("usage: bench/menu.py [--run NAME [-- ARGS...] | --write-readme]", file=sys.stderr)
        return 2
    print("\n".join(menu()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
