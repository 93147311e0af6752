"""Task payloads: validation with friendly field paths, deadline normalised to UTC, ``state`` ↔
``spec.taskState``, overdue from the Overdue condition, the CombinedTask (its Events oldest first, as stored), output matching
the published schemas.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from marshmallow import ValidationError

from backend.core.kinds import tasks as conversion
from backend.core.schemas.tasks import TaskCreateSchema, TaskUpdateSchema
from backend.core.validation import flatten
from cluster import taskevents
from tests.core import conformance

TASK = {"name": "write-release-notes", "priority": 5, "deadline": "2027-03-31T19:00:00+02:00", "details": "Notes.", "state": "Pending"}


def cr_of(friendly: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": friendly["name"], "namespace": friendly["namespace"], "uid": "t-1", "resourceVersion": "3", "generation": 1},
        "spec": conversion.to_spec(friendly),
        "status": status,
    }


def test_payload_to_cr_and_back() -> None:
    friendly = TaskCreateSchema().load(TASK)
    cr = cr_of(friendly)
    assert cr["spec"] == {"priority": 5, "deadline": "2027-03-31T17:00:00Z", "details": "Notes.", "taskState": "Pending"}
    back = conversion.to_friendly(cr)
    assert {k: back[k] for k in ("name", "namespace", "priority", "deadline", "details", "state")} == {
        **TASK,
        "namespace": "default",
        "deadline": "2027-03-31T17:00:00Z",
    }
    assert back["status"] == {"state": "Pending", "stateMessage": "", "overdue": False, "conditions": [], "observedGeneration": None}
    conformance.validate(back, "Task")
    assert TaskUpdateSchema().load(back)["priority"] == 5  # a response is a valid PUT body


def test_minimal_task_leaves_defaults_to_the_crd() -> None:
    friendly = TaskCreateSchema().load({"name": "t", "priority": 0, "deadline": "2027-01-01T00:00:00.250Z"})
    assert conversion.to_spec(friendly) == {"priority": 0, "deadline": "2027-01-01T00:00:00.250000Z"}
    assert conversion.to_friendly(cr_of(friendly))["state"] == "Pending"


def test_overdue_follows_the_reconcilers_condition() -> None:
    friendly = TaskCreateSchema().load(TASK)
    overdue = {"type": "Overdue", "status": "True", "reason": "DeadlinePassed", "message": "", "lastTransitionTime": "2027-03-31T17:00:00Z"}
    shown = conversion.to_friendly(cr_of(friendly, conditions=[overdue], observedGeneration=1))
    assert shown["status"] == {"state": "Overdue", "stateMessage": "", "overdue": True, "conditions": [overdue], "observedGeneration": 1}
    conformance.validate(shown, "Task")


BAD = [
    ({"name": "Bad_Name"}, "name"),
    ({"priority": 11}, "priority"),
    ({"priority": "high"}, "priority"),
    ({"deadline": "2027-03-31T17:00:00"}, "deadline"),
    ({"deadline": "tomorrow"}, "deadline"),
    ({"details": "x" * 4097}, "details"),
    ({"state": "Done"}, "state"),
    ({"owner": "me"}, "owner"),
]


@pytest.mark.parametrize(("change", "path"), BAD, ids=[p + str(i) for i, (_, p) in enumerate(BAD)])
def test_each_rule_reports_on_its_friendly_path(change: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        TaskCreateSchema().load({**TASK, **change})
    assert path in flatten(caught.value.messages)


def test_the_combined_task_is_the_aggregated_apis_object_with_events_oldest_first() -> None:
    task = cr_of(TaskCreateSchema().load(TASK), conditions=[{"type": "Overdue", "status": "False"}], observedGeneration=1)
    updated = {"reason": "TaskUpdated", "message": "m2", "type": "Normal", "count": 2, "involvedObject": {"uid": "t-1"}}
    created = {"reason": "TaskCreated", "message": "m1", "type": "Normal", "involvedObject": {"uid": "t-1"}}
    events: list[dict[str, Any]] = [
        {"metadata": {"name": "b", "resourceVersion": "9"}, **updated, "firstTimestamp": "2027-01-02T00:00:00Z"},
        {"metadata": {"name": "a", "resourceVersion": "7"}, **created, "eventTime": "2027-01-01T00:00:00.000000Z", "series": {"count": 3}},
    ]
    ordered = taskevents.ordered(events)
    combined = taskevents.combined(task, ordered, resource_version=taskevents.latest_version(task, ordered))
    assert [e["reason"] for e in combined["status"]["events"]] == ["TaskCreated", "TaskUpdated"]
    assert combined["status"]["events"][0] == events[1]  # the Event as stored, not a summary of it
    assert (combined["apiVersion"], combined["kind"]) == ("search.task.example.example.com/v1", "CombinedTask")
    assert combined["metadata"] == {**task["metadata"], "resourceVersion": "9"}  # the newest of the Task and its Events
    assert combined["spec"] == task["spec"]
    assert combined["status"]["conditions"] == task["status"]["conditions"] and combined["status"]["observedGeneration"] == 1
    conformance.validate(orjson.loads(orjson.dumps(combined)), "CombinedTask")  # as the API sends it
    assert taskevents.latest_version(task, []) == "3"
