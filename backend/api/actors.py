"""Whom the current request acts for: the :class:`cluster.acting.Actor` every view reads and the core acts as.

Set once per request, before any view, by the authentication hook (:mod:`backend.identity.authenticating`,
which sits above the API and knows how the person came in); read by the views with :func:`current` and
handed to the core (:meth:`backend.core.services.Services.acting_as`). A request that reaches a view without
an actor is a bug: :func:`current` raises instead of acting as anyone — never the API's own account by default.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import g, has_request_context, request

from cluster.acting import Actor

KEY = "darkroom_actor"
CHECK = "darkroom_actor_check"
#: Where the production server's access log finds the request's person (a key of the ASGI scope; never a token).
ACCESS_USER = "darkroom_control_panel.user"
LOCAL_NAME = "(local)"  # the local one-person mode: the kubeconfig's own identity


def current() -> Actor:
    actor = g.get(KEY)
    if not isinstance(actor, Actor):
        raise RuntimeError("no authenticated actor for this request")
    return actor


def still_valid() -> Callable[[], bool] | None:
    """How a long-lived response (a stream) checks later that the actor's credentials are still accepted; None: no need."""
    check = g.get(CHECK)
    return check if callable(check) else None


def set_current(actor: Actor, *, still_valid: Callable[[], bool] | None = None) -> None:
    """This request's actor (and, for long-lived responses, how to check later that its credentials still hold); its
    name goes to the access log (:data:`ACCESS_USER`)."""
    setattr(g, KEY, actor)
    setattr(g, CHECK, still_valid)
    if has_request_context():  # outside a request (a render shared by every stream) there is no access log line
        scope = request.environ.get("asgi.scope")
        if isinstance(scope, dict):
            scope[ACCESS_USER] = actor.name or LOCAL_NAME
