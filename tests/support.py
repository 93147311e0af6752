"""Test support shared by every suite: a devcluster subprocess handle, a kubectl runner, waiting.

Imported by ``conftest.py`` (fixtures) and by test modules (``from support import wait_for``).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DevclusterProcess:
    """A devcluster subprocess; restartable on the same port and data dir."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def start(self, timeout_s: float = 30.0) -> DevclusterProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "devcluster.log"
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "devcluster", "serve", "--port", str(self.port), "--data-dir", str(self.data_dir), *self.extra_args],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"devcluster exited with {self.proc.returncode}: {self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as response:
                    if response.status == 200 and self.kubeconfig.exists():
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("devcluster did not become ready")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        self.proc = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


@dataclass
class Kubectl:
    kubeconfig: Path
    cache_dir: Path

    def run(self, *args: str, check: bool = True, input_text: str | None = None, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            capture_output=True,
            text=True,
            input=input_text,
            timeout=timeout_s,
            cwd=ROOT,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )


def wait_for(predicate: Callable[[], object], timeout_s: float = 10.0, interval_s: float = 0.05, message: str = "condition") -> object:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {message}")
        time.sleep(interval_s)
