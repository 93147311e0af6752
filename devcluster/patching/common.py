"""What every PATCH format shares: :class:`PatchError` (the status and message kube answers) and copying
decoded JSON values.
"""

from __future__ import annotations

from typing import Any


class PatchError(Exception):
    """A patch that cannot be applied; .code is the HTTP status kube-apiserver uses (400 or 422), .message the text."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"PatchError({self.code!r}, {self.message!r})"


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    """Deep copy of a JSON-like value (faster than ``copy.deepcopy`` for dict/list/scalars)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
