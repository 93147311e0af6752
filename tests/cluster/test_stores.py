"""The informer store's lists (:class:`cluster.stores.Store`): always in key order, like the API server's.

Behaviours: every object's list and a namespace's are sorted by key whatever order objects came in; a change keeps an
object's place and shows its new body; an object that comes or goes (an event, or a relist that adds, drops or keeps)
is placed or gone in the next list; a label selector filters that order.
"""

from __future__ import annotations

import random

from cluster.bodies import FrozenDict, freeze
from cluster.selectors import parse
from cluster.stores import Store


def obj(namespace: str, name: str, version: int, **labels: str) -> FrozenDict:
    body = {"metadata": {"namespace": namespace, "name": name, "resourceVersion": str(version), "labels": labels}}
    frozen = freeze(body)
    assert isinstance(frozen, FrozenDict)
    return frozen


def keys(objects: list[FrozenDict]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


def test_lists_are_in_key_order_through_adds_changes_deletes_and_relists() -> None:
    store = Store()
    names = [(f"ns-{n % 3}", f"o-{n:03}") for n in range(60)]
    shuffled = random.Random(7).sample(names, len(names))
    for version, (namespace, name) in enumerate(shuffled):
        store.apply("ADDED", obj(namespace, name, version, team=name[-1]))
    expected = sorted(f"{ns}/{name}" for ns, name in names)
    assert keys(store.list()) == expected
    assert keys(store.list(namespace="ns-1")) == [k for k in expected if k.startswith("ns-1/")]

    store.apply("MODIFIED", obj("ns-0", "o-003", 100, team="changed"))  # a change keeps the order, shows the new body
    listed = store.list()
    assert keys(listed) == expected and listed[expected.index("ns-0/o-003")]["metadata"]["labels"] == {"team": "changed"}

    store.apply("ADDED", obj("ns-0", "a-first", 101))
    store.apply("DELETED", obj("ns-2", "o-005", 102))
    expected = sorted([*(k for k in expected if k != "ns-2/o-005"), "ns-0/a-first"])
    assert keys(store.list()) == expected

    kept = store.list()[5:25]
    store.replace([*kept, obj("zz", "late", 200)], "200")  # a relist: 20 stay, one comes, the rest go
    assert keys(store.list()) == sorted([*keys(kept), "zz/late"])

    selector = parse("team=3")
    assert keys(store.list(selector=selector)) == [k for k in keys(store.list()) if k.endswith("3")]
