"""Server-side ``meta.k8s.io`` Table output: what ``kubectl get combinedtasks`` prints.

Chosen by the Accept header (:func:`negotiate`: ``application/json;as=Table;g=meta.k8s.io;v=v1``,
or ``v1beta1``), as kube-apiserver does. Columns: Name, Priority, Deadline, State (the Task's one state,
:func:`kinds.tasks.state`), Events (how many), Last Event (the newest one's reason and age), Age; each
row carries the object as ``includeObject`` asks (``Metadata``, the default, as PartialObjectMetadata;
``Object``; ``None``). Called by the list, get and watch handlers of :mod:`aggregator.app`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from aggregator.statuses import bad_request, not_acceptable
from kinds import tasks

TABLE_VERSIONS = ("v1", "v1beta1")
INCLUDE_OBJECT = ("Metadata", "Object", "None")

COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Name", "type": "string", "format": "name", "description": "Name of the Task (unique within its namespace).", "priority": 0},
    {
        "name": "Priority",
        "type": "integer",
        "format": "",
        "description": "Priority of the task, 0 (lowest) to 10 (highest).",
        "priority": 0,
    },
    {"name": "Deadline", "type": "string", "format": "", "description": "When the task is due.", "priority": 0},
    {"name": "State", "type": "string", "format": "", "description": "Pending, Overdue, Finished or Terminating.", "priority": 0},
    {"name": "Events", "type": "integer", "format": "", "description": "How many Events the Task has.", "priority": 0},
    {"name": "Last Event", "type": "string", "format": "", "description": "The newest Event's reason, and how long ago.", "priority": 0},
    {"name": "Age", "type": "date", "format": "", "description": "Time since the Task was created.", "priority": 0},
)

_UNITS = (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: two units while they say something, one after."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 120:
        return f"{max(whole, 0)}s"
    # (below this many seconds, show (unit, remainder unit)); past the last bound, only the unit.
    for bound, big, small in ((600, "m", "s"), (3 * 3600, "m", None), (8 * 3600, "h", "m"), (48 * 3600, "h", None)):
        if whole < bound:
            return _two(whole, big, small)
    if whole < 8 * 86400:
        return _two(whole, "d", "h")
    if whole < 2 * 365 * 86400:
        return _two(whole, "d", None)
    if whole < 8 * 365 * 86400:
        return _two(whole, "y", "d")
    return _two(whole, "y", None)


def _two(seconds: int, big: str, small: str | None) -> str:
    size = dict(_UNITS)
    count, rest = divmod(seconds, size[big])
    if small is None or rest // size[small] == 0:
        return f"{count}{big}"
    return f"{count}{big}{rest // size[small]}{small}"


def negotiate(accept: str) -> str | None:
    """The Table version the Accept header asks for (None: plain JSON), by the first media type this
    server can produce; kubectl sends ``application/json;as=Table;v=v1;g=meta.k8s.io,...,application/json``.
    406 NotAcceptable when it names none (e.g. protobuf only)."""
    if not accept.strip():
        return None
    for media in accept.split(","):
        kind, _, raw = media.partition(";")
        kind = kind.strip().lower()
        params = dict(p.strip().split("=", 1) for p in raw.split(";") if "=" in p)
        if kind not in ("application/json", "application/*", "*/*"):
            continue
        if "as" not in params:
            return None
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in TABLE_VERSIONS:
            return params["v"]
    raise not_acceptable(accept)


def include_object(value: str | None) -> str:
    if value is None or value == "":
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise bad_request(f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"')
    return value


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ago(text: str | None, now: datetime) -> str:
    moment = _time(text)
    return "<unknown>" if moment is None else human_duration((now - moment).total_seconds())


def cells(obj: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    events: Sequence[Mapping[str, Any]] = status.get("events") or ()
    last = ""
    if events:
        newest = max(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or e.get("firstTimestamp") or ""))
        when = newest.get("lastTimestamp") or newest.get("eventTime") or newest.get("firstTimestamp")
        last = f"{newest.get('reason') or '<none>'} ({_ago(when, now)} ago)"
    return [
        meta["name"],
        spec.get("priority"),
        spec.get("deadline") or "",
        tasks.state(obj).word,
        len(events),
        last or "<none>",
        _ago(meta.get("creationTimestamp"), now),
    ]


def _row(obj: Mapping[str, Any], include: str, version: str, now: datetime) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": cells(obj, now)}
    if include == "Object":
        row["object"] = obj
    elif include == "Metadata":
        row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}", "metadata": obj["metadata"]}
    return row


def table(
    objects: Sequence[Mapping[str, Any]],
    *,
    version: str,
    include: str,
    list_meta: Mapping[str, Any],
    headers: bool = True,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/<version>`` Table of ``objects``; ``headers`` False: no column definitions (watch events after the first)."""
    moment = now or datetime.now(UTC)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": dict(list_meta),
        "columnDefinitions": list(COLUMNS) if headers else [],
        "rows": [_row(obj, include, version, moment) for obj in objects],
    }
