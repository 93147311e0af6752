"""What a write takes and gives back: the PATCH content types, :class:`WriteOptions` (field manager, dry run,
field validation, subresource), :class:`WriteResult`, metadata field sets, and the decode/patch error
contexts that word errors as kube-apiserver does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
import yaml

from devcluster import decoding, errors
from devcluster.errors import StatusError
from devcluster.resources import ResourceType

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
# libyaml's loader when PyYAML was built with it (the pure-Python one is ~10x slower).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

_OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"


@dataclass(frozen=True)
class WriteOptions:
    manager: str
    dry_run: bool = False
    field_validation: str = "Warn"  # Ignore | Warn | Strict
    subresource: str = ""


@dataclass
class WriteResult:
    obj: dict[str, Any]
    code: int = 200
    warnings: list[str] = field(default_factory=list)
    # delete only: the object is gone (not merely marked for deletion)
    deleted: bool = False


_Json = TypeVar("_Json")


def copy(obj: _Json) -> _Json:
    """Deep copy of a JSON value (orjson round trip: fast and exact for JSON data, so the copy has the original's type)."""
    copied: _Json = orjson.loads(orjson.dumps(obj))
    return copied


def at_version(obj: dict[str, Any], resource: ResourceType) -> dict[str, Any]:
    """``obj`` as served at ``resource``'s version (conversion strategy None: only apiVersion changes)."""
    if obj.get("apiVersion") == resource.group_version:
        return obj
    return {**obj, "apiVersion": resource.group_version}


@contextmanager
def _decode_error_context(resource: ResourceType) -> Iterator[None]:
    """Create/update decode the body, so decoding errors get ``transformDecodeError``'s prefix there."""
    try:
        yield
    except decoding.DecodeError as e:
        kind = resource.kind
        raise errors.bad_request(f'{kind} in version "{resource.version}" cannot be handled as a {kind}: {e.message}') from e


@contextmanager
def _patch_error_context(rendered: Callable[[], str]) -> Iterator[None]:
    """A patch decodes the patched object: kube reports decoding errors as 422 Invalid on field ``patch``,
    showing ``rendered()`` (the patched object's JSON; for a strategic merge patch the patch, Go's ``%v``)."""
    try:
        yield
    except decoding.DecodeError as e:
        detail = f"Invalid value: {orjson.dumps(rendered()).decode()}: {e.message}"
        causes = [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]
        raise StatusError(422, "Invalid", f' "" is invalid: patch: {detail}', {"causes": causes}) from e


def _spec_view(obj: dict[str, Any], resource: ResourceType) -> dict[str, Any]:
    """What a change of counts for ``metadata.generation``: neither metadata, nor status under a status subresource,
    nor ``apiVersion`` (an object stored at an older version of its CRD re-encoded at the storage version is the same
    object: kube compares the decoded objects)."""
    skip = {"metadata", "status", "apiVersion"} if resource.status_subresource else {"metadata", "apiVersion"}
    return {k: v for k, v in obj.items() if k not in skip}
