"""Validating friendly bodies: a marshmallow schema's verdict as errors by friendly field path, merged across checks.

Called by the kind services (:meth:`backend.core.services.KindService.problems`), the JSON views
(:mod:`backend.api.endpoints`) and the dashboard's generated forms. Errors are flattened to friendly field paths
(``source.baseUrl``, ``subDomains.1``; ``$`` for the body as a whole), the same paths
:func:`backend.core.conversions.invalid_errors` gives the API server's own checks; a body that fails is
:class:`backend.core.errors.Invalid`. Reading a request's body (content type, size, JSON syntax) is the API's
(:mod:`backend.api.bodies`). Bodies are never logged (they may carry S3 keys), and no message here quotes a
submitted value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, ValidationError

from backend.core import errors
from backend.core.conversions import ROOT


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


def validate(schema: type[Schema], data: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Validate a body with ``schema``: the loaded body, or on failure what did load (``valid_data``: the fields
    that passed), and the errors by field path (empty when valid). Not an object at all: :class:`~backend.core.errors.Invalid`."""
    if not isinstance(data, dict):
        raise errors.Invalid({ROOT: ["must be a JSON object"]}, "the request body must be a JSON object")
    try:
        loaded: dict[str, Any] = schema().load(data)
    except ValidationError as e:
        return dict(e.valid_data or {}), flatten(e.messages)
    return loaded, {}


def merged(first: Mapping[str, list[str]], *more: Mapping[str, list[str]], beside: bool = False) -> dict[str, list[str]]:
    """Errors of several checks as one: each message once per path. ``beside``: errors of ``more`` only on paths
    unrelated to those of ``first`` (a later check of a partly valid body must not judge what already failed: a
    value that did not load reads as absent there)."""
    found = {path: list(dict.fromkeys(messages)) for path, messages in first.items()}
    failed = tuple(first)
    for errors_of_more in more:
        for path, messages in errors_of_more.items():
            if beside and any(path == f or path.startswith(f + ".") or f.startswith(path + ".") for f in failed):
                continue
            found[path] = list(dict.fromkeys([*found.get(path, ()), *messages]))
    return found
