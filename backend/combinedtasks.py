"""``/combinedtasks``: each Task with its Events (blueprint ``combinedtasks``), read-only.

The seed's aggregated view without its extra API calls: a Task's Events come from the events
informer's index on the ``example.example.com/task-uid`` label (and on ``involvedObject.uid`` for
Events other tools recorded about the Task), so a page of N tasks costs zero API requests.
Each item is the CombinedTask the aggregated API server serves (``kubectl get ct``), built by the
same code (:func:`cluster.taskevents.combined`): ``apiVersion``, ``kind``, the Task's ``metadata``
and ``spec``, ``status.events`` (the Events, oldest first) and the Task's ``status.conditions`` /
``observedGeneration``; ``metadata.resourceVersion`` is the newest of the Task's and its Events'.
Only the envelope of a list (``items``, ``continue``, ``total``) is this API's own.
Rendering is memoized per Task version and the versions of its Events. Registered by
:func:`backend.app.create_app`; :func:`combined_task` also serves the dashboard's tasks-with-events page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response

from backend import apidocs, endpoints, listing, state
from backend.tasks import KIND
from cluster import EVENTS, FrozenDict, taskevents
from cluster.taskevents import events_of_task

blueprint = Blueprint("combinedtasks", __name__)


def _combined(task: Mapping[str, Any], events: list[FrozenDict]) -> FrozenDict:
    return taskevents.combined(task, events, resource_version=taskevents.latest_version(task, events))


def _renderer() -> listing.Renderer:
    return listing.app_renderer("combinedtasks", lambda: listing.Renderer(_combined))


def events(task: Mapping[str, Any]) -> list[FrozenDict]:
    """The Events of ``task`` from the cache, oldest first (:mod:`cluster.taskevents`; also for the dashboard)."""
    client = state.current().access.client
    return events_of_task(lambda index, value: client.by_index(EVENTS, index, value), task["metadata"].get("uid", ""))


def _versions(events: list[FrozenDict]) -> tuple[tuple[str, str | None], ...]:
    return tuple(sorted((e["metadata"]["uid"], e["metadata"].get("resourceVersion")) for e in events))


def combined_task(task: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CombinedTask of ``task`` with its Events from the cache (memoized; shared: do not mutate)."""
    found = events(task)
    return _renderer().friendly(task, found, _versions(found))


def _encoded(task: Mapping[str, Any]) -> bytes:
    found = events(task)
    return _renderer().encoded(task, found, _versions(found))


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
    "description": (
        "Every Task (sorted by namespace then name) with its Events, from the cache. Each item is the CombinedTask"
        " of the aggregated API (`kubectl get combinedtasks -o json`): the Task's metadata and spec, its Events in"
        " status.events. Changed with issue 14: items used to be the friendly Task plus `events` (GET /tasks still"
        " gives the friendly Task)."
    ),
    "parameters": apidocs.list_parameters(),
    "responses": {"200": apidocs.json_response("CombinedTaskList", "A page of Tasks with Events."), **apidocs.problems(400, 503)},
})  # fmt: skip
apidocs.document(get_combined_task, "GET", "Get a Task with its Events", {
    "tags": ["CombinedTasks"],
    "description": "The CombinedTask of the aggregated API (`kubectl get ct -n <namespace> <name> -o json`).",
    "parameters": apidocs.path_parameters("Task"),
    "responses": {"200": apidocs.json_response("CombinedTask", "The Task with its Events, oldest first."), **apidocs.problems(404, 503)},
})  # fmt: skip
blueprint.add_url_rule("/combinedtasks", view_func=list_combined_tasks, methods=["GET"])
blueprint.add_url_rule("/combinedtasks/<namespace>/<name>", view_func=get_combined_task, methods=["GET"])
