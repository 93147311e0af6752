"""Who may call the API and from where: bearer/session authentication, CORS allowlist, security headers.

:func:`register` is called once per app by :func:`backend.app.create_app`, before any blueprint.

Authentication is on when ``settings.api_token`` is set (required off loopback, see
:meth:`backend.settings.ApiSettings.check`). Then every request but ``/healthz``, ``/readyz``,
``/login``, ``/logout``, static assets and CORS preflights must carry ``Authorization: Bearer
<token>`` (compared in constant time) or the session cookie that ``POST /login`` hands out for
the token (HttpOnly, SameSite=Strict, Secure over https, signed with ``settings.secret_key`` or a
random per-process key, bound to the token so changing the token logs everyone out). Otherwise:
401 problem+json with ``WWW-Authenticate: Bearer``; a browser navigating (``Accept: text/html``)
is redirected to ``/login?next=...`` instead, and an htmx request gets ``HX-Redirect``. Requests
authenticated by cookie that change something must not come from another site (``Origin`` /
``Sec-Fetch-Site``), on top of SameSite=Strict; neither may a logout. A logout ends the session
everywhere: its id is revoked in the list all replicas share (:mod:`backend.revocation`), so a copy
of the cookie stops working too. After ``settings.auth_failures_max`` wrong tokens (header or login
form) from one client address within ``settings.auth_failure_window_s``, that client's attempts get
429 with ``Retry-After`` until the window has passed, even with the right token. The token is never
accepted in a query string and never logged or echoed.

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
import re
import secrets
import threading
import time
from collections import deque
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, redirect, render_template, request
from flask_cors import CORS
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response as BaseResponse

from backend import state
from backend.problems import Problem
from backend.revocation import Revocations
from backend.settings import ApiSettings

SESSION_COOKIE = "darkroom_session"
SESSION_MAX_AGE_S = 12 * 3600
SESSION_SALT = "darkroom-control-panel.session"
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


class Sessions:
    """Signs and checks session cookies; a cookie is valid only for the token it was issued for and
    until its session is revoked (logout). Each cookie carries a random session id."""

    def __init__(self, *, token: str, secret_key: str | None) -> None:
        key = secret_key.encode() if secret_key else secrets.token_bytes(32)
        self._token = token.encode()
        self._serializer = URLSafeTimedSerializer(key, salt=SESSION_SALT)
        # A keyed digest of the token: cookies die when the token changes, and say nothing about it.
        self._binding = hmac.new(key, b"session-for:" + self._token, hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self._token)

    def issue(self) -> str:
        return self._serializer.dumps({"b": self._binding, "s": secrets.token_urlsafe(16)})

    def session_id(self, cookie: str) -> str | None:
        """The id of a well-signed, unexpired cookie issued for the current token (not checked for revocation)."""
        try:
            payload = self._serializer.loads(cookie, max_age=SESSION_MAX_AGE_S)
        except BadSignature:  # includes SignatureExpired
            return None
        if not isinstance(payload, dict):
            return None
        binding, session = payload.get("b"), payload.get("s")
        if not isinstance(binding, str) or not hmac.compare_digest(binding, self._binding) or not isinstance(session, str):
            return None
        return session


def _revocations(settings: ApiSettings) -> Revocations:
    return Revocations(client=state.current().access.client, namespace=settings.session_namespace)


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


def register(app: Flask, *, settings: ApiSettings) -> None:
    """Install the Host check, CORS, security headers and (when a token is set) authentication plus /login and /logout."""
    _register_host_check(app, settings)
    _register_cors(app, settings)
    _register_headers(app, settings=settings)
    sessions = Sessions(token=settings.api_token, secret_key=settings.secret_key) if settings.api_token else None
    attempts = FailedAttempts(limit=settings.auth_failures_max, window_s=settings.auth_failure_window_s)
    _register_login(app, settings=settings, sessions=sessions, attempts=attempts)
    if sessions is not None:
        _register_authentication(app, settings=settings, sessions=sessions, attempts=attempts)


PROBES = frozenset({"/healthz", "/readyz"})


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
    """Whether the browser says this request comes from another site (neither our host nor an allowed origin)."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        return True
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return origin == "null"
    if urlsplit(origin).netloc.lower() == request.host.lower():
        return False
    return origin.lower().rstrip("/") not in {allowed.lower() for allowed in settings.allowed_origins}


def _register_authentication(app: Flask, *, settings: ApiSettings, sessions: Sessions, attempts: FailedAttempts) -> None:
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
        cookie = request.cookies.get(SESSION_COOKIE)
        session = sessions.session_id(cookie) if cookie is not None else None
        if session is not None and not _revocations(settings).revoked(session):
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


def _register_login(app: Flask, *, settings: ApiSettings, sessions: Sessions | None, attempts: FailedAttempts) -> None:
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
        response = redirect(next_path, 303) if as_form else Response(status=204)
        response.set_cookie(
            SESSION_COOKIE,
            sessions.issue(),
            max_age=SESSION_MAX_AGE_S,
            httponly=True,
            samesite="Strict",
            secure=request.is_secure,
            path="/",
        )
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
        cookie = request.cookies.get(SESSION_COOKIE)
        session = sessions.session_id(cookie) if sessions is not None and cookie is not None else None
        if session is not None:  # every replica stops accepting this session, copies of the cookie included
            _revocations(settings).revoke(session, expires_at=time.time() + SESSION_MAX_AGE_S)
        response = redirect("/login", 303) if _wants_html() else Response(status=204)
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Strict", secure=request.is_secure)
        return response
