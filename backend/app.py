"""The Flask app factory: ``create_app(settings, access=None)``.

Wires, in order: error handlers (:mod:`backend.problems`), security (CORS allowlist, bearer/session
auth, security headers: :mod:`backend.security`), read-your-writes across replicas
(:mod:`backend.consistency`), operations endpoints and request metrics
(:mod:`backend.operations`), the resource blueprints, live changes (:mod:`backend.watching`) and,
last, the OpenAPI document built from every registered view (:mod:`backend.openapi`).
``access`` is the cluster access to use; None starts one from ``settings`` (entry points and
gunicorn), tests pass their own.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from backend import (
    combinedtasks,
    consistency,
    darkrooms,
    dashboard,
    endpoints,
    namespaces,
    openapi,
    operations,
    postgresqls,
    problems,
    security,
    state,
    tasks,
    watching,
)
from backend.access import ClusterAccess
from backend.settings import ApiSettings

ROOT = Path(__file__).resolve().parent.parent
FRONTEND = ROOT / "frontend"


def create_app(settings: ApiSettings, *, access: ClusterAccess | None = None) -> Flask:
    """Build the app; raises :class:`backend.settings.UnsafeSettings` for unsafe settings."""
    settings.check()
    app = Flask("backend", template_folder=str(FRONTEND / "templates"), static_folder=str(FRONTEND / "static"))
    app.config["MAX_CONTENT_LENGTH"] = settings.max_content_length_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    access = access if access is not None else ClusterAccess.start(settings)
    state.install(app, state.AppState(settings=settings, access=access))
    problems.register(app)
    security.register(app, settings=settings)
    consistency.register(app, settings=settings)
    operations.register(app, settings=settings, access=access)
    for module in (darkrooms, tasks, postgresqls, combinedtasks, namespaces):
        app.register_blueprint(module.blueprint)
    endpoints.register_namespace_hints(app, (darkrooms.KIND, tasks.KIND, postgresqls.KIND))
    app.register_blueprint(dashboard.blueprint)
    watching.register(app, settings=settings, access=access)
    openapi.register(app, settings=settings)
    return app
