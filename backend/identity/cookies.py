"""The dashboard's cookie: Flask's signed cookie session, holding a login's session id and the CSRF value.

The session is Flask's signed cookie session (:data:`SESSION_COOKIE`; it also holds flask-wtf's CSRF
value, :mod:`backend.dashboard.protection`, and Authlib's state during an OIDC login): HttpOnly,
SameSite=Strict, Secure whenever the request came over https (:class:`SessionCookies`), expiring
``settings.session_lifetime_s`` after login. It holds no credential — a login's token stays on the server
(:mod:`backend.identity.sessions`); the cookie carries only the random id of that session. Signed with
``settings.secret_key``, which every process serving the same users must share — deploy/'s replicas read it from
the Secret ``darkroom-api``; gunicorn runs one worker per pod (:mod:`backend.server.gunicorn_conf`). Unset, each
process draws a random key (fine for one process; with login on, a warning says sessions then end at a
restart). Rotating the key (change the Secret, restart the replicas) ends every session and the CSRF
tokens of open pages: everyone logs in again — what a leaked key calls for. No fallback keys
(Flask's ``SECRET_KEY_FALLBACKS``): flask-wtf's tokens would not honour them, and a gradual rotation
would keep a leaked key valid. :func:`install` configures it (called by :func:`backend.app.create_app`).
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from flask import Flask, request
from flask.sessions import SecureCookieSessionInterface

from backend.settings import ApiSettings

log = logging.getLogger(__name__)

SESSION_COOKIE = "darkroom_session"


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed cookie session, Secure whenever the request came over https (TLS, or a trusted
    proxy's ``X-Forwarded-Proto``) — Flask's own setting is one fixed value for every request."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return request.is_secure or bool(app.config["SESSION_COOKIE_SECURE"])


def install(app: Flask, settings: ApiSettings) -> str:
    """Flask's signed session cookie (login and CSRF state); the secret key it and the CSRF tokens are signed with."""
    secret_key = settings.secret_key or secrets.token_hex(32)
    if not settings.local and not settings.secret_key:
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
