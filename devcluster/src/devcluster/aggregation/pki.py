"""The certificates and the token of devcluster's aggregation layer, made once in ``<data-dir>/pki``.

- ``front-proxy-ca.crt`` / ``.key`` and ``front-proxy-client.crt`` / ``.key`` (CN ``front-proxy-client``,
  client auth): what devcluster presents to aggregated servers, as kube-apiserver's
  ``--proxy-client-cert-file`` signed by ``--requestheader-client-ca-file``;
- ``client-ca.crt`` / ``.key``: the ``client-ca-file`` devcluster publishes (it signs no certificate
  yet: devcluster authenticates bearer tokens only, see :mod:`devcluster.aggregation.identity`);
- ``admin.token``: the bearer token of the kubeconfig devcluster writes (mode 0600).

Kept while they exist, so a restarted devcluster keeps its identities (and aggregated servers their
trust). ECDSA P-256, valid ten years: a development cluster's lifetime.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

FRONT_PROXY_CLIENT = "front-proxy-client"


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, *, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None
) -> x509.Certificate:
    now = datetime.now(UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer[0].subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=3650))
    )
    if issuer is None:  # a CA
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).add_extension(
            x509.KeyUsage(True, False, True, False, False, True, False, False, False), critical=True
        )
        return builder.sign(key, hashes.SHA256())
    builder = (
        builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    )
    return builder.sign(issuer[1], hashes.SHA256())


def _ensure_pair(
    directory: Path, stem: str, subject: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    if cert_path.exists() and key_path.exists():
        key = serialization.load_pem_private_key(key_path.read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return x509.load_pem_x509_certificate(cert_path.read_bytes()), key
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(subject, key, issuer=issuer)
    _write_private(key_path, _key_pem(key))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


@dataclass(frozen=True)
class Pki:
    """Paths and PEM texts of the aggregation layer's credentials (see the module docstring)."""

    directory: Path
    admin_token: str

    @classmethod
    def load_or_create(cls, directory: Path) -> Pki:
        directory.mkdir(parents=True, exist_ok=True)
        front_proxy_ca = _ensure_pair(directory, "front-proxy-ca", "front-proxy-ca", None)
        _ensure_pair(directory, "front-proxy-client", FRONT_PROXY_CLIENT, front_proxy_ca)
        _ensure_pair(directory, "client-ca", "devcluster-client-ca", None)
        token_path = directory / "admin.token"
        if not token_path.exists():
            _write_private(token_path, secrets.token_urlsafe(32).encode())
        return cls(directory, token_path.read_text().strip())

    @property
    def front_proxy_client(self) -> tuple[Path, Path]:
        return self.directory / "front-proxy-client.crt", self.directory / "front-proxy-client.key"

    @property
    def front_proxy_ca_pem(self) -> str:
        return (self.directory / "front-proxy-ca.crt").read_text()

    @property
    def client_ca_pem(self) -> str:
        return (self.directory / "client-ca.crt").read_text()
