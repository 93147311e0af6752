"""Table output of the aggregated server (aggregator.tables): content negotiation, cells, durations.

Behaviours: the Accept header picks a meta.k8s.io Table (v1, v1beta1) or plain JSON, kubectl's header
gets v1, protobuf-only is 406; includeObject values; human durations are apimachinery's HumanDuration
at each boundary; a row shows priority, deadline, the Task's state (Overdue from its condition,
Terminating), the Event count and the newest Event's reason and age.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from aggregator import tables
from aggregator.statuses import ApiError

NOW = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
KUBECTL = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def test_negotiation() -> None:
    assert tables.negotiate(KUBECTL) == "v1"
    assert tables.negotiate("application/json;as=Table;v=v1beta1;g=meta.k8s.io") == "v1beta1"
    assert tables.negotiate("application/json") is None
    assert tables.negotiate("") is None and tables.negotiate("*/*") is None
    assert tables.negotiate("application/json;as=Table;v=v9;g=meta.k8s.io, application/json") is None
    with pytest.raises(ApiError) as caught:
        tables.negotiate("application/vnd.kubernetes.protobuf")
    assert caught.value.code == 406
    assert tables.include_object(None) == "Metadata" and tables.include_object("None") == "None"
    with pytest.raises(ApiError):
        tables.include_object("Everything")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (125, "2m5s"), (599, "9m59s"), (600, "10m"),
        (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"), (47 * 3600, "47h"),
        (48 * 3600, "2d"), (49 * 3600, "2d1h"), (8 * 86400, "8d"), (730 * 86400, "2y"), (731 * 86400, "2y1d"), (8 * 365 * 86400, "8y"),
    ],
)  # fmt: skip
def test_human_duration(seconds: int, shown: str) -> None:
    assert tables.human_duration(seconds) == shown


def event(reason: str, when: str) -> dict[str, object]:
    return {"metadata": {"name": reason}, "reason": reason, "firstTimestamp": when, "lastTimestamp": when}


def test_cells() -> None:
    obj = {
        "metadata": {"name": "t", "creationTimestamp": "2030-01-01T11:00:00Z"},
        "spec": {"priority": 3, "deadline": "2030-01-01T10:00:00Z"},
        "status": {
            "events": (event("TaskCreated", "2030-01-01T11:00:00Z"), event("TaskOverdue", "2030-01-01T11:58:00Z")),
            "conditions": ({"type": "Overdue", "status": "True", "message": "late"},),
        },
    }
    assert tables.cells(obj, NOW) == ["t", 3, "2030-01-01T10:00:00Z", "Overdue", 2, "TaskOverdue (2m ago)", "60m"]
    bare = {"metadata": {"name": "u", "deletionTimestamp": "2030-01-01T11:59:00Z"}, "spec": {}}
    assert tables.cells(bare, NOW) == ["u", None, "", "Terminating", 0, "<none>", "<unknown>"]
    table = tables.table([obj], version="v1", include="None", list_meta={"resourceVersion": "5"}, now=NOW)
    assert table["metadata"] == {"resourceVersion": "5"} and "object" not in table["rows"][0]
    assert tables.table([], version="v1", include="Metadata", list_meta={}, headers=False)["columnDefinitions"] == []
