"""CSRF protection (flask-wtf's ``CSRFProtect``) and the Content-Security-Policy of the dashboard.

:func:`install` is called once by :mod:`backend.dashboard`; it sets ``CSRFProtect`` up on the app
with its automatic check off, and checks in :func:`check` (a before-request hook, after
authentication) only the requests our rule names:

- Every state-changing request (not GET/HEAD/OPTIONS) to a dashboard route (``/``, ``/ui/...``)
  must carry the CSRF token: form field ``csrf_token`` or header ``X-CSRF-Token`` (htmx sends it
  from the ``csrf-token`` meta tag of ``base.html``, see ``frontend/static/dashboard.js``). Always,
  with or without a login: in the local mode (loopback) a cross-site form could otherwise drive a local
  dashboard.
- JSON API requests need no token when the browser cannot send them from another site on its own:
  with ``Authorization: Bearer`` (never attached by a browser), without the session cookie (e.g.
  curl), or in a shape that needs a CORS preflight (a JSON body, PUT/PATCH/DELETE) — preflights
  from other origins are refused (:mod:`backend.api.hardening`). A POST that carries the session cookie
  and a "simple" content type (form, multipart, text/plain, none) does need the token.
  ``/login`` and ``/logout`` are exempt (no session to ride on; cross-site logins and logouts are refused by
  :mod:`backend.identity.login`).

The token is flask-wtf's: a random value kept in Flask's signed session cookie
(:mod:`backend.identity.cookies`: HttpOnly, SameSite=Strict), handed to the page signed with the app's
secret key, and compared in constant time. Settings, with why: ``WTF_CSRF_TIME_LIMIT`` None — a
token lives as long as its session (a dashboard left open for an hour must still save);
``WTF_CSRF_SSL_STRICT`` off — its Referer check cannot work under our ``Referrer-Policy:
no-referrer``, and the cross-site check it stands for is SameSite=Strict plus the ``Origin`` /
``Sec-Fetch-Site`` check of :func:`backend.api.hardening.cross_site`. Failures answer 403 (HTML for browsers,
problem+json otherwise) with the same wording as before flask-wtf.

Every HTML response gets :data:`CSP` (scripts, styles, connections and form targets: this origin
only; no inline script or style; not frameable) unless the view set its own. Since form targets are this origin only —
redirects included —, a logout that goes on to the identity provider is a page that goes there (:func:`leave_by_page`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, render_template, request
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.wrappers import Response as BaseResponse

from backend.api.problems import Problem
from backend.identity.cookies import SESSION_COOKIE

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SIMPLE_TYPES = frozenset({"", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain"})
EXEMPT_PATHS = frozenset({"/login", "/logout"})
CSRF_CONFIG = {
    "WTF_CSRF_CHECK_DEFAULT": False,  # :func:`check` decides which requests need the token
    "WTF_CSRF_METHODS": ["POST", "PUT", "PATCH", "DELETE"],
    "WTF_CSRF_FIELD_NAME": CSRF_FIELD,
    "WTF_CSRF_HEADERS": [CSRF_HEADER],
    "WTF_CSRF_TIME_LIMIT": None,
    "WTF_CSRF_SSL_STRICT": False,
}
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


def _needs_token() -> bool:
    if request.method in SAFE_METHODS or request.path in EXEMPT_PATHS:
        return False
    if request.blueprint == "dashboard":
        return True
    if request.headers.get("Authorization") is not None or SESSION_COOKIE not in request.cookies:
        return False
    return request.method == "POST" and request.mimetype in SIMPLE_TYPES


def _refusal() -> Response:
    detail = "the CSRF token is missing or not valid: reload the page and try again"
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    if best == "text/html" and not request.headers.get("HX-Request"):
        html = render_template("error.html", status=403, title="Request refused", detail=detail)
        return Response(html, status=403, mimetype="text/html")
    return Problem(403, detail).response()


def check(csrf: CSRFProtect) -> BaseResponse | None:
    """The before-request check: 403 when a request that needs the CSRF token lacks a valid one."""
    if not _needs_token():
        return None
    try:
        csrf.protect()
    except CSRFError:  # flask-wtf logged why (missing, invalid, not this session's) at INFO
        return _refusal()
    return None


def finish(response: Response) -> Response:
    """The after-request hook: add the CSP to HTML."""
    if response.mimetype == "text/html" and "Content-Security-Policy" not in response.headers:
        response.headers["Content-Security-Policy"] = CSP
    return response


def leave_by_page(response: Response) -> Response:
    """The after-request hook for ``POST /logout`` going on to the identity provider's logout: a page that goes there.

    ``form-action 'self'`` covers every redirect a form submission leads to (Chromium checks each hop), so the logout
    form's redirect to the provider's end-session endpoint — and on through its own pages — would be blocked and the
    person left on a page whose session has ended. A same-origin page whose ``<meta http-equiv="refresh">`` goes there
    is no form submission: ``leaving.html`` (no-store; the session cookie is cleared with it, as with the redirect).
    Only for a browser's navigation (``Sec-Fetch-Mode: navigate``): any other client gets the redirect as it is."""
    if request.method != "POST" or request.path != "/logout" or response.status_code not in (302, 303):
        return response
    if request.headers.get("Sec-Fetch-Mode") != "navigate":
        return response
    target = response.headers.get("Location", "")
    parts = urlsplit(target)
    if not parts.netloc or (parts.scheme, parts.netloc) == (request.scheme, request.host):
        return response
    html = render_template("leaving.html", target=target, provider=parts.netloc)
    return Response(html, status=200, mimetype="text/html", headers={"Cache-Control": "no-store"})


def install(blueprint: Blueprint) -> None:
    def _init(setup: object) -> None:
        app: Flask = setup.app  # type: ignore[attr-defined]
        app.config.update(CSRF_CONFIG)
        csrf = CSRFProtect(app)  # also the ``csrf_token()`` template global
        app.before_request(lambda: check(csrf))

    blueprint.record_once(_init)
    blueprint.after_app_request(finish)
    blueprint.after_app_request(leave_by_page)  # runs before finish (Flask runs them last-registered first): its page gets the CSP
    blueprint.app_context_processor(lambda: {"csrf_field": CSRF_FIELD})
