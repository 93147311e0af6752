"""What `make api` and `make test` install into a venv, read from make's own dry run (``make -n``).

Behaviours: on a fresh venv `make api` (and `make cluster`, `make operator`) installs the runtime lock plus
devcluster and nothing of the toolchain (requirements/devcluster.txt holds no pytest, ruff, mypy, playwright),
says what it installs, then runs scripts/run_api.py with PORT and DEVCLUSTER_PORT passed on; `make test`
installs the dev lock; a venv `make api` made gets the toolchain from the next `make test`; a venv `make
test` made serves `make api` without installing anything; `make cluster` listens on DEVCLUSTER_PORT.
Every install is hash-checked from a lock, with no dependency resolution: pip installs the runtime lock; uv installs the
toolchain's (it is pinned there, and pip installs it first from that pin with its hashes).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.clusters import ROOT


def dry_run(target: str, venv: Path, *variables: str) -> str:
    """make's plan for ``target``, as a user's top-level make prints it (under `make test` this runs inside make,
    whose MAKELEVEL/MAKEFLAGS would add "Entering directory" lines and pass its own variables on)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    argv = ["make", "--no-print-directory", "-n", target, f"VENV={venv}", *variables]
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def installed_locks(plan: str) -> list[str]:
    """The lock files the plan's installs (pip or uv) read (``-r requirements/FILE``), in order."""
    locks = []
    for line in plan.splitlines():
        if "pip install" in line:
            assert "--require-hashes" in line and "--no-deps" in line, line
            locks += re.findall(r"-r (requirements/\S+)", line)
    return locks


def locked_names(lock: str) -> set[str]:
    return {m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9][\w.-]*)==", (ROOT / lock).read_text(), re.MULTILINE)}


def test_make_api_on_a_fresh_venv_installs_the_runtime_and_devcluster_only(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    plan = dry_run("api", venv, "PORT=5123", "DEVCLUSTER_PORT=6123")
    assert installed_locks(plan) == ["requirements/build.txt", "requirements/devcluster.txt"]
    installed = locked_names("requirements/build.txt") | locked_names("requirements/devcluster.txt")
    assert not installed & {"pytest", "pytest-timeout", "ruff", "mypy", "playwright", "schemathesis", "import-linter", "uv"}
    assert {"flask", "kubernetes", "gunicorn", "aiohttp", "jsonpatch"} <= installed
    assert "Installing the product's runtime and the embedded devcluster (no test tools)" in plan
    assert plan.splitlines()[-1] == f"PORT=5123 DEVCLUSTER_PORT=6123 {venv}/bin/python scripts/run_api.py"
    for target in ("cluster", "operator"):
        assert installed_locks(dry_run(target, venv)) == ["requirements/build.txt", "requirements/devcluster.txt"], target


def test_make_test_installs_the_toolchain_even_where_make_api_made_the_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert installed_locks(dry_run("test", venv)) == ["requirements/build.txt", "requirements/dev.txt"]
    api_stamp = re.search(r"touch (\S+/\.installed-api-\w+)", dry_run("api", venv))
    assert api_stamp is not None
    venv.mkdir()
    Path(api_stamp.group(1)).touch()  # as `make api` leaves it
    assert installed_locks(dry_run("api", venv)) == []
    plan = dry_run("test", venv)
    assert installed_locks(plan) == ["requirements/build.txt", "requirements/dev.txt"]
    stamps = re.search(r"touch (\S+/\.installed-dev-\w+) (\S+/\.installed-api-\w+)", plan)
    assert stamps is not None and stamps.group(2) == api_stamp.group(1)


def test_uv_installs_the_toolchain_from_its_own_hashed_pin_and_make_api_stays_with_pip(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (line,) = [line for line in dry_run("test", venv).splitlines() if "pip install" in line]
    bootstrap, pip, lock, editable = line.removeprefix("SECONDS=0; ").split(" && ")[:4]
    pin = venv / "uv-requirement.txt"
    assert pip == f"{venv}/bin/python -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r {pin}"
    assert lock.startswith(f"{venv}/bin/uv pip install --python {venv}/bin/python") and "--compile-bytecode" in lock
    assert lock.endswith("-r requirements/build.txt -r requirements/dev.txt")
    assert editable.startswith(f"{venv}/bin/uv pip install") and editable.endswith("-e lib/shared -e devcluster -e .")
    extracted = subprocess.run(["bash", "-c", bootstrap.removesuffix(f" > {pin}")], cwd=ROOT, capture_output=True, text=True, timeout=30)
    pinned = [part.strip(" \\") for part in extracted.stdout.splitlines()]
    assert re.fullmatch(r"uv==[\d.]+", pinned[0]), extracted.stdout  # the version dev.txt locks, with every hash it has
    assert len(pinned) > 2 and all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", part) for part in pinned[1:]), extracted.stdout
    api = dry_run("api", venv)
    assert "bin/uv" not in api and "uv-requirement" not in api  # the runtime lock holds no uv: pip installs it


def test_a_venv_make_test_made_serves_make_api_as_it_is(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    stamps = re.search(r"touch (\S+) (\S+)$", dry_run("venv", venv), re.MULTILINE)
    assert stamps is not None
    venv.mkdir()
    for stamp in stamps.groups():
        Path(stamp).touch()  # as `make test` leaves it
    assert installed_locks(dry_run("api", venv)) == []
    assert installed_locks(dry_run("test", venv)) == []
    assert installed_locks(dry_run("lint", venv)) == []


def test_make_cluster_listens_on_devcluster_port(tmp_path: Path) -> None:
    plan = dry_run("cluster", tmp_path / "venv", "DEVCLUSTER_PORT=6999")
    assert plan.splitlines()[-1].split("-m devcluster serve ")[1].startswith("--host 127.0.0.1 --port 6999 ")
