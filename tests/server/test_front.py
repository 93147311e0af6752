"""The production front: the Flask app behind backend.server.asgi on uvicorn (as the gunicorn worker runs it), in-process.

Covers: /watch streams run on the event loop, not in request threads (with 2 request threads, 12
open streams leave /darkrooms and /healthz answering, and every stream gets the next change); a
client going away frees its stream (subscribers and cap); closing the broadcaster ends streams
with a complete response; the stream caps per client and in total answer 503 problem+json with
``Retry-After`` on both servers (front and werkzeug), a freed slot is usable again and HEAD /watch
holds none; a connection whose request headers are not complete within ``header_timeout_s`` is
closed; a body not complete within ``body_timeout_s`` gets 408 and one larger than allowed 413
without being read; /healthz and /readyz answer while every request thread is busy.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from backend.api.watch import watching
from backend.api.watch.broadcasting import Broadcaster
from tests.clients import Darkrooms, SseStream
from tests.support import wait_for


def hub(app: Flask) -> Broadcaster:
    found: Broadcaster = app.extensions[watching.EXTENSION]
    return found


def get(url: str, path: str, *, method: str = "GET", timeout_s: float = 5.0, source: str | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=timeout_s, source_address=(source, 0) if source else None)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        response.read()
        return response
    finally:
        connection.close()


def raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection (then the socket is closed here too)."""
    data = b""
    with sock:
        while chunk := sock.recv(65536):
            data += chunk
    return data


def exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send ``request`` and read one response with a Content-Length (the connection stays open)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return data


def test_streams_hold_no_request_thread(
    make_app: Callable[..., Flask], serve_front: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app(request_threads=2, sse_heartbeat_s=0.5)
    url = serve_front(app)
    ns = darkrooms.namespace
    streams = [sse(url, f"/watch?namespace={ns}") for _ in range(12)]
    for stream in streams:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert "Content-Length" not in stream.headers
        assert stream.next()["event"] == "ready"  # type: ignore[index]
    wait_for(lambda: hub(app).subscribers == 12, message="12 subscribers")

    # Answered at all: were the 12 streams holding the 2 request threads, these would wait for one until their timeout
    # (the streams stay open), however long it is — a behaviour, not a speed, so the timeout is generous.
    assert get(url, "/healthz", timeout_s=30).status == 200
    assert get(url, f"/darkrooms?namespace={ns}", timeout_s=30).status == 200

    darkrooms.create("fan-out")
    for stream in streams:
        block = stream.until(lambda b: b.get("event") == "darkroom")[-1]
        assert block["data"]["name"] == "fan-out" and block["data"]["type"] == "ADDED"

    streams[0].close()
    wait_for(lambda: hub(app).subscribers == 11, message="the subscriber to go away with its client")
    watching.close(app)
    for stream in streams[1:]:
        while (tail := stream.next()) is not None:  # a complete chunked body, then the end
            assert tail["comments"] == ["heartbeat"] or tail.get("event") == "darkroom"
    wait_for(lambda: hub(app).subscribers == 0, message="no subscribers after close")


@pytest.mark.parametrize("server", ["serve_front", "serve"])
def test_stream_caps(server: str, request: pytest.FixtureRequest, make_app: Callable[..., Flask], sse: Callable[..., SseStream]) -> None:
    app = make_app(stream_max_per_client=2, stream_max_total=3, stream_retry_after_s=7, sse_heartbeat_s=0.2)
    url = request.getfixturevalue(server)(app)
    first, second = sse(url), sse(url)
    assert first.status == second.status == 200
    refused = sse(url)
    assert refused.status == 503
    assert refused.headers["Retry-After"] == "7"
    assert refused.headers["Content-Type"] == "application/problem+json"
    problem = refused.response.read()
    assert b"open streams" in problem and b'"status":503' in problem

    other = sse(url, source="127.0.0.2")  # another client: its own share, up to the total
    assert other.status == 200
    third = sse(url, source="127.0.0.3")
    assert third.status == 503 and third.headers["Retry-After"] == "7"
    assert b"limit of 3 open streams" in third.response.read()

    assert get(url, "/watch", method="HEAD", source="127.0.0.4").status == 503  # HEAD is refused at the cap too...
    first.close()
    wait_for(lambda: sse(url, source="127.0.0.3").status == 200, message="the freed slot to be usable")
    second.close()
    wait_for(lambda: get(url, "/watch", method="HEAD", source="127.0.0.5").status == 200, message="another freed slot")
    for _ in range(3):  # ... and holds no slot when it gets through
        assert get(url, "/watch", method="HEAD", source="127.0.0.5").status == 200
    assert sse(url, source="127.0.0.5").status == 200


def test_slow_headers_are_cut_off(make_app: Callable[..., Flask], serve_front: Callable[[Flask], str]) -> None:
    url = serve_front(make_app(header_timeout_s=0.5))
    silent, trickling = raw(url), raw(url)
    started = time.monotonic()
    trickling.sendall(b"GET /healthz HTTP/1.1\r\n")
    for _ in range(3):
        time.sleep(0.25)
        try:
            trickling.sendall(b"X")
        except OSError:
            break
    assert read_all(silent) == b""  # closed without an answer
    assert read_all(trickling) == b""
    assert time.monotonic() - started < 3.0
    # A client that sends its headers in time is served, also on a kept-alive connection.
    with raw(url) as fine:
        for _ in range(3):
            assert exchange(fine, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
            time.sleep(0.3)


def test_body_deadline_and_size(make_app: Callable[..., Flask], serve_front: Callable[[Flask], str]) -> None:
    url = serve_front(make_app(body_timeout_s=0.5, max_content_length_bytes=1000))
    slow = raw(url)
    started = time.monotonic()
    slow.sendall(b"POST /darkrooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    answer = read_all(slow)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"connection: close" in answer.lower() and b"application/problem+json" in answer
    assert 0.4 < time.monotonic() - started < 3.0

    declared = raw(url)
    declared.sendall(b"POST /darkrooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n")
    assert read_all(declared).startswith(b"HTTP/1.1 413")
    chunked = raw(url)
    chunked.sendall(b"POST /darkrooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(3):
        chunked.sendall(b"190\r\n" + b" " * 400 + b"\r\n")
    assert read_all(chunked).startswith(b"HTTP/1.1 413")


def test_probes_do_not_queue_behind_busy_request_threads(make_app: Callable[..., Flask], serve_front: Callable[[Flask], str]) -> None:
    app = make_app(request_threads=1)
    gate = threading.Event()

    @app.get("/test-busy")
    def busy() -> str:
        gate.wait(20)
        return "done"

    url = serve_front(app)
    results: list[Any] = []
    holder = threading.Thread(target=lambda: results.append(get(url, "/test-busy", timeout_s=30).status))
    holder.start()
    try:
        time.sleep(0.3)  # the one request thread is now inside /test-busy
        started = time.monotonic()
        assert get(url, "/healthz").status == 200
        assert get(url, "/readyz").status == 200
        assert time.monotonic() - started < 2.0
        with pytest.raises(TimeoutError):  # while a client request waits for the busy pool
            get(url, "/darkrooms", timeout_s=0.5)
    finally:
        gate.set()
        holder.join(30)
    assert results == [200]
