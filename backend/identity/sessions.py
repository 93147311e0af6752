"""The dashboard's login session: Flask's signed cookie session and who it says is logged in.

The session is Flask's signed cookie session (:data:`SESSION_COOKIE`; it also holds flask-wtf's CSRF
value, :mod:`backend.dashboard.protection`): HttpOnly, SameSite=Strict, Secure whenever the request
came over https (:class:`SessionCookies`), ending ``settings.session_lifetime_s`` after login, bound to the token so
changing the token logs everyone out (:class:`Sessions`). Signed (not encrypted: it holds no secret) with
``settings.secret_key``, which every process serving the same users must share — deploy/'s replicas read it from
the Secret ``darkroom-api``; gunicorn runs one worker per pod (:mod:`backend.server.gunicorn_conf`). Unset, each
process draws a random key (fine on loopback; with a token set, a warning says sessions then end at a
restart). Rotating the key (change the Secret, restart the replicas) ends every session and the CSRF
tokens of open pages: everyone logs in again — what a leaked key calls for. No fallback keys
(Flask's ``SECRET_KEY_FALLBACKS``): flask-wtf's tokens would not honour them, and a gradual rotation
would keep a leaked key valid. :func:`install` configures it (called by :func:`.authentication.register`); a
logout revokes the session everywhere (:mod:`.revocation`).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from datetime import timedelta

from flask import Flask, request, session
from flask.sessions import SecureCookieSessionInterface

from backend.settings import ApiSettings

log = logging.getLogger(__name__)

SESSION_COOKIE = "darkroom_session"
SESSION_KEY = "login"  # the login record in the session (flask-wtf keeps its CSRF value next to it)


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


def install(app: Flask, settings: ApiSettings) -> str:
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
