"""The benchmarks' HTTP client (``bench/common.py``'s ``Conn``) survives a keep-alive connection the server closed
while it sat idle, and does not send a request twice once the server has started answering it.

Offline: a loopback server this test starts, speaking just enough HTTP/1.1. ``bench/`` is put on ``sys.path`` the way
the benchmarks run, and its modules leave with it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from tests.support import bench_module

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture(scope="module")
def common() -> Iterator[ModuleType]:
    with bench_module("common") as module:
        yield module


def answer_and_close(connection: socket.socket, _: int) -> bool:
    connection.sendall(ANSWER)
    return False


def answer_half_and_close(connection: socket.socket, _: int) -> bool:
    connection.sendall(ANSWER[:20])
    return False


class Server:
    """Accepts connections one after another; ``behave(connection, request_number)`` answers each request."""

    def __init__(self, behave: Callable[[socket.socket, int], bool]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[bytes] = []
        self.connections = 0
        self._behave = behave
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                while True:
                    data = connection.recv(65536)
                    if not data:
                        break
                    self.requests.append(data.split(b" ", 2)[1])
                    if not self._behave(connection, len(self.requests)):
                        break  # closes this connection

    def close(self) -> None:
        self.listener.close()


def test_a_request_on_a_connection_the_server_closed_while_idle_goes_out_again_on_a_new_one(common: ModuleType) -> None:
    # Each connection answers one request and is then closed by the server: the next request finds it closed.
    server = Server(answer_and_close)
    try:
        conn = common.Conn(server.port, timeout_s=5)
        assert conn.request("GET", "/first") == (200, b"{}")
        assert conn.request("POST", "/second", b"{}") == (200, b"{}")
        assert conn.request("GET", "/third") == (200, b"{}")
        assert server.requests == [b"/first", b"/second", b"/third"]
        assert server.connections == 3
        conn.close()
    finally:
        server.close()


def test_an_answer_cut_off_midway_is_an_error_not_a_second_request(common: ModuleType) -> None:
    server = Server(answer_half_and_close)
    try:
        conn = common.Conn(server.port, timeout_s=5)
        with pytest.raises(ConnectionError, match="server closed the connection"):
            conn.request("POST", "/once", b"{}")
        assert server.requests == [b"/once"]
        conn.close()
    finally:
        server.close()
