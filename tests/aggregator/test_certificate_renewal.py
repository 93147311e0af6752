"""A renewed serving certificate is served without a restart, on the real control plane.

A second ``python -m aggregator`` (the session server's identity and RBAC) serves a certificate from a directory
laid out as the kubelet mounts a Secret volume (``tls.crt`` → ``..data/tls.crt``, ``..data`` → a timestamped
directory, swapped by one rename), re-reading it every 0.5 s (``--auth-config-refresh-s``). Renewing it the
kubelet's way (a new directory, then the ``..data`` link replaced at once): the next connection gets the new
certificate and an authenticated list works over it, with the same process (no restart) and nothing logged
as refused. The cases in between (a key that does not match, a file missing) are tests/aggregator/test_tls.py.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import requests
from cryptography import x509

from aggregator import certificates
from tests.clusters import ROOT, free_port

from .aggregated_server import GROUP_PATH, Aggregator


def mount(volume: Path, cert: Path, key: Path, version: str) -> None:
    """Put ``cert`` and ``key`` into ``volume`` as the kubelet updates a Secret volume: one atomic rename."""
    directory = volume / f"..{version}"
    directory.mkdir()
    (directory / "tls.crt").write_bytes(cert.read_bytes())
    (directory / "tls.key").write_bytes(key.read_bytes())
    (volume / "..data_tmp").symlink_to(directory.name)
    os.replace(volume / "..data_tmp", volume / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (volume / name).is_symlink():
            (volume / name).symlink_to(f"..data/{name}")


def served_serial(port: int) -> int:
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, client.wrap_socket(raw) as conn:
        der = conn.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def serial_of(cert: Path) -> int:
    return x509.load_pem_x509_certificate(cert.read_bytes()).serial_number


def test_a_renewed_serving_certificate_is_served_without_a_restart(aggregator: Aggregator) -> None:
    tmp = aggregator.tmp / f"renewal-{time.monotonic_ns()}"
    volume = tmp / "serving-cert"
    volume.mkdir(parents=True)
    first = certificates.self_signed(tmp / "first")
    renewed = certificates.self_signed(tmp / "renewed")
    mount(volume, *first, "2026_11_27_17_00_00")
    port = free_port()
    argv = [sys.executable, "-m", "aggregator", "--kubeconfig", str(aggregator.tmp / "aggregator.kubeconfig")]
    argv += ["--bind-address", "127.0.0.1", "--secure-port", str(port), "--auth-config-refresh-s", "0.5"]
    argv += ["--tls-cert-file", str(volume / "tls.crt"), "--tls-private-key-file", str(volume / "tls.key")]
    log = tmp / "aggregator.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    server = dataclasses.replace(aggregator, url=f"https://127.0.0.1:{port}", ca=volume / "tls.crt", proc=proc, log=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if server.get("/readyz").status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
        token = aggregator.token("admin")
        assert served_serial(port) == serial_of(first[0])
        assert server.get(GROUP_PATH + "/combinedtasks", token=token).status_code == 200

        mount(volume, *renewed, "2026_11_27_17_05_00")
        deadline = time.monotonic() + 15
        while served_serial(port) != serial_of(renewed[0]):
            assert time.monotonic() < deadline, f"the renewed certificate was not served within 15 s: {log.read_text()[-3000:]}"
            time.sleep(0.2)
        answer = server.get(GROUP_PATH + "/combinedtasks", token=token)  # verified against the renewed certificate
        assert answer.status_code == 200, answer.text
        assert proc.poll() is None
        assert "do not load as a pair" not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(30)
