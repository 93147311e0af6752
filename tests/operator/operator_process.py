"""One ``python -m darkroom_operator`` subprocess as the tests drive it: :class:`OperatorProcess` (start, stop, kill,
its health server, /metrics and JSON logs) and :data:`RunOperator`, the type of the conftest's ``run_operator`` factory.

The reconciler's tests get operators from the ``run_operator`` fixture (tests/operator/conftest.py);
the browser tests' ``stack`` starts one of these itself.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.clusters import ROOT

STARTUP_LINE = re.compile(r"darkroom-operator: health on (http://[\w.\-\[\]:]+)")


@dataclass
class OperatorProcess:
    """One ``python -m darkroom_operator`` subprocess; restartable with :meth:`start`.

    ``args``/``env`` are what it runs with; stdout (the startup line) and stderr (logs, JSON lines)
    go to ``out_path``/``log_path`` and accumulate across restarts.
    """

    args: list[str]
    env: dict[str, str]
    log_path: Path
    out_path: Path
    proc: subprocess.Popen[bytes] | None = None
    health_url: str = ""
    exit_codes: list[int] = field(default_factory=list)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, *, wait_ready: bool = True, timeout_s: float = 60.0) -> OperatorProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        out_offset = self.out_path.stat().st_size if self.out_path.exists() else 0
        with self.out_path.open("ab") as out, self.log_path.open("ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "darkroom_operator", *self.args], cwd=ROOT, env=self.env, stdout=out, stderr=err
            )
        self.health_url = self._wait_for_startup_line(out_offset, timeout_s)
        if wait_ready:
            self.wait_ready(timeout_s)
        return self

    def _wait_for_startup_line(self, offset: int, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.out_path.open("rb") as f:
                f.seek(offset)
                match = STARTUP_LINE.search(f.read().decode("utf-8", "replace"))
            if match:
                return match.group(1)
            self._check_alive("before printing its health port")
            time.sleep(0.05)
        raise AssertionError(f"the operator printed no health line within {timeout_s}s:\n{self.log_text()[-3000:]}")

    def _check_alive(self, when: str) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"the operator exited with {self.proc.returncode} {when}:\n{self.log_text()[-3000:]}")

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive("while waiting for /readyz")
            if self.status("/readyz") == 200:
                return
            time.sleep(0.05)
        raise AssertionError(f"/readyz never answered 200 within {timeout_s}s:\n{self.log_text()[-3000:]}")

    def stop(self, timeout_s: float = 30.0, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` (SIGTERM), wait; SIGKILL if it has not exited after ``timeout_s``. The exit code."""
        if self.proc is None:
            return self.exit_codes[-1] if self.exit_codes else 0
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout_s)
        self.proc = None
        self.exit_codes.append(code)
        return code

    def kill(self) -> int:
        return self.stop(sig=signal.SIGKILL)

    def wait_exit(self, timeout_s: float = 30.0) -> int:
        """Wait for the process to exit on its own (e.g. after losing the lease); the exit code."""
        assert self.proc is not None
        code = self.proc.wait(timeout_s)
        self.proc = None
        self.exit_codes.append(code)
        return code

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    # -- observing ---------------------------------------------------------------------------

    def get(self, path: str, timeout_s: float = 5.0) -> tuple[int, str]:
        """(status, body) of a GET on the health server; status 0 when it does not answer."""
        try:
            with urllib.request.urlopen(self.health_url + path, timeout=timeout_s) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            body = e.read().decode()
            e.close()
            return e.code, body
        except OSError:
            return 0, ""

    def status(self, path: str) -> int:
        return self.get(path)[0]

    def metric(self, name: str, labels: Mapping[str, str] | None = None) -> float | None:
        """The value of one sample in /metrics (None when absent)."""
        code, text = self.get("/metrics")
        if code != 200:
            return None
        from prometheus_client.parser import text_string_to_metric_families

        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in (labels or {}).items()):
                    return float(sample.value)
        return None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def logs(self) -> list[dict[str, Any]]:
        """Log records (JSON lines) so far; lines that are not JSON come back as ``{"raw": line}``."""
        records: list[dict[str, Any]] = []
        for line in self.log_text().splitlines():
            if not line.strip():
                continue
            try:
                parsed = json.loads(line)
            except ValueError:
                parsed = None
            records.append(parsed if isinstance(parsed, dict) else {"raw": line})
        return records


RunOperator = Callable[..., OperatorProcess]
