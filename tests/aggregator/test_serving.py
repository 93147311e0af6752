"""The aggregated server's API on the real control plane: what kubectl and client-go rely on.

Behaviours: discovery (group list, group, APIResourceList with verbs, short name, categories); OpenAPI v3
root and group-version document (CombinedTask tagged with its GVK, status.events of core/v1 Events); a
CombinedTask is the Task's metadata and spec with its Events (labelled or only about it) oldest first in
status.events, and 404 NotFound Status for a missing one; label and field selectors (metadata.name,
metadata.namespace, spec.priority, spec.taskState) and kube's 400s for bad ones; limit/continue pages
from one snapshot (a Task created between pages is not in the second), remainingItemCount, 400 for a
forged token; resourceVersion semantics (future: 504 Too large; Exact at an old version: 410; Match
without a version: 422 Invalid); Table output (columns, cells, includeObject); 405 for writes; health
endpoints without credentials; a list of 40 Tasks with 80 Events makes no API call (the server's own
request counter).
"""

from __future__ import annotations

import base64
import json

from .aggregated_server import GROUP_PATH, Aggregator
from .objects import add_event, create_task, wait_for_events

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def names(body: dict) -> list[str]:  # type: ignore[type-arg]
    return [i["metadata"]["name"] for i in body["items"]]


def test_discovery(aggregator: Aggregator) -> None:
    alice = aggregator.token("alice")
    groups = aggregator.get("/apis", token=alice).json()
    assert [g["name"] for g in groups["groups"]] == ["search.task.example.example.com"]
    group = aggregator.get("/apis/search.task.example.example.com", token=alice).json()
    assert group["preferredVersion"] == {"groupVersion": "search.task.example.example.com/v1", "version": "v1"}
    (resource,) = aggregator.get(GROUP_PATH, token=alice).json()["resources"]
    assert resource["name"] == "combinedtasks" and resource["kind"] == "CombinedTask" and resource["namespaced"] is True
    assert resource["verbs"] == ["get", "list", "watch"]
    assert resource["shortNames"] == ["ct"] and resource["categories"] == ["example"]
    missing = aggregator.get("/apis/other.example.com", token=alice)
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"


def test_openapi_v3(aggregator: Aggregator) -> None:
    alice = aggregator.token("alice")
    root = aggregator.get("/openapi/v3", token=alice).json()
    url = root["paths"]["apis/search.task.example.example.com/v1"]["serverRelativeURL"]
    doc = aggregator.get(url, token=alice).json()
    schemas = doc["components"]["schemas"]
    combined_schema = schemas["com.example.example.task.search.v1.CombinedTask"]
    assert combined_schema["x-kubernetes-group-version-kind"] == [
        {"group": "search.task.example.example.com", "kind": "CombinedTask", "version": "v1"}
    ]
    events = combined_schema["properties"]["status"]["properties"]["events"]
    assert events["items"]["allOf"][0]["$ref"] == "#/components/schemas/io.k8s.api.core.v1.Event"
    assert combined_schema["properties"]["spec"]["properties"]["priority"]["maximum"] == 10  # from the CRD
    assert "reason" in schemas["io.k8s.api.core.v1.Event"]["properties"]


def test_a_combined_task_holds_the_task_and_its_events_oldest_first(aggregator: Aggregator, team: str) -> None:
    task = create_task(aggregator, team, "report", priority=7, labels={"team": "blue"})
    add_event(aggregator, task, "TaskUpdated", seconds_ago=30)
    add_event(aggregator, task, "TaskCreated", seconds_ago=90)
    add_event(aggregator, task, "Noticed", seconds_ago=10, labelled=False)  # only about the Task (involvedObject)
    body = wait_for_events(aggregator, team, "report", 3)
    assert body["apiVersion"] == "search.task.example.example.com/v1" and body["kind"] == "CombinedTask"
    assert body["metadata"]["uid"] == task["metadata"]["uid"] and body["metadata"]["labels"] == {"team": "blue"}
    assert body["spec"] == task["spec"]
    assert [e["reason"] for e in body["status"]["events"]] == ["TaskCreated", "TaskUpdated", "Noticed"]
    assert body["status"]["events"][0]["kind"] == "Event" and body["status"]["events"][0]["involvedObject"]["name"] == "report"
    missing = aggregator.get(f"{GROUP_PATH}/namespaces/{team}/combinedtasks/nope", token=aggregator.token())
    assert missing.status_code == 404
    assert missing.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'combinedtasks.search.task.example.example.com "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "group": "search.task.example.example.com", "kind": "combinedtasks"},
        "code": 404,
    }


def test_selectors(aggregator: Aggregator, team: str) -> None:
    create_task(aggregator, team, "a", priority=9, labels={"tier": "gold"})
    create_task(aggregator, team, "b", priority=3, state="Finished", labels={"tier": "silver"})
    create_task(aggregator, team, "c", priority=9, state="Finished")
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    admin = aggregator.token()
    from tests.support import wait_for

    wait_for(lambda: len(aggregator.get(path, token=admin).json()["items"]) == 3, message="three tasks")

    def listed(**params: str) -> list[str]:
        response = aggregator.get(path, token=admin, params=params)
        assert response.status_code == 200, response.text
        return names(response.json())

    assert listed(fieldSelector="spec.priority=9") == ["a", "c"]
    assert listed(fieldSelector="spec.taskState=Finished,spec.priority!=9") == ["b"]
    assert listed(fieldSelector="metadata.name==b") == ["b"]
    assert listed(fieldSelector=f"metadata.namespace={team}") == ["a", "b", "c"]
    assert listed(labelSelector="tier in (gold,silver)") == ["a", "b"]
    assert listed(labelSelector="!tier") == ["c"]
    cluster_wide = aggregator.get(f"{GROUP_PATH}/combinedtasks", token=admin, params={"fieldSelector": f"metadata.namespace={team}"})
    assert names(cluster_wide.json()) == ["a", "b", "c"]
    for params, message in (
        ({"fieldSelector": "spec.details=x"}, "field label not supported: spec.details"),
        ({"fieldSelector": "spec.priority"}, "invalid selector: 'spec.priority'; can't understand 'spec.priority'"),
        ({"labelSelector": "tier in (gold"}, "unable to parse requirement"),
    ):
        response = aggregator.get(path, token=admin, params=params)
        assert response.status_code == 400, params
        assert response.json()["reason"] == "BadRequest" and message in response.json()["message"]


def test_limit_and_continue_page_through_one_snapshot(aggregator: Aggregator, team: str) -> None:
    for name in ("t1", "t2", "t3", "t4", "t5"):
        create_task(aggregator, team, name)
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    admin = aggregator.token()
    from tests.support import wait_for

    wait_for(lambda: len(aggregator.get(path, token=admin).json()["items"]) == 5, message="five tasks")
    first = aggregator.get(path, token=admin, params={"limit": "2"}).json()
    assert names(first) == ["t1", "t2"] and first["metadata"]["remainingItemCount"] == 3
    create_task(aggregator, team, "t2b")  # after the first page: not in this list
    wait_for(lambda: len(aggregator.get(path, token=admin).json()["items"]) == 6, message="six tasks")
    second = aggregator.get(path, token=admin, params={"limit": "2", "continue": first["metadata"]["continue"]}).json()
    assert names(second) == ["t3", "t4"] and second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    third = aggregator.get(path, token=admin, params={"limit": "2", "continue": second["metadata"]["continue"]}).json()
    assert names(third) == ["t5"] and "continue" not in third["metadata"]
    fresh = aggregator.get(path, token=admin).json()
    assert names(fresh) == ["t1", "t2", "t2b", "t3", "t4", "t5"]

    forged = base64.urlsafe_b64encode(json.dumps({"v": "meta.k8s.io/v1", "rv": 0, "start": "x"}).encode()).decode()
    for token in ("not-a-token!", forged):
        response = aggregator.get(path, token=admin, params={"continue": token})
        assert response.status_code == 400 and response.json()["message"].startswith("invalid continue token: "), response.text
    both = aggregator.get(path, token=admin, params={"continue": first["metadata"]["continue"], "resourceVersion": "5"})
    assert both.status_code == 400 and both.json()["message"] == "specifying resource version is not allowed when using continue"


def test_resource_versions(aggregator: Aggregator, team: str) -> None:
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    admin = aggregator.token()
    current = int(aggregator.get(path, token=admin).json()["metadata"]["resourceVersion"])
    assert aggregator.get(path, token=admin, params={"resourceVersion": str(current)}).status_code == 200
    assert aggregator.get(path, token=admin, params={"resourceVersion": "0"}).status_code == 200
    future = aggregator.get(path, token=admin, params={"resourceVersion": str(current + 1_000_000)})
    assert future.status_code == 504 and future.headers["Retry-After"] == "1"
    status = future.json()
    assert status["reason"] == "Timeout" and "Too large resource version" in status["message"]
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    old = aggregator.get(path, token=admin, params={"resourceVersion": "1", "resourceVersionMatch": "Exact"})
    assert old.status_code == 410 and old.json()["reason"] == "Expired"
    unmatched = aggregator.get(path, token=admin, params={"resourceVersionMatch": "NotOlderThan"})
    assert unmatched.status_code == 422
    assert unmatched.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            "field": "resourceVersionMatch",
        }
    ]
    bad = aggregator.get(path, token=admin, params={"resourceVersion": "abc"})
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"


def test_table_output(aggregator: Aggregator, team: str) -> None:
    task = create_task(aggregator, team, "tabled", priority=4, state="Finished")
    add_event(aggregator, task, "TaskCreated", seconds_ago=300)
    add_event(aggregator, task, "TaskFinished", seconds_ago=125)
    wait_for_events(aggregator, team, "tabled", 2)
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    table = aggregator.get(path, token=aggregator.token(), headers={"Accept": TABLE}).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Priority", "Deadline", "State", "Events", "Last Event", "Age"]
    (row,) = table["rows"]
    name, priority, deadline, state, events, last, age = row["cells"]
    assert (name, priority, deadline, state, events) == ("tabled", 4, "2030-01-01T00:00:00Z", "Finished", 2)
    assert last.startswith("TaskFinished (2m") and last.endswith(" ago)")
    assert age.endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "tabled"
    full = aggregator.get(path, token=aggregator.token(), headers={"Accept": TABLE}, params={"includeObject": "Object"}).json()
    assert full["rows"][0]["object"]["kind"] == "CombinedTask"
    one = aggregator.get(f"{path}/tabled", token=aggregator.token(), headers={"Accept": TABLE}).json()
    assert one["kind"] == "Table" and one["rows"][0]["cells"][0] == "tabled"
    protobuf_only = aggregator.get(path, token=aggregator.token(), headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert protobuf_only.status_code == 406 and protobuf_only.json()["reason"] == "NotAcceptable"


def test_writes_are_not_allowed_and_unknown_paths_are_not_found(aggregator: Aggregator, team: str) -> None:
    admin = aggregator.token()
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        response = aggregator.get(f"{GROUP_PATH}/namespaces/{team}/combinedtasks/x", token=admin, method=method)
        assert response.status_code == 405 and response.json()["reason"] == "MethodNotAllowed"
    response = aggregator.get(f"{GROUP_PATH}/namespaces/{team}/widgets", token=admin)
    assert response.status_code == 404 and response.json()["kind"] == "Status"


def test_health_endpoints_need_no_credentials(aggregator: Aggregator) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        response = aggregator.get(path)
        assert response.status_code == 200 and response.text == "ok"


def test_a_list_makes_no_api_call(aggregator: Aggregator, team: str) -> None:
    tasks = [create_task(aggregator, team, f"n{i:02d}", priority=i % 11) for i in range(40)]
    for task in tasks:
        add_event(aggregator, task, "TaskCreated", seconds_ago=20)
        add_event(aggregator, task, "TaskUpdated", seconds_ago=10)
    wait_for_events(aggregator, team, "n39", 2)
    admin = aggregator.token()
    path = f"{GROUP_PATH}/namespaces/{team}/combinedtasks"
    aggregator.get(path, token=admin)  # the admin's TokenReview is cached from here on (system:masters: no SubjectAccessReview)
    before = aggregator.metrics()
    for params in ({}, {"limit": "10"}, {"fieldSelector": "spec.priority=3"}):
        body = aggregator.get(path, token=admin, params=params).json()
        assert body["items"] and all(len(i["status"]["events"]) == 2 for i in body["items"])
    table = aggregator.get(f"{GROUP_PATH}/combinedtasks", token=admin, headers={"Accept": TABLE}).json()
    assert len([r for r in table["rows"] if r["object"]["metadata"]["namespace"] == team]) == 40
    after = aggregator.metrics()
    made = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
    calls = {key: count for key, count in made.items() if key[0] != "WATCH"}  # an informer may renew its watch meanwhile
    assert set(calls) <= {("POST", "tokenreviews")}, made  # at most a re-review when the 10 s token cache expired
    assert calls.get(("POST", "tokenreviews"), 0) <= 1
    assert ("WATCH", "tasks") in after and ("WATCH", "events") in after  # the informers: one list and watches, not calls per task
