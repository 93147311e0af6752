"""GET /watch: live Darkroom/Task changes as Server-Sent Events, from the informers.

Covers: ``ready`` first; ADDED / MODIFIED / DELETED ``darkroom`` events with the documented data
(type, kind, namespace, name, resourceVersion, friendly object) and increasing ids, for changes
made straight through the API server; resume after ``Last-Event-ID`` (header and ``?lastEventId=``)
from the buffer without repeats; ``reset`` for a resume point that is too old, malformed or from
the future; heartbeats with ids when idle; ``kind`` / ``namespace`` filters and 400 for bad ones;
subscribers are cleaned up when a client goes away; :func:`backend.api.watch.watching.close` ends streams.
The ring buffer's own logic (ids, overflow for slow clients) is checked directly on Broadcaster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask

from backend.api.watch import watching
from backend.api.watch.broadcasting import Batch, Broadcaster
from tests.clients import Darkrooms, SseStream
from tests.support import wait_for


def is_change(name: str, change: str) -> Callable[[dict[str, Any]], bool]:
    def match(block: dict[str, Any]) -> bool:
        data = block.get("data") or {}
        return block.get("event") == "darkroom" and data.get("name") == name and data.get("type") == change

    return match


def broadcaster(app: Flask) -> Broadcaster:
    found: Broadcaster = app.extensions[watching.EXTENSION]
    return found


def test_changes_stream_and_resume(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    url = serve(make_app())
    ns = darkrooms.namespace
    stream = sse(url, f"/watch?namespace={ns}")
    assert stream.status == 200
    assert stream.headers["Content-Type"].startswith("text/event-stream")
    assert stream.headers["Cache-Control"] == "no-cache"
    ready = stream.next()
    assert ready is not None and ready["event"] == "ready"
    assert ready["retry"].isdigit()
    ready_id = int(ready["id"])
    assert ready["data"] == {"lastEventId": ready_id}

    created = darkrooms.create("live-one")
    added = stream.until(is_change("live-one", "ADDED"))[-1]
    data = added["data"]
    assert data["kind"] == "Darkroom"
    assert data["namespace"] == ns
    assert data["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert data["object"]["name"] == "live-one"
    assert data["object"]["namespace"] == ns
    assert data["object"]["replicas"] == 1
    assert "accessKey" not in str(data["object"]) and "secretKey" not in str(data["object"])
    added_id = int(added["id"])
    assert added_id > ready_id

    darkrooms.scale("live-one", 3)
    modified = stream.until(lambda b: is_change("live-one", "MODIFIED")(b) and b["data"]["object"]["replicas"] == 3)[-1]
    darkrooms.delete("live-one")
    deleted = stream.until(is_change("live-one", "DELETED"))[-1]
    assert int(added["id"]) < int(modified["id"]) < int(deleted["id"])
    stream.close()

    # Resume after the ADDED event: the rest comes from the buffer, nothing is repeated.
    for resumed in (
        sse(url, f"/watch?namespace={ns}", headers={"Last-Event-ID": str(added_id)}),
        sse(url, f"/watch?namespace={ns}&lastEventId={added_id}"),
    ):
        first = resumed.next()
        assert first is not None and first["event"] == "ready" and int(first["id"]) == added_id
        replay = resumed.until(is_change("live-one", "DELETED"))
        events = [b for b in replay if b.get("event") == "darkroom"]
        assert events[0]["data"]["type"] == "MODIFIED"
        assert all(int(e["id"]) > added_id for e in events)
        assert [e["id"] for e in events][-1] == deleted["id"]
        assert not [b for b in replay if b.get("event") == "reset"]


def test_reset_when_resume_point_is_gone(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app(sse_history=2)
    url = serve(app)
    ns = darkrooms.namespace
    live = sse(url, f"/watch?namespace={ns}")
    ready = live.next()
    assert ready is not None
    for name in ("a", "b", "c"):
        darkrooms.create(name)
    # Not read from `live`: with a history of 2 a live client that lags 3 events behind (a loaded
    # machine) is itself told to reset, and would never see "c".
    wait_for(lambda: broadcaster(app).last_id >= int(ready["id"]) + 3, timeout_s=30, message="three changes broadcast")
    live.close()

    # three events since the ready id, two kept: too old
    stale = sse(url, f"/watch?namespace={ns}", headers={"Last-Event-ID": ready["id"]})
    assert stale.next()["event"] == "ready"  # type: ignore[index]
    reset = stale.next()
    assert reset is not None and reset["event"] == "reset"
    assert "too old" in reset["data"]["reason"]
    assert reset["data"]["lastEventId"] == int(reset["id"])
    darkrooms.delete("a")
    stale.until(is_change("a", "DELETED"))  # and then it keeps streaming live

    for bogus in ("not-a-number", str(broadcaster(app).last_id + 1000)):
        other = sse(url, f"/watch?namespace={ns}", headers={"Last-Event-ID": bogus})
        assert other.next()["event"] == "ready"  # type: ignore[index]
        assert other.next()["event"] == "reset"  # type: ignore[index]


def test_heartbeats_and_filters(
    make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream], darkrooms: Darkrooms
) -> None:
    app = make_app(sse_heartbeat_s=0.2)
    url = serve(app)
    ns = darkrooms.namespace
    tasks_only = sse(url, f"/watch?namespace={ns}&kind=task")
    everything = sse(url, f"/watch?namespace={ns}&kind=Darkroom,Task")
    assert tasks_only.next()["event"] == "ready"  # type: ignore[index]
    heartbeat = tasks_only.next()
    assert heartbeat is not None and heartbeat["comments"] == ["heartbeat"] and "event" not in heartbeat

    darkrooms.create("filtered")
    everything.until(is_change("filtered", "ADDED"))
    # after the darkroom event was published, the task-only client gets a heartbeat whose id moved past it
    after = tasks_only.until(lambda b: b.get("id") is not None and int(b["id"]) >= broadcaster(app).last_id)
    assert not [b for b in after if b.get("event") == "darkroom"]

    client = app.test_client()
    bad = client.get("/watch?kind=Pod")
    assert bad.status_code == 400
    assert bad.mimetype == "application/problem+json"
    assert "kind" in bad.get_json()["errors"]
    bad_ns = client.get("/watch?namespace=Not_A_Label")
    assert bad_ns.status_code == 400
    assert "namespace" in bad_ns.get_json()["errors"]


def test_disconnect_and_close(make_app: Callable[..., Flask], serve: Callable[[Flask], str], sse: Callable[..., SseStream]) -> None:
    app = make_app(sse_heartbeat_s=0.1)
    url = serve(app)
    hub = broadcaster(app)
    first = sse(url)
    first.next()
    wait_for(lambda: hub.subscribers == 1, message="one subscriber")
    first.close()
    wait_for(lambda: hub.subscribers == 0, message="the subscriber to go away after its client disconnected")

    second = sse(url)
    second.next()
    wait_for(lambda: hub.subscribers == 1, message="one subscriber")
    watching.close(app)
    while (block := second.next()) is not None:  # heartbeats until the close is seen, then the end of the stream
        assert block["comments"] == ["heartbeat"]
    wait_for(lambda: hub.subscribers == 0, message="no subscribers after close")


def test_broadcaster_ring_buffer() -> None:
    hub = Broadcaster(history=3, first_id=100)
    assert hub.resume_point(None) == (100, None)
    for i in range(5):
        hub.publish(kind="Darkroom", namespace="ns", data={"i": i})
    assert hub.last_id == 105
    batch = hub.wait(102, timeout_s=0)
    assert [e.id for e in batch.events] == [103, 104, 105]
    assert batch.events[0].frame == b'id: 103\nevent: darkroom\ndata: {"i":2}\n\n'
    assert hub.wait(101, timeout_s=0).overflow  # a slow client fell behind the buffer
    assert hub.wait(105, timeout_s=0) == Batch()
    assert hub.resume_point("102") == (102, None)
    assert hub.resume_point("101")[1] is not None
    assert hub.resume_point("106")[1] is not None
    hub.close()
    assert hub.wait(100, timeout_s=5).closed
    assert hub.publish(kind="Task", namespace="ns", data={}) is None
