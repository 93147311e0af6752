"""The events timeline's pure parts (:mod:`backend.dashboard.timeline`).

Behaviours: Events with the same involved object, type, reason and message collapse into one row whose count is
the sum (core/v1 ``count``, events.k8s.io ``series.count``, else one) with the earliest first and the latest last
time seen; other objects, types, reasons or messages stay apart; rows come newest first and say whether they are
about the page's object; the counts per type are summed counts; filtering keeps one type or all; ``?events=`` takes
Warning, Normal or All (absent: All) and anything else is a 400 naming the parameter; the filter links keep the
choice in the URL; rows beyond the cap are counted, not shown.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.api.problems import Problem
from backend.dashboard import timeline
from backend.dashboard.timeline import ALL, NORMAL, WARNING


def event(
    uid: str = "own",
    *,
    kind: str = "Darkroom",
    name: str = "web",
    type: str = "Warning",
    reason: str = "Failed",
    message: str = "boom",
    **fields: Any,
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{name}.{reason}", "uid": f"e-{uid}-{reason}-{message}"},
        "involvedObject": {"kind": kind, "name": name, "uid": uid},
        "type": type,
        "reason": reason,
        "message": message,
        **fields,
    }


def test_same_object_type_reason_and_message_collapse_with_summed_counts_and_the_span_seen() -> None:
    rows = timeline.collapse(
        [
            event(count=3, firstTimestamp="2031-01-01T10:00:00Z", lastTimestamp="2031-01-01T11:00:00Z"),
            event(count=2, firstTimestamp="2031-01-01T09:00:00Z", lastTimestamp="2031-01-01T12:00:00Z"),
            # recorded through events.k8s.io: no count, a series
            event(eventTime="2031-01-01T08:00:00.000000Z", series={"count": 4, "lastObservedTime": "2031-01-01T10:30:00.000000Z"}),
        ],
        own_uid="own",
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row.count, row.first, row.last) == (9, "2031-01-01T08:00:00.000000Z", "2031-01-01T12:00:00Z")
    assert (row.kind, row.name, row.own, row.type, row.reason, row.message) == ("Darkroom", "web", True, WARNING, "Failed", "boom")


def test_another_object_type_reason_or_message_is_another_row_newest_first() -> None:
    t = "2031-01-01T0{}:00:00Z"
    rows = timeline.collapse(
        [
            event(lastTimestamp=t.format(1)),
            event("child", kind="Deployment", lastTimestamp=t.format(2)),
            event(type="Normal", lastTimestamp=t.format(3)),
            event(reason="Other", lastTimestamp=t.format(4)),
            event(message="else", lastTimestamp=t.format(5)),
        ],
        own_uid="own",
    )
    assert [r.last for r in rows] == [t.format(n) for n in (5, 4, 3, 2, 1)]
    assert [r.count for r in rows] == [1] * 5  # no count at all: once
    assert [(r.kind, r.own) for r in rows if not r.own] == [("Deployment", False)]


def test_counts_are_summed_per_type_and_filtering_keeps_one_type_or_all() -> None:
    rows = timeline.collapse(
        [event(count=3), event(reason="B", count=2), event(type="Normal", reason="Started", count=5), event(type="Odd", reason="X")],
        own_uid="own",
    )
    assert timeline.counts(rows) == {WARNING: 5, ALL: 11, NORMAL: 5}
    assert {r.reason for r in timeline.shown(rows, WARNING)} == {"Failed", "B"}
    assert [r.reason for r in timeline.shown(rows, NORMAL)] == ["Started"]
    assert len(timeline.shown(rows, ALL)) == 4


@pytest.mark.parametrize(("value", "chosen"), [(None, ALL), ("All", ALL), ("Warning", WARNING), ("Normal", NORMAL)])
def test_the_filter_takes_warning_normal_or_all(value: str | None, chosen: str) -> None:
    assert timeline.parse_type(value) == chosen


@pytest.mark.parametrize("value", ["", "warning", "Error", "Warning,Normal"])
def test_any_other_filter_is_a_400_naming_the_parameter(value: str) -> None:
    with pytest.raises(Problem) as refused:
        timeline.parse_type(value)
    assert refused.value.status == 400
    assert refused.value.errors is not None and list(refused.value.errors) == ["events"]


def test_the_timeline_keeps_its_choice_in_the_url_says_when_empty_and_caps_its_rows() -> None:
    many = [event(message=f"m{n}", lastTimestamp=f"2031-01-01T00:{n // 60:02d}:{n % 60:02d}Z") for n in range(timeline.MAX_ROWS + 5)]
    shown = timeline.build(many, own_uid="own", base="/ui/darkrooms/ns/web", chosen=WARNING)
    assert (len(shown.rows), shown.hidden, shown.counts[WARNING]) == (timeline.MAX_ROWS, 5, timeline.MAX_ROWS + 5)
    assert shown.rows[0].message == f"m{timeline.MAX_ROWS + 4}"  # the newest kept
    assert shown.path == "/ui/darkrooms/ns/web?events=Warning"
    assert shown.href(ALL) == "/ui/darkrooms/ns/web"
    normal = timeline.build(many, own_uid="own", base="/ui/darkrooms/ns/web", chosen=NORMAL)
    assert (normal.rows, normal.empty) == ([], "No normal events.")
    assert timeline.build([], own_uid="own", base="/x", chosen=WARNING).empty == "No warnings."
    assert timeline.build([], own_uid="own", base="/x", chosen=ALL).empty == "No events."
