"""Who may call the API and from where: bearer/session authentication, CORS allowlist, security headers.

:func:`register` is called once per app by :func:`backend.app.create_app`, before any blueprint.

Authentication is on when ``settings.api_token`` is set (required off loopback, see
:meth:`backend.settings.ApiSettings.check`). Then every request but ``/healthz``, ``/readyz``,
``/login``, ``/logout``, static assets and CORS preflights must carry ``Authorization: Bearer
<token>`` (compared in constant time) or the session cookie that ``POST /login`` hands out for
the token (:class:`Sessions`). Otherwise:
401 problem+json with ``WWW-Authenticate: Bearer``; a browser navigating (``Accept: text/html``)
is redirected to ``/login?next=...`` instead, and an htmx request gets ``HX-Redirect``. Requests
authenticated by cookie that change something must not come from another site (``Origin`` /
``Sec-Fetch-Site``), on top of SameSite=Strict; neither may a logout. A logout ends the session
everywhere: its id is revoked in the list all replicas share (:mod:`backend.identity.revocation`), so a copy
of the cookie stops working too. After ``settings.auth_failures_max`` wrong tokens (header or login
form) from one client address within ``settings.auth_failure_window_s``, that client's attempts get
429 with ``Retry-After`` until the window has passed, even with the right token. The token is never
accepted in a query string and never logged or echoed.

The session is Flask's signed cookie session (``darkroom_session``; it also holds flask-wtf's CSRF
value, :mod:`backend.dashboard.protection`): HttpOnly, SameSite=Strict, Secure whenever the request
came over https, ending ``settings.session_lifetime_s`` after login, bound to the token so changing
the token logs everyone out. Signed (not encrypted: it holds no secret) with ``settings.secret_key``,
which every process serving the same users must share — deploy/'s replicas read it from the Secret
``darkroom-api``; gunicorn runs one worker per pod (:mod:`backend.server.gunicorn_conf`). Unset, each
process draws a random key (fine on loopback; with a token set, a warning says sessions then end at a
restart). Rotating the key (change the Secret, restart the replicas) ends every session and the CSRF
tokens of open pages: everyone logs in again — what a leaked key calls for. No fallback keys
(Flask's ``SECRET_KEY_FALLBACKS``): flask-wtf's tokens would not honour them, and a gradual rotation
would keep a leaked key valid.

Host header (DNS rebinding): a request whose ``Host`` names a host outside ``settings.host_names``
(by default the loopback names while the API runs open on loopback) is refused with 400 before
anything else, so a page of another site whose name resolves to 127.0.0.1 cannot use the API.
``/healthz`` and ``/readyz`` answer any host (kubelet probes use the pod IP).

Over https (``request.is_secure``: TLS, or ``X-Forwarded-Proto`` from a proxy gunicorn trusts through
``FORWARDED_ALLOW_IPS``) responses carry ``Strict-Transport-Security: max-age=settings.hsts_max_age_s``.

CORS: only the exact origins of ``settings.allowed_origins`` get ``Access-Control-Allow-Origin``
(default: none, so no CORS header at all); never ``*``, never credentials, never a reflected
arbitrary origin.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
from collections import deque
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, redirect, render_template, request, session
from flask.sessions import SecureCookieSessionInterface
from flask_cors import CORS
from werkzeug.wrappers import Response as BaseResponse

from backend.api.problems import Problem
from backend.identity.revocation import Revocations
from backend.settings import ApiSettings
from cluster import CachedClient

log = logging.getLogger(__name__)

SESSION_COOKIE = "darkroom_session"
SESSION_KEY = "login"  # the login record in the session (flask-wtf keeps its CSRF value next to it)
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/login", "/logout"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
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


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed cookie session, Secure whenever the request came over https (TLS, or a trusted
    proxy's ``X-Forwarded-Proto``) — Flask's own setting is one fixed value for every request."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return request.is_secure or bool(app.config["SESSION_COOKIE_SECURE"])


class Sessions:
    """Who is logged in, kept in Flask's signed session (:data:`SESSION_KEY`): a random session id,
    a keyed digest of the API token it was issued for (so changing the token logs everyone out, and
    the readable cookie says nothing about the token) and the login time (a session ends
    ``lifetime_s`` after login, however often its cookie is re-signed). Revocation: :mod:`backend.identity.revocation`."""

    def __init__(self, *, token: str, secret_key: str, lifetime_s: int) -> None:
        self._token = token.encode()
        self.lifetime_s = lifetime_s
        self._binding = hmac.new(secret_key.encode(), b"session-for:" + self._token, hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self._token)

    def start(self) -> None:
        """Log this browser in: a new session (nothing of the one before survives: no fixation)."""
        session.clear()
        session.permanent = True  # the cookie expires with the session (Max-Age), not with the browser
        session[SESSION_KEY] = {"b": self._binding, "s": secrets.token_urlsafe(16), "t": int(time.time())}

    def current(self) -> tuple[str, float] | None:
        """(id, expiry unix time) of this request's session, if logged in for the current token and not
        expired (not checked for revocation)."""
        record = session.get(SESSION_KEY)
        if not isinstance(record, dict):
            return None
        binding, session_id, started = record.get("b"), record.get("s"), record.get("t")
        if not isinstance(binding, str) or not hmac.compare_digest(binding, self._binding) or not isinstance(session_id, str):
            return None
        if not isinstance(started, int) or not time.time() < started + self.lifetime_s:
            return None
        return session_id, float(started + self.lifetime_s)


def logged_in_session() -> str | None:
    """The id of this request's login (for logs; authentication has checked it already), None without one."""
    record = session.get(SESSION_KEY)
    session_id = record.get("s") if isinstance(record, dict) else None
    return session_id if isinstance(session_id, str) else None


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
    """Install the session, the Host check, CORS, security headers and (when a token is set) authentication
    plus /login and /logout; logged-out sessions are shared through ``client`` (:mod:`backend.identity.revocation`)."""
    revocations = Revocations(client=client, namespace=settings.session_namespace)
    secret_key = _register_session(app, settings)
    _register_host_check(app, settings)
    _register_cors(app, settings)
    _register_headers(app, settings=settings)
    sessions = None
    if settings.api_token:
        sessions = Sessions(token=settings.api_token, secret_key=secret_key, lifetime_s=settings.session_lifetime_s)
    attempts = FailedAttempts(limit=settings.auth_failures_max, window_s=settings.auth_failure_window_s)
    _register_login(app, settings=settings, sessions=sessions, attempts=attempts, revocations=revocations)
    if sessions is not None:
        _register_authentication(app, settings=settings, sessions=sessions, attempts=attempts, revocations=revocations)


PROBES = frozenset({"/healthz", "/readyz"})


def _register_session(app: Flask, settings: ApiSettings) -> str:
    """Flask's signed session cookie (login and CSRF state); the secret key it and the CSRF tokens are signed with."""
    secret_key = settings.secret_key or secrets.token_hex(32)
    if settings.api_token and not settings.secret_key:
        log.warning(
            "DARKROOM_API_SECRET_KEY is not set: sessions are signed with a random key of this process, "
            "so they end when it restarts and other replicas refuse them"
        )
    app.secret_key = secret_key
    app.session_interface = SessionCookies()
    app.config.update(
        SESSION_COOKIE_NAME=SESSION_COOKIE,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_SECURE=False,  # per request: SessionCookies
        SESSION_COOKIE_PATH="/",
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=settings.session_lifetime_s),
        SESSION_REFRESH_EACH_REQUEST=False,  # a fixed lifetime from login, not one that slides with use
    )
    return secret_key


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


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    return best == "text/html"


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
