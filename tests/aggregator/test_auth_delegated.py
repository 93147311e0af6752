"""Delegated authentication and authorization of the aggregated server, against the real control plane.

Behaviours: X-Remote-User/X-Remote-Group are trusted only from the front proxy's client certificate
(issued by the requestheader CA, CN in requestheader-allowed-names, both read from
kube-system/extension-apiserver-authentication): with it the asserted user is authorized by a
SubjectAccessReview (alice: 403 naming alice; the system:masters group: allowed); without it —
``X-Remote-User: system:admin`` alone — the request is 401, and with a bearer token the token's user
(bob) is the one authorized; a certificate from the requestheader CA with another CN does not make the
headers count; a client certificate from the cluster's client CA authenticates its CN and O; a bearer
token is a TokenReview (unknown token: 401); nothing is anonymous (401 Status), discovery included,
except the health endpoints; 403 messages read like kube-apiserver's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .aggregated_server import GROUP_PATH, Aggregator

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def client_certificate(pki: Path, ca: str, out: Path, *, cn: str, org: str | None = None) -> tuple[str, str]:
    """A client certificate for ``cn`` (and organisation ``org``) signed by ``pki/<ca>.crt``."""
    ca_cert = x509.load_pem_x509_certificate((pki / f"{ca}.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((pki / f"{ca}.key").read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] + ([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)] if org else [])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(attributes))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    cert_path, key_path = out / f"{cn.replace(':', '_')}.crt", out / f"{cn.replace(':', '_')}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_the_front_proxy_may_assert_users(aggregator: Aggregator, team: str) -> None:
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    assert aggregator.get(path, user="alice").status_code == 200  # alice has view in her team namespace
    denied = aggregator.get(f"{GROUP_PATH}/combinedtasks", user="alice")
    assert denied.status_code == 403
    assert denied.json()["message"] == (
        'combinedtasks.search.task.example.example.com is forbidden: User "alice" cannot list resource "combinedtasks" '
        'in API group "search.task.example.example.com" at the cluster scope'
    )
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", user="someone", group="system:masters").status_code == 200
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", user="").status_code == 401  # the proxy asserted nobody


def test_x_remote_user_without_the_proxy_certificate_is_refused(aggregator: Aggregator, tmp_path: Path) -> None:
    spoofed = {"X-Remote-User": "system:admin", "X-Remote-Group": "system:masters"}
    response = aggregator.get(f"{GROUP_PATH}/combinedtasks", headers=spoofed)
    assert response.status_code == 401 and response.json() == UNAUTHORIZED
    as_bob = aggregator.get(f"{GROUP_PATH}/combinedtasks", headers=spoofed, token=aggregator.token("bob"))
    assert as_bob.status_code == 403 and 'User "bob" cannot list' in as_bob.json()["message"]
    # Issued by the requestheader CA, but not to an allowed name (front-proxy-client): the headers mean nothing.
    impostor = client_certificate(aggregator.pki, "front-proxy-ca", tmp_path, cn="not-the-proxy")
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", headers=spoofed, cert=impostor).status_code == 401


def test_client_certificates_of_the_cluster_ca_authenticate_their_subject(aggregator: Aggregator, tmp_path: Path) -> None:
    master = client_certificate(aggregator.pki, "ca", tmp_path, cn="carol", org="system:masters")
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", cert=master).status_code == 200
    plain = client_certificate(aggregator.pki, "ca", tmp_path, cn="dave")
    response = aggregator.get(f"{GROUP_PATH}/combinedtasks", cert=plain)
    assert response.status_code == 403 and 'User "dave"' in response.json()["message"]
    # A cluster-CA certificate is a user, never a proxy: its X-Remote-User is ignored.
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", cert=plain, headers={"X-Remote-User": "system:admin"}).status_code == 403


def test_tokens_are_reviewed_and_nothing_is_anonymous(aggregator: Aggregator, team: str) -> None:
    assert aggregator.get(f"{GROUP_PATH}/namespaces/{team}/combinedtasks", token=aggregator.token("alice")).status_code == 200
    assert aggregator.get(f"{GROUP_PATH}/combinedtasks", token="not-a-real-token").json() == UNAUTHORIZED
    for path in ("/apis", GROUP_PATH, "/openapi/v3", "/metrics", f"{GROUP_PATH}/combinedtasks"):
        response = aggregator.get(path)
        assert response.status_code == 401 and response.json() == UNAUTHORIZED, path
    forbidden = aggregator.get("/metrics", token=aggregator.token("bob"))
    assert forbidden.status_code == 403
    assert forbidden.json()["message"] == 'forbidden: User "bob" cannot get path "/metrics"'
