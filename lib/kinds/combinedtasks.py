"""The CombinedTask kind (``search.task.example.example.com/v1``, seeds 000/001), described once.

A read-only view, not stored: a Task's ``metadata`` and ``spec`` with its Events in ``status.events``
(built by :func:`cluster.taskevents.combined`). Served by the aggregated API server
(:mod:`aggregator.resources` adds its discovery documents) and, in the same shape, by the REST API's
``/combinedtasks`` and the dashboard's tasks-with-events page.
"""

from __future__ import annotations

GROUP = "search.task.example.example.com"
VERSION = "v1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
PLURAL = "combinedtasks"
SINGULAR = "combinedtask"
KIND = "CombinedTask"
LIST_KIND = "CombinedTaskList"
SHORT_NAMES = ("ct",)
# Not "all": `kubectl get all` should not grow a second copy of every Task. Not "tasks" either: kubectl
# expands a category before it matches a resource name, so `kubectl get tasks` would list CombinedTasks.
CATEGORIES = ("example",)
VERBS = ("get", "list", "watch")
STATUS_FIELDS = ("conditions", "observedGeneration")  # the Task's own, next to events: the object alone tells the Task's state
