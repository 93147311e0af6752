"""List pages: filters kept in the URL, server-side paging, namespaces, redirects, and error pages.

Called by :mod:`.darkroompages` and :mod:`.taskpages`. Filters are ``?namespace=`` and ``?q=``
(a substring of the name); pages are ``?page=N`` of :data:`PAGE_SIZE` objects from the informer
cache (already sorted by namespace, then name), so a page of 1,000 Darkrooms renders 50 rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flask import Response, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from backend import endpoints, listing, state
from backend.dashboard import rendering
from backend.problems import Problem
from cluster import NAMESPACES, ClusterError, FrozenDict, Resource

PAGE_SIZE = 50


@dataclass(frozen=True)
class Filters:
    namespace: str | None
    q: str
    page: int

    @classmethod
    def from_request(cls) -> Filters:
        args = request.args
        try:
            page = max(1, int(args.get("page", "1")))
        except ValueError:
            page = 1
        return cls(namespace=(args.get("namespace") or "").strip() or None, q=(args.get("q") or "").strip()[:253], page=page)

    def query(self, **changes: Any) -> str:
        """The query string of these filters (with ``changes``), without empty values; ``?`` included when not empty."""
        values = {"namespace": self.namespace, "q": self.q or None, "page": self.page if self.page > 1 else None, **changes}
        shown = {k: v for k, v in values.items() if v not in (None, "", 1)}
        return "?" + urlencode(shown) if shown else ""


@dataclass(frozen=True)
class Page:
    items: Sequence[FrozenDict]
    total: int  # objects matching the filters
    number: int
    count: int  # pages


def select(resource: Resource, filters: Filters) -> Page:
    """The page of cached objects the filters select."""
    query = listing.ListQuery(namespace=filters.namespace, label_selector=None, limit=None, after=None)
    objects = endpoints.cached_list(resource, query)
    if filters.q:
        needle = filters.q.lower()
        objects = [o for o in objects if needle in o["metadata"]["name"]]
    count = max(1, -(-len(objects) // PAGE_SIZE))
    number = min(filters.page, count)
    start = (number - 1) * PAGE_SIZE
    return Page(items=objects[start : start + PAGE_SIZE], total=len(objects), number=number, count=count)


def list_page(
    resource: Resource, template: str, *, target: str, item: Callable[[FrozenDict], Mapping[str, Any]], notice: str | None
) -> Response:
    """A list page of the cached objects the request's filters select, each shown as ``item(obj)`` (target: block ``list``)."""
    filters = Filters.from_request()
    selected = select(resource, filters)
    context = {
        "filters": filters,
        "page": selected,
        "items": [item(obj) for obj in selected.items],
        "namespaces": namespace_names(),
        "notice": notice,
        "served_namespace": state.current().settings.namespace,
    }
    return rendering.page_or_block(template, context, block_name="list", target=target)


def namespace_names() -> list[str]:
    """Namespaces to choose from (the served one only, when the API is limited to one)."""
    served = state.current().settings.namespace
    if served:
        return [served]
    try:
        return [ns["metadata"]["name"] for ns in state.current().access.client.list(NAMESPACES)]
    except ClusterError:
        return []


def go(url: str) -> BaseResponse:
    """Navigate after a successful POST: 303 for a plain form, ``HX-Redirect`` for htmx."""
    if request.headers.get("HX-Request"):
        return Response("", status=200, headers={"HX-Redirect": url})
    return redirect(url, 303)


def with_query(path: str, **params: str | None) -> str:
    shown = {k: v for k, v in params.items() if v}
    return path + ("?" + urlencode(shown) if shown else "")


def problem_page(problem: Problem) -> Response:
    """A Problem raised while rendering a page, shown as an HTML page (or fragment for htmx)."""
    context: Mapping[str, Any] = {"status": problem.status, "title": problem.title, "detail": problem.detail or ""}
    if rendering.fragment_wanted():
        return rendering.block("error.html", "message", context, status=problem.status)
    return rendering.page("error.html", context, status=problem.status)
