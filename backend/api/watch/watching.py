"""``GET /watch``: Darkroom, Task and Postgresql adds, updates and deletes as Server-Sent Events — the view.

:func:`register` (called by :func:`backend.app.create_app` with the app's services) makes the app's
:class:`~.broadcasting.Broadcaster`, subscribes it to the informer of each registered kind
(:data:`backend.core.kinds.registry.KINDS`) in the app's cache (:func:`~.broadcasting.publish_changes`) and to those of
the objects the dashboard's detail pages show besides (:data:`backend.core.access.RELATED`, never on ``/watch``), adds the
view and returns the app's :class:`~.streams.Streams` (the dashboard's live rows stream over them too);
:func:`close` ends every stream (the gunicorn worker calls it on SIGTERM through :mod:`backend.server.shutdown`, so
no thread stays blocked in a stream after shutdown). The view does everything a request needs (authentication,
filters: ``?kind=Darkroom,Task,Postgresql`` and ``?namespace=``, 400 otherwise) and then opens the stream
(:func:`~.streams.open_stream`: caps, resume point, handing it to the server).

Wire format (``text/event-stream``, the frames of :mod:`.sse`):

- ``event: darkroom`` / ``event: task`` / ``event: postgresql`` with ``id: <n>`` and ``data:`` one JSON object
  ``{"type": "ADDED"|"MODIFIED"|"DELETED", "kind": "Darkroom"|"Task"|"Postgresql", "namespace", "name",
  "resourceVersion", "object": <friendly representation, as GET /darkrooms/... returns it>}``.
  Named events only (no generic ``message``): htmx ``sse-swap="darkroom"`` or
  ``EventSource.addEventListener("task", ...)`` pick what they need.
- ``event: ready`` first, with ``id`` = the newest event id, so a client that reconnects later
  resumes from the moment it connected even if nothing has happened yet.
- ``event: reset`` (data ``{"reason": ..., "lastEventId": ...}``) when the client asked to resume
  from an id the buffer no longer holds (too old, from before a restart, malformed) or fell behind
  the buffer: reload the state (``GET /darkrooms``, ``GET /tasks``, ``GET /postgresqls``), then keep listening.
- ``: heartbeat`` comments after ``settings.sse_heartbeat_s`` without output; they also carry
  ``id:`` so filtered clients' resume points keep up with the buffer.

Resume with the ``Last-Event-ID`` header (EventSource sends it on reconnect) or ``?lastEventId=``. The OpenAPI
operation is :data:`.docs.WATCH_DOC`.
"""

from __future__ import annotations

import re

from flask import Flask, Response, request
from prometheus_client import Counter, Gauge

from backend.api import operations
from backend.api.problems import Problem
from backend.api.watch.broadcasting import Broadcaster, Filters, publish_changes, publish_related
from backend.api.watch.docs import WATCH_DOC
from backend.api.watch.limits import StreamLimits
from backend.api.watch.streams import Streams, open_stream
from backend.core.access import RELATED
from backend.core.kinds.registry import KINDS
from backend.core.services import Services

EXTENSION = "darkroom_control_panel.watch"
KIND_NAMES = {name: kind.title for kind in KINDS for name in (kind.title.lower(), kind.plural)}
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")


def parse_filters() -> Filters:
    """The filters of a ``/watch`` request; 400 naming an unknown kind or a namespace that is no DNS label."""
    errors: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for raw in request.args.getlist("kind"):
        for part in filter(None, (p.strip() for p in raw.split(","))):
            if part.lower() in KIND_NAMES:
                kinds.add(KIND_NAMES[part.lower()])
            else:
                errors.setdefault("kind", []).append(f"unknown kind {part!r}: use {', '.join(k.title for k in KINDS)}")
    namespace = request.args.get("namespace")
    if namespace is not None and not DNS_LABEL.match(namespace):
        errors["namespace"] = ["must be a DNS label (lowercase letters, digits and '-', at most 63 characters)"]
    if errors:
        raise Problem(400, "invalid watch filters", errors=errors)
    # our kinds only, never the related objects the broadcaster also carries for the dashboard's detail pages
    return Filters(kinds=frozenset(kinds or KIND_NAMES.values()), namespace=namespace or None)


def register(app: Flask, services: Services) -> Streams:
    """Add ``GET /watch`` and subscribe to the informers of the kinds of ``services``; the app's streams."""
    settings = services.settings
    broadcaster = Broadcaster(history=settings.sse_history)
    app.extensions[EXTENSION] = broadcaster
    limits = StreamLimits(max_total=settings.stream_max_total, max_per_client=settings.stream_max_per_client)
    counter = None
    refused = None
    if operations.EXTENSION in app.extensions:
        metrics = operations.registry(app)
        counter = Counter("darkroom_api_watch_events", "Changes published to /watch clients", labelnames=("kind", "type"), registry=metrics)
        subscribers = Gauge("darkroom_api_watch_subscribers", "Open /watch streams", registry=metrics)
        subscribers.set_function(lambda: broadcaster.subscribers)
        refused = Counter("darkroom_api_watch_refused", "/watch requests refused by a stream cap", labelnames=("cap",), registry=metrics)
    streams = Streams(broadcaster=broadcaster, limits=limits, settings=settings, refused=refused, access=services.access)
    for service in services.kinds:
        publish_changes(broadcaster, service, cache=services.access.cache, counter=counter)
    for resource in RELATED:
        publish_related(broadcaster, resource, cache=services.access.cache)

    @app.get("/watch")
    def watch() -> Response:
        return open_stream(streams, parse_filters())

    watch.__doc__ = WATCH_DOC

    return streams


def close(app: Flask) -> None:
    """End every ``/watch`` stream of ``app`` (server shutdown)."""
    broadcaster: Broadcaster | None = app.extensions.get(EXTENSION)
    if broadcaster is not None:
        broadcaster.close()
