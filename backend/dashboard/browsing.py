"""List pages: filters and sort order kept in the URL, server-side paging, namespaces, redirects, and error pages.

Called by :mod:`.darkroompages`, :mod:`.taskpages` and :mod:`.pgpages`. Filters are ``?namespace=`` and
``?q=`` (a substring of the name); ``?sort=<key>`` (ascending) or ``?sort=-<key>`` (descending) orders by
one of the kind's sort keys (name, namespace, state, age, priority, deadline); the filter and the orders are the JSON
API's ``?q=&sort=`` (:mod:`backend.core.ordering`, applied by the kind's service). Pages are
``?page=N`` of :data:`PAGE_SIZE` objects from the informer cache, so a page of 1,000 Darkrooms renders
50 rows.

A list page is a browser's page, not an API: a ``sort`` key the kind lacks is dropped, a ``page`` that is no number is
the first, and a query parameter it does not know (one a link or a tool added) is ignored — the page still shows,
and the links it renders carry only the parameters above. The JSON API refuses unknown parameters instead
(:mod:`backend.api.parameters`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import Blueprint, Response, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from backend.api.problems import Problem, present_routing_errors, problem_of
from backend.core import listing
from backend.core.errors import Failure
from backend.core.ordering import Sort
from backend.core.services import KindService
from backend.dashboard import namespacepicker, rendering
from backend.dashboard.namespacepicker import Namespaces
from backend.identity.authenticating import login_url
from backend.identity.permissions import sentence
from cluster import ClusterError, Forbidden, FrozenDict

PAGE_SIZE = 50


@dataclass(frozen=True)
class Filters:
    namespace: str | None
    q: str
    page: int
    sort: str = ""  # "" (the cache's order: namespace, name), "<key>" or "-<key>"

    @classmethod
    def from_request(cls, sorts: Mapping[str, Sort] | None = None) -> Filters:
        """The request's filters; ``sort`` kept only when it names one of ``sorts``."""
        args = request.args
        try:
            page = max(1, int(args.get("page", "1")))
        except ValueError:
            page = 1
        sort = (args.get("sort") or "").strip()
        if sort.removeprefix("-") not in (sorts or {}):
            sort = ""
        return cls(namespace=(args.get("namespace") or "").strip() or None, q=(args.get("q") or "").strip()[:253], page=page, sort=sort)

    def query(self, **changes: Any) -> str:
        """The query string of these filters (with ``changes``), without empty values; ``?`` included when not empty."""
        values = {"namespace": self.namespace, "q": self.q or None, "sort": self.sort or None, "page": self.page if self.page > 1 else None}
        shown = {k: v for k, v in {**values, **changes}.items() if v not in (None, "", 1)}
        return "?" + urlencode(shown) if shown else ""

    @property
    def sort_key(self) -> str:
        return self.sort.removeprefix("-")

    @property
    def descending(self) -> bool:
        return self.sort.startswith("-")

    def aria_sort(self, key: str) -> str | None:
        """``aria-sort`` of the column of ``key``: only the sorted column has one."""
        if self.sort_key != key:
            return None
        return "descending" if self.descending else "ascending"

    def toggled(self, key: str) -> str:
        """The sort a click on the header of ``key`` asks for: ascending first, then the other way round."""
        return f"-{key}" if self.sort == key else key


@dataclass(frozen=True)
class Page:
    items: Sequence[FrozenDict]
    total: int  # objects matching the filters
    number: int
    count: int  # pages


def select(service: KindService, filters: Filters) -> Page:
    """The page of cached objects of the service's kind the filters select, in the order they ask for (the JSON API's
    ``?q=&sort=``: :meth:`backend.core.services.KindService.list`)."""
    query = listing.ListQuery(namespace=filters.namespace, label_selector=None, limit=None, after=None, q=filters.q, sort=filters.sort)
    objects = service.list(query)
    count = max(1, -(-len(objects) // PAGE_SIZE))
    number = min(filters.page, count)
    start = (number - 1) * PAGE_SIZE
    return Page(items=objects[start : start + PAGE_SIZE], total=len(objects), number=number, count=count)


def list_page(
    service: KindService,
    template: str,
    *,
    target: str,
    item: Callable[[FrozenDict], Mapping[str, Any]],
    notice: str | None,
    extra: Mapping[str, Any] | None = None,
) -> Response:
    """A list page of the cached objects the request's filters select, each shown as ``item(obj)`` (target: block ``list``);
    ``extra``: more of the template's context (the kind's bulk actions, :mod:`.bulk`)."""
    filters = Filters.from_request(service.kind.sorts)
    selected = select(service, filters)
    context = {
        "filters": filters,
        "page": selected,
        "items": [item(obj) for obj in selected.items],
        "namespaces": namespace_names(service),
        "notice": notice,
        "served_namespace": service.settings.namespace,
        **(extra or {}),
    }
    return rendering.page_or_block(template, context, block_name="list", target=target)


# Namespaces nobody should create Darkrooms, Tasks or Postgresqls in: Kubernetes' own, and the control panel's
# (deploy/base/namespace.yaml: its components; its login sessions, also DARKROOM_API_SESSION_NAMESPACE).
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "darkroom-system", "darkroom-sessions"})


def system_namespace(service: KindService, namespace: str) -> bool:
    """Is ``namespace`` one of :data:`SYSTEM_NAMESPACES` (or where the API keeps its sessions)? Never the one the API serves."""
    settings = service.settings
    return namespace != settings.namespace and (namespace in SYSTEM_NAMESPACES or namespace == settings.session_namespace)


def creatable_namespaces(service: KindService) -> Namespaces:
    """The namespaces a create form offers: :func:`namespace_names` without the system ones (lists still show them)."""
    names = namespace_names(service)
    return names.without(ns for ns in names if system_namespace(service, ns))


def namespace_names(service: KindService) -> Namespaces:
    """Namespaces to choose from: those the person may see (the served one only, when the API is limited to one), and
    how a page offers them (:mod:`.namespacepicker`)."""
    return namespacepicker.visible(service.client, service.settings)


def add_shortcuts(blueprint: Blueprint, href: str, *, title: str, trimmed: Sequence[str] = (), by_namespace: str | None = None) -> None:
    """Send URLs a person may type or trim to the list page at ``href`` (302, its filters kept): each of ``trimmed``
    (``/ui/darkrooms``: the list of the kind its detail pages are under), and ``<by_namespace>/<namespace>``
    (``/ui/tasks/team-a``: the list filtered to that namespace; the kind's ``new`` form keeps its own route)."""

    def to_list(namespace: str | None = None) -> BaseResponse:
        params = {name: request.args.get(name) for name in request.args}
        if namespace is not None:
            params["namespace"] = namespace
        return redirect(with_query(href, **params), 302)

    endpoint = "shortcut_" + (href.strip("/").replace("/", "_") or "home")
    for number, path in enumerate(trimmed):
        view = _shortcut(to_list, f"{endpoint}_{number}")
        rendering.document(view, f"The {title} list (this URL goes there)", responses=rendering.REDIRECT_RESPONSES)
        blueprint.add_url_rule(path, view.__name__, view, methods=["GET"])
    if by_namespace is not None:
        view = _shortcut(to_list, f"{endpoint}_namespace")
        rendering.document(view, f"The {title} list of one namespace (this URL goes there)", responses=rendering.REDIRECT_RESPONSES)
        blueprint.add_url_rule(f"{by_namespace}/<namespace>", view.__name__, view, methods=["GET"])


def _shortcut(to_list: Callable[..., BaseResponse], name: str) -> Callable[..., BaseResponse]:
    def view(**arguments: str) -> BaseResponse:
        return to_list(**arguments)

    view.__name__ = view.__qualname__ = name
    return view


def go(url: str) -> BaseResponse:
    """Navigate after a successful POST: 303 for a plain form, ``HX-Redirect`` for htmx."""
    if request.headers.get("HX-Request"):
        return Response("", status=200, headers={"HX-Redirect": url})
    return redirect(url, 303)


def with_query(path: str, **params: str | None) -> str:
    shown = {k: v for k, v in params.items() if v}
    return path + ("?" + urlencode(shown) if shown else "")


def refusal_of(error: Failure | ClusterError | Problem) -> Forbidden | None:
    """The cluster's refusal of a request made for the person (what they may not do is known), else None."""
    if isinstance(error, Forbidden) and error.user is not None and error.attributes is not None and error.status == 403:
        return error
    return None


def refusal_sentence(refused: Forbidden) -> str:
    """``You may not delete darkrooms "x" in namespace "team-b".`` (the person's own words for what was refused)."""
    assert refused.attributes is not None
    return sentence(refused.attributes.refused())


def problem_page(error: Failure | ClusterError | Problem) -> Response:
    """A failure while rendering a page, shown as an HTML page (or fragment for htmx: the flash shows it) with the status
    the JSON API would answer (:func:`backend.api.problems.problem_of`). A refusal by the cluster names what was refused
    and who was refused, and offers the way back to the list (every namespace the person may see)."""
    problem = problem_of(error)
    context: dict[str, Any] = {"status": problem.status, "title": problem.title, "detail": problem.detail or ""}
    refused = refusal_of(error)
    if refused is not None:
        assert refused.attributes is not None
        context.update(title="Not allowed", detail=refusal_sentence(refused), refused={"user": refused.user, **refused.attributes.fields()})
    elif problem.detail:
        context["detail"] = sentence(problem.detail)
    if rendering.fragment_wanted() or request.headers.get("HX-Request"):
        return rendering.block("error.html", "message", context, status=problem.status)
    return rendering.page("error.html", context, status=problem.status)


def install(blueprint: Blueprint) -> None:
    """Dashboard views answer every failure they let through as HTML (:func:`problem_page`), never problem+json: a refusal
    by the cluster, a domain error, a problem raised by a view (a browser asked; the JSON API keeps problem+json). So
    does any request no view took, anywhere — an unknown URL (404), a method the URL does not take (405) — when a
    browser asks (:func:`routing_page`); every other client keeps problem+json."""
    blueprint.record_once(lambda setup: present_routing_errors(setup.app, routing_page))

    @blueprint.errorhandler(ClusterError)
    def _cluster(error: ClusterError) -> BaseResponse:
        return _html_or_problem(error)

    @blueprint.errorhandler(Failure)
    def _failure(error: Failure) -> BaseResponse:
        return _html_or_problem(error)

    @blueprint.errorhandler(Problem)
    def _problem(error: Problem) -> BaseResponse:
        return _html_or_problem(error)


def routing_page(problem: Problem) -> Response | None:
    """The error page of a request no view took, for a browser (a page, or the message for htmx), with the problem's
    status and headers (``Allow`` of a 405) and the way back to the list of the path's kind (or the landing page);
    None for any other client (problem+json)."""
    if not _wants_html():
        return None
    page = problem_page(problem)
    for name, value in problem.headers.items():
        page.headers.setdefault(name, value)
    return page


def _html_or_problem(error: Failure | ClusterError | Problem) -> BaseResponse:
    if not _wants_html():
        return problem_of(error).response()
    if problem_of(error).status == 401:
        return _to_login()
    response: BaseResponse = problem_page(error)
    for name, value in problem_of(error).headers.items():
        response.headers.setdefault(name, value)
    return response


def _to_login() -> BaseResponse:
    """Credentials no longer accepted (the session ended, the cluster refuses the token): back to the login, then here."""
    if request.headers.get("HX-Request"):
        current = urlsplit(request.headers.get("HX-Current-URL", "/"))
        back = current.path + (f"?{current.query}" if current.query else "")
        return Response("", status=401, headers={"HX-Redirect": login_url(back)})
    return redirect(login_url(request.full_path.rstrip("?") if request.method == "GET" else "/"), 303)


def _wants_html() -> bool:
    """A browser's page or an htmx swap (an EventSource or a script asking for JSON gets problem+json)."""
    if request.headers.get("HX-Request"):
        return True
    best = request.accept_mimetypes.best_match(["application/json", "application/problem+json", "text/event-stream", "text/html"])
    return best == "text/html"
