"""``/tasks``, ``/combinedtasks`` and ``/namespaces`` against devcluster: Task CRUD with friendly fields
(``state`` ↔ ``spec.taskState``, deadline in UTC; the seed's ``taskState`` accepted as an alias of
``state``, 422 naming both when they differ), 202 while a finalizer holds a Task, Events joined from the
cache by label and involvedObject with zero API requests into the aggregated API's CombinedTask (the
Task's metadata and spec, the stored Events in status.events), the namespace list, and an API limited
to one namespace.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from cluster import EVENTS, TASKS
from tests.core import conformance
from tests.support import wait_for

from .payloads import task, webfolder

GROUP, VERSION, PLURAL = "example.example.com", "v1", "tasks"


def test_task_lifecycle(http: FlaskClient, namespace: str, custom: Any) -> None:
    response = http.post("/tasks", json=task("notes", namespace, deadline="2027-03-31T19:00:00+02:00"))
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    conformance.validate(body, "Task")
    assert (body["deadline"], body["state"], body["priority"]) == ("2027-03-31T17:00:00Z", "Pending", 5)
    assert body["status"] == {"state": "Pending", "stateMessage": "", "overdue": False, "conditions": [], "observedGeneration": None}
    url = f"/tasks/{namespace}/notes"
    assert http.get(url).get_json() == body
    finished = http.patch(url, json={"state": "Finished"})
    assert finished.status_code == 200
    assert custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "notes")["spec"]["taskState"] == "Finished"
    replaced = http.put(url, json={"priority": 9, "deadline": "2028-01-01T00:00:00Z"})
    assert replaced.status_code == 200
    assert {k: replaced.get_json()[k] for k in ("priority", "deadline", "details", "state")} == {
        "priority": 9,
        "deadline": "2028-01-01T00:00:00Z",
        "details": "",
        "state": "Pending",
    }
    errors = http.post("/tasks", json=task("late", namespace, deadline="2027-03-31 17:00", state="Done")).get_json()["errors"]
    assert set(errors) == {"deadline", "state"}
    assert http.delete(url).status_code == 204
    assert http.get(url).status_code == 404


def test_the_seeds_task_state_is_an_alias_of_state(http: FlaskClient, namespace: str, custom: Any) -> None:
    def stored() -> Any:
        return custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "seed")["spec"].get("taskState")

    response = http.post("/tasks", json=task("seed", namespace, taskState="Finished"))
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    conformance.validate(body, "Task")
    assert body["state"] == "Finished" and "taskState" not in body  # responses keep state only
    assert stored() == "Finished"
    url = f"/tasks/{namespace}/seed"
    replaced = http.put(url, json={"priority": 1, "deadline": "2028-01-01T00:00:00Z", "taskState": "Pending", "state": "Pending"})
    assert replaced.status_code == 200, replaced.get_data(as_text=True)
    assert replaced.get_json()["state"] == "Pending" and stored() == "Pending"
    patched = http.patch(url, json={"taskState": "Finished"})  # replaces the stored state, not merged beside it
    assert patched.status_code == 200, patched.get_data(as_text=True)
    assert patched.get_json()["state"] == "Finished" and "taskState" not in patched.get_json()
    assert stored() == "Finished"
    assert http.patch(url, json={"taskState": None}).get_json()["state"] == "Pending"  # null removes, as for state
    for method, payload in (
        ("POST", task("clash", namespace, state="Pending", taskState="Finished")),
        ("PUT", {"priority": 1, "deadline": "2028-01-01T00:00:00Z", "state": "Pending", "taskState": "Finished"}),
        ("PATCH", {"state": "Pending", "taskState": "Finished"}),
    ):
        refused = http.open("/tasks" if method == "POST" else url, method=method, json=payload)
        assert refused.status_code == 422, (method, refused.get_data(as_text=True))
        errors = refused.get_json()["errors"]
        assert set(errors) == {"state", "taskState"}, (method, errors)
        assert all("taskState" in m and "state" in m.replace("taskState", "") for m in errors["state"])
    assert set(http.post("/tasks", json=task("bad", namespace, taskState="Done")).get_json()["errors"]) == {"taskState"}
    assert stored() == "Pending"  # the CRD default, after the null; no refused write changed it
    assert http.get(f"/tasks/{namespace}/clash").status_code == 404


def test_a_task_held_by_a_finalizer_is_terminating(http: FlaskClient, namespace: str, custom: Any) -> None:
    assert http.post("/tasks", json=task("held", namespace)).status_code == 201
    custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "held", {"metadata": {"finalizers": ["example.com/events"]}})
    response = http.delete(f"/tasks/{namespace}/held")
    assert response.status_code == 202
    assert response.get_json()["terminating"] is True
    custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "held", {"metadata": {"finalizers": None}})
    wait_for(lambda: http.get(f"/tasks/{namespace}/held").status_code == 404, timeout_s=10, message="the Task goes")


def event(access: ClusterAccess, namespace: str, name: str, task_body: dict[str, Any], *, reason: str, first: str, labelled: bool) -> None:
    """Record an Event as the reconciler would (labelled), or as another tool would (involvedObject only)."""
    involved = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Task", "name": task_body["name"], "namespace": namespace}
    if not labelled:
        involved["uid"] = task_body["uid"]
    labels = {"example.example.com/task-uid": task_body["uid"]} if labelled else {}
    access.client.create(
        EVENTS,
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "involvedObject": involved,
            "reason": reason,
            "message": f"{reason} {task_body['name']}",
            "type": "Normal",
            "count": 1,
            "firstTimestamp": first,
            "lastTimestamp": first,
        },
    )


@pytest.fixture
def counted_requests(access: ClusterAccess, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Paths of the requests the API's client sends while the test runs (observed, not altered)."""
    seen: list[str] = []
    transport = access.client.transport
    original = transport.request

    def counting(method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        seen.append(f"{method} {path}")
        return original(method, path, **kwargs)

    monkeypatch.setattr(transport, "request", counting)
    yield seen


def test_combined_tasks_join_events_from_the_cache(
    http: FlaskClient, namespace: str, access: ClusterAccess, counted_requests: list[str]
) -> None:
    one = http.post("/tasks", json=task("one", namespace)).get_json()
    two = http.post("/tasks", json=task("two", namespace)).get_json()
    event(access, namespace, "one.created", one, reason="TaskCreated", first="2027-01-01T00:00:00Z", labelled=True)
    event(access, namespace, "one.updated", one, reason="TaskUpdated", first="2027-01-02T00:00:00Z", labelled=True)
    event(access, namespace, "one.other-tool", one, reason="Noticed", first="2027-01-01T12:00:00Z", labelled=False)
    url = f"/combinedtasks?namespace={namespace}"

    def joined() -> int:
        return sum(len(t["status"]["events"]) for t in http.get(url).get_json()["items"])

    wait_for(lambda: joined() == 3, timeout_s=10, message="events reach the cache")
    counted_requests.clear()
    listed = http.get(url).get_json()
    single = http.get(f"/combinedtasks/{namespace}/one")
    assert counted_requests == []  # N tasks with their events: zero API requests
    conformance.validate(listed, "CombinedTaskList")
    first, second = listed["items"]
    assert [t["metadata"]["name"] for t in listed["items"]] == ["one", "two"]
    assert (first["apiVersion"], first["kind"]) == ("search.task.example.example.com/v1", "CombinedTask")  # kubectl get ct's object
    stored_task = next(t for t in access.client.list(TASKS, namespace=namespace) if t["metadata"]["name"] == "one")
    assert first["spec"] == stored_task["spec"] and first["metadata"]["uid"] == stored_task["metadata"]["uid"]
    shown = first["status"]["events"]
    assert [e["reason"] for e in shown] == ["TaskCreated", "Noticed", "TaskUpdated"]
    stored = {e["metadata"]["name"]: e for e in access.client.list(EVENTS, namespace=namespace)}
    assert shown == [stored[name] for name in ("one.created", "one.other-tool", "one.updated")]  # the Events as stored
    newest = max(int(v) for v in (first["metadata"]["resourceVersion"], *(e["metadata"]["resourceVersion"] for e in shown)))
    assert int(first["metadata"]["resourceVersion"]) == newest  # the combination changes when an Event does
    assert second["status"]["events"] == []
    assert second["metadata"]["uid"] == two["uid"]
    assert single.get_json() == first
    conformance.validate(single.get_json(), "CombinedTask")
    assert http.get(f"/combinedtasks/{namespace}/nothing").status_code == 404
    page = http.get(f"{url}&limit=1").get_json()
    assert ([t["metadata"]["name"] for t in page["items"]], page["total"]) == (["one"], 2)


def test_namespaces_for_the_switcher(http: FlaskClient, namespace: str) -> None:
    def names() -> list[str]:
        body = http.get("/namespaces").get_json()
        conformance.validate(body, "NamespaceList")
        return [n["name"] for n in body["items"]]

    wait_for(lambda: namespace in names(), timeout_s=10, message="the new namespace is listed")
    assert "default" in names()


def test_an_api_limited_to_one_namespace_serves_only_it(api_settings: ApiSettings, crds_installed: None, namespace: str) -> None:
    settings = ApiSettings(kubeconfig=api_settings.kubeconfig, namespace=namespace)
    access = ClusterAccess.start(settings, environ={})
    try:
        http = create_app(settings, access=access).test_client()
        assert http.post("/darkrooms", json=webfolder("mine", namespace)).status_code == 201
        assert http.post("/darkrooms", json=webfolder("theirs", "default")).status_code == 422
        assert [i["name"] for i in http.get("/darkrooms").get_json()["items"]] == ["mine"]
        assert http.get("/darkrooms?namespace=default").get_json()["items"] == []
        assert http.get("/darkrooms/default/anything").status_code == 404
        assert [n["name"] for n in http.get("/namespaces").get_json()["items"]] == [namespace]
    finally:
        access.stop()
