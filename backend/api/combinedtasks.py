"""``/combinedtasks``: each Task with its Events (blueprint ``combinedtasks``), read-only.

The seed's aggregated view without its extra API calls: a Task's Events come from the events
informer's index on the ``example.example.com/task-uid`` label (and on ``involvedObject.uid`` for
Events other tools recorded about the Task), so a page of N tasks costs zero API requests.
Each item is the CombinedTask the aggregated API server serves (``kubectl get ct``), built by the
same code (:func:`cluster.taskevents.combined`): ``apiVersion``, ``kind``, the Task's ``metadata``
and ``spec``, ``status.events`` (the Events, oldest first) and the Task's ``status.conditions`` /
``observedGeneration``; ``metadata.resourceVersion`` is the newest of the Task's and its Events'.
Only the envelope of a list (``items``, ``continue``, ``total``) is this API's own.
Rendering is memoized per Task version and the versions of its Events
(:class:`backend.core.services.CombinedTasks`, which the dashboard's tasks-with-events page shares).
:func:`blueprint` is called by :func:`backend.app.create_app` with the app's services.
"""

from __future__ import annotations

from flask import Blueprint, Response

from backend.api import apidocs, bodies, queries
from backend.core import listing
from backend.core.services import Services, version


def blueprint(services: Services) -> Blueprint:
    """The ``combinedtasks`` blueprint over the app's Tasks and their Events."""
    found = Blueprint("combinedtasks", __name__)

    def list_combined_tasks() -> Response:
        tasks, combined = services["Task"], services.combined_tasks
        query = queries.list_query(services.settings, tasks.kind)
        selected = tasks.list(query)
        page, token = listing.paginate(selected, query)
        body = listing.list_body([combined.encoded(task) for task in page], token=token, total=len(selected))
        return Response(body, mimetype=bodies.JSON)

    def get_combined_task(namespace: str, name: str) -> Response:
        combined = services.combined_tasks
        task = services["Task"].fetch(namespace, name)
        response = Response(combined.encoded(task), mimetype=bodies.JSON)
        response.set_etag(version(task), weak=True)  # the Events change the body, not the Task's version
        return response

    apidocs.document(list_combined_tasks, "GET", "List Tasks with their Events", {
        "tags": ["CombinedTasks"],
        "description": (
            "Every Task (sorted by namespace then name) with its Events, from the cache. Each item is the CombinedTask"
            " of the aggregated API (`kubectl get combinedtasks -o json`): the Task's metadata and spec, its Events in"
            " status.events. Changed: items used to be the friendly Task plus `events` (GET /tasks still"
            " gives the friendly Task)."
        ),
        "parameters": apidocs.list_parameters(services["Task"].kind),
        "responses": {"200": apidocs.json_response("CombinedTaskList", "A page of Tasks with Events."), **apidocs.problems(400, 503)},
    })  # fmt: skip
    apidocs.document(get_combined_task, "GET", "Get a Task with its Events", {
        "tags": ["CombinedTasks"],
        "description": "The CombinedTask of the aggregated API (`kubectl get ct -n <namespace> <name> -o json`).",
        "parameters": apidocs.path_parameters("Task"),
        "responses": {
            "200": apidocs.json_response("CombinedTask", "The Task with its Events, oldest first."), **apidocs.problems(404, 503)
        },
    })  # fmt: skip
    found.add_url_rule("/combinedtasks", view_func=list_combined_tasks, methods=["GET"])
    found.add_url_rule("/combinedtasks/<namespace>/<name>", view_func=get_combined_task, methods=["GET"])
    return found
