"""The dashboard's ways in and out: ``/login`` (the page, and a pasted Kubernetes token), ``/login/oidc`` and its
callback, ``/logout``.

The login page offers what is configured: "Sign in with <provider>" (``settings.oidc``; when the provider
cannot be reached the page says so and the button waits) and a field for a Kubernetes token
(``settings.token_login``: a ServiceAccount token from ``kubectl create token``, or any token the cluster
accepts). A pasted token is accepted only once a ``TokenReview`` says the cluster knows it; an OIDC login
only once Authlib has checked the ID token (:mod:`backend.identity.oidc`) and — when the token goes to the
cluster as it is (passthrough) — a ``TokenReview`` says the cluster accepts it too, so a person never gets a
session that every request would then refuse.

A login stores a session (:mod:`backend.identity.sessions`) and puts only its random id into Flask's signed
cookie, after clearing whatever the cookie held (no fixation). ``/logout`` deletes the session's Secret — it
ends on every replica, copies of the cookie included —, revokes an OIDC refresh token and sends the browser
through the provider's own logout where it has one. When the session cannot be deleted the answer says so
(503) and the person stays logged in, rather than being told a lie.

In the local one-person mode there is nothing to log in to: ``/login`` goes straight on.
"""

from __future__ import annotations

import base64
import logging
import time
from typing import Any

import orjson
from flask import Flask, Response, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response as BaseResponse

from backend.api.bodies import refuse_deep
from backend.api.hardening import cross_site
from backend.api.problems import Problem
from backend.identity import oidc
from backend.identity.authenticating import SESSION_ID, Authenticator, safe_next, unauthorized, unavailable
from backend.identity.sessions import Login, SessionError
from backend.settings import ApiSettings
from cluster import ClusterError

log = logging.getLogger(__name__)

NEXT = "login_next"  # where to go after an OIDC login, kept in the signed cookie across the provider's pages


def _token_expiry(token: str) -> int:
    """The ``exp`` of a JWT (a ServiceAccount token), unverified — only to end the session no later than the token; 0 if none."""
    parts = token.split(".")
    if len(parts) != 3:
        return 0
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return 0
    exp = payload.get("exp") if isinstance(payload, dict) else None
    return int(exp) if isinstance(exp, int | float) else 0


class Logins:
    """The views of logging in and out (see the module docstring), for one app."""

    def __init__(self, *, settings: ApiSettings, authenticator: Authenticator) -> None:
        self.settings = settings
        self.authenticator = authenticator
        self.provider = authenticator.provider
        self.store = authenticator.store

    def page(self, *, status: int = 200, error: str | None = None, next_path: str = "/", notice: str | None = None) -> Response:
        html = render_template(
            "login.html",
            error=error,
            notice=notice,
            next=next_path,
            token_login=self.settings.token_login,
            oidc=self.provider is not None,
            provider_problem=self.provider.reachable() if self.provider is not None else None,
            provider_name=self.settings.oidc_issuer_url,
        )
        return Response(html, status=status, mimetype="text/html", headers={"Cache-Control": "no-store"})

    def start(self, login: Login, next_path: str, *, as_form: bool) -> BaseResponse:
        """Store ``login`` as a new session and put its id into a fresh cookie."""
        assert self.store is not None
        try:
            self.store.sweep()
            session_id = self.store.open(login)
        except SessionError as e:
            if as_form:
                return self.page(status=503, error=str(e), next_path=next_path)
            raise Problem(503, str(e), headers={"Retry-After": "5"}) from None
        session.clear()  # nothing of the session before survives: no fixation
        session.permanent = True  # the cookie expires with the session (Max-Age), not with the browser
        session[SESSION_ID] = session_id
        response: BaseResponse = redirect(next_path, 303) if as_form else Response(status=204)
        response.headers["Cache-Control"] = "no-store"
        return response

    def login_form(self) -> BaseResponse:
        """The dashboard's login page: sign in through the identity provider, or with a Kubernetes token.
        ---
        get:
          tags: [authentication]
          summary: Login page (HTML)
          security: []
          parameters:
            - {name: next, in: query, required: false, schema: {type: string}, description: Local path to return to.}
          responses:
            "200":
              description: The login page.
              content:
                text/html:
                  schema: {type: string}
            "303":
              description: The local one-person mode needs no login; go straight to ``next``.
        """
        next_path = safe_next(request.args.get("next"))
        if self.settings.local:
            return redirect(next_path, 303)
        notice = "You are logged out." if request.args.get("logged_out") else None
        return self.page(next_path=next_path, notice=notice)

    def login_with_token(self) -> BaseResponse:
        """Log in with a Kubernetes token (checked with a TokenReview); the session cookie holds only a session id.
        ---
        post:
          tags: [authentication]
          summary: Log in with a Kubernetes token
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
              description: Logged in (JSON clients); the session cookie is set.
            "303":
              description: Logged in (form), or the local mode needs no login; redirect to ``next``.
            "400":
              description: No token in the request, or a JSON body nesting too deep.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
            "401":
              description: The cluster does not accept the token.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
            "403":
              description: The request came from another site.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "404":
              description: Token login is not offered here.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "415":
              description: Neither a form nor JSON.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "429":
              description: Too many wrong tokens from this address; a valid token is still accepted.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
            "503":
              description: The token or the session store cannot be checked right now.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
        """
        if cross_site(self.settings):
            raise Problem(403, "logging in from another site is refused")
        as_form = request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data")
        if request.mimetype == "application/json":
            refuse_deep(request.get_data())  # before the parser recurses into it
            body = request.get_json(silent=True)
            token = body.get("token") if isinstance(body, dict) else None
            next_path = safe_next(body.get("next") if isinstance(body, dict) and isinstance(body.get("next"), str) else None)
        elif as_form:
            token = request.form.get("token")
            next_path = safe_next(request.form.get("next"))
        else:
            raise Problem(415, 'send the token as a form (application/x-www-form-urlencoded) or JSON: {"token": "..."}')
        if not self.settings.local and not self.settings.token_login:
            raise Problem(404, "logging in with a Kubernetes token is not offered here; sign in through the identity provider")
        if not isinstance(token, str) or not token.strip():
            if as_form:
                return self.page(status=400, error="Paste a Kubernetes token.", next_path=next_path)
            raise Problem(400, "the request has no 'token'", errors={"token": ["required"]})
        if self.settings.local:  # nothing to log in to (a token is still required by the request's schema): go straight on
            return redirect(next_path, 303) if as_form else Response(status=204)
        token = token.strip()
        client = request.remote_addr or ""
        wait_s = self.authenticator.attempts.retry_after_s(client)
        try:
            user = self.authenticator.tokens.review(token)
        except ClusterError as e:
            if as_form:
                return self.page(status=503, error="The cluster cannot check tokens right now; try again shortly.", next_path=next_path)
            raise unavailable("check the token", e) from None
        if user is None:
            self.authenticator.attempts.failed(client)
            message = "The cluster does not accept that token (wrong, expired or revoked)."
            if wait_s:
                message = f"Too many wrong tokens from this address; try again in {wait_s} s."
            if as_form:
                return self.page(status=429 if wait_s else 401, error=message, next_path=next_path)
            if wait_s:
                raise Problem(429, message, headers={"Retry-After": str(wait_s)})
            raise unauthorized("the token is not valid (wrong, expired, or not for this cluster)", error="invalid_token")
        now = int(time.time())
        ends_at = now + self.settings.session_lifetime_s
        expiry = _token_expiry(token)
        login = Login(via="token", token=token, started_at=now, ends_at=min(ends_at, expiry) if expiry else ends_at)
        return self.start(login, next_path, as_form=as_form)

    def login_with_provider(self) -> BaseResponse:
        """Sign in through the identity provider (authorization code with PKCE).
        ---
        get:
          tags: [authentication]
          summary: Sign in through the identity provider (HTML)
          security: []
          parameters:
            - {name: next, in: query, required: false, schema: {type: string}, description: Local path to return to.}
          responses:
            "302":
              description: To the provider's authorization endpoint.
            "404":
              description: No identity provider is configured.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "503":
              description: The provider cannot be reached (the login page says so).
              content:
                text/html:
                  schema: {type: string}
        """
        next_path = safe_next(request.args.get("next"))
        if self.provider is None:
            raise Problem(404, "no identity provider is configured here")
        session[NEXT] = next_path
        redirect_uri = self.settings.oidc_redirect_url or url_for("oidc_callback", _external=True)
        try:
            response: BaseResponse = self.provider.redirect(redirect_uri)
        except oidc.ProviderUnavailable as e:
            return self.page(status=503, error=f"{e}. Try again shortly, or log in with a Kubernetes token.", next_path=next_path)
        return response

    def oidc_callback(self) -> BaseResponse:
        """Where the provider sends the browser back: the code is exchanged and the ID token checked.
        ---
        get:
          tags: [authentication]
          summary: Identity provider callback (HTML)
          security: []
          responses:
            "303":
              description: Logged in; to the page the login started from.
            "400":
              description: The login could not be completed (refused at the provider, a stale or forged callback).
              content:
                text/html:
                  schema: {type: string}
            "403":
              description: The cluster does not accept this provider's tokens.
              content:
                text/html:
                  schema: {type: string}
            "404":
              description: No identity provider is configured.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "503":
              description: The provider or the cluster cannot be reached.
              content:
                text/html:
                  schema: {type: string}
        """
        next_path = safe_next(session.pop(NEXT, None))
        if self.provider is None:
            raise Problem(404, "no identity provider is configured here")
        try:
            tokens = self.provider.finish()
        except oidc.ProviderUnavailable as e:
            return self.page(status=503, error=f"{e}. Try again shortly.", next_path=next_path)
        except oidc.InvalidToken as e:
            return self.page(status=400, error=f"{str(e)[:1].upper()}{str(e)[1:]}. Try again.", next_path=next_path)
        now = int(time.time())
        lifetime_end = now + self.settings.session_lifetime_s
        user, groups = "", tuple[str, ...]()
        if self.settings.identity == "impersonate":
            try:
                person = self.authenticator.user_from_claims(tokens.claims)
            except oidc.InvalidToken as e:
                return self.page(status=400, error=str(e), next_path=next_path)
            user, groups = person.name, person.groups
        else:
            try:
                accepted = self.authenticator.tokens.review(tokens.id_token)
            except ClusterError:
                return self.page(status=503, error="The cluster cannot check tokens right now; try again shortly.", next_path=next_path)
            if accepted is None:
                log.warning(
                    "the cluster does not accept ID tokens of %s (passthrough): configure its JWT authenticator", self.provider.issuer
                )
                return self.page(
                    status=403,
                    error="You signed in, but this cluster does not accept the identity provider's tokens, so nothing could be done"
                    " as you. Ask the cluster's administrator to trust the provider, or log in with a Kubernetes token.",
                    next_path=next_path,
                )
        login = Login(
            via="oidc",
            token=tokens.id_token,
            started_at=now,
            ends_at=lifetime_end if tokens.refresh_token else min(lifetime_end, tokens.expires_at),
            refresh_token=tokens.refresh_token,
            token_expires_at=tokens.expires_at,
            user=user,
            groups=groups,
        )
        return self.start(login, next_path, as_form=True)

    def logout(self) -> BaseResponse:
        """End the session everywhere (its copies too), and at the identity provider where it offers that.
        ---
        post:
          tags: [authentication]
          summary: Log out
          security: []
          responses:
            "204":
              description: Logged out (JSON clients); the session cookie is cleared.
            "303":
              description: Logged out; browsers go to the provider's logout or back to the login page.
            "403":
              description: The request came from another site.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
            "503":
              description: The session could not be ended; it is still valid (try again).
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
                text/html:
                  schema: {type: string}
        """
        if cross_site(self.settings):
            raise Problem(403, "logging out from another site is refused")
        session_id = session.get(SESSION_ID)
        login: Login | None = None
        if isinstance(session_id, str) and self.store is not None:
            try:
                loaded = self.store.load(session_id)
                login = loaded[0] if loaded else None
                self.store.close(session_id)
            except SessionError as e:
                detail = f"{e}. You are still logged in; try again."
                if _wants_html():
                    return self.page(status=503, error=detail, next_path="/")
                raise Problem(503, detail, headers={"Retry-After": "5"}) from None
        session.clear()  # Flask deletes the cookie
        done = url_for("login_form", logged_out=1)
        target: str | None = None
        if login is not None and login.via == "oidc" and self.provider is not None:
            self.provider.revoke(login.refresh_token)
            target = self.provider.logout_url(
                id_token=login.token, post_logout_redirect_uri=url_for("login_form", logged_out=1, _external=True)
            )
        return redirect(target or done, 303) if _wants_html() else Response(status=204)


def register(app: Flask, logins: Logins) -> None:
    """Install ``/login``, ``/login/oidc``, ``/login/oidc/callback`` and ``/logout``."""
    app.add_url_rule("/login", "login_form", logins.login_form, methods=["GET"])
    app.add_url_rule("/login", "login", logins.login_with_token, methods=["POST"])
    app.add_url_rule("/login/oidc", "login_with_provider", logins.login_with_provider, methods=["GET"])
    app.add_url_rule("/login/oidc/callback", "oidc_callback", logins.oidc_callback, methods=["GET"])
    app.add_url_rule("/logout", "logout", logins.logout, methods=["POST"])


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    return best == "text/html"


def describe(settings: ApiSettings) -> dict[str, Any]:
    """What the login offers, for the startup banner and tests."""
    return {"local": settings.local, "token": settings.token_login, "oidc": settings.oidc_issuer_url or None, "identity": settings.identity}
