"""The informer store's lists (:class:`cluster.stores.Store`): always in key order, like the API server's.

Behaviours: every object's list and a namespace's are sorted by key whatever order objects came in; a change keeps an
object's place and shows its new body; an object that comes or goes (an event, or a relist that adds, drops or keeps)
is placed or gone in the next list; a label selector filters that order. Each test runs on a store of each form (frozen
bodies, packed texts: ``store_form``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from cluster.bodies import FrozenDict, freeze
from cluster.indexers import NAMESPACE
from cluster.selectors import parse
from cluster.stores import Store


def obj(namespace: str, name: str, version: int, **labels: str) -> FrozenDict:
    body = {"metadata": {"namespace": namespace, "name": name, "resourceVersion": str(version), "labels": labels}}
    frozen = freeze(body)
    assert isinstance(frozen, FrozenDict)
    return frozen


def keys(objects: Sequence[FrozenDict]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


def test_lists_are_in_key_order_through_adds_changes_deletes_and_relists(store_form: dict[str, Any]) -> None:
    store = Store(**store_form)
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


def test_an_index_files_each_object_under_its_values_through_changes_deletes_and_relists(store_form: dict[str, Any]) -> None:
    """``by_index`` and ``index_values`` agree with the objects themselves after every step of a random history, with
    values filing one object, several, none any more, and one object filing a value twice (a list with a repeat)."""

    def teams(o: Any) -> list[str]:
        return [v for k, v in sorted(o["metadata"]["labels"].items()) if k.startswith("team")]

    def expected(objects: dict[str, FrozenDict]) -> dict[str, list[str]]:
        filed: dict[str, set[str]] = {}
        for key, o in objects.items():
            for team in teams(o):
                filed.setdefault(team, set()).add(key)
        return {team: sorted(found) for team, found in filed.items()}

    store = Store(index_functions={"team": teams}, **store_form)
    alive: dict[str, FrozenDict] = {}
    pick = random.Random(11)
    for version in range(1, 600):
        name = f"o-{pick.randrange(12)}"
        labels = {f"team{i}": f"t{pick.randrange(4)}" for i in range(pick.randrange(3))}  # 0-2 values, maybe equal
        body = obj("ns", name, version, **labels)
        if pick.random() < 0.25 and f"ns/{name}" in alive:
            store.apply("DELETED", alive.pop(f"ns/{name}"))
        elif pick.random() < 0.05:
            kept = pick.sample(sorted(alive), k=len(alive) // 2)
            alive = {k: alive[k] if pick.random() < 0.5 else obj("ns", k[3:], version, team0="t9") for k in kept}
            store.replace(alive.values(), str(version))
        else:
            store.apply("MODIFIED" if f"ns/{name}" in alive else "ADDED", body)
            alive[f"ns/{name}"] = body
        want = expected(alive)
        assert store.index_values("team") == sorted(want), version
        for team in ("t0", "t1", "t2", "t3", "t9"):
            assert keys(store.by_index("team", team)) == want.get(team, []), (version, team)
            assert store.filed_keys("team", team) == want.get(team, []), (version, team)


def test_lists_by_namespace_and_name_agree_with_the_objects_through_a_random_history(store_form: dict[str, Any]) -> None:
    """Every list (all, one namespace, several, a name filter) equals the objects sorted by key after each step, with
    namespaces whose names are prefixes of one another's ("a", "a-b", "a1", "ab"): a namespace's keys are neighbours."""
    namespaces = ("a", "a-b", "a1", "ab", "b")
    store = Store(**store_form)
    alive: dict[str, FrozenDict] = {}
    pick = random.Random(5)
    for version in range(1, 500):
        namespace, name = pick.choice(namespaces), f"o-{pick.randrange(8)}"
        key = f"{namespace}/{name}"
        if pick.random() < 0.3 and key in alive:
            store.apply("DELETED", alive.pop(key))
        elif pick.random() < 0.04:
            kept = pick.sample(sorted(alive), k=len(alive) // 2)
            alive = {k: alive[k] if pick.random() < 0.5 else obj(k.split("/")[0], k.split("/")[1], version) for k in kept}
            store.replace(alive.values(), str(version))
        else:
            event = "MODIFIED" if key in alive else "ADDED"
            alive[key] = obj(namespace, name, version)
            store.apply(event, alive[key])
        every = sorted(alive)
        assert keys(store.list()) == every and store.list() == [alive[k] for k in every], version
        for ns in (*namespaces, "a-", "zz"):
            assert keys(store.list(namespace=ns)) == [k for k in every if k.split("/")[0] == ns], (version, ns)
            assert keys(store.by_index(NAMESPACE, ns)) == keys(store.list(namespace=ns))
        assert store.index_values(NAMESPACE) == sorted({k.split("/")[0] for k in every})
        assert keys(store.list(namespaces={"a", "ab"})) == [k for k in every if k.split("/")[0] in ("a", "ab")]
        assert keys(store.list(name_contains="o-1")) == [k for k in every if "o-1" in k.split("/")[1]]
        assert keys(store.list(namespace="a", name_contains="2")) == [k for k in every if k.startswith("a/") and "2" in k[2:]]

        def odd(key: str) -> bool:  # a key filter (a field selector on the name, read off the keys)
            return int(key[-1]) % 2 == 1

        assert keys(store.list(key_filter=odd)) == [k for k in every if odd(k)]
        assert keys(store.list(namespace="ab", name_contains="o-", key_filter=odd)) == [k for k in every if k.startswith("ab/") and odd(k)]


def test_cluster_scoped_objects_are_the_namespace_index_s_empty_namespace(store_form: dict[str, Any]) -> None:
    store = Store(**store_form)
    for version, name in enumerate(("b", "a", "c")):
        store.apply("ADDED", freeze({"metadata": {"name": name, "resourceVersion": str(version)}}))
    store.apply("DELETED", freeze({"metadata": {"name": "c", "resourceVersion": "9"}}))
    assert [o["metadata"]["name"] for o in store.list()] == ["a", "b"]
    assert [o["metadata"]["name"] for o in store.by_index(NAMESPACE, "")] == ["a", "b"]
    assert store.index_values(NAMESPACE) == [""]
