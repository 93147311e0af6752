"""Pod log streams behind the production front (backend.server.asgi on uvicorn, in-process), on both clusters.

Covers: a followed log stream is written from the event loop and holds no request thread (with 1 request thread, 3
open log streams leave /healthz and the logs page answering), delivers a line the simulated kubelet writes later, and a
client going away ends the stream's reader threads and gives its place in the log stream cap back (a 503 with
``Retry-After`` while the cap is full). Pods writing 1,000 lines a second each (the simulation's rate annotation),
followed by a client that reads everything and by one that reads nothing: the first gets both pods' lines as they
come, /healthz and the logs page keep answering, and closing both ends their readers.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Flask

from backend.dashboard.logstreams import THREAD_PREFIX
from tests.dashboard.test_pod_logs import darkroom_with_pods, log_threads
from tests.support import wait_for

from .test_front import get


class RawStream:
    """One HTTP/1.1 GET on a socket of its own, read as it comes."""

    def __init__(self, url: str, path: str, *, receive_buffer: int = 0) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.socket()
        if receive_buffer:  # a small window: a client that does not read holds the server's writes up soon
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(30)
        self.sock.connect((host, int(port)))
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


def test_pods_writing_1000_lines_a_second_leave_the_front_answering(
    make_app: Callable[..., Flask], serve_front: Callable[[Flask], str], api_client: Any, namespace: str
) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(api_client)
    pods = darkroom_with_pods(custom, api_client, namespace, "firehose", replicas=2, lines_per_second=1000)
    app = make_app(request_threads=2, sse_heartbeat_s=1.0)
    url = serve_front(app)
    path = f"/ui/darkrooms/{namespace}/firehose/logs"

    def listed() -> bool | None:
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        try:
            connection.request("GET", path)
            body = connection.getresponse().read().decode()
        finally:
            connection.close()
        return all(f'<option value="{pod}">' in body for pod in pods) or None

    wait_for(listed, timeout_s=20, message="the pods in the API's cache")
    reading = RawStream(url, f"{path}/stream?follow=1&tail=1")  # every pod, interleaved: 2,000 lines a second
    stalled = RawStream(url, f"{path}/stream?follow=1&tail=1", receive_buffer=4096)  # reads nothing after its head
    answers: list[tuple[str, int, float]] = []
    received: list[bytes] = []
    stop = threading.Event()

    def read_on() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set() and (chunk := reading.sock.recv(65536)):
                received.append(chunk)

    try:
        reading.until(b"event: lines")
        stalled.until(b"event: lines")
        reader = threading.Thread(target=read_on, name="test-log-reader", daemon=True)
        reader.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # 5 s of 2,000 lines a second to one client, none taken by the other
            for probe in ("/healthz", path):
                began = time.monotonic()
                status = get(url, probe, timeout_s=10).status
                answers.append((probe, status, time.monotonic() - began))
            time.sleep(0.2)
        stop.set()
        reader.join(10)
    finally:
        reading.close()
        stalled.close()
    assert answers and all(status == 200 and took < 5 for _, status, took in answers), answers
    body = b"".join(received)
    lines = body.count(b">simulated: line ")
    assert lines > 2000, lines  # the reading client got the lines as they came (~10,000 in 5 s)
    for pod in pods:
        assert f'<span class="log-pod">{pod}</span> <span class="log-text">simulated: line '.encode() in body
    wait_for(lambda: not [t for t in log_threads() if t.name.removeprefix(f"{THREAD_PREFIX}-") in pods] or None, timeout_s=15)
