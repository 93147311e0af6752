"""The Flask app factory: ``create_app(settings, access=None)``.

Builds the app's application services once (:class:`backend.core.services.Services`: a
:class:`~backend.core.services.KindService` per kind of :data:`backend.core.kinds.registry.KINDS`) and hands them, or
the cluster client, explicitly to what needs them — no view looks its dependencies up. Wires, in
order: error handlers (:mod:`backend.api.problems`: domain errors, cluster errors, problems), web hardening
(identity headers stripped, Host check, CORS allowlist, security headers: :mod:`backend.api.hardening`), who is
calling (bearer tokens, login sessions, or the local one-person mode; /login, /logout: :mod:`backend.identity`) —
every view then acts as that person —, query parameters no operation takes refused (:mod:`backend.api.parameters`),
read-your-writes across
replicas (:mod:`backend.api.consistency`), operations endpoints and request metrics
(:mod:`backend.api.operations`), a JSON blueprint per registered kind (:mod:`backend.api.endpoints`) and
their namespace hints, ``/combinedtasks`` and ``/namespaces``, live changes (:mod:`backend.api.watch.watching`),
the dashboard (:func:`backend.dashboard.create_blueprint`, over the same streams) and, last, the
OpenAPI document built from every registered view (:mod:`backend.api.openapi`).
``access`` is the cluster access to use; None starts one from ``settings`` (entry points and
gunicorn), tests pass their own.
"""

from __future__ import annotations

from flask import Flask, Response

import productfiles
from backend import dashboard
from backend.api import actors, combinedtasks, consistency, endpoints, hardening, namespaces, openapi, operations, parameters, problems
from backend.api.watch import watching
from backend.core import services
from backend.core.access import ClusterAccess
from backend.identity import authenticating, cookies, login, oidc
from backend.identity.authenticating import Authenticator, FailedAttempts
from backend.identity.sessions import SessionStore
from backend.settings import ApiSettings


def create_app(settings: ApiSettings, *, access: ClusterAccess | None = None) -> Flask:
    """Build the app; raises :class:`backend.settings.UnsafeSettings` for unsafe settings."""
    settings.check()
    app = Flask("backend", template_folder=str(productfiles.templates()), static_folder=str(productfiles.static()))
    app.config["MAX_CONTENT_LENGTH"] = settings.max_content_length_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.after_request(_close_unsent_body)
    access = access if access is not None else ClusterAccess.start(settings)
    app_services = services.Services(settings, access, on_write=consistency.wrote, actor_of=actors.current)
    app.extensions[services.EXTENSION] = app_services  # read only to shut the app down (backend.server.shutdown)
    problems.register(app)
    hardening.register(app, settings=settings)
    cookies.install(app, settings)
    authenticator = Authenticator(
        settings=settings,
        tokens=access.tokens,
        store=None if settings.local else SessionStore(client=access.client, namespace=settings.session_namespace),
        provider=oidc.Provider(app, settings) if settings.oidc else None,
        attempts=FailedAttempts(limit=settings.auth_failures_max, window_s=settings.auth_failure_window_s),
    )
    authenticating.register(app, authenticator)
    login.register(app, login.Logins(settings=settings, authenticator=authenticator))
    parameters.register(app)
    consistency.register(app, settings=settings, client=access.client)
    operations.register(app, settings=settings, access=access)
    for service in app_services.kinds:
        app.register_blueprint(endpoints.resource_blueprint(service))
    app.register_blueprint(combinedtasks.blueprint(app_services))
    app.register_blueprint(namespaces.blueprint(app_services))
    endpoints.register_namespace_hints(app, app_services.kinds)
    streams = watching.register(app, app_services)
    app.register_blueprint(dashboard.create_blueprint(app_services, streams=streams))
    openapi.register(app, settings=settings)
    return app


def _close_unsent_body(response: Response) -> Response:
    """A 304 sends no body, and nothing closes the one it was made from: Werkzeug's ``send_file`` (the dashboard's
    static files, revalidated by every browser) leaves its file open until the garbage collector finds it."""
    if response.status_code == 304:
        response.close()
    return response
