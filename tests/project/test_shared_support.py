"""What the tests share with the benchmarks, without a server: SSE frames (tests/sseframes.py) and audit logs
(tests/auditlog.py).

Behaviours: a frame's fields, data lines and comments are read as the SSE format says (one space after the colon
dropped, data lines joined, the last value of a field kept, ``\\r\\n`` line ends accepted); a byte stream is cut into
its frames whatever its chunks, an HTTP response head kept apart and blank frames left out. An audit log of either
server gives one record per request (kube-apiserver's at ResponseComplete, a watch at ResponseStarted; dry runs
marked; whom a request's user impersonated; non-resource requests left out), read whole, from a byte on or
incrementally, where a line still being written waits; a log rotated or cut under the reader is an error naming
it, never records parsed from the middle of a line.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.auditlog import AuditLog, AuditRecord, read_audit_log
from tests.sseframes import Frame, FrameSplitter, parse_frame


def test_a_frame_has_its_fields_its_data_lines_joined_and_its_comments() -> None:
    frame = parse_frame(["retry: 2000", "id: 7", "event: ready", "data: {", 'data:  "a": 1}', ": heartbeat ", "event: darkroom\r"])

    assert frame.fields == {"retry": "2000", "id": "7", "event": "darkroom"}
    assert (frame.id, frame.event) == ("7", "darkroom")
    assert frame.data == '{\n "a": 1}'
    assert frame.comments == ("heartbeat",)
    assert parse_frame([": heartbeat"]) == Frame(comments=("heartbeat",))
    assert parse_frame(["event: reset"]).data is None
    assert not parse_frame([])


def test_a_stream_is_cut_into_its_frames_whatever_its_chunks() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
    stream = head + b"\r\n\r\nid: 1\nevent: ready\ndata: {}\n\n\n\n: heartbeat\n\nid: 2\nevent: darkroom\ndata: x\n\n"
    splitter = FrameSplitter(http_head=True)

    frames = [frame for i in range(0, len(stream), 5) for frame in splitter.feed(stream[i : i + 5])]

    assert splitter.head == head
    assert [(f.id, f.event, f.data, f.comments) for f in frames] == [
        ("1", "ready", "{}", ()),
        (None, None, None, ("heartbeat",)),
        ("2", "darkroom", "x", ()),
    ]
    assert FrameSplitter().feed(b"event: a\n\nevent: b\n") == [Frame({"event": "a"})]


def _kube_event(stage: str, verb: str, *, uri: str = "/api/v1/namespaces/a/pods", ref: bool = True) -> dict[str, object]:
    event: dict[str, object] = {
        "kind": "Event",
        "stage": stage,
        "verb": verb,
        "requestURI": uri,
        "userAgent": "bench/1",
        "user": {"username": "alice"},
        "responseStatus": {"code": 201},
    }
    if ref:
        event["objectRef"] = {"resource": "pods", "namespace": "a", "name": "p", "apiGroup": ""}
    return event


def test_either_servers_audit_log_gives_one_record_per_resource_request(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    entries = [
        _kube_event("RequestReceived", "create"),
        _kube_event("ResponseComplete", "create"),
        _kube_event("ResponseComplete", "create", uri="/api/v1/namespaces/a/pods?dryRun=All"),
        _kube_event("ResponseStarted", "watch"),
        _kube_event("ResponseComplete", "watch"),
        _kube_event("ResponseComplete", "get", ref=False),  # /healthz
        {"verb": "patch", "apiGroup": "apps", "resource": "deployments", "namespace": "a", "name": "d", "code": 200, "userAgent": "op"},
        {"verb": "get", "resource": "", "code": 200},  # discovery
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))

    records = read_audit_log(path)

    created = AuditRecord("create", "", "pods", "", "a", "p", 201, "bench/1", "alice")
    assert records == [
        created,
        replace(created, dry_run=True),
        replace(created, verb="watch"),
        AuditRecord("patch", "apps", "deployments", "", "a", "d", 200, "op", ""),
    ]
    assert read_audit_log(tmp_path / "missing.jsonl") == []


def test_a_kube_record_says_whom_its_user_impersonated(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    event = _kube_event("ResponseComplete", "create") | {"impersonatedUser": {"username": "bob", "groups": ["team"]}}
    path.write_text(json.dumps(_kube_event("ResponseComplete", "get")) + "\n" + json.dumps(event) + "\n")

    first, second = read_audit_log(path)

    assert (first.impersonated_user, first.impersonated_groups) == (None, ())
    assert (second.user, second.impersonated_user, second.impersonated_groups) == ("alice", "bob", ("team",))
    assert read_audit_log(path, since=len(path.read_bytes().split(b"\n")[0]) + 1) == [second]


def test_an_audit_log_is_read_incrementally_and_a_line_being_written_waits(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    line = json.dumps({"verb": "create", "resource": "configmaps", "namespace": "a", "name": "c", "code": 201, "userAgent": "ours/1"})
    log = AuditLog(path)
    assert log.poll() == 0  # no file yet

    path.write_text(line + "\n" + line[:10])
    assert log.poll() == 1
    with path.open("a") as f:
        f.write(line[10:] + "\n")
    assert log.poll() == 2
    assert [r.name for r in log.writes(("ours",), 0)] == ["c", "c"]
    assert log.writes(("theirs",), 0) == []


def test_a_rotated_audit_log_is_an_error_naming_it_not_records_from_the_middle_of_a_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    line = json.dumps({"verb": "create", "resource": "configmaps", "namespace": "a", "name": "c", "code": 201, "userAgent": "ours/1"})
    path.write_text(line + "\n" + line + "\n")
    log = AuditLog(path)
    assert log.poll() == 2

    path.rename(tmp_path / "audit-rotated.jsonl")  # as kube-apiserver rotates its log: rename, then a new file
    path.write_text((line + "\n") * 3)
    with pytest.raises(RuntimeError, match="rotated or truncated"):
        log.poll()

    cut = AuditLog(tmp_path / "audit-rotated.jsonl")
    assert cut.poll() == 2
    (tmp_path / "audit-rotated.jsonl").write_text(line[:10])
    with pytest.raises(RuntimeError, match=r"audit-rotated\.jsonl"):
        cut.poll()
