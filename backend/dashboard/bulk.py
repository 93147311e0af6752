"""Bulk actions on a list page's selection: Delete (every kind), Scale to N (Darkrooms), Mark finished (Tasks).

Installed by each kind's pages module (:func:`install`, with its :class:`Bulk`: which actions, where its list is).
Routes, per kind (``<base>``: ``/ui/darkrooms``, ``/ui/tasks``, ``/ui/postgresqls``):

- ``POST <base>/bulk/confirm`` — the confirmation: how many objects and which (names, a long list cut short with
  "and 12 more"), what goes with them (:func:`.consequences.of_many`), and the form that runs it. An htmx request gets
  block ``confirm`` of ``bulk.html`` (the list page's modal dialog shows it); a plain form post the page.
- ``POST <base>/bulk`` — the run: each object written separately, in order, through :mod:`.actions` and the kind's
  service, as the person (never the panel's own account); each with its uid as a precondition (a delete of an object
  that was replaced under the same name fails with 409 and leaves the new one alone; a patch is conditioned on the
  object whose uid it checked). One object's failure never stops the others. The answer is the result table (block
  ``results``, or the page): per object done, or failed with the status and the reason (403 with the person's own
  words for what was refused, 404 already gone, 409 replaced…).

Form fields (nothing else is accepted: an unknown field is a 400 naming it): ``action`` (one of the kind's),
``item`` (repeated: ``<namespace>/<name>/<uid>``, a row's checkbox) or ``match=all`` with the list's filters
``namespace``, ``q``, ``sort`` (every object that matches them *when the action runs*: listed again, as the person,
at the confirmation and again at the run, each written with the uid it has then), ``replicas`` (scale only: a whole
number from 0 to the kind's maximum, at the run; 422 naming it otherwise), and the CSRF token (:mod:`.protection`).
Bad input writes nothing: an empty selection, a malformed item, more than :data:`MAX_OBJECTS` objects (400), an item
the confirmation cannot find as selected (gone, replaced or not visible to the person: 400 naming it — the list is
stale; at the run, such an object is that object's 404 or 409 instead, as it may go between the two steps).

**One POST that answers with the result table, not a stream of progress** — decided for: it works without
JavaScript (both steps are plain forms), needs no job state kept between requests (any replica of the panel answers
any request), and leaves nothing half-reported when the connection drops (the table is the one answer). The cost is
no per-object progress while it runs: the dialog says what is being done ("Deleting 3 Darkrooms…") until the table
comes, and :data:`MAX_OBJECTS` per request keeps that wait short (a larger filter must be narrowed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.datastructures import MultiDict

from backend.api.problems import Problem, problem_of
from backend.core import listing
from backend.core.errors import Failure
from backend.core.services import KindService
from backend.dashboard import actions, browsing, consequences, rendering
from cluster import ClusterError

TEMPLATE = "bulk.html"
MAX_OBJECTS = 500  # per request: the run answers when every write is done
SHOWN_NAMES = 10  # names listed in a confirmation; "and N more" for the rest
CONFIRM_TARGET = "bulk-confirm"
RESULTS_TARGET = "bulk-results"
# <namespace>/<name>/<uid>: a DNS label, a DNS subdomain, a UID
ITEM = re.compile(
    r"(?P<namespace>[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/(?P<name>[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)/(?P<uid>[0-9a-f-]{1,64})"
)
FIELDS = frozenset({"action", "item", "match", "namespace", "q", "sort", "replicas", "csrf_token"})


@dataclass(frozen=True)
class Action:
    """One bulk action: its words and its write of one object (``value``: the scale's replicas, else None)."""

    key: str  # the form's ``action``
    label: str  # its button: "Delete", "Scale", "Mark finished"
    doing: str  # "Deleting"
    done: str  # "deleted"
    write: Callable[[KindService, str, str, str, int | None], str | None]  # → a remark on success ("terminating")
    needs_replicas: bool = False


def _delete(service: KindService, namespace: str, name: str, uid: str, _value: int | None) -> str | None:
    return "deletion requested: finalizers still hold it" if actions.delete(service, namespace, name, uid=uid) else None


def patching(patch: Callable[[int | None], Mapping[str, Any]]) -> Callable[[KindService, str, str, str, int | None], str | None]:
    """The write of an action that applies ``patch(value)`` to exactly the object with the uid."""

    def write(service: KindService, namespace: str, name: str, uid: str, value: int | None) -> str | None:
        actions.change(service, namespace, name, patch(value), uid=uid)
        return None

    return write


DELETE = Action("delete", "Delete", "Deleting", "deleted", _delete)


@dataclass(frozen=True)
class Bulk:
    """A list page's bulk actions: its list's path (the way back), its detail pages' base and its actions."""

    list_path: str
    base: str  # "/ui/darkrooms": the routes are <base>/bulk and <base>/bulk/confirm
    actions: tuple[Action, ...]
    max_replicas: int = 0  # the scale action's maximum
    replicas_hint: str = ""  # what a replicas value that is not one says

    def action(self, key: str) -> Action:
        found = next((a for a in self.actions if a.key == key), None)
        if found is None:
            keys = ", ".join(a.key for a in self.actions)
            raise Problem(400, f"action: one of {keys}", errors={"action": [f"one of {keys}"]})
        return found


@dataclass(frozen=True)
class Target:
    namespace: str
    name: str
    uid: str

    @property
    def value(self) -> str:
        return f"{self.namespace}/{self.name}/{self.uid}"


@dataclass
class Outcome:
    target: Target
    status: int  # 200 done; else the failure's
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status < 300


@dataclass
class Selection:
    """What a request selected: its action and objects (``matching``: those of the list's filters)."""

    action: Action
    targets: list[Target]
    objects: list[Mapping[str, Any]] = field(default_factory=list)  # friendly, for the confirmation's texts
    matching: bool = False
    filters: browsing.Filters | None = None


def _bad(name: str, message: str, status: int = 400) -> Problem:
    return Problem(status, f"{name}: {message}", errors={name: [message]})


def _form() -> MultiDict[str, str]:
    form = request.form
    unknown = sorted(set(form) - FIELDS)
    if unknown:
        raise _bad(unknown[0], "not a field of a bulk action")
    return form


def _filters(service: KindService, form: MultiDict[str, str]) -> browsing.Filters:
    sort = (form.get("sort") or "").strip()
    if sort and sort.removeprefix("-") not in service.kind.sorts:
        raise _bad("sort", f"one of {', '.join(service.kind.sorts)}, or one of them after -")
    namespace = (form.get("namespace") or "").strip() or None
    return browsing.Filters(namespace=namespace, q=(form.get("q") or "").strip()[:253], page=1, sort=sort)


def _matching(service: KindService, filters: browsing.Filters) -> list[Mapping[str, Any]]:
    query = listing.ListQuery(namespace=filters.namespace, label_selector=None, limit=None, after=None, q=filters.q, sort=filters.sort)
    found = service.list(query)
    if len(found) > MAX_OBJECTS:
        raise _bad("match", f"the filter matches {len(found):,} objects; at most {MAX_OBJECTS} at once: narrow the filter")
    return list(found)


def _targets(form: MultiDict[str, str]) -> list[Target]:
    values = form.getlist("item")
    if not values:
        raise _bad("item", "select at least one object")
    if len(values) > MAX_OBJECTS:
        raise _bad("item", f"{len(values):,} objects selected; at most {MAX_OBJECTS} at once")
    targets: list[Target] = []
    for value in values:
        found = ITEM.fullmatch(value)
        if found is None:
            raise _bad("item", f"{value[:300]!r} is not <namespace>/<name>/<uid>")
        target = Target(found["namespace"], found["name"], found["uid"])
        if target not in targets:
            targets.append(target)
    return targets


def select(service: KindService, bulk: Bulk, *, confirming: bool) -> Selection:
    """The request's selection, checked (:class:`Problem` naming the field otherwise). ``confirming``: the objects are
    looked up as the person (an item not found as selected is refused); at the run they are not (each write says)."""
    form = _form()
    action = bulk.action(form.get("action") or "")
    match = form.get("match") or ""
    if match not in ("", "all"):
        raise _bad("match", "all, or nothing")
    if match == "all":
        if "item" in form:
            raise _bad("item", "not with match=all (the filter selects)")
        filters = _filters(service, form)
        objects = _matching(service, filters)
        if not objects:
            raise _bad("match", "nothing matches the filter")
        targets = [Target(o["metadata"]["namespace"], o["metadata"]["name"], o["metadata"]["uid"]) for o in objects]
        return Selection(action, targets, [service.friendly(o) for o in objects], matching=True, filters=filters)
    targets = _targets(form)
    selection = Selection(action, targets)
    if confirming:
        selection.objects = [_found(service, target) for target in targets]
    return selection


def _found(service: KindService, target: Target) -> Mapping[str, Any]:
    try:
        obj = service.fetch(target.namespace, target.name)
    except (Failure, ClusterError):
        obj = None
    if obj is None or obj["metadata"].get("uid") != target.uid:
        why = "deleted, replaced or not visible to you"
        raise _bad("item", f"{target.namespace}/{target.name}: no such {service.title} as selected ({why}): reload the list")
    return service.friendly(obj)


def replicas(bulk: Bulk) -> int:
    text = (request.form.get("replicas") or "").strip()
    if not re.fullmatch(r"[0-9]{1,4}", text) or int(text) > bulk.max_replicas:
        raise _bad("replicas", bulk.replicas_hint, status=422)
    return int(text)


def run_one(service: KindService, action: Action, target: Target, value: int | None) -> Outcome:
    """Write one object; its outcome (never raises for the cluster's or the core's refusal)."""
    try:
        remark = action.write(service, target.namespace, target.name, target.uid, value)
    except (Failure, ClusterError) as error:
        refused = browsing.refusal_of(error)
        if refused is not None:
            return Outcome(target, 403, browsing.refusal_sentence(refused))
        problem = problem_of(error)
        messages = [m for ms in problem.errors.values() for m in ms]
        return Outcome(target, problem.status, "; ".join([problem.detail or problem.title, *messages]))
    return Outcome(target, 200, remark or "")


def names(targets: Sequence[Target]) -> tuple[list[str], int]:
    """The names a confirmation lists, and how many more there are."""
    shown = [f"{t.namespace}/{t.name}" for t in targets[:SHOWN_NAMES]]
    return shown, max(0, len(targets) - SHOWN_NAMES)


@dataclass(frozen=True)
class BulkPages:
    """The bulk views of one kind's list."""

    service: KindService
    bulk: Bulk

    def _answer(self, block_name: str, target: str, status: int = 200, **extra: Any) -> Response:
        htmx = bool(request.headers.get("HX-Request"))
        context = {"kind": self.service.title, "bulk": self.bulk, "base": self.bulk.base, "list_path": self.bulk.list_path, **extra}
        context["htmx"] = htmx
        if htmx:  # the dialog or the results region, whichever the answer belongs in
            swap = {"HX-Retarget": f"#{target}", "HX-Reswap": "innerHTML" if target == RESULTS_TARGET else "outerHTML"}
            return rendering.block(TEMPLATE, block_name, context, status=status, headers=swap)
        return rendering.page(TEMPLATE, context, status=status)

    def _confirmation(self, selection: Selection, status: int = 200, **extra: Any) -> Response:
        shown, more = names(selection.targets)
        note = consequences.of_many(self.service.title, selection.objects) if selection.action is DELETE and selection.objects else ""
        replicas_text = (request.form.get("replicas") or "").strip()[:10]
        context = {"selection": selection, "shown": shown, "more": more, "note": note, "replicas_text": replicas_text, **extra}
        return self._answer("confirm", CONFIRM_TARGET, status, **context)

    def confirm(self) -> Response:
        try:
            selection = select(self.service, self.bulk, confirming=True)
        except Problem as problem:
            return self._answer("confirm", CONFIRM_TARGET, problem.status, problem=problem)
        return self._confirmation(selection)

    def run(self) -> Response:
        try:
            selection = select(self.service, self.bulk, confirming=False)
            if not selection.action.needs_replicas and request.form.get("replicas"):
                raise _bad("replicas", f"only with action scale, not {selection.action.key}")
        except Problem as problem:
            return self._answer("confirm", CONFIRM_TARGET, problem.status, problem=problem)
        try:
            value = replicas(self.bulk) if selection.action.needs_replicas else None
        except Problem as problem:  # the confirmation again, the error next to the field
            return self._confirmation(selection, problem.status, problem_replicas=problem.errors["replicas"][0])
        outcomes = [run_one(self.service, selection.action, target, value) for target in selection.targets]
        return self._answer("results", RESULTS_TARGET, selection=selection, outcomes=outcomes, value=value)


def install(blueprint: Blueprint, service: KindService, bulk: Bulk, *, endpoint: str) -> None:
    """Add ``<base>/bulk/confirm`` and ``<base>/bulk`` for the kind of ``service`` (endpoints ``<endpoint>_bulk...``)."""
    pages = BulkPages(service, bulk)
    title = service.title
    views: tuple[rendering.ViewDecl, ...] = (
        (f"{bulk.base}/bulk/confirm", f"{endpoint}_bulk_confirm", pages.confirm, ("post",), f"Confirm a bulk action on {title}s"),
        (f"{bulk.base}/bulk", f"{endpoint}_bulk", pages.run, ("post",), f"Run a bulk action on {title}s: the result per object"),
    )
    rendering.add_views(blueprint, views)
