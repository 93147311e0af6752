"""Other ways to the cluster under test than its own address (helpers, no tests, no fixtures).

:class:`TcpProxy` sits between a client (an informer) and the cluster on 127.0.0.1 (threads, no dependencies) so a
test can make existing connections stop forwarding without closing — the silently dead connection a NAT timeout or
a vanished peer leaves behind — while new connections still get through (the conftest's ``proxy`` fixture is one).
:func:`kubeconfig_for` writes a copy of the cluster's kubeconfig pointed at another port (a proxy's, or one where
nothing listens).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.clusters import ClusterProcess


class TcpProxy:
    """Forwards 127.0.0.1:port to a target port; :meth:`silence` blackholes the connections open now."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: list[dict[str, Any]] = []
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._spawn(self._accept)

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="test-proxy")
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            pair: dict[str, Any] = {"sockets": (client, upstream), "silent": False}
            with self._lock:
                self._pairs.append(pair)
            self._spawn(self._pump, client, upstream, pair)
            self._spawn(self._pump, upstream, client, pair)

    def _pump(self, source: socket.socket, sink: socket.socket, pair: dict[str, Any]) -> None:
        try:
            while data := source.recv(65536):
                if not pair["silent"]:  # silenced: swallow everything, close nothing
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            if not pair["silent"]:
                for sock in pair["sockets"]:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def silence(self) -> int:
        """Stop forwarding on every open connection without closing it; returns how many."""
        with self._lock:
            for pair in self._pairs:
                pair["silent"] = True
            return len(self._pairs)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); close() alone does not
        self._listener.close()
        with self._lock:
            for pair in self._pairs:
                for sock in pair["sockets"]:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)  # wakes a pump blocked in recv(); close() alone does not
                    sock.close()
        for thread in self._threads:
            thread.join(5)


def kubeconfig_for(kube: ClusterProcess | None, path: Path, *, port: int | None = None) -> Path:
    """A copy of ``kube``'s kubeconfig (its CA and credentials) whose server is on ``port`` instead
    (e.g. a :class:`TcpProxy`, or a free port where nothing listens); without ``kube``, a bare
    kubeconfig for ``http://127.0.0.1:<port>``."""
    import yaml

    if kube is None:
        assert port is not None
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "users": [{"name": "u", "user": {}}],
        }
    else:
        config = yaml.safe_load(kube.kubeconfig.read_text())
        for entry in config["clusters"]:
            scheme, _, _ = entry["cluster"]["server"].partition("://")
            entry["cluster"]["server"] = f"{scheme}://127.0.0.1:{port or kube.port}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path
