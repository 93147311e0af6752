"""The Task pages: list, the combined view (each Task with its Events), detail, form, finish and delete.

Installed by :mod:`backend.dashboard` (:func:`install`: the views close over the Task service and the
app's :class:`backend.core.services.CombinedTasks`; :data:`LISTS` are its two navigation links). Routes:

- ``GET /ui/tasks`` — the list (``?namespace=&q=&sort=&page=``; target ``task-list``: that block);
  rows pushed live by :mod:`.liverows` (views ``tasks`` and ``combinedtasks``);
  ``GET /ui/tasks/<ns>/<name>/row`` one row on demand (also the answer of "Mark finished").
- ``GET /ui/combinedtasks`` — each Task of the page as its CombinedTask (``metadata``, ``spec``,
  ``status.events``: :meth:`backend.core.services.CombinedTasks.combined`, the object ``/combinedtasks`` and the
  aggregated API serve); ``GET /ui/tasks/<ns>/<name>`` one Task with the timeline of its CombinedTask's Events
  (``?events=``: :mod:`.timeline`; its
  YAML at ``#yaml`` or ``?view=yaml``, :mod:`.yamlview`); its regions (:data:`REGIONS`) are fetched again when the
  page's stream (:mod:`.livedetail`, ``/ui/live/task/<ns>/<name>``) says the Task or one of its Events changed.
- ``GET /ui/tasks/<ns>/<name>/edit/freshness?generation=`` — the edit form's notice (:meth:`.editing.Flow.freshness`).
- ``GET|POST /ui/tasks/new``, ``/ui/tasks/<ns>/<name>/edit`` — the form :mod:`.forms` builds from
  the CRD and :data:`FORM_SPEC` (the flow of :mod:`.editing`, as for Darkrooms: inline 422 errors,
  409 explained with the current values).
- ``POST /ui/tasks/<ns>/<name>/finish`` (state → Finished: :data:`FINISHED`) and ``/delete``.
- ``POST /ui/tasks/bulk/confirm`` and ``/ui/tasks/bulk`` — Delete or Mark finished the list's selection (:mod:`.bulk`).
- ``GET /ui/tasks/<ns>`` and ``/ui/combinedtasks/<ns>`` go to their list filtered to that namespace
  (:func:`.browsing.add_shortcuts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from backend.core.errors import Failure
from backend.core.kinds import tasks as conversion
from backend.core.services import CombinedTasks, KindService, Services
from backend.dashboard import actions, browsing, bulk, forms, livedetail, liverows, rendering, returning, timeline, yamledit, yamlview
from cluster import ClusterError

LIST = "tasks.html"
COMBINED = "combined_tasks.html"
DETAIL = "task_detail.html"
#: the detail page's regions (element id → its block), each fetched again when the page's live stream says so
REGIONS = {"task-live": "live", "task-events": "events"}

FORM_SPEC = forms.FormSpec(
    kind="Task",
    sections=(forms.Section(legend="Task", paths=("priority", "deadline", "state", "details")),),
    labels={"deadline": "Deadline (UTC)"},
    help={"deadline": "Date and time in UTC."},
    renames=dict(conversion.RENAMES),
)
FORM_OF = forms.build(FORM_SPEC)  # the CRD is read here, once, at import


FINISHED = {"state": "Finished"}  # what "Mark finished" patches, on one Task or a selection


def _notice() -> str | None:
    return returning.notice("Task")


LISTS = (
    rendering.NavLink("/ui/tasks", "tasks", "Tasks"),
    rendering.NavLink("/ui/combinedtasks", "combined", wide="Tasks with events", narrow="Events"),
)
FINISH = bulk.Action("finish", "Mark finished", "Marking finished", "marked finished", bulk.patching(lambda _value: FINISHED))
BULK = bulk.Bulk(list_path="/ui/tasks", base="/ui/tasks", actions=(bulk.DELETE, FINISH))


@dataclass(frozen=True)
class TaskPages:
    """The Task views of one app: over its Task service and its CombinedTasks (the Events of each Task)."""

    service: KindService
    combined_tasks: CombinedTasks

    def combined(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """The CombinedTask of ``obj`` — the object ``GET /combinedtasks`` and ``kubectl get ct`` show (same code)."""
        return self.combined_tasks.combined(obj)

    def list_page(self) -> Response:
        bulk_actions = {"bulk": BULK}
        return browsing.list_page(self.service, LIST, target="task-list", item=self.service.friendly, notice=_notice(), extra=bulk_actions)

    def combined_page(self) -> Response:
        return browsing.list_page(self.service, COMBINED, target="task-list", item=self.combined, notice=_notice())

    def row(self, namespace: str, name: str) -> Response:
        try:
            obj = self.service.fetch(namespace, name)
        except Failure:
            return Response("", status=200, mimetype="text/html")
        if request.args.get("combined"):
            return rendering.block(COMBINED, "row", {"t": self.combined(obj)})
        return rendering.block(LIST, "row", {"t": self.service.friendly(obj)})

    def detail(self, namespace: str, name: str) -> Response:
        chosen = timeline.chosen_type()
        region = REGIONS.get(rendering.fragment_wanted() or "")
        try:
            obj = self.service.fetch(namespace, name)
        except Failure as failure:
            if region is not None:  # gone: the region says so (live) or goes
                return rendering.block(DETAIL, region, {"t": None, "namespace": namespace, "name": name})
            return browsing.problem_page(failure)
        uid = str(obj["metadata"].get("uid") or "")
        events = self.combined(obj)["status"]["events"]  # the Task's Events: by its label or about it
        shown = timeline.build(events, own_uid=uid, base=timeline.page_path("tasks", namespace, name), chosen=chosen)
        context = {"t": self.service.friendly(obj), "timeline": shown, "namespace": namespace, "name": name, "notice": _notice()}
        if region is not None:
            return rendering.block(DETAIL, region, context)
        context.update(yamlview.context(obj))
        return rendering.page(DETAIL, context)

    def finish(self, namespace: str, name: str) -> BaseResponse:
        try:
            actions.change(self.service, namespace, name, FINISHED)
        except (ClusterError, Failure) as error:
            return browsing.problem_page(error)
        if request.headers.get("HX-Request") and request.headers.get("HX-Target"):
            return self.row(namespace, name)  # the list swaps the row in place
        return browsing.go(_back(browsing.with_query(f"/ui/tasks/{namespace}/{name}", finished=name, namespace=namespace)))


PAGE = forms.FormPage(
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
    live="task",
)


def _back(default: str) -> str:
    """Where a button posted from a list goes back to (a local path only)."""
    target = request.form.get("back") or ""
    return target if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target else default


def _saved_path(namespace: str, name: str) -> str:
    return browsing.with_query(f"/ui/tasks/{namespace}/{name}", saved=name, namespace=namespace)


def install(blueprint: Blueprint, services: Services) -> tuple[liverows.RowView | livedetail.DetailView, ...]:
    """Add the Task pages over the app's Task service; their live list views and detail stream."""
    pages = TaskPages(services["Task"], services.combined_tasks)
    flow = forms.generated_flow(FORM_OF, PAGE, service=pages.service, saved_path=_saved_path)
    views: tuple[rendering.ViewDecl, ...] = (
        ("/ui/tasks", "tasks", pages.list_page, ("get",), "Tasks page: filters ?namespace=&q=&page="),
        ("/ui/combinedtasks", "combined_tasks", pages.combined_page, ("get",), "Tasks with their Events"),
        ("/ui/tasks/new", "new_task", flow.new, ("get", "post"), "New Task form; POST creates"),
        (
            "/ui/tasks/<namespace>/<name>",
            "task",
            pages.detail,
            ("get",),
            "Task detail page with its events timeline (?events=Warning|Normal|All, else 400)",
        ),
        ("/ui/tasks/<namespace>/<name>/row", "task_row", pages.row, ("get",), "One Task row on demand; empty when it is gone"),
        ("/ui/tasks/<namespace>/<name>/edit", "edit_task", flow.edit, ("get", "post"), "Edit Task form; POST saves"),
        (
            "/ui/tasks/<namespace>/<name>/edit/freshness",
            "task_edit_freshness",
            flow.freshness,
            ("get",),
            "Whether a Task changed or went since an edit form was opened at ?generation=",
        ),
        ("/ui/tasks/<namespace>/<name>/finish", "finish_task", pages.finish, ("post",), "Mark a Task finished"),
        ("/ui/tasks/<namespace>/<name>/delete", "delete_task", flow.delete, ("post",), "Delete a Task"),
    )
    rendering.add_views(blueprint, views)
    bulk.install(blueprint, pages.service, BULK, endpoint="task")
    yamledit.install(blueprint, pages.service, page=PAGE, saved_path=_saved_path)
    browsing.add_shortcuts(blueprint, "/ui/tasks", title="Tasks", by_namespace="/ui/tasks")
    browsing.add_shortcuts(blueprint, "/ui/combinedtasks", title="Tasks with events", by_namespace="/ui/combinedtasks")
    return (
        liverows.RowView.of("tasks", pages.service, LIST, "t", warnings=True),
        # a Task's Events there may lie in namespaces one person may list and another may not: no row fits every tab
        liverows.RowView.of("combinedtasks", pages.service, COMBINED, "t", item=pages.combined, personal=True),
        livedetail.DetailView("task", pages.service),
    )
