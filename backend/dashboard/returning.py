"""Where the dashboard sends the user back to after a write: the list as they last had it, and its notice.

A list page remembers its query (namespace filter — also "All namespaces" —, name filter, sorting: every
argument but the page number and the one-off notice arguments) in a cookie per list, set by the
after-request hook :func:`install` adds for the paths given to it — not by the list's own live refreshes
(header :data:`REFRESH_HEADER`). :func:`list_url` is the list a create
or a delete redirects to: the remembered query plus the notice's argument (``created=<name>``, with
``in=<namespace>`` when the remembered list is not that namespace's); without a remembered list, the
object's namespace (as before lists were remembered). :func:`notice` reads those arguments back
("Darkroom ns/name created."). :func:`list_href` is the remembered list for links (a detail page's
breadcrumb). Called by :mod:`.editing` and the page modules.

A list's "New" link also says which list it was, as shown (``back=<list path and query>``, :func:`back_to`): the
create goes back to exactly that list (e.g. Tasks with events, all namespaces), whatever the cookies hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit

from flask import Blueprint, Response, request

COOKIE_PREFIX = "darkroom_list"
NOTICES = (
    ("created", "created"),
    ("deleted", "deleted"),
    ("terminating", "is being deleted"),
    ("finished", "marked finished"),
    ("saved", "saved"),
)
NOT_REMEMBERED = frozenset({"page", "in", *(key for key, _ in NOTICES)})
COOKIE_MAX = 1024  # a query longer than this is not remembered
# Sent by a list's own live refresh (_macros.html live_refresh): the page's old filters, no choice of the user's;
# such a refresh can answer after the user changed the filter, so it must not overwrite what they chose.
REFRESH_HEADER = "X-Dashboard-Refresh"


LIST_PATHS: set[str] = set()  # the list pages (install), the only places ``back`` may lead to


def back_to(value: str | None) -> str | None:
    """``value`` when it is one of the list pages with a query (a form's ``back``), else None (never another site)."""
    if not value or len(value) > COOKIE_MAX:
        return None
    parts = urlsplit(value)
    return value if not parts.scheme and not parts.netloc and parts.path in LIST_PATHS else None


def cookie_name(list_path: str) -> str:
    return f"{COOKIE_PREFIX}_{re.sub(r'[^a-z0-9]+', '_', list_path.lower()).strip('_') or 'root'}"


def remembered(list_path: str) -> list[tuple[str, str]] | None:
    """The query the user last had on that list (``[]``: all namespaces, no filter); None when unknown."""
    value = request.cookies.get(cookie_name(list_path))
    if value is None or len(value) > COOKIE_MAX:
        return None
    return [(k, v) for k, v in parse_qsl(value, keep_blank_values=False) if k not in NOT_REMEMBERED]


def list_href(list_path: str, namespace: str | None = None) -> str:
    """The list as the user last had it (else that of ``namespace``, else all)."""
    query = remembered(list_path)
    if query is None:
        query = [("namespace", namespace)] if namespace else []
    return list_path + ("?" + urlencode(query) if query else "")


def list_url(list_path: str, *, namespace: str, back: str | None = None, **notice: str) -> str:
    """Where a create or delete of an object in ``namespace`` goes: the list it came from (``back``, see :func:`back_to`),
    else the remembered list, with the notice."""
    came_from = back_to(back)
    if came_from is not None:
        parts = urlsplit(came_from)
        list_path = parts.path
        query: list[tuple[str, str]] | None = [(k, v) for k, v in parse_qsl(parts.query) if k not in NOT_REMEMBERED]
    else:
        query = remembered(list_path)
    if query is None:
        query = [("namespace", namespace)]
    elif dict(query).get("namespace") != namespace:
        query = [*query, ("in", namespace)]
    return list_path + "?" + urlencode([*query, *notice.items()])


def notice(title: str) -> str | None:
    """The notice a list or detail page shows for its one-off arguments (``created=name`` ...), else None."""
    args = request.args
    for key, text in NOTICES:
        if args.get(key):
            return f"{title} {args.get('in') or args.get('namespace', '')}/{args[key]} {text}."
    return None


def install(blueprint: Blueprint, list_paths: Iterable[str]) -> None:
    """Remember the query of each successful GET of one of ``list_paths`` (full page or htmx fragment)."""
    paths = frozenset(list_paths)
    LIST_PATHS.update(paths)

    @blueprint.after_request
    def _remember(response: Response) -> Response:
        if request.method == "GET" and request.path in paths and response.status_code == 200 and REFRESH_HEADER not in request.headers:
            query = urlencode([(k, v) for k, v in request.args.items(multi=True) if k not in NOT_REMEMBERED and v])
            if len(query) <= COOKIE_MAX:
                response.set_cookie(cookie_name(request.path), query, httponly=True, samesite="Strict", secure=request.is_secure, path="/")
        return response
