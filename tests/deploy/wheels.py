"""Helpers of the wheel tests (test_wheel.py, test_dockerfile.py): build our wheels offline, install them into a fresh venv.

:func:`install` builds the wheels of the leaves' project (lib/shared) and the product from a source tree (a copy: no
build/ or egg-info is written into the checkout, nor a stale one read) with the test venv's pip and the setuptools of
the locks (``--no-deps --no-build-isolation --no-index``: nothing is fetched), and installs them ``--no-index
--no-deps`` into a new venv with no system site-packages and no pip of its own. The third-party dependencies come from
the test venv's site-packages, named by a ``.pth`` file after the venv's own: the ``.pth`` files found there (the
editable installs of the checkout) are not read, so nothing of the checkout is importable. :meth:`Venv.run` runs the
venv's Python with ``-I`` (no PYTHON* variables, no user site, no current directory on the path) from a directory
outside the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

# Our top-level packages the wheels hold, by import name.
FIRST_PARTY = (
    "backend",
    "aggregator",
    "darkroom_operator",
    "cluster",
    "kinds",
    "envsettings",
    "productfiles",
    "frontend",
    "crds",
    "labelselectors",
    "mergepatch",
)
BUILD_ARGS = ("--no-deps", "--no-build-isolation", "--no-index")


class Venv:
    """A venv holding the installed wheels."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.python = root / "bin" / "python"
        self.outside = outside
        self.site_packages = Path(self.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())

    def run(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "KUBECONFIG", "PYTHON", "VIRTUAL_ENV"))}
        result = subprocess.run(
            [str(self.python), "-I", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.outside,
            env={**clean, **(env or {})},
        )
        assert not check or result.returncode == 0, f"{args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result


def run(*argv: str | Path, cwd: Path | None = None) -> None:
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=180, cwd=cwd)
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"


def build(source: Path, wheels: Path, *, args: tuple[str, ...] = BUILD_ARGS, projects: tuple[str, ...] = ("lib/shared", ".")) -> list[Path]:
    """Build the wheels of ``projects`` (paths in ``source``) into ``wheels`` with ``pip wheel <args>``."""
    run(sys.executable, "-m", "pip", "wheel", "-q", *args, "-w", wheels, *projects, cwd=source)
    built = sorted(wheels.glob("*.whl"))
    assert [p.name.split("-")[0] for p in built] == ["darkroom_control_panel", "darkroom_shared_leaves"], built
    return built


def install(wheels: list[Path], tmp: Path) -> Venv:
    """A fresh venv in ``tmp`` with ``wheels`` installed and the third-party dependencies importable."""
    run(sys.executable, "-m", "venv", "--without-pip", tmp / "venv")
    # --ignore-installed: pip, run for the new venv, also sees the test venv (where the product is installed editable).
    python = tmp / "venv" / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index", "--no-deps", "--ignore-installed", *wheels)
    outside = tmp / "elsewhere"
    outside.mkdir()
    venv = Venv(tmp / "venv", outside)
    (venv.site_packages / "thirdparty.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def shipped_packages(venv: Venv) -> set[str]:
    """Our top-level packages installed in the venv (the wheels'), by import name."""
    return {name for name in FIRST_PARTY if (venv.site_packages / name / "__init__.py").is_file()}


# The command-line entry points besides the API (python -m <module> --help) and a word each one's help must hold.
ENTRY_POINTS = {"darkroom_operator": "darkroom_operator", "aggregator": "--tls-cert-file", "cluster.crdinstall": "--write-kubeconfig"}


def assert_entry_points_run(venv: Venv) -> None:
    """The reconciler's, the aggregated API server's and the CRD installer's ``--help`` run from ``venv``."""
    for module, says in ENTRY_POINTS.items():
        result = venv.run("-m", module, "--help")
        assert says in result.stdout, (module, result.stdout, result.stderr)
