"""Live detail pages: one stream per open detail page (or edit form) naming which of its regions changed.

Installed by :mod:`backend.dashboard` with the :class:`DetailView` of each kind (declared next to its pages).
``GET /ui/live/<view>/<namespace>/<name>?lastEventId=`` is a Server-Sent Events stream over the same broadcaster,
caps, event loop and per-person visibility as ``/watch`` and the list pages' live rows
(:func:`backend.api.watch.streams.open_stream`, :mod:`.liverows`). It carries the changes

- of the object itself: ``event: object`` (data: ADDED, MODIFIED or DELETED);
- of its children — objects of :data:`backend.core.access.CHILDREN` whose *controller* ownerReference is the object's
  UID (read from the published object; the page's children are found by the cache index
  :data:`backend.core.access.CONTROLLER_UID`, never by listing): ``event: children``; so do the changes of the objects
  under them, :data:`backend.core.access.GRANDCHILDREN` (a Deployment's ReplicaSets and Pods, a StatefulSet's Pods and
  their claims), whose controller references lead to the object (:func:`.tree.descends_from`: lookups by key and
  index in the API's cache) — the children region is the page's resource tree (:mod:`.tree`);
- of the Events about it or about one of the objects of its tree (``involvedObject.uid``; a Task's by its ``task-uid``
  label too; a child or an object under one named by an Event is looked up by name in the API's cache):
  ``event: events``;

and ``ready`` / ``reset`` as every stream. The page declares what each event does (htmx-ext-sse: ``sse-connect`` on
an element around every region; ``hx-trigger="sse:object, sse:reset"`` on a region): the region fetches itself again
(its block of the detail template, ``HX-Target``: its id), as the person of the tab. So every region of a detail page
— Spec card, status and conditions, children, Events — and the freshness notice of an edit form
(:meth:`.editing.Flow.freshness`) update from this one stream; nothing polls.

Decision — a change *notice* pushed, each tab rendering its regions itself, rather than HTML rendered once and pushed
to every tab as the list rows are: a detail region shows what differs per person — the Replicas control and the
actions are gated by what the person may do (:mod:`.allowing`), a child or an Event they may not read is shown as
such — so a region rendered once cannot be right for every tab (the reason a personal list, :attr:`.liverows.RowView.personal`,
refreshes itself on ``members`` too). A detail page has one tab per person looking at one object, so a refresh per
tab costs what a render per change would. Both mechanisms are the same wire (``/ui/live/...``, the app's
:class:`~backend.api.watch.streams.Streams`) and the same declarations in the templates (``sse-connect``,
``hx-trigger="sse:..."``); ``/watch`` stays the JSON API's.

The related objects' changes go through the app's one broadcaster (:func:`backend.api.watch.broadcasting.publish_related`),
so its history (``settings.sse_history`` events) covers less time when the cluster's Events or the cached Pods churn: a tab that
reconnects after its resume point fell out of it gets ``reset`` and fetches every region again, as a list does.

Per-person authorization: a stream carries an event only when its person may ``list`` the event's resource in its
namespace (:mod:`backend.api.watch.visibility`: the Darkroom, the Deployment, the Event...), so a person who may not
list Events (or Deployments) there never learns through the push that one changed; the region's fetch is a request
as them, authorized like every read of the cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from flask import Blueprint, Response

from backend.api.problems import Problem
from backend.api.watch import watching
from backend.api.watch.broadcasting import Event
from backend.api.watch.streams import Streams, open_stream
from backend.core.access import CHILDREN, GRANDCHILDREN, controller_uid
from backend.core.errors import Failure
from backend.core.services import KindService
from backend.dashboard import tree
from cluster import EVENTS, Cache, FrozenDict
from cluster.taskevents import task_uids

OBJECT = "object"
CHILD_CHANGE = "children"
EVENT_CHANGE = "events"
CHILD_KINDS = {resource.kind: resource for resource in CHILDREN}
GRANDCHILD_KINDS = {resource.kind: resource for resource in GRANDCHILDREN}


@dataclass(frozen=True)
class DetailView:
    """The live stream of one kind's detail pages: its path segment, and the service the object is read through."""

    name: str  # /ui/live/<name>/<namespace>/<object name>: darkroom, task, postgresql
    service: KindService

    @property
    def kind(self) -> str:
        return self.service.title


class DetailFilter:
    """Which events concern one object's page, and the region each changes (an :class:`~backend.api.watch.broadcasting.EventFilter`)."""

    def __init__(self, *, kind: str, namespace: str, name: str, uid: str | None, cache: Cache) -> None:
        self.kind, self.namespace, self.name, self.uid = kind, namespace, name, uid
        self._cache = cache

    def match(self, event: Event) -> bool:
        return self.region(event) is not None

    def region(self, event: Event) -> str | None:
        """``object``, ``children`` or ``events`` (None: not about this page)."""
        if event.kind == self.kind:
            return OBJECT if (event.namespace, event.name) == (self.namespace, self.name) else None
        if not self.uid or event.source is None:
            return None
        if event.kind in CHILD_KINDS:
            return CHILD_CHANGE if event.namespace == self.namespace and self.uid in controller_uid(event.source) else None
        if event.kind in GRANDCHILD_KINDS:
            mine = event.namespace == self.namespace and tree.descends_from(self._cache, event.kind, event.source, self.uid)
            return CHILD_CHANGE if mine else None
        if event.kind == EVENTS.kind:
            return EVENT_CHANGE if self._about_page(event.source) else None
        return None

    def _about_page(self, recorded: FrozenDict) -> bool:
        if self.uid in task_uids(recorded):  # about the object (involvedObject.uid), or a Task's by its label
            return True
        involved = recorded.get("involvedObject") or {}
        kind = str(involved.get("kind") or "")
        resource = CHILD_KINDS.get(kind) or GRANDCHILD_KINDS.get(kind)
        if resource is None or involved.get("namespace", self.namespace) != self.namespace:
            return False
        informer = self._cache.informer(resource)
        found = informer.store.get(f"{self.namespace}/{involved.get('name')}") if informer is not None else None
        if found is None or self.uid is None:
            return False
        if kind in CHILD_KINDS:
            return self.uid in controller_uid(found)
        return tree.descends_from(self._cache, kind, found, self.uid)  # a Pod of its tree, say

    def encode(self, event: Event) -> bytes:
        region = self.region(event)
        if region is None:
            return b""
        return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.id, region.encode(), (event.change or "MODIFIED").encode())


def _operation(views: Mapping[str, DetailView]) -> dict[str, Any]:
    """The OpenAPI description of ``GET /ui/live/<view>/<namespace>/<name>``."""

    def problem(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}

    def path(name: str, description: str, **schema: Any) -> dict[str, Any]:
        return {"name": name, "in": "path", "required": True, "schema": {"type": "string", **schema}, "description": description}

    named = {"properties": {"event": {"type": "string", "enum": ["ready", "reset", OBJECT, CHILD_CHANGE, EVENT_CHANGE]}}}
    return {
        "get": {
            "tags": ["Dashboard (HTML)"],
            "summary": "Live changes of a detail page (Server-Sent Events naming the regions to fetch again)",
            "description": (
                "``ready`` first; ``object``: the object changed (data: ADDED, MODIFIED or DELETED); ``children``: one of"
                " the objects it controls changed; ``events``: an Event about it or a child changed; ``reset``: changes were"
                " missed (fetch every region again). Only what the caller may list is carried. Resume with ``Last-Event-ID``"
                " or ``lastEventId``. The stream caps of ``/watch`` apply."
            ),
            "parameters": [
                path("view", "The kind's detail page.", enum=list(views)),
                path("namespace", "The object's namespace."),
                path("name", "The object's name."),
                {
                    "name": "lastEventId",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "Resume after this event id.",
                },
            ],
            "responses": {
                "200": {
                    "description": "An endless event stream (ends when the server shuts down); each event is a ServerSentEvent.",
                    "content": {"text/event-stream": {"schema": {"allOf": [{"$ref": "#/components/schemas/ServerSentEvent"}, named]}}},
                },
                "400": problem("Invalid namespace."),
                "404": problem("No such detail page."),
                "503": problem("Too many open streams; try again after Retry-After seconds."),
            },
        }
    }


def install(blueprint: Blueprint, *, views: Sequence[DetailView], streams: Streams) -> None:
    """Add ``GET /ui/live/<view>/<namespace>/<name>`` for ``views`` over the app's ``streams``."""
    by_name = {view.name: view for view in views}

    def live(view: str, namespace: str, name: str) -> Response:
        found = by_name.get(view)
        if found is None:
            raise Problem(404, f"no live detail page {view!r}: use {', '.join(by_name)}")
        if not watching.DNS_LABEL.match(namespace):
            raise Problem(400, "invalid live filters", errors={"namespace": ["must be a DNS label"]})
        try:  # as the person: the UID their children and Events are matched by (none: the object is gone)
            uid: str | None = found.service.fetch(namespace, name)["metadata"]["uid"]
        except Failure:
            uid = None
        filters = DetailFilter(kind=found.kind, namespace=namespace, name=name, uid=uid, cache=streams.access.cache)
        return open_stream(streams, filters, encode=filters.encode)

    live.__doc__ = "Live changes of a dashboard detail page (Server-Sent Events).\n---\n" + yaml.safe_dump(
        _operation(by_name), sort_keys=False
    )
    blueprint.add_url_rule("/ui/live/<view>/<namespace>/<name>", "live_detail", live, methods=["GET"])
