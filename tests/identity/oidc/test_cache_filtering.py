"""The shared cache shows each person only what they may list — through every door, counted.

alice (edits team-a), bob (views team-a, edits team-b) and carol (nothing) read the same control panel, whose informer
cache holds everyone's objects. What each may list is asked of kube-apiserver with their own token; every door must
then show exactly those objects:

- JSON: ``/<plural>`` (items and ``total``, also paged), ``/<plural>/<ns>/<name>`` (403 outside), ``/combinedtasks``
  (the Tasks, each with only the Events of namespaces the person may list: an Event in team-b labelled for a team-a Task
  is bob's to see, not alice's) and ``/combinedtasks/<ns>/<name>``, ``/namespaces``;
- the dashboard (a browser session): the list pages (their rows and their namespace picker), the tasks-with-events page
  (its Events), detail pages and on-demand rows (403 outside: a team-b object's page is 403 for alice);
- live: a ``/watch`` stream per person and the dashboard's live lists (``/ui/live/<view>``) per person, open while
  objects of every kind are created, changed and deleted in both namespaces: each stream received exactly one frame
  per change its person may list — deletions included — and nothing else (counted by event and by row; the
  tasks-with-events list, whose rows differ per person, asks its tabs to refresh instead of pushing a row);
- a permission revoked while a stream is open stops its rows within the review cache's TTL (1 s here): the first
  change it withholds comes no later than that after the revocation, and every later one is withheld too.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.identityfixtures import GROUP_PREFIX, TEAM_A, TEAM_B, Panel, Teams
from tests.support import wait_for

from .control_plane import ControlPlane, task_event
from .event_stream import EventStream
from .kinds_and_bodies import BY_PLURAL, KIND_LIST, body, changed, unique
from .panel_http import loopback, problem
from .people import NAMESPACES, PEOPLE, Tokens

EDITORS = {TEAM_A: "alice", TEAM_B: "bob"}
LIST_PAGES = {"darkrooms": "/", "tasks": "/ui/tasks", "postgresqls": "/ui/postgresqls"}
DETAIL_PAGES = {"darkrooms": "/ui/darkrooms", "tasks": "/ui/tasks", "postgresqls": "/ui/postgresqls"}
LIVE_VIEWS = {"darkrooms": "darkrooms", "tasks": "tasks", "postgresqls": "postgresqls", "combinedtasks": "tasks"}  # view -> kind
PERSONAL_VIEWS = {"combinedtasks"}  # its rows show each person other Events: a change refreshes the list instead
REVIEW_TTL_S = 1.0


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with loopback() as session:
        yield session


@pytest.fixture(scope="module")
def browsers(panel: Panel) -> Iterator[dict[str, requests.Session]]:
    """A dashboard session of each person (signed in through the provider)."""
    sessions = {person: panel.browser_login(person) for person in PEOPLE}
    yield sessions
    for session in sessions.values():
        session.close()


@pytest.fixture(scope="module")
def listable(tokens: Tokens, control_plane: ControlPlane) -> dict[tuple[str, str], set[str]]:
    """(person, plural) → the namespaces kube-apiserver lets them list it in (events too)."""
    found = {}
    for person in PEOPLE:
        for plural, group in [(kind.plural, kind.group) for kind in KIND_LIST] + [("events", "")]:
            found[(person, plural)] = {ns for ns in NAMESPACES if control_plane.allows(tokens[person], "list", plural, group, ns)}
    return found


class Objects:
    """One object of each kind in each namespace, made by that namespace's editor; a Task's Events."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.names: dict[tuple[str, str], str] = {}
        self.events: dict[str, str] = {}  # namespace -> the Event labelled for the team-a Task there


@pytest.fixture(scope="module")
def objects(panel: Panel, tokens: Tokens, control_plane: ControlPlane, http: requests.Session) -> Objects:
    made = Objects(unique("seen"))
    for kind in KIND_LIST:
        for namespace in NAMESPACES:
            name = f"{made.mark}-{kind.plural[:2]}-{namespace[-1]}"
            problem(
                http.post(f"{panel.url}/{kind.plural}", json=body(kind.plural, name, namespace), headers=tokens.bearer(EDITORS[namespace])),
                201,
            )
            made.names[(kind.plural, namespace)] = name
    task_name = made.names[("tasks", TEAM_A)]
    task = control_plane.get(BY_PLURAL["tasks"].kube_path(TEAM_A, task_name))
    assert task is not None
    uid = task["metadata"]["uid"]
    made.events[TEAM_A] = task_event(control_plane, TEAM_A, uid, about=(TEAM_A, task_name, uid))
    made.events[TEAM_B] = task_event(control_plane, TEAM_B, uid, about=(TEAM_B, made.names[("tasks", TEAM_B)], unique("uid")))

    def in_cache() -> bool | None:
        combined = problem(http.get(f"{panel.url}/combinedtasks/{TEAM_A}/{task_name}", headers=tokens.bearer("bob")), 200)
        return True if len(combined["status"]["events"]) == 2 else None

    wait_for(in_cache, timeout_s=10, message="the panel's cache to hold the Task's Events")
    return made


def _mine(items: list[dict[str, Any]], mark: str) -> set[tuple[str, str]]:
    return {(item["namespace"], item["name"]) for item in items if item["name"].startswith(mark)}


@pytest.mark.parametrize("person", PEOPLE)
def test_json_doors_show_each_person_what_they_may_list(
    person: str,
    panel: Panel,
    tokens: Tokens,
    objects: Objects,
    listable: dict[tuple[str, str], set[str]],
    control_plane: ControlPlane,
    http: requests.Session,
) -> None:
    headers = tokens.bearer(person)
    for kind in KIND_LIST:
        may = listable[(person, kind.plural)]
        everything = problem(http.get(f"{panel.url}/{kind.plural}", headers=headers), 200)
        assert _mine(everything["items"], objects.mark) == {(ns, objects.names[(kind.plural, ns)]) for ns in may}, kind.plural
        assert {item["namespace"] for item in everything["items"]} <= may, "an object of a namespace the person may not list"
        stored = sum(len(control_plane.names(kind, ns)) for ns in may)
        assert everything["total"] == len(everything["items"]) == stored
        assert problem(http.get(f"{panel.url}/{kind.plural}", params={"limit": 1}, headers=headers), 200)["total"] == stored
        for namespace in NAMESPACES:
            item = http.get(f"{panel.url}/{kind.plural}/{namespace}/{objects.names[(kind.plural, namespace)]}", headers=headers)
            assert item.status_code == (200 if namespace in may else 403), (kind.plural, namespace, item.text)

    combined = problem(http.get(f"{panel.url}/combinedtasks", headers=headers), 200)
    tasks = {
        (t["metadata"]["namespace"], t["metadata"]["name"]): t for t in combined["items"] if t["metadata"]["name"].startswith(objects.mark)
    }
    assert set(tasks) == {(ns, objects.names[("tasks", ns)]) for ns in listable[(person, "tasks")]}
    assert combined["total"] == len(combined["items"])
    seen_events = {e["metadata"]["name"] for t in tasks.values() for e in t["status"]["events"]}
    # both Events are labelled for the team-a Task (the team-b Task has none): shown only with it, each where listable
    shows_task = TEAM_A in listable[(person, "tasks")]
    assert seen_events == ({objects.events[ns] for ns in listable[(person, "events")]} if shows_task else set())
    one = http.get(f"{panel.url}/combinedtasks/{TEAM_A}/{objects.names[('tasks', TEAM_A)]}", headers=headers)
    assert one.status_code == (200 if TEAM_A in listable[(person, "tasks")] else 403)
    if one.status_code == 200:
        assert {e["metadata"]["name"] for e in one.json()["status"]["events"]} == {
            objects.events[ns] for ns in listable[(person, "events")]
        }

    names = {ns["name"] for ns in problem(http.get(f"{panel.url}/namespaces", headers=headers), 200)["items"]}
    assert names == set().union(*(listable[(person, kind.plural)] for kind in KIND_LIST))


ROW = re.compile(r'sse-swap="(\w+)/([a-z0-9-]+)/([a-z0-9-]+)"')
OPTION = re.compile(r'<option value="([a-z0-9-]+)"')


@pytest.mark.parametrize("person", PEOPLE)
def test_dashboard_pages_show_each_person_what_they_may_list(
    person: str, panel: Panel, browsers: dict[str, requests.Session], objects: Objects, listable: dict[tuple[str, str], set[str]]
) -> None:
    browser = browsers[person]
    pickable = set().union(*(listable[(person, kind.plural)] for kind in KIND_LIST))
    for kind in KIND_LIST:
        may = listable[(person, kind.plural)]
        page = browser.get(f"{panel.url}{LIST_PAGES[kind.plural]}", params={"q": objects.mark}, headers={"Accept": "text/html"})
        assert page.status_code == 200, page.text
        assert {(ns, name) for _, ns, name in ROW.findall(page.text)} == {(ns, objects.names[(kind.plural, ns)]) for ns in may}
        assert set(OPTION.findall(page.text)) == pickable, "the namespace picker offers a namespace the person may not see"
        for namespace in NAMESPACES:
            name = objects.names[(kind.plural, namespace)]
            for suffix in ("", "/row"):
                shown = browser.get(f"{panel.url}{DETAIL_PAGES[kind.plural]}/{namespace}/{name}{suffix}", headers={"Accept": "text/html"})
                assert shown.status_code == (200 if namespace in may else 403), (kind.plural, namespace, suffix)
                assert shown.status_code == 403 or name in shown.text

    page = browser.get(f"{panel.url}/ui/combinedtasks", params={"q": objects.mark}, headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    assert {(ns, name) for _, ns, name in ROW.findall(page.text)} == {
        (ns, objects.names[("tasks", ns)]) for ns in listable[(person, "tasks")]
    }
    shown_events = {name for name in objects.events.values() if f"identity test event {name}" in page.text}
    expected = {objects.events[ns] for ns in listable[(person, "events")]} if TEAM_A in listable[(person, "tasks")] else set()
    assert shown_events == expected


def _changes(
    panel: Panel, tokens: Tokens, http: requests.Session, mark: str, created: Callable[[dict[tuple[str, str], str]], None]
) -> list[tuple[str, str, str, str]]:
    """Create, change and delete one object of each kind in each namespace (each by its editor); the changes made
    as (type, kind title, namespace, name), in order. ``created`` is called with the names once all exist."""
    made = []
    names = {(kind.plural, ns): f"{mark}-{kind.plural[:2]}-{ns[-1]}" for kind in KIND_LIST for ns in NAMESPACES}
    for (plural, namespace), name in names.items():
        problem(http.post(f"{panel.url}/{plural}", json=body(plural, name, namespace), headers=tokens.bearer(EDITORS[namespace])), 201)
        made.append(("ADDED", BY_PLURAL[plural].title, namespace, name))
    created(names)
    for (plural, namespace), name in names.items():
        patch = {**tokens.bearer(EDITORS[namespace]), "Content-Type": "application/merge-patch+json"}
        problem(http.patch(f"{panel.url}/{plural}/{namespace}/{name}", json=changed(plural), headers=patch), 200)
        made.append(("MODIFIED", BY_PLURAL[plural].title, namespace, name))
    for (plural, namespace), name in names.items():
        deleted = http.delete(f"{panel.url}/{plural}/{namespace}/{name}", headers=tokens.bearer(EDITORS[namespace]))
        assert deleted.status_code == 204, deleted.text
        made.append(("DELETED", BY_PLURAL[plural].title, namespace, name))
    return made


def _live_frames(stream: EventStream, kind: str, mark: str) -> Counter[tuple[str, ...]]:
    """What a live list stream received: ``("members", ADDED|DELETED)`` and ``("row", namespace, name, "row"|"gone")``."""
    counted: Counter[tuple[str, ...]] = Counter()
    for frame in stream.events():
        if frame.event == "members":
            counted[("members", frame.data)] += 1
        else:
            title, namespace, name = frame.event.split("/")
            assert title == kind and name.startswith(mark), frame
            counted[("row", namespace, name, "gone" if frame.data == "<!-- deleted -->" else "row")] += 1
    return counted


def test_every_stream_carries_exactly_the_changes_its_person_may_list(
    panel: Panel,
    tokens: Tokens,
    browsers: dict[str, requests.Session],
    listable: dict[tuple[str, str], set[str]],
    control_plane: ControlPlane,
    open_streams: Callable[..., EventStream],
) -> None:
    mark = unique("live")
    watches = {person: open_streams(loopback(), f"{panel.url}/watch", tokens.bearer(person)) for person in PEOPLE}
    lives = {
        (person, view): open_streams(browsers[person], f"{panel.url}/ui/live/{view}?q={mark}") for person in PEOPLE for view in LIVE_VIEWS
    }
    assert {s.status for s in [*watches.values(), *lives.values()]} == {200}
    wait_for(lambda: all(s.frames for s in [*watches.values(), *lives.values()]) or None, timeout_s=10, message="every stream to be ready")

    elsewhere: list[str] = []
    client = loopback()

    def label_an_event_in_team_b(names: dict[tuple[str, str], str]) -> None:
        """An Event in team-b for the team-a Task (only who may list Events in team-b may see it), before it changes."""
        task = control_plane.get(BY_PLURAL["tasks"].kube_path(TEAM_A, names[("tasks", TEAM_A)]))
        assert task is not None
        uid = task["metadata"]["uid"]
        elsewhere.append(task_event(control_plane, TEAM_B, uid, about=(TEAM_B, names[("tasks", TEAM_B)], unique("uid"))))
        probe = f"{panel.url}/combinedtasks/{TEAM_A}/{names[('tasks', TEAM_A)]}"
        wait_for(lambda: len(problem(client.get(probe, headers=tokens.bearer("bob")), 200)["status"]["events"]) == 1 or None, timeout_s=10)

    with client:
        made = _changes(panel, tokens, client, mark, label_an_event_in_team_b)

    def bob_has_all() -> int | None:  # bob may list both namespaces: his stream has every change, the last one's id
        ours = [f for f in watches["bob"].events() if f.json()["name"].startswith(mark)]
        return max(f.id or 0 for f in ours) if len(ours) >= len(made) else None

    last = wait_for(bob_has_all, timeout_s=20, message="bob's stream to carry every change")
    for stream in [*watches.values(), *lives.values()]:
        stream.wait_until(last)

    titles = {kind.title: kind.plural for kind in KIND_LIST}
    for person, stream in watches.items():
        received = [(e["type"], e["kind"], e["namespace"], e["name"]) for e in (f.json() for f in stream.events())]
        expected = [c for c in made if c[2] in listable[(person, titles[c[1]])]]
        assert [r for r in received if r[3].startswith(mark)] == expected, person
        assert len(received) == len(expected), f"{person}'s stream carried changes that are not this test's: {received}"

    for (person, view), stream in lives.items():
        title = BY_PLURAL[LIVE_VIEWS[view]].title
        visible = [c for c in made if c[1] == title and c[2] in listable[(person, LIVE_VIEWS[view])]]
        frames: Counter[tuple[str, ...]] = Counter()
        for change, _, namespace, name in visible:
            if change in ("ADDED", "DELETED") or (change == "MODIFIED" and view in PERSONAL_VIEWS):
                frames[("members", change)] += 1  # a personal view's tab refreshes its list as its person
            if change == "DELETED" or (change == "MODIFIED" and view not in PERSONAL_VIEWS):
                frames[("row", namespace, name, "gone" if change == "DELETED" else "row")] += 1
        if TEAM_B not in listable[(person, "events")]:
            shown = "".join(frame.data for frame in stream.events())
            assert f"identity test event {elsewhere[0]}" not in shown, f"{person}'s {view} stream carried a team-b Event"
        assert _live_frames(stream, title, mark) == frames, (person, view)


@pytest.fixture(scope="module")
def quick_panel(panel_factory: Callable[..., Panel]) -> Panel:
    """A panel whose access reviews are cached 1 s, for its streams too."""
    return panel_factory("passthrough", review_cache_ttl_s=REVIEW_TTL_S, stream_review_ttl_s=REVIEW_TTL_S)


def test_a_revoked_permission_stops_an_open_stream_within_the_review_ttl(
    quick_panel: Panel, tokens: Tokens, teams: Teams, control_plane: ControlPlane, open_streams: Callable[..., EventStream]
) -> None:
    binding = unique("dave-views")
    teams.kubectl("create", "rolebinding", binding, "-n", TEAM_A, "--clusterrole=view", f"--group={GROUP_PREFIX}revocable")
    dave = open_streams(loopback(), f"{quick_panel.url}/watch?kind=Task", tokens.bearer("dave"))
    observer = open_streams(loopback(), f"{quick_panel.url}/watch?kind=Task", tokens.bearer("alice"))
    assert dave.status == observer.status == 200
    http = loopback()

    def change() -> tuple[str, bool]:
        """A new Task in team-a (by alice); whether dave's stream carried it."""
        name = unique("revoke")
        problem(http.post(f"{quick_panel.url}/tasks", json=body("tasks", name, TEAM_A), headers=tokens.bearer("alice")), 201)
        seen = wait_for(
            lambda: next((f.id for f in observer.events() if f.json()["name"] == name), None), timeout_s=10, message="alice's stream"
        )
        dave.wait_until(seen)
        return name, any(f.json()["name"] == name for f in dave.events())

    assert change()[1], "dave may list Tasks in team-a: his stream carries a new one"
    teams.kubectl("delete", "rolebinding", binding, "-n", TEAM_A)
    revoked = time.monotonic()
    wait_for(
        lambda: not control_plane.allows(tokens["dave"], "list", "tasks", "example.example.com", TEAM_A) or None, message="kube to revoke"
    )

    def withheld() -> float | None:
        _name, carried = change()
        return None if carried else time.monotonic()

    first_withheld = wait_for(withheld, timeout_s=10, interval_s=0.0, message="dave's stream to withhold a change")
    assert first_withheld - revoked <= REVIEW_TTL_S + 2.0, "the stream showed changes long after the permission was revoked"
    for _ in range(2):
        assert not change()[1], "a change shown after one was withheld"
    http.close()
