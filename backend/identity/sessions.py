"""Dashboard sessions, kept on the server: one Kubernetes Secret per session, in the API's own namespace.

A login (a pasted Kubernetes token, or an OIDC login: :mod:`backend.identity.login`) starts a session
whose credentials — the person's token, an OIDC refresh token — are stored in a Secret
``darkroom-session-<digest>`` of ``settings.session_namespace``, labelled :data:`LABELS`. The browser
gets only a random session id (256 bits) inside Flask's signed, HttpOnly, SameSite=Strict cookie; the
Secret's name is a digest of that id, so the name tells nothing. So a token is never in a cookie, a
page, a URL or browser storage, tokens of any size work (an ID token with many groups), every replica
sees a session (each watches these Secrets) and a logout deletes the Secret: the session ends
everywhere, copies of the cookie included — or the logout says it could not.

A session ends at ``ends_at``: ``settings.session_lifetime_s`` after login, or when its token does (an
OIDC session may renew its ID token before then: :mod:`backend.identity.oidc`). Expired Secrets are
deleted by :meth:`SessionStore.sweep` (at each login). Used by :mod:`backend.identity.authenticating`;
written with the API's own credentials (a session is the API's bookkeeping, not the person's object).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from backend.core.access import SESSIONS_LABELS, SESSIONS_SELECTOR
from cluster import SECRETS, AlreadyExists, CachedClient, ClusterError, Conflict, NotFound

log = logging.getLogger(__name__)

NAME_PREFIX = "darkroom-session-"
LABELS = SESSIONS_LABELS  # declared with the informer that watches them
SELECTOR = SESSIONS_SELECTOR
SECRET_TYPE = "darkroom-control-panel.example.com/session"
ENDS_AT = "darkroom-control-panel.example.com/ends-at"
DATA_KEY = "session"


@dataclass(frozen=True)
class Login:
    """What a session holds. ``token`` is what the person's requests carry (their Kubernetes token, or the OIDC
    ID token); ``user``/``groups`` are set only when the API impersonates them (it authenticated them itself)."""

    via: str  # "token" | "oidc"
    token: str = field(repr=False)
    started_at: int
    ends_at: int
    refresh_token: str = field(default="", repr=False)
    token_expires_at: int = 0  # 0: unknown (a pasted token)
    user: str = ""
    groups: tuple[str, ...] = ()

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def decode(cls, data: bytes) -> Login:
        raw = orjson.loads(data)
        return cls(**{**raw, "groups": tuple(raw.get("groups") or ())})

    def expired(self, now: float | None = None) -> bool:
        return (now if now is not None else time.time()) >= self.ends_at


class SessionError(Exception):
    """The session store could not be read or written (the message is safe to show)."""


def secret_name(session_id: str) -> str:
    return NAME_PREFIX + hashlib.sha256(session_id.encode()).hexdigest()[:40]


class SessionStore:
    """Sessions as Secrets, read through the API's cache (a session started on another replica a moment ago is
    read from the server)."""

    def __init__(self, *, client: CachedClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace

    def _body(self, name: str, login: Login, resource_version: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": self.namespace, "labels": LABELS, "annotations": {ENDS_AT: str(login.ends_at)}}
        if resource_version:
            meta["resourceVersion"] = resource_version
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": SECRET_TYPE,
            "metadata": meta,
            "data": {DATA_KEY: base64.b64encode(login.encode()).decode()},
        }

    def open(self, login: Login) -> str:
        """Store ``login`` as a new session; its id (for the cookie). :class:`SessionError` when it cannot be stored."""
        session_id = secrets.token_urlsafe(32)
        try:
            self.client.create(SECRETS, self._body(secret_name(session_id), login), namespace=self.namespace)
        except AlreadyExists as e:  # 256 random bits: never in practice
            raise SessionError("could not start a session (name taken); try again") from e
        except ClusterError as e:
            log.warning("could not store a session in namespace %s: %s", self.namespace, e.message)
            raise SessionError(f"could not start a session: the session store in namespace {self.namespace} is unavailable") from e
        return session_id

    def load(self, session_id: str) -> tuple[Login, str] | None:
        """The session's login and its Secret's resourceVersion; None when there is none (ended, expired, unknown)."""
        name = secret_name(session_id)
        try:
            stored = self.client.peek(SECRETS, name, namespace=self.namespace)
            if stored is None:
                stored = self.client.get(SECRETS, name, namespace=self.namespace, fresh=True)
        except NotFound:
            return None
        except ClusterError as e:
            raise SessionError(f"the session store in namespace {self.namespace} is unavailable") from e
        labels = stored["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in LABELS.items()) or stored.get("type") != SECRET_TYPE:
            return None  # not one of ours: never trusted
        try:
            login = Login.decode(base64.b64decode((stored.get("data") or {})[DATA_KEY]))
        except (KeyError, ValueError, TypeError):
            log.warning("session Secret %s/%s does not hold a session; ignored", self.namespace, name)
            return None
        if login.expired():
            return None
        return login, str(stored["metadata"].get("resourceVersion", ""))

    def renew(self, session_id: str, login: Login, *, resource_version: str) -> bool:
        """Store renewed credentials if the session is still at ``resource_version`` (False: another replica renewed
        it first, or it ended). :class:`SessionError` when the store is unavailable."""
        try:
            self.client.update(SECRETS, self._body(secret_name(session_id), login, resource_version))
        except (Conflict, NotFound):
            return False
        except ClusterError as e:
            raise SessionError(f"the session store in namespace {self.namespace} is unavailable") from e
        return True

    def close(self, session_id: str) -> None:
        """End the session everywhere (an unknown one is ended already). :class:`SessionError` when it cannot be."""
        try:
            self.client.delete(SECRETS, secret_name(session_id), namespace=self.namespace)
        except NotFound:
            return
        except ClusterError as e:
            log.warning("could not end a session in namespace %s: %s", self.namespace, e.message)
            raise SessionError(f"the session could not be ended: the session store in namespace {self.namespace} is unavailable") from e

    def sweep(self, now: float | None = None) -> int:
        """Delete the Secrets of sessions that have ended (best effort); how many."""
        moment = now if now is not None else time.time()
        deleted = 0
        try:
            stored = self.client.list(SECRETS, namespace=self.namespace, label_selector=SELECTOR)
        except ClusterError:
            return 0
        for secret in stored:
            meta = secret["metadata"]
            ends_at = (meta.get("annotations") or {}).get(ENDS_AT, "")
            if not ends_at.isdigit() or int(ends_at) > moment:
                continue
            try:
                self.client.delete(SECRETS, meta["name"], namespace=self.namespace, uid=meta.get("uid"))
                deleted += 1
            except ClusterError:
                continue
        return deleted


def renewed(login: Login, *, token: str, token_expires_at: int, refresh_token: str, lifetime_end: int) -> Login:
    """``login`` with renewed OIDC tokens (the session still ends at its lifetime, or with the new token)."""
    return replace(
        login,
        token=token,
        token_expires_at=token_expires_at,
        refresh_token=refresh_token or login.refresh_token,
        ends_at=min(lifetime_end, login.ends_at),
    )
