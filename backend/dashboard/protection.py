"""CSRF tokens and the Content-Security-Policy of the dashboard (hooks installed app-wide by the blueprint).

:func:`install` is called once by :mod:`backend.dashboard`. The rule, enforced in :func:`check`:

- Every state-changing request (not GET/HEAD/OPTIONS) to a dashboard route (``/``, ``/ui/...``)
  must carry the CSRF token: form field ``csrf_token`` or header ``X-CSRF-Token`` (htmx sends it,
  see ``frontend/static/dashboard.js``). Always, with or without authentication: without a token
  set (loopback) a cross-site form could otherwise drive a local dashboard.
- JSON API requests need no token when the browser cannot send them from another site on its own:
  with ``Authorization: Bearer`` (never attached by a browser), without the session cookie (e.g.
  curl), or in a shape that needs a CORS preflight (a JSON body, PUT/PATCH/DELETE) — preflights
  from other origins are refused (:mod:`backend.security`). A POST that carries the session cookie
  and a "simple" content type (form, multipart, text/plain, none) does need the token.
  ``/login`` and ``/logout`` are exempt (no session to ride on; cross-site logouts are refused by
  :mod:`backend.security`).

The token is an HMAC (key: ``settings.secret_key`` or a per-process random key) of a random
per-browser value kept in the ``darkroom_csrf`` cookie (HttpOnly, SameSite=Strict), so it cannot be
forged by setting a cookie alone. Failures answer 403 (HTML for browsers, problem+json otherwise).

Every HTML response gets :data:`CSP` (scripts, styles, connections and form targets: this origin
only; no inline script or style; not frameable) unless the view set its own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import Blueprint, Flask, Response, current_app, g, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from backend import state
from backend.problems import Problem
from backend.security import SESSION_COOKIE

CSRF_COOKIE = "darkroom_csrf"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
EXTENSION = "darkroom_control_panel.csrf_key"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SIMPLE_TYPES = frozenset({"", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain"})
EXEMPT_PATHS = frozenset({"/login", "/logout"})
CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "object-src 'none'",
        "frame-ancestors 'none'",
    )
)


def _key(app: Flask) -> bytes:
    key: bytes = app.extensions[EXTENSION]
    return key


def token_for(browser_value: str) -> str:
    return hmac.new(_key(current_app), b"csrf:" + browser_value.encode(), hashlib.sha256).hexdigest()


def csrf_token() -> str:
    """The token for this browser (a template global); issues the browser value cookie when missing."""
    value = request.cookies.get(CSRF_COOKIE)
    if not value or len(value) > 128:
        value = g.get("csrf_new_value")
        if value is None:
            value = g.csrf_new_value = secrets.token_urlsafe(32)
    return token_for(value)


def _valid(submitted: str | None) -> bool:
    value = request.cookies.get(CSRF_COOKIE)
    if not submitted or not value:
        return False
    return hmac.compare_digest(submitted.encode(), token_for(value).encode())


def _needs_token() -> bool:
    if request.method in SAFE_METHODS or request.path in EXEMPT_PATHS:
        return False
    if request.blueprint == "dashboard":
        return True
    if request.headers.get("Authorization") is not None or SESSION_COOKIE not in request.cookies:
        return False
    return request.method == "POST" and request.mimetype in SIMPLE_TYPES


def check() -> BaseResponse | None:
    """The before-request hook: 403 when a request that needs the CSRF token lacks a valid one."""
    if not _needs_token():
        return None
    submitted = request.headers.get(CSRF_HEADER)
    if submitted is None and request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        submitted = request.form.get(CSRF_FIELD)
    if _valid(submitted):
        return None
    detail = "the CSRF token is missing or not valid: reload the page and try again"
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    if best == "text/html" and not request.headers.get("HX-Request"):
        html = render_template("error.html", status=403, title="Request refused", detail=detail)
        return Response(html, status=403, mimetype="text/html")
    return Problem(403, detail).response()


def finish(response: Response) -> Response:
    """The after-request hook: hand out the browser value cookie, add the CSP to HTML."""
    new_value = g.get("csrf_new_value")
    if new_value is not None:
        response.set_cookie(CSRF_COOKIE, new_value, httponly=True, samesite="Strict", secure=request.is_secure, path="/")
    if response.mimetype == "text/html" and "Content-Security-Policy" not in response.headers:
        response.headers["Content-Security-Policy"] = CSP
    return response


def install(blueprint: Blueprint) -> None:
    def _init(setup: object) -> None:
        app: Flask = setup.app  # type: ignore[attr-defined]
        secret = app.extensions[state.EXTENSION].settings.secret_key
        app.extensions[EXTENSION] = (
            hmac.new(secret.encode(), b"darkroom-control-panel.csrf", hashlib.sha256).digest() if secret else secrets.token_bytes(32)
        )

    blueprint.record_once(_init)
    blueprint.before_app_request(check)
    blueprint.after_app_request(finish)
    blueprint.app_context_processor(lambda: {"csrf_token": csrf_token, "csrf_field": CSRF_FIELD})
