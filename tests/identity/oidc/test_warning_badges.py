"""A list row's Warning count goes only to people who may list Events, on the page and live.

alice edits team-a (the built-in "edit" role: she may list Events there); erin may do everything with Darkrooms in
team-a and nothing with Events. Both open the Darkrooms list of team-a, with a Darkroom about which a Warning was
recorded: alice's row carries "1 warning", erin's none (her page, her on-demand row, her detail page's timeline, which
shows no Event at all). Live: a change of the Darkroom pushes alice a row with the count and erin one without; a new
Warning pushes alice the row again ("2 warnings") and erin nothing.
"""

from __future__ import annotations

import re
import time
from typing import Any

import requests

from tests.identityfixtures import TEAM_A, Panel
from tests.support import wait_for

from .control_plane import ControlPlane
from .event_stream import EventStream
from .kinds_and_bodies import BY_PLURAL, unique
from .people import Tokens

HTML = {"Accept": "text/html"}


def warning(control_plane: ControlPlane, darkroom: dict[str, Any], message: str) -> None:
    meta = darkroom["metadata"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    event = {"metadata": {"name": unique("warning"), "namespace": TEAM_A}, "type": "Warning", "reason": "Failing", "message": message,
             "involvedObject": {"apiVersion": darkroom["apiVersion"], "kind": "Darkroom", "namespace": TEAM_A, "name": meta["name"],
                                "uid": meta["uid"]},
             "count": 1, "firstTimestamp": now, "lastTimestamp": now, "source": {"component": "identity-tests"}}  # fmt: skip
    answer = control_plane.request("POST", f"/api/v1/namespaces/{TEAM_A}/events", json=event)
    assert answer.status_code == 201, answer.text


def badge(html: str) -> str | None:
    found = re.search(r'class="badge badge-warn warning-count"[^>]*aria-label="([^"]+)"', html)
    return found.group(1) if found else None


def rows(stream: EventStream, event: str) -> list[str]:
    return [f.data for f in stream.events() if f.event == event]


def test_warning_counts_go_only_to_people_who_may_list_events(panel: Panel, control_plane: ControlPlane, tokens: Tokens) -> None:
    name = unique("warned")
    darkrooms = BY_PLURAL["darkrooms"]
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": [f"{name}-{TEAM_A}"]}
    body = {"apiVersion": f"{darkrooms.group}/{darkrooms.resource.version}", "kind": "Darkroom", "metadata": {"name": name}, "spec": spec}
    made = control_plane.request("POST", darkrooms.kube_path(TEAM_A), json=body)
    assert made.status_code == 201, made.text
    darkroom = made.json()
    warning(control_plane, darkroom, "the origin answers 503")
    assert tokens["erin"]  # erin and her Role exist (more_people)
    alice, erin = panel.browser_login("alice", "/"), panel.browser_login("erin", "/")
    alice.headers.update(HTML)
    erin.headers.update(HTML)
    listing = f"{panel.url}/?namespace={TEAM_A}&q={name}"

    def page(session: requests.Session, url: str) -> str:
        answer = session.get(url)
        assert answer.status_code == 200, answer.text[-2000:]
        return answer.text

    wait_for(lambda: badge(page(alice, listing)) == "1 warning" or None, timeout_s=20, message="alice's badge")
    erins = page(erin, listing)
    assert f">{name}</a>" in erins and badge(erins) is None
    assert badge(page(erin, f"{panel.url}/ui/darkrooms/{TEAM_A}/{name}/row")) is None
    detail = page(erin, f"{panel.url}/ui/darkrooms/{TEAM_A}/{name}")
    assert "the origin answers 503" not in detail and "No events." in detail

    live = f"{panel.url}/ui/live/darkrooms?namespace={TEAM_A}&q={name}"
    streams = {person: EventStream(session, live) for person, session in (("alice", alice), ("erin", erin))}
    try:
        assert {s.status for s in streams.values()} == {200}
        wait_for(lambda: all(s.frames for s in streams.values()) or None, timeout_s=10, message="both streams ready")
        row = f"Darkroom/{TEAM_A}/{name}"
        patched = control_plane.request(
            "PATCH",
            darkrooms.kube_path(TEAM_A, name),
            json={"spec": {"version": "0.2.0"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text
        wait_for(lambda: all(rows(s, row) for s in streams.values()) or None, timeout_s=20, message="the changed row on both streams")
        assert badge(rows(streams["alice"], row)[0]) == "1 warning"
        assert badge(rows(streams["erin"], row)[0]) is None
        warning(control_plane, darkroom, "still failing")
        wait_for(lambda: len(rows(streams["alice"], row)) == 2 or None, timeout_s=20, message="the Warning's row on alice's stream")
        assert badge(rows(streams["alice"], row)[1]) == "2 warnings"
        streams["erin"].wait_until(streams["alice"].last_id, timeout_s=30)
        assert len(rows(streams["erin"], row)) == 1  # the Warning pushed erin nothing
    finally:
        for stream in streams.values():
            stream.close()
