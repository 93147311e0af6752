"""RFC 6902 JSON patch (``application/json-patch+json``) over the ``jsonpatch`` library, with kube's error texts."""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from devcluster.patching.common import PatchError
from mergepatch import copy_json

# --------------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# --------------------------------------------------------------------------------------------

_JSON_KIND = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def json_patch(target: Any, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch (a list of operation objects).

    A body that is not a list of objects is a 400 (kube-apiserver cannot decode it); an operation
    that cannot be applied (missing path, failed ``test``, bad index, unknown op) is a 422 carrying
    the patch library's message. A ``null`` body is an empty patch, as in Go.
    """
    if operations is None:
        return copy_json(target)
    if not isinstance(operations, list):
        kind = _JSON_KIND.get(type(operations), "value")
        raise PatchError(400, f"error decoding patch: json: cannot unmarshal {kind} into Go value of type []handlers.jsonPatchOp")
    for op in operations:
        if not isinstance(op, dict) and op is not None:
            kind = _JSON_KIND.get(type(op), "value")
            raise PatchError(400, f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Operation")
    if any(op is None for op in operations):
        raise PatchError(422, "Unexpected kind: unknown")
    try:
        document = copy_json(target)
        for op in copy_json(operations):
            if op.get("op") == "replace" and _missing_map_key(document, op.get("path")):
                # evanphx/json-patch v4 (kube's) replaces a missing key of an object: it adds it
                op = {**op, "op": "add"}
            document = jsonpatch.JsonPatch([op]).apply(document, in_place=True)
        return document
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise PatchError(422, str(exc)) from exc
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise PatchError(422, str(exc) or type(exc).__name__) from exc


def _missing_map_key(document: Any, path: Any) -> bool:
    """True when ``path`` names a key its (existing) parent object does not have."""
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    try:
        pointer = jsonpointer.JsonPointer(path)
        parent = jsonpointer.JsonPointer.from_parts(pointer.parts[:-1]).resolve(document)
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError):
        return False
    return isinstance(parent, dict) and bool(pointer.parts) and pointer.parts[-1] not in parent
