"""The Task pages: list, the combined view (each Task with its Events), detail, form, finish and delete.

Installed by :mod:`backend.dashboard`. Routes:

- ``GET /ui/tasks`` — the list (``?namespace=&q=&page=``; target ``task-list``: that block);
  ``GET /ui/tasks/<ns>/<name>/row`` one row for live refreshes.
- ``GET /ui/combinedtasks`` — each Task of the page with its Events (the Events informer's
  indexes, as ``/combinedtasks`` does); ``GET /ui/tasks/<ns>/<name>`` one Task with its Events.
- ``GET|POST /ui/tasks/new``, ``/ui/tasks/<ns>/<name>/edit`` — the form (same rules as the
  Darkroom form: inline 422 errors, 409 explained with the current values).
- ``POST /ui/tasks/<ns>/<name>/finish`` (state → Finished) and ``/delete``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

from backend import endpoints, problems, state
from backend.access import INVOLVED_UID, TASK_UID
from backend.conversions import tasks as conversion
from backend.dashboard import actions, browsing, forms, rendering
from backend.problems import Problem
from backend.tasks import KIND
from cluster import EVENTS, ClusterError

LIST = "tasks.html"
COMBINED = "combined_tasks.html"
DETAIL = "task_detail.html"
FORM = "task_form.html"


def friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    return endpoints.renderer(KIND).friendly(obj)


def with_events(obj: Mapping[str, Any]) -> dict[str, Any]:
    client = state.current().access.client
    uid = obj["metadata"].get("uid", "")
    found = {e["metadata"]["uid"]: e for index in (TASK_UID, INVOLVED_UID) for e in client.by_index(EVENTS, index, uid)} if uid else {}
    return {**friendly(obj), "events": conversion.events_of(found.values())}


def _notice() -> str | None:
    args = request.args
    notices = (
        ("created", "created"),
        ("deleted", "deleted"),
        ("terminating", "is being deleted"),
        ("finished", "marked finished"),
        ("saved", "saved"),
    )
    for key, text in notices:
        if args.get(key):
            return f"Task {args.get('namespace', '')}/{args[key]} {text}."
    return None


def _list(template: str, target: str, *, combined: bool) -> Response:
    filters = browsing.Filters.from_request()
    selected = browsing.select(KIND.resource, filters)
    context = {
        "filters": filters,
        "page": selected,
        "items": [with_events(obj) if combined else friendly(obj) for obj in selected.items],
        "namespaces": browsing.namespace_names(),
        "notice": _notice(),
        "served_namespace": state.current().settings.namespace,
    }
    if rendering.fragment_wanted() == target:
        return rendering.block(template, "list", context)
    return rendering.page(template, context)


def list_page() -> Response:
    return _list(LIST, "task-list", combined=False)


def combined_page() -> Response:
    return _list(COMBINED, "task-list", combined=True)


def row(namespace: str, name: str) -> Response:
    try:
        obj = endpoints.fetch(KIND, namespace, name)
    except Problem:
        return Response("", status=200, mimetype="text/html")
    if request.args.get("combined"):
        return rendering.block(COMBINED, "row", {"t": with_events(obj)})
    return rendering.block(LIST, "row", {"t": friendly(obj)})


def detail(namespace: str, name: str) -> Response:
    target = rendering.fragment_wanted()
    try:
        obj = with_events(endpoints.fetch(KIND, namespace, name))
    except Problem as problem:
        if target == "task-live":
            return rendering.block(DETAIL, "live", {"t": None, "namespace": namespace, "name": name})
        return browsing.problem_page(problem)
    context = {"t": obj, "namespace": namespace, "name": name, "notice": _notice()}
    if target == "task-live":
        return rendering.block(DETAIL, "live", context)
    return rendering.page(DETAIL, context)


def _form(
    *, mode: str, values: Mapping[str, Any], status: int = 200, errors: Mapping[str, list[str]] | None = None, **extra: Any
) -> Response:
    context = {"mode": mode, "values": values, "errors": errors or {}, "namespaces": browsing.namespace_names(), **extra}
    if rendering.fragment_wanted() == "task-form":
        return rendering.block(FORM, "form", context, status=status)
    return rendering.page(FORM, context, status=status)


def _failure(problem: Problem) -> tuple[int, dict[str, list[str]]]:
    if problem.status == 422 and problem.errors:
        return 422, problem.errors
    return problem.status, {"$": [problem.detail or problem.title]}


def new() -> BaseResponse:
    if request.method == "GET":
        namespace = request.args.get("namespace") or state.current().settings.namespace or "default"
        return _form(mode="create", values=forms.task_form_values(MultiDict({"namespace": namespace, "state": "Pending"})))
    values = forms.task_form_values(request.form)
    try:
        written = actions.create(KIND, forms.task_payload(values, create=True))
    except ClusterError as e:
        status, errors = _failure(problems.from_cluster_error(e))
        return _form(mode="create", values=values, status=status, errors=errors)
    except Problem as problem:
        status, errors = _failure(problem)
        if problem.status == 409:
            errors = {"name": [problem.detail or "already exists"]}
        return _form(mode="create", values=values, status=status, errors=errors)
    meta = written["metadata"]
    return browsing.go(browsing.with_query("/ui/tasks", namespace=meta["namespace"], created=meta["name"]))


def edit(namespace: str, name: str) -> BaseResponse:
    try:
        current = friendly(endpoints.fetch(KIND, namespace, name))
    except Problem as problem:
        return browsing.problem_page(problem)
    if request.method == "GET":
        return _form(mode="edit", values=forms.task_values(current))
    values = {**forms.task_form_values(request.form), "name": name, "namespace": namespace}
    try:
        actions.replace(KIND, namespace, name, forms.task_payload(values, create=False), generation=values["generation"])
    except ClusterError as e:
        status, errors = _failure(problems.from_cluster_error(e))
        return _form(mode="edit", values=values, status=status, errors=errors)
    except Problem as problem:
        if problem.status == 409:
            try:
                latest = friendly(endpoints.fetch(KIND, namespace, name, fresh=True))
            except Problem as gone:
                return browsing.problem_page(gone)
            values = {**values, "generation": str(latest["generation"])}
            return _form(mode="edit", values=values, status=409, conflict=forms.task_values(latest))
        status, errors = _failure(problem)
        return _form(mode="edit", values=values, status=status, errors=errors)
    return browsing.go(browsing.with_query(f"/ui/tasks/{namespace}/{name}", saved=name, namespace=namespace))


def _back(default: str) -> str:
    """Where a button posted from a list goes back to (a local path only)."""
    target = request.form.get("back") or ""
    return target if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target else default


def finish(namespace: str, name: str) -> BaseResponse:
    try:
        actions.change(KIND, namespace, name, {"state": "Finished"})
    except ClusterError as e:
        return browsing.problem_page(problems.from_cluster_error(e))
    except Problem as problem:
        return browsing.problem_page(problem)
    if request.headers.get("HX-Request") and request.headers.get("HX-Target"):
        return row(namespace, name)  # the list swaps the row in place
    return browsing.go(_back(browsing.with_query(f"/ui/tasks/{namespace}/{name}", finished=name, namespace=namespace)))


def delete(namespace: str, name: str) -> BaseResponse:
    try:
        terminating = actions.delete(KIND, namespace, name, uid=request.form.get("uid"))
    except ClusterError as e:
        return browsing.problem_page(problems.from_cluster_error(e))
    except Problem as problem:
        return browsing.problem_page(problem)
    key = "terminating" if terminating else "deleted"
    return browsing.go(browsing.with_query("/ui/tasks", namespace=namespace, **{key: name}))


def install(blueprint: Blueprint) -> None:
    rendering.document(list_page, "Tasks page: filters ?namespace=&q=&page=")
    rendering.document(combined_page, "Tasks with their Events")
    rendering.document(new, "New Task form; POST creates", ("get", "post"))
    rendering.document(detail, "Task detail page with its Events")
    rendering.document(row, "One Task row (live refresh); empty when it is gone")
    rendering.document(edit, "Edit Task form; POST saves", ("get", "post"))
    rendering.document(finish, "Mark a Task finished", ("post",))
    rendering.document(delete, "Delete a Task", ("post",))
    blueprint.add_url_rule("/ui/tasks", "tasks", list_page, methods=["GET"])
    blueprint.add_url_rule("/ui/combinedtasks", "combined_tasks", combined_page, methods=["GET"])
    blueprint.add_url_rule("/ui/tasks/new", "new_task", new, methods=["GET", "POST"])
    blueprint.add_url_rule("/ui/tasks/<namespace>/<name>", "task", detail, methods=["GET"])
    blueprint.add_url_rule("/ui/tasks/<namespace>/<name>/row", "task_row", row, methods=["GET"])
    blueprint.add_url_rule("/ui/tasks/<namespace>/<name>/edit", "edit_task", edit, methods=["GET", "POST"])
    blueprint.add_url_rule("/ui/tasks/<namespace>/<name>/finish", "finish_task", finish, methods=["POST"])
    blueprint.add_url_rule("/ui/tasks/<namespace>/<name>/delete", "delete_task", delete, methods=["POST"])
