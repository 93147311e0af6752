"""Who may call the API: bearer/session authentication, ``/login`` and ``/logout``, limits on wrong tokens.

:func:`register` is called once per app by :func:`backend.app.create_app`, after the web hardening
(:mod:`backend.api.hardening`) and before any blueprint.

Authentication is on when ``settings.api_token`` is set (required off loopback, see
:meth:`backend.settings.ApiSettings.check`). Then every request but ``/healthz``, ``/readyz``,
``/login``, ``/logout``, static assets and CORS preflights must carry ``Authorization: Bearer
<token>`` (compared in constant time) or the session cookie that ``POST /login`` hands out for
the token (:class:`.sessions.Sessions`). Otherwise:
401 problem+json with ``WWW-Authenticate: Bearer``; a browser navigating (``Accept: text/html``)
is redirected to ``/login?next=...`` instead, and an htmx request gets ``HX-Redirect``. Requests
authenticated by cookie that change something must not come from another site (``Origin`` /
``Sec-Fetch-Site``: :func:`backend.api.hardening.cross_site`), on top of SameSite=Strict; neither may a logout.
A logout ends the session everywhere: its id is revoked in the list all replicas share (:mod:`.revocation`), so a
copy of the cookie stops working too. After ``settings.auth_failures_max`` wrong tokens (header or login
form) from one client address within ``settings.auth_failure_window_s``, that client's attempts get
429 with ``Retry-After`` until the window has passed, even with the right token. The token is never
accepted in a query string and never logged or echoed. The session cookie itself: :mod:`.sessions`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, redirect, render_template, request, session
from werkzeug.wrappers import Response as BaseResponse

from backend.api.hardening import cross_site
from backend.api.problems import Problem
from backend.identity import sessions as session_cookies
from backend.identity.revocation import Revocations
from backend.identity.sessions import SESSION_COOKIE, Sessions
from backend.settings import ApiSettings
from cluster import CachedClient

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/login", "/logout"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class FailedAttempts:
    """Wrong tokens per client address in a sliding window (this process's view; each replica limits on its own)."""

    def __init__(self, *, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self._lock = threading.Lock()
        self._seen: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._seen.setdefault(client, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def retry_after_s(self, client: str) -> int:
        """0 when the client may try; else seconds until its oldest recent failure leaves the window."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(client, now)
            if len(times) < self.limit:
                if not times:
                    self._seen.pop(client, None)
                return 0
            return max(1, int(times[0] + self.window_s - now + 0.999))

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._recent(client, now).append(now)
            if len(self._seen) > 10_000:  # bound the memory an address-spraying client can take
                for key in [k for k, v in self._seen.items() if not v or v[-1] <= now - self.window_s]:
                    del self._seen[key]


def _too_many(attempts: FailedAttempts) -> None:
    wait_s = attempts.retry_after_s(request.remote_addr or "")
    if wait_s:
        raise Problem(429, f"too many wrong tokens from this address; try again in {wait_s} s", headers={"Retry-After": str(wait_s)})


def safe_next(value: str | None) -> str:
    """A local path to go back to after login (never another site: no scheme, no host, no ``//``)."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")) or any(c in value for c in "\r\n\t\\"):
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "/"
    return value


def login_url(next_path: str) -> str:
    return "/login?" + urlencode({"next": safe_next(next_path)})


def register(app: Flask, *, settings: ApiSettings, client: CachedClient) -> None:
    """Install the session and (when a token is set) authentication plus /login and /logout; logged-out sessions
    are shared through ``client`` (:mod:`backend.identity.revocation`)."""
    revocations = Revocations(client=client, namespace=settings.session_namespace)
    secret_key = session_cookies.install(app, settings)
    sessions = None
    if settings.api_token:
        sessions = Sessions(token=settings.api_token, secret_key=secret_key, lifetime_s=settings.session_lifetime_s)
    attempts = FailedAttempts(limit=settings.auth_failures_max, window_s=settings.auth_failure_window_s)
    _register_login(app, settings=settings, sessions=sessions, attempts=attempts, revocations=revocations)
    if sessions is not None:
        _register_authentication(app, settings=settings, sessions=sessions, attempts=attempts, revocations=revocations)


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    return best == "text/html"


def _register_authentication(
    app: Flask, *, settings: ApiSettings, sessions: Sessions, attempts: FailedAttempts, revocations: Revocations
) -> None:
    @app.before_request
    def _authenticate() -> BaseResponse | None:
        if request.method == "OPTIONS":
            return None  # CORS preflights carry no credentials by design
        if request.endpoint == "static" or (request.url_rule is not None and request.url_rule.rule in OPEN_PATHS):
            return None
        header = request.headers.get("Authorization")
        if header is not None:
            _too_many(attempts)
            scheme, _, credentials = header.strip().partition(" ")
            if scheme.lower() == "bearer" and sessions.token_matches(credentials.strip()):
                return None
            attempts.failed(request.remote_addr or "")
            return _unauthorized("the bearer token is not valid", error="invalid_token")
        current = sessions.current() if SESSION_COOKIE in request.cookies else None
        if current is not None and not revocations.revoked(current[0]):
            if request.method not in SAFE_METHODS and cross_site(settings):
                raise Problem(403, "cross-site requests with the session cookie are refused; use a bearer token")
            return None
        if request.method in ("GET", "HEAD") and _wants_html() and not request.headers.get("HX-Request"):
            return redirect(login_url(request.full_path.rstrip("?")), 303)
        return _unauthorized("authentication required: send 'Authorization: Bearer <token>' or log in at /login")


def _unauthorized(detail: str, *, error: str | None = None) -> Response:
    challenge = 'Bearer realm="darkroom-control-panel"' + (f', error="{error}"' if error else "")
    headers = {"WWW-Authenticate": challenge}
    if request.headers.get("HX-Request"):
        current = urlsplit(request.headers.get("HX-Current-URL", "/"))
        headers["HX-Redirect"] = login_url(current.path + (f"?{current.query}" if current.query else ""))
    return Problem(401, detail, headers=headers).response()


def _register_login(
    app: Flask, *, settings: ApiSettings, sessions: Sessions | None, attempts: FailedAttempts, revocations: Revocations
) -> None:
    def login_page(*, status: int, error: str | None, next_path: str) -> Response:
        html = render_template("login.html", error=error, next=next_path)
        return Response(html, status=status, mimetype="text/html", headers={"Cache-Control": "no-store"})

    @app.get("/login")
    def login_form() -> BaseResponse:
        """The dashboard's login page: a form that exchanges the API token for a session cookie.
        ---
        get:
          tags: [authentication]
          summary: Login page (HTML)
          security: []
          parameters:
            - {name: next, in: query, required: false, schema: {type: string}, description: Local path to return to.}
          responses:
            "200":
              description: The login form.
              content:
                text/html:
                  schema: {type: string}
            "303":
              description: Authentication is off; go straight to ``next``.
        """
        next_path = safe_next(request.args.get("next"))
        if sessions is None:
            return redirect(next_path, 303)
        return login_page(status=200, error=None, next_path=next_path)

    @app.post("/login")
    def login() -> BaseResponse:
        """Exchange the API token for a session cookie (HttpOnly, SameSite=Strict).
        ---
        post:
          tags: [authentication]
          summary: Log in with the API token
          security: []
          requestBody:
            required: true
            content:
              application/x-www-form-urlencoded:
                schema: {$ref: "#/components/schemas/Login"}
              application/json:
                schema: {$ref: "#/components/schemas/Login"}
          responses:
            "204":
              description: Logged in (JSON clients), or authentication is off; the session cookie is set.
            "303":
              description: Logged in (form); redirect to ``next``.
            "400":
              description: No token in the request.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
            "401":
              description: Wrong token.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
            "415":
              description: Neither a form nor JSON.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
        """
        as_form = request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data")
        if request.mimetype == "application/json":
            body = request.get_json(silent=True)
            token = body.get("token") if isinstance(body, dict) else None
            next_path = safe_next(body.get("next") if isinstance(body, dict) and isinstance(body.get("next"), str) else None)
        elif as_form:
            token = request.form.get("token")
            next_path = safe_next(request.form.get("next"))
        else:
            raise Problem(415, 'send the token as a form (application/x-www-form-urlencoded) or JSON: {"token": "..."}')
        if not isinstance(token, str) or not token:
            if as_form and sessions is not None:
                return login_page(status=400, error="Enter the API token.", next_path=next_path)
            raise Problem(400, "the request has no 'token'", errors={"token": ["required"]})
        if sessions is None:
            return redirect(next_path, 303) if as_form else Response(status=204)
        _too_many(attempts)
        if not sessions.token_matches(token):
            attempts.failed(request.remote_addr or "")
            if as_form:
                return login_page(status=401, error="That token is not valid.", next_path=next_path)
            return _unauthorized("the token is not valid", error="invalid_token")
        sessions.start()  # Flask sets the cookie on the response: HttpOnly, SameSite=Strict, Secure over https
        response = redirect(next_path, 303) if as_form else Response(status=204)
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.post("/logout")
    def logout() -> BaseResponse:
        """Drop the session cookie.
        ---
        post:
          tags: [authentication]
          summary: Log out
          security: []
          responses:
            "204":
              description: Logged out (the session cookie is cleared).
            "303":
              description: Logged out; browsers go back to the login page.
            "403":
              description: The request came from another site.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
        """
        if cross_site(settings):
            raise Problem(403, "logging out from another site is refused")
        current = sessions.current() if sessions is not None and SESSION_COOKIE in request.cookies else None
        if current is not None:  # every replica stops accepting this session, copies of the cookie included
            revocations.revoke(current[0], expires_at=current[1])
        session.clear()  # Flask deletes the cookie
        return redirect("/login", 303) if _wants_html() else Response(status=204)
