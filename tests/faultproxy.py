"""A TCP proxy for fault tests: forwards plain HTTP to a cluster and "takes the server down" on a chosen request.

:class:`FaultProxy` listens on 127.0.0.1 (a free port) and forwards to the cluster's port; :meth:`FaultProxy.arm`
names a request-line prefix (``POST /api/v1/namespaces/ns/secrets``): the moment a client sends it, every open
connection is dropped and new ones are refused until :meth:`FaultProxy.revive` — the API server gone between two
requests of one operation, so even an undo cannot reach it. Devcluster only: the proxy reads request lines, which the
real control plane encrypts. Used by the tests of cut-short creates (the API's side and the reconciler's).
"""

from __future__ import annotations

import contextlib
import socket
import threading


class FaultProxy:
    """127.0.0.1 → the server's port; :meth:`arm` a request-line prefix that takes the "server" down."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.trigger: bytes | None = None
        self.down = threading.Event()
        self.tripped = threading.Event()
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, request_line_prefix: str) -> None:
        self.trigger = request_line_prefix.encode()

    def revive(self) -> None:
        self.trigger = None
        self.down.clear()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down.is_set():
                client.close()  # refused while "down"
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client and self.trigger is not None and self.trigger in data:
                    self._go_down()
                    return
                if self.down.is_set():
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def _go_down(self) -> None:
        self.down.set()
        self.tripped.set()
        with self.lock:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # wakes the pumps, which close their sockets
            self.sockets.clear()

    def close(self) -> None:
        self._go_down()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
