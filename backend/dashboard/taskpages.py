"""The Task pages: list, the combined view (each Task with its Events), detail, form, finish and delete.

Installed by :mod:`backend.dashboard`. Routes:

- ``GET /ui/tasks`` — the list (``?namespace=&q=&sort=&page=``; target ``task-list``: that block);
  rows pushed live by :mod:`.liverows` (views :data:`LIVE`, :data:`COMBINED_LIVE`);
  ``GET /ui/tasks/<ns>/<name>/row`` one row on demand (also the answer of "Mark finished").
- ``GET /ui/combinedtasks`` — each Task of the page as its CombinedTask (``metadata``, ``spec``,
  ``status.events``: :func:`backend.combinedtasks.combined_task`, the object ``/combinedtasks`` and the
  aggregated API serve); ``GET /ui/tasks/<ns>/<name>`` one Task with its CombinedTask's Events (its
  YAML at ``#yaml`` or ``?view=yaml``, :mod:`.yamlview`).
- ``GET|POST /ui/tasks/new``, ``/ui/tasks/<ns>/<name>/edit`` — the form :mod:`.formgen` builds from
  the CRD and :data:`FORM_SPEC` (the flow of :mod:`.editing`, as for Darkrooms: inline 422 errors,
  409 explained with the current values).
- ``POST /ui/tasks/<ns>/<name>/finish`` (state → Finished) and ``/delete``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from backend import combinedtasks, endpoints
from backend.conversions import tasks as conversion
from backend.dashboard import actions, browsing, editing, formgen, formpages, liverows, rendering, returning, yamlview
from backend.problems import Problem
from backend.tasks import KIND
from cluster import ClusterError
from kinds import tasks as task_kind

LIST = "tasks.html"
COMBINED = "combined_tasks.html"
DETAIL = "task_detail.html"

FORM_SPEC = formgen.FormSpec(
    kind="Task",
    sections=(formgen.Section(legend="Task", paths=("priority", "deadline", "state", "details")),),
    labels={"deadline": "Deadline (UTC)"},
    help={"deadline": "Date and time in UTC."},
    renames=dict(conversion.RENAMES),
)
FORM_OF = formgen.build(FORM_SPEC)  # the CRD is read here, once, at import


def friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    return endpoints.renderer(KIND).friendly(obj)


def combined(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CombinedTask of ``obj`` — the object ``GET /combinedtasks`` and ``kubectl get ct`` show (same code)."""
    return combinedtasks.combined_task(obj)


def _notice() -> str | None:
    return returning.notice("Task")


SORTS = browsing.sorts(state=task_kind.state, extra=browsing.TASK_SORTS)
LIVE = liverows.RowView("tasks", kind=KIND.title, template=LIST, var="t", item=friendly)
COMBINED_LIVE = liverows.RowView("combinedtasks", kind=KIND.title, template=COMBINED, var="t", item=combined)


def list_page() -> Response:
    return browsing.list_page(KIND.resource, LIST, target="task-list", item=friendly, notice=_notice(), sorts=SORTS)


def combined_page() -> Response:
    return browsing.list_page(KIND.resource, COMBINED, target="task-list", item=combined, notice=_notice(), sorts=SORTS)


def row(namespace: str, name: str) -> Response:
    try:
        obj = endpoints.fetch(KIND, namespace, name)
    except Problem:
        return Response("", status=200, mimetype="text/html")
    if request.args.get("combined"):
        return rendering.block(COMBINED, "row", {"t": combined(obj)})
    return rendering.block(LIST, "row", {"t": friendly(obj)})


def detail(namespace: str, name: str) -> Response:
    target = rendering.fragment_wanted()
    try:
        obj = endpoints.fetch(KIND, namespace, name)
    except Problem as problem:
        if target == "task-live":
            return rendering.block(DETAIL, "live", {"t": None, "namespace": namespace, "name": name})
        return browsing.problem_page(problem)
    context = {"t": friendly(obj), "events": combined(obj)["status"]["events"], "namespace": namespace, "name": name, "notice": _notice()}
    if target != "task-live":
        context.update(yamlview.context(obj))
    return rendering.page_or_block(DETAIL, context, block_name="live", target="task-live")


PAGE = formpages.FormPage(
    form_id="task-form",
    nav="tasks",
    list_title="Tasks",
    list_path="/ui/tasks",
    item_base="/ui/tasks",
    noun="Task",
    new_title="New Task",
    create_button="Create Task",
    name_hint='Lowercase letters, digits, "-" and ".".',
    max_name_length=253,
)
FLOW = formpages.generated_flow(
    FORM_OF,
    PAGE,
    kind=KIND,
    saved_path=lambda namespace, name: browsing.with_query(f"/ui/tasks/{namespace}/{name}", saved=name, namespace=namespace),
)


def new() -> BaseResponse:
    return FLOW.new()


def edit(namespace: str, name: str) -> BaseResponse:
    return FLOW.edit(namespace, name)


def _back(default: str) -> str:
    """Where a button posted from a list goes back to (a local path only)."""
    target = request.form.get("back") or ""
    return target if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target else default


def finish(namespace: str, name: str) -> BaseResponse:
    try:
        actions.change(KIND, namespace, name, {"state": "Finished"})
    except (ClusterError, Problem) as error:
        return browsing.problem_page(editing.problem_of(error))
    if request.headers.get("HX-Request") and request.headers.get("HX-Target"):
        return row(namespace, name)  # the list swaps the row in place
    return browsing.go(_back(browsing.with_query(f"/ui/tasks/{namespace}/{name}", finished=name, namespace=namespace)))


def delete(namespace: str, name: str) -> BaseResponse:
    return FLOW.delete(namespace, name)


def install(blueprint: Blueprint) -> None:
    rendering.document(list_page, "Tasks page: filters ?namespace=&q=&page=")
    rendering.document(combined_page, "Tasks with their Events")
    rendering.document(new, "New Task form; POST creates", ("get", "post"))
    rendering.document(detail, "Task detail page with its Events")
    rendering.document(row, "One Task row on demand; empty when it is gone")
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
