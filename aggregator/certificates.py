"""A self-signed serving certificate, made with ``cryptography`` when none is given (development use).

Called by :mod:`aggregator.serving` when ``--tls-cert-file`` is unset, like k8s.io/apiserver's
``MaybeDefaultWithSelfSignedCerts``: an ECDSA P-256 key and a certificate valid for a year for
``localhost``, ``127.0.0.1``, ``::1`` and the given names (e.g. the Service's DNS names), written to
``cert_dir`` as ``apiserver.crt``/``apiserver.key`` (the key 0600) and reused while they exist.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _alt_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def self_signed(cert_dir: Path, *, names: Sequence[str] = ()) -> tuple[Path, Path]:
    """(certificate, key) in ``cert_dir``, generated if either is missing."""
    cert_path, key_path = cert_dir / "apiserver.crt", cert_dir / "apiserver.key"
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    cert_dir.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "combinedtasks-aggregator@" + datetime.now(UTC).strftime("%s"))])
    now = datetime.now(UTC)
    alt = [_alt_name(n) for n in dict.fromkeys(("localhost", "127.0.0.1", "::1", *names))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, True, False, False, True, False, False, False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path
