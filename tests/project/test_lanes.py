"""tests/lanes.py: which lane a test is in, and how `make test` spreads the lanes over pytest-xdist workers.

Behaviours: a test's lane follows the longest matching folder (identity and fuzz inside integration, devcluster's
internals in unit), a module's ``pytestmark`` of a lane overrides it, and ``-m <lane>`` selects by it; under xdist
(``-n 2 --dist loadscope``) every test runs exactly once, a module on one cluster kind runs on one worker, and the
identity lane and the fidelity corpus run whole on one worker; units go out longest first, and a worker takes the
longest unit of the cluster kind it already runs (or of none) before switching kinds; a section written with
``summary_section`` in a worker reaches the controller's terminal summary.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests import lanes
from tests.support import ROOT


def test_the_longest_matching_folder_names_the_lane() -> None:
    assert lanes.lane_of_path("tests/unit/cluster/test_x.py::test_a") == "unit"
    assert lanes.lane_of_path("devcluster/tests/internals/test_x.py::test_a") == "unit"
    assert lanes.lane_of_path("devcluster/tests/conformance/test_x.py::test_a[dev]") == "devcluster"
    assert lanes.lane_of_path("devcluster/tests/fidelity/test_corpus.py::test_sequence[x]") == "devcluster"
    assert lanes.lane_of_path("tests/integration/identity/test_x.py::test_a") == "identity"
    assert lanes.lane_of_path("tests/identity/oidc/test_identity_provider.py::test_a") == "identity"
    assert lanes.lane_of_path("tests/api/test_schemathesis.py::test_fuzz[dev]") == "fuzz"
    assert lanes.lane_of_path("tests/server/test_front.py::test_a[dev]") == "cluster"
    assert lanes.lane_of_path("tests/e2e/test_run_api.py::test_a") == "cluster"
    assert lanes.lane_of_path("tests/browser/test_forms.py::test_a[real]") == "browser"
    assert lanes.lane_of_path("tests/deploy/test_rbac.py::test_a") == "deploy"
    assert lanes.lane_of_path("tests/somewhere_new/test_x.py::test_a") == "cluster"


def test_a_module_on_one_cluster_kind_is_a_unit_and_the_identity_lane_and_the_fidelity_corpus_are_whole() -> None:
    assert lanes.work_unit("tests/browser/test_forms.py::test_a[dev]") == "tests/browser/test_forms.py[dev]"
    assert lanes.work_unit("tests/browser/test_phone.py::test_b[real-dark]") == "tests/browser/test_phone.py[real]"
    assert lanes.work_unit("tests/kinds/test_kinds.py::test_c[device]") == "tests/kinds/test_kinds.py"
    assert lanes.work_unit("tests/integration/identity/test_a.py::test_a") == lanes.work_unit(
        "tests/identity/oidc/test_identity_provider.py::t"
    )
    assert lanes.work_unit("devcluster/tests/fidelity/test_corpus.py::test_sequence[a]") == "whole:fidelity"


def test_units_go_out_longest_first_and_a_worker_keeps_to_its_cluster_kind() -> None:
    fuzz = ["tests/api/test_schemathesis.py::test_fuzz[real]"]
    units = [f"tests/unit/test_{n}.py::test_a" for n in range(100)]
    assert lanes.estimated_seconds(fuzz) > lanes.estimated_seconds(units)
    queue = [
        ("big[real]", ["tests/integration/backend/test_big.py::test_a[real]"] * 20),
        ("mid[dev]", ["tests/integration/backend/test_mid.py::test_a[dev]"] * 10),
        ("unit", ["tests/unit/test_u.py::test_a"] * 10),
        ("small[real]", ["tests/integration/backend/test_small.py::test_a[real]"]),
    ]
    assert lanes.next_unit(queue, None) == "big[real]"
    assert lanes.next_unit(queue, "real") == "big[real]"
    assert lanes.next_unit(queue, "dev") == "mid[dev]"
    assert lanes.next_unit(queue[2:], "dev") == "unit"  # no kube: no switch either
    assert lanes.next_unit(queue[3:], "dev") == "small[real]"  # nothing of its kind left: it switches


PROJECT = {
    "tests/unit/test_one.py": "import pytest\n\n@pytest.mark.parametrize('n', range(6))\ndef test_u(n, record):\n    record()\n",
    "tests/unit/test_marked.py": "import pytest\n\npytestmark = pytest.mark.browser\n\ndef test_m(record):\n    record()\n",
    "tests/integration/identity/test_a.py": "def test_a1(record):\n    record()\n\ndef test_a2(record):\n    record()\n",
    "tests/integration/identity/test_b.py": "def test_b1(record):\n    record()\n\ndef test_b2(record):\n    record()\n",
    "tests/identity/oidc/test_identity_provider.py": "def test_p(record):\n    record()\n",
    "tests/integration/backend/test_c.py": (
        "import pytest\n\n@pytest.mark.parametrize('kube', ['dev', 'real'])\n@pytest.mark.parametrize('n', range(3))\n"
        "def test_c(kube, n, record):\n    record()\n"
    ),
    "tests/integration/backend/test_d.py": (
        "import pytest\n\n@pytest.mark.parametrize('kube', ['dev', 'real'])\ndef test_d(kube, record):\n    record()\n"
    ),
    "devcluster/tests/fidelity/test_corpus.py": (
        "import pytest\n\n@pytest.mark.parametrize('s', 'abcd')\ndef test_s(s, record):\n    record()\n"
    ),
    "conftest.py": (
        "import os\nimport pytest\nfrom lanes import summary_section\n\n"
        "@pytest.fixture\ndef record(request):\n"
        "    def write():\n"
        "        with open(os.environ['LANES_RECORD'], 'a') as out:\n"
        "            out.write(f\"{request.node.nodeid} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n\")\n"
        "    return write\n\n"
        "def pytest_sessionfinish(session):\n"
        "    summary_section(session.config, 'lanes test', [f\"ran in {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\"])\n"
    ),
}


def run_project(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """pytest with the lanes plugin over :data:`PROJECT` in a fresh tree: its result, and which worker ran each test."""
    project = tmp_path / "project"
    for relative, text in PROJECT.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p lanes --strict-markers -p no:cacheprovider\n")
    record = tmp_path / "record.txt"
    # none of this run's PYTEST_* variables (PYTEST_XDIST_WORKER when this test runs on a worker, PYTEST_ADDOPTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update({"PYTHONPATH": str(ROOT / "tests"), "LANES_RECORD": str(record)})
    result = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=project, capture_output=True, text=True, timeout=120, env=env)
    ran = dict(line.rsplit(" ", 1) for line in record.read_text().splitlines()) if record.exists() else {}
    return result, ran


def test_under_xdist_every_test_runs_once_with_its_unit_on_one_worker_and_worker_summaries_reach_the_terminal(
    tmp_path: Path,
) -> None:
    result, ran = run_project(tmp_path, "-n", "2", "--dist", "loadscope")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "24 passed" in result.stdout
    assert len(ran) == 24
    workers_of: dict[str, set[str]] = defaultdict(set)
    for nodeid, worker in ran.items():
        workers_of[lanes.work_unit(nodeid)].add(worker)
    assert all(len(workers) == 1 for workers in workers_of.values()), workers_of
    assert "whole:identity" in workers_of and "whole:fidelity" in workers_of
    assert "tests/integration/backend/test_c.py[dev]" in workers_of and "tests/integration/backend/test_c.py[real]" in workers_of
    assert "lanes test" in result.stdout and "ran in gw" in result.stdout  # a worker's section, printed by the controller


def test_dash_m_selects_lanes_and_a_module_marker_overrides_the_folder(tmp_path: Path) -> None:
    result, ran = run_project(tmp_path, "-m", "unit or browser")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted({nodeid.split("::")[0] for nodeid in ran}) == ["tests/unit/test_marked.py", "tests/unit/test_one.py"]
    assert "ran in main" in result.stdout  # the summary section of a serial run
    result, ran = run_project(tmp_path / "none", "-m", "deploy")
    assert (result.returncode, ran) == (5, {})  # no test of the lane: pytest's "no tests ran", a failure for make
