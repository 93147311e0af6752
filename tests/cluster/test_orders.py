"""Sorted lists of the informer store (:mod:`cluster.orders`): the order's rule, kept through every kind of change.

The rule (one definition for the JSON API's ``?sort=`` and the dashboard's columns): by value, ascending or descending;
ties in key (namespace/name) order both ways; objects without a value last, in key order. Checked against a reference
written from the rule (a plain sort of the whole list, which the store no longer does) after adds, value changes,
changes that keep the value, deletes, a relist that changes a few objects and one that changes many; a namespace's
list; :func:`cluster.orders.arrange` (a list no store keeps); and a value that changed although its object did not. The
values spread over few values (long runs of ties, as states) and over many (few ties, as names): a descending list puts
the runs back in key order one way or the other (:func:`cluster.orders.descending`), checked alone against a sort.
Label selectors over every such list keep what a test of each object's labels keeps (the store tests each distinct,
shared label map once). Each store test runs on each store form: frozen or packed bodies, the order made at its first
list or kept from the start (:data:`FORMS`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from cluster.bodies import FrozenDict, freeze, object_key, share_labels
from cluster.orders import Order, arrange, descending
from cluster.selectors import parse
from cluster.stores import RESORT_MAX_CHANGES, Store


def obj(namespace: str, name: str, version: int, rank: int | None) -> FrozenDict:
    """An object as the informer stores it; labelled by its name's number (one in five without labels), equal label maps
    shared (:func:`cluster.bodies.share_labels`)."""
    spec = {} if rank is None else {"rank": rank}
    number = int("0" + "".join(c for c in name if c.isdigit()))
    meta: dict[str, Any] = {"namespace": namespace, "name": name, "resourceVersion": str(version)}
    if number % 5:
        meta["labels"] = {"team": f"t{number % 3}", **({"tier": "front"} if number % 2 else {})}
    frozen = freeze(share_labels({"metadata": meta, "spec": spec}))
    assert isinstance(frozen, FrozenDict)
    return frozen


def rank(o: Mapping[str, Any]) -> int | None:
    found: int | None = o["spec"].get("rank")
    return found


BY_RANK = Order("rank", rank)
BY_RANK_DESCENDING = Order("rank", rank, reverse=True)

# frozen or packed (cluster.packing), the rank order made at its first list or kept from the start
FORMS: dict[str, dict[str, Any]] = {
    "frozen": {},
    "packed": {"packed": True},
    "frozen, order kept": {"orders": [BY_RANK]},
    "packed, order kept": {"packed": True, "orders": [BY_RANK]},
}


@pytest.fixture(params=list(FORMS))
def form(request: pytest.FixtureRequest) -> dict[str, Any]:
    """A :class:`Store`'s arguments, one form per run of the test."""
    return FORMS[request.param]


def reference(objects: Sequence[FrozenDict], reverse: bool) -> list[str]:
    """The rule, written out: valued objects by value (ties by key), then the ones without, by key."""
    valued = sorted((o for o in objects if rank(o) is not None), key=lambda o: (-rank(o) if reverse else rank(o), object_key(o)))  # type: ignore[operator]
    missing = sorted((o for o in objects if rank(o) is None), key=object_key)
    return [object_key(o) for o in valued + missing]


def listed(store: Store, order: Order, namespace: str | None = None) -> list[str]:
    return [object_key(o) for o in store.list(order=order, namespace=namespace)]


SELECTORS = [parse(text) for text in ("team=t1", "team!=t1", "team in (t0,t2),!tier", "tier", "absent", "team notin (t0)")]


def check(store: Store) -> None:
    everything = store.list()
    for order in (BY_RANK, BY_RANK_DESCENDING):
        assert listed(store, order) == reference(everything, order.reverse)
        for namespace in ("ns-0", "ns-1", "ns-10"):
            theirs = [o for o in everything if o["metadata"]["namespace"] == namespace]
            assert listed(store, order, namespace) == reference(theirs, order.reverse)
    check_selectors(store)


def check_selectors(store: Store) -> None:
    """A selector keeps, of every list (key order or an order, a namespace or all, a name filter or none), the objects
    whose labels it matches, in the list's order."""
    for order in (None, BY_RANK, BY_RANK_DESCENDING):
        for namespace in (None, "ns-1"):
            for part in ("", "1"):
                unselected = store.list(order=order, namespace=namespace, name_contains=part)
                for selector in SELECTORS:
                    expected = [o for o in unselected if selector.matches(o["metadata"].get("labels"))]
                    assert store.list(order=order, namespace=namespace, name_contains=part, selector=selector) == expected


def random_rank(rng: random.Random, spread: int = 6) -> int | None:
    return None if rng.random() < 0.15 else rng.randrange(spread)  # 6 values: long runs of ties; 1,000: few ties


# four random histories of each spread on frozen stores, one on each other form (a packed store decodes each object the
# checks read: ~4 s a history)
HISTORIES = [
    pytest.param(name, seed, spread, id=f"{name}-{seed}-{spread}")
    for name in FORMS
    for seed in (range(4) if name == "frozen" else range(1))
    for spread in (6, 1000)
]


@pytest.mark.parametrize(("form_name", "seed", "spread"), HISTORIES)
def test_a_stores_order_follows_adds_changes_and_deletes(form_name: str, seed: int, spread: int) -> None:
    rng = random.Random(seed)
    store = Store(**FORMS[form_name])
    version = 0
    for n in range(40):  # before the order was first asked for: made by one sort
        version += 1
        store.apply("ADDED", obj(f"ns-{n % 11}", f"o-{n:03}", version, random_rank(rng, spread)))
    check(store)
    for _ in range(300):  # after: kept up to date change by change
        version += 1
        present = store.list()
        step = rng.random()
        if step < 0.3 or not present:
            store.apply("ADDED", obj(f"ns-{rng.randrange(12)}", f"o-{rng.randrange(1000):03}", version, random_rank(rng, spread)))
        elif step < 0.6:
            old = rng.choice(present)
            store.apply("MODIFIED", obj(old["metadata"]["namespace"], old["metadata"]["name"], version, random_rank(rng, spread)))
        elif step < 0.8:  # a change that keeps the value (a status change): the object's new body is listed
            old = rng.choice(present)
            changed = obj(old["metadata"]["namespace"], old["metadata"]["name"], version, rank(old))
            store.apply("MODIFIED", changed)
            assert any(o == changed for o in store.list(order=BY_RANK))  # the new version: its resourceVersion
        else:
            store.apply("DELETED", rng.choice(present))
        check(store)


@pytest.mark.parametrize("changed", [3, RESORT_MAX_CHANGES + 1])
def test_a_relist_keeps_the_order_whether_few_or_many_objects_changed(changed: int, form: dict[str, Any]) -> None:
    rng = random.Random(changed)
    store = Store(**form)
    objects = [obj(f"ns-{n % 7}", f"o-{n:04}", n, random_rank(rng)) for n in range(RESORT_MAX_CHANGES + 50)]
    store.replace(objects, "1")
    check(store)
    fresh = list(objects)
    for at in rng.sample(range(len(fresh)), changed):
        old = fresh[at]
        fresh[at] = obj(old["metadata"]["namespace"], old["metadata"]["name"], 10_000 + at, random_rank(rng))
    gone = fresh.pop(rng.randrange(len(fresh)))
    fresh.append(obj("ns-1", "o-new", 20_000, 3))
    store.replace(fresh, "2")
    check(store)
    assert object_key(gone) not in listed(store, BY_RANK) and "ns-1/o-new" in listed(store, BY_RANK)


def test_arrange_sorts_a_list_no_store_keeps_by_the_same_rule() -> None:
    rng = random.Random(7)
    objects = [obj(f"ns-{n % 3}", f"o-{n:03}", n, random_rank(rng)) for n in range(80)]
    rng.shuffle(objects)
    for order in (BY_RANK, BY_RANK_DESCENDING):
        assert [object_key(o) for o in arrange(objects, order)] == reference(objects, order.reverse)


def test_a_value_that_changed_without_its_object_is_still_moved_when_the_object_changes(form: dict[str, Any]) -> None:
    """A value function that is not a function of the object alone (against the module's rule) loses no row: the
    object's row is found by its key and replaced, never left behind as a second row."""
    bonus = {"ns-0/b": 0}
    order = Order("bonus", lambda o: rank(o) + bonus.get(object_key(o), 0))  # type: ignore[operator]
    store = Store(**form)
    for n, name in enumerate("abc"):
        store.apply("ADDED", obj("ns-0", name, n, n))
    assert listed(store, order) == ["ns-0/a", "ns-0/b", "ns-0/c"]
    bonus["ns-0/b"] = 10  # b's row still says 1
    store.apply("MODIFIED", obj("ns-0", "b", 9, 1))
    assert listed(store, order) == ["ns-0/a", "ns-0/c", "ns-0/b"]
    store.apply("DELETED", obj("ns-0", "b", 10, 1))
    assert listed(store, order) == ["ns-0/a", "ns-0/c"]


def test_the_name_filter_looks_at_names_only_in_key_order_and_in_an_order(form: dict[str, Any]) -> None:
    """``name_contains`` keeps objects whose name contains it: a namespace that contains it does not count."""
    store = Store(**form)
    for n, (namespace, name) in enumerate([("web", "web-a"), ("web", "db-b"), ("api", "web-c"), ("api", "db-d"), ("web", "x-web")]):
        store.apply("ADDED", obj(namespace, name, n, n))
    expected = ["api/web-c", "web/web-a", "web/x-web"]
    assert [object_key(o) for o in store.list(name_contains="web")] == expected
    assert listed_named(store, BY_RANK, "web") == ["web/web-a", "api/web-c", "web/x-web"]
    assert listed_named(store, BY_RANK_DESCENDING, "web") == ["web/x-web", "api/web-c", "web/web-a"]
    assert [object_key(o) for o in store.list(name_contains="web", namespace="web")] == ["web/web-a", "web/x-web"]
    assert listed_named(store, BY_RANK, "db", namespace="api") == ["api/db-d"]
    not_web_a = lambda key: key != "web/web-a"  # noqa: E731 - a key filter (cluster.orders.KeyFilter)
    descending_web = store.list(order=BY_RANK_DESCENDING, name_contains="web", key_filter=not_web_a)
    assert [object_key(o) for o in descending_web] == ["web/x-web", "api/web-c"]
    assert [object_key(o) for o in store.list(order=BY_RANK, key_filter=not_web_a)] == ["web/db-b", "api/web-c", "api/db-d", "web/x-web"]
    assert store.list(name_contains="nothing") == []


def listed_named(store: Store, order: Order, part: str, namespace: str | None = None) -> list[str]:
    return [object_key(o) for o in store.list(order=order, name_contains=part, namespace=namespace)]


def test_a_list_among_namespaces_keeps_only_theirs_in_key_order_and_in_an_order(form: dict[str, Any]) -> None:
    store = Store(**form)
    for n, (namespace, name) in enumerate([("a", "x"), ("a-b", "y"), ("b", "z"), ("a", "w"), ("c", "v")]):
        store.apply("ADDED", obj(namespace, name, n, 5 - n))
    assert [object_key(o) for o in store.list(namespaces={"a", "a-b"})] == ["a-b/y", "a/w", "a/x"]  # the keys' order, as etcd's
    assert [object_key(o) for o in store.list(order=BY_RANK, namespaces={"a", "c"})] == ["c/v", "a/w", "a/x"]
    assert [object_key(o) for o in store.list(order=BY_RANK, namespaces={"a"}, name_contains="x")] == ["a/x"]
    assert store.list(namespaces=set()) == []


@pytest.mark.parametrize("spread", [1, 2, 5, 50, 10_000])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 200])
def test_descending_keeps_ties_in_key_order_however_many_there_are(count: int, spread: int) -> None:
    """Every mix of runs: all equal, a few long runs, as many ties as not, hardly any; the ends of the list included."""
    rng = random.Random(count * 31 + spread)
    rows = sorted((rng.randrange(spread), f"k-{n:04}") for n in range(count))  # ascending by value, ties by key
    values, keys = [v for v, _ in rows], [k for _, k in rows]
    expected = [k for _, k in sorted(rows, key=lambda row: (-row[0], row[1]))]
    assert descending(values, keys) == expected
    unvalued = ["z-0", "z-1"]  # rows without a value follow: only the first ``count`` are turned
    assert descending([*values, None, None], [*keys, *unvalued], count) == expected
