"""A Table column (:class:`Column`: definition and cell function) and the cell formats every printer shares:
kube's human-readable durations (``5m10s``, ``3d4h``), ages and timestamps, ``fmt.Sprint`` of a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from devcluster import gofmt

Cell = Callable[[dict[str, Any], datetime], Any]


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    format: str
    description: str
    priority: int
    cell: Cell

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description, "priority": self.priority}


# ---------------------------------------------------------------------------------------------
# Durations and timestamps
# ---------------------------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """``k8s.io/apimachinery/pkg/util/duration.HumanDuration``."""
    whole = int(seconds)  # Go truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60 * 2:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        s = whole % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _parse_time(value: Any) -> datetime | None:
    """Go ``time.Parse(time.RFC3339, value)`` (fractional seconds allowed); None if unparseable."""
    if not isinstance(value, str):
        return None
    m = _RFC3339.match(value)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    micro = int((m.group(7)[1:] + "000000")[:6]) if m.group(7) else 0
    zone = m.group(8)
    if zone == "Z":
        tz = UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        hh, mm = int(zone[1:3]), int(zone[4:6])
        if hh > 23 or mm > 59:
            return None
        tz = timezone(sign * timedelta(hours=hh, minutes=mm))
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:
        return None


def _aware(now: datetime) -> datetime:
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _since(value: Any, now: datetime) -> str:
    """``translateTimestampSince``: "<unknown>" for a zero (absent) timestamp."""
    ts = _parse_time(value)
    if ts is None:
        return "<unknown>"
    return human_duration((_aware(now) - ts).total_seconds())


def _age(obj: dict[str, Any], now: datetime) -> str:
    return _since(_meta(obj).get("creationTimestamp"), now)


def _created_at(obj: dict[str, Any], now: datetime) -> str:
    ts = _parse_time(_meta(obj).get("creationTimestamp"))
    if ts is None:
        return "0001-01-01T00:00:00Z"
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# Go fmt-style printing (for "string" printer columns)
# ---------------------------------------------------------------------------------------------


def _go_sprint(value: Any) -> str:
    """``fmt.Sprint`` of a cell value as text/template prints it (a missing value is ``<no value>``)."""
    return "<no value>" if value is None else gofmt.format_value(value)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}
