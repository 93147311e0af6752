"""Fixtures of the differential fidelity suite: both session servers as raw-HTTP endpoints, the report.

The suite needs devcluster AND the real control plane in one session: with ``--cluster=dev`` or
``--cluster=real`` (or when the real control plane could not be built) every test here is skipped
with a one-line reason. ``FIDELITY_DEV_KUBECONFIG`` / ``FIDELITY_REAL_KUBECONFIG`` point the suite at
servers that are already running instead (for working on the corpus without restarting them).

At the end of the session the terminal summary counts the differences seen, by DIFFERENCES.md id,
and names listed entries no sequence matched (candidates for removal once the whole corpus ran); under
pytest-xdist the worker that ran the corpus sends it to the controller (``lanes.summary_section``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fidelity import differences
from fidelity.session import Report, Servers
from fidelity.wire import Endpoint
from tests.clusters import REALCLUSTER_BIN
from tests.lanes import summary_section

_REPORT = pytest.StashKey[Report]()


def _override(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value) if value else None


@pytest.fixture(scope="session")
def servers(request: pytest.FixtureRequest) -> Iterator[Servers]:
    dev_config, real_config = _override("FIDELITY_DEV_KUBECONFIG"), _override("FIDELITY_REAL_KUBECONFIG")
    choice = request.config.getoption("--cluster")
    if real_config is None:
        if choice != "both":
            pytest.skip(f"the fidelity suite compares devcluster with the real control plane; --cluster={choice} leaves one out")
        if not REALCLUSTER_BIN.exists():
            pytest.skip("the fidelity suite needs the real control plane, which could not be built (no Go toolchain)")
        real_config = request.getfixturevalue("realcluster").kubeconfig
    if dev_config is None:
        dev_config = request.getfixturevalue("devcluster").kubeconfig
    pair = Servers(kube=Endpoint.from_kubeconfig("real", real_config), dev=Endpoint.from_kubeconfig("dev", dev_config))
    yield pair
    for endpoint in (pair.kube, pair.dev):
        endpoint.pool.clear()
        if endpoint.ca_file and Path(endpoint.ca_file).name.startswith("fidelity-ca-"):
            Path(endpoint.ca_file).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def report(request: pytest.FixtureRequest) -> Report:
    if _REPORT not in request.config.stash:
        request.config.stash[_REPORT] = Report(differences.load())
    return request.config.stash[_REPORT]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The counts of the corpus for the terminal summary (``lanes.summary_section``: also from an xdist worker)."""
    if _REPORT not in session.config.stash:
        return
    report = session.config.stash[_REPORT]
    if not report.sequences_run:
        return
    seen = sum(len(v) for v in report.listed.values()) + len(report.unlisted)
    lines = [f"{len(report.sequences_run)} sequences, {report.requests} steps per server, {seen} field differences"]
    for entry in report.entries:
        if entry.fixed or entry.id not in report.listed:
            continue
        lines.append(f"  {entry.id} [{entry.status}] {len(report.listed[entry.id]):4d}  {entry.title}")
    if report.unlisted:
        lines.append(f"  UNLISTED {len(report.unlisted)} (failing)")
    silent = [e.id for e in report.entries if not e.fixed and e.patterns and e.id not in report.listed]
    if silent:
        lines.append(f"  listed but not seen in this run: {', '.join(silent)}")
    summary_section(session.config, "fidelity: devcluster vs kube-apiserver", lines)
