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
   for delegated servers), keyed by the token's SHA-256 — never the token itself, never logged.

Nothing else is accepted: no anonymous requests (the middleware answers 401), except the health
endpoints, which kube's delegated authorizer always allows so that probes need no credentials.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from aggregator.authconfig import AuthConfig
from cluster import Transport

TOKENREVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"


AUTHENTICATED = "system:authenticated"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    how: str = ""  # "requestheader" | "x509" | "token": for logs and tests


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


class TokenReviewer:
    """TokenReview with a TTL cache (successes and failures alike). Thread-safe; blocking (run it in a thread)."""

    def __init__(self, *, transport: Transport, ttl_s: float, audiences: Sequence[str] = ()) -> None:
        self.transport = transport
        self.ttl_s = ttl_s
        self.audiences = tuple(audiences)
        self._cache: dict[str, tuple[float, User | None]] = {}
        self._lock = threading.Lock()
        self.reviews = 0  # TokenReviews sent (for metrics and tests)

    def review(self, token: str) -> User | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] > now:
                return cached[1]
        user = self._ask(token)
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            self._cache[key] = (now + self.ttl_s, user)
        return user

    def _ask(self, token: str) -> User | None:
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = list(self.audiences)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        self.reviews += 1
        result = self.transport.request("POST", TOKENREVIEWS, body=body)
        status = result.get("status") or {}
        if not status.get("authenticated"):
            return None
        info = status.get("user") or {}
        extra = {str(k): tuple(str(x) for x in v or ()) for k, v in (info.get("extra") or {}).items()}
        return User(
            name=str(info.get("username", "")),
            groups=tuple(info.get("groups") or ()),
            uid=str(info.get("uid", "")),
            extra=extra,
            how="token",
        )


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
