"""The production server: gunicorn with backend/gunicorn_conf.py serving backend.wsgi:app.

Covers: it starts against the session devcluster with settings from the environment and serves
/healthz, /readyz and authenticated endpoints; SIGTERM ends open /watch streams cleanly (a complete
chunked response, not a connection cut at the graceful timeout) and the process exits 0; the log
(gunicorn access and error log, app log) never contains the token, even when a client puts it in
a query string or a login form, and access lines carry no query strings; off loopback without a
token gunicorn refuses to start.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT, ClusterProcess, free_port, wait_for

from .conftest import SseStream

TOKEN = "gunicorn-Sentinel-4b7e91c2d3f0a8"


def gunicorn(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "backend" / "gunicorn_conf.py"), "backend.wsgi:app"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def status(port: int, path: str, *, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.fixture
def server(kube: ClusterProcess, crds_installed: None, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    port = free_port()
    log = tmp_path / "gunicorn.log"
    env = {
        "DARKROOM_API_KUBECONFIG": str(kube.kubeconfig),
        "DARKROOM_API_API_TOKEN": TOKEN,
        "DARKROOM_API_SSE_HEARTBEAT_S": "0.5",
        "DARKROOM_API_LOG_LEVEL": "DEBUG",
        "PORT": str(port),
    }
    proc = gunicorn(env, log)

    def healthy() -> bool:
        assert proc.poll() is None, log.read_text()
        try:
            return status(port, "/healthz") == 200
        except OSError:
            return False

    wait_for(healthy, timeout_s=60, interval_s=0.1, message="gunicorn to serve /healthz")
    yield proc, port, log
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


@pytest.mark.slow
def test_serves_and_stops_cleanly(server: tuple[subprocess.Popen[bytes], int, Path]) -> None:
    proc, port, log = server
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert status(port, "/readyz") == 200
    assert status(port, "/metrics") == 401
    assert status(port, "/metrics", headers=bearer) == 200
    assert status(port, f"/metrics?token={TOKEN}&access_token={TOKEN}") == 401
    assert status(port, "/metrics", headers={"Authorization": f"Bearer {TOKEN}-not"}) == 401
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert status(port, "/login", method="POST", body=f"token={TOKEN}&next=/docs".encode(), headers=form) == 303
    assert status(port, "/darkrooms", headers=bearer) == 200

    stream = SseStream(f"http://127.0.0.1:{port}", "/watch", headers=bearer)
    assert stream.status == 200
    ready = stream.next()
    assert ready is not None and ready["event"] == "ready"

    proc.send_signal(signal.SIGTERM)
    while (block := stream.next()) is not None:  # heartbeats, then a clean end of the chunked body
        assert block["comments"] == ["heartbeat"]
    stream.close()
    assert proc.wait(30) == 0

    text = log.read_text()
    assert TOKEN not in text
    assert '"GET /metrics HTTP/1.1" 401' in text
    assert '"GET /watch HTTP/1.1" 200' in text
    assert "?token" not in text and "access_token" not in text
    assert "Traceback" not in text
    assert "Shutting down: Master" in text


def test_refuses_to_start_off_loopback_without_token(kube: ClusterProcess, tmp_path: Path) -> None:
    log = tmp_path / "gunicorn.log"
    env = {"DARKROOM_API_KUBECONFIG": str(kube.kubeconfig), "DARKROOM_API_HOST": "0.0.0.0", "PORT": str(free_port())}
    env.pop("DARKROOM_API_API_TOKEN", None)
    proc = gunicorn({**env, "DARKROOM_API_API_TOKEN": ""}, log)
    assert proc.wait(60) != 0
    assert "refusing to serve on 0.0.0.0" in log.read_text()
