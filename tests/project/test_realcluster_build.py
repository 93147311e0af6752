"""scripts/build_realcluster.sh fails usefully: the failing step, the end of its output, how to retry.

A copy of the script and of realcluster/ in a temporary tree (sharing this machine's Go module and
build caches) is broken in two ways: a compile error, and no Go toolchain on PATH (exit code 3, which
tests/sharedfixtures.py turns into a failure under CI and a one-line note elsewhere). Needs Go: without it
only the second case runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clusters import ROOT


def copy_tree(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    for script in ("build_realcluster.sh", "go_binary_cache.sh"):
        shutil.copy2(ROOT / "scripts" / script, tmp_path / "scripts" / script)
    shutil.copytree(ROOT / "realcluster", tmp_path / "realcluster", ignore=shutil.ignore_patterns("bin"))
    return tmp_path / "scripts" / "build_realcluster.sh"


def test_a_compile_error_names_the_step_and_the_retry(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the compile case needs one (the no-Go case below runs)")
    script = copy_tree(tmp_path)
    (tmp_path / "realcluster" / "broken.go").write_text("package main\n\nfunc broken() { undefinedThing() }\n")
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "step 'compile' failed" in result.stderr
    assert "undefined: undefinedThing" in result.stderr  # the end of the compiler's output, not a wall of it
    assert "retry with: (cd realcluster && GOTOOLCHAIN=local go build" in result.stderr
    assert len(result.stderr.splitlines()) < 40


def test_no_go_toolchain_is_exit_code_3_with_one_line(tmp_path: Path) -> None:
    script = copy_tree(tmp_path)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    if Path("/usr/bin/go").exists() or Path("/bin/go").exists():
        pytest.skip("go is installed in /usr/bin: cannot hide it from PATH")
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1 and "no Go toolchain" in result.stderr
