"""scripts/build_hydra.sh fails usefully: the failing step, the end of its output, how to retry; exit 3 when it cannot
build here at all.

A copy of the script and of realcluster/oidc/ in a temporary tree (sharing this machine's Go module cache) is broken
three ways: a Hydra version the module proxy does not serve (the proxy switched off, so the test needs no network),
no Go toolchain on PATH and no C compiler (exit code 3, which tests/conftest.py turns into a failure under CI and a
one-line note elsewhere). Needs Go for the first case only.
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
    for script in ("build_hydra.sh", "go_binary_cache.sh"):
        shutil.copy2(ROOT / "scripts" / script, tmp_path / "scripts" / script)
    shutil.copytree(ROOT / "realcluster" / "oidc", tmp_path / "realcluster" / "oidc")
    return tmp_path / "scripts" / "build_hydra.sh"


def test_a_module_the_proxy_does_not_serve_names_the_download_step(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the download case needs one (the no-Go case below runs)")
    script = copy_tree(tmp_path)
    go_mod = tmp_path / "realcluster" / "oidc" / "go.mod"
    text = go_mod.read_text()
    assert "github.com/ory/hydra/v2 v2.3.0" in text
    go_mod.write_text(text.replace("github.com/ory/hydra/v2 v2.3.0", "github.com/ory/hydra/v2 v2.99.0"))
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=120, env={**os.environ, "GOPROXY": "off"})
    assert result.returncode == 1
    assert "building ORY Hydra v2.99.0" in result.stderr
    assert "step 'download modules' failed" in result.stderr
    assert "github.com/ory/hydra/v2@v2.99.0" in result.stderr  # the end of go's output, not a wall of it
    assert "retry with: (cd realcluster/oidc && GOTOOLCHAIN=local go mod download)" in result.stderr
    assert len(result.stderr.splitlines()) < 40
    assert not (tmp_path / "realcluster" / "bin" / "hydra").exists()


def test_no_go_toolchain_is_exit_code_3_with_one_line(tmp_path: Path) -> None:
    script = copy_tree(tmp_path)
    if Path("/usr/bin/go").exists() or Path("/bin/go").exists():
        pytest.skip("go is installed in /usr/bin: cannot hide it from PATH")
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1 and "no Go toolchain" in result.stderr


def test_no_c_compiler_is_exit_code_3_with_one_line(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the script stops at that first")
    script = copy_tree(tmp_path)
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, env={**os.environ, "CC": "no-such-cc"})
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1 and "no C compiler (no-such-cc)" in result.stderr
