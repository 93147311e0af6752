"""Task payloads: validation with friendly field paths, deadline normalised to UTC, ``state`` ↔
``spec.taskState``, overdue from the Overdue condition, Events of a CombinedTask, output matching
the published schemas.
"""

from __future__ import annotations

from typing import Any

import pytest
from marshmallow import ValidationError

from backend.conversions import tasks as conversion
from backend.payloads import flatten
from backend.schemas.tasks import TaskCreateSchema, TaskUpdateSchema
from unit.backend import conformance

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


def test_events_oldest_first_with_series_fallbacks() -> None:
    updated = {"reason": "TaskUpdated", "message": "m2", "type": "Normal", "count": 2}
    created = {"reason": "TaskCreated", "message": "m1", "type": "Normal"}
    events: list[dict[str, Any]] = [
        {"metadata": {"name": "b"}, **updated, "firstTimestamp": "2027-01-02T00:00:00Z", "lastTimestamp": "2027-01-03T00:00:00Z"},
        {
            "metadata": {"name": "a"},
            **created,
            "eventTime": "2027-01-01T00:00:00.000000Z",
            "series": {"count": 3, "lastObservedTime": "2027-01-01T01:00:00.000000Z"},
        },
    ]
    shown = conversion.events_of(events)
    assert [e["reason"] for e in shown] == ["TaskCreated", "TaskUpdated"]
    assert shown[0] == {
        "reason": "TaskCreated",
        "message": "m1",
        "type": "Normal",
        "count": 3,
        "firstTimestamp": "2027-01-01T00:00:00.000000Z",
        "lastTimestamp": "2027-01-01T01:00:00.000000Z",
    }
    task = {**conversion.to_friendly(cr_of(TaskCreateSchema().load(TASK))), "events": shown}
    conformance.validate(task, "CombinedTask")
