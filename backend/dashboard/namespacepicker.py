"""The namespace picker of the list filters and the create forms: a select while namespaces are few, a typeahead when many.

**Decision.** Up to ``settings.namespace_choices_max`` namespaces (500 unless set) a ``<select>`` offers them all:
every choice one click away, and the create form marks those the person may not create in. Clusters with one
namespace per team or tenant have thousands; 20,000 options would be about a megabyte in every list page and a
select nobody can scroll. Above the limit the picker is a text input with a ``<datalist>`` of the first
:data:`SUGGESTIONS` matching names, which the input asks ``GET /ui/namespaces?namespace=<typed>`` for as the person
types (htmx, 200 ms after the last key): the page carries at most :data:`SUGGESTIONS` names whatever the count, the
browser shows them under the input, and any name can still be typed (a list filtered by a namespace with nothing
in it is empty; a create form's namespace is checked by the server as before).

**Matching** (:meth:`Namespaces.suggestions`): names that start with the typed text first, then names that contain
it, each group in name order; case-insensitive (namespace names are lower case anyway).

**Who sees which namespaces.** A person who may list namespaces, or one of our kinds everywhere, sees every one. For
anyone else the cluster is asked per namespace (``get`` it, or ``list`` one of our kinds in it: an access review each,
cached) — fine for a select's few hundred, not for 20,000 on every page. Above the limit such a person's picker holds
every served namespace *unasked*, and a name is asked about only when it would be suggested: at most
:data:`SUGGESTION_ASKS_MAX` candidates per list, in the matching order, keeping those the person may see (a name they
may not see is never shown; one whose review fails neither). Typing more of a name finds the rest.

**Permissions at that scale.** A select marks each namespace the person may not create in (one access review per
namespace, cached). A typeahead asks only for the suggestions it shows (``?create=<Kind>``: at most
:data:`SUGGESTIONS` reviews per keystroke) and for the form's current namespace; "may create anywhere" (the New
buttons) asks at most :data:`backend.identity.permissions.ANYWHERE_ASKS_MAX` namespaces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import chain, islice

from flask import Blueprint, Response, render_template, request

from backend.core.kinds.registry import KINDS
from backend.core.services import Services, sees_every_namespace, sees_namespace, served_namespaces, visible_namespaces
from backend.dashboard import allowing, rendering
from backend.settings import ApiSettings
from cluster import ClusterError
from cluster.acting import ActingClient

SUGGESTIONS = 20  # names a typeahead's datalist holds at a time
SUGGESTION_ASKS_MAX = 60  # namespaces asked about per suggestion list, for a person who may not list namespaces
OPTIONS_URL = "/ui/namespaces"
OPTIONS_TEMPLATE = "_namespace_options.html"
RESOURCES = tuple(kind.resource for kind in KINDS)
CREATABLE = {kind.title: kind.resource for kind in KINDS}  # ?create=<Kind>
OPTIONS_RESPONSES = {"200": {"description": "The <option> elements.", "content": {"text/html": {"schema": {"type": "string"}}}}}


class Namespaces(tuple[str, ...]):
    """The namespaces a person may choose from, in name order, and how a page offers them (``limit``: the most a
    select lists, ``settings.namespace_choices_max``). ``sees``: set when the names are every namespace this API serves
    rather than the person's (too many to ask about one by one): a suggestion is shown only when ``sees`` says so."""

    limit: int
    sees: Callable[[str], bool] | None

    def __new__(cls, names: Iterable[str], limit: int, sees: Callable[[str], bool] | None = None) -> Namespaces:
        chosen = super().__new__(cls, names)
        chosen.limit = limit
        chosen.sees = sees
        return chosen

    @property
    def typeahead(self) -> bool:
        """Too many for a select: a text input with suggestions."""
        return len(self) > self.limit

    def suggestions(self, typed: str | None = "") -> tuple[str, ...]:
        """The first :data:`SUGGESTIONS` names matching ``typed`` (the module docstring's order; nothing typed: the
        first), of those the person may see (at most :data:`SUGGESTION_ASKS_MAX` asked, when :attr:`sees` is set)."""
        typed = (typed or "").strip().lower()
        prefixed = (ns for ns in self if ns.startswith(typed))
        containing = (ns for ns in self if typed and typed in ns[1:] and not ns.startswith(typed))
        candidates: Iterator[str] = chain(prefixed, containing)
        if self.sees is not None:
            candidates = filter(self.sees, islice(candidates, SUGGESTION_ASKS_MAX))
        return tuple(islice(candidates, SUGGESTIONS))

    def without(self, dropped: Iterable[str]) -> Namespaces:
        """These namespaces but ``dropped`` (the system ones, for a create form)."""
        gone = set(dropped)
        return Namespaces((ns for ns in self if ns not in gone), self.limit, self.sees)


def visible(client: ActingClient, settings: ApiSettings) -> Namespaces:
    """The namespaces ``client``'s person may see (the served one only, when the API is limited to one); none when
    the cluster cannot say. Above the limit, for a person who may not list namespaces (nor one of our kinds
    everywhere), every served namespace, each asked about only when it would be suggested (the module docstring)."""
    limit = settings.namespace_choices_max
    if settings.namespace:
        return Namespaces((settings.namespace,), limit)
    try:
        every = served_namespaces(client, settings)
        if len(every) > limit and not sees_every_namespace(client, RESOURCES):
            return Namespaces((ns["metadata"]["name"] for ns in every), limit, partial(_sees, client))
        names = [ns["metadata"]["name"] for ns in visible_namespaces(client, settings, RESOURCES)]
    except ClusterError:
        names = []
    return Namespaces(names, limit)


def _sees(client: ActingClient, namespace: str) -> bool:
    try:
        return sees_namespace(client, RESOURCES, namespace)
    except ClusterError:  # not asked: not suggested (a name the person may not see is never shown)
        return False


def install(blueprint: Blueprint, services: Services) -> None:
    """Add ``GET /ui/namespaces``: a typeahead's suggestions as ``<option>`` elements."""

    def namespace_options() -> Response:
        chosen = visible(services.client, services.settings)
        shown = chosen.suggestions(request.args.get("namespace", ""))
        kind = request.args.get("create", "")
        asked = allowing.current()
        refused: dict[str, str] = {}
        resource = CREATABLE.get(kind)
        if resource is not None and asked is not None:
            refused = {ns: answer.reason for ns in shown if not (answer := asked.may("create", resource, ns))}
        body = render_template(OPTIONS_TEMPLATE, names=shown, refused=refused)
        return Response(body, mimetype="text/html")

    summary = (
        "The namespaces a typeahead suggests (the list filter and the create forms above NAMESPACE_CHOICES_MAX"
        " namespaces): at most 20 <option> elements matching ?namespace= (prefix first), those the person may not"
        " create a ?create=<Kind> in labelled so"
    )
    rendering.document(namespace_options, summary, responses=OPTIONS_RESPONSES)
    blueprint.add_url_rule(OPTIONS_URL, "namespace_options", namespace_options, methods=["GET"])
