"""The events timeline's pure parts (:mod:`backend.dashboard.timeline`).

Behaviours: Events with the same involved object, type, reason and message collapse into one row whose count is
the sum (core/v1 ``count``, events.k8s.io ``series.count``, else one) with the earliest first and the latest last
time seen; other objects, types, reasons or messages stay apart; rows come newest first and say whether they are
about the page's object; the counts per type are summed counts; filtering keeps one type or all; ``?events=`` takes
Warning, Normal or All (absent: All) and anything else is a 400 naming the parameter; the filter links keep the
choice in the URL; rows beyond the cap are counted, not shown. A list row's Warning count sums the Warnings about its
object, its cached children and theirs down to the Pods (a Deployment's ReplicaSets and their Pods, a StatefulSet's
Pods), found by index lookups only — never a list; a Warning about such a Pod or ReplicaSet names the row's object as
the one it changes (controller references walked up by key), one about an unrelated Pod, a Normal Event, or an Event
about an earlier object of the same name none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from backend.api.problems import Problem
from backend.core.access import CHILDREN, CONTROLLER_UID, INVOLVED_UID, TASK_UID
from backend.dashboard import timeline
from backend.dashboard.timeline import ALL, NORMAL, WARNING
from cluster import FrozenDict, freeze
from tests.dashboard.test_resource_tree_states import DARKROOM, DEPLOYMENT, NEW_RS, NS, OLD_RS, PAGE_UID, PODS, Cache, obj, pod


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


# -- the list rows' Warning badge -------------------------------------------------------------------------------------


@dataclass
class Reader:
    """The person's client as the badge reads it: index lookups of the cache (objects and Events), never a list."""

    objects: list[FrozenDict]
    events: list[FrozenDict]
    calls: list[str] = field(default_factory=list)

    def by_index(self, resource: Any, index: str, value: str) -> list[FrozenDict]:
        self.calls.append(f"{resource.plural} {index} {value}")
        if index == CONTROLLER_UID:
            return [o for o in self.objects if o["kind"] == resource.kind and value in _controller_uids(o)]
        assert resource.plural == "events" and index in (INVOLVED_UID, TASK_UID)
        return [e for e in self.events if index == INVOLVED_UID and e["involvedObject"]["uid"] == value]

    def list(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the badge never lists")


def _controller_uids(o: FrozenDict) -> list[str]:
    return [r["uid"] for r in o["metadata"].get("ownerReferences") or () if r.get("controller")]


def recorded(about: FrozenDict, *, type: str = WARNING, count: int = 1, uid: str | None = None) -> FrozenDict:
    meta = about["metadata"]
    involved = {"kind": about["kind"], "name": meta["name"], "namespace": NS, "uid": uid or meta["uid"]}
    name = f"{about['kind'].lower()}.{meta['name']}.{type}.{count}.{uid}"
    return cast(FrozenDict, freeze({"metadata": {"name": name, "namespace": NS, "uid": f"e-{name}"}, "involvedObject": involved,
                                    "type": type, "reason": "BackOff", "message": "m", "count": count}))  # fmt: skip


STS = obj("StatefulSet", "db", "uid-sts", controller=("Postgresql", "db", "uid-db"))
DB = obj("Postgresql", "db", "uid-db")
DB_POD = pod("db-0", STS, "StatefulSet")
STRANGER = pod("x-1", obj("ReplicaSet", "x", "uid-x"), "ReplicaSet")
SERVICE = obj("Service", "web", "uid-svc", controller=("Darkroom", "web", PAGE_UID))
OBJECTS = [DEPLOYMENT, NEW_RS, OLD_RS, *PODS, SERVICE, STS, DB_POD, STRANGER]


def test_the_badge_counts_the_warnings_of_the_pods_and_replicasets_under_its_children_by_index_lookups() -> None:
    events = [
        recorded(DARKROOM, count=2),
        recorded(DEPLOYMENT),
        recorded(NEW_RS, count=3),
        recorded(OLD_RS),
        recorded(PODS[0], count=4),  # BackOff of a Pod of its ReplicaSet
        recorded(PODS[1], type=NORMAL, count=50),  # Normal: not counted
        recorded(SERVICE),
        recorded(STRANGER, count=100),  # another object's Pod
        recorded(DB_POD, count=7),
    ]
    reader = Reader(OBJECTS, events)
    assert timeline.warning_count(cast(Any, reader), PAGE_UID) == 2 + 1 + 3 + 1 + 4 + 1
    assert timeline.warning_count(cast(Any, reader), "uid-db") == 7  # a StatefulSet's Pod
    assert timeline.warning_count(cast(Any, reader), "") == 0
    reader.calls.clear()
    timeline.warning_count(cast(Any, reader), PAGE_UID)
    lookups = [call for call in reader.calls if CONTROLLER_UID in call]
    # one lookup per child kind, then one under the Deployment and one under each of its ReplicaSets — never under a
    # Pod, a Service or anything else
    assert sorted(lookups) == sorted([
        f"deployments {CONTROLLER_UID} {PAGE_UID}", f"services {CONTROLLER_UID} {PAGE_UID}",
        f"ingresses {CONTROLLER_UID} {PAGE_UID}", f"statefulsets {CONTROLLER_UID} {PAGE_UID}",
        f"replicasets {CONTROLLER_UID} uid-deploy", f"pods {CONTROLLER_UID} uid-rs2", f"pods {CONTROLLER_UID} uid-rs1",
    ])  # fmt: skip
    events_looked_up = [call for call in reader.calls if call.startswith("events ")]
    # the Darkroom's (by involved UID and Task label), its Deployment's and Service's, 2 ReplicaSets', 2 Pods'
    assert len(events_looked_up) == 2 + 2 + 2 + 2 == len(reader.calls) - len(lookups)
    c, r, p = 2, 2, 2
    assert len(reader.calls) <= 2 + len(CHILDREN) + 2 * c + 2 * r + p  # the module docstring's bound


def test_a_pods_or_replicasets_warning_changes_the_row_of_the_object_above_it() -> None:
    from cluster import DARKROOMS, POSTGRESQLS

    cache = cast(Any, Cache(DARKROOM, DB, *OBJECTS))
    assert timeline.owner_of(recorded(PODS[0]), DARKROOMS, cache) == DARKROOM  # Pod → ReplicaSet → Deployment → Darkroom
    assert timeline.owner_of(recorded(NEW_RS), DARKROOMS, cache) == DARKROOM
    assert timeline.owner_of(recorded(DEPLOYMENT), DARKROOMS, cache) == DARKROOM
    assert timeline.owner_of(recorded(DARKROOM), DARKROOMS, cache) == DARKROOM
    assert timeline.owner_of(recorded(DB_POD), POSTGRESQLS, cache) == DB  # Pod → StatefulSet → Postgresql
    assert timeline.owner_of(recorded(DB_POD), DARKROOMS, cache) is None
    assert timeline.owner_of(recorded(PODS[0]), POSTGRESQLS, cache) is None
    assert timeline.owner_of(recorded(STRANGER), DARKROOMS, cache) is None  # its ReplicaSet is no child of ours
    assert timeline.owner_of(recorded(PODS[0], type=NORMAL), DARKROOMS, cache) is None
    assert timeline.owner_of(recorded(PODS[0], uid="uid-of-an-earlier-web-2-a"), DARKROOMS, cache) is None
    gone = cast(Any, Cache(DARKROOM, DEPLOYMENT, *PODS))  # the ReplicaSet not (or no longer) cached
    assert timeline.owner_of(recorded(PODS[0]), DARKROOMS, gone) is None
    bare = pod("bare", DARKROOM, "Darkroom")  # a Pod the Darkroom controls itself: no workload the tree shows
    assert timeline.owner_of(recorded(bare), DARKROOMS, cast(Any, Cache(DARKROOM, bare))) is None
