"""How :class:`cluster.requesting.Transport` speaks HTTP where no API server shows it: a watch body in whatever
pieces it comes (chunks that split lines or carry several, or a body that ends by closing), a body cut off midway,
and the headers of the process's own requests against a person's impersonated ones (a header that repeats).

Offline: a loopback server this module starts answers each request with bytes the test gives it and keeps what it
received. The real servers' streams (kube-apiserver's and devcluster's are chunked) are tested in
``test_informers.py`` and ``test_recovery.py``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import kubernetes.client
import orjson
import pytest

from cluster import errors
from cluster.identities import OWN, Impersonation, User
from cluster.requesting import Transport

EVENTS = [
    {"type": "ADDED", "object": {"metadata": {"name": f"cm-{i}", "resourceVersion": str(i)}, "data": {"k": "v" * i}}} for i in range(5)
]
BODY = b"".join(orjson.dumps(e) + b"\n" for e in EVENTS)


class Loopback:
    """Answers one request per connection with ``answer`` (raw bytes), then closes; ``received`` keeps each request."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.answer = b""
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += connection.recv(65536)
                self.received.append(request)
                connection.sendall(self.answer)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    yield server
    server.listener.close()


@pytest.fixture
def transport(loopback: Loopback) -> Iterator[Transport]:
    configuration = kubernetes.client.Configuration(host=f"http://127.0.0.1:{loopback.port}")
    api_client = kubernetes.client.ApiClient(configuration)
    yield Transport(api_client=api_client, request_timeout_s=5)
    api_client.close()


def chunked(*pieces: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def watched(transport: Transport) -> list[dict[str, object]]:
    with transport.stream("/api/v1/configmaps", query={"watch": True}, read_timeout_s=5) as stream:
        return list(stream)


def test_a_chunked_watch_gives_every_line_whatever_the_chunks_hold(loopback: Loopback, transport: Transport) -> None:
    lines = BODY.split(b"\n")
    split_line = lines[1][:7], lines[1][7:] + b"\n" + lines[2] + b"\n"  # one line over two chunks, the next with it
    loopback.answer = chunked(lines[0] + b"\n", *split_line, lines[3] + b"\n" + lines[4] + b"\n")
    assert watched(transport) == EVENTS


def test_a_watch_whose_body_ends_by_closing_is_read_as_it_comes(loopback: Loopback, transport: Transport) -> None:
    loopback.answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + BODY
    assert watched(transport) == EVENTS


def test_a_chunked_watch_cut_off_midway_is_unavailable_after_the_events_that_came(loopback: Loopback, transport: Transport) -> None:
    first_two = BODY[: BODY.index(b"\n", BODY.index(b"\n") + 1) + 1]
    rest = chunked(BODY[len(first_two) :])
    loopback.answer = chunked(first_two)[: -len(b"0\r\n\r\n")] + rest[: len(rest) // 2]  # ends inside the second chunk
    got: list[dict[str, object]] = []
    with pytest.raises(errors.Unavailable), transport.stream("/api/v1/configmaps", query={"watch": True}, read_timeout_s=5) as stream:
        for event in stream:
            got.append(event)
    assert got == EVENTS[:2]


def test_the_process_sends_its_headers_once_and_a_person_each_of_their_groups(loopback: Loopback, transport: Transport) -> None:
    loopback.answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    assert transport.request("GET", "/api/v1/namespaces", credentials=OWN) == {}
    person = Impersonation(User(name="ana", groups=("team-a", "team-b")))
    assert transport.request("GET", "/api/v1/namespaces", credentials=person) == {}
    own, impersonated = (request.decode().lower().split("\r\n") for request in loopback.received)
    assert sum(line.startswith("accept:") for line in own) == 1
    assert not any(line.startswith("impersonate-") for line in own)
    assert "impersonate-user: ana" in impersonated
    groups = [line for line in impersonated if line.startswith("impersonate-group:")]
    assert groups == ["impersonate-group: team-a", "impersonate-group: team-b"]
