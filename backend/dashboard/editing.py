"""The create, edit and delete flow of a kind's dashboard pages: :class:`Flow`, one per kind.

Used through :func:`.forms.generated_flow` by the page modules, which give a :class:`Flow`
their kind's generated form (its values and payload functions) and paths. ``GET`` renders the form; ``POST`` reads it into values,
writes through :mod:`.actions` and redirects (:func:`.browsing.go`) — or renders the form again:
422 with the errors inline by field, 409 on create as an error on the name, 409 on edit with the
current values to compare (the form then carries their generation, so saving again overwrites
knowingly), any other problem as a form-wide error (``$``). A delete that fails is an error page.
A create or delete goes back to the list as the user last had it (:mod:`.returning`). What the person may not do shows
before they try (:meth:`Flow.allowances`: Save disabled with the reason, a new object's namespaces they may not create
in offered disabled); the cluster still decides, and a refusal comes back in the form as its error (403, swapped in
place: the form is ``data-swap-errors``).

An edit form says before Save when its object was changed by someone else (its generation moved on: Save would be
refused) or deleted (Save would create nothing), live: :meth:`Flow.freshness` answers its notice, fetched again on
each change of the object the form page's stream reports (:mod:`.livedetail`). After a Save, every error — 409 (with
the current values), 404 (deleted meanwhile), 403, 422 — comes back in the form's error summary, which the page
scrolls into view and focuses (``static/dashboard.js``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol

from flask import Response, request
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

from backend.api import problems
from backend.api.problems import Problem
from backend.core.errors import Failure
from backend.core.services import KindService
from backend.dashboard import actions, allowing, browsing, namespacepicker, rendering, returning
from backend.dashboard.namespacepicker import Namespaces
from backend.identity.permissions import ALLOWED, ANYWHERE_ASKS_MAX
from cluster import ClusterError

Values = dict[str, Any]
CHANGED = "changed"  # an edit form's object was changed since the form was opened (its generation moved on)
GONE = "deleted"  # ... or deleted


def problem_of(error: Failure | ClusterError | Problem) -> Problem:
    """What a failed write means for the page: a domain or API server error mapped as the JSON API maps it (a refusal
    by the cluster as the person reads it: ``You may not create darkrooms in namespace "team-a".``)."""
    refused = browsing.refusal_of(error)
    if refused is not None:
        return Problem(403, browsing.refusal_sentence(refused))
    return problems.problem_of(error)


def failure(problem: Problem) -> tuple[int, dict[str, list[str]]]:
    """The status and inline errors of a form a write failed on: by field on 422, else form-wide (``$``)."""
    if problem.status == 422 and problem.errors:
        return 422, problem.errors
    return problem.status, {"$": [problem.detail or problem.title]}


class PayloadOf(Protocol):
    """The friendly payload of a submitted form (create: with name and namespace)."""

    def __call__(self, values: Mapping[str, Any], form: MultiDict[str, str], /, *, create: bool) -> dict[str, Any]: ...


def _unchanged(_values: Values, _form: MultiDict[str, str]) -> bool:
    return False


def _nothing_kept(_current: Mapping[str, Any]) -> Values:
    return {}


@dataclass(frozen=True, kw_only=True)
class Flow:
    """One kind's form pages; the page modules route to :meth:`new`, :meth:`edit` and :meth:`delete`."""

    service: KindService  # the kind's application service
    template: str  # the form template; its block ``form`` is the fragment
    target: str  # the htmx target that asks for that fragment
    list_path: str  # where a create or a delete goes back to
    blank: Callable[[str], Values]  # the values of a new object's form, in a namespace
    form_values: Callable[[MultiDict[str, str]], Values]  # what the user submitted
    values_of: Callable[[Mapping[str, Any]], Values]  # the values of a stored (friendly) object
    payload: PayloadOf
    saved_path: Callable[[str, str], str]  # (namespace, name) → where a saved edit goes
    kept: Callable[[Mapping[str, Any]], Values] = _nothing_kept  # values an edit takes from the stored (friendly) object
    rearranged: Callable[[Values, MultiDict[str, str]], bool] = _unchanged  # a button that only edits the form: no write

    def form(
        self, *, mode: str, values: Mapping[str, Any], status: int = 200, errors: Mapping[str, list[str]] | None = None, **extra: Any
    ) -> Response:
        namespaces = browsing.creatable_namespaces(self.service) if mode == "create" else browsing.namespace_names(self.service)
        context = {
            "mode": mode,
            "values": values,
            "errors": errors or {},
            "namespaces": namespaces,
            "namespace_suggest_from": browsing.with_query(namespacepicker.OPTIONS_URL, create=self.service.kind.title),
            "back": returning.back_to(request.values.get("back")) if mode == "create" else None,
            "freshness": None,
            **self.allowances(mode, values, namespaces),
            **self.form_context(mode, values),
            **extra,
        }
        return rendering.page_or_block(self.template, context, block_name="form", target=self.target, status=status)

    def form_context(self, mode: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """What the form template needs besides the values (a generated form: the form and its page's words)."""
        return {}

    def allowances(self, mode: str, values: Mapping[str, Any], namespaces: Namespaces) -> dict[str, Any]:
        """``can_save`` (Create or Save changes, disabled with the reason) and ``refused_namespaces`` (a new object's
        namespaces the person may not create in: offered disabled), asked as the person (:mod:`.allowing`)."""
        asked = allowing.current()
        if asked is None:
            return {"can_save": ALLOWED, "refused_namespaces": {}}
        resource = self.service.resource
        if mode == "create":
            # a select marks each namespace; a typeahead (many namespaces) only the form's own, and its suggestions ask
            # for themselves (:mod:`.namespacepicker`)
            marked = (values["namespace"],) if namespaces.typeahead else namespaces
            refused = {ns: answer.reason for ns in marked if ns and not (answer := asked.may("create", resource, ns))}
            return {"can_save": asked.anywhere("create", resource, namespaces), "refused_namespaces": refused}
        return {"can_save": asked.may("update", resource, values["namespace"], values["name"]), "refused_namespaces": {}}

    def _creatable(self, namespace: str) -> str:
        """``namespace``, or — when the person may not create there — the first namespace they may create in (the
        others are offered disabled, with the reason)."""
        asked = allowing.current()
        if asked is None or asked.may("create", self.service.resource, namespace):
            return namespace
        candidates = islice(browsing.creatable_namespaces(self.service), ANYWHERE_ASKS_MAX)
        allowed = (ns for ns in candidates if asked.may("create", self.service.resource, ns))
        return next(allowed, namespace)

    def _friendly(self, namespace: str, name: str, *, fresh: bool = False) -> dict[str, Any]:
        return self.service.friendly(self.service.fetch(namespace, name, fresh=fresh))

    def new(self) -> BaseResponse:
        if request.method == "GET":
            asked_for = request.args.get("namespace") or ""
            if not asked_for or browsing.system_namespace(self.service, asked_for):  # e.g. from the list of kube-system
                asked_for = self.service.settings.namespace or "default"
            namespace = self._creatable(asked_for)
            return self.form(mode="create", values=self.blank(namespace))
        form = request.form
        values = self.form_values(form)
        if self.rearranged(values, form):
            return self.form(mode="create", values=values)
        try:
            written = actions.create_from_form(self.service, self.payload(values, form, create=True))
        except ClusterError as e:
            status, errors = failure(problem_of(e))
            return self.form(mode="create", values=values, status=status, errors=errors)
        except Failure as error:
            problem = problem_of(error)
            status, errors = failure(problem)
            if problem.status == 409:
                errors = {"name": [problem.detail or "already exists"]}
            return self.form(mode="create", values=values, status=status, errors=errors)
        meta = written["metadata"]
        back = request.form.get("back")  # the list the New link was followed from, as it was shown
        return browsing.go(returning.list_url(self.list_path, namespace=meta["namespace"], back=back, created=meta["name"]))

    def edit(self, namespace: str, name: str) -> BaseResponse:
        try:
            current = self._friendly(namespace, name)
        except Failure as error:
            if request.method == "GET":
                return browsing.problem_page(error)
            return self._deleted(namespace, name)
        if request.method == "GET":
            return self.form(mode="edit", values=self.values_of(current))
        form = request.form
        values = {**self.form_values(form), "name": name, "namespace": namespace, **self.kept(current)}
        if self.rearranged(values, form):
            return self.form(mode="edit", values=values)
        try:
            actions.replace_from_form(
                self.service, namespace, name, self.payload(values, form, create=False), generation=values["generation"]
            )
        except ClusterError as e:
            status, errors = failure(problem_of(e))
            return self.form(mode="edit", values=values, status=status, errors=errors)
        except Failure as error:
            problem = problem_of(error)
            if problem.status == 409:
                try:
                    latest = self._friendly(namespace, name, fresh=True)
                except Failure:
                    return self._deleted(namespace, name)
                values = {**values, "generation": str(latest["generation"]), **self.kept(latest)}
                changed = f"Someone else changed this {self.service.title} after you opened this form, so nothing was saved."
                return self.form(mode="edit", values=values, status=409, conflict=self.values_of(latest), errors={"$": [changed]})
            status, errors = failure(problem)
            if problem.status == 404:
                return self._deleted(namespace, name)
            return self.form(mode="edit", values=values, status=status, errors=errors)
        return browsing.go(self.saved_path(namespace, name))

    def _deleted(self, namespace: str, name: str) -> Response:
        """The edit form again, 404: its object was deleted, nothing was saved (and a Save would create nothing)."""
        values = {**self.form_values(request.form), "name": name, "namespace": namespace}
        deleted = f"This {self.service.title} was deleted after you opened this form, so nothing was saved: Save would create nothing."
        return self.form(mode="edit", values=values, status=404, errors={"$": [deleted]}, freshness=GONE)

    def freshness(self, namespace: str, name: str) -> Response:
        """``GET <edit>/freshness?generation=``: whether the object an edit form was opened on (at that generation) was
        changed or deleted since — the form page's notice (block ``freshness``), fetched again on each change the page's
        live stream (:mod:`.livedetail`) reports. A generation that is no number counts as changed: Save would be refused."""
        state: str | None
        try:
            current = self._friendly(namespace, name)
        except Failure:
            state = GONE
        else:
            state = None if str(current.get("generation")) == (request.args.get("generation") or "").strip() else CHANGED
        values = {"name": name, "namespace": namespace}
        return rendering.block(self.template, "freshness", {**self.form_context("edit", values), "values": values, "freshness": state})

    def delete(self, namespace: str, name: str) -> BaseResponse:
        try:
            terminating = actions.delete(self.service, namespace, name, uid=request.form.get("uid"))
        except (ClusterError, Failure) as error:
            return browsing.problem_page(error)
        key = "terminating" if terminating else "deleted"
        return browsing.go(returning.list_url(self.list_path, namespace=namespace, **{key: name}))
