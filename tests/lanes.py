"""Test lanes: every test of both trees belongs to exactly one lane, named by what it needs (a pytest plugin: ``-p tests.lanes``).

=============  ==============================================================  =================================================
lane           what runs there                                                 needs
=============  ==============================================================  =================================================
``unit``       every test that needs no server (no fixture below), and         no server (a few run short subprocesses)
               devcluster/tests/internals
``cluster``    tests that use ``kube`` or a session cluster (``realcluster``,  devcluster and the real control plane
               ``devcluster``), directly or through their fixtures, and
               tests/e2e: the product's suites, once per cluster kind
               (``[dev]``, ``[real]``)
``identity``   tests that use the identity provider (``identity_provider``,    the real OIDC provider (ORY Hydra) and a real
               directly or through ``oidc_realcluster``, ``teams``, ``panel``) control plane that trusts it
``browser``    tests/browser                                                   chromium (Playwright), both clusters
``deploy``     tests/deploy: manifests, RBAC on the real control plane         kubectl (kustomize), both clusters
``fuzz``       tests/api/test_schemathesis.py (its module marker)              schemathesis against the whole API, both clusters
``devcluster`` devcluster/tests/conformance, devcluster/tests/fidelity         devcluster and the real control plane side by side
=============  ==============================================================  =================================================

The tests are laid out by what they specify (tests/<package>/ mirrors the product), unit and cluster-backed modules side by
side, so a test's lane comes from what it needs: a ``pytestmark`` of a lane marker in the module first, then the folders
that are lanes of their own (:data:`FOLDER_LANES`: the outside-in suites and devcluster's), then the fixtures it uses,
directly or through other fixtures (``item.fixturenames``, :data:`FIXTURE_LANES`), else ``unit``. ``pytest -m unit`` or
``-m "not browser"`` picks lanes.

Under pytest-xdist (``make test``: ``-n <workers> --dist loadscope``) the plugin supplies the scheduler: a work unit is a
module on one cluster kind (so module-scoped fixtures, such as a browser module's stack, start once per kind, as they do
serially), or more where they belong together (:data:`WHOLE_UNITS`: the identity lane's suites, whose provider and control
plane would be costly to start again in every worker; the fidelity corpus and its summary). Units go out longest first
(:func:`estimated_seconds`), so the long ones do not end the run on one worker while the others idle, and a worker keeps
to one cluster kind while there is work of that kind (:func:`next_unit`). The scheduler sees node ids only (the workers
collect), so it estimates a test's lane from its id (:func:`lane_of_nodeid`: its folder lane, else ``cluster`` when it
runs on a cluster kind). Each worker starts its own session servers (free ports, data dirs under its own basetemp); the
scheduler only decides where and when a test runs, never whether.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

# Folders that are a lane of their own, whatever their tests use (longest prefix wins). Paths are relative to the
# repository root (pytest's rootdir).
FOLDER_LANES: dict[str, str] = {
    "tests/browser/": "browser",
    "tests/deploy/": "deploy",
    "tests/e2e/": "cluster",
    "devcluster/tests/": "devcluster",
    "devcluster/tests/internals/": "unit",
}
# Elsewhere a test's lane is the first of these whose fixtures it uses (directly or through the fixtures it uses), else unit.
FIXTURE_LANES: tuple[tuple[str, frozenset[str]], ...] = (
    ("identity", frozenset({"identity_provider", "oidc_realcluster"})),
    ("cluster", frozenset({"kube", "realcluster", "devcluster", "fresh_devcluster", "fresh_cluster"})),
)
LANE_NAMES = ("unit", "cluster", "identity", "browser", "deploy", "fuzz", "devcluster")
# Tests kept together on one worker, by path prefix: the identity lane's suites, whose session fixtures (Hydra, a control
# plane trusting it, the teams on it) would otherwise start once per worker, and the fidelity corpus, whose summary counts
# what the whole corpus saw in one process.
WHOLE_UNITS: dict[str, str] = {
    "tests/identity/oidc/": "identity",
    "devcluster/tests/fidelity/": "fidelity",
}
# Seconds a test of each lane takes, roughly (the lane's share of a full run on this 2-core machine, by its tests): only
# the order in which work units go out depends on them. Tests on the real control plane ([real]) take longer.
SECONDS_PER_TEST = {"unit": 0.04, "cluster": 1.1, "identity": 3.0, "browser": 4.0, "deploy": 0.75, "fuzz": 60.0, "devcluster": 0.45}
REAL_FACTOR = 1.5
# Units the estimate above misjudges by far (measured, rounded): processes started per test, servers restarted, a whole
# corpus or lane, a lane the node id does not show (fuzz). Stale numbers cost only some balance at the end of a run, never
# a test.
SECONDS_PER_UNIT = {
    "tests/e2e/test_run_api.py": 80.0,
    "whole:identity": 120.0,
    "whole:fidelity": 40.0,
    "tests/api/test_schemathesis.py": 200.0,  # one generation of cases, sent to both kinds
    "tests/dashboard/test_live_rows.py[real]": 30.0,
    "tests/dashboard/test_live_rows.py[dev]": 25.0,
    "tests/aggregator/test_devcluster.py": 16.0,
    "devcluster/tests/conformance/test_persistence.py": 16.0,
    "tests/project/test_realcluster_build.py": 14.0,
    "tests/project/test_lanes.py": 12.0,
    "tests/deploy/test_apply.py": 13.0,
    "tests/deploy/test_release.py": 80.0,
    "tests/deploy/test_chart.py": 50.0,
    "tests/deploy/test_wheel.py": 25.0,  # builds and installs the wheels, runs a devcluster
    "tests/deploy/test_dockerfile.py": 20.0,  # builds and installs the wheels
    "tests/operator/test_upgrade.py[dev]": 90.0,
    "tests/operator/test_upgrade.py[real]": 110.0,
}


def folder_lane(path: str) -> str | None:
    """The lane of a test file (or node id) in one of :data:`FOLDER_LANES`, else None."""
    prefixes = [prefix for prefix in FOLDER_LANES if path.startswith(prefix)]
    return FOLDER_LANES[max(prefixes, key=len)] if prefixes else None


def lane_of_fixtures(fixturenames: list[str] | tuple[str, ...] | set[str]) -> str:
    """The lane of a test that uses ``fixturenames`` (all of them, as ``item.fixturenames`` has them): :data:`FIXTURE_LANES`."""
    for lane, needs in FIXTURE_LANES:
        if needs.intersection(fixturenames):
            return lane
    return "unit"


def lane_of(item: pytest.Item) -> str:
    for marker in item.iter_markers():
        if marker.name in LANE_NAMES:
            return marker.name
    return folder_lane(item.nodeid) or lane_of_fixtures(getattr(item, "fixturenames", ()))


def lane_of_nodeid(nodeid: str) -> str:
    """The lane the scheduler assumes for a test it knows only by id: its folder's, else ``cluster`` when it runs on a
    cluster kind (``[dev]``, ``[real]``: it uses ``kube``), else ``unit``. Only for :func:`estimated_seconds`."""
    return folder_lane(nodeid) or ("cluster" if kind_of(nodeid) else "unit")


def pytest_configure(config: pytest.Config) -> None:
    for name in LANE_NAMES:
        config.addinivalue_line("markers", f"{name}: the {name} lane (tests/lanes.py)")


@pytest.hookimpl(tryfirst=True)  # before -m selects on the markers added here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        lane = lane_of(item)
        if item.get_closest_marker(lane) is None:
            item.add_marker(lane)


_KIND = re.compile(r"[\[-](dev|real)(?=[\]-])")


def kind_of(nodeid: str) -> str:
    """The cluster kind a test runs on (its ``kube`` parameter: ``[dev]``, ``[real-dark]``), '' when none."""
    found = _KIND.search(nodeid)
    return found.group(1) if found else ""


def work_unit(nodeid: str) -> str:
    """The work unit of a test under xdist: the unit of :data:`WHOLE_UNITS` it is in, else its module on its cluster kind.

    A module's ``[dev]`` and ``[real]`` halves are two units: fixtures that depend on ``kube`` (session-scoped and
    parametrized) are set up again whenever a worker switches kinds, module-scoped ones included, so nothing is lost by
    splitting them, and the scheduler keeps each worker on one kind as long as it can (:func:`next_unit`)."""
    for prefix, unit in WHOLE_UNITS.items():
        if nodeid.startswith(prefix):
            return f"whole:{unit}"
    module = nodeid.split("::", 1)[0]
    kind = kind_of(nodeid)
    return f"{module}[{kind}]" if kind else module


def estimated_seconds(nodeids: list[str]) -> float:
    """What a work unit should take, from :data:`SECONDS_PER_UNIT` or :data:`SECONDS_PER_TEST` (for ordering only)."""
    known = SECONDS_PER_UNIT.get(work_unit(nodeids[0]))
    if known is not None:
        return known
    total = 0.0
    for nodeid in nodeids:
        seconds = SECONDS_PER_TEST[lane_of_nodeid(nodeid)]
        total += seconds * REAL_FACTOR if kind_of(nodeid) == "real" else seconds
    return total


def next_unit(queue: list[tuple[str, list[str]]], kind: str | None) -> str:
    """Which unit a worker gets next: the longest of its cluster kind or of none (a worker that switches kinds sets up
    the session fixtures on ``kube`` again; one that never runs a ``[real]`` test never starts a real control plane),
    else the longest. ``queue`` is (unit, node ids), longest first; ``kind`` the worker's so far (None: nothing yet)."""
    if kind:
        for unit, nodeids in queue:
            if kind_of(nodeids[0]) in (kind, ""):
                return unit
    return queue[0][0]


def _scheduler_class() -> type[Any]:
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """xdist's loadscope with :func:`work_unit` as the scope, handed out longest first by :func:`next_unit`."""

        workqueue: OrderedDict[str, dict[str, bool]]  # scope -> {nodeid: done}, in the order units go out
        _ordered = False
        _kinds: dict[WorkerController, str]

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: WorkerController) -> None:
            if not self._ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: -estimated_seconds(list(unit[1])))
                self.workqueue = OrderedDict(units)
                self._ordered, self._kinds = True, {}
            unit = next_unit([(scope, list(tests)) for scope, tests in self.workqueue.items()], self._kinds.get(node))
            kind = kind_of(next(iter(self.workqueue[unit])))
            if kind:
                self._kinds[node] = kind
            self.workqueue.move_to_end(unit, last=False)  # the base class hands out the first unit
            super()._assign_work_unit(node)

    return LaneScheduling


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadscope":
        return None
    return _scheduler_class()(config, log)


# --- terminal summary sections written where the tests ran --------------------------------------------------------------

_SECTIONS = pytest.StashKey[list[tuple[str, list[str]]]]()
_WORKER_OUTPUT_KEY = "lanes_summary_sections"


def summary_section(config: pytest.Config, title: str, lines: list[str]) -> None:
    """Add a section to the terminal summary, from a ``pytest_sessionfinish`` of the process that ran the tests: printed
    at the end of the run by this process, or under xdist sent to the controller and printed there (a worker's own
    terminal summary is never shown)."""
    worker_output = getattr(config, "workeroutput", None)
    if worker_output is not None:
        worker_output.setdefault(_WORKER_OUTPUT_KEY, []).append((title, lines))
    else:
        config.stash.setdefault(_SECTIONS, []).append((title, lines))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: a worker finished, with its workeroutput
def pytest_testnodedown(node: WorkerController, error: object) -> None:
    for title, lines in getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT_KEY, []):
        node.config.stash.setdefault(_SECTIONS, []).append((title, lines))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    for title, lines in config.stash.get(_SECTIONS, []):
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
