"""Web hardening of every response the app serves, the JSON API's and the dashboard's: the Host check, the CORS
allowlist, security headers, and :func:`cross_site`.

:func:`register` is called once per app by :func:`backend.app.create_app`, before any blueprint and before
authentication (:mod:`backend.identity`), which uses :func:`cross_site` for requests authenticated by cookie.

Host header (DNS rebinding): a request whose ``Host`` names a host outside ``settings.host_names``
(by default the loopback names while the API runs open on loopback) is refused with 400 before
anything else, so a page of another site whose name resolves to 127.0.0.1 cannot use the API.
``/healthz`` and ``/readyz`` answer any host (kubelet probes use the pod IP).

Over https (``request.is_secure``: TLS, or ``X-Forwarded-Proto`` from a proxy gunicorn trusts through
``FORWARDED_ALLOW_IPS``) responses carry ``Strict-Transport-Security: max-age=settings.hsts_max_age_s``. Every
response gets ``X-Content-Type-Options``, ``X-Frame-Options``, ``Referrer-Policy``, ``Cross-Origin-Opener-Policy``
and ``frame-ancestors 'none'`` in its Content-Security-Policy.

CORS: only the exact origins of ``settings.allowed_origins`` get ``Access-Control-Allow-Origin``
(default: none, so no CORS header at all); never ``*``, never credentials, never a reflected
arbitrary origin.

Identity headers a client must never set (:class:`IdentityHeaderFilter`, outermost, before Flask sees the
request): kube's impersonation headers (``Impersonate-*``), the aggregation layer's request headers
(``X-Remote-*``) and every header the client names as hop-by-hop in ``Connection`` (a proxy would drop them;
CVE-2021-31999 smuggled ``Impersonate-User`` past one that way) are removed. The API forwards no client
header to the cluster anyway — every request it makes is built from the person's own credentials
(:mod:`cluster.identities`) — so this keeps any later code from trusting them either.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, request
from flask_cors import CORS

from backend.api.problems import Problem
from backend.settings import ApiSettings

CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID"]
CORS_EXPOSE_HEADERS = ["ETag", "Location", "Retry-After"]
CORS_MAX_AGE_S = 600
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
FRAME_ANCESTORS = "frame-ancestors 'none'"
PROBES = frozenset({"/healthz", "/readyz"})


def register(app: Flask, *, settings: ApiSettings) -> None:
    """Install the identity header filter, the Host check, CORS and the security headers (the filter outermost, then
    the Host check first)."""
    app.wsgi_app = IdentityHeaderFilter(app.wsgi_app)  # type: ignore[method-assign]
    _register_host_check(app, settings)
    _register_cors(app, settings)
    _register_headers(app, settings=settings)


STRIPPED_PREFIXES = ("HTTP_IMPERSONATE_", "HTTP_X_REMOTE_")
# What the server itself must read (framing, routing) even if a client lists it in Connection.
KEPT = frozenset({"HTTP_HOST", "HTTP_CONNECTION", "HTTP_TRANSFER_ENCODING", "HTTP_CONTENT_LENGTH", "HTTP_CONTENT_TYPE"})


class IdentityHeaderFilter:
    """WSGI middleware: removes identity and client-declared hop-by-hop headers from every request's environ."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        strip_identity_headers(environ)
        return self.app(environ, start_response)


def strip_identity_headers(environ: dict[str, Any]) -> None:
    named = {
        "HTTP_" + token.strip().upper().replace("-", "_") for token in str(environ.get("HTTP_CONNECTION", "")).split(",") if token.strip()
    }
    for key in [k for k in environ if k.startswith(STRIPPED_PREFIXES) or (k in named and k not in KEPT)]:
        del environ[key]


def _host_name(host: str) -> str:
    """``Host`` without its port, lower case (``[::1]:5000`` → ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _register_host_check(app: Flask, settings: ApiSettings) -> None:
    allowed = settings.host_names
    if allowed is None:
        return

    @app.before_request
    def _check_host() -> None:
        if request.path in PROBES:
            return
        name = _host_name(request.headers.get("Host", ""))
        if name not in allowed:
            raise Problem(
                400,
                f"the Host header names a host this API does not serve (DNS rebinding protection); "
                f"allowed: {', '.join(sorted(allowed))} (set DARKROOM_API_ALLOWED_HOSTS)",
            )


def _register_cors(app: Flask, settings: ApiSettings) -> None:
    if not settings.allowed_origins:
        return  # default: no cross-origin access at all, not even a header
    # Compiled exact patterns: flask-cors would treat an origin with regex characters (e.g. IPv6 "[::1]") as a regex.
    origins = [re.compile(re.escape(origin) + r"\Z", re.IGNORECASE) for origin in settings.allowed_origins]
    CORS(
        app,
        origins=origins,
        methods=CORS_METHODS,
        allow_headers=CORS_ALLOW_HEADERS,
        expose_headers=CORS_EXPOSE_HEADERS,
        supports_credentials=False,
        send_wildcard=False,
        max_age=CORS_MAX_AGE_S,
    )


def _register_headers(app: Flask, *, settings: ApiSettings) -> None:
    # HSTS only on responses that went out over https (directly or, with FORWARDED_ALLOW_IPS, via the proxy):
    # browsers ignore it over http, and a plain-http development server must stay reachable.
    hsts = f"max-age={settings.hsts_max_age_s}" if settings.hsts_max_age_s > 0 else None

    @app.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if hsts is not None and request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", hsts)
        csp = response.headers.get("Content-Security-Policy")
        if csp is None:
            response.headers["Content-Security-Policy"] = FRAME_ANCESTORS
        elif "frame-ancestors" not in csp:
            response.headers["Content-Security-Policy"] = f"{csp}; {FRAME_ANCESTORS}"
        return response


def cross_site(settings: ApiSettings) -> bool:
    """Whether the browser says this request comes from another site (neither our host nor an allowed origin).

    ``Sec-Fetch-Site`` (set by the browser, never by a page) decides when present: under our
    ``Referrer-Policy: no-referrer`` a browser sends ``Origin: null`` with its own same-origin form
    posts (the logout button), so ``Origin`` is consulted only without it (older browsers)."""
    fetch_site = request.headers.get("Sec-Fetch-Site", "").lower()
    if fetch_site == "cross-site":
        return True
    if fetch_site in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return origin == "null"
    if urlsplit(origin).netloc.lower() == request.host.lower():
        return False
    return origin.lower().rstrip("/") not in {allowed.lower() for allowed in settings.allowed_origins}
