"""Who is calling: every request is resolved to a :class:`backend.identity.callers.Caller` before a view runs.

:class:`Authenticator` knows the ways in (``register`` installs it as a ``before_request``):

1. ``Authorization: Bearer <token>`` (API clients: curl, scripts) — in every mode. A JWT issued by the
   configured OpenID provider, when the API impersonates, is verified here (:meth:`backend.identity.oidc.Provider.verify`)
   and its person impersonated; any other token is sent to a ``TokenReview`` and, when the cluster knows it,
   passed through as it is. A wrong one is 401 (``WWW-Authenticate: Bearer error="invalid_token"``).
2. The session cookie of a dashboard login (:mod:`backend.identity.sessions`): the stored token is reviewed
   again (cached ``review_cache_ttl_s``, so a revoked token stops working within seconds), an OIDC ID token
   about to expire is renewed with the refresh token first.
3. The local one-person mode (loopback only, ``settings.local``): no credentials needed; the caller is the
   API's own kubeconfig identity (:data:`backend.identity.callers.LOCAL`).

Anything else gets 401 problem+json — or, for a browser navigating, a redirect to ``/login?next=…``, and for
an htmx request ``HX-Redirect`` to it. A review that cannot be made (the API server unreachable) is 503:
never "allowed", never a fallback to the API's own account.

Wrong credentials are counted per client address (:class:`FailedAttempts`): past ``auth_failures_max`` in
``auth_failure_window_s`` the next wrong one is answered 429 with ``Retry-After`` instead of 401. A valid
credential is checked and accepted whatever the count — behind an ingress every user shares one address,
and a limiter that refused the right token would let anyone lock everyone out.

Requests authenticated by the session cookie that change something must not come from another site
(``Sec-Fetch-Site``/``Origin``; SameSite=Strict besides): :func:`backend.api.hardening.cross_site`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import Flask, redirect, request, session
from werkzeug.wrappers import Response as BaseResponse

from backend.api.hardening import cross_site
from backend.api.problems import Problem
from backend.identity import callers, oidc
from backend.identity.callers import LOCAL, Caller
from backend.identity.sessions import Login, SessionError, SessionStore
from backend.settings import ApiSettings
from cluster import ClusterError
from cluster.acting import Actor
from cluster.identities import AUTHENTICATED, BearerToken, Impersonation, User
from cluster.reviewing import TokenReviewer

log = logging.getLogger(__name__)

SESSION_ID = "sid"  # the session id in Flask's signed cookie (flask-wtf keeps its CSRF value beside it)
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/login", "/logout", "/login/oidc", "/login/oidc/callback"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RENEW_BEFORE_S = 60  # renew an OIDC ID token this long before it expires


class FailedAttempts:
    """Wrong credentials per client address in a sliding window (this process's view; each replica counts its own)."""

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
        """0 while the client is under the limit; else seconds until its oldest recent failure leaves the window."""
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


def unauthorized(detail: str, *, error: str | None = None) -> Problem:
    """401 with a Bearer challenge; an htmx request is also told where to log in (``HX-Redirect``)."""
    challenge = 'Bearer realm="darkroom-control-panel"' + (f', error="{error}"' if error else "")
    headers = {"WWW-Authenticate": challenge}
    if request.headers.get("HX-Request"):
        current = urlsplit(request.headers.get("HX-Current-URL", "/"))
        headers["HX-Redirect"] = login_url(current.path + (f"?{current.query}" if current.query else ""))
    return Problem(401, detail, headers=headers)


def unavailable(what: str, error: Exception) -> Problem:
    log.warning("cannot %s: %s", what, getattr(error, "message", None) or type(error).__name__)
    return Problem(
        503, f"cannot {what} right now: the cluster or the identity provider is unavailable; retry shortly", headers={"Retry-After": "5"}
    )


class Authenticator:
    """The ways a caller is recognised (see the module docstring). Thread-safe."""

    def __init__(
        self,
        *,
        settings: ApiSettings,
        tokens: TokenReviewer,
        store: SessionStore | None,
        provider: oidc.Provider | None,
        attempts: FailedAttempts,
    ) -> None:
        self.settings = settings
        self.tokens = tokens
        self.store = store
        self.provider = provider
        self.attempts = attempts
        self._renewing: dict[str, threading.Lock] = {}
        self._renewing_lock = threading.Lock()

    # -- the person behind a credential ----------------------------------------------------------

    def user_from_claims(self, claims: Mapping[str, Any]) -> User:
        """The person an ID token names, as the API impersonates them: the configured claims, prefixed so that an
        identity provider can never name a Kubernetes system user or group — and ``system:authenticated``, which
        kube-apiserver gives everyone it impersonates, so the access reviews of their cache reads ask about the same
        person their writes are decided for (a grant to every authenticated user counts for both)."""
        name = claims.get(self.settings.oidc_username_claim)
        if not isinstance(name, str) or not name:
            raise oidc.InvalidToken(f"the ID token has no {self.settings.oidc_username_claim!r} claim to name the person by")
        raw_groups = claims.get(self.settings.oidc_groups_claim) or []
        groups = (
            [raw_groups]
            if isinstance(raw_groups, str)
            else [g for g in raw_groups if isinstance(g, str)]
            if isinstance(raw_groups, list)
            else []
        )
        prefix = self.settings.oidc_groups_prefix
        return User(name=self.settings.oidc_username_prefix + name, groups=(*(prefix + g for g in groups), AUTHENTICATED), how="oidc")

    def from_bearer(self, token: str) -> Caller | None:
        """The caller a bearer token stands for; None when it stands for nobody. ClusterError /
        ProviderUnavailable when that cannot be checked now."""
        if self.settings.identity == "impersonate" and self.provider is not None and self.provider.issued(token):
            try:
                user = self.user_from_claims(self.provider.verify(token))
            except oidc.InvalidToken:
                return None
            return Caller(actor=Actor(user=user, credentials=Impersonation(user)), via="bearer")
        reviewed = self.tokens.review(token)
        if reviewed is None:
            return None
        return Caller(actor=Actor(user=reviewed, credentials=BearerToken(token)), via="bearer")

    def from_session(self, session_id: str) -> Caller | None:
        """The caller of a stored session; None when it has ended or its token is no longer accepted."""
        assert self.store is not None
        loaded = self.store.load(session_id)
        if loaded is None:
            return None
        login = self._fresh(session_id, *loaded)
        if login is None:
            return None
        if login.user:  # impersonated: authenticated by us through OIDC
            user = User(name=login.user, groups=login.groups, how="oidc")
            return Caller(actor=Actor(user=user, credentials=Impersonation(user)), via=login.via, session_id=session_id)
        reviewed = self.tokens.review(login.token)
        if reviewed is None:
            return None
        return Caller(actor=Actor(user=reviewed, credentials=BearerToken(login.token)), via=login.via, session_id=session_id)

    def _fresh(self, session_id: str, login: Login, resource_version: str) -> Login | None:
        """``login`` with an ID token that is not about to expire (renewed if need be); None once it cannot be used."""
        now = time.time()
        if login.via != "oidc" or not login.token_expires_at or login.token_expires_at - RENEW_BEFORE_S > now:
            return login
        if login.refresh_token and self.provider is not None:
            with self._lock_for(session_id):
                renewed = self._renew(session_id, login, resource_version)
            if renewed is not None:
                return renewed
        return login if login.token_expires_at > now else None

    def _lock_for(self, session_id: str) -> threading.Lock:
        with self._renewing_lock:
            if len(self._renewing) > 10_000:
                self._renewing.clear()
            return self._renewing.setdefault(session_id, threading.Lock())

    def _renew(self, session_id: str, login: Login, resource_version: str) -> Login | None:
        assert self.provider is not None and self.store is not None
        current = self.store.load(session_id)  # another request of this process may have renewed it meanwhile
        if current is None:
            return None
        if current[1] != resource_version:
            return current[0]
        try:
            tokens = self.provider.renew(login.refresh_token)
        except oidc.ProviderUnavailable as e:
            log.info("could not renew a session's ID token (it is used until it expires): %s", e)
            return None
        except oidc.InvalidToken as e:
            log.info("a session's refresh token was refused: %s", e)
            return None
        user = self.user_from_claims(tokens.claims) if login.user else None
        updated = Login(
            via=login.via,
            token=tokens.id_token,
            started_at=login.started_at,
            ends_at=login.ends_at,
            refresh_token=tokens.refresh_token,
            token_expires_at=tokens.expires_at,
            user=user.name if user else "",
            groups=user.groups if user else (),
        )
        if not self.store.renew(session_id, updated, resource_version=resource_version):
            again = self.store.load(session_id)  # another replica renewed it first
            return again[0] if again else None
        return updated

    # -- the request hook ------------------------------------------------------------------------

    def authenticate(self) -> BaseResponse | None:
        if request.method == "OPTIONS":
            return None  # CORS preflights carry no credentials by design
        if request.endpoint == "static" or (request.url_rule is not None and request.url_rule.rule in OPEN_PATHS):
            return None
        header = request.headers.get("Authorization")
        if header is not None:
            caller, token = self._bearer(header)
            callers.set_current(caller, still_valid=lambda: self._still_valid_bearer(token))
            return None
        if self.settings.local:
            callers.set_current(LOCAL)
            return None
        from_session = self._session_caller()
        if from_session is not None:
            session_id = from_session.session_id or ""
            callers.set_current(from_session, still_valid=lambda: self._still_valid_session(session_id))
            return None
        if request.method in ("GET", "HEAD") and _wants_html() and not request.headers.get("HX-Request"):
            return redirect(login_url(request.full_path.rstrip("?")), 303)
        raise unauthorized("authentication required: send 'Authorization: Bearer <your Kubernetes token>' or log in at /login")

    def _still_valid_bearer(self, token: str) -> bool:
        try:
            return self.from_bearer(token) is not None
        except oidc.ProviderUnavailable:
            return True  # the provider is down: the token stays good until it expires (checked by the cluster too)

    def _still_valid_session(self, session_id: str) -> bool:
        try:
            return self.from_session(session_id) is not None
        except (SessionError, oidc.ProviderUnavailable):
            return True  # the store cannot be read right now: the cluster still checks every write

    def _bearer(self, header: str) -> tuple[Caller, str]:
        scheme, _, credentials = header.strip().partition(" ")
        token = credentials.strip()
        if scheme.lower() != "bearer" or not token:
            raise unauthorized("send 'Authorization: Bearer <token>'", error="invalid_request")
        client = request.remote_addr or ""
        wait_s = self.attempts.retry_after_s(client)
        try:
            caller = self.from_bearer(token)
        except (ClusterError, oidc.ProviderUnavailable) as e:
            raise unavailable("check the bearer token", e) from None
        if caller is not None:
            return caller, token
        self.attempts.failed(client)
        if wait_s:
            raise Problem(
                429, f"too many wrong credentials from this address; try again in {wait_s} s", headers={"Retry-After": str(wait_s)}
            )
        raise unauthorized("the bearer token is not valid (expired, revoked, or not for this cluster)", error="invalid_token")

    def _session_caller(self) -> Caller | None:
        session_id = session.get(SESSION_ID)
        if not isinstance(session_id, str) or self.store is None:
            return None
        try:
            caller = self.from_session(session_id)
        except (SessionError, ClusterError, oidc.ProviderUnavailable) as e:
            raise unavailable("check the session", e) from None
        if caller is None:
            session.pop(SESSION_ID, None)  # ended: the cookie goes too
            return None
        if request.method not in SAFE_METHODS and cross_site(self.settings):
            raise Problem(403, "cross-site requests with the session cookie are refused; use a bearer token")
        return caller


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/html"])
    return best == "text/html"


def register(app: Flask, authenticator: Authenticator) -> None:
    """Resolve every request's caller before any view (and before the views' own hooks)."""
    app.before_request(authenticator.authenticate)
