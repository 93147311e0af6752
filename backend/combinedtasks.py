"""``/combinedtasks``: each Task with its Events (blueprint ``combinedtasks``), read-only.

The seed's aggregated view without its extra API calls: a Task's Events come from the events
informer's index on the ``example.example.com/task-uid`` label (and on ``involvedObject.uid`` for
Events other tools recorded about the Task), so a page of N tasks costs zero API requests.
Rendering is memoized per Task version and the versions of its Events. Registered by
:func:`backend.app.create_app`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response

from backend import apidocs, endpoints, listing, state
from backend.conversions import tasks as conversion
from backend.tasks import KIND
from cluster import EVENTS, FrozenDict
from cluster.taskevents import events_of_task

blueprint = Blueprint("combinedtasks", __name__)


def _combined(task: Mapping[str, Any], events: list[FrozenDict]) -> dict[str, Any]:
    return {**conversion.to_friendly(task), "events": conversion.events_of(events)}


def _renderer() -> listing.Renderer:
    return listing.app_renderer("combinedtasks", lambda: listing.Renderer(_combined))


def events(task: Mapping[str, Any]) -> list[FrozenDict]:
    """The Events of ``task`` from the cache, oldest first (:mod:`cluster.taskevents`; also for the dashboard)."""
    client = state.current().access.client
    return events_of_task(lambda index, value: client.by_index(EVENTS, index, value), task["metadata"].get("uid", ""))


def _encoded(task: Mapping[str, Any]) -> bytes:
    found = events(task)
    return _renderer().encoded(task, found, tuple(sorted((e["metadata"]["uid"], e["metadata"].get("resourceVersion")) for e in found)))


def list_combined_tasks() -> Response:
    query = listing.list_query(state.current().settings)
    tasks = endpoints.cached_list(KIND.resource, query)
    page, token = listing.paginate(tasks, query)
    return Response(listing.list_body([_encoded(task) for task in page], token=token, total=len(tasks)), mimetype=listing.JSON)


def get_combined_task(namespace: str, name: str) -> Response:
    task = endpoints.fetch(KIND, namespace, name)
    response = Response(_encoded(task), mimetype=listing.JSON)
    response.set_etag(endpoints.version(task), weak=True)  # the Events change the body, not the Task's version
    return response


apidocs.document(list_combined_tasks, "GET", "List Tasks with their Events", {
    "tags": ["CombinedTasks"],
    "description": "Every Task (sorted by namespace then name) with its Events, from the cache.",
    "parameters": apidocs.list_parameters(),
    "responses": {"200": apidocs.json_response("CombinedTaskList", "A page of Tasks with Events."), **apidocs.problems(400, 503)},
})  # fmt: skip
apidocs.document(get_combined_task, "GET", "Get a Task with its Events", {
    "tags": ["CombinedTasks"],
    "parameters": apidocs.path_parameters("Task"),
    "responses": {"200": apidocs.json_response("CombinedTask", "The Task with its Events, oldest first."), **apidocs.problems(404, 503)},
})  # fmt: skip
blueprint.add_url_rule("/combinedtasks", view_func=list_combined_tasks, methods=["GET"])
blueprint.add_url_rule("/combinedtasks/<namespace>/<name>", view_func=get_combined_task, methods=["GET"])
