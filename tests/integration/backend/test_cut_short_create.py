"""A create cut short by the API server going away is all or nothing from the client's view.

The app talks to devcluster through :class:`FaultProxy`, which forwards plain HTTP and "takes the
server down" (drops every connection and refuses new ones) the moment it sees a chosen request
line: here the POST of the credentials Secret, i.e. after the Darkroom was created and before its
Secret — so even the undo cannot reach the server. The client gets 503; once the server is back the
same POST succeeds (201) and leaves exactly one complete Darkroom: its Secret holds the keys and the
"credentials pending" mark is gone. Devcluster only: the proxy must read the requests, which the
real control plane encrypts.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ClusterProcess, as_dict

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from kinds.darkrooms import CREDENTIALS_PENDING_ANNOTATION as CREDENTIALS_PENDING

from .conftest import SENTINEL_ACCESS, SENTINEL_SECRET, s3
from .test_darkroom_credentials import GROUP, PLURAL, VERSION, secret_data


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


@pytest.fixture
def proxied_app(kube: ClusterProcess, crds_installed: None, tmp_path: Path) -> Iterator[tuple[Any, FaultProxy]]:
    from integration.cluster.conftest import kubeconfig_for

    proxy = FaultProxy(kube.port)
    settings = ApiSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port), cache_sync_timeout_s=30.0)
    access = ClusterAccess.start(settings, environ={})
    try:
        yield create_app(settings, access=access).test_client(), proxy
    finally:
        proxy.revive()
        access.stop()
        proxy.close()


@pytest.mark.devcluster_only  # the proxy reads the request lines: plain HTTP only
def test_a_retry_completes_a_create_the_server_cut_short(proxied_app: tuple[Any, FaultProxy], namespace: str, core: Any) -> None:
    http, proxy = proxied_app
    proxy.arm(f"POST /api/v1/namespaces/{namespace}/secrets")
    first = http.post("/darkrooms", json=s3("halfway", namespace))
    assert proxy.tripped.is_set()
    assert first.status_code == 503, first.get_data(as_text=True)
    assert first.mimetype == "application/problem+json"
    proxy.revive()
    # The Darkroom the undo could not remove is there, marked as cut short; the Secret is not.
    from kubernetes import client

    custom = client.CustomObjectsApi(core.api_client)
    stranded = as_dict(custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "halfway"))
    assert stranded["metadata"]["annotations"][CREDENTIALS_PENDING] == "true"
    retry = http.post("/darkrooms", json=s3("halfway", namespace))
    assert retry.status_code == 201, retry.get_data(as_text=True)
    assert retry.get_json()["uid"] == stranded["metadata"]["uid"]  # completed, not replaced
    assert secret_data(core, namespace, "halfway-s3-credentials") == {"accessKey": SENTINEL_ACCESS, "secretKey": SENTINEL_SECRET}
    done = as_dict(custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "halfway"))
    assert CREDENTIALS_PENDING not in (done["metadata"].get("annotations") or {})
    again = http.post("/darkrooms", json=s3("halfway", namespace))
    assert again.status_code == 409  # a complete Darkroom is an ordinary name conflict
