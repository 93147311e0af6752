"""API settings: one frozen dataclass with documented defaults, built once from the environment.

:meth:`ApiSettings.from_environ` reads ``DARKROOM_API_<FIELD>`` variables (plus ``PORT``; the bearer token
is ``DARKROOM_API_TOKEN``, its old name ``DARKROOM_API_API_TOKEN`` still works with a ``FutureWarning``); the
entry points (:mod:`backend.server.wsgi`, ``scripts/run_api.py``) call it and pass the result to
:func:`backend.app.create_app`. :meth:`ApiSettings.check` refuses unsafe combinations at startup.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import envsettings
from envsettings import variable

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ENV_PREFIX = "DARKROOM_API_"
TOKEN_ENV = "DARKROOM_API_TOKEN"


class UnsafeSettings(ValueError):
    """The settings would expose the API without protection (e.g. non-loopback bind without a token)."""


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
    api_token: str | None = field(
        default=None,
        metadata=variable(
            TOKEN_ENV,
            deprecated=("DARKROOM_API_API_TOKEN",),
            doc="Bearer token. Required off loopback, where every endpoint but /healthz and /readyz demands"
            " `Authorization: Bearer <token>` (or the dashboard's session cookie).",
        ),
    )
    secret_key: str | None = field(
        default=None,
        metadata=variable(
            f"{ENV_PREFIX}SECRET_KEY",
            doc="Signs session cookies and CSRF tokens (random per process when unset; replicas must share it: backend.identity.sessions).",
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
    session_namespace: str = field(
        default="darkroom-system",
        metadata=variable(
            f"{ENV_PREFIX}SESSION_NAMESPACE",
            doc="Holds the shared list of logged-out sessions (backend.identity.revocation; the API's own namespace).",
        ),
    )
    auth_failures_max: int = field(
        default=10,
        metadata=variable(
            f"{ENV_PREFIX}AUTH_FAILURES_MAX",
            doc="Wrong tokens from one client within auth_failure_window_s after which its further attempts get 429.",
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
            " bound to loopback, any host when a token is required. Probes answer any host.",
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

    def check(self) -> ApiSettings:
        """Raise :class:`UnsafeSettings` when bound off loopback without a token, CORS lists ``*``, or sessions cannot last."""
        if not self.on_loopback and not self.api_token:
            raise UnsafeSettings(f"refusing to serve on {self.host}: off loopback the API needs a bearer token (set {TOKEN_ENV})")
        if self.session_lifetime_s <= 0:
            raise UnsafeSettings(f"{ENV_PREFIX}SESSION_LIFETIME_S must be a positive number of seconds")
        if "*" in self.allowed_origins:
            raise UnsafeSettings(f"{ENV_PREFIX}CORS_ORIGINS must list exact origins, not '*'")
        return self

    def __repr__(self) -> str:  # never print the token or the signing key
        shown = ", ".join(
            f"{f.name}={'***' if f.name in ('api_token', 'secret_key') and getattr(self, f.name) else getattr(self, f.name)!r}"
            for f in fields(self)
        )
        return f"ApiSettings({shown})"

    __str__ = __repr__

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **overrides: Any) -> ApiSettings:
        """Settings from the fields' variables (``DARKROOM_API_<FIELD>``, ``PORT``, ``DARKROOM_API_TOKEN``), then ``overrides``."""
        return envsettings.from_environ(cls, environ, **overrides)
