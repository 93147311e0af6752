"""What this server serves: the group, version and resource, and the discovery documents naming them.

``search.task.example.example.com/v1`` ``combinedtasks`` (namespaced, kind ``CombinedTask``, short name
``ct``, categories ``tasks`` and ``example``), read-only (get, list, watch). Used by the routes
(:mod:`aggregator.app`), errors (:mod:`aggregator.statuses`), OpenAPI (:mod:`aggregator.openapi`) and
the objects it builds (:mod:`aggregator.combining`). The discovery bodies are those of k8s.io/apiserver
(``APIGroupList``, ``APIGroup``, ``APIResourceList``), so kubectl's RESTMapper finds ``ct``.
"""

from __future__ import annotations

from typing import Any

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
BASE_PATH = f"/apis/{GROUP}/{VERSION}"


def group_version_for_discovery() -> dict[str, str]:
    return {"groupVersion": GROUP_VERSION, "version": VERSION}


def api_group() -> dict[str, Any]:
    return {
        "name": GROUP,
        "versions": [group_version_for_discovery()],
        "preferredVersion": group_version_for_discovery(),
    }


def api_group_list() -> dict[str, Any]:
    """``GET /apis``: the one group this server serves."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]}


def api_group_document() -> dict[str, Any]:
    """``GET /apis/<group>``."""
    return {"kind": "APIGroup", "apiVersion": "v1", **api_group()}


def api_resource_list() -> dict[str, Any]:
    """``GET /apis/<group>/v1``: the APIResourceList kubectl discovers verbs, short names and categories from."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {
                "name": PLURAL,
                "singularName": SINGULAR,
                "namespaced": True,
                "kind": KIND,
                "verbs": list(VERBS),
                "shortNames": list(SHORT_NAMES),
                "categories": list(CATEGORIES),
            }
        ],
    }
