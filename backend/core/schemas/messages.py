"""One style for every validation message of the API: lower case, no final full stop, saying what is
wanted (``must be an integer``, ``required``), as the messages of :mod:`kinds` and our schemas do.

marshmallow's built-in messages (``Missing data for required field.``, ``Not a valid integer.``,
``Must be one of: WebFolder, S3.``) are reworded here, once, for every request schema:
:class:`backend.core.schemas.common.RequestSchema` passes its errors through :func:`restyle` (nested
schemas too), so the JSON API, the dashboard's forms (which show the same 422) and the OpenAPI
examples say the same. A message not in the table is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

# marshmallow's message (as a pattern) → ours; groups carry the numbers and choices over.
TABLE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(f"^{pattern}$"), ours)
    for pattern, ours in (
        (r"Missing data for required field\.", "required"),
        (r"Field may not be null\.", "must not be null"),
        (r"Unknown field\.", "unknown field"),
        (r"Invalid input type\.|Invalid type\.|Not a valid mapping type\.", "must be a JSON object"),
        (r"Not a valid list\.", "must be a list"),
        (r"Not a valid string\.", "must be a string"),
        (r"Not a valid utf-8 string\.", "must be a UTF-8 string"),
        (r"Not a valid integer\.", "must be a whole number"),
        (r"Not a valid number\.", "must be a number"),
        (r"Number too large\.", "must be a smaller number"),
        (r"Not a valid boolean\.", "must be true or false"),
        (r"Invalid value\.", "invalid value"),
        (r"Must be greater than or equal to (\S+) and less than or equal to (\S+)\.", r"must be between \1 and \2"),
        (r"Must be greater than or equal to (\S+)\.", r"must be \1 or more"),
        (r"Must be less than or equal to (\S+)\.", r"must be \1 or less"),
        (r"Must be greater than (\S+)\.", r"must be more than \1"),
        (r"Must be less than (\S+)\.", r"must be less than \1"),
        (r"Must be one of: (.*)\.", r"must be one of \1"),
        (r"Length must be between (\d+) and (\d+)\.", r"must have a length between \1 and \2"),
        (r"Shorter than minimum length (\d+)\.", r"must have a length of at least \1"),
        (r"Longer than maximum length (\d+)\.", r"must have a length of at most \1"),
        (r"Length must be (\d+)\.", r"must have a length of \1"),
        (r"String does not match expected pattern\.", "has an invalid format"),
    )
)


def reworded(message: str) -> str:
    """Our wording of one marshmallow message (others unchanged)."""
    for pattern, ours in TABLE:
        if pattern.match(message):
            return pattern.sub(ours, message)
    return message


def restyle(messages: Any) -> Any:
    """marshmallow's error structure (dicts by field or index, lists of strings) with every message reworded."""
    if isinstance(messages, dict):
        return {key: restyle(value) for key, value in messages.items()}
    if isinstance(messages, list):
        return [restyle(m) for m in messages]
    return reworded(messages) if isinstance(messages, str) else messages
