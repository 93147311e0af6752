"""What every PATCH format shares: :class:`PatchError` (the status and message kube answers). Copying decoded
JSON values is the shared leaf's :func:`mergepatch.copy_json`.
"""

from __future__ import annotations


class PatchError(Exception):
    """A patch that cannot be applied; .code is the HTTP status kube-apiserver uses (400 or 422), .message the text."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"PatchError({self.code!r}, {self.message!r})"
