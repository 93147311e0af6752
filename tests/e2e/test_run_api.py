"""`make api`'s entry point on a bare data dir: starts the embedded devcluster, installs the CRDs,
prints a banner naming the cluster, serves them to kubectl, keeps data across runs and stops
cleanly on SIGINT (Ctrl-C) — and with KUBECONFIG set it uses that cluster instead of starting one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import ROOT, DevclusterProcess, Kubectl, free_port


def _start(data_dir: Path, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "scripts/run_api.py", "--data-dir", str(data_dir), "--devcluster-port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _read_banner(proc: subprocess.Popen[str], timeout_s: float = 60) -> str:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Ctrl-C"):
            return "".join(lines)
    raise AssertionError("no banner: " + "".join(lines))


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    return proc.returncode, out


def test_embedded_stack_starts_serves_crds_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data_dir, port = tmp_path / "data", free_port()
    proc = _start(data_dir, port, env={"KUBECONFIG": ""})
    try:
        banner = _read_banner(proc)
        assert f"embedded devcluster at http://127.0.0.1:{port}" in banner
        assert "darkrooms.deployments.example.com, tasks.example.example.com (installed)" in banner
        kubectl = Kubectl(data_dir / "kubeconfig", tmp_path / "cache")
        kubectl.run("apply", "-f", "crds/samples/")
        assert "webfolder-demo" in kubectl.run("get", "dr").stdout
    finally:
        code, out = _stop(proc)
    assert code == 0, out
    assert "stopped." in out
    # A second run on the same data dir finds the objects again.
    proc = _start(data_dir, port, env={"KUBECONFIG": ""})
    try:
        _read_banner(proc)
        assert "webfolder-demo" in Kubectl(data_dir / "kubeconfig", tmp_path / "cache").run("get", "dr").stdout
    finally:
        assert _stop(proc)[0] == 0


def test_uses_the_chosen_kubeconfig_instead_of_devcluster(tmp_path: Path) -> None:
    external = DevclusterProcess(tmp_path / "external").start()
    try:
        proc = _start(tmp_path / "unused", free_port(), env={"KUBECONFIG": str(external.kubeconfig)})
        try:
            banner = _read_banner(proc)
            assert f"the cluster of kubeconfig {external.kubeconfig}" in banner
            assert not (tmp_path / "unused").exists()
            crds = Kubectl(external.kubeconfig, tmp_path / "cache").run("get", "crd", "-o", "name").stdout
            assert "darkrooms.deployments.example.com" in crds
        finally:
            assert _stop(proc)[0] == 0
    finally:
        external.stop()
