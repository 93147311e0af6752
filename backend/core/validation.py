"""Request bodies: content type (415), size (413), JSON syntax (400), schema validation (422), merge patch.

Called by the resource views (:mod:`backend.api.endpoints`). Validation errors are flattened to
friendly field paths (``source.baseUrl``, ``subDomains.1``; ``$`` for the body as a whole), the
same paths :func:`backend.core.conversions.invalid_errors` gives the API server's own checks. Bodies are
never logged (they may carry S3 keys), and no message here quotes a submitted value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
from flask import request
from marshmallow import Schema, ValidationError

from backend.api.problems import Problem
from backend.core.conversions import ROOT

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"


def read_json(*, accept: tuple[str, ...] = (JSON,)) -> Any:
    """The parsed body; 415 for another content type, 413 when too large, 400 when empty or malformed."""
    if request.mimetype not in accept:
        shown = request.mimetype or "none"
        raise Problem(
            415,
            f"Content-Type must be {' or '.join(accept)} (got {shown})",
            headers={"Accept-Patch": MERGE_PATCH} if MERGE_PATCH in accept else None,
        )
    raw = request.get_data(cache=False)  # werkzeug raises 413 past MAX_CONTENT_LENGTH
    if not raw.strip():
        raise Problem(400, "the request body is empty; send a JSON object")
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise Problem(400, f"the request body is not valid JSON: {e}") from None
    # orjson keeps the last of repeated keys; like kube's strict decoding, a repeated field is an error
    # (which value was meant is ambiguous). Checked only when a duplicate is possible: more keys than survived.
    if raw.count(b":") > _count_keys(parsed):
        try:
            json.loads(raw, object_pairs_hook=_refuse_duplicates)
        except _DuplicateField as e:
            raise Problem(400, f'the request body repeats the field "{e.field}"; send each field once') from None
    return parsed


class _DuplicateField(ValueError):
    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateField(key)
        found[key] = value
    return found


def _count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_keys(v) for v in value)
    return 0


def flatten(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow's nested error dict → ``{"a.b.0": [...]}`` (``_schema`` errors belong to their parent)."""
    found: dict[str, list[str]] = {}
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            path = prefix if key == "_schema" else f"{prefix}.{key}" if prefix else str(key)
            for sub, texts in flatten(value, path).items():
                found.setdefault(sub, []).extend(texts)
    elif isinstance(messages, list | tuple):
        for item in messages:
            for sub, texts in flatten(item, prefix).items():
                found.setdefault(sub, []).extend(texts)
    else:
        found.setdefault(prefix or ROOT, []).append(str(messages))
    return found


def invalid(errors: Mapping[str, list[str]], detail: str | None = None) -> Problem:
    """The 422 for validation errors (ours or the API server's)."""
    fields = ", ".join(sorted(errors))
    return Problem(422, detail or f"invalid fields: {fields}", errors=errors)


def validate(schema: type[Schema], data: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Validate a body with ``schema``: the loaded body, or on failure what did load (``valid_data``: the fields
    that passed), and the errors by field path (empty when valid)."""
    if not isinstance(data, dict):
        raise invalid({ROOT: ["must be a JSON object"]}, "the request body must be a JSON object")
    try:
        loaded: dict[str, Any] = schema().load(data)
    except ValidationError as e:
        return dict(e.valid_data or {}), flatten(e.messages)
    return loaded, {}


def load(schema: type[Schema], data: Any) -> dict[str, Any]:
    """Validate a body with ``schema``; 422 naming each bad (or unknown) field."""
    loaded, errors = validate(schema, data)
    if errors:
        raise invalid(errors)
    return loaded


def merged(first: Mapping[str, list[str]], *more: Mapping[str, list[str]], beside: bool = False) -> dict[str, list[str]]:
    """Errors of several checks as one: each message once per path. ``beside``: errors of ``more`` only on paths
    unrelated to those of ``first`` (a later check of a partly valid body must not judge what already failed: a
    value that did not load reads as absent there)."""
    found = {path: list(dict.fromkeys(messages)) for path, messages in first.items()}
    failed = tuple(first)
    for errors in more:
        for path, messages in errors.items():
            if beside and any(path == f or path.startswith(f + ".") or f.startswith(path + ".") for f in failed):
                continue
            found[path] = list(dict.fromkeys([*found.get(path, ()), *messages]))
    return found
