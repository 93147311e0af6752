"""Watches of CombinedTasks: a stream of JSON lines from the :class:`aggregator.view.View`'s changes.

Called by :mod:`aggregator.app` for ``?watch=true``. As kube-apiserver's watch cache serves a watch:

- ``resourceVersion`` unset or ``"0"``: synthetic ``ADDED`` events for every selected object first,
  then changes; ``resourceVersion=N``: the kept changes after N, then new ones; N older than the
  oldest kept change: one ``ERROR`` event with a 410 Expired Status (the client relists);
- ``sendInitialEvents=true`` (``resourceVersionMatch=NotOlderThan``, bookmarks on): the initial
  ``ADDED`` events, then a ``BOOKMARK`` annotated ``k8s.io/initial-events-end: "true"``;
- selectors apply to the old and the new object: an object that stops matching is sent ``DELETED``,
  one that starts matching ``ADDED``;
- ``allowWatchBookmarks``: a ``BOOKMARK`` with the view's version every ``bookmark_interval_s``;
- the stream ends after ``timeoutSeconds`` (unset: a random time between the minimum request timeout
  and twice it, as kube-apiserver), or when the client falls ``max_queue`` changes behind (it
  re-watches from the last version it saw, as after any ended watch);
- with a Table Accept header each event's object is a one-row Table.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from aggregator import combining, statuses, tables
from aggregator.listing import wait_until
from aggregator.queries import ListOptions, resource_version_number
from aggregator.view import Change, Expired, View
from cluster.bodies import FrozenDict


@dataclass(frozen=True)
class WatchSettings:
    bookmark_interval_s: float
    min_request_timeout_s: float
    max_queue: int = 10_000


@dataclass(frozen=True)
class Output:
    table_version: str | None
    include: str

    def encode(self, kind: str, obj: Mapping[str, Any], *, first: bool) -> bytes:
        body: Mapping[str, Any] = obj
        if self.table_version is not None:
            meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
            rows = [] if kind == "BOOKMARK" else [obj]
            body = tables.table(rows, version=self.table_version, include=self.include, list_meta=meta, headers=first)
        return orjson.dumps({"type": kind, "object": body}) + b"\n"


def _selector(options: ListOptions, namespace: str | None) -> Callable[[Mapping[str, Any] | None], bool]:
    def selected(obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if namespace is not None and meta.get("namespace") != namespace:
            return False
        return options.labels.matches(meta.get("labels")) and options.fields.matches(obj)

    return selected


def translate(change: Change, selected: Callable[[Mapping[str, Any] | None], bool]) -> tuple[str, FrozenDict] | None:
    """The event a watcher with this selection sees for ``change`` (None: none)."""
    now, before = selected(change.obj), selected(change.previous)
    if change.type == "DELETED":
        return ("DELETED", change.obj) if before else None
    if now:
        return ("MODIFIED" if before else "ADDED", change.obj)
    if before:
        return ("DELETED", change.obj)
    return None


async def serve(
    request: web.Request, *, view: View, options: ListOptions, namespace: str | None, output: Output, settings: WatchSettings
) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Change] = asyncio.Queue()
    selected = _selector(options, namespace)

    def push(change: Change) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, change)

    initial: list[tuple[str, Mapping[str, Any]]] = []
    initial_end: str | None = None
    since: int | None = None
    expired: statuses.ApiError | None = None
    rv = options.resource_version
    if options.send_initial_events or (options.send_initial_events is None and rv in ("", "0")):
        if rv not in ("", "0"):
            await asyncio.to_thread(wait_until, view, resource_version_number(rv), 3.0)
        objects, version = view.subscribe_with_state(push)
        initial = [("ADDED", obj) for obj in objects if selected(obj)]
        if options.send_initial_events:
            initial_end = str(version)
    else:
        since = None if rv in ("", "0") else resource_version_number(rv)
        try:
            replay, _ = view.subscribe(push, since=since)
        except Expired as e:
            expired = statuses.expired(f"too old resource version: {since} ({e.oldest})")
            replay = []
        for change in replay:
            queue.put_nowait(change)

    response = web.StreamResponse(headers={"Content-Type": "application/json", "Cache-Control": "no-cache"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    first = True
    try:
        if expired is not None:
            await response.write(orjson.dumps({"type": "ERROR", "object": expired.status()}) + b"\n")
            return response
        for kind, obj in initial:
            await response.write(output.encode(kind, obj, first=first))
            first = False
        if initial_end is not None:
            await response.write(output.encode("BOOKMARK", combining.bookmark(initial_end, initial_events_end=True), first=first))
            first = False
        after = since if since is not None else 0
        await _follow(
            response, queue, view, options, lambda c: translate(c, selected) if c.rv > after else None, output, settings, first=first
        )
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        view.unsubscribe(push)
    return response


async def _follow(
    response: web.StreamResponse,
    queue: asyncio.Queue[Change],
    view: View,
    options: ListOptions,
    event_of: Callable[[Change], tuple[str, FrozenDict] | None],
    output: Output,
    settings: WatchSettings,
    *,
    first: bool,
) -> None:
    loop = asyncio.get_running_loop()
    timeout_s = options.timeout_s if options.timeout_s else settings.min_request_timeout_s * random.uniform(1.0, 2.0)
    deadline = loop.time() + timeout_s
    next_bookmark = loop.time() + settings.bookmark_interval_s
    while True:
        now = loop.time()
        if now >= deadline or queue.qsize() > settings.max_queue:
            return
        wait = deadline - now
        if options.allow_watch_bookmarks:
            wait = min(wait, max(next_bookmark - now, 0))
        try:
            change = await asyncio.wait_for(queue.get(), timeout=wait)
        except TimeoutError:
            if options.allow_watch_bookmarks and loop.time() >= next_bookmark:
                await response.write(output.encode("BOOKMARK", combining.bookmark(str(view.highwater)), first=first))
                first = False
                next_bookmark = loop.time() + settings.bookmark_interval_s
            continue
        event = event_of(change)
        if event is not None:
            await response.write(output.encode(event[0], event[1], first=first))
            first = False
