"""The orders of a list (:mod:`backend.core.ordering`): the age order's value is the creation time as the server writes
it — the body's own string when written that way, so a kept order holds no object of its own per row — and sorts as
the times do whatever form a timestamp came in."""

from __future__ import annotations

from typing import Any

from backend.core import ordering
from backend.core.kinds.darkrooms import DarkroomKind
from cluster.bodies import freeze
from cluster.orders import arrange


def made(name: str, created: Any) -> Any:
    return freeze({"metadata": {"namespace": "ns", "name": name, "creationTimestamp": created}})


AGE = DarkroomKind.sorts["age"]


def test_the_servers_form_is_the_bodys_own_string() -> None:
    obj = made("a", "2026-12-04T17:30:05Z")
    assert AGE.value(obj) is obj["metadata"]["creationTimestamp"]


def test_other_forms_are_rewritten_in_the_servers_and_nonsense_has_no_age() -> None:
    assert AGE.value(made("a", "2026-12-04T19:30:05+02:00")) == "2026-12-04T17:30:05Z"
    assert AGE.value(made("a", "2026-12-04T17:30:05.750Z")) == "2026-12-04T17:30:05Z"  # to the second, as the server writes
    assert AGE.value(made("a", "2026-12-04t17:30:05z")) == "2026-12-04T17:30:05Z"
    for nonsense in ("", "yesterday", None, 17):
        assert AGE.value(made("a", nonsense)) is None


def test_mixed_forms_sort_as_their_times_youngest_first_and_no_age_last() -> None:
    objects = [
        made("noon-utc", "2026-12-04T12:00:00Z"),
        made("eleven-utc", "2026-12-04T13:00:00+02:00"),
        made("one-pm-utc", "2026-12-04T08:00:00-05:00"),
        made("never", "not a time"),
        made("half-past-eleven-utc", "2026-12-04T11:30:00.5Z"),
    ]
    youngest_first = ordering.order_of("age", {"age": AGE})
    assert youngest_first is not None
    names = [obj["metadata"]["name"] for obj in arrange(objects, youngest_first)]
    assert names == ["one-pm-utc", "noon-utc", "half-past-eleven-utc", "eleven-utc", "never"]
