"""Reading request bodies: content type (415), size (413), nesting depth, JSON syntax and repeated fields (400).

Called by the resource views (:mod:`backend.api.endpoints`) before anything is validated
(:mod:`backend.core.validation`) or looked up; the login (:mod:`backend.identity.login`) checks a JSON body's depth
with :func:`refuse_deep` too. A body nesting objects and arrays deeper than :data:`MAX_DEPTH` levels is refused
before anything recursive (the parser, the duplicate check, schema validation) sees it, by a lexical scan that is
linear and has no recursion. Bodies are never logged (they may carry S3 keys), and no message here quotes a
submitted value. :data:`JSON` and :data:`MERGE_PATCH` are the content types the API reads and writes.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

import orjson
from flask import request

from backend.api.problems import Problem

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
MAX_DEPTH = 64
"""The deepest nesting of objects and arrays a body may have (``{}`` is one level, ``{"a": []}`` two); no body the
API takes needs more than a handful."""

# The depth scan, all of it in C loops: drop the strings (escapes included; one never closed runs to the end, the
# parser reports it), keep the brackets, and add up +1 per opening and -1 per closing one.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)  # always matches from a quote: linear
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEP = tuple(1 if c in b"[{" else -1 if c in b"]}" else 0 for c in range(256))


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
    refuse_deep(raw)
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


def refuse_deep(raw: bytes) -> None:
    """400 when ``raw`` nests objects and arrays deeper than :data:`MAX_DEPTH` levels (brackets inside strings
    do not count); malformed text is left to the parser."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:  # every body the API takes: nothing more to look at
        return
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    if len(brackets) > MAX_DEPTH and max(accumulate(map(_STEP.__getitem__, brackets))) > MAX_DEPTH:
        raise Problem(400, f"the request body nests deeper than {MAX_DEPTH} levels of objects and arrays")


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
