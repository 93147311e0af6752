"""The Task reconciler's pure rules (darkroom_operator.tasks): deadlines, labels, the Overdue condition.

Behaviours: RFC 3339 deadlines with Z, offsets or fractions parse to UTC (malformed → None); the
deadline label is ISO 8601 basic UTC (a valid label value, no ':'); priority becomes a label;
Overdue is True at and after the deadline for a Pending task, False before (with the seconds to
wait) and for a Finished task, Unknown for a malformed deadline; deterministic Event names stay
within 253 characters.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from darkroom_operator.runtime.recording import event_name
from darkroom_operator.tasks import deadline_label, desired_labels, overdue, parse_deadline

from kinds.tasks import DEADLINE_LABEL, PRIORITY_LABEL

DEADLINE = datetime(2027, 3, 31, 17, 0, 0, tzinfo=UTC)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def task(deadline: str = "2027-03-31T17:00:00Z", state: str = "Pending", priority: Any = 5) -> dict[str, Any]:
    return {"metadata": {"name": "t", "generation": 4}, "spec": {"priority": priority, "deadline": deadline, "taskState": state}}


@pytest.mark.parametrize(
    "text", ["2027-03-31T17:00:00Z", "2027-03-31t17:00:00z", "2027-03-31T19:00:00+02:00", "2027-03-31T17:00:00.000Z", "2027-03-31T17:00:00"]
)
def test_parse_deadline(text: str) -> None:
    assert parse_deadline(text) == DEADLINE


@pytest.mark.parametrize("value", [None, "", "tomorrow", 5, "2027-13-01T00:00:00Z"])
def test_parse_deadline_rejects(value: object) -> None:
    assert parse_deadline(value) is None


def test_labels() -> None:
    labels = desired_labels(task("2027-03-31T19:00:00+02:00"))
    assert labels == {PRIORITY_LABEL: "5", DEADLINE_LABEL: "20270331T170000Z"}
    assert all(LABEL_VALUE.match(v or "") and len(v or "") <= 63 for v in labels.values())
    assert deadline_label(DEADLINE) == "20270331T170000Z"
    assert desired_labels(task("nonsense", priority=None)) == {PRIORITY_LABEL: None, DEADLINE_LABEL: None}


def test_overdue_before_at_and_after_the_deadline() -> None:
    before, wait_s = overdue(task(), DEADLINE - timedelta(seconds=90))
    assert (before["status"], before["reason"], before["message"], before["observedGeneration"]) == (
        "False",
        "NotDue",
        "the task is due at 2027-03-31T17:00:00Z",
        4,
    )
    assert wait_s == 90
    at, wait_s = overdue(task(), DEADLINE)
    assert (at["status"], at["reason"], at["message"], wait_s) == (
        "True",
        "DeadlinePassed",
        "the task was due at 2027-03-31T17:00:00Z",
        None,
    )
    after, wait_s = overdue(task(), DEADLINE + timedelta(days=1))
    assert (after["status"], wait_s) == ("True", None)


def test_finished_and_malformed() -> None:
    finished, wait_s = overdue(task(state="Finished"), DEADLINE + timedelta(days=1))
    assert (finished["status"], finished["reason"], wait_s) == ("False", "Finished", None)
    malformed, wait_s = overdue(task("nonsense"), DEADLINE)
    assert (malformed["status"], malformed["reason"], wait_s) == ("Unknown", "InvalidDeadline", None)


def test_overdue_accepts_a_naive_clock_as_utc() -> None:
    condition, wait_s = overdue(task(), datetime(2027, 3, 31, 16, 59, 0))
    assert condition["status"] == "False" and wait_s == 60


def test_event_names_fit_a_dns_subdomain() -> None:
    assert event_name("t", "0f6b5c8e.created") == "t.0f6b5c8e.created"
    long_name = event_name("a" * 250 + "-b", "0f6b5c8e.updated-12")
    assert len(long_name) == 253 and long_name.endswith("a.0f6b5c8e.updated-12")
    assert event_name("x" * 230 + "." + "y" * 30, "0f6b5c8e.deleted").count("..") == 0
