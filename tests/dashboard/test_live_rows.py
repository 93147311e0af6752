"""GET /ui/live/<view>: the dashboard's live list rows, rendered once per change and shared by every open tab.

Covers, under the production front (rows encoded on its event loop) and under werkzeug: ``ready`` first;
an added Darkroom is a ``members`` event (the list refreshes itself), a change is an event named
``Darkroom/<ns>/<name>`` whose data is the row's HTML (the ``row`` block, with its ``sse-swap``), a deletion
replaces the row with a comment and is a ``members`` event too; with three tabs open a change is rendered
once (``darkroom_dashboard_row_renders_total`` in /metrics) and with none open it is not rendered at all;
each stream forwards only its filters (namespace, name substring) — events it skips still move its resume
point; a resume point replays the rows missed, an unknown one answers ``reset``; bad filters are 400, an
unknown view 404; the ``/watch`` stream caps count these streams too (503 + Retry-After); a stream that names its
page's rows (``rows=``) gets only those rows' changes — a row no tab shows is never rendered — and, sorted by a value
a change altered (a state), ``members`` for any object of its filters (bad ``rows`` or ``sort``: 400 naming it); a Task change
is rendered once for the Tasks list (a table row) and never for the combined view, whose cards show Events each
person may or may not list: its tabs get a ``members`` refresh (each renders its list as its own person).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask import Flask
from prometheus_client import CollectorRegistry

from backend.api import operations
from tests.clients import Darkrooms, SseStream

RENDERS = "darkroom_dashboard_row_renders_total"


def renders(app: Flask, view: str = "darkrooms") -> float:
    registry: CollectorRegistry = operations.registry(app)
    return registry.get_sample_value(RENDERS, {"view": view}) or 0.0


def named(event: str) -> Callable[[dict[str, Any]], bool]:
    return lambda block: block.get("event") == event


def open_live(sse: Callable[..., SseStream], url: str, query: str, **kwargs: Any) -> SseStream:
    stream = sse(url, f"/ui/live/darkrooms?{query}", json_data=False, **kwargs)
    assert stream.status == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
    ready = stream.next()
    assert ready is not None and ready["event"] == "ready"
    return stream


def test_one_render_per_change_for_every_tab(
    make_app: Callable[..., Flask], serve_front: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app()
    url = serve_front(app)
    ns = darkrooms.namespace
    api = sse(url, f"/watch?namespace={ns}")  # the JSON stream says when the app has seen a change
    darkrooms.create("unseen")
    darkrooms.scale("unseen", 2)  # no tab open: nothing to render
    api.until(lambda b: b.get("event") == "darkroom" and b["data"]["type"] == "MODIFIED" and b["data"]["name"] == "unseen")
    tabs = [open_live(sse, url, f"namespace={ns}") for _ in range(3)]
    assert renders(app) == 0

    darkrooms.create("shared")
    for tab in tabs:
        added = tab.until(lambda b: named("members")(b) and b["data"] == "ADDED")[-1]
        assert int(added["id"]) > 0
    darkrooms.scale("shared", 3)
    rows = [tab.until(named(f"Darkroom/{ns}/shared"))[-1]["data"] for tab in tabs]
    assert rows[0] == rows[1] == rows[2]  # the same bytes for every tab
    assert rows[0].startswith("<tr") and f'sse-swap="Darkroom/{ns}/shared"' in rows[0] and 'hx-swap="outerHTML"' in rows[0]
    assert "csrf_token" not in rows[0]  # a row shared by every browser carries no one's token
    assert renders(app) == 1

    darkrooms.delete("shared")
    for tab in tabs:
        seen = tab.until(lambda b: named("members")(b) and b["data"] == "DELETED")
        assert any(b.get("event") == f"Darkroom/{ns}/shared" and b["data"] == "<!-- deleted -->" for b in seen)
    assert renders(app) == 1  # a deletion is not rendered


def test_filters_resume_and_reset(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app(sse_heartbeat_s=0.5)
    url = serve(app)
    ns = darkrooms.namespace
    elsewhere = open_live(sse, url, "namespace=other-namespace")
    alphas = open_live(sse, url, f"namespace={ns}&q=ALPHA")  # the name filter ignores case, as the list's does
    darkrooms.create("beta-1")
    darkrooms.create("alpha-1")
    first = alphas.until(named("members"))[-1]
    darkrooms.scale("beta-1", 2)
    darkrooms.scale("alpha-1", 2)
    row = alphas.until(named(f"Darkroom/{ns}/alpha-1"))
    assert not any("beta-1" in str(b.get("event")) for b in row)
    assert renders(app) == 1  # beta-1's change: no tab of this view shows it, so it was never rendered
    # Skipped events still move its resume point: a heartbeat after the last event carries an id at least its. The
    # heartbeats it sent while this test waited for the other stream (every 0.5 s) carry older ids: read past them.
    ids: list[int] = []
    for _ in range(20):
        heartbeat = elsewhere.next()
        assert heartbeat is not None and heartbeat["comments"] == ["heartbeat"] and "event" not in heartbeat
        ids.append(int(heartbeat["id"]))
        if ids[-1] >= int(row[-1]["id"]):
            break
    assert ids[-1] >= int(row[-1]["id"]), ids

    resumed = sse(url, f"/ui/live/darkrooms?namespace={ns}&q=alpha", headers={"Last-Event-ID": first["id"]}, json_data=False)
    replay = resumed.until(named(f"Darkroom/{ns}/alpha-1"))
    assert replay[0]["event"] == "ready" and replay[-1]["data"] == row[-1]["data"]
    assert renders(app) == 1  # the replay is the same render
    gone = sse(url, f"/ui/live/darkrooms?namespace={ns}&lastEventId=1", json_data=False)
    assert [b["event"] for b in (gone.next(), gone.next()) if b] == ["ready", "reset"]


def test_bad_requests_and_stream_caps(make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream]) -> None:
    url = serve(make_app(stream_max_per_client=1, stream_retry_after_s=7))
    assert sse(url, "/ui/live/darkrooms?namespace=Not_A_Label").status == 400
    assert sse(url, "/ui/live/nothing").status == 404
    first = open_live(sse, url, "")
    refused = sse(url, "/watch")  # the same caps for /watch and the dashboard's streams
    assert refused.status == 503 and refused.headers["Retry-After"] == "7"
    first.close()


READY = {
    "readyReplicas": 1,
    "observedGeneration": 1,
    "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Available", "message": "ok"}
    ],
}


def test_a_tab_gets_only_the_rows_it_shows(
    make_app: Callable[..., Flask], serve_front: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app()
    url = serve_front(app)
    ns = darkrooms.namespace
    api = sse(url, f"/watch?namespace={ns}")
    darkrooms.create("shown")
    darkrooms.create("hidden")
    api.until(lambda b: b.get("event") == "darkroom" and b["data"]["type"] == "ADDED" and b["data"]["name"] == "hidden")
    by_name = open_live(sse, url, f"namespace={ns}&rows={ns}/shown")  # the list's order (namespace, name)
    by_state = open_live(sse, url, f"namespace={ns}&sort=state&rows={ns}/shown")

    darkrooms.set_status("hidden", {"domains": ["one.example.com"]})  # its state stays Reconciling
    darkrooms.set_status("shown", {"domains": ["two.example.com"]})
    for tab in (by_name, by_state):
        seen = tab.until(named(f"Darkroom/{ns}/shown"))
        assert "two.example.com" in seen[-1]["data"]
        assert not [b for b in seen if "hidden" in str(b.get("event")) or b.get("event") == "members"], seen
    assert renders(app) == 1  # the change of the row no tab shows was never rendered

    darkrooms.set_status("hidden", READY)  # Reconciling → Ready: it may move onto a page sorted by state
    darkrooms.set_status("shown", {"domains": ["three.example.com"]})
    moved = by_state.until(named("members"))
    assert moved[-1]["data"] == "MODIFIED" and not [b for b in moved if "hidden" in str(b.get("event"))]
    by_state.until(named(f"Darkroom/{ns}/shown"))
    seen = by_name.until(named(f"Darkroom/{ns}/shown"))  # sorted by name, a state cannot move a row: nothing
    assert not [b for b in seen if "hidden" in str(b.get("event")) or b.get("event") == "members"], seen
    assert renders(app) == 2

    darkrooms.set_status("shown", READY)
    resorted = by_state.until(named("members"))  # a shown row's state changed: the list refreshes (it may move)
    assert not [b for b in resorted if str(b.get("event")).startswith("Darkroom/")]
    darkrooms.delete("hidden")  # a deletion of a row not shown still refreshes every tab: the page may shift
    for tab in (by_name, by_state):
        tab.until(lambda b: named("members")(b) and b["data"] == "DELETED")


def test_bad_rows_and_sort_are_400_naming_them(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream]
) -> None:
    url = serve(make_app())
    for query, field in (("rows=no-slash", "rows"), ("rows=ns/Not_A_Name", "rows"), ("sort=size", "sort"), ("sort=-", "sort")):
        refused = sse(url, f"/ui/live/darkrooms?{query}")
        assert refused.status == 400, query
        assert list(json.loads(refused.response.read())["errors"]) == [field], query
    open_live(sse, url, "rows=&sort=-state").close()  # an empty page; a descending sort


def test_tasks_and_the_combined_view_get_their_own_rows(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app()
    url = serve(app)
    ns = darkrooms.namespace
    streams = {}
    for view in ("tasks", "combinedtasks"):
        streams[view] = sse(url, f"/ui/live/{view}?namespace={ns}", json_data=False)
        assert streams[view].next() is not None
    body = {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": "chore"},
        "spec": {"priority": 2, "deadline": "2031-01-01T00:00:00Z"},
    }
    darkrooms.api.create_namespaced_custom_object("example.example.com", "v1", ns, "tasks", body)
    darkrooms.api.patch_namespaced_custom_object("example.example.com", "v1", ns, "tasks", "chore", {"spec": {"priority": 7}})
    row = streams["tasks"].until(named(f"Task/{ns}/chore"))[-1]["data"]
    # A combined card shows the Task's Events, which not everyone who may list the Task may list: never rendered
    # for everyone, each tab refreshes its list as its own person.
    refresh = streams["combinedtasks"].until(lambda block: block.get("event") == "members" and block.get("data") == "MODIFIED")
    assert row.startswith("<tr") and ">7<" in row and "Mark finished" in row and "csrf_token" not in row
    assert not [block for block in refresh if str(block.get("event", "")).startswith("Task/")]
    assert renders(app, "tasks") == 1 and renders(app, "combinedtasks") == 0


def test_a_page_of_names_too_long_for_a_url_leaves_its_rows_out() -> None:
    """A list section names its page's rows on its stream, unless that would make a request line proxies refuse: then
    the stream goes without ``rows`` (every change of its filters), never with a URL that cannot connect."""
    from urllib.parse import parse_qs

    from backend.dashboard.browsing import Filters
    from backend.dashboard.liverows import ROWS_QUERY_MAX, live_query

    filters = Filters(namespace="team", q="", page=2, sort="state")
    short = [{"namespace": "team", "name": f"dr-{i}"} for i in range(50)]
    query = parse_qs(live_query(filters, 7, short).removeprefix("?"))
    assert query["rows"] == [",".join(f"team/dr-{i}" for i in range(50))]
    assert query["namespace"] == ["team"] and query["sort"] == ["state"] and query["lastEventId"] == ["7"]
    long = [{"namespace": "team", "name": f"{i:03}-" + "x" * 240} for i in range(50)]
    url = live_query(filters, 7, long)
    assert "rows=" not in url and len(url) < ROWS_QUERY_MAX
    assert parse_qs(url.removeprefix("?")) == {"namespace": ["team"], "sort": ["state"], "lastEventId": ["7"]}
