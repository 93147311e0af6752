"""Authentication and authorization logic of the aggregated server (aggregator.authn/authz/requestinfo), offline.

Behaviours: request headers count only with a certificate issued by the requestheader CA, valid now,
for client auth, whose CN is allowed (any CN when the allowed list is empty); the user, every group
header, percent-decoded lower-cased extra keys and the UID header are read; a certificate from another
CA, an expired one, a server-only one or a disallowed CN makes the headers mean nothing; client-CA
certificates give CN and O; a token goes to TokenReview once per TTL (the key is a hash; failures are
cached too); every authenticated user is in system:authenticated; SubjectAccessReviews skip health
paths and system:masters, carry resource or non-resource attributes, and are cached per decision TTL;
request attributes follow kube's RequestInfoFactory.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from aggregator import authn
from aggregator.authconfig import AuthConfig
from aggregator.authn import Headers
from aggregator.authz import Authorizer
from aggregator.requestinfo import request_info
from cluster.identities import User
from cluster.reviewing import TokenReviewer

NOW = datetime.now(UTC)


def ca(name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(1).not_valid_before(NOW - timedelta(days=1)).not_valid_after(NOW + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256())
    )  # fmt: skip
    return cert, key


def leaf(
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], cn: str, *, org: str = "", usage: Any = None, expired: bool = False
) -> x509.Certificate:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] + ([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)] if org else [])
    start = NOW - timedelta(days=3 if expired else 1)
    builder = (
        x509.CertificateBuilder().subject_name(x509.Name(names)).issuer_name(issuer[0].subject)
        .public_key(ec.generate_private_key(ec.SECP256R1()).public_key()).serial_number(2)
        .not_valid_before(start).not_valid_after(start + timedelta(days=2 if not expired else 1))
        .add_extension(x509.ExtendedKeyUsage([usage or ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    )  # fmt: skip
    return builder.sign(issuer[1], hashes.SHA256())


PROXY_CA, CLIENT_CA, OTHER_CA = ca("front-proxy-ca"), ca("cluster-ca"), ca("other")
CONFIG = AuthConfig(
    client_cas=(CLIENT_CA[0],),
    requestheader_cas=(PROXY_CA[0],),
    allowed_names=("front-proxy-client",),
    username_headers=("X-Remote-User",),
    group_headers=("X-Remote-Group",),
    extra_prefixes=("X-Remote-Extra-",),
    uid_headers=("X-Remote-Uid",),
)
HEADERS = Headers(
    [
        ("X-Remote-User", "alice"),
        ("X-Remote-Group", "dev"),
        ("x-remote-group", "ops"),
        ("X-Remote-Extra-Acme.com%2Fproject", "x"),
        ("X-Remote-Uid", "u1"),
    ]
)


class FakeTransport:
    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.bodies: list[Any] = []

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.bodies.append(kwargs.get("body"))
        return self.answer


def test_request_headers_only_from_the_front_proxy() -> None:
    proxy = leaf(PROXY_CA, "front-proxy-client")
    user = authn.from_request_headers(proxy, HEADERS, CONFIG)
    assert user == User(name="alice", groups=("dev", "ops"), uid="u1", extra={"acme.com/project": ("x",)}, how="requestheader")
    for cert in (
        None,
        leaf(PROXY_CA, "someone-else"),
        leaf(OTHER_CA, "front-proxy-client"),
        leaf(CLIENT_CA, "front-proxy-client"),
        leaf(PROXY_CA, "front-proxy-client", expired=True),
        leaf(PROXY_CA, "front-proxy-client", usage=ExtendedKeyUsageOID.SERVER_AUTH),
    ):
        assert authn.from_request_headers(cert, HEADERS, CONFIG) is None
    anyone = AuthConfig(**{**CONFIG.__dict__, "allowed_names": ()})
    assert authn.from_request_headers(leaf(PROXY_CA, "any-name"), HEADERS, anyone) is not None
    assert authn.from_request_headers(proxy, Headers([("X-Remote-Group", "dev")]), CONFIG) is None  # nobody asserted


def test_client_certificates_and_tokens() -> None:
    user = authn.from_client_certificate(leaf(CLIENT_CA, "carol", org="team"), CONFIG)
    assert user is not None and (user.name, user.groups, user.how) == ("carol", ("team",), "x509")
    assert authn.from_client_certificate(leaf(PROXY_CA, "carol"), CONFIG) is None
    transport = FakeTransport({"status": {"authenticated": True, "user": {"username": "bob", "groups": ["g"], "extra": {"k": ["v"]}}}})
    reviewer = TokenReviewer(transport=transport, ttl_s=60)  # type: ignore[arg-type]
    spoof = Headers([("Authorization", "Bearer secret-token"), ("X-Remote-User", "system:admin")])
    for _ in range(3):
        found = authn.authenticate(None, spoof, config=CONFIG, tokens=reviewer)
        assert found is not None and found.name == "bob" and found.extra == {"k": ("v",)}
    assert reviewer.reviews == 1 and transport.bodies[0]["spec"] == {"token": "secret-token"}
    assert "secret-token" not in repr(reviewer._cache)
    refused = TokenReviewer(transport=FakeTransport({"status": {"authenticated": False}}), ttl_s=60)  # type: ignore[arg-type]
    assert refused.review("x") is None and refused.review("x") is None and refused.reviews == 1
    assert authn.authenticate(None, Headers([("X-Remote-User", "system:admin")]), config=CONFIG, tokens=reviewer) is None


def test_every_authenticated_user_is_in_system_authenticated() -> None:
    """k8s.io/apiserver's AuthenticatedGroupAdder: kube's discovery manager calls without groups."""
    proxy = leaf(PROXY_CA, "front-proxy-client")
    reviewer = TokenReviewer(transport=FakeTransport({}), ttl_s=60)  # type: ignore[arg-type]
    aggregator = authn.authenticate(proxy, Headers([("X-Remote-User", "system:kube-aggregator")]), config=CONFIG, tokens=reviewer)
    assert aggregator is not None and aggregator.groups == ("system:authenticated",)
    alice = authn.authenticate(proxy, HEADERS, config=CONFIG, tokens=reviewer)
    assert alice is not None and alice.groups == ("dev", "ops", "system:authenticated")
    already = Headers([("X-Remote-User", "bob"), ("X-Remote-Group", "system:authenticated")])
    bob = authn.authenticate(proxy, already, config=CONFIG, tokens=reviewer)
    assert bob is not None and bob.groups == ("system:authenticated",)


def test_subject_access_reviews() -> None:
    transport = FakeTransport({"status": {"allowed": False, "reason": "no RBAC"}})
    authorizer = Authorizer(transport=transport, allow_ttl_s=60, deny_ttl_s=60)  # type: ignore[arg-type]
    alice = User(name="alice", groups=("dev",), extra={"k": ("v",)})
    assert authorizer.authorize(alice, request_info("GET", "/healthz", {})).allowed
    assert authorizer.authorize(User(name="root", groups=("system:masters",)), request_info("GET", "/metrics", {})).allowed
    assert transport.bodies == []
    listing = request_info("GET", "/apis/search.task.example.example.com/v1/namespaces/t/combinedtasks", {"watch": "true"})
    for _ in range(2):
        assert authorizer.authorize(alice, listing).reason == "no RBAC"
    assert authorizer.reviews == 1
    assert transport.bodies[0]["spec"] == {
        "user": "alice",
        "groups": ["dev"],
        "extra": {"k": ["v"]},
        "resourceAttributes": {
            "namespace": "t",
            "verb": "watch",
            "group": "search.task.example.example.com",
            "version": "v1",
            "resource": "combinedtasks",
        },
    }
    authorizer.authorize(alice, request_info("GET", "/apis", {}))
    assert transport.bodies[1]["spec"]["nonResourceAttributes"] == {"path": "/apis", "verb": "get"}
    uncached = Authorizer(transport=transport, allow_ttl_s=0, deny_ttl_s=0)  # type: ignore[arg-type]
    uncached.authorize(alice, listing)
    uncached.authorize(alice, listing)
    assert uncached.reviews == 2


def test_request_info() -> None:
    base = "/apis/search.task.example.example.com/v1"
    cases = {
        ("GET", f"{base}/combinedtasks", ""): ("list", "", ""),
        ("GET", f"{base}/namespaces/n/combinedtasks/x", ""): ("get", "n", "x"),
        ("GET", f"{base}/namespaces/n/combinedtasks", "metadata.name=x"): ("list", "n", "x"),
        ("POST", f"{base}/namespaces/n/combinedtasks", ""): ("create", "n", ""),
        ("DELETE", f"{base}/namespaces/n/combinedtasks", ""): ("deletecollection", "n", ""),
        ("PATCH", f"{base}/namespaces/n/combinedtasks/x", ""): ("patch", "n", "x"),
    }
    for (method, path, selector), (verb, namespace, name) in cases.items():
        info = request_info(method, path, {"fieldSelector": selector} if selector else {})
        assert info.is_resource and (info.verb, info.namespace, info.name, info.resource) == (verb, namespace, name, "combinedtasks")
    assert not request_info("GET", f"{base}", {}).is_resource
    assert not request_info("GET", "/openapi/v3", {}).is_resource
