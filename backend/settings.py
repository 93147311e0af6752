"""API settings: one frozen dataclass with documented defaults, built once from the environment.

:meth:`ApiSettings.from_environ` reads ``DARKROOM_API_<FIELD>`` variables (plus ``PORT``); the entry points
(the WSGI module, ``scripts/run_api.py``) call it and pass the result to :func:`backend.app.create_app`.
:meth:`ApiSettings.check` refuses unsafe or unworkable combinations at startup. Who may do what — the local
one-person mode, login, passthrough or impersonation — is the ``authentication``/``identity``/``oidc_*`` group.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import envsettings
from envsettings import variable

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ENV_PREFIX = "DARKROOM_API_"
#: The shared API token of earlier releases, gone: everyone now acts as themselves. Set, it stops the API with
#: :data:`SHARED_TOKEN_GONE` (ignoring it could leave a loopback API open that its owner believes protected).
SHARED_TOKEN_VARIABLES = ("DARKROOM_API_TOKEN", "DARKROOM_API_API_TOKEN")
SHARED_TOKEN_GONE = (
    "{name} is no longer supported: the shared API token is replaced by per-person login. Unset it, and let each person"
    " log in as themselves — with a Kubernetes token (DARKROOM_API_TOKEN_LOGIN, on by default) or through OIDC"
    " (DARKROOM_API_OIDC_ISSUER_URL, DARKROOM_API_OIDC_CLIENT_ID, DARKROOM_API_OIDC_CLIENT_SECRET); API clients send their own"
    " token as 'Authorization: Bearer <token>'. See docs/concepts.md, 'Identity'."
)
AUTHENTICATIONS = ("local", "login")
IDENTITIES = ("passthrough", "impersonate")
SECRET_FIELDS = ("secret_key", "oidc_client_secret")


class UnsafeSettings(ValueError):
    """The settings would expose the API without protection, or cannot work (the message says which variable)."""


def _choice(name: str, allowed: tuple[str, ...], *, empty_is_unset: bool = False) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in allowed and not (empty_is_unset and value == ""):
            raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")
        return value

    parse.__name__ = name
    return parse


_authentication = _choice("authentication", AUTHENTICATIONS, empty_is_unset=True)  # "": by address, as when unset
_identity = _choice("identity", IDENTITIES)


@dataclass(frozen=True)
class ApiSettings:
    """Everything the API process can be told; each field's variable and meaning are in its metadata
    (:func:`envsettings.variable`). Groups: serving (host, port, token, signing key, sessions, CORS, body size),
    the cluster (kubeconfig, namespace, field manager, cache sync), live updates (SSE), pagination, sessions and
    abuse (logged-out sessions, wrong-token limit, allowed Host names), across replicas (consistency wait) and the
    production server's limits (:mod:`backend.server.asgi`: threads, /watch caps, header/body deadlines, HSTS).
    """

    host: str = field(default="127.0.0.1", metadata=variable(f"{ENV_PREFIX}HOST", doc="Address to serve on (default loopback)."))
    port: int = field(default=5000, metadata=variable(f"{ENV_PREFIX}PORT", "PORT", doc="TCP port to serve on."))
    secret_key: str | None = field(
        default=None,
        metadata=variable(
            f"{ENV_PREFIX}SECRET_KEY",
            doc="Signs session cookies and CSRF tokens (random per process when unset; replicas must share it).",
        ),
    )
    session_lifetime_s: int = field(
        default=12 * 3600, metadata=variable(f"{ENV_PREFIX}SESSION_LIFETIME_S", doc="A session ends this long after login.")
    )
    cors_origins: str = field(
        default="",
        metadata=variable(
            f"{ENV_PREFIX}CORS_ORIGINS", doc="Comma-separated exact origins allowed to call the API from a browser (default: none)."
        ),
    )
    max_content_length_bytes: int = field(
        default=1_048_576, metadata=variable(f"{ENV_PREFIX}MAX_CONTENT_LENGTH_BYTES", doc="Larger request bodies get 413.")
    )
    kubeconfig: Path | None = field(
        default=None,
        metadata=variable(f"{ENV_PREFIX}KUBECONFIG", doc="Cluster credentials (unset: KUBECONFIG, ~/.kube/config, in-cluster)."),
    )
    namespace: str | None = field(default=None, metadata=variable(f"{ENV_PREFIX}NAMESPACE", doc="Serve one namespace only (unset: all)."))
    field_manager: str = field(
        default="darkroom-control-panel", metadata=variable(f"{ENV_PREFIX}FIELD_MANAGER", doc="The field manager of our writes.")
    )
    cache_sync_timeout_s: float = field(
        default=30.0,
        metadata=variable(
            f"{ENV_PREFIX}CACHE_SYNC_TIMEOUT_S",
            doc="How long startup waits for the informers (the app starts anyway; /readyz says 503 until synced).",
        ),
    )
    sse_heartbeat_s: float = field(
        default=15.0, metadata=variable(f"{ENV_PREFIX}SSE_HEARTBEAT_S", doc="Between SSE comments on an idle /watch.")
    )
    sse_history: int = field(default=1000, metadata=variable(f"{ENV_PREFIX}SSE_HISTORY", doc="Events kept for Last-Event-ID resume."))
    page_size_max: int = field(default=1000, metadata=variable(f"{ENV_PREFIX}PAGE_SIZE_MAX", doc="Largest `limit` accepted."))
    consistency_wait_s: float = field(
        default=5.0,
        metadata=variable(
            f"{ENV_PREFIX}CONSISTENCY_WAIT_S",
            doc="How long a read carrying a consistency token waits for this replica's cache to reach the client's own write"
            " (backend.api.consistency), then 503.",
        ),
    )
    authentication: str = field(
        default="",
        metadata=variable(
            f"{ENV_PREFIX}AUTHENTICATION",
            parse=_authentication,
            doc="`login`: every person logs in (a Kubernetes token, or OIDC when configured) and acts as themselves;"
            " `local`: a one-person tool acting as its own kubeconfig identity, loopback only. Unset: `local` on loopback,"
            " `login` elsewhere.",
        ),
    )
    identity: str = field(
        default="passthrough",
        metadata=variable(
            f"{ENV_PREFIX}IDENTITY",
            parse=_identity,
            doc="How a person's identity reaches the cluster: `passthrough` (their own token; the API server must trust the"
            " identity provider) or `impersonate` (the API's account sends Impersonate-User/-Group for the person it"
            " authenticated through OIDC; pasted Kubernetes tokens still pass through).",
        ),
    )
    token_login: bool = field(
        default=True,
        metadata=variable(
            f"{ENV_PREFIX}TOKEN_LOGIN", doc="Offer logging in with a pasted Kubernetes token (a ServiceAccount or static token)."
        ),
    )
    oidc_issuer_url: str = field(
        default="", metadata=variable(f"{ENV_PREFIX}OIDC_ISSUER_URL", doc="The OpenID provider's issuer URL (empty: no OIDC login).")
    )
    oidc_client_id: str = field(default="", metadata=variable(f"{ENV_PREFIX}OIDC_CLIENT_ID", doc="Our client id at the provider."))
    oidc_client_secret: str = field(
        default="", metadata=variable(f"{ENV_PREFIX}OIDC_CLIENT_SECRET", doc="Our client secret at the provider (from a Secret).")
    )
    oidc_scopes: str = field(
        default="openid profile email offline_access",
        metadata=variable(
            f"{ENV_PREFIX}OIDC_SCOPES", doc="Scopes asked for (`openid` required; `offline_access` lets a session renew its token)."
        ),
    )
    oidc_ca_file: Path | None = field(
        default=None,
        metadata=variable(f"{ENV_PREFIX}OIDC_CA_FILE", doc="CA bundle that signs the provider's certificate (unset: the system's)."),
    )
    oidc_redirect_url: str = field(
        default="",
        metadata=variable(
            f"{ENV_PREFIX}OIDC_REDIRECT_URL",
            doc="The callback URL registered at the provider (unset: built from the request, `<scheme>://<host>/login/oidc/callback`).",
        ),
    )
    oidc_username_claim: str = field(
        default="sub",
        metadata=variable(f"{ENV_PREFIX}OIDC_USERNAME_CLAIM", doc="With `impersonate`: the ID token claim that names the person."),
    )
    oidc_groups_claim: str = field(
        default="groups",
        metadata=variable(f"{ENV_PREFIX}OIDC_GROUPS_CLAIM", doc="With `impersonate`: the ID token claim that lists the person's groups."),
    )
    oidc_username_prefix: str = field(
        default="oidc:",
        metadata=variable(
            f"{ENV_PREFIX}OIDC_USERNAME_PREFIX",
            doc="With `impersonate`: put before every impersonated user name (never empty, never `system:`), as kube-apiserver's"
            " own OIDC prefix does.",
        ),
    )
    oidc_groups_prefix: str = field(
        default="oidc:",
        metadata=variable(f"{ENV_PREFIX}OIDC_GROUPS_PREFIX", doc="With `impersonate`: put before every impersonated group (never empty)."),
    )
    session_namespace: str = field(
        default="darkroom-system",
        metadata=variable(
            f"{ENV_PREFIX}SESSION_NAMESPACE",
            doc="Holds the login sessions, one Secret each (backend.identity.sessions; the API's own namespace).",
        ),
    )
    review_cache_ttl_s: float = field(
        default=10.0,
        metadata=variable(
            f"{ENV_PREFIX}REVIEW_CACHE_TTL_S",
            doc="How long a TokenReview or access review answer is reused (k8s.io/apiserver's delegated default).",
        ),
    )
    stream_review_ttl_s: float = field(
        default=60.0,
        metadata=variable(
            f"{ENV_PREFIX}STREAM_REVIEW_TTL_S",
            doc="How old an access review answer a live stream still acts on (at least the review cache's TTL; a"
            " request always asks again after REVIEW_CACHE_TTL_S). kube-apiserver authorizes a watch once, at its start.",
        ),
    )
    auth_failures_max: int = field(
        default=10,
        metadata=variable(
            f"{ENV_PREFIX}AUTH_FAILURES_MAX",
            doc="Wrong credentials from one client within auth_failure_window_s after which its further wrong ones get 429"
            " (a valid credential is always accepted).",
        ),
    )
    auth_failure_window_s: float = field(
        default=60.0, metadata=variable(f"{ENV_PREFIX}AUTH_FAILURE_WINDOW_S", doc="The window auth_failures_max counts in.")
    )
    allowed_hosts: str = field(
        default="",
        metadata=variable(
            f"{ENV_PREFIX}ALLOWED_HOSTS",
            doc="Comma-separated host names the Host header may name (DNS rebinding protection); empty: the loopback names while"
            " bound to loopback, any host otherwise. Probes answer any host.",
        ),
    )
    log_level: str = field(default="INFO", metadata=variable(f"{ENV_PREFIX}LOG_LEVEL", doc="Logging level."))
    request_threads: int = field(
        default=32,
        metadata=variable(
            f"{ENV_PREFIX}REQUEST_THREADS", doc="Threads running the Flask views in the production server (streams and probes hold none)."
        ),
    )
    stream_max_per_client: int = field(
        default=32, metadata=variable(f"{ENV_PREFIX}STREAM_MAX_PER_CLIENT", doc="Open /watch streams per client; over it, 503.")
    )
    stream_max_total: int = field(
        default=2000, metadata=variable(f"{ENV_PREFIX}STREAM_MAX_TOTAL", doc="Open /watch streams in all; over it, 503.")
    )
    stream_retry_after_s: int = field(
        default=10, metadata=variable(f"{ENV_PREFIX}STREAM_RETRY_AFTER_S", doc="The Retry-After of a /watch refused for the caps.")
    )
    log_stream_max: int = field(
        default=20,
        metadata=variable(
            f"{ENV_PREFIX}LOG_STREAM_MAX",
            doc="Open pod log streams (the dashboard's Logs page, each reading its pods' logs as its person) in all; over"
            " it, 503 with the Retry-After of STREAM_RETRY_AFTER_S. Each holds a reader thread and an API server"
            " connection per pod, so it is capped apart from /watch.",
        ),
    )
    namespace_choices_max: int = field(
        default=500,
        metadata=variable(
            f"{ENV_PREFIX}NAMESPACE_CHOICES_MAX",
            doc="The most namespaces the dashboard's namespace pickers (list filters, create forms) offer as a select; with"
            " more, a picker is a text input suggesting 20 matching names as the person types.",
        ),
    )
    header_timeout_s: float = field(
        default=10.0,
        metadata=variable(
            f"{ENV_PREFIX}HEADER_TIMEOUT_S",
            doc="A request's headers must be in within this time of its first byte (of the connection, for the first request),"
            " else the connection is closed.",
        ),
    )
    body_timeout_s: float = field(
        default=30.0,
        metadata=variable(f"{ENV_PREFIX}BODY_TIMEOUT_S", doc="A request's body must be in within this time of the headers, else 408."),
    )
    hsts_max_age_s: int = field(
        default=31_536_000,
        metadata=variable(
            f"{ENV_PREFIX}HSTS_MAX_AGE_S", doc="Strict-Transport-Security max-age on responses served over https (0: no header)."
        ),
    )

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(o.strip().rstrip("/") for o in self.cors_origins.split(",") if o.strip())

    @property
    def host_names(self) -> frozenset[str] | None:
        """The host names the Host header may carry (lower case, no port); None: any."""
        listed = frozenset(h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip())
        if listed:
            return listed
        return LOOPBACK_NAMES if self.on_loopback else None

    @property
    def on_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def local(self) -> bool:
        """The one-person mode: no login, the API acts as its own kubeconfig identity (loopback only)."""
        return (self.authentication or ("local" if self.on_loopback else "login")) == "local"

    @property
    def oidc(self) -> bool:
        return bool(self.oidc_issuer_url)

    def check(self) -> ApiSettings:
        """Raise :class:`UnsafeSettings` for the local mode off loopback, a login with no way to log in, an incomplete OIDC
        or impersonation setup, CORS listing ``*``, or sessions that cannot last."""
        if self.local and not self.on_loopback:
            raise UnsafeSettings(
                f"refusing to serve on {self.host} in the local mode (acting as this process's own kubeconfig identity for"
                f" whoever connects): off loopback every person must log in — leave {ENV_PREFIX}AUTHENTICATION unset or set it to login"
            )
        if not self.local and not self.token_login and not self.oidc:
            raise UnsafeSettings(
                f"login is required but no way to log in is configured: set {ENV_PREFIX}OIDC_ISSUER_URL or {ENV_PREFIX}TOKEN_LOGIN=true"
            )
        if self.oidc:
            self._check_oidc()
        if self.identity == "impersonate" and not self.oidc:
            raise UnsafeSettings(f"{ENV_PREFIX}IDENTITY=impersonate needs OIDC: the API impersonates the people it authenticated itself")
        if self.session_lifetime_s <= 0:
            raise UnsafeSettings(f"{ENV_PREFIX}SESSION_LIFETIME_S must be a positive number of seconds")
        if "*" in self.allowed_origins:
            raise UnsafeSettings(f"{ENV_PREFIX}CORS_ORIGINS must list exact origins, not '*'")
        if not 0 <= self.review_cache_ttl_s <= self.stream_review_ttl_s:
            raise UnsafeSettings(f"{ENV_PREFIX}REVIEW_CACHE_TTL_S must be 0 or more, and {ENV_PREFIX}STREAM_REVIEW_TTL_S at least as long")
        return self

    def _check_oidc(self) -> None:
        issuer = urlsplit(self.oidc_issuer_url)
        loopback = (issuer.hostname or "") in LOOPBACK_NAMES
        if issuer.scheme != "https" and not (issuer.scheme == "http" and loopback):
            raise UnsafeSettings(f"{ENV_PREFIX}OIDC_ISSUER_URL must be an https URL (http only for a provider on loopback)")
        if not self.oidc_client_id:
            raise UnsafeSettings(f"{ENV_PREFIX}OIDC_CLIENT_ID is required with {ENV_PREFIX}OIDC_ISSUER_URL")
        if "openid" not in self.oidc_scopes.split():
            raise UnsafeSettings(f"{ENV_PREFIX}OIDC_SCOPES must include openid")
        for name, prefix in (("USERNAME_PREFIX", self.oidc_username_prefix), ("GROUPS_PREFIX", self.oidc_groups_prefix)):
            if self.identity == "impersonate" and (not prefix or prefix.startswith("system:")):
                raise UnsafeSettings(
                    f"{ENV_PREFIX}OIDC_{name} must be set and must not start with 'system:' when the API impersonates: an identity"
                    " provider must never be able to name a Kubernetes system user or group"
                )

    def __repr__(self) -> str:  # never print the signing key or the client secret
        shown = ", ".join(
            f"{f.name}={'***' if f.name in SECRET_FIELDS and getattr(self, f.name) else getattr(self, f.name)!r}" for f in fields(self)
        )
        return f"ApiSettings({shown})"

    __str__ = __repr__

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **overrides: Any) -> ApiSettings:
        """Settings from the fields' variables (``DARKROOM_API_<FIELD>``, ``PORT``), then ``overrides``. The shared token of
        earlier releases stops it with :class:`UnsafeSettings` naming what replaces it."""
        for name in SHARED_TOKEN_VARIABLES:
            if environ.get(name):
                raise UnsafeSettings(SHARED_TOKEN_GONE.format(name=name))
        return envsettings.from_environ(cls, environ, **overrides)
