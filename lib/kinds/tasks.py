"""The Task kind (``example.example.com/v1``), described once.

Names the reconciler writes and the API reads (the Events' task-uid label, the finalizer, the
priority and deadline labels), the Overdue condition and what it means, the task states and
:func:`state`. ``tests/kinds/test_kinds.py`` holds ``crds/tasks.example.example.com.yaml`` against it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from kinds.fields import ApiField, Overlay
from kinds.states import ConditionMeaning, State, find_condition, terminating

GROUP = "example.example.com"
VERSION = "v1"  # the API version, served and stored, the only one
GROUP_VERSION = f"{GROUP}/{VERSION}"
KIND = "Task"
FINALIZER = "example.example.com/task-events"  # the reconciler's: a Task's Events are deleted with it
TASK_UID_LABEL = "example.example.com/task-uid"  # on each Event of a Task: the Task's UID (seed 000)
PRIORITY_LABEL = "example.example.com/priority"
DEADLINE_LABEL = "example.example.com/deadline"
DEADLINE_LABEL_FORMAT = "%Y%m%dT%H%M%SZ"

TASK_STATES = ("Pending", "Finished")  # spec.taskState
# The CRD's selectableFields (kube 1.32+): `kubectl get tasks --field-selector spec.taskState=Pending`;
# the aggregated combinedtasks API accepts the same field labels.
DEFAULT_TASK_STATE = "Pending"


def _priority(obj: Mapping[str, Any]) -> str:
    value = (obj.get("spec") or {}).get("priority")
    return "" if value is None else str(value)


# Each selectable field's value on a stored Task, as a string (kube compares field selector values as strings; the
# state's default counts, as the API server stores it).
SELECTABLE: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "spec.priority": _priority,
    "spec.taskState": lambda obj: str((obj.get("spec") or {}).get("taskState") or DEFAULT_TASK_STATE),
}
SELECTABLE_FIELDS = tuple(SELECTABLE)
FINISHED = "Finished"

OVERDUE = "Overdue"  # True: the deadline passed before the Task was finished
CONDITIONS: Mapping[str, ConditionMeaning] = {OVERDUE: ConditionMeaning(OVERDUE, good_status="False")}

STATE_FINISHED = State("Finished", "Finished", "good")
STATE_PENDING = State("Pending", "Pending", "progress")
STATE_OVERDUE = State("Overdue", "Overdue", "bad")
STATE_TERMINATING = State("Terminating", "Terminating", "idle")
STATES: tuple[State, ...] = (STATE_FINISHED, STATE_PENDING, STATE_OVERDUE, STATE_TERMINATING)


# The API's words for the spec fields (the CRD says the rest: types, bounds, the enum): kinds.fields.
API = Overlay(
    kind=KIND,
    fields={
        "priority": ApiField(ask="0 (lowest) to 10 (highest)."),
        "deadline": ApiField(ask="When the task is due (RFC 3339 with a timezone; stored in UTC).", tell="RFC 3339 timestamp as stored."),
        "details": ApiField(ask="What has to be done.", shown_default=""),
        "state": ApiField(ask=f"{' or '.join(TASK_STATES)}; default {DEFAULT_TASK_STATE}.", shown_default=DEFAULT_TASK_STATE),
    },
    renames={"taskState": "state"},  # the friendly name of spec.taskState
)


class TaskSpec(TypedDict, total=False):
    priority: int
    deadline: str
    details: str
    taskState: str


def state(obj: Mapping[str, Any]) -> State:
    """The one state of a stored Task (a CR object): Terminating, Finished, Overdue or Pending."""
    if terminating(obj):
        return STATE_TERMINATING.because("deletion requested; waiting for the reconciler to remove its Events")
    if ((obj.get("spec") or {}).get("taskState") or DEFAULT_TASK_STATE) == FINISHED:
        return STATE_FINISHED
    overdue = find_condition(obj, OVERDUE)
    if overdue is not None and overdue.get("status") == "True":
        return STATE_OVERDUE.because(str(overdue.get("message") or ""))
    return STATE_PENDING
