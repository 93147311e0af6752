"""The aggregated server's serving certificate is re-read without a restart (aggregator.authconfig.TlsContext).

Covers, over real TLS connections on loopback (a thread serves handshakes with the context under test):
unchanged files are not reloaded; renewed files are served from the next connection on while a connection
already open keeps working; a pair that does not load (a key of another certificate, a missing file) leaves
the certificate in service serving, is logged once and is taken once it is fixed; a first pair that does not
load refuses to start.
"""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509

from aggregator import certificates
from aggregator.authconfig import TlsContext


class Server:
    """Accepts connections on loopback, completes the handshake with ``context`` and echoes what it reads."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(raw,), daemon=True).start()

    def _echo(self, raw: socket.socket) -> None:
        try:
            with self._context.wrap_socket(raw, server_side=True) as conn:
                while data := conn.recv(1024):
                    conn.sendall(data)
        except (OSError, ssl.SSLError):
            pass

    def connect(self) -> ssl.SSLSocket:
        client = ssl.create_default_context()
        client.check_hostname = False
        client.verify_mode = ssl.CERT_NONE
        return client.wrap_socket(socket.create_connection(("127.0.0.1", self.port), timeout=10))

    def close(self) -> None:
        self._listener.close()


def serial(conn: ssl.SSLSocket) -> int:
    der = conn.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def served_serial(server: Server) -> int:
    with server.connect() as conn:
        return serial(conn)


def pair(tmp_path: Path, name: str) -> tuple[Path, Path, int]:
    """A new self-signed certificate and key in their own directory; its serial."""
    cert, key = certificates.self_signed(tmp_path / name)
    return cert, key, x509.load_pem_x509_certificate(cert.read_bytes()).serial_number


def install(cert: Path, key: Path, served: tuple[Path, Path]) -> None:
    shutil.copyfile(cert, served[0])
    shutil.copyfile(key, served[1])


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, Path]:
    directory = tmp_path / "mounted"
    directory.mkdir()
    return directory / "tls.crt", directory / "tls.key"


@pytest.fixture
def first(tmp_path: Path, served: tuple[Path, Path]) -> int:
    cert, key, number = pair(tmp_path, "first")
    install(cert, key, served)
    return number


@pytest.fixture
def server(served: tuple[Path, Path], first: int) -> Iterator[tuple[TlsContext, Server]]:
    tls = TlsContext(cert_file=served[0], key_file=served[1])
    running = Server(tls.context)
    yield tls, running
    running.close()


def test_renewed_files_are_served_from_the_next_connection(
    tmp_path: Path, served: tuple[Path, Path], first: int, server: tuple[TlsContext, Server]
) -> None:
    tls, running = server
    assert served_serial(running) == first
    assert tls.reload_certificate() is False  # nothing changed
    open_before = running.connect()
    assert serial(open_before) == first

    cert, key, renewed = pair(tmp_path, "renewed")
    install(cert, key, served)
    assert tls.reload_certificate() is True
    assert served_serial(running) == renewed
    assert tls.reload_certificate() is False
    open_before.sendall(b"still here")  # a connection from before the renewal keeps working, with its certificate
    assert open_before.recv(1024) == b"still here"
    assert serial(open_before) == first
    open_before.close()


def test_a_pair_that_does_not_load_leaves_the_old_certificate_serving(
    tmp_path: Path, served: tuple[Path, Path], first: int, server: tuple[TlsContext, Server], caplog: pytest.LogCaptureFixture
) -> None:
    tls, running = server
    cert, key, renewed = pair(tmp_path, "renewed")
    shutil.copyfile(cert, served[0])  # the new certificate, the old key: a half-done renewal
    with caplog.at_level(logging.WARNING, logger="aggregator.authconfig"):
        assert tls.reload_certificate() is False
        assert tls.reload_certificate() is False  # the same pair again: not retried, not logged again
    assert served_serial(running) == first
    refused = [r for r in caplog.records if "do not load as a pair" in r.getMessage()]
    assert len(refused) == 1, caplog.text
    assert "PRIVATE KEY" not in caplog.text

    served[1].unlink()  # the key gone
    assert tls.reload_certificate() is False
    assert served_serial(running) == first

    shutil.copyfile(key, served[1])  # the renewal completed
    assert tls.reload_certificate() is True
    assert served_serial(running) == renewed


def test_a_first_pair_that_does_not_load_refuses_to_start(tmp_path: Path, served: tuple[Path, Path]) -> None:
    cert, _, _ = pair(tmp_path, "one")
    _, key, _ = pair(tmp_path, "other")
    install(cert, key, served)
    with pytest.raises(ssl.SSLError):
        TlsContext(cert_file=served[0], key_file=served[1])
