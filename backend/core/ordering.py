"""The orders of a list, one definition for the JSON API's ``?sort=`` and the dashboard's columns.

A kind's :class:`Sort` keys (:attr:`backend.core.kinds.base.Kind.sorts`, built by :func:`sorts`): name, namespace,
state (its word, as the dashboard shows it), age, and the kind's own (a Task's priority and deadline: :data:`TASK_SORTS`).
``<key>`` sorts ascending, ``-<key>`` descending; ties keep the cache's namespace/name order; an object without a
value comes last both ways. "Age" ascending is youngest first, as the column reads. A sort is a
:class:`cluster.orders.Order` (:func:`order_of`): the cache keeps each order asked for up to date as objects change, so
a sorted list costs no sort. Applied by :meth:`backend.core.services.KindService.list`, which hands the cache the name
filter ``q`` too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cluster.orders import Order
from kinds.states import State


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp of the cluster as an aware datetime; None when absent or not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Sort:
    """One sort key: the value it orders by (``None`` last when ascending)."""

    value: Callable[[Mapping[str, Any]], Any]
    largest_first: bool = False  # ascending shows the largest value first (Age: the youngest, i.e. the latest timestamp)


# How the API server writes metadata.creationTimestamp (RFC 3339, UTC, whole seconds): such text sorts as the time does.
_SERVER_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_SERVER_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _created(obj: Mapping[str, Any]) -> str | None:
    """When ``obj`` was created, as text in the server's form: the body's own string when it is in that form (a kept
    order then holds no object of its own per row), else the time it names rewritten in that form (to the second);
    None when absent or not a time."""
    found = obj["metadata"].get("creationTimestamp")
    if isinstance(found, str) and _SERVER_TIME.fullmatch(found):
        return found
    parsed = parse_time(found)
    return None if parsed is None else parsed.astimezone(UTC).strftime(_SERVER_TIME_FORMAT)


def _spec_time(field: str) -> Callable[[Mapping[str, Any]], datetime | None]:
    return lambda obj: parse_time((obj.get("spec") or {}).get(field))


def _spec_number(field: str) -> Callable[[Mapping[str, Any]], float | None]:
    def value(obj: Mapping[str, Any]) -> float | None:
        found = (obj.get("spec") or {}).get(field)
        return float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None

    return value


def sorts(*, state: Callable[[Mapping[str, Any]], State], extra: Mapping[str, Sort] | None = None) -> dict[str, Sort]:
    """The sort keys of a kind: name, namespace, state (its word, as shown), age, and ``extra``."""
    return {
        "name": Sort(lambda obj: obj["metadata"]["name"]),
        "namespace": Sort(lambda obj: obj["metadata"].get("namespace") or ""),
        "state": Sort(lambda obj: state(obj).word),
        "age": Sort(_created, largest_first=True),
        **(extra or {}),
    }


TASK_SORTS = {"priority": Sort(_spec_number("priority")), "deadline": Sort(_spec_time("deadline"))}


def kept_orders(keys: Mapping[str, Sort]) -> list[Order]:
    """The orders of a kind's sort keys, for its cache to keep from the start (:class:`cluster.stores.Store`)."""
    return [Order(name, found.value) for name, found in keys.items()]


def order_of(sort: str, keys: Mapping[str, Sort]) -> Order | None:
    """The order ``sort`` (``<key>`` or ``-<key>``) asks for among ``keys``; None for none (empty: the cache's
    namespace/name order)."""
    name = sort.removeprefix("-")
    found = keys.get(name)
    return None if found is None else Order(name, found.value, reverse=sort.startswith("-") != found.largest_first)
