"""HTML form fields ↔ friendly payloads of the JSON API, for Darkrooms and Tasks (pure functions).

Called by :mod:`.darkroompages` and :mod:`.taskpages`. A form is first read into *values* (the
strings to show again in the form: what the user typed, or the stored object on edit; S3 keys
are never among them) and then into the friendly *payload* the JSON API's schemas validate. Blank
fields are omitted (the schema then says what is missing), numbers that do not parse are passed
through as text (the schema says "Not a valid integer."), so every message comes from the same
validation as the JSON API and lands on the same field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from werkzeug.datastructures import MultiDict

from backend.dashboard.rendering import parse_time
from kinds import darkrooms as darkroom_kind
from kinds.darkrooms import DEFAULT_SOURCE_TYPE, SHARED_SOURCE_FIELDS, SOURCE_SPEC_FIELDS, SOURCES

MINUTES = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$")


def _text(form: MultiDict[str, str], key: str) -> str:
    return (form.get(key) or "").strip()


def _number(text: str) -> int | str:
    return int(text) if re.fullmatch(r"[+-]?\d{1,19}", text) else text


# -- Darkrooms ---------------------------------------------------------------------------------


def darkroom_values(friendly: Mapping[str, Any]) -> dict[str, Any]:
    """Form values of a stored Darkroom (never its keys: only whether they are set)."""
    source = friendly.get("source") or {}
    return {
        "name": friendly.get("name") or "",
        "namespace": friendly.get("namespace") or "",
        "version": friendly.get("version") or "",
        "replicas": "" if friendly.get("replicas") is None else str(friendly["replicas"]),
        "cacheTime": "" if friendly.get("cacheTime") is None else str(friendly["cacheTime"]),
        "source_type": source.get("type") or DEFAULT_SOURCE_TYPE,
        **{key: source.get(key) or "" for key in SOURCE_SPEC_FIELDS},
        "subDomains": list(friendly.get("subDomains") or ()),
        "credentialsSet": bool(source.get("credentialsSet")),
        "generation": "" if friendly.get("generation") is None else str(friendly["generation"]),
    }


def darkroom_form_values(form: MultiDict[str, str]) -> dict[str, Any]:
    """What the user submitted, as values to show again (keys left out)."""
    source_type = _text(form, "source_type")
    return {
        **{key: _text(form, key) for key in ("name", "namespace", "version", "replicas", "cacheTime", "generation")},
        "source_type": source_type if source_type in SOURCES else DEFAULT_SOURCE_TYPE,
        **{key: _text(form, key) for key in SOURCE_SPEC_FIELDS},
        "subDomains": [s.strip() for s in form.getlist("subDomains") if s.strip()],
        "credentialsSet": form.get("credentialsSet") == "true",
    }


def darkroom_payload(values: Mapping[str, Any], form: MultiDict[str, str], *, create: bool) -> dict[str, Any]:
    """The friendly payload of a submitted Darkroom form; fields of the unselected source type are dropped."""
    source_type = _text(form, "source_type") or DEFAULT_SOURCE_TYPE
    source: dict[str, Any] = {"type": source_type}
    chosen = darkroom_kind.variant(source_type)
    for key in (*chosen.fields, *SHARED_SOURCE_FIELDS):
        if values.get(key):
            source[key] = values[key]
    for key in chosen.keys:
        given = form.get(key) or ""
        if given:
            source[key] = given
    payload: dict[str, Any] = {"source": source, "subDomains": list(values["subDomains"])}
    if create:
        payload["name"] = values["name"]
        if values["namespace"]:
            payload["namespace"] = values["namespace"]
        if not payload["name"]:
            del payload["name"]
    if values["version"]:
        payload["version"] = values["version"]
    for key in ("replicas", "cacheTime"):
        if values[key]:
            payload[key] = _number(values[key])
    return payload


# -- Tasks -------------------------------------------------------------------------------------


def deadline_input(stored: Any) -> str:
    """A stored RFC 3339 deadline as a ``datetime-local`` value in UTC (``2027-03-31T17:00``)."""
    moment = parse_time(stored)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if moment else ""


def task_values(friendly: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": friendly.get("name") or "",
        "namespace": friendly.get("namespace") or "",
        "priority": "" if friendly.get("priority") is None else str(friendly["priority"]),
        "deadline": deadline_input(friendly.get("deadline")),
        "details": friendly.get("details") or "",
        "state": friendly.get("state") or "Pending",
        "generation": "" if friendly.get("generation") is None else str(friendly["generation"]),
    }


def task_form_values(form: MultiDict[str, str]) -> dict[str, Any]:
    values = {key: _text(form, key) for key in ("name", "namespace", "priority", "deadline", "state", "generation")}
    values["details"] = (form.get("details") or "").replace("\r\n", "\n")
    return values


def task_payload(values: Mapping[str, Any], *, create: bool) -> dict[str, Any]:
    """The friendly Task; a ``datetime-local`` deadline (no zone) is taken as UTC."""
    payload: dict[str, Any] = {}
    if create:
        for key in ("name", "namespace"):
            if values[key]:
                payload[key] = values[key]
    if values["priority"]:
        payload["priority"] = _number(values["priority"])
    deadline = values["deadline"]
    if deadline:
        payload["deadline"] = deadline + (":00" if len(deadline) == 16 else "") + "Z" if MINUTES.match(deadline) else deadline
    if values["details"]:
        payload["details"] = values["details"]
    if values["state"]:
        payload["state"] = values["state"]
    return payload
