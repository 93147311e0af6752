"""The production server: gunicorn with backend/server/gunicorn_conf.py serving backend.server.wsgi:app.

Covers: it starts against the session cluster with settings from the environment, in the login mode, and serves
/healthz, /readyz and, to a person's bearer token or login session, everything else; SIGTERM ends open /watch streams
cleanly (a complete chunked response, not a connection cut at the graceful timeout) and the process exits 0; the log
(gunicorn access and error log, app log) never contains the token, even when a client puts it in a query string or a
login form, and access lines carry no query strings; the local mode off loopback makes gunicorn refuse to start,
also when only ``--bind`` / ``GUNICORN_CMD_ARGS`` put it there (the addresses actually bound are checked), and so
does the shared token of earlier releases, naming what replaces it; 40 open /watch streams plus 40 clients sending
headers or a body a byte at a time leave /healthz and GET /darkrooms answering at once; request data in a path
(``%0a``, ``%1b``) cannot forge a log line or write a terminal escape; behind a trusted proxy (``X-Forwarded-Proto:
https`` from a ``FORWARDED_ALLOW_IPS`` address) the session cookie of a login is Secure and responses carry HSTS,
and a request not from a trusted proxy gets neither.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients import SseStream
from tests.clusters import ROOT, ClusterProcess, free_port
from tests.identity.logins import Person
from tests.support import wait_for


def gunicorn(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "backend" / "server" / "gunicorn_conf.py"),
                *args,
                "backend.server.wsgi:app",
            ],
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
def server(
    kube: ClusterProcess, crds_installed: None, namespace: str, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """gunicorn in the login mode on loopback, its sessions in the test's namespace."""
    port = free_port()
    log = tmp_path / "gunicorn.log"
    env = {
        "DARKROOM_API_KUBECONFIG": str(kube.kubeconfig),
        "DARKROOM_API_AUTHENTICATION": "login",
        "DARKROOM_API_SESSION_NAMESPACE": namespace,
        "DARKROOM_API_SECRET_KEY": "gunicorn-signing-key",
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
def test_serves_and_stops_cleanly(server: tuple[subprocess.Popen[bytes], int, Path], person: Person) -> None:
    proc, port, log = server
    token, bearer = person.token, person.bearer
    assert status(port, "/readyz") == 200
    assert status(port, "/metrics") == 401
    assert status(port, "/metrics", headers=bearer) == 200
    assert status(port, f"/metrics?token={token}&access_token={token}") == 401
    assert status(port, "/metrics", headers={"Authorization": f"Bearer {token}-not"}) == 401
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert status(port, "/login", method="POST", body=f"token={token}&next=/docs".encode(), headers=form) == 303
    assert status(port, "/darkrooms", headers=bearer) == 200

    stream = SseStream(f"http://127.0.0.1:{port}", "/watch", headers=bearer)
    try:
        assert stream.status == 200
        ready = stream.next()
        assert ready is not None and ready["event"] == "ready"

        proc.send_signal(signal.SIGTERM)
        # Heartbeats (and, on a shared cluster, changes other tests' namespace deletions still cause), then a
        # clean end of the chunked body.
        while (block := stream.next()) is not None:
            assert block["comments"] == ["heartbeat"] or "data" in block, block
    finally:
        stream.close()
    assert proc.wait(30) == 0

    text = log.read_text()
    assert token not in text
    assert '"GET /metrics HTTP/1.1" 401' in text
    assert '"GET /watch HTTP/1.1" 200' in text
    assert "?token" not in text and "access_token" not in text
    assert "Traceback" not in text
    assert "Shutting down: Master" in text


def test_refuses_the_local_mode_off_loopback(kube: ClusterProcess, tmp_path: Path) -> None:
    log = tmp_path / "gunicorn.log"
    env = {
        "DARKROOM_API_KUBECONFIG": str(kube.kubeconfig),
        "DARKROOM_API_HOST": "0.0.0.0",
        "DARKROOM_API_AUTHENTICATION": "local",
        "PORT": str(free_port()),
    }
    proc = gunicorn(env, log)
    assert proc.wait(60) != 0
    assert "refusing to serve on 0.0.0.0 in the local mode" in log.read_text()


def test_refuses_the_shared_token_of_earlier_releases(kube: ClusterProcess, tmp_path: Path) -> None:
    log = tmp_path / "gunicorn.log"
    env = {"DARKROOM_API_KUBECONFIG": str(kube.kubeconfig), "DARKROOM_API_TOKEN": "an-old-shared-token", "PORT": str(free_port())}
    proc = gunicorn(env, log)
    assert proc.wait(60) != 0
    text = log.read_text()
    assert "DARKROOM_API_TOKEN is no longer supported: the shared API token is replaced by per-person login" in text
    assert "an-old-shared-token" not in text


@pytest.mark.parametrize("how", ["GUNICORN_CMD_ARGS", "-b"])
def test_refuses_to_serve_the_local_mode_on_a_bound_address_off_loopback(how: str, kube: ClusterProcess, tmp_path: Path) -> None:
    """The settings say loopback (so the local mode), but gunicorn was told to bind elsewhere."""
    log = tmp_path / "gunicorn.log"
    port = free_port()
    env = {"DARKROOM_API_KUBECONFIG": str(kube.kubeconfig), "PORT": str(free_port())}
    if how == "-b":
        proc = gunicorn(env, log, "-b", f"0.0.0.0:{port}")
    else:
        proc = gunicorn({**env, "GUNICORN_CMD_ARGS": f"--bind 0.0.0.0:{port}"}, log)
    try:
        assert proc.wait(60) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    text = log.read_text()
    assert f"refusing to serve on 0.0.0.0:{port} in the local mode" in text, text
    assert "Booting worker" not in text


def trickle(port: int, head: bytes, stop: threading.Event) -> None:
    """A slow client: ``head`` in full, then one more byte every 0.5 s until ``stop`` (or the server hangs up)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        while not stop.wait(0.5):
            try:
                sock.sendall(b"x")
            except OSError:
                return


@pytest.mark.slow
def test_streams_and_slow_clients_do_not_starve_the_api(server: tuple[subprocess.Popen[bytes], int, Path], person: Person) -> None:
    _, port, log = server
    bearer = person.bearer
    streams = []
    stop = threading.Event()
    slow = [
        threading.Thread(target=trickle, args=(port, b"GET /darkrooms HTTP/1.1\r\nHost: x\r\nX-Slow: ", stop), daemon=True)
        for _ in range(20)
    ] + [
        threading.Thread(
            target=trickle,
            args=(
                port,
                f"POST /darkrooms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {person.token}\r\nContent-Length: 500\r\n\r\n".encode(),
                stop,
            ),
            daemon=True,
        )
        for _ in range(20)
    ]
    try:
        for i in range(40):  # from four client addresses: below the per-client cap
            stream = SseStream(f"http://127.0.0.1:{port}", "/watch", headers=bearer, timeout_s=5, source=f"127.0.0.{2 + i % 4}")
            streams.append(stream)
            assert stream.status == 200
            assert stream.next()["event"] == "ready"  # type: ignore[index]
        for thread in slow:
            thread.start()
        time.sleep(1.0)
        for _ in range(5):
            started = time.monotonic()
            assert status(port, "/healthz") == 200
            assert status(port, "/darkrooms", headers=bearer) == 200
            assert time.monotonic() - started < 2.0
    finally:
        stop.set()
        for stream in streams:
            stream.close()
        for thread in slow:
            if thread.ident is not None:
                thread.join(5)
    assert "Traceback" not in log.read_text()


def test_request_data_cannot_forge_log_lines(server: tuple[subprocess.Popen[bytes], int, Path], person: Person) -> None:
    _, port, log = server
    bearer = person.bearer
    answered = (403, 404)  # not found, or not the person's to read (a ServiceAccount with no rights): answered and logged
    assert status(port, "/darkrooms/default/x%0aFORGED-LINE", headers=bearer) in answered
    assert status(port, "/darkrooms/default/x%0d%0aFORGED-CRLF", headers=bearer) in answered
    assert status(port, "/darkrooms/default/x%1b[31mRED", headers=bearer) in answered
    assert status(port, "/x%0aFORGED-UNAUTHENTICATED") == 401
    wait_for(lambda: "RED" in log.read_text(), message="the access line")
    text = log.read_bytes()
    assert b"\x1b" not in text
    assert b"\r" not in text
    lines = text.decode().splitlines()
    assert not [line for line in lines if line.startswith("FORGED")], lines
    assert [line for line in lines if "x%0aFORGED-LINE" in line or "x\\x0aFORGED-LINE" in line]


def test_secure_cookie_and_hsts_behind_a_trusted_proxy(server: tuple[subprocess.Popen[bytes], int, Path], person: Person) -> None:
    _, port, _ = server
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    https = {"X-Forwarded-Proto": "https"}
    # gunicorn's FORWARDED_ALLOW_IPS defaults to loopback's 127.0.0.1 and ::1: 127.0.0.2 is not a trusted proxy.
    for source, forwarded, secure in (("127.0.0.1", https, True), ("127.0.0.2", https, False), ("127.0.0.1", {}, False)):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
        try:
            connection.request("POST", "/login", body=f"token={person.token}&next=/".encode(), headers={**form, **forwarded})
            response = connection.getresponse()
            assert response.status == 303
            cookie = response.headers["Set-Cookie"]
            assert ("Secure" in cookie) is secure, cookie
            assert ("Strict-Transport-Security" in response.headers) is secure
            if secure:
                assert response.headers["Strict-Transport-Security"].startswith("max-age=")
        finally:
            connection.close()
