"""Collection reads: pagination over the cache, the continue token, and memoized JSON rendering.

Called by the kind services and the collection views of every kind (the HTTP half — query parameters and
responses — is :mod:`backend.api.queries` and the views). Lists come from the informer cache
(:meth:`cluster.CachedClient.list`, sorted by namespace/name); a :class:`ListQuery`'s ``limit`` pages them and
its continue token is an opaque token naming the last key served, so paging is stable while objects
are added or removed (pages reflect the cache at the time each page is read); a token this API did not issue is
:class:`backend.core.errors.BadRequest`. A :class:`Renderer` converts each object once per version — keyed by UID
and resourceVersion, plus whatever else the caller says the rendering depends on (a Task's Events) — and keeps the
encoded JSON, so a list body is a join of cached bytes — or, when the list has not changed since the
same query was last answered, the very same bytes: this is what makes ``GET /darkrooms`` cheap at
1,000 objects. Each app's renderers belong to its application services (a kind's
:class:`backend.core.services.KindService`, :class:`backend.core.services.CombinedTasks`), built once with the app.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from backend.core import errors
from cluster.bodies import object_key
from cluster.fieldselectors import FieldSelector

EVERYTHING = FieldSelector()  # the empty field selector


@dataclass(frozen=True)
class ListQuery:
    """``?namespace=&labelSelector=&fieldSelector=&q=&sort=&limit=&continue=`` of a collection request.

    ``after`` is where the page starts: a key (the cache's namespace/name order: after that object) or, for a ``sort``,
    how many objects the earlier pages held."""

    namespace: str | None
    label_selector: str | None
    limit: int | None
    after: str | int | None
    fields: FieldSelector = EVERYTHING
    q: str = ""  # a substring of the name (cluster.orders.named, applied by the cache)
    sort: str = ""  # "" (namespace, name), "<key>" or "-<key>" of the kind's sorts (backend.core.ordering.order_of)


def encode_token(after: str | int) -> str:
    cursor = {"after": after} if isinstance(after, str) else {"offset": after}
    return base64.urlsafe_b64encode(orjson.dumps(cursor)).decode().rstrip("=")


def decode_token(token: str) -> str | int:
    """Where the page a token names starts (a key, or an offset in a sorted list); BadRequest for a foreign token."""
    try:
        decoded = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        after = decoded["after"] if "after" in decoded else decoded["offset"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise errors.BadRequest("the continue token is not one this API issued") from None
    issued = isinstance(after, str) if "after" in decoded else type(after) is int and after >= 0
    if not issued:
        raise errors.BadRequest("the continue token is not one this API issued")
    return after  # type: ignore[no-any-return]


def paginate(objects: Sequence[Mapping[str, Any]], query: ListQuery) -> tuple[Sequence[Mapping[str, Any]], str | None]:
    """The page of ``objects`` (sorted by key, or by ``query.sort``) the query asks for, and the token of the next page."""
    if (query.sort and isinstance(query.after, str)) or (not query.sort and isinstance(query.after, int)):
        raise errors.BadRequest("the continue token belongs to a list in another order: ask again without it")
    if isinstance(query.after, int):
        start = query.after
    else:
        start = bisect.bisect_right(objects, query.after, key=object_key) if query.after is not None else 0
    if query.limit is None:
        return objects[start:], None
    page = objects[start : start + query.limit]
    more = start + query.limit < len(objects)
    if not (more and page):
        return page, None
    return page, encode_token(start + len(page) if query.sort else object_key(page[-1]))


class Renderer:
    """Friendly form and encoded JSON of objects, memoized per object version. Thread-safe.

    ``convert(obj, extra)`` builds the friendly dict; ``extra`` (e.g. a Task's Events) and its
    ``extra_key`` let a view make the rendering depend on more than the object itself.
    """

    def __init__(
        self, convert: Callable[[Mapping[str, Any], Any], dict[str, Any]], *, max_entries: int = 50_000, max_pages: int = 16
    ) -> None:
        self._convert = convert
        self._max_entries = max_entries
        self._max_pages = max_pages
        self._memo: dict[str, tuple[Hashable, dict[str, Any], bytes]] = {}
        self._pages: dict[ListQuery, tuple[Sequence[Mapping[str, Any]], bytes]] = {}
        self._lock = threading.Lock()

    def _entry(self, obj: Mapping[str, Any], extra: Any, extra_key: Hashable) -> tuple[Hashable, dict[str, Any], bytes]:
        meta = obj["metadata"]
        uid = meta.get("uid") or object_key(obj)
        version = (meta.get("resourceVersion"), extra_key)
        entry = self._memo.get(uid)
        if entry is not None and entry[0] == version:
            return entry
        friendly = self._convert(obj, extra)
        entry = (version, friendly, orjson.dumps(friendly))
        with self._lock:
            if len(self._memo) >= self._max_entries:
                self._memo.clear()  # objects deleted long ago; the live ones are re-rendered once
            self._memo[uid] = entry
        return entry

    def friendly(self, obj: Mapping[str, Any], extra: Any = None, extra_key: Hashable = None) -> dict[str, Any]:
        """The friendly dict (shared: do not mutate)."""
        return self._entry(obj, extra, extra_key)[1]

    def encoded(self, obj: Mapping[str, Any], extra: Any = None, extra_key: Hashable = None) -> bytes:
        return self._entry(obj, extra, extra_key)[2]

    def page(self, objects: Sequence[Mapping[str, Any]], query: ListQuery) -> bytes:
        """The list body of the page ``query`` asks for, for objects whose rendering depends on nothing else.

        The last body of each query is kept with the object list it came from; the cache hands out
        the same frozen objects until they change, so an unchanged list compares equal by identity
        (element by element, in C) and the cached bytes are served without touching any object.
        """
        cached = self._pages.get(query)
        if cached is not None and cached[0] == objects:
            return cached[1]
        page, token = paginate(objects, query)
        body = list_body([self.encoded(obj) for obj in page], token=token, total=len(objects))
        with self._lock:
            self._pages.pop(query, None)
            if len(self._pages) >= self._max_pages:
                del self._pages[next(iter(self._pages))]  # the least recently stored query
            self._pages[query] = (objects, body)
        return body


def list_body(encoded_items: Sequence[bytes], *, token: str | None, total: int) -> bytes:
    """``{"items": [...], "continue": ..., "total": ...}`` from already encoded items."""
    return b'{"items":[' + b",".join(encoded_items) + b'],"continue":' + orjson.dumps(token) + b',"total":' + str(total).encode() + b"}"
