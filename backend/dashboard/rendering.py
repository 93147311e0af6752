"""Rendering of dashboard pages and fragments from one template, plus the template filters they share.

Called by the page modules (:mod:`.darkroompages`, :mod:`.taskpages`). A page template extends
``base.html`` and marks each fragment as a block; :func:`page` renders the whole page,
:func:`block` one block with the same context (an htmx swap, a live row refresh), so the markup
of a row is the same whether it arrived with the page, after a filter change or after a change
pushed over SSE. :func:`fragment_wanted` says which block an htmx request targets;
:func:`page_or_block` renders accordingly. Jinja's
autoescape is on for every ``.html`` template: cluster-provided strings are rendered as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from flask import Blueprint, Response, current_app, g, request
from markupsafe import Markup, escape
from werkzeug.wrappers import Response as BaseResponse

from backend.api.watch.streams import Streams
from backend.core.kinds.registry import KINDS
from backend.core.ordering import parse_time
from backend.dashboard import returning
from backend.identity import callers
from backend.settings import ApiSettings
from kinds import darkrooms, tasks
from kinds.states import ConditionMeaning, State, Tone

HTML_HEADERS = {"Cache-Control": "no-store", "Vary": "HX-Request, HX-Target"}
# What each registered kind's states and conditions mean (words, tones): defined in kinds/, looked up here by kind name.
STATES: Mapping[str, Mapping[str, State]] = {kind.title: {s.key: s for s in kind.states} for kind in KINDS}
CONDITIONS: Mapping[str, Mapping[str, ConditionMeaning]] = {kind.title: kind.conditions for kind in KINDS}


@dataclass(frozen=True)
class NavLink:
    """One entry of the main navigation in ``base.html``: a list page a pages module declares, or the API docs."""

    href: str
    nav: str  # the ``nav`` a page renders with to mark this entry aria-current
    label: str = ""  # the text at every width
    wide: str = ""  # text only on wide screens (``span.label-wide``)
    narrow: str = ""  # text only on narrow screens (``span.label-narrow``)


def signed_in() -> dict[str, Any] | None:
    """Who the header says the pages are shown for: the person (with a logout), or the local mode (none on the login page)."""
    caller = callers.known()
    if caller is None:
        return None
    if caller.local:
        return {
            "name": "Local mode",
            "title": "One-person mode on this machine: acting as the kubeconfig's own identity",
            "can_log_out": False,
            "person": False,
        }
    how = {"oidc": "signed in through the identity provider", "token": "logged in with a Kubernetes token", "bearer": "a bearer token"}
    return {
        "name": caller.name,
        "title": f"{caller.name}, {how.get(caller.via, caller.via)}",
        "can_log_out": caller.session_id is not None,
        "person": True,
    }


def list_link(nav: Sequence[NavLink], path: str) -> NavLink:
    """The list page a dashboard path belongs to (``/ui/tasks/team-a/t1/edit`` → Tasks); the first list otherwise."""
    parts = path.split("/")
    segment = parts[2] if len(parts) > 2 and parts[1] == "ui" else ""
    for link in nav:
        if segment and segment in (link.nav, link.href.removeprefix("/ui/")):
            return link
    return nav[0]


def _context(extra: Mapping[str, Any]) -> dict[str, Any]:
    context = {"ui": current_app.jinja_env.get_template("_macros.html").module, "now": datetime.now(UTC), **extra}
    current_app.update_template_context(context)
    return context


def _response(text: str, status: int, headers: Mapping[str, str] | None) -> Response:
    return Response(text, status=status, mimetype="text/html", headers={**HTML_HEADERS, **(headers or {})})


def page(template: str, context: Mapping[str, Any], *, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return _response(current_app.jinja_env.get_template(template).render(_context(context)), status, headers)


def block_text(template: str, block_name: str, context: Mapping[str, Any]) -> str:
    """One block of ``template`` (needs an app context, not a request: live rows are rendered outside requests)."""
    compiled = current_app.jinja_env.get_template(template)
    return "".join(compiled.blocks[block_name](compiled.new_context(_context(context))))


def block(
    template: str, block_name: str, context: Mapping[str, Any], *, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return _response(block_text(template, block_name, context), status, headers)


def page_or_block(template: str, context: Mapping[str, Any], *, block_name: str, target: str, status: int = 200) -> Response:
    """The whole page, or only ``block_name`` when an htmx request swaps the element ``target``."""
    if fragment_wanted() == target:
        return block(template, block_name, context, status=status)
    return page(template, context, status=status)


def fragment_wanted() -> str | None:
    """The element id an htmx request swaps (None: render the full page, also for history restores)."""
    if not request.headers.get("HX-Request") or request.headers.get("HX-History-Restore-Request"):
        return None
    return request.headers.get("HX-Target") or None


def age(value: Any, now: datetime | None = None) -> str:
    """``2027-01-01T00:00:00Z`` → ``3d`` (kubectl style: s, m, h, d); ``-`` when unknown."""
    moment = parse_time(value)
    if moment is None:
        return "-"
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    if seconds < 0:
        return "in " + age_of(-seconds)
    return age_of(seconds)


def age_of(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit != "m" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


DURATION_UNITS = (("year", 365 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


DURATION_TEXT = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?\Z")


def seconds_of(value: Any) -> int | None:
    """Seconds of ``value``: a number of seconds (int or digits) or a duration text (``720h``, ``1h30m``, ``30d``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value >= 0 else None
    text = str(value).strip() if isinstance(value, str) else ""
    if text.isdigit():
        return int(text)
    match = DURATION_TEXT.match(text)
    if not text or match is None:
        return None
    days, hours, minutes, secs = (int(part or 0) for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + secs


def duration(value: Any) -> str:
    """A duration in words, largest unit that fits (``31536000`` → ``1 year``, ``2592000`` → ``30 days``,
    ``"720h"`` → ``30 days``); ``-`` when ``value`` is not a duration (see :func:`seconds_of`)."""
    seconds = seconds_of(value)
    if seconds is None:
        return "-"
    if seconds == 0:
        return "0 seconds"
    for unit, size in DURATION_UNITS:
        if seconds >= size:
            count = seconds // size
            return f"{count:,} {unit}{'' if count == 1 else 's'}"
    return "-"  # unreachable: a positive integer is at least one second


def utc_text(value: Any) -> str:
    moment = parse_time(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "-"


def iso_time(value: Any) -> str:
    """A timestamp as ``<time datetime>`` wants it (UTC, ``Z``); empty when unknown (the Age column ticks from it)."""
    moment = parse_time(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


def state_of(obj: Mapping[str, Any], kind: str) -> State:
    """The state of a friendly object of ``kind`` ("Darkroom", "Task"): its word and tone come from :mod:`kinds`."""
    status = obj.get("status") or {}
    return STATES[kind][status["state"]].because(str(status.get("stateMessage") or ""))


def breakable_host(host: str) -> Markup:
    """A host name that wraps only after its dots and hyphens (``<wbr>``), never inside a word (the domain links)."""
    return Markup("").join(Markup("{}<wbr>").format(part) if part[-1:] in ".-" else escape(part) for part in _HOST_PARTS.findall(host))


_HOST_PARTS = re.compile(r"[^.-]*[.-]|[^.-]+$")


def condition_tone(condition: Mapping[str, Any], kind: str) -> Tone:
    """The tone of one condition of ``kind``; a condition type the kind does not define is good when True."""
    meaning = CONDITIONS[kind].get(str(condition.get("type")), ConditionMeaning(str(condition.get("type")), otherwise="attention"))
    return meaning.tone(condition.get("status"), condition.get("reason"))


def install(blueprint: Blueprint, *, settings: ApiSettings, streams: Streams, nav: Sequence[NavLink]) -> None:
    """The filters and globals every template uses (the navigation ``nav_links`` among them), and the live cursor."""
    nav_links = tuple(nav)
    blueprint.add_app_template_filter(age, "age")
    blueprint.add_app_template_filter(utc_text, "utc")
    blueprint.add_app_template_filter(duration, "duration")
    blueprint.add_app_template_filter(iso_time, "iso_time")
    blueprint.add_app_template_filter(breakable_host, "breakable_host")
    blueprint.add_app_template_global(state_of, "state_of")
    blueprint.add_app_template_global(tasks.state, "task_state")  # of a Task or its CombinedTask (a stored object, not a friendly one)
    blueprint.add_app_template_global(condition_tone, "condition_tone")
    blueprint.add_app_template_global(darkrooms.domain_url, "domain_url")
    blueprint.add_app_template_global(returning.list_href, "list_href")
    blueprint.add_app_template_global(lambda: returning.REFRESH_HEADER, "refresh_header")
    blueprint.add_app_template_global(lambda path: list_link(nav_links, path), "way_back")

    @blueprint.before_request
    def _note_live_cursor() -> None:
        # The /watch position *before* the page reads the cache: the page's live connection resumes
        # from here, so a change made between this render and the SSE connect is still delivered
        # (e.g. the object of a "Terminating" row vanishing while the page loads).
        g.live_cursor = streams.broadcaster.last_id

    def _globals() -> dict[str, Any]:
        return {"signed_in": signed_in(), "live_cursor": g.get("live_cursor"), "nav_links": nav_links}

    blueprint.app_context_processor(_globals)


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


PAGE_RESPONSES: dict[str, Any] = {"200": _html("The page (or, for htmx, the fragment it targets)."), "404": _html("No such object.")}
WRITE_RESPONSES: dict[str, Any] = {
    "200": _html("htmx requests: an HX-Redirect to the next page, or the form again."),
    "303": {"description": "Done (plain form post): go to the next page."},
    "403": {
        "description": "No valid CSRF token (form field csrf_token or header X-CSRF-Token).",
        "content": {
            "text/html": {"schema": {"type": "string"}},
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}},
        },
    },
    "404": _html("No such object."),
    "409": _html("A conflict, explained in the form (the object changed, or the name is taken)."),
    "422": _html("The form again, with the errors next to the fields."),
}


REDIRECT_RESPONSES: dict[str, Any] = {
    "302": {"description": "Go to the list page (the same filters, the namespace in the URL among them)."},
    "200": _html("`new` in place of a namespace is the new-object form's own page."),
    "404": _html("No such page (the error page, with the way back to the list)."),
}


def document(view: Any, summary: str, methods: tuple[str, ...] = ("get",), *, responses: Mapping[str, Any] | None = None) -> None:
    """Describe a dashboard view in the OpenAPI document (``backend.api.openapi`` reads YAML after ``---`` in the docstring)."""
    operations = {
        method: {
            "tags": ["Dashboard (HTML)"],
            "summary": summary,
            "responses": dict(responses) if responses is not None else PAGE_RESPONSES if method == "get" else WRITE_RESPONSES,
        }
        for method in methods
    }
    view.__doc__ = f"{summary}\n---\n{yaml.safe_dump(operations, sort_keys=False)}"


ViewDecl = tuple[str, str, Callable[..., BaseResponse], tuple[str, ...], str]  # rule, endpoint, handler, methods, summary


def add_views(blueprint: Blueprint, views: Sequence[ViewDecl]) -> dict[str, Callable[..., BaseResponse]]:
    """Route each ``(rule, endpoint, handler, methods, summary)`` — the handler a closure over a page module's
    dependencies — through a view of its own, documented with :func:`document`; the views by endpoint."""
    added: dict[str, Callable[..., BaseResponse]] = {}
    for rule, endpoint, handler, methods, summary in views:

        def view(handler: Callable[..., BaseResponse] = handler, **arguments: str) -> BaseResponse:
            return handler(**arguments)

        view.__name__ = view.__qualname__ = endpoint
        document(view, summary, methods)
        blueprint.add_url_rule(rule, endpoint, view, methods=[m.upper() for m in methods])
        added[endpoint] = view
    return added
