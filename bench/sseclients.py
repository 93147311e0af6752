"""``/watch`` clients for ``bench/identity.py``: many live streams per process, each with its person's bearer token.

:func:`swarm` runs in a worker process (fork) and holds its share of the streams on non-blocking sockets, each
bound to a loopback source address of its own person (the API caps streams per client address, as it would per
person behind a proxy). It reads everything it is sent and, for every ``event: darkroom`` frame, records which
change it carried — ``namespace``, ``name`` and ``resourceVersion``, the first members of the event's JSON —
with the CLOCK_MONOTONIC time of the ``recv`` that completed the frame (comparable across processes on Linux,
so the writer's clock and the readers' are one). Everything else is counted: streams that got ``event: ready``,
streams the server refused (their status) or ended, frames whose change could not be read.

Frames are found without decoding the chunked transfer encoding: the server sends each batch of whole frames
as one chunk, so a chunk-size line only ever sits between frames, never inside the JSON searched. The changes are
read straight from the bytes (a regex over a batch: the many streams stay cheap to read); where that does not add
up, each frame is parsed by ``tests/sseframes.py``'s :func:`parse_frame`, as the tests parse theirs.
"""

from __future__ import annotations

import re
import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from common import HOST

from tests.sseframes import parse_frame

CHANGE = re.compile(rb'"namespace":"([^"]*)","name":"([^"]*)","resourceVersion":"([^"]*)"')
DARKROOM_EVENT = b"event: darkroom\n"
HEAD_END = b"\r\n\r\n"


@dataclass(frozen=True)
class StreamSpec:
    """One stream: its number, its person's token ("" for none: the local mode) and its source address."""

    index: int
    token: str
    source: str


@dataclass
class StreamState:
    spec: StreamSpec
    buf: bytearray = field(default_factory=bytearray)
    status: int = 0
    ready: bool = False


@dataclass
class Received:
    """What one process's streams got: per change seen, (stream, time, namespace/name@resourceVersion)."""

    streams: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    refused: dict[int, int] = field(default_factory=dict)  # stream -> HTTP status
    ended: list[int] = field(default_factory=list)
    unreadable: int = 0


def change_key(namespace: str, name: str, resource_version: str) -> str:
    return f"{namespace}/{name}@{resource_version}"


def request_bytes(port: int, token: str) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return f"GET /watch?kind=Darkroom HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n{auth}\r\n".encode()


def frames_in(state: StreamState, received: Received, now: float) -> int:
    """Consume the whole frames in ``state.buf``; record the changes they carry. Returns how many were recorded."""
    end = state.buf.rfind(b"\n\n")
    if end < 0:
        return 0
    portion = bytes(state.buf[: end + 2])
    del state.buf[: end + 2]
    if not state.ready and b"event: ready" in portion:
        state.ready = True
    count = portion.count(DARKROOM_EVENT)
    if not count:
        return 0
    found = CHANGE.findall(portion)
    if len(found) != count:  # the members moved: read the JSON of each frame instead
        found = []
        for raw in portion.split(b"\n\n"):
            frame = parse_frame(raw.decode(errors="replace").split("\n"))
            if frame.event == "darkroom" and frame.data is not None:
                data = orjson.loads(frame.data)
                found.append((data["namespace"].encode(), data["name"].encode(), data["resourceVersion"].encode()))
        received.unreadable += count - len(found)
    for namespace, name, version in found:
        received.streams.append(state.spec.index)
        received.times.append(now)
        received.changes.append(change_key(namespace.decode(), name.decode(), version.decode()))
    return len(found)


def read_head(state: StreamState, received: Received) -> bool:
    """Parse the response head once it is in; False when the stream was refused (recorded)."""
    end = state.buf.find(HEAD_END)
    if end < 0:
        return True
    state.status = int(bytes(state.buf[9:12]))
    del state.buf[: end + 4]
    if state.status != 200:
        received.refused[state.spec.index] = state.status
        return False
    return True


def open_socket(port: int, spec: StreamSpec) -> socket.socket:
    sock = socket.socket()
    sock.bind((spec.source, 0))
    sock.setblocking(False)
    sock.connect_ex((HOST, port))
    return sock


def swarm(port: int, specs: list[StreamSpec], stop: Any, ready: Any, counted: Any, results: Any) -> None:
    """Hold ``specs``' streams until ``stop`` is set; ``ready`` / ``counted`` (shared integers) count streams that got
    ``event: ready`` and changes recorded; the :class:`Received` goes to ``results``."""
    sel = selectors.DefaultSelector()
    received = Received()
    for spec in specs:
        sel.register(open_socket(port, spec), selectors.EVENT_WRITE, StreamState(spec))
    clock = time.monotonic
    while not stop.is_set():
        for key, mask in sel.select(0.1):
            sock, state = key.fileobj, key.data
            assert isinstance(sock, socket.socket) and isinstance(state, StreamState)
            if mask & selectors.EVENT_WRITE:
                try:
                    sock.sendall(request_bytes(port, state.spec.token))
                except OSError:
                    received.ended.append(state.spec.index)
                    sel.unregister(sock)
                    sock.close()
                    continue
                sel.modify(sock, selectors.EVENT_READ, state)
                continue
            try:
                chunk = sock.recv(1 << 18)
            except OSError:
                chunk = b""
            now = clock()
            if chunk:
                state.buf += chunk
            was_ready = state.ready
            alive = bool(chunk) and (state.status == 200 or read_head(state, received))
            if state.status == 200:
                recorded = frames_in(state, received, now)
                if recorded:
                    with counted.get_lock():
                        counted.value += recorded
            if state.ready and not was_ready:
                with ready.get_lock():
                    ready.value += 1
            if not alive:
                if state.status == 200 or not chunk:
                    received.ended.append(state.spec.index)
                sel.unregister(sock)
                sock.close()
    for key in list(sel.get_map().values()):
        leftover = key.fileobj
        assert isinstance(leftover, socket.socket)
        leftover.close()
    results.put(received)
