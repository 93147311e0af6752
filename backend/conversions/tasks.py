"""Task: friendly payload ↔ ``example.example.com/v1`` Task CR.

Friendly ``state`` is ``spec.taskState``; ``deadline`` is written in UTC (``...Z``);
``status.overdue`` is the reconciler's ``Overdue`` condition. Called by :mod:`backend.tasks` and
:mod:`backend.dashboard`. A Task with its Events is not a friendly payload: it is the CombinedTask
(:func:`cluster.taskevents.combined`, served by :mod:`backend.combinedtasks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from backend.conversions import condition, conditions, object_fields
from kinds import tasks as kind

RENAMES = {"taskState": "state"}


def to_friendly(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    overdue = condition(status.get("conditions") or (), kind.OVERDUE)
    state = kind.state(obj)
    return {
        **object_fields(obj),
        "priority": spec.get("priority"),
        "deadline": spec.get("deadline"),
        "details": spec.get("details") or "",
        "state": spec.get("taskState") or kind.DEFAULT_TASK_STATE,
        "status": {
            "state": state.key,
            "stateMessage": state.detail,
            "overdue": overdue is not None and overdue.get("status") == "True",
            "conditions": conditions(status),
            "observedGeneration": status.get("observedGeneration"),
        },
    }


def rfc3339(moment: datetime) -> str:
    """UTC, ``Z`` suffix, fractions only when present."""
    text = moment.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def to_spec(friendly: Mapping[str, Any]) -> dict[str, Any]:
    deadline = friendly["deadline"]
    spec: dict[str, Any] = {
        "priority": friendly["priority"],
        "deadline": rfc3339(deadline) if isinstance(deadline, datetime) else str(deadline),
    }
    if friendly.get("details") is not None:
        spec["details"] = friendly["details"]
    if friendly.get("state") is not None:
        spec["taskState"] = friendly["state"]
    return spec
