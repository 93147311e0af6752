"""Lists and gets of CombinedTasks from the :class:`aggregator.view.View`, with kube's paging and versions.

Called by :mod:`aggregator.app`. What a cache-served list means in kube (API concepts, "Resource
versions" and "Retrieving large results sets in chunks"), and what this server does:

- ``resourceVersion`` unset or ``"0"``: the view as it is now (it follows the watch streams; no API
  call is made — so "most recent" is the cache's most recent, as for every informer-backed server);
- ``resourceVersion=N`` (``resourceVersionMatch`` unset or ``NotOlderThan``): once the view reached N
  (waiting up to ``wait_s``, 3 s as kube's watch cache; then 504 "Too large resource version");
- ``resourceVersionMatch=Exact``: the list at exactly N if the view has a snapshot of it, else 410 Expired;
- ``limit``/``continue``: pages in namespace/name order; the continue token names the list's version and
  the last key served, and later pages come from the same snapshot (consistent), or — when it is no
  longer kept — 410 Expired whose Status carries a token that continues at the current version
  (inconsistent), exactly as kube-apiserver answers after an etcd compaction. ``remainingItemCount``
  is set when no selector filters the list.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from aggregator import queries, statuses
from aggregator.queries import EXACT, ListOptions
from aggregator.view import View
from cluster.bodies import FrozenDict, object_key

CONTINUE_VERSION = "meta.k8s.io/v1"
INCONSISTENT = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the "
    "continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the "
    "provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first "
    "chunk was returned and now may show up in the list."
)


@dataclass(frozen=True)
class Page:
    items: list[FrozenDict]
    resource_version: str
    continue_token: str
    remaining: int | None


def encode_continue(version: int, after: str) -> str:
    """kube's token shape: ``{"v": "meta.k8s.io/v1", "rv": N, "start": "<key after the last served>"}``, base64."""
    raw = orjson.dumps({"v": CONTINUE_VERSION, "rv": version, "start": after + "\x00"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """(version, last key served); 400 ``invalid continue token`` for anything this server did not issue."""
    try:
        decoded = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError) as e:
        raise statuses.bad_request(f"invalid continue token: continue key is not valid: {e}") from None
    if not isinstance(decoded, dict) or decoded.get("v") != CONTINUE_VERSION:
        raise statuses.bad_request("invalid continue token: continue key is not valid: server does not recognize this encoded key")
    version, start = decoded.get("rv"), decoded.get("start")
    if not isinstance(version, int) or version == 0 or version < -1:
        raise statuses.bad_request(
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    if not isinstance(start, str) or not start:
        raise statuses.bad_request("invalid continue token: continue key is not valid: encoded start key is empty")
    return version, start.removesuffix("\x00")


def wait_until(view: View, version: int, wait_s: float) -> None:
    if not view.wait_for(version, wait_s):
        raise statuses.too_large_resource_version(version, view.highwater)


def _source(view: View, options: ListOptions, wait_s: float) -> tuple[int, Sequence[FrozenDict], str]:
    """(version, sorted objects, last key served) the list reads from. Blocking (it may wait)."""
    if options.continue_token:
        if options.resource_version not in ("", "0"):
            raise statuses.bad_request("specifying resource version is not allowed when using continue")
        version, after = decode_continue(options.continue_token)
        if version == -1:
            current, objects = view.snapshot()
            return current, objects, after
        kept = view.snapshot_at(version)
        if kept is None:
            raise statuses.expired(INCONSISTENT, continue_token=encode_continue(-1, after))
        return version, kept, after
    if options.resource_version in ("", "0"):
        version, objects = view.snapshot()
        return version, objects, ""
    wanted = queries.resource_version_number(options.resource_version)
    wait_until(view, wanted, wait_s)
    if options.resource_version_match == EXACT:
        kept = view.snapshot_at(wanted)
        if kept is None:
            raise statuses.expired(f"too old resource version: {wanted} ({view.oldest})")
        return wanted, kept, ""
    version, objects = view.snapshot()
    return version, objects, ""


def _range(objects: Sequence[FrozenDict], namespace: str | None, after: str) -> tuple[int, int]:
    """Indexes [start, end) of the objects in ``namespace`` (None: all) whose key sorts after ``after``."""
    start, end = 0, len(objects)
    if namespace is not None:
        start = bisect.bisect_left(objects, f"{namespace}/", key=object_key)
        end = bisect.bisect_left(objects, f"{namespace}0", key=object_key)  # "0" follows "/" in ASCII
    if after:
        start = max(start, bisect.bisect_right(objects, after, key=object_key))
    return start, end


def list_page(view: View, options: ListOptions, namespace: str | None, *, wait_s: float) -> Page:
    """One page of the list ``options`` asks for. Blocking (it may wait for a resourceVersion)."""
    version, objects, after = _source(view, options, wait_s)
    start, end = _range(objects, namespace, after)
    items: list[FrozenDict] = []
    position = start
    while position < end and (not options.limit or len(items) < options.limit):
        obj = objects[position]
        position += 1
        if options.labels.matches(obj["metadata"].get("labels")) and options.fields.matches(obj):
            items.append(obj)
    more = position < end
    token = encode_continue(version, object_key(objects[position - 1])) if more and options.limit else ""
    remaining = end - position if token and options.selects_all else None
    return Page(items=items, resource_version=str(version), continue_token=token, remaining=remaining)


def get(view: View, namespace: str, name: str) -> FrozenDict:
    found = view.get(f"{namespace}/{name}")
    if found is None:
        raise statuses.not_found(name)
    return found
