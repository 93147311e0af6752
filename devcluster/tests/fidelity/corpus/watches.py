"""Watches: start points (none, 0, exact, too old, too large), selectors turning changes into
ADDED/DELETED, single-object watches, bookmarks, ``sendInitialEvents`` and the ListOptions checks
that apply to watches, ``timeoutSeconds``, Table watches.

Watches are scoped by a label or field selector so that what the real cluster's controllers do in
the namespace does not show up. Bookmarks are timer-driven on both servers; consecutive ones count
as one (``transcript.py``).
"""

from __future__ import annotations

from typing import Any

from fidelity.corpus import sequence
from fidelity.transcript import MERGE, TABLE, Side


def _rv(reply_json: Any) -> str:
    return str(((reply_json or {}).get("metadata") or {}).get("resourceVersion", ""))


@sequence("watches.from-resource-version")
def from_resource_version(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "w", "labels": {"watch": "yes"}}, "data": {"n": "0"}})
    watch = s.watch("watch", base, {"watch": "true", "labelSelector": "watch=yes", "resourceVersion": _rv(created.json)})
    s.patch("modify", f"{base}/w", {"data": {"n": "1"}}, MERGE)
    s.patch("unlabel", f"{base}/w", {"metadata": {"labels": {"watch": "no"}}}, MERGE)
    s.patch("relabel", f"{base}/w", {"metadata": {"labels": {"watch": "yes"}}}, MERGE)
    s.post("create-other", base, {"metadata": {"name": "x", "labels": {"watch": "yes"}}})
    s.delete("delete", f"{base}/w")
    watch.wait_events(5)
    watch.finish()


@sequence("watches.initial-state")
def initial_state(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    for name in ("b", "a", "c"):
        s.send("POST", base, body={"metadata": {"name": name, "labels": {"w": "1"}}})
    no_rv = s.watch("watch-no-rv", base, {"watch": "1", "labelSelector": "w=1"})
    no_rv.wait_events(3)
    no_rv.finish()
    rv0 = s.watch("watch-rv-0", base, {"watch": "true", "labelSelector": "w=1", "resourceVersion": "0"})
    rv0.wait_events(3)
    rv0.finish()
    streaming = s.watch(
        "watch-send-initial-events",
        base,
        {
            "watch": "true",
            "labelSelector": "w=1",
            "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan",
            "allowWatchBookmarks": "true",
        },
    )
    streaming.wait_for(lambda events: any(e.get("type") == "BOOKMARK" for e in events))
    streaming.finish()
    streaming_rv0 = s.watch(
        "watch-send-initial-events-rv-0",
        base,
        {
            "watch": "true",
            "labelSelector": "w=1",
            "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan",
            "resourceVersion": "0",
            "allowWatchBookmarks": "true",
        },
    )
    streaming_rv0.wait_for(lambda events: any(e.get("type") == "BOOKMARK" for e in events))
    streaming_rv0.finish()
    no_initial = s.watch(
        "watch-send-initial-events-false",
        base,
        {"watch": "true", "labelSelector": "w=1", "sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan"},
    )
    s.patch("touch", f"{base}/a", {"data": {"t": "1"}}, MERGE)
    no_initial.wait_events(1, timeout_s=5)
    no_initial.finish()


@sequence("watches.option-checks")
def option_checks(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "o", "labels": {"w": "o"}}})
    rv = _rv(created.json)
    for label, query in (
        ("rv-match-without-send-initial", {"resourceVersion": rv, "resourceVersionMatch": "NotOlderThan"}),
        ("rv-match-exact", {"resourceVersion": rv, "resourceVersionMatch": "Exact"}),
        ("send-initial-without-match", {"sendInitialEvents": "true"}),
        ("send-initial-exact", {"sendInitialEvents": "true", "resourceVersionMatch": "Exact", "resourceVersion": rv}),
        ("send-initial-no-bookmarks", {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}),
        ("bad-label-selector", {"labelSelector": "w in (o"}),
        ("bad-field-selector", {"fieldSelector": "data.x=1"}),
        ("bad-rv", {"resourceVersion": "abc"}),
        ("bad-timeout", {"timeoutSeconds": "soon"}),
    ):
        watch = s.watch(label, base, {"watch": "true", "labelSelector": "w=o", **query})
        watch.wait_events(1, timeout_s=2)
        watch.finish()


@sequence("watches.too-old-and-too-large")
def too_old_and_too_large(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "o", "labels": {"w": "o"}}})
    old = s.watch("too-old", base, {"watch": "true", "labelSelector": "w=o", "resourceVersion": "1"})
    old.wait_events(1, timeout_s=5)
    old.finish(wait_end_s=2)
    large = s.watch(
        "too-large", base, {"watch": "true", "labelSelector": "w=o", "resourceVersion": str(int(_rv(created.json)) + 10_000_000)}
    )
    large.wait_events(1, timeout_s=3)
    large.finish(wait_end_s=2)


@sequence("watches.single-object")
def single_object(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "one"}})
    s.send("POST", base, body={"metadata": {"name": "two"}})
    by_field = s.watch(
        "field-selector", base, {"watch": "true", "fieldSelector": "metadata.name=one", "resourceVersion": _rv(created.json)}
    )
    legacy = s.watch("legacy-path", f"/api/v1/watch/namespaces/{s.ns}/configmaps/one", {"resourceVersion": _rv(created.json)})
    legacy_list = s.watch("legacy-list-path", f"/api/v1/watch/namespaces/{s.ns}/configmaps", {"fieldSelector": "metadata.name=one"})
    s.patch("modify-two", f"{base}/two", {"data": {"a": "1"}}, MERGE)
    s.patch("modify-one", f"{base}/one", {"data": {"a": "1"}}, MERGE)
    s.delete("delete-one", f"{base}/one")
    by_field.wait_events(2)
    by_field.finish()
    legacy.wait_events(2)
    legacy.finish()
    legacy_list.wait_events(3)
    legacy_list.finish()
    s.get("get-on-watch-path", f"/api/v1/watch/namespaces/{s.ns}/configmaps/two", query={"timeoutSeconds": "1"})
    s.post("post-on-watch-path", f"/api/v1/watch/namespaces/{s.ns}/configmaps", {"metadata": {"name": "three"}})


@sequence("watches.bookmarks-and-timeout")
def bookmarks_and_timeout(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    created = s.post("create", base, {"metadata": {"name": "b", "labels": {"w": "b"}}})
    watch = s.watch(
        "bookmarks",
        base,
        {
            "watch": "true",
            "labelSelector": "w=b",
            "resourceVersion": _rv(created.json),
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "3",
        },
    )
    watch.finish(wait_end_s=10)
    plain = s.watch("timeout", base, {"watch": "true", "labelSelector": "w=b", "resourceVersion": _rv(created.json), "timeoutSeconds": "1"})
    plain.finish(wait_end_s=10)


@sequence("watches.table")
def table(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    s.send("POST", base, body={"metadata": {"name": "t", "labels": {"w": "t"}}, "data": {"a": "1"}})
    watch = s.watch("table-watch", base, {"watch": "true", "labelSelector": "w=t"}, headers={"Accept": TABLE})
    watch.wait_events(1)
    s.patch("modify", f"{base}/t", {"data": {"b": "2"}}, MERGE)
    watch.wait_events(2)
    watch.finish()
