"""RFC 7386 JSON merge patch (``application/merge-patch+json``), as ``evanphx/json-patch`` merges."""

from __future__ import annotations

from typing import Any

from devcluster.patching.common import _copy

# --------------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch
# --------------------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch: objects merge per key, ``null`` deletes, anything else replaces."""
    return _merge_patch(_copy(target), patch)


def _merge_patch(target: Any, patch: Any) -> Any:
    # ``target`` is owned (already a copy); ``patch`` is read-only.
    if not isinstance(patch, dict):
        return _copy(patch)
    result: dict[str, Any] = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result
