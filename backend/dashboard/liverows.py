"""Live list rows: each change rendered once on the server and pushed as HTML to every open list page.

Installed by :mod:`backend.dashboard` with the :class:`RowView` of each live list (Darkrooms, Tasks, Tasks
with events, Postgresqls: declared next to their pages). ``GET /ui/live/<view>?namespace=&q=&sort=&rows=&lastEventId=``
is a Server-Sent Events stream over the same broadcaster, caps and event loop as ``/watch``
(:func:`backend.api.watch.streams.open_stream`); only its encoding differs. A list page's ``list`` block opens it
with htmx-ext-sse (``sse-connect`` on the list section), so the page declares what it does with each event:

- ``event: <Kind>/<namespace>/<name>`` — the object changed: ``data`` is its row, rendered from the
  list template's ``row`` block; the row (``sse-swap`` with that name, ``hx-swap="outerHTML"``) replaces
  itself. A deleted object's row is replaced by a comment (the row goes).
- the same event for a *Warning* Event about a row's object, one of its children or a ReplicaSet or Pod under those,
  in the lists whose rows show the Warning count (:attr:`RowView.warnings`; the decision, and who gets the counts:
  :mod:`.timeline`).
- ``event: members`` — an object was added or deleted, or a change moved one in the tab's sort order (below): the
  list refreshes itself (``hx-trigger="sse:members"``), as only the tab knows its page. In a list whose rows show what differs per person
  (:attr:`RowView.personal`: a Task with its Events, which may lie in namespaces one person may list and another may
  not), a changed object is a ``members`` event too: each tab fetches its list again as its own person, as a row
  rendered once cannot be right for every tab.
- ``event: reset`` — the resume point is gone (or a row could not be rendered): the list refreshes itself too.

Renders: the first stream that needs an event's row for a view renders it and keeps it on the event
(:attr:`backend.api.watch.broadcasting.Event.encodings`); every other tab gets those bytes. So a status change costs one
render per view that has an open tab, whatever the number of tabs, and none when no tab is open.
``darkroom_dashboard_row_renders_total{view}`` in ``/metrics`` counts them. Each stream forwards only the
events of its tab's filters (kind, namespace, name substring), so the filter lives here only.

Only the rows a tab shows (:class:`Page`): a list section names them on its stream, ``rows=<ns>/<name>,...`` (its
page, unless the names are too long for a URL: :data:`ROWS_QUERY_MAX`; ``sort=`` its order: :func:`live_query`), and
the stream forwards a change (a modification, or a Warning Event about a row's object) only of those rows — or, when
the tab sorts by a value the change altered (a state, a Task's priority or deadline: the object's sort value before
and after differ, :attr:`Event.previous`), ``members``, for any
object of its filters: the change can move a row into, out of or within the page, and only a new list knows which.
A change that leaves the sort value as it was cannot move a row (names, namespaces and ages never change; ties keep
the cache's order), so a row the tab does not show stays off its page and is neither sent nor rendered: 10,000
Darkrooms changing anywhere cost a tab of 50 rows only its rows' changes, and a row no open tab shows is never
rendered. Additions and deletions are ``members`` for every tab of the filters (any may shift its page). Without
``rows`` (another client) a stream forwards every change of its filters, as before.

A row pushed to every tab cannot carry one browser's CSRF token: shared renders get ``shared=True``
and leave the hidden field out (htmx sends the token as a header; pushed rows exist only with JavaScript).
Nor one person's permissions: a shared render shows every action as allowed (:func:`.allowing.for_everyone`) and
each tab's ``static/dashboard.js`` disables what its list section says its person may not do (:mod:`.allowing`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import yaml
from flask import Blueprint, Flask, Response, request
from flask.blueprints import BlueprintSetupState
from prometheus_client import Counter

from backend.api import actors, operations
from backend.api.problems import Problem
from backend.api.watch import watching
from backend.api.watch.broadcasting import Event, Filters
from backend.api.watch.streams import RESOURCES, Streams, open_stream
from backend.core.ordering import Sort
from backend.core.services import KindService
from backend.dashboard import allowing, rendering, timeline
from backend.dashboard.browsing import Filters as ListFilters
from cluster import EVENTS, Cache, ClusterError, FrozenDict, Resource
from cluster.acting import SELF

log = logging.getLogger(__name__)
MEMBERS = b"members"
OBJECT_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z")  # a DNS subdomain: the names of our kinds
GONE = b"<!-- deleted -->"


@dataclass(frozen=True)
class RowView:
    """One live list: its stream name, the kind it shows, and how one row is rendered."""

    name: str  # the path segment: /ui/live/<name>
    kind: str  # the kind's title: Darkroom, Task, Postgresql
    template: str  # the list template; its block ``row`` renders one object
    var: str  # the row block's variable for the object
    item: Callable[[FrozenDict], Mapping[str, Any]]  # the object as the row shows it
    sorts: Mapping[str, Sort]  # the list's sort keys (``?sort=``: the kind's)
    #: more resources a person must be able to list to get this view's rows
    requires: tuple[Resource, ...] = ()
    #: a row shows what differs per person (see the module docstring): a change refreshes each tab's list instead
    personal: bool = False
    #: a row carries its object's Warning count (:mod:`.timeline`): a Warning Event about it pushes the row again
    warnings: bool = False

    @classmethod
    def of(cls, name: str, service: KindService, template: str, var: str, **more: Any) -> RowView:
        """The view of a kind's list: its kind, sort keys and (unless ``item`` is given) friendly objects."""
        return cls(name, kind=service.title, template=template, var=var, **{"item": service.friendly, "sorts": service.kind.sorts, **more})


ROWS_MAX = 1000  # rows one stream may name (a page shows 50)
# The longest ``rows`` a list section puts in its stream's URL (encoded). Proxies refuse long request lines (nginx: 8 KB
# by default), so a page of long names leaves ``rows`` out and its stream forwards every change of its filters, as
# without rows: more frames for that tab, never a stream that cannot connect.
ROWS_QUERY_MAX = 4000


@dataclass(frozen=True)
class Page:
    """What one tab shows: its rows (``rows``, ``namespace/name``; None: every row of its filters) and its order."""

    rows: frozenset[str] | None = None
    order: Sort | None = None  # the value the tab sorts by (None: the cache's order, namespace and name)

    def shows(self, namespace: str, name: str) -> bool:
        return self.rows is None or f"{namespace}/{name}" in self.rows

    def moves(self, event: Event) -> bool:
        """Whether the modification ``event`` can move its object in this tab's order: its sort value changed."""
        if self.order is None or event.change != "MODIFIED" or event.source is None:
            return False
        return event.previous is None or self.order.value(event.previous) != self.order.value(event.source)


@dataclass(frozen=True)
class RowFilter:
    """The events of one list stream: its filters' changes of the list's kind (modifications: of the rows its page
    shows, or those that move an object in its order) and, when ``owner`` is given, the Warning Events about one of the
    rows it shows (``owner``: the object an Event is about, or None)."""

    filters: Filters
    owner: Callable[[Event], FrozenDict | None] | None = None
    page: Page = Page()

    def match(self, event: Event) -> bool:
        if event.kind != EVENTS.kind or self.owner is None:
            if not self.filters.match(event):
                return False
            return event.change != "MODIFIED" or self.page.shows(event.namespace, event.name) or self.page.moves(event)
        found = self.owner(event)
        if found is None:
            return False
        name = str(found["metadata"].get("name") or "")
        in_filters = self.filters.namespace in (None, event.namespace) and (not self.filters.q or self.filters.q in name)
        return in_filters and self.page.shows(event.namespace, name)


def row_keys(items: Iterable[Mapping[str, Any]]) -> str:
    """The ``rows`` of a list page's stream: ``namespace/name`` of each item (friendly objects, or stored ones)."""
    keys = []
    for item in items:
        meta = item.get("metadata") or {}
        keys.append(f"{item.get('namespace') or meta.get('namespace') or ''}/{item.get('name') or meta.get('name') or ''}")
    return ",".join(keys)


def live_query(filters: ListFilters, cursor: int | None, items: Iterable[Mapping[str, Any]]) -> str:
    """The query of a list section's stream: its filters and sort, its resume point, and the rows its page shows."""
    query = filters.query(page=None, lastEventId=cursor)
    rows = urlencode({"rows": row_keys(items)})
    if len(rows) > ROWS_QUERY_MAX:
        return query
    return f"{query}&{rows}" if query else f"?{rows}"


def _page(view: RowView) -> Page:
    """This request's ``rows`` and ``sort`` for ``view`` (400 naming the parameter when either is not one)."""
    errors: dict[str, list[str]] = {}
    sort = (request.args.get("sort") or "").strip()
    order = view.sorts.get(sort.removeprefix("-")) if sort else None
    if sort and order is None:
        errors["sort"] = [f"one of {', '.join(view.sorts)}, or one of them after -"]
    rows = None
    if "rows" in request.args:
        given = [key for key in request.args["rows"].split(",") if key]
        bad = [key for key in given if not _row_key(key)]
        if len(given) > ROWS_MAX:
            errors["rows"] = [f"at most {ROWS_MAX} rows"]
        elif bad:
            errors["rows"] = [f"each row namespace/name, comma-separated: not {bad[0][:300]!r}"]
        rows = frozenset(given)
    if errors:
        raise Problem(400, "invalid live filters", errors=errors)
    return Page(rows=rows, order=order)


def _row_key(key: str) -> bool:
    namespace, slash, name = key.partition("/")
    return bool(slash) and watching.DNS_LABEL.match(namespace) is not None and OBJECT_NAME.match(name) is not None


class Renders:
    """An app's row renders: one per (event, view), kept on the event; counted."""

    def __init__(self, app: Flask, counter: Counter | None, cache: Cache) -> None:
        self._app = app
        self._counter = counter
        self._lock = threading.Lock()
        self.cache = cache

    def owner(self, view: RowView, event: Event) -> FrozenDict | None:
        """The object of ``view``'s kind whose row the Event ``event`` changes (its Warning count), else None."""
        return timeline.owner_of(event.source or FrozenDict(), RESOURCES[view.kind], self.cache) if view.warnings else None

    def encode(self, view: RowView, event: Event, *, warnings: bool = True, page: Page = Page()) -> bytes:
        """The frames of ``event`` for streams of ``view`` (b"": nothing for them); ``warnings``: the stream's person may
        see the Warning counts (else rows without them, and nothing for an Event); ``page``: what the stream's tab shows
        (a change that moves an object in its order is ``members``)."""
        head = b"id: %d\n" % event.id
        if event.kind == EVENTS.kind and warnings:
            owner = self.owner(view, event)
            if owner is None:
                return b""
            row_event = f"{view.kind}/{event.namespace}/{owner['metadata']['name']}".encode()
            return self._shared(view, event, head, row_event, owner, warnings=True)
        if event.kind != view.kind:
            return b""
        if event.change == "ADDED":
            return head + b"event: members\ndata: ADDED\n\n"
        row_event = f"{event.kind}/{event.namespace}/{event.name}".encode()
        if event.change == "DELETED":
            return head + b"event: %s\ndata: %s\n\n" % (row_event, GONE) + b"event: members\ndata: DELETED\n\n"
        if view.personal or page.moves(event):
            return head + b"event: members\ndata: MODIFIED\n\n"
        return self._shared(view, event, head, row_event, event.source or FrozenDict(), warnings=warnings)

    def _shared(self, view: RowView, event: Event, head: bytes, row_event: bytes, obj: FrozenDict, *, warnings: bool) -> bytes:
        """The row of ``obj`` for ``event``: rendered once per view (and with or without the Warning counts)."""
        key = view.name if warnings or not view.warnings else f"{view.name}:no-warnings"
        with self._lock:  # one render per event and view, however many streams ask at once
            frame = event.encodings.get(key)
            if frame is None:
                frame = event.encodings[key] = self._render(view, event, head, row_event, obj, warnings=warnings)
        return frame

    def _render(self, view: RowView, event: Event, head: bytes, row_event: bytes, obj: FrozenDict, *, warnings: bool) -> bytes:
        try:
            with self._app.app_context():
                # One render for every tab: made with the API's own view of the cache; each stream only carries it to
                # people who may list everything the row shows (RowView.requires, checked per stream; the Warning
                # counts only to those who may list Events: see .timeline).
                actors.set_current(SELF)
                allowing.for_everyone()  # no person's answers in a row every tab gets (static/dashboard.js applies each tab's)
                if not warnings:
                    timeline.withhold()
                html = rendering.block_text(view.template, "row", {view.var: view.item(obj), "shared": True})
        except Exception:  # a row that cannot be rendered must not end every stream: the tabs reload their list
            log.exception("could not render the %s row of %s/%s", view.name, event.namespace, event.name)
            return head + b'event: reset\ndata: {"reason": "a row could not be rendered"}\n\n'
        if self._counter is not None:
            self._counter.labels(view.name).inc()
        data = b"".join(b"data: %s\n" % line for line in html.strip().encode().splitlines())
        return head + b"event: %s\n%s\n" % (row_event, data)


def _operation(views: Mapping[str, RowView]) -> dict[str, Any]:
    """The OpenAPI description of ``GET /ui/live/<view>`` (read by :mod:`backend.api.openapi` from the view's docstring)."""

    def problem(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}

    def query(name: str, description: str) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": False, "schema": {"type": "string"}, "description": description}

    kinds = "|".join(sorted({view.kind for view in views.values()}))
    named = {"properties": {"event": {"type": "string", "pattern": f"^(ready|reset|members|({kinds})/[^/]+/[^/]+)$"}}}
    return {
        "get": {
            "tags": ["Dashboard (HTML)"],
            "summary": "Live rows of a list page (Server-Sent Events of HTML rows)",
            "description": (
                "``ready`` first; ``<Kind>/<namespace>/<name>``: the row of a changed object, or of one a Warning Event is"
                " about (HTML; a comment once it is deleted);"
                " ``members``: an object of the filters was added or deleted, or changed in a list whose rows differ per person,"
                " or changed its value of the ``sort`` order (refresh the list); ``reset``: changes were missed"
                " (refresh the list). Resume with ``Last-Event-ID`` or ``lastEventId``. The stream caps of ``/watch`` apply."
            ),
            "parameters": [
                {"name": "view", "in": "path", "required": True, "schema": {"type": "string", "enum": list(views)}},
                query("namespace", "Only this namespace."),
                query("q", "A substring of the name."),
                query("sort", "The list's order (a sort key, or one after -): a change of its value is ``members``."),
                query("rows", "The rows the list shows (namespace/name, comma-separated): changes of other rows are not sent."),
                query("lastEventId", "Resume after this event id."),
            ],
            "responses": {
                "200": {
                    "description": "An endless event stream (ends when the server shuts down); each event is a ServerSentEvent.",
                    "content": {"text/event-stream": {"schema": {"allOf": [{"$ref": "#/components/schemas/ServerSentEvent"}, named]}}},
                },
                "400": problem("Invalid namespace, sort or rows."),
                "404": problem("No such list."),
                "503": problem("Too many open streams; try again after Retry-After seconds."),
            },
        }
    }


def _may_list_events(streams: Streams, namespace: str | None) -> bool:
    """Whether this request's person may list Events where the list shows rows (asked once, when the stream opens)."""
    try:
        return streams.access.acting_as(actors.current()).may("list", EVENTS, namespace=namespace)
    except ClusterError:
        return False  # not known: no counts (never "allowed")


def install(blueprint: Blueprint, *, views: Sequence[RowView], streams: Streams) -> None:
    """Add ``GET /ui/live/<view>`` for ``views`` over the app's ``streams`` and, when the blueprint is registered, the
    app's row renders with their counter."""
    by_name = {view.name: view for view in views}
    app_renders: list[Renders] = []  # the one app's (a dashboard blueprint belongs to one app)

    def setup(state: BlueprintSetupState) -> None:
        app = state.app
        assert isinstance(app, Flask)
        counter = None
        if operations.EXTENSION in app.extensions:
            counter = Counter(
                "darkroom_dashboard_row_renders",
                "List rows rendered for live updates (one per change and list view, shared by every open tab)",
                labelnames=("view",),
                registry=operations.registry(app),
            )
        app_renders.append(Renders(app, counter, streams.access.cache))

    blueprint.record_once(setup)
    blueprint.add_app_template_global(live_query, "live_query")

    def live(view: str) -> Response:
        found = by_name.get(view)
        if found is None:
            raise Problem(404, f"no live list {view!r}: use {', '.join(by_name)}")
        namespace = (request.args.get("namespace") or "").strip() or None
        if namespace is not None and not watching.DNS_LABEL.match(namespace):
            raise Problem(400, "invalid live filters", errors={"namespace": ["must be a DNS label"]})
        q = (request.args.get("q") or "").strip().lower()[:253]
        page = _page(found)
        renders = app_renders[0]
        warnings = found.warnings and _may_list_events(streams, namespace)
        owner = (lambda event: renders.owner(found, event)) if warnings else None
        filters = RowFilter(Filters(kinds=frozenset({found.kind}), namespace=namespace, q=q), owner, page)
        # an Event's row goes only to people who may list the rows' kind there too (and Events: the Event's own kind)
        requires = {found.kind: found.requires, EVENTS.kind: (RESOURCES[found.kind], *found.requires)}
        encode: Callable[[Event], bytes] = lambda event: renders.encode(found, event, warnings=warnings, page=page)  # noqa: E731
        return open_stream(streams, filters, encode=encode, requires=requires)

    live.__doc__ = "Live rows of a dashboard list (Server-Sent Events of HTML).\n---\n" + yaml.safe_dump(
        _operation(by_name), sort_keys=False
    )
    blueprint.add_url_rule("/ui/live/<view>", "live_rows", live, methods=["GET"])
