"""Who the current request is made for: :class:`Caller`, set once per request by :mod:`backend.identity.authenticating`.

A caller is an :class:`cluster.acting.Actor` — the person as the cluster knows them and the credentials
their requests carry — plus how they came in: ``"bearer"`` (an API client's ``Authorization`` header),
``"token"`` (a dashboard session started with a pasted Kubernetes token), ``"oidc"`` (a dashboard session
started through the identity provider) or ``"local"`` (the one-person mode on loopback: the API acts as
its own kubeconfig identity, :data:`LOCAL`). Views read it with :func:`current`; it is Flask's per-request
``g``, never shared between requests or threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import g

from backend.api import actors
from cluster.acting import SELF, Actor
from cluster.identities import User

KEY = "darkroom_caller"


@dataclass(frozen=True)
class Caller:
    actor: Actor
    via: str  # "bearer" | "token" | "oidc" | "local"
    session_id: str | None = None

    @property
    def user(self) -> User | None:
        return self.actor.user

    @property
    def name(self) -> str:
        """The name the cluster knows the caller by ("" in the local mode: the kubeconfig's own identity)."""
        return self.actor.name

    @property
    def local(self) -> bool:
        return self.via == "local"

    def __str__(self) -> str:  # the access log's "user" field; never a token
        return self.name if self.actor.user is not None else "-"


LOCAL = Caller(actor=SELF, via="local")


def current() -> Caller:
    """The caller of this request. Outside an authenticated request (a bug) it raises rather than act as anyone."""
    caller = g.get(KEY)
    if not isinstance(caller, Caller):
        raise RuntimeError("no authenticated caller for this request")
    return caller


def set_current(caller: Caller, *, still_valid: Callable[[], bool] | None = None) -> None:
    """This request's caller; its actor is what the API's views act as (:mod:`backend.api.actors`)."""
    setattr(g, KEY, caller)
    actors.set_current(caller.actor, still_valid=still_valid)


def known() -> Caller | None:
    """The caller if this request has been authenticated (for logs and pages rendered on any path)."""
    caller = g.get(KEY)
    return caller if isinstance(caller, Caller) else None
