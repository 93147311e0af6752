"""An object's events timeline (the Events region of every detail page) and the Warning badge of its list row.

Called by the detail pages (:mod:`.darkroompages`, :mod:`.pgpages`, :mod:`.taskpages`: :func:`of_request`, shown by
``ui.timeline`` in ``_macros.html``), by the list rows (the template global ``warning_count``, added by
:func:`install`) and by :mod:`.liverows` (:func:`owner_of`: which row an Event changes).

**The timeline.** The Events about an object and about its children, newest first, each row naming the object it is
about (the object's own rows marked as such). Counts are collapsed as ``kubectl`` does: Events with the same involved
object, type, reason and message are one row (:func:`collapse`) with the summed count (core/v1 ``count``, or
events.k8s.io ``series.count``), the first and the last time seen. ``?events=Warning`` / ``Normal`` / ``All`` (the
default) filters the rows by type (:func:`chosen_type`; any other value is a 400 naming the parameter); the control
shows each type's count — summed counts, as the badge — Warnings first. The choice lives in the URL, so the region's
live refresh (:mod:`.livedetail`) asks for the same filter (:attr:`Timeline.path`).

**The badge.** :func:`warning_count`: the number of Warning Events (summed counts) about an object, one of the
children the API caches (:data:`backend.core.access.CHILDREN`) or one of their cached descendants the tree shows with
Pods — a Deployment's ReplicaSets and their Pods, a StatefulSet's Pods (:data:`DESCENDANTS`: a Pod's BackOff,
Unhealthy or FailedScheduling is what people most need to see) — each found by the controller-UID index, or labelled
with its Task UID. Per row it costs at most ``2 + len(CHILDREN) + 2c + 2r + p`` index lookups in the cache (``c``: the
object's cached children, at most one per child kind; ``r``: their ReplicaSets; ``p``: the Pods of those and of its
StatefulSet) — one Event lookup per object found, one descendants lookup per Deployment, ReplicaSet and StatefulSet —
and a pass over the Events found: never a list of all Events, or of all Pods. Objects the API does not cache (a
Darkroom's ConfigMap, a Postgresql's Secret; a volume claim, found by name on the detail page) are not counted: their
Warnings show on the timeline only.

**Live badges** (decision). A row is rendered once per change of its object and pushed to every tab
(:mod:`.liverows`); a Warning arriving changes no Darkroom. The smallest correct way: a list's stream also takes the
changes of *Warning* Events, and one whose involved object is a row's object, or a cached child or descendant of it
(its controller ownerReferences lead there: a Pod → its ReplicaSet → its Deployment → the Darkroom, at most three
steps along :data:`DESCENDANTS`), pushes that object's row again, rendered once per view as any change
(:func:`owner_of`: at most four lookups by key in the API's informer stores, no listing). Normal Events never
re-render a row. The alternatives cost more: a list refreshing itself on every Event (a list render per tab per
Event), or a row recomputed by polling.
A pushed row is rendered as the API (every tab gets the same bytes), so its count is only sent to people who may list
Events: a stream whose person may not list Events in its namespace (or everywhere, for an all-namespaces list: asked
once, when the stream opens) gets the rows without the badge and no Event-driven refreshes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from flask import Blueprint, g, request

from backend.api import actors
from backend.api.problems import Problem
from backend.core.access import CHILDREN, CONTROLLER_UID, INVOLVED_UID, TASK_UID, ClusterAccess
from backend.core.ordering import parse_time
from backend.dashboard import browsing
from cluster import DEPLOYMENTS, EVENTS, PODS, REPLICASETS, STATEFULSETS, Cache, FrozenDict, Resource
from cluster.acting import ActingClient

PARAM = "events"  # the query parameter of the filter
ALL, WARNING, NORMAL = "All", "Warning", "Normal"
CHOICES = (WARNING, ALL, NORMAL)  # the control's order: Warnings first
EMPTY = {ALL: "No events.", WARNING: "No warnings.", NORMAL: "No normal events."}
LABELS = {WARNING: "Warnings", ALL: "All", NORMAL: "Normal"}
MAX_ROWS = 100  # rows shown (the counts cover every Event)
WITHHELD = "darkroom_warnings_withheld"  # set by .liverows while it renders a row for streams that may not list Events
CHILD_KINDS = {resource.kind: resource for resource in CHILDREN}
#: The cached kinds whose Warnings count on their owner's badge besides its children, under the kind that controls
#: them: a Deployment's ReplicaSets, a ReplicaSet's Pods, a StatefulSet's Pods (the workloads of the resource tree).
DESCENDANTS: Mapping[Resource, Resource] = {DEPLOYMENTS: REPLICASETS, REPLICASETS: PODS, STATEFULSETS: PODS}
#: A descendant's kind → the kinds that may control it (the walk of :func:`owner_of`, :data:`DESCENDANTS` upwards).
CONTROLLED_BY: Mapping[str, frozenset[str]] = {
    kind: frozenset(owner.kind for owner, child in DESCENDANTS.items() if child.kind == kind)
    for kind in {r.kind for r in DESCENDANTS.values()}
}
STORED_KINDS = {**CHILD_KINDS, **{r.kind: r for r in DESCENDANTS.values()}}
NEVER = datetime.min.replace(tzinfo=UTC)  # an Event without a time sorts last


@dataclass(frozen=True)
class Row:
    """One collapsed row: the Events about one object with the same type, reason and message."""

    kind: str
    name: str
    own: bool  # about the page's object itself
    type: str
    reason: str
    message: str
    count: int
    first: str  # RFC 3339, as the cluster wrote it ("" when unknown)
    last: str


def occurrences(event: Mapping[str, Any]) -> int:
    """How many times ``event`` happened: core/v1 ``count``, else events.k8s.io ``series.count``, else once."""
    series = event.get("series") or {}
    return int(event.get("count") or series.get("count") or 1)


def first_seen(event: Mapping[str, Any]) -> str:
    return str(event.get("firstTimestamp") or event.get("eventTime") or "")


def last_seen(event: Mapping[str, Any]) -> str:
    series = event.get("series") or {}
    return str(event.get("lastTimestamp") or series.get("lastObservedTime") or event.get("eventTime") or event.get("firstTimestamp") or "")


def _moment(value: str) -> datetime:
    return parse_time(value) or NEVER


def collapse(events: Iterable[Mapping[str, Any]], *, own_uid: str) -> list[Row]:
    """``events`` as timeline rows, newest first: one row per involved object, type, reason and message, with the
    summed count, the earliest first and the latest last time seen. Rows last seen in the same second (core/v1 Event
    times are whole seconds) are ordered by reason, then message, both descending: an order that stays put, since the
    cache cannot tell which of them came later."""
    rows: dict[tuple[str, str, str, str], Row] = {}
    for e in events:
        involved = e.get("involvedObject") or {}
        key_object = str(involved.get("uid") or f"{involved.get('kind')}/{involved.get('name')}")
        row = Row(
            kind=str(involved.get("kind") or ""),
            name=str(involved.get("name") or ""),
            own=bool(own_uid) and involved.get("uid") == own_uid,
            type=str(e.get("type") or NORMAL),
            reason=str(e.get("reason") or ""),
            message=str(e.get("message") or ""),
            count=occurrences(e),
            first=first_seen(e),
            last=last_seen(e),
        )
        key = (key_object, row.type, row.reason, row.message)
        seen = rows.get(key)
        if seen is not None:
            firsts = [t for t in (seen.first, row.first) if t]
            last = max(seen.last, row.last, key=_moment)
            row = replace(seen, count=seen.count + row.count, first=min(firsts, key=_moment) if firsts else "", last=last)
        rows[key] = row
    return sorted(rows.values(), key=lambda r: (_moment(r.last), r.reason, r.message), reverse=True)


def counts(rows: Iterable[Row]) -> dict[str, int]:
    """The summed count of each choice of the filter (``All`` counts every type, also one neither Warning nor Normal)."""
    found = dict.fromkeys(CHOICES, 0)
    for row in rows:
        found[ALL] += row.count
        if row.type in found:
            found[row.type] += row.count
    return found


def shown(rows: Sequence[Row], chosen: str) -> list[Row]:
    """The rows of type ``chosen`` (all of them for ``All``)."""
    return list(rows) if chosen == ALL else [row for row in rows if row.type == chosen]


def parse_type(value: str | None) -> str:
    """The filter's choice from its query value (absent: ``All``); a Problem 400 naming the parameter otherwise."""
    if value is None:
        return ALL
    if value not in CHOICES:
        must = f"must be one of {', '.join(CHOICES)}"
        raise Problem(400, f"The query parameter {PARAM} {must} (not {value!r})", errors={PARAM: [must]})
    return value


def chosen_type() -> str:
    """The request's ``?events=`` (see :func:`parse_type`)."""
    return parse_type(request.args.get(PARAM))


@dataclass(frozen=True)
class Timeline:
    """What ``ui.timeline`` shows: the rows of the chosen type (at most :data:`MAX_ROWS`), every choice's count."""

    base: str  # the detail page's path
    chosen: str
    counts: dict[str, int]
    rows: list[Row]
    hidden: int  # rows of the chosen type beyond MAX_ROWS
    empty: str = field(default="")

    choices = CHOICES

    @staticmethod
    def label(choice: str) -> str:
        return LABELS[choice]

    def href(self, choice: str) -> str:
        """The detail page filtered to ``choice`` (``All``: no parameter)."""
        return browsing.with_query(self.base, **{PARAM: None if choice == ALL else choice})

    @property
    def path(self) -> str:
        """The page with the current choice (what the region's live refresh asks for)."""
        return self.href(self.chosen)


def page_path(section: str, namespace: str, name: str) -> str:
    """A detail page's path (``section``: darkrooms, postgresqls, tasks): the timeline's base."""
    return f"/ui/{section}/{quote(namespace, safe='')}/{quote(name, safe='')}"


def build(events: Iterable[Mapping[str, Any]], *, own_uid: str, base: str, chosen: str) -> Timeline:
    rows = collapse(events, own_uid=own_uid)
    matching = shown(rows, chosen)
    return Timeline(base, chosen, counts(rows), matching[:MAX_ROWS], max(0, len(matching) - MAX_ROWS), EMPTY[chosen])


def of_request(events: Iterable[Mapping[str, Any]], *, own_uid: str, base: str) -> Timeline:
    """The timeline of a detail page at ``base`` for this request's ``?events=``."""
    return build(events, own_uid=own_uid, base=base, chosen=chosen_type())


def related_events(client: ActingClient, uid: str, children_uids: Iterable[str] = ()) -> list[FrozenDict]:
    """The Events about the object with ``uid`` (or labelled with it as a Task's) and about ``children_uids``, each
    once, from the events informer's indexes as the person may list them."""
    found: dict[str, FrozenDict] = {}
    lookups = [(TASK_UID, uid), *((INVOLVED_UID, one) for one in (uid, *children_uids))]
    for index, value in lookups:
        if value:
            found.update((str(e["metadata"].get("uid")), e) for e in client.by_index(EVENTS, index, value))
    return list(found.values())


def descendant_uids(client: ActingClient, uid: str) -> list[str]:
    """The UIDs of the cached children of the object with ``uid`` and of their cached descendants
    (:data:`DESCENDANTS`), each found by one lookup in the controller-UID index, as the person may list them."""
    found: list[str] = []
    pending = [(resource, child) for resource in CHILDREN for child in client.by_index(resource, CONTROLLER_UID, uid)]
    while pending:
        resource, obj = pending.pop()
        own = str(obj["metadata"]["uid"])
        found.append(own)
        below = DESCENDANTS.get(resource)
        if below is not None:
            pending += [(below, child) for child in client.by_index(below, CONTROLLER_UID, own)]
    return found


def warning_count(client: ActingClient, uid: str) -> int:
    """The summed count of the Warning Events about the object with ``uid``, one of its cached children or one of
    their cached ReplicaSets and Pods (the cost per row: the module docstring)."""
    if not uid:
        return 0
    return sum(occurrences(e) for e in related_events(client, uid, descendant_uids(client, uid)) if e.get("type") == WARNING)


def _controller(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return next((r for r in refs if r.get("controller")), None)


def owner_of(event: Mapping[str, Any], resource: Resource, cache: Cache) -> FrozenDict | None:
    """The object of ``resource`` (one of ours) that a *Warning* Event is about — directly, through a cached child it
    controls, or through a cached ReplicaSet or Pod under such a child (controller references up :data:`DESCENDANTS`)
    — from the API's informer stores (as the API: for one render every tab shares); None otherwise."""
    if event.get("type") != WARNING:
        return None
    involved = event.get("involvedObject") or {}
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    if involved.get("namespace", namespace) != namespace:  # kube keeps an Event with its object; a stray one changes no row
        return None
    kind, name, uid = str(involved.get("kind") or ""), str(involved.get("name") or ""), involved.get("uid")
    while kind != resource.kind:  # up: Pod → ReplicaSet → Deployment → the row's object, each step a lookup by key
        stored_resource = STORED_KINDS.get(kind)
        obj = _stored(cache, stored_resource, namespace, name) if stored_resource is not None else None
        if obj is None or (uid and obj["metadata"].get("uid") != uid):  # not cached, or an Event of an earlier namesake
            return None
        ref = _controller(obj)
        owners = {resource.kind} if kind in CHILD_KINDS else CONTROLLED_BY.get(kind, frozenset())
        if ref is None or ref.get("kind") not in owners:
            return None
        kind, name, uid = str(ref.get("kind")), str(ref.get("name") or ""), ref.get("uid")
    owner = _stored(cache, resource, namespace, name)
    return owner if owner is not None and owner["metadata"].get("uid") == uid else None


def _stored(cache: Cache, resource: Resource, namespace: str, name: str) -> FrozenDict | None:
    informer = cache.informer(resource)
    return informer.store.get(f"{namespace}/{name}") if informer is not None else None


def withhold() -> None:
    """Mark this (application) context as rendering rows for people who may not list Events: no badge."""
    setattr(g, WITHHELD, True)


def install(blueprint: Blueprint, *, access: ClusterAccess) -> None:
    """Add ``warning_count(obj)`` (a friendly object: its ``uid``) to every template: as the request's person, or as the
    API in a row rendered for every tab (0 when :func:`withhold` was called)."""

    def count(obj: Mapping[str, Any]) -> int:
        if g.get(WITHHELD):
            return 0
        return warning_count(access.acting_as(actors.current()), str(obj.get("uid") or ""))

    blueprint.add_app_template_global(count, "warning_count")
