"""Our programs start without importing ``kubernetes_validate`` (:mod:`envsettings.startup`); importing our modules keeps it.

Behaviours covered:

- the reconciler (``python -m darkroom_operator``), the aggregated API server (``python -m aggregator``) and gunicorn's
  configuration (what the API's master loads before it forks its worker) import the official client's package but
  never ``kubernetes_validate``, although this toolchain has it installed (tests/deploy use it);
- a process that only imports those modules (a test, a tool) can still import ``kubernetes_validate``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Each program as it starts for real (run as __main__; --help ends it once everything is imported), reporting at exit
# which of the modules in question its process holds.
REPORT = (
    "import atexit, json, runpy, sys\n"
    "atexit.register(lambda: print(json.dumps({name: repr(sys.modules.get(name, 'absent'))"
    " for name in ('kubernetes.dynamic.client', 'kubernetes_validate', 'rfc3987_syntax')})))\n"
)
ENTRY_POINTS = {
    "reconciler": "sys.argv = ['darkroom_operator', '--help']; runpy.run_module('darkroom_operator', run_name='__main__', alter_sys=True)",
    "aggregator": "sys.argv = ['aggregator', '--help']; runpy.run_module('aggregator', run_name='__main__', alter_sys=True)",
    "gunicorn configuration": "import backend.server.gunicorn_conf",
}


def held_modules(code: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", REPORT + code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    return report


def test_the_validator_is_installed_here() -> None:
    # Without it the tests below would pass for the wrong reason.
    assert importlib.util.find_spec("kubernetes_validate") is not None


@pytest.mark.parametrize("program", ENTRY_POINTS)
def test_our_programs_start_without_the_validator(program: str) -> None:
    held = held_modules(ENTRY_POINTS[program])
    assert held["kubernetes.dynamic.client"].startswith("<module")  # the official client's package, which would import it, was
    assert held["kubernetes_validate"] == "None"  # "import kubernetes_validate" raised ImportError
    assert held["rfc3987_syntax"] == "'absent'"  # the grammar it would have built


def test_importing_our_modules_keeps_the_validator() -> None:
    code = "import sys; sys.path.insert(0, 'scripts'); import darkroom_operator.__main__, aggregator.__main__, run_api, kubernetes_validate"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
