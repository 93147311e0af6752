"""The CombinedTask view (aggregator.view) and the lists served from it (aggregator.listing), on fake informers.

Behaviours: rebuild combines each Task with its Events (labelled or about it) oldest first; a Task or
Event change records one change whose version only grows, even when an Event arrives after a newer
Task (one more than the last); an unchanged combination (a replayed add) records nothing; a deleted
Task is a DELETED change; subscribe replays exactly the changes after a version and refuses (Expired)
one older than the kept history; lists page by namespace/name, continue from the same snapshot, answer
410 with an inconsistent token once the snapshot is gone, and 400 for tokens not issued here.
"""

from __future__ import annotations

import pytest

from aggregator import listing, queries
from aggregator.statuses import ApiError
from aggregator.view import TASK_INDEXERS, Change, Expired, View
from cluster.taskevents import INDEXERS

from .fakes import FakeInformer, event, task


def make(history_size: int = 100, snapshots: int = 16) -> tuple[View, FakeInformer, FakeInformer]:
    tasks, events = FakeInformer(TASK_INDEXERS), FakeInformer(INDEXERS)
    view = View(tasks=tasks, events=events, history_size=history_size, snapshots=snapshots)  # type: ignore[arg-type]
    return view, tasks, events


def test_rebuild_and_changes() -> None:
    view, tasks, events = make()
    tasks.apply("ADDED", task("a", 10))
    events.apply("ADDED", event("Second", 12, "uid-a", first="2030-01-02T00:00:00Z"))
    events.apply("ADDED", event("First", 11, "uid-a", first="2030-01-01T00:00:00Z"))
    view.rebuild()
    a = view.get("ns/a")
    assert a is not None and [e["reason"] for e in a["status"]["events"]] == ["First", "Second"]
    assert a["metadata"]["resourceVersion"] == "12" and view.highwater == 12
    seen: list[Change] = []
    view.subscribe(seen.append, since=None)
    tasks.handlers[0]["on_add"](tasks.store.get("ns/a"))  # type: ignore[misc]  # a replayed add: nothing changed
    assert seen == []
    tasks.apply("MODIFIED", task("a", 20, priority=5))
    events.apply("ADDED", event("Late", 15, "uid-a"))  # older than the Task's change, applied after it
    assert [(c.type, c.rv) for c in seen] == [("MODIFIED", 20), ("MODIFIED", 21)]
    assert view.get("ns/a")["metadata"]["resourceVersion"] == "21"  # type: ignore[index]
    tasks.apply("DELETED", task("a", 30))
    assert (seen[-1].type, seen[-1].rv, view.get("ns/a")) == ("DELETED", 30, None)
    assert seen[-1].obj["metadata"]["resourceVersion"] == "30"


def test_subscribe_replays_after_a_version_and_refuses_too_old() -> None:
    view, tasks, _ = make(history_size=2)
    view.rebuild()
    for rv, name in ((5, "a"), (6, "b"), (7, "c")):
        tasks.apply("ADDED", task(name, rv))
    replay, current = view.subscribe(lambda c: None, since=6)
    assert [c.rv for c in replay] == [7] and current == 7
    with pytest.raises(Expired) as caught:
        view.subscribe(lambda c: None, since=4)
    assert caught.value.oldest == 5


def options(**args: str) -> queries.ListOptions:
    return queries.parse(args)


def names(page: listing.Page) -> list[str]:
    return [i["metadata"]["name"] for i in page.items]


def test_paging_from_snapshots() -> None:
    view, tasks, _ = make(snapshots=1)
    for rv, (namespace, name) in enumerate((("a", "x"), ("b", "p"), ("b", "q"), ("b", "r"), ("c", "y")), start=1):
        tasks.apply("ADDED", task(name, rv, namespace=namespace, uid=f"{namespace}-{name}"))
    view.rebuild()
    first = listing.list_page(view, options(limit="2"), "b", wait_s=0)
    assert names(first) == ["p", "q"] and first.remaining == 1 and first.continue_token
    tasks.apply("ADDED", task("pp", 9, namespace="b"))
    second = listing.list_page(view, options(limit="2", **{"continue": first.continue_token}), "b", wait_s=0)
    assert names(second) == ["r"] and second.resource_version == first.resource_version and not second.continue_token
    assert names(listing.list_page(view, options(), None, wait_s=0)) == ["x", "p", "pp", "q", "r", "y"]
    listing.list_page(view, options(), None, wait_s=0)  # the only kept snapshot is now the current one
    with pytest.raises(ApiError) as caught:
        listing.list_page(view, options(**{"continue": first.continue_token}), "b", wait_s=0)
    assert caught.value.code == 410 and caught.value.continue_token
    inconsistent = listing.list_page(view, options(**{"continue": caught.value.continue_token}), "b", wait_s=0)
    assert names(inconsistent) == ["r"]  # continues after q at the current version
    for token in ("%%%", listing.encode_continue(0, "b/q"), "eyJ2IjoieCJ9"):
        with pytest.raises(ApiError) as bad:
            listing.list_page(view, options(**{"continue": token}), "b", wait_s=0)
        assert bad.value.code == 400 and bad.value.message.startswith("invalid continue token: continue key is not valid")


def test_versions_of_lists() -> None:
    view, tasks, _ = make()
    tasks.apply("ADDED", task("a", 3))
    view.rebuild()
    assert listing.list_page(view, options(resourceVersion="3", resourceVersionMatch="Exact"), None, wait_s=0).resource_version == "3"
    with pytest.raises(ApiError) as future:
        listing.list_page(view, options(resourceVersion="99"), None, wait_s=0)
    assert future.value.code == 504 and future.value.message == "Timeout: Too large resource version: 99, current: 3"
    tasks.apply("MODIFIED", task("a", 4, priority=2))
    with pytest.raises(ApiError) as old:
        listing.list_page(view, options(resourceVersion="2", resourceVersionMatch="Exact"), None, wait_s=0)
    assert old.value.code == 410 and old.value.reason == "Expired"
