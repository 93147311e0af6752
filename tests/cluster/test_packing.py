"""Packed cached objects (:mod:`cluster.packing`): what a packed store keeps and what its readers get.

Behaviours: a packed object decodes to an equal, frozen object, a new one at each read; its text is held in a ``bytes``
of its own length (not orjson's larger output buffer); a list of packed objects decodes only the items read, slices
without decoding, and equals another list of the same stored versions by comparing the texts, or a list of equal
objects by decoding them; a packed store keeps the same text for an unchanged object across a relist.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson
import pytest

from cluster.bodies import FrozenDict, freeze, object_key, share_labels, thaw
from cluster.orders import Order
from cluster.packing import Bodies, pack, packed_version, unpack
from cluster.selectors import parse
from cluster.stores import Store


def darkroom(n: int, version: int = 1) -> FrozenDict:
    body: dict[str, Any] = {
        "apiVersion": "darkroom.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": f"d-{n:03}", "namespace": f"ns-{n % 3}", "resourceVersion": str(version), "labels": {"team": f"t{n % 2}"}},
        "spec": {"replicas": n, "subDomains": ["images", "cdn"], "source": {"type": "WebFolder", "baseUrl": "https://e.example"}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "message": "ünïcode ✓"}], "ratio": 0.5, "none": None},
    }
    frozen = freeze(share_labels(body))
    assert isinstance(frozen, FrozenDict)
    return frozen


def test_a_packed_object_decodes_to_an_equal_frozen_one_each_time() -> None:
    obj = darkroom(7)
    packed = pack(obj)
    first, second = unpack(packed), unpack(packed)
    assert first == second == obj and first is not second
    assert first["metadata"]["labels"] is second["metadata"]["labels"]  # equal label maps: the one shared map
    assert type(first) is FrozenDict and type(first["metadata"]["labels"]) is FrozenDict
    assert first["spec"]["subDomains"] == ("images", "cdn")  # lists are tuples, as frozen bodies have them
    with pytest.raises(TypeError):
        first["spec"].__setitem__("replicas", 1)
    assert packed_version(packed) == "1" == obj["metadata"]["resourceVersion"]


def test_the_text_is_held_in_a_bytes_of_its_own_length() -> None:
    obj = darkroom(1)
    packed = pack(obj)
    assert packed == orjson.dumps(obj)
    assert sys.getsizeof(packed) <= len(packed) + sys.getsizeof(b"")


def test_a_list_decodes_only_what_is_read_and_compares_by_the_stored_texts() -> None:
    texts = [pack(darkroom(n)) for n in range(10)]
    opened: list[bytes] = []

    def counting(text: bytes) -> FrozenDict:
        opened.append(text)
        return unpack(text)

    bodies = Bodies(texts, counting)
    page = bodies[2:5]
    assert isinstance(page, Bodies) and len(page) == 3 and opened == []
    assert [o["metadata"]["name"] for o in page] == ["d-002", "d-003", "d-004"] and len(opened) == 3
    assert bodies[-1]["metadata"]["name"] == "d-009" and len(opened) == 4
    assert Bodies(list(texts), counting) == bodies and len(opened) == 4  # the same texts: nothing decoded
    changed = list(texts)
    changed[3] = pack(darkroom(3, version=2))
    assert Bodies(changed, counting) != bodies and len(opened) == 4
    assert bodies == [darkroom(n) for n in range(10)] and bodies != [darkroom(n) for n in range(9)]
    assert Bodies([], unpack) == [] and list(Bodies([], unpack)) == []


def test_a_packed_store_keeps_an_unchanged_objects_text_through_a_relist() -> None:
    store = Store(packed=True)
    store.replace([darkroom(n) for n in range(5)], "1")
    kept = store.stored("ns-1/d-001")
    assert isinstance(kept, bytes) and store.version("ns-1/d-001") == "1"
    deltas = store.replace([darkroom(n, version=2 if n == 2 else 1) for n in range(2, 5)], "2", unchanged=["ns-1/d-001"])
    assert store.stored("ns-1/d-001") is kept
    assert sorted((kind, obj["metadata"]["name"]) for kind, obj, _ in deltas) == [("DELETED", "d-000"), ("MODIFIED", "d-002")]
    previous = next(previous for kind, _, previous in deltas if kind == "MODIFIED")
    assert previous is not None and previous["metadata"]["resourceVersion"] == "1"
    assert store.get("ns-2/d-002") == darkroom(2, version=2) and store.version("ns-0/d-000") is None


@pytest.mark.parametrize("changed", [5, 1_500])
def test_a_relist_of_texts_fills_a_packed_store_and_its_kept_orders(changed: int) -> None:
    """An informer hands a packed store's relist the texts it made (:meth:`Store.hold`): the store decodes each once,
    keeps the text, and its kept orders follow whether few objects changed (row by row) or many (made again from the
    rows' values and the changed objects' own); ``report=False`` makes no deltas and changes nothing else."""
    by_replicas = Order("replicas", lambda obj: obj["spec"]["replicas"])
    stores = [Store(packed=True, orders=[by_replicas]) for _ in range(2)]
    for store in stores:
        store.replace([store.hold(darkroom(n)) for n in range(2_000)], "1", report=store is stores[0])
    fresh = [darkroom(n, version=2) if n < changed else darkroom(n) for n in range(1, 2_000)]
    fresh = [
        freeze({**thaw(obj), "spec": {**obj["spec"], "replicas": -obj["spec"]["replicas"]}}) if n < changed else obj
        for n, obj in enumerate(fresh, 1)
    ]
    texts = [stores[0].hold(obj) for obj in fresh]
    assert all(type(text) is bytes for text in texts)
    deltas = stores[0].replace(texts, "2")
    assert len(deltas) == changed  # changed - 1 modified (d-001 ...), d-000 deleted
    assert stores[1].replace(texts, "2", report=False) == []
    expected = sorted(fresh, key=lambda obj: (obj["spec"]["replicas"], object_key(obj)))
    for store in stores:
        assert store.list(order=by_replicas) == expected
        assert store.list(selector=parse("team=t1")) == [
            obj for obj in sorted(fresh, key=object_key) if obj["metadata"]["labels"]["team"] == "t1"
        ]
        shared = {id(store.get(object_key(obj))["metadata"]["labels"]) for obj in fresh}  # type: ignore[index]
        assert len(shared) == 2  # two label sets, one map each, though every object was decoded from its text
        assert store.stored(object_key(fresh[0])) is texts[0]  # changed: the relist's text is kept
        unchanged = store.stored(object_key(fresh[-1]))
        assert unchanged == texts[-1] and unchanged is not texts[-1]  # unchanged: the store's own text stays
