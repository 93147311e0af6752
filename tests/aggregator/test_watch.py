"""Watches of combinedtasks on the real control plane, as client-go and ``kubectl get -w`` use them.

Behaviours: a watch from a list's resourceVersion sees an Event written for a Task as a MODIFIED
CombinedTask carrying it, and a Task leaving a label selector as DELETED; a watch without a version
starts with ADDED for every selected object; sendInitialEvents ends the initial ADDEDs with a bookmark
annotated k8s.io/initial-events-end; allowWatchBookmarks brings BOOKMARKs; timeoutSeconds ends the
stream; a version older than the server keeps is one ERROR event with a 410 Expired Status; a
resourceVersionMatch without sendInitialEvents is 422; a Table watch sends one-row Tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import requests

from .aggregated_server import GROUP_PATH, Aggregator
from .objects import add_event, create_task, patch_task

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def events(response: requests.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line:
            yield json.loads(line)


def until(stream: Iterator[dict[str, Any]], predicate: Any, limit: int = 50) -> dict[str, Any]:
    for _, event in zip(range(limit), stream, strict=False):
        if predicate(event):
            return event
    raise AssertionError("the watch ended without the expected event")


def test_watch_follows_tasks_and_their_events(aggregator: Aggregator, team: str) -> None:
    admin = aggregator.token()
    task = create_task(aggregator, team, "watched", labels={"shown": "yes"})
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    from tests.support import wait_for

    wait_for(lambda: aggregator.get(f"{path}/watched", token=admin).status_code == 200, message="the task in the view")
    listed = aggregator.get(path, token=admin, params={"labelSelector": "shown=yes"}).json()
    version = listed["metadata"]["resourceVersion"]
    params = {"watch": "true", "resourceVersion": version, "labelSelector": "shown=yes", "timeoutSeconds": "20"}
    with aggregator.get(path, token=admin, params=params, stream=True) as response:
        assert response.status_code == 200
        stream = events(response)
        add_event(aggregator, task, "TaskCreated")
        modified = until(stream, lambda e: e["type"] == "MODIFIED")
        assert [e["reason"] for e in modified["object"]["status"]["events"]] == ["TaskCreated"]
        assert int(modified["object"]["metadata"]["resourceVersion"]) > int(version)
        patch_task(aggregator, team, "watched", {"metadata": {"labels": {"shown": "no"}}})
        deleted = until(stream, lambda e: e["type"] == "DELETED")
        assert deleted["object"]["metadata"]["labels"] == {"shown": "no"}


def test_watch_without_a_version_starts_with_the_current_objects(aggregator: Aggregator, team: str) -> None:
    for name in ("w1", "w2"):
        create_task(aggregator, team, name)
    admin = aggregator.token()
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    from tests.support import wait_for

    wait_for(lambda: len(aggregator.get(path, token=admin).json()["items"]) == 2, message="two tasks")
    with aggregator.get(path, token=admin, params={"watch": "1", "timeoutSeconds": "2"}, stream=True) as response:
        got = list(events(response))  # ends after timeoutSeconds
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in got] == [("ADDED", "w1"), ("ADDED", "w2")]

    params = {
        "watch": "true",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "3",
    }
    with aggregator.get(path, token=admin, params=params, stream=True) as response:
        got = list(events(response))
    assert [e["type"] for e in got[:3]] == ["ADDED", "ADDED", "BOOKMARK"]
    assert got[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert any(e["type"] == "BOOKMARK" for e in got[3:])  # the 1 s periodic bookmarks


def test_too_old_and_invalid_watches(aggregator: Aggregator, team: str) -> None:
    admin = aggregator.token()
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    with aggregator.get(path, token=admin, params={"watch": "true", "resourceVersion": "1"}, stream=True) as response:
        assert response.status_code == 200
        (error,) = list(events(response))
    assert error["type"] == "ERROR"
    assert error["object"]["code"] == 410 and error["object"]["reason"] == "Expired"
    assert error["object"]["message"].startswith("too old resource version: 1 (")
    invalid = aggregator.get(path, token=admin, params={"watch": "true", "resourceVersion": "5", "resourceVersionMatch": "NotOlderThan"})
    assert invalid.status_code == 422 and invalid.json()["reason"] == "Invalid"


def test_table_watch(aggregator: Aggregator, team: str) -> None:
    create_task(aggregator, team, "row", priority=2)
    admin = aggregator.token()
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    from tests.support import wait_for

    wait_for(lambda: aggregator.get(f"{path}/row", token=admin).status_code == 200, message="the task in the view")
    with aggregator.get(
        path, token=admin, params={"watch": "true", "timeoutSeconds": "1"}, headers={"Accept": TABLE}, stream=True
    ) as response:
        (added,) = list(events(response))
    assert added["type"] == "ADDED" and added["object"]["kind"] == "Table"
    assert added["object"]["rows"][0]["cells"][:2] == ["row", 2] and added["object"]["columnDefinitions"]
