"""API settings: one frozen dataclass with documented defaults, built once from the environment.

:meth:`ApiSettings.from_environ` reads ``DARKROOM_API_<FIELD>`` variables (plus ``PORT``; the bearer token
is ``DARKROOM_API_TOKEN``, its old name ``DARKROOM_API_API_TOKEN`` still works with a ``FutureWarning``); the
entry points (:mod:`backend.wsgi`, ``scripts/run_api.py``) call it and pass the result to
:func:`backend.app.create_app`. :meth:`ApiSettings.check` refuses unsafe combinations at startup.
"""

from __future__ import annotations

import ipaddress
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ENV_PREFIX = "DARKROOM_API_"
TOKEN_ENV = "DARKROOM_API_TOKEN"
# Fields whose variable is not ENV_PREFIX + FIELD: the token is one name everywhere (README, deploy/, compose).
ENV_NAMES = {"api_token": TOKEN_ENV}
# Old names still read, with a FutureWarning (a deprecation meant for whoever runs the product): old -> new.
DEPRECATED_ENV_NAMES = {"DARKROOM_API_API_TOKEN": TOKEN_ENV}


def env_name(field_name: str) -> str:
    """The environment variable that sets ``field_name``."""
    return ENV_NAMES.get(field_name, ENV_PREFIX + field_name.upper())


def _with_deprecated_names(environ: Mapping[str, str]) -> Mapping[str, str]:
    """``environ`` with each old name's value under its new name (the new name wins), warning once per old name used."""
    renamed = dict(environ)
    for old, new in DEPRECATED_ENV_NAMES.items():
        if old not in environ:
            continue
        if new in environ:
            warnings.warn(f"{old} is deprecated and ignored because {new} is set: remove {old}", FutureWarning, stacklevel=3)
        else:
            warnings.warn(f"{old} is deprecated: rename it {new} (the old name will stop working)", FutureWarning, stacklevel=3)
            renamed[new] = environ[old]
    return renamed


class UnsafeSettings(ValueError):
    """The settings would expose the API without protection (e.g. non-loopback bind without a token)."""


@dataclass(frozen=True)
class ApiSettings:
    """Everything the API process can be told.

    Serving: ``host`` (default loopback) and ``port``. Off loopback, ``api_token`` is required and
    every endpoint but ``/healthz`` and ``/readyz`` demands ``Authorization: Bearer <token>`` (or the
    dashboard's session cookie). ``secret_key`` signs session cookies and CSRF tokens (random per
    process when unset; replicas must share it: :mod:`backend.security`); a session ends
    ``session_lifetime_s`` after login. ``cors_origins``: comma-separated exact origins allowed to call the API from
    a browser (default: none). ``max_content_length_bytes``: larger request bodies get 413.
    Cluster: ``kubeconfig`` (None: KUBECONFIG, ~/.kube/config, in-cluster); ``namespace``: serve one
    namespace only (None: all); ``field_manager`` of our writes; ``cache_sync_timeout_s`` how long
    startup waits for the informers (the app starts anyway; /readyz says 503 until synced).
    Live updates: ``sse_heartbeat_s`` between SSE comments on an idle ``/watch``; ``sse_history``
    events kept for ``Last-Event-ID`` resume.
    Pagination: ``page_size_max`` largest ``limit`` accepted.
    Sessions and abuse: ``session_namespace`` holds the shared list of logged-out sessions
    (:mod:`backend.revocation`; the API's own namespace); after ``auth_failures_max`` wrong tokens
    from one client within ``auth_failure_window_s`` its further attempts get 429 until the window
    has passed. ``allowed_hosts``: comma-separated host names the ``Host`` header may name (DNS
    rebinding protection); empty: the loopback names while bound to loopback, any host when a token
    is required (then the token protects). Probes (``/healthz``, ``/readyz``) answer any host.
    Across replicas: ``consistency_wait_s`` how long a read carrying a consistency token waits for
    this replica's cache to reach the client's own write (:mod:`backend.consistency`), then 503.
    Serving limits (production server, :mod:`backend.asgi`): ``request_threads`` run the Flask
    views (streams and probes hold none of them); ``stream_max_per_client`` /
    ``stream_max_total`` open ``/watch`` streams, over which ``/watch`` answers 503 with
    ``Retry-After: stream_retry_after_s``; ``header_timeout_s``: a request's headers must be in
    within this time of its first byte (of the connection, for the first request), else the
    connection is closed; ``body_timeout_s``: its body within this time of the headers, else 408.
    ``hsts_max_age_s``: ``Strict-Transport-Security`` max-age on responses served over https (0: no header).
    """

    host: str = "127.0.0.1"
    port: int = 5000
    api_token: str | None = None
    secret_key: str | None = None
    session_lifetime_s: int = 12 * 3600
    cors_origins: str = ""
    max_content_length_bytes: int = 1_048_576
    kubeconfig: Path | None = None
    namespace: str | None = None
    field_manager: str = "darkroom-control-panel"
    cache_sync_timeout_s: float = 30.0
    sse_heartbeat_s: float = 15.0
    sse_history: int = 1000
    page_size_max: int = 1000
    consistency_wait_s: float = 5.0
    session_namespace: str = "darkroom-system"
    auth_failures_max: int = 10
    auth_failure_window_s: float = 60.0
    allowed_hosts: str = ""
    log_level: str = "INFO"
    request_threads: int = 32
    stream_max_per_client: int = 32
    stream_max_total: int = 2000
    stream_retry_after_s: int = 10
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    hsts_max_age_s: int = 31_536_000

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
        """Settings from ``DARKROOM_API_<FIELD>`` variables (:func:`env_name`) and ``PORT``, then ``overrides``."""
        environ = _with_deprecated_names(environ)
        values: dict[str, Any] = {}
        if environ.get("PORT"):
            values["port"] = int(environ["PORT"])
        for f in fields(cls):
            raw = environ.get(env_name(f.name))
            if raw is None:
                continue
            type_name = str(f.type)
            try:
                if type_name.startswith("int"):
                    values[f.name] = int(raw)
                elif type_name.startswith("float"):
                    values[f.name] = float(raw)
                elif type_name.startswith("Path"):
                    values[f.name] = Path(raw) if raw else None
                else:
                    values[f.name] = raw or (None if "None" in type_name else raw)
            except ValueError as e:
                raise ValueError(f"{env_name(f.name)}: {e}") from e
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
