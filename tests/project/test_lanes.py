"""tests/lanes.py: which lane a test is in, and how `make test` spreads the lanes over pytest-xdist workers.

Behaviours: a test's lane is its folder's where the folder is a lane of its own (browser, deploy, e2e, devcluster's
conformance and fidelity; devcluster's internals in unit), else what it needs: identity when it uses the identity provider,
cluster when it uses ``kube`` or a session cluster (directly or through other fixtures), unit otherwise; a module's
``pytestmark`` of a lane overrides both, and ``-m <lane>`` selects by it; under xdist (``-n 2 --dist loadscope``) every test
runs exactly once, a module on one cluster kind runs on one worker, and the identity suites and the fidelity corpus run
whole on one worker; units go out longest first, and a worker takes the longest unit of the cluster kind it already runs
(or of none) before switching kinds; a section written with ``summary_section`` in a worker reaches the controller's
terminal summary.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests import lanes
from tests.clusters import ROOT
from tests.sharedfixtures import pairwise_with_kinds


def test_a_folder_of_its_own_names_the_lane_else_the_fixtures_a_test_uses_do() -> None:
    assert lanes.folder_lane("devcluster/tests/internals/test_x.py::test_a") == "unit"
    assert lanes.folder_lane("devcluster/tests/conformance/test_x.py::test_a[dev]") == "devcluster"
    assert lanes.folder_lane("devcluster/tests/fidelity/test_corpus.py::test_sequence[x]") == "devcluster"
    assert lanes.folder_lane("tests/browser/test_forms.py::test_a[real]") == "browser"
    assert lanes.folder_lane("tests/deploy/test_rbac.py::test_a") == "deploy"
    assert lanes.folder_lane("tests/e2e/test_run_api.py::test_a") == "cluster"
    assert lanes.folder_lane("tests/cluster/test_informers.py::test_a[dev]") is None
    assert lanes.folder_lane("tests/somewhere_new/test_x.py::test_a") is None
    assert lanes.lane_of_fixtures(["tmp_path", "monkeypatch"]) == "unit"
    assert lanes.lane_of_fixtures(["http", "app", "access", "api_settings", "kube", "crds_installed"]) == "cluster"
    assert lanes.lane_of_fixtures(["deleter", "realcluster_required", "realcluster"]) == "cluster"
    assert lanes.lane_of_fixtures(["panel", "panel_factory", "teams", "oidc_realcluster", "identity_provider", "kube"]) == "identity"
    assert lanes.lane_of_nodeid("tests/api/test_x.py::test_a[real]") == "cluster"
    assert lanes.lane_of_nodeid("tests/api/test_x.py::test_b") == "unit"
    assert lanes.lane_of_nodeid("tests/browser/test_forms.py::test_a[dev]") == "browser"


def test_a_module_on_one_cluster_kind_is_a_unit_and_the_identity_lane_and_the_fidelity_corpus_are_whole() -> None:
    assert lanes.work_unit("tests/browser/test_forms.py::test_a[dev]") == "tests/browser/test_forms.py[dev]"
    assert lanes.work_unit("tests/browser/test_phone.py::test_b[real-dark]") == "tests/browser/test_phone.py[real]"
    assert lanes.work_unit("tests/kinds/test_kinds.py::test_c[device]") == "tests/kinds/test_kinds.py"
    assert lanes.work_unit("tests/identity/oidc/test_a.py::test_a") == lanes.work_unit("tests/identity/oidc/test_identity_provider.py::t")
    assert lanes.work_unit("devcluster/tests/fidelity/test_corpus.py::test_sequence[a]") == "whole:fidelity"


def test_units_go_out_longest_first_and_a_worker_keeps_to_its_cluster_kind() -> None:
    fuzz = ["tests/api/test_schemathesis.py::test_fuzz_every_operation"]
    units = [f"tests/libs/test_{n}.py::test_a" for n in range(100)]
    assert lanes.estimated_seconds(fuzz) > lanes.estimated_seconds(units)
    queue = [
        ("big[real]", ["tests/api/test_big.py::test_a[real]"] * 20),
        ("mid[dev]", ["tests/api/test_mid.py::test_a[dev]"] * 10),
        ("unit", ["tests/libs/test_u.py::test_a"] * 10),
        ("small[real]", ["tests/api/test_small.py::test_a[real]"]),
    ]
    assert lanes.next_unit(queue, None) == "big[real]"
    assert lanes.next_unit(queue, "real") == "big[real]"
    assert lanes.next_unit(queue, "dev") == "mid[dev]"
    assert lanes.next_unit(queue[2:], "dev") == "unit"  # no kube: no switch either
    assert lanes.next_unit(queue[3:], "dev") == "small[real]"  # nothing of its kind left: it switches


PROJECT = {
    "tests/libs/test_one.py": "import pytest\n\n@pytest.mark.parametrize('n', range(6))\ndef test_u(n, record):\n    record()\n",
    "tests/libs/test_marked.py": "import pytest\n\npytestmark = pytest.mark.browser\n\ndef test_m(record):\n    record()\n",
    "tests/identity/oidc/test_a.py": "def test_a1(panel, record):\n    record()\n\ndef test_a2(identity_provider, record):\n    record()\n",
    "tests/identity/oidc/test_b.py": "def test_b1(panel, record):\n    record()\n\ndef test_b2(panel, record):\n    record()\n",
    "tests/identity/oidc/test_identity_provider.py": "def test_p(identity_provider, record):\n    record()\n",
    "tests/api/test_c.py": (
        "import pytest\n\n@pytest.mark.parametrize('kube', ['dev', 'real'])\n@pytest.mark.parametrize('n', range(3))\n"
        "def test_c(kube, n, record):\n    record()\n"
    ),
    "tests/api/test_d.py": (
        "import pytest\n\n@pytest.mark.parametrize('kube', ['dev', 'real'])\ndef test_d(kube, record):\n    record()\n"
    ),
    "devcluster/tests/fidelity/test_corpus.py": (
        "import pytest\n\n@pytest.mark.parametrize('s', 'abcd')\ndef test_s(s, record):\n    record()\n"
    ),
    "conftest.py": (
        "import os\nimport pytest\nfrom tests.lanes import LANE_NAMES, summary_section\n\n"
        "@pytest.fixture\ndef record(request):\n"
        "    def write():\n"
        "        with open(os.environ['LANES_RECORD'], 'a') as out:\n"
        "            lane = next(m.name for m in request.node.iter_markers() if m.name in LANE_NAMES)\n"
        "            out.write(f\"{request.node.nodeid} {os.environ.get('PYTEST_XDIST_WORKER', 'main')} {lane}\\n\")\n"
        "    return write\n\n"
        "@pytest.fixture\ndef identity_provider():\n    return 'hydra'\n\n"
        "@pytest.fixture\ndef panel(identity_provider):\n    return 'panel'\n\n"
        "def pytest_sessionfinish(session):\n"
        "    summary_section(session.config, 'lanes test', [f\"ran in {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\"])\n"
    ),
}


def run_project(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[str, str]]]:
    """pytest with the lanes plugin over :data:`PROJECT` in a fresh tree: its result, and which worker ran each test and
    in which lane (its lane marker)."""
    project = tmp_path / "project"
    for relative, text in PROJECT.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p tests.lanes --strict-markers -p no:cacheprovider\n")
    record = tmp_path / "record.txt"
    # none of this run's PYTEST_* variables (PYTEST_XDIST_WORKER when this test runs on a worker, PYTEST_ADDOPTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update({"PYTHONPATH": str(ROOT), "LANES_RECORD": str(record)})
    result = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=project, capture_output=True, text=True, timeout=120, env=env)
    lines = record.read_text().splitlines() if record.exists() else []
    ran = {nodeid: (worker, lane) for nodeid, worker, lane in (line.rsplit(" ", 2) for line in lines)}
    return result, ran


def test_under_xdist_every_test_runs_once_with_its_unit_on_one_worker_and_worker_summaries_reach_the_terminal(
    tmp_path: Path,
) -> None:
    result, ran = run_project(tmp_path, "-n", "2", "--dist", "loadscope")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "24 passed" in result.stdout
    assert len(ran) == 24
    workers_of: dict[str, set[str]] = defaultdict(set)
    for nodeid, (worker, _) in ran.items():
        workers_of[lanes.work_unit(nodeid)].add(worker)
    assert all(len(workers) == 1 for workers in workers_of.values()), workers_of
    assert "whole:identity" in workers_of and "whole:fidelity" in workers_of
    assert "tests/api/test_c.py[dev]" in workers_of and "tests/api/test_c.py[real]" in workers_of
    assert "lanes test" in result.stdout and "ran in gw" in result.stdout  # a worker's section, printed by the controller
    assert {(nodeid.split("::")[0], lane) for nodeid, (_, lane) in ran.items()} == {
        ("tests/libs/test_one.py", "unit"),  # no fixture of a lane
        ("tests/libs/test_marked.py", "browser"),  # its module's marker
        ("tests/identity/oidc/test_a.py", "identity"),  # the provider directly, or through ``panel``
        ("tests/identity/oidc/test_b.py", "identity"),
        ("tests/identity/oidc/test_identity_provider.py", "identity"),
        ("tests/api/test_c.py", "cluster"),  # ``kube``
        ("tests/api/test_d.py", "cluster"),
        ("devcluster/tests/fidelity/test_corpus.py", "devcluster"),  # its folder
    }


def test_dash_m_selects_lanes_and_a_module_marker_overrides_what_the_tests_use(tmp_path: Path) -> None:
    result, ran = run_project(tmp_path, "-m", "unit or browser")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted({nodeid.split("::")[0] for nodeid in ran}) == ["tests/libs/test_marked.py", "tests/libs/test_one.py"]
    assert "ran in main" in result.stdout  # the summary section of a serial run
    result, ran = run_project(tmp_path / "none", "-m", "deploy")
    assert (result.returncode, ran) == (5, {})  # no test of the lane: pytest's "no tests ran", a failure for make


def test_looks_are_spread_pairwise_over_the_cluster_kinds() -> None:
    looks = [(size, scheme) for size in ("wide", "phone") for scheme in ("light", "dark")]
    runs = pairwise_with_kinds(("dev", "real"), looks)
    assert len(runs) == 4 and sorted(look for _, look in runs) == sorted(looks)  # every look once
    for kind in ("dev", "real"):  # every kind meets every width and every scheme
        assert {look[0] for k, look in runs if k == kind} == {"wide", "phone"}
        assert {look[1] for k, look in runs if k == kind} == {"light", "dark"}
    assert pairwise_with_kinds(("dev",), looks) == [("dev", look) for look in looks]  # one kind: all of them
    # two looks that cannot cover both kinds' pairs once each: each kind gets both
    assert pairwise_with_kinds(("dev", "real"), [("a",), ("b",)]) == [("dev", ("a",)), ("dev", ("b",)), ("real", ("a",)), ("real", ("b",))]
