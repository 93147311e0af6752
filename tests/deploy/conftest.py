"""Fixtures of the deploy tests: the rendered kustomizations, once per session, and Helm.

``rendered`` maps overlay name (``base``, ``dev``, ``production``) to the objects ``kubectl kustomize``
renders; helpers live in :mod:`tests.deploy.manifests`. ``helm`` is the path of the Helm that scripts/build_helm.sh
builds from the Go module proxy (once: later runs find it up to date; several pytest processes build one after the
other); without a Go toolchain the tests that need it skip, and fail under CI=true.
"""

from __future__ import annotations

import fcntl
import subprocess
from typing import Any

import pytest

from tests.sharedfixtures import in_ci

from .manifests import OVERLAYS, ROOT, render


@pytest.fixture(scope="session")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {overlay: render(overlay) for overlay in OVERLAYS}


@pytest.fixture(scope="session")
def helm() -> str:
    lock_path = ROOT / "tools" / "helm" / "bin" / ".build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = subprocess.run([str(ROOT / "scripts" / "build_helm.sh")], capture_output=True, text=True)
    if built.returncode == 3 and not in_ci():
        pytest.skip(f"no Go toolchain to build Helm (under CI=true this fails): {built.stderr.strip()}")
    assert built.returncode == 0, f"scripts/build_helm.sh failed:\n{built.stderr}"
    return built.stdout.strip().splitlines()[-1]
