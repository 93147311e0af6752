"""The HTMX dashboard: server-rendered HTML pages for Darkrooms, Tasks and Postgresqls (blueprint ``dashboard``).

:func:`create_blueprint` is called by :func:`backend.app.create_app` after the JSON API blueprints,
with the app's services and its ``/watch`` streams. Routes (no collision with the JSON API, which
owns ``/darkrooms``, ``/tasks``, ...): ``/`` (the Darkrooms page, the landing page),
``/ui/darkrooms/...``, ``/ui/tasks/...``, ``/ui/combinedtasks`` and ``/ui/postgresqls/...`` (see
:mod:`backend.dashboard.darkroompages`, :mod:`backend.dashboard.taskpages` and
:mod:`backend.dashboard.pgpages`, whose forms :mod:`backend.dashboard.forms` generates from the CRDs).

A kind's pages module is registered by one line in :data:`PAGES`; it declares its list pages
(``LISTS``: the navigation links of ``base.html``, and the lists whose query :mod:`.returning`
remembers) and its ``install(blueprint, services)`` adds its routes, closing over the kind's
:class:`backend.core.services.KindService`, and returns its live list views (:mod:`.liverows`) and the live stream of
its detail pages (:mod:`.livedetail`).
Templates live in ``frontend/templates`` (a page and its fragments are blocks of one template: :mod:`.rendering`),
static files (vendored htmx, CSS, JS) in ``frontend/static``. Writes go through the same application service as the
JSON API (:mod:`.actions`); CSRF and the Content-Security-Policy are :mod:`.protection`; every delete confirmation
says what goes with the object (:mod:`.consequences`); list rows are rendered once per change and pushed live by
:mod:`.liverows`, and every region of a detail page is fetched again when :mod:`.livedetail`'s stream says it changed.
What the person may do — which controls are disabled, with the reason — is asked of the cluster as them
(:mod:`.allowing`); a Darkroom's or a Postgresql's pod logs are read as them too (:mod:`.podlogs`, streamed by
:mod:`.logstreams`); a failure a view lets through is an HTML page, a refusal naming what was refused
(:func:`.browsing.problem_page`).
"""

from __future__ import annotations

from flask import Blueprint

from backend.api.watch.streams import Streams
from backend.core.services import Services
from backend.dashboard import (
    allowing,
    browsing,
    consequences,
    darkroompages,
    livedetail,
    liverows,
    namespacepicker,
    pgpages,
    podlogs,
    protection,
    rendering,
    returning,
    taskpages,
    timeline,
    tree,
)

PAGES = (darkroompages, taskpages, pgpages)  # each kind's pages module, in the navigation's order
DOCS = rendering.NavLink("/docs", "docs", "API", wide=" docs")  # the last navigation entry (backend.api.openapi's page)


def create_blueprint(services: Services, *, streams: Streams) -> Blueprint:
    """The dashboard of one app: every registered pages module over ``services``, live rows over ``streams``."""
    blueprint = Blueprint("dashboard", __name__)
    lists = tuple(link for pages in PAGES for link in pages.LISTS)
    protection.install(blueprint)
    browsing.install(blueprint)
    allowing.install(blueprint, reviewer=services.access.self_reviews)
    rendering.install(blueprint, settings=services.settings, streams=streams, nav=(*lists, DOCS))
    consequences.install(blueprint)
    timeline.install(blueprint, access=services.access)
    tree.install(blueprint, services)
    namespacepicker.install(blueprint, services)
    live = tuple(view for pages in PAGES for view in pages.install(blueprint, services))
    liverows.install(blueprint, views=[v for v in live if isinstance(v, liverows.RowView)], streams=streams)
    livedetail.install(blueprint, views=[v for v in live if isinstance(v, livedetail.DetailView)], streams=streams)
    podlogs.install(blueprint, services, streams=streams)
    returning.install(blueprint, tuple(link.href for link in lists))  # the list pages
    return blueprint


__all__ = ["create_blueprint"]
