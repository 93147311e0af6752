"""Paginated lists read one view per revision, kept while pages remain, in etcd's key order.

Behaviours covered:

- a LIST of many pages builds the view of its revision once (the first page) and serves every ``continue`` page from
  it, each object once, in ``namespace/name`` string order (``team-a/x`` before ``team/x``, as etcd's keys sort;
  pages across such namespaces lose no object); the view is released when the last page is served;
- a continued page stays consistent with the first page's revision after writes (from the kept view, or rebuilt
  from the history when the view was dropped), and is 410 Expired once the history no longer reaches back, kept
  view or not;
- kept views are bounded: at most ``size`` (the least recently used dropped first), each dropped ``ttl_s`` after
  its last use, and dropped once compacted away.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devcluster import listviews
from devcluster.errors import StatusError
from devcluster.listviews import KeptViews, View
from devcluster.reading import ListQuery, list_objects
from devcluster.resources import BUILTINS
from devcluster.selectors import FieldSelector, parse_label_selector
from devcluster.storage import Storage
from devcluster.store import Store

CONFIGMAPS = next(r for r in BUILTINS if r.kind == "ConfigMap")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(Storage(tmp_path / "data"), history_size=1000)


def configmap(namespace: str, name: str, value: str = "1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": namespace, "name": name}, "data": {"v": value}}


def query(*, namespace: str | None = None, limit: int = 0, token: str = "", labels: str = "") -> ListQuery:
    return ListQuery(namespace, parse_label_selector(labels), FieldSelector(), limit=limit, continue_token=token)


def pages(store: Store, **kw: Any) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    out = [list_objects(store, CONFIGMAPS, query(**kw))]
    while out[-1][1].get("continue"):
        out.append(list_objects(store, CONFIGMAPS, query(**kw, token=out[-1][1]["continue"])))
    return out


def keys(items: list[dict[str, Any]]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]


def test_a_list_of_many_pages_builds_its_view_once_in_key_order_and_releases_it(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for namespace in ("team", "team-a", "teamb"):
        for i in range(40):
            store.put(CONFIGMAPS.storage_key, configmap(namespace, f"cm-{i:02}"))
    built: list[int] = []
    original = View.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[View], revision: int, state: dict[tuple[str, str], dict[str, Any]]) -> View:
        built.append(len(state))
        return original(cls, revision, state)  # type: ignore[no-any-return]

    monkeypatch.setattr(listviews.View, "of", classmethod(counted))

    listed = pages(store, limit=7)

    assert built == [120]  # the first page's view; the 17 continue pages read it
    assert len(listed) == 18
    assert {meta["resourceVersion"] for _, meta in listed} == {str(store.revision)}
    everything = [key for items, _ in listed for key in keys(items)]
    assert everything == sorted(everything)
    assert everything[0] == "team-a/cm-00" and everything[40] == "team/cm-00" and everything[80] == "teamb/cm-00"
    assert len(set(everything)) == 120
    assert [meta.get("remainingItemCount") for _, meta in listed[:2]] == [113, 106]
    assert len(store._kept_views) == 0  # released with the last page


def test_a_selector_pages_through_the_same_kept_view(store: Store) -> None:
    for i in range(30):
        obj = configmap("ns", f"cm-{i:02}")
        obj["metadata"]["labels"] = {"even": str(i % 2 == 0).lower()}
        store.put(CONFIGMAPS.storage_key, obj)
    listed = pages(store, namespace="ns", limit=4, labels="even=true")
    assert [key for items, _ in listed for key in keys(items)] == [f"ns/cm-{i:02}" for i in range(0, 30, 2)]
    assert all("remainingItemCount" not in meta for _, meta in listed)


@pytest.mark.parametrize("kept", [True, False])
def test_continued_pages_stay_at_the_first_pages_revision_until_the_history_is_compacted(tmp_path: Path, kept: bool) -> None:
    store = Store(Storage(tmp_path / "data"), history_size=20)
    for i in range(10):
        store.put(CONFIGMAPS.storage_key, configmap("ns", f"cm-{i}"))
    _, meta = list_objects(store, CONFIGMAPS, query(namespace="ns", limit=4))
    store.put(CONFIGMAPS.storage_key, configmap("ns", "cm-5", "2"))
    store.delete(CONFIGMAPS.storage_key, "ns", "cm-6")
    store.put(CONFIGMAPS.storage_key, configmap("ns", "cm-55"))
    if not kept:
        store._kept_views.release((CONFIGMAPS.storage_key, "ns", int(meta["resourceVersion"])))
    second, meta2 = list_objects(store, CONFIGMAPS, query(namespace="ns", limit=4, token=meta["continue"]))
    assert keys(second) == ["ns/cm-4", "ns/cm-5", "ns/cm-6", "ns/cm-7"]
    assert second[1]["data"] == {"v": "1"}
    assert meta2["resourceVersion"] == meta["resourceVersion"]

    for i in range(20):  # more changes than the history holds: the first page's revision is compacted away
        store.put(CONFIGMAPS.storage_key, configmap("other", f"cm-{i}"))
    with pytest.raises(StatusError) as info:
        list_objects(store, CONFIGMAPS, query(namespace="ns", limit=4, token=meta2["continue"]))
    assert info.value.code == 410
    assert len(store._kept_views) == 0


def test_kept_views_are_bounded_in_number_and_age() -> None:
    now = [0.0]
    kept = KeptViews(size=2, ttl_s=10.0, clock=lambda: now[0])
    views = {r: View(r, [], []) for r in (1, 2, 3)}
    kept.keep(("cm", None, 1), views[1])
    kept.keep(("cm", None, 2), views[2])
    assert kept.get(("cm", None, 1)) is views[1]  # used: now the most recent
    kept.keep(("cm", None, 3), views[3])
    assert kept.get(("cm", None, 2)) is None  # the least recently used went
    assert len(kept) == 2
    now[0] = 9.0
    assert kept.get(("cm", None, 3)) is views[3]
    now[0] = 15.0
    assert kept.get(("cm", None, 1)) is None  # unused for 15 s
    assert kept.get(("cm", None, 3)) is views[3]
    kept.drop_before(4)
    assert len(kept) == 0
