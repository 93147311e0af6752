"""Authentication as k8s.io/apiserver's delegated authenticator does it: request headers, client certificates, tokens.

In order (the first that answers wins; :func:`authenticate` is called by the app's middleware):

1. **Request headers** — only from a client whose TLS certificate was issued by the
   ``requestheader-client-ca-file`` CA, valid now, usable for client auth, and (when
   ``requestheader-allowed-names`` is not empty) with a common name in that list: the front proxy.
   Then ``X-Remote-User`` (the configured username headers) is the user, every ``X-Remote-Group``
   value a group, ``X-Remote-Extra-<key>`` extra values (key lower-cased and percent-decoded) and the
   UID headers the UID. From anyone else these headers mean nothing and are ignored.
2. **Client certificate** issued by ``client-ca-file``: the user is its CN, the groups its O values.
3. **Bearer token**: a ``TokenReview`` (authentication.k8s.io/v1) to the cluster, the answer cached
   ``authn_cache_ttl_s`` (default 10 s, k8s.io/apiserver's ``--authentication-token-webhook-cache-ttl``
   for delegated servers), keyed by the token's SHA-256 — never the token itself, never logged
   (:class:`cluster.reviewing.TokenReviewer`, the implementation the API shares).

Nothing else is accepted: no anonymous requests (the middleware answers 401), except the health
endpoints, which kube's delegated authorizer always allows so that probes need no credentials.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import unquote

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from aggregator.authconfig import AuthConfig
from cluster.identities import AUTHENTICATED, User
from cluster.reviewing import TokenReviewer


class Headers:
    """What :func:`authenticate` needs of a request's headers (case-insensitive, repeated values kept)."""

    def __init__(self, items: Sequence[tuple[str, str]]) -> None:
        self._items = [(k.lower(), v) for k, v in items]

    def all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [v for k, v in self._items if k == wanted]

    def first(self, names: Sequence[str]) -> str:
        for name in names:
            for value in self.all(name):
                if value:
                    return value
        return ""

    def with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        start = prefix.lower()
        return [(k[len(start) :], v) for k, v in self._items if k.startswith(start) and len(k) > len(start)]


def issued_by(cert: x509.Certificate, cas: Sequence[x509.Certificate], *, now: datetime | None = None) -> bool:
    """Whether one of ``cas`` signed ``cert`` directly, both are valid now, and ``cert`` may authenticate clients."""
    moment = now or datetime.now(UTC)
    if not cert.not_valid_before_utc <= moment <= cert.not_valid_after_utc:
        return False
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        if ExtendedKeyUsageOID.CLIENT_AUTH not in usages and ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in usages:
            return False
    except x509.ExtensionNotFound:
        pass  # no EKU extension: any usage (as Go's verifier reads it)
    for ca in cas:
        if not ca.not_valid_before_utc <= moment <= ca.not_valid_after_utc:
            continue
        try:
            cert.verify_directly_issued_by(ca)
        except Exception:  # InvalidSignature, a different issuer, an unsupported key type
            continue
        return True
    return False


def _names(cert: x509.Certificate, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(a.value) for a in cert.subject.get_attributes_for_oid(oid)]


def from_request_headers(cert: x509.Certificate | None, headers: Headers, config: AuthConfig) -> User | None:
    """The user the front proxy asserts, or None when the caller is not the front proxy or asserts nobody."""
    if cert is None or not config.requestheader_enabled or not issued_by(cert, config.requestheader_cas):
        return None
    if config.allowed_names and not set(_names(cert, NameOID.COMMON_NAME)) & set(config.allowed_names):
        return None
    name = headers.first(config.username_headers)
    if not name:
        return None
    groups = tuple(g for header in config.group_headers for g in headers.all(header))
    extra: dict[str, list[str]] = {}
    for prefix in config.extra_prefixes:
        for key, value in headers.with_prefix(prefix):
            extra.setdefault(unquote(key).lower(), []).append(value)
    return User(
        name=name,
        groups=groups,
        uid=headers.first(config.uid_headers),
        extra={k: tuple(v) for k, v in extra.items()},
        how="requestheader",
    )


def from_client_certificate(cert: x509.Certificate | None, config: AuthConfig) -> User | None:
    if cert is None or not config.client_cas or not issued_by(cert, config.client_cas):
        return None
    names = _names(cert, NameOID.COMMON_NAME)
    if not names or not names[0]:
        return None
    return User(name=names[0], groups=tuple(_names(cert, NameOID.ORGANIZATION_NAME)), how="x509")


def bearer_token(headers: Headers) -> str:
    scheme, _, token = headers.first(["Authorization"]).partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authenticate(cert: x509.Certificate | None, headers: Headers, *, config: AuthConfig, tokens: TokenReviewer) -> User | None:
    """The caller, or None (anonymous). Blocking when a token needs a review; ClusterError when the review fails.

    Every authenticated user is in ``system:authenticated`` (k8s.io/apiserver's ``AuthenticatedGroupAdder``):
    kube-apiserver's discovery manager calls as ``system:kube-aggregator`` with no groups, and RBAC's
    ``system:discovery`` lets it read the group-version document only through that group."""
    user = from_request_headers(cert, headers, config) or from_client_certificate(cert, config)
    if user is None:
        token = bearer_token(headers)
        user = tokens.review(token) if token else None
    if user is None or AUTHENTICATED in user.groups:
        return user
    return replace(user, groups=(*user.groups, AUTHENTICATED))
