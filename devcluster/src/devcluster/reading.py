"""The read verbs with kube-apiserver semantics: get and list (selectors, pagination, resourceVersion).

Lists are consistent snapshots: a ``continue`` token carries the revision of the first page, and
later pages are served as of that revision (410 Expired once the store's history no longer
reaches back, with a fresh token for an inconsistent continuation, as kube-apiserver does), from
the view of that revision the store keeps while pages remain (``listviews.py``), or rebuilds from
its history. Called by ``serving/``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import orjson

from devcluster import errors
from devcluster.errors import StatusError
from devcluster.listviews import object_key
from devcluster.resources import ResourceType
from devcluster.selectors import FieldSelector, LabelSelector
from devcluster.store import Store

TOO_OLD_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the "
    "continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with "
    "the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


@dataclass(frozen=True)
class ListQuery:
    namespace: str | None
    labels: LabelSelector
    fields: FieldSelector
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""


def encode_continue(revision: int, start: str) -> str:
    return base64.b64encode(orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start})).decode()


def decode_continue(token: str) -> tuple[int, str]:
    try:
        data = orjson.loads(base64.b64decode(token, validate=True))
        revision, start = int(data["rv"]), str(data["start"])
        if data.get("v") != "meta.k8s.io/v1" or (revision <= 0 and revision != -1):
            raise ValueError("bad version")
    except (binascii.Error, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise errors.bad_request(f"invalid continue token: continue key is not valid: {e}") from e
    # rv -1 (the token a 410 hands out): continue from the latest revision, an inconsistent list.
    return revision, start


def parse_resource_version(text: str) -> int:
    """A resourceVersion query parameter as the storage layer parses it (400 with its message otherwise)."""
    try:
        value = int(text)
        if value < 0 or not text.isdigit():
            raise ValueError(text)
    except ValueError as e:
        detail = f'Invalid value: "{text}": strconv.ParseUint: parsing "{text}": invalid syntax'
        raise errors.bad_request(f"invalid resource version: resourceVersion: {detail}") from e
    return value


def _token_key(key: str, resource: ResourceType, query: ListQuery) -> str:
    """An object key relative to the listed prefix, as kube's continue token carries it: ``/name``
    in a namespace, ``namespace/name`` across namespaces, ``name`` for cluster-scoped objects."""
    if not resource.namespaced:
        return key[1:]
    return key[len(query.namespace) :] if query.namespace is not None else key


def _full_key(token_key: str, resource: ResourceType, query: ListQuery) -> str:
    if not resource.namespaced:
        return "/" + token_key
    return (query.namespace or "") + token_key if query.namespace is not None else token_key


def _object_key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return object_key(meta.get("namespace", ""), meta["name"])


def _validate_list_options(query: ListQuery) -> None:
    """``ValidateListOptions`` for a list (not a watch): every problem in one 422."""
    match = query.resource_version_match
    if not match:
        return
    causes: list[errors.Cause] = []
    if not query.resource_version:
        causes.append(errors.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if query.continue_token:
        causes.append(errors.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    if match not in ("Exact", "NotOlderThan"):
        causes.append(errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
    if match == "Exact" and query.resource_version == "0":
        causes.append(errors.forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def list_objects(store: Store, resource: ResourceType, query: ListQuery) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Matching objects (stored form) and the ListMeta (resourceVersion, continue, remainingItemCount)."""
    start = token_start = ""
    snapshot_at: int | None = None
    _validate_list_options(query)
    if query.continue_token:
        if query.resource_version not in ("", "0"):
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        snapshot_at, token_start = decode_continue(query.continue_token)
        start = _full_key(token_start, resource, query)
        if snapshot_at == -1:
            snapshot_at = None
    elif query.resource_version not in ("", "0"):
        requested = parse_resource_version(query.resource_version)
        if requested > store.revision:
            raise StatusError(
                504,
                "Timeout",
                f"Timeout: Too large resource version: {requested}, current: {store.revision}",
                {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1},
            )
        exact = query.resource_version_match == "Exact" or (not query.resource_version_match and query.limit > 0)
        if exact:
            snapshot_at = requested
    if snapshot_at is not None:
        view = store.view(resource.storage_key, snapshot_at, query.namespace)
        if view is None:
            if query.continue_token:
                raise StatusError(410, "Expired", TOO_OLD_CONTINUE, list_meta={"continue": encode_continue(-1, token_start)})
            raise errors.gone("The resourceVersion for the provided list is too old.")
    else:
        view = store.current(resource.storage_key, query.namespace)
    revision = view.revision
    filtering = not (query.labels.empty and query.fields.empty)
    out: list[dict[str, Any]] = []
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    objects = view.objects
    for index in range(view.position(start) if start else 0, len(objects)):
        obj = objects[index]
        if filtering and not (query.labels.matches(obj["metadata"].get("labels")) and query.fields.matches(obj)):
            continue
        if query.limit and len(out) == query.limit:
            meta["continue"] = encode_continue(revision, _token_key(_object_key(out[-1]), resource, query) + "\x00")
            if not filtering:
                meta["remainingItemCount"] = len(objects) - index
            # The next page reads this view again: kept, it costs that page's objects, not a rebuild of them all.
            store.keep_view(resource.storage_key, query.namespace, view)
            return out, meta
        out.append(obj)
    if query.continue_token:
        store.release_view(resource.storage_key, query.namespace, revision)
    return out, meta
