"""The HTMX dashboard: server-rendered HTML pages for Darkrooms, Tasks and Postgresqls (blueprint ``dashboard``).

Registered by :func:`backend.app.create_app` after the JSON API blueprints. Routes (no collision
with the JSON API, which owns ``/darkrooms``, ``/tasks``, ...): ``/`` (the Darkrooms page, the
landing page), ``/ui/darkrooms/...``, ``/ui/tasks/...``, ``/ui/combinedtasks`` and ``/ui/postgresqls/...``
(see :mod:`backend.dashboard.darkroompages`, :mod:`backend.dashboard.taskpages` and
:mod:`backend.dashboard.pgpages`, whose forms :mod:`backend.dashboard.formgen` generates from the CRDs). Templates live in
``frontend/templates`` (a page and its fragments are blocks of one template: :mod:`.rendering`),
static files (vendored htmx, CSS, JS) in ``frontend/static``. Writes reuse the JSON API's
validation and write flow (:mod:`.actions`); CSRF and the Content-Security-Policy are
:mod:`.protection`; list rows are rendered once per change and pushed live by :mod:`.liverows`.
"""

from __future__ import annotations

from flask import Blueprint

from backend.dashboard import darkroompages, liverows, pgpages, protection, rendering, returning, taskpages

blueprint = Blueprint("dashboard", __name__)
protection.install(blueprint)
rendering.install(blueprint)
darkroompages.install(blueprint)
taskpages.install(blueprint)
pgpages.install(blueprint)
liverows.install(blueprint, views=(darkroompages.LIVE, taskpages.LIVE, taskpages.COMBINED_LIVE, pgpages.LIVE))
returning.install(blueprint, ("/", "/ui/tasks", "/ui/combinedtasks", pgpages.BASE))  # the list pages

__all__ = ["blueprint"]
