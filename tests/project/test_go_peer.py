"""The Go peer of bench/reconcile.py is wired up: its module pins controller-runtime, its build script is sound, and
the benchmark accepts it.

Cheap and offline only: nothing here builds Go or starts a server (scripts/build_go_peer.sh and the benchmark
itself do that). bench/reconcile.py is imported the way it runs (``bench/`` on ``sys.path``) for its
argument parser.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.clusters import ROOT
from tests.support import bench_module

MODULE = ROOT / "bench" / "peers" / "go-darkroom"
SCRIPT = ROOT / "scripts" / "build_go_peer.sh"


@pytest.fixture(scope="module")
def reconcile() -> Iterator[ModuleType]:
    """bench/reconcile.py as a module (bench/ first on sys.path, as ``python bench/reconcile.py`` has it)."""
    with bench_module("reconcile") as module:
        yield module


def test_go_mod_pins_controller_runtime_and_go_sum_exists() -> None:
    go_mod = (MODULE / "go.mod").read_text()
    assert re.search(r"^\s*sigs\.k8s\.io/controller-runtime v\d+\.\d+\.\d+$", go_mod, re.MULTILINE), go_mod
    assert re.search(r"^go 1\.\d+", go_mod, re.MULTILINE)
    go_sum = (MODULE / "go.sum").read_text()
    assert "sigs.k8s.io/controller-runtime " in go_sum and "k8s.io/client-go " in go_sum


def test_the_peer_says_what_it_is() -> None:
    main = (MODULE / "main.go").read_text()
    assert main.startswith("// Command go-darkroom is the Go peer of bench/reconcile.py")
    assert "How it differs from ours" in main


def test_build_script_is_executable_and_parses() -> None:
    assert os.access(SCRIPT, os.X_OK)
    result = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    text = SCRIPT.read_text()
    assert "nice -n 15 go build" in text and "exit 3" in text and "bin/go-darkroom" in text


def test_the_benchmark_accepts_go(reconcile: ModuleType) -> None:
    opts = reconcile.parse_args(["--operators", "ours,kopf,go", "--count", "10", "--runs", "1"])
    assert opts.kinds == ["ours", "kopf", "go"] and not opts.go_optional
    assert reconcile.parse_args(["--operators", "go"]).kinds == ["go"]
    default = reconcile.parse_args([])
    assert default.kinds == ["ours", "kopf", "go"] and default.go_optional  # left out with a note when it cannot build
    assert reconcile.OPERATORS["go"].agents == ("go-peer/",)


def test_the_benchmark_refuses_an_unknown_operator(reconcile: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        reconcile.parse_args(["--operators", "ours,rust"])
    assert "choose from ['go', 'kopf', 'ours']" in capsys.readouterr().err


def test_the_profile_flags_need_profile_and_exclude_each_other(reconcile: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    for alone in ("--profile-idle", "--profile-gil", "--profile-server"):
        with pytest.raises(SystemExit):
            reconcile.parse_args([alone])
        assert "need --profile DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        reconcile.parse_args(["--profile", "out", "--profile-idle", "--profile-gil"])
    assert "--profile-idle and --profile-gil contradict each other" in capsys.readouterr().err
    assert reconcile.parse_args(["--profile", "out", "--profile-gil"]).profile_gil


PROFILE_MODES = [("--profile-gil", "--gil", "--idle"), ("--profile-idle", "--idle", "--gil"), (None, None, "--gil")]


@pytest.mark.parametrize(("flag", "expected", "absent"), PROFILE_MODES)
def test_py_spy_records_the_operator_with_the_chosen_mode(
    reconcile: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str], flag: str | None, expected: str | None, absent: str
) -> None:
    opts = reconcile.parse_args(["--profile", str(tmp_path), *([flag] if flag else [])])
    started: list[list[str]] = []

    class Recorded:
        def __init__(self, cmd: list[str], **_: object) -> None:
            started.append(cmd)

    monkeypatch.setattr(reconcile.subprocess, "Popen", Recorded)
    monkeypatch.setattr(reconcile.time, "sleep", lambda _s: None)
    operator = type("Ours", (), {"label": "darkroom-operator", "pid": 4242, "cluster": type("Cluster", (), {"kind": "real"})()})()
    work = reconcile.Path(tmp_path) / "run1-real-darkroom-ours"
    work.mkdir()
    procs = reconcile.start_profilers(operator, opts, work)
    assert len(procs) == 1 and len(started) == 1
    cmd = started[0]
    assert cmd[1:5] == ["record", "--pid", "4242", "--rate"], cmd
    assert absent not in cmd
    if expected:
        assert expected in cmd
