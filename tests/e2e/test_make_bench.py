"""What `make bench` installs, builds and prints, read from make's own dry run and bench/menu.py.

Behaviours: on a fresh venv `make bench` installs requirements/bench.txt (hash-checked, no dependency resolution: the
dev lock plus kopf and py-spy), builds the Go peer and realcluster when missing, and then only lists the benchmarks
(bench/menu.py); `RUN=<name> ARGS=...` hands both to the menu, which runs that one under nice; a venv `make bench`
made serves `make test` and `make api` as it is. The menu lists every entry script of bench/ and devcluster/bench/
(no benchmark forgotten), each with a command and how long it takes; bench/README.md's table is the menu's; an
unknown RUN, or ARGS without RUN, is refused with the names to choose from.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.clusters import ROOT

from .test_make_venv import dry_run, installed_locks


def load_menu() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_menu", ROOT / "bench" / "menu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def entry_scripts() -> set[str]:
    """Every script of bench/ and devcluster/bench/ that runs as ``python <script>`` (``if __name__ == "__main__"``),
    but the menu itself."""
    found = set()
    for path in [*(ROOT / "bench").glob("*.py"), *(ROOT / "devcluster" / "bench").glob("*.py")]:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                found.add(str(path.relative_to(ROOT)))
    return found - {"bench/menu.py"}


def menu_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/menu.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_make_bench_installs_the_bench_lock_builds_what_is_missing_and_only_lists(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    plan = dry_run("bench", venv)
    assert installed_locks(plan) == ["requirements/build.txt", "requirements/bench.txt"]
    lines = plan.splitlines()
    assert any(line.startswith("scripts/build_go_peer.sh") for line in lines)
    assert any(line.startswith("scripts/build_realcluster.sh") for line in lines)
    assert lines[-1] == f'{venv}/bin/python bench/menu.py --run "" -- '
    chosen = dry_run("bench", venv, "RUN=reconcile", "ARGS=--count 100 --runs 1")
    assert chosen.splitlines()[-1] == f'{venv}/bin/python bench/menu.py --run "reconcile" -- --count 100 --runs 1'


def test_a_venv_make_bench_made_serves_make_test_and_make_api_as_it_is(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    plan = dry_run("bench", venv)
    stamps = next(line for line in plan.splitlines() if "touch" in line and ".installed-bench-" in line).split("touch ")[1].split()
    venv.mkdir()
    for stamp in stamps:
        Path(stamp).touch()  # as `make bench` leaves them
    for target in ("test", "api", "bench"):
        assert installed_locks(dry_run(target, venv)) == [], target


def test_the_menu_lists_every_benchmark_with_its_commands_and_durations() -> None:
    menu = load_menu()
    scripts = [b.script for b in menu.BENCHMARKS]
    assert len(scripts) == len(set(scripts))
    assert set(scripts) == entry_scripts()
    assert {"bench/reconcile.py", "devcluster/bench/apiserver.py", "devcluster/bench/capacity.py"} <= set(scripts)
    listed = menu_run()
    assert listed.returncode == 0, listed.stderr
    for benchmark in menu.BENCHMARKS:
        assert benchmark.runs and all(run.takes.startswith("~") for run in benchmark.runs), benchmark.name
        for run in benchmark.runs:
            assert f"{menu.command(benchmark, run)}   " in listed.stdout or f"{menu.command(benchmark, run)} " in listed.stdout
    assert 'make bench RUN=<name> ARGS="<arguments>" runs one' in listed.stdout


def test_bench_readme_table_is_the_menus() -> None:
    menu = load_menu()
    text = menu.README.read_text()
    assert menu.readme_with_table(text) == text, "bench/README.md's table is stale: run .venv/bin/python bench/menu.py --write-readme"
    assert "`RUN=`" in text


def test_run_runs_one_under_nice_and_refuses_what_it_does_not_know() -> None:
    ran = menu_run("--run", "namespaces", "--", "--help")
    assert ran.returncode == 0, ran.stderr
    assert "usage: namespaces.py" in ran.stdout
    assert ran.stderr.startswith("make bench: nice -n 15 ")
    unknown = menu_run("--run", "nope")
    assert unknown.returncode == 2
    assert "RUN: no benchmark named 'nope'; one of: apiserver, capacity," in unknown.stderr
    stray = menu_run("--run", "", "--", "--quick")
    assert stray.returncode == 2
    assert "ARGS (--quick) without RUN" in stray.stderr
