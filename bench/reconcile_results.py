"""The results of ``bench/reconcile.py`` and the markdown tables printed from them, one table per ``--kind``.

Used by ``bench/reconcile.py`` only. A :class:`RunResult` is one (server, workload, operator) run;
:func:`tables` prints, per workload, one row per metric and per server one column per operator with
the median over ``--runs``, and a ratio column where a baseline ran in the same invocation:

* ``darkroom``: a column per operator, ``kopf / ours`` when both ran (the output of the benchmark
  before ``--kind`` existed, unchanged), ``go / ours`` when ours and the Go peer ran;
* ``postgresql``: ours only (the kopf and Go peers know Darkrooms only: a note says so); no ratio;
* ``mixed``: ours, and when the same invocation also ran ``darkroom`` for ours (its Darkroom count
  is the mixed run's), that run as the baseline column and ``mixed / Darkrooms only``.

Non-Darkroom tables add one row per written resource (the audit-log breakdown of the writes until
converged) and notes: the writes by request per server, and every request a resync wrote.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workloads import Workload

NAMES = {"ours": "darkroom-operator", "kopf": "kopf peer", "go": "Go peer"}
PEERS = ("kopf", "go")  # the operators compared with ours (a ratio column each)
Results = dict[tuple[str, str, str], list["RunResult"]]  # (server, workload, operator) -> runs


@dataclass
class RunResult:
    server: str
    operator: str
    time_to_ready_s: float
    create_s: float
    latency_p50_s: float
    latency_p99_s: float
    reconciles: int
    writes: int
    writes_detail: str
    peak_rss_mib: float
    cpu_s: float
    server_cpu_s: float
    controllers_cpu_s: float | None
    workload: str = "darkroom"
    writes_by_resource: dict[str, int] = field(default_factory=dict)
    resync_writes: int | None = None
    resync_detail: str = ""
    resync_requests: str = ""
    resync_s: float | None = None
    restart_writes: int = 0
    restart_detail: str = ""
    restart_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ready_per_s(self) -> float:
        return int(self.extra["count"]) / self.time_to_ready_s

    @property
    def reconciles_per_s(self) -> float:
        return self.reconciles / self.time_to_ready_s


# --------------------------------------------------------------------------------------------
# Rows


Row = tuple[str, Callable[[RunResult], float | None], str, str]  # (metric, value, format, text where the value is None)


@dataclass(frozen=True)
class Words:
    """How a workload's rows name its objects."""

    all_ready: str  # "Darkrooms Ready with 4 children"
    plural: str
    one: str
    kopf: bool  # the kopf peer can run it

    @staticmethod
    def of(load: Workload) -> Words:
        if len(load.kinds) > 1:
            return Words(" and ".join(k.plural for k in load.kinds) + " Ready with their children", "objects", "object", kopf=False)
        kind = load.kinds[0]
        ready = "Ready" if kind.key == "darkroom" else "Ready (phase Running)"
        return Words(f"{kind.plural} {ready} with {len(kind.children)} children", kind.plural, kind.singular, kopf=kind.key == "darkroom")


def controllers_cpu(r: RunResult) -> float | None:
    """The controller manager + scheduler row: left out of the table without a real server."""
    return r.controllers_cpu_s


def rows(words: Words, resources: list[str], *, go: bool = False) -> list[Row]:
    """The metric rows; ``resources``: a row each for the writes until converged by resource (empty: none);
    ``go``: the Go peer has a column (the restart row says it has no resync either)."""
    kopf_note = " (handler runs for kopf)" if words.kopf else ""
    restart_note = ("; the peers' only resync" if go else "; kopf's only resync") if words.kopf else ""
    return [
        (f"time until all {words.all_ready} (s)", lambda r: r.time_to_ready_s, "{:.1f}", ""),
        (f"{words.plural} Ready per second", lambda r: r.ready_per_s, "{:.1f}", ""),
        (f"create → Ready per {words.one}, p50 (s)", lambda r: r.latency_p50_s, "{:.1f}", ""),
        (f"create → Ready per {words.one}, p99 (s)", lambda r: r.latency_p99_s, "{:.1f}", ""),
        (f"reconciles{kopf_note}", lambda r: r.reconciles, "{:,.0f}", ""),
        ("reconciles per second", lambda r: r.reconciles_per_s, "{:.1f}", ""),
        ("API writes until converged", lambda r: r.writes, "{:,.0f}", ""),
        *[(f"API writes until converged: {res}", resource_writes(res), "{:,.0f}", "") for res in resources],
        ("operator CPU until all Ready (s)", lambda r: r.cpu_s, "{:.1f}", ""),
        ("API server CPU until all Ready (s; real: kube-apiserver + etcd)", lambda r: r.server_cpu_s, "{:.1f}", ""),
        ("controller manager + scheduler CPU until all Ready (s)", controllers_cpu, "{:.1f}", "n/a (in devcluster)"),
        ("peak RSS of the operator (MiB)", lambda r: r.peak_rss_mib, "{:.0f}", ""),
        ("API writes during a periodic resync of the converged set", lambda r: r.resync_writes, "{:,.0f}", "n/a (no resync)"),
        ("duration of that resync (s)", lambda r: r.resync_s, "{:.1f}", "n/a (no resync)"),
        (f"API writes after a restart (re-handling every {words.one}{restart_note})", lambda r: r.restart_writes, "{:,.0f}", ""),
        (f"time to re-handle every {words.one} after a restart (s)", lambda r: r.restart_s, "{:.1f}", ""),
    ]


def resource_writes(resource: str) -> Callable[[RunResult], float | None]:
    return lambda r: r.writes_by_resource.get(resource, 0)


def written_resources(runs: list[RunResult]) -> list[str]:
    """Every resource written until converged in any of ``runs``, most written first."""
    total: Counter[str] = Counter()
    for r in runs:
        total.update(r.writes_by_resource)
    return [resource for resource, _ in total.most_common()]


# --------------------------------------------------------------------------------------------
# Columns


@dataclass(frozen=True)
class Column:
    """Medians of ``runs``; or, with ``ratio`` = (i, j), the median of column i over that of column j."""

    header: str
    runs: list[RunResult] = field(default_factory=list)
    ratio: tuple[int, int] | None = None


def darkroom_columns(results: Results, servers: list[str], operators: list[str]) -> list[Column]:
    columns: list[Column] = []
    for server in servers:
        where = f" ({server})" if len(servers) == 2 else ""
        first = len(columns)
        columns += [Column(NAMES[k] + where, results[server, "darkroom", k]) for k in operators]
        if "ours" in operators:
            ours = first + operators.index("ours")
            for peer in (p for p in PEERS if p in operators):
                columns.append(Column(f"{peer} / ours{where}", ratio=(first + operators.index(peer), ours)))
    return columns


def ours_columns(key: str, results: Results, servers: list[str], loads: dict[str, Workload]) -> list[Column]:
    """Ours only; for mixed with a Darkroom-only run of ours in the same invocation, that baseline and the ratio."""
    columns: list[Column] = []
    for server in servers:
        where = f" ({server})" if len(servers) == 2 else ""
        baseline = results.get((server, "darkroom", "ours"), []) if key == "mixed" else []
        if not baseline:
            columns.append(Column(NAMES["ours"] + where, results[server, key, "ours"]))
            continue
        first = len(columns)
        columns.append(Column(f"ours, {loads['darkroom'].objects} only{where}", baseline))
        columns.append(Column(f"ours, {loads[key].objects}{where}", results[server, key, "ours"]))
        columns.append(Column(f"mixed / Darkrooms only{where}", ratio=(first + 1, first)))
    return columns


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def cells(row: Row, columns: list[Column]) -> list[str]:
    _, value, fmt, na = row
    medians = [median([value(r) for r in c.runs]) if c.ratio is None else None for c in columns]
    out = []
    for column, m in zip(columns, medians, strict=True):
        if column.ratio is None:
            out.append(fmt.format(m) if m is not None else na)
            continue
        top, bottom = medians[column.ratio[0]], medians[column.ratio[1]]
        out.append(f"{top / bottom:.2f}x" if top is not None and bottom is not None and bottom != 0 else "")
    return out


def table(columns: list[Column], table_rows: list[Row], servers: list[str]) -> str:
    """One row per metric, the columns' medians (and ratios)."""
    header = ["metric", *(c.header for c in columns)]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for row in table_rows:
        if row[1] is controllers_cpu and "real" not in servers:
            continue
        lines.append("| " + " | ".join([row[0], *cells(row, columns)]) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Tables and notes


def notes(key: str, results: Results, servers: list[str], operators: list[str]) -> list[str]:
    """Under a table of ours only: kopf and go skipped, the writes by request, each request a resync wrote."""
    out = []
    if "kopf" in operators:
        out.append("kopf peer: not run for this kind (bench/peers/kopf_darkroom.py reconciles Darkrooms only).")
    if "go" in operators:
        out.append("Go peer: not run for this kind (bench/peers/go-darkroom reconciles Darkrooms only).")
    for server in servers:
        runs = results[server, key, "ours"]
        for detail, n in Counter(r.writes_detail for r in runs).items():
            out.append(f"API writes until converged by request, {server} ({n} of {len(runs)} runs): {detail}.")
        for i, r in enumerate(runs, 1):
            if r.resync_writes:
                out.append(f"resync writes, {server} run {i}: {r.resync_detail}: {r.resync_requests}.")
    return out


def tables(results: Results, servers: list[str], operators: list[str], loads: dict[str, Workload]) -> str:
    """Every workload's table; a heading above each when there are several (one Darkroom table: as before --kind)."""
    parts = []
    for key, load in loads.items():
        runs = [r for (_, k, _), rs in results.items() if k == key for r in rs]
        if key == "darkroom":
            columns = darkroom_columns(results, servers, operators)
            body, extra = table(columns, rows(Words.of(load), [], go="go" in operators), servers), []
        else:
            columns = ours_columns(key, results, servers, loads)
            body = table(columns, rows(Words.of(load), written_resources(runs)), servers)
            extra = notes(key, results, servers, operators)
        heading = [f"### --kind {key}: {load.objects} created at once", ""] if len(loads) > 1 else []
        parts.append("\n".join([*heading, body, *(["", *extra] if extra else [])]))
    return "\n\n".join(parts)
