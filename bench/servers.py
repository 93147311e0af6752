"""Which API servers a benchmark runs (``--server dev|real|both``) and each one laid out in its work dir.

The servers themselves are the tests' cluster processes (``tests/clusters.py``: :class:`DevclusterProcess`,
:class:`RealclusterProcess`, with their audit log, ready delay, CPU seconds, children, endpoint) and their audit logs
are read by ``tests/auditlog.py``; this module only adds what the benchmarks decide around them:

* :func:`choose_servers`: the kinds for ``--server`` (both if realcluster is usable, else dev), building realcluster
  first (``scripts/build_realcluster.sh``, a no-op when it is up to date; without Go a binary that is there is used).
* :func:`make_server`: a server of one kind in a work dir (``<work>/devcluster`` or ``<work>/realcluster`` as its data
  dir, ``<work>/audit.jsonl`` its audit log if asked for; devcluster logs at WARNING).
* :func:`realcluster_version`: the Kubernetes version for a report's header.

Used by the scripts of bench/ and devcluster/bench/; never by the product or the tests.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import common  # noqa: F401  (imported first: it puts the repository root, and so tests/, on sys.path)

from tests.clusters import CLUSTER_KINDS, REALCLUSTER_BIN, DevclusterProcess, RealclusterProcess, make_cluster, run_build


def realcluster_unavailable() -> str:
    """Why the real control plane cannot run here ("" if it can). Runs the build script first, which is
    a no-op when the binary is up to date and needs Go otherwise; a binary that is there is used even
    when the script cannot run (no Go toolchain: exit 3)."""
    try:
        result = run_build("build_realcluster.sh")
        failed = f"exit {result.returncode}: {(result.stderr.strip().splitlines() or ['no output'])[-1]}" if result.returncode else ""
    except OSError as e:
        failed = repr(e)
    if REALCLUSTER_BIN.exists():
        return ""
    return f"realcluster/bin/realcluster is not built and scripts/build_realcluster.sh could not build it ({failed or 'no binary'})"


def choose_servers(server: str | None) -> tuple[list[str], str]:
    """The server kinds for ``--server`` (None: both if realcluster is usable, else dev) and a note for stderr."""
    if server == "dev":
        return ["dev"], ""
    why_not = realcluster_unavailable()
    if server is not None and why_not:
        raise SystemExit(f"--server {server}: {why_not}")
    if why_not:
        return ["dev"], f"note: benchmarking devcluster only: {why_not}"
    return (["real"] if server == "real" else list(CLUSTER_KINDS)), ""


def realcluster_version() -> str:
    """The Kubernetes version realcluster is built from (``realcluster version``), "?" if it does not answer."""
    try:
        out = subprocess.run([str(REALCLUSTER_BIN), "version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out or "?"


def make_server(
    kind: str, work: Path, *, ready_delay_s: float | None = None, audit: bool = False, dev_args: list[str] | None = None
) -> DevclusterProcess | RealclusterProcess:
    """A (not yet started) server of ``kind`` with ``work`` (created if missing) as its work dir. ``ready_delay_s`` is
    devcluster's ``--deployment-ready-delay`` or realcluster's ``--pod-ready-delay`` (None: their default)."""
    work.mkdir(parents=True, exist_ok=True)
    audit_log = work / "audit.jsonl" if audit else None
    data_dir = work / {"dev": "devcluster", "real": "realcluster"}.get(kind, kind)
    return make_cluster(kind, data_dir, ready_delay_s=ready_delay_s, audit_log=audit_log, dev_args=dev_args, log_level="WARNING")
