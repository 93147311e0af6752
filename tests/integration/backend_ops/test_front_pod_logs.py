"""Pod log streams behind the production front (backend.server.asgi on uvicorn, in-process), on both clusters.

Covers: a followed log stream is written from the event loop and holds no request thread (with 1 request thread, 3
open log streams leave /healthz and the logs page answering), delivers a line the simulated kubelet writes later, and a
client going away ends the stream's reader threads and gives its place in the log stream cap back (a 503 with
``Retry-After`` while the cap is full).
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable
from typing import Any

from flask import Flask
from support import wait_for

from backend.dashboard.logstreams import THREAD_PREFIX
from integration.dashboard.test_pod_logs import darkroom_with_pods, log_threads

from .test_front import get


class RawStream:
    """One HTTP/1.1 GET on a socket of its own, read as it comes."""

    def __init__(self, url: str, path: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.data = b""

    def until(self, needle: bytes) -> bytes:
        while needle not in self.data:
            chunk = self.sock.recv(65536)
            assert chunk, f"closed before {needle!r}: {self.data[-1000:]!r}"
            self.data += chunk
        return self.data

    def close(self) -> None:
        self.sock.close()


def test_log_streams_run_on_the_loop_and_end_with_their_clients(
    make_app: Callable[..., Flask], serve_front: Callable[[Flask], str], api_client: Any, namespace: str
) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(api_client)
    (pod,) = darkroom_with_pods(custom, api_client, namespace, "fronted", replicas=1)
    app = make_app(request_threads=1, log_stream_max=3, sse_heartbeat_s=1.0, stream_retry_after_s=4)
    url = serve_front(app)
    path = f"/ui/darkrooms/{namespace}/fronted/logs"
    wait_for(lambda: get(url, path, timeout_s=30).status == 200, timeout_s=10, message="the Darkroom in the API's cache")
    streams = [RawStream(url, f"{path}/stream?pod={pod}&tail=1&follow=1") for _ in range(3)]
    try:
        for stream in streams:
            head = stream.until(b"event: lines")
            assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        # were the streams holding the one request thread, these would wait until their timeout
        assert get(url, "/healthz", timeout_s=30).status == 200
        assert get(url, path, timeout_s=30).status == 200
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        connection.request("GET", f"{path}/stream?pod={pod}&follow=1", headers={"Accept": "application/json"})
        refused = connection.getresponse()
        assert refused.status == 503 and refused.getheader("Retry-After") == "4"
        refused.read()
        connection.close()
        # a line the simulated kubelet writes while the log is followed
        assert b"simulated: no container runs on" in streams[0].until(b"simulated: no container runs on")
    finally:
        for stream in streams:
            stream.close()
    wait_for(lambda: not [t for t in log_threads() if t.name == f"{THREAD_PREFIX}-{pod}"] or None, timeout_s=15)
    again = RawStream(url, f"{path}/stream?pod={pod}&tail=1")  # the cap's places came back; no follow: it ends
    try:
        assert b"event: done" in again.until(b"event: done")
    finally:
        again.close()
