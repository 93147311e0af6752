"""The access reviews the control panel makes, read back from kube-apiserver's audit log, against the requests that made them.

The panel authorizes every read of its shared cache with a SubjectAccessReview; kube-apiserver's audit log of the OIDC
control plane records each one whole (level RequestResponse). A panel whose review cache lives 10 ms makes every
review a request needs, so each request's reviews can be compared with what that request asks for exactly — the
attributes that went wrong in other control panels (Headlamp #1490/#1552/#5718: wrong group, resource or name).

Behaviours:

- get one object → one review: verb ``get``, the kind's API group and resource, no subresource, the namespace and the
  name of the URL — found or missing, allowed (404) or refused (403);
- list one namespace → ``list`` there; list every namespace → ``list`` cluster-wide, then ``list`` in each namespace
  that holds objects of the kind;
- a write makes no review of its own (kube-apiserver decides it as the person: the audit log has the person's write),
  a delete only the ``get`` of the object it deletes;
- ``/combinedtasks/<ns>/<name>``: ``get`` of the Task, then ``list events`` cluster-wide and in each namespace holding
  Events of that Task; ``/namespaces``: ``list namespaces``, then per namespace ``get`` of the Namespace (namespace and
  name both its name) and, where refused, ``list`` of each kind in turn until one is allowed;
- a ``/watch`` stream: per change, ``list`` of the change's kind cluster-wide, then in the change's namespace;
- every review is asked by the panel's own identity about exactly the person kube-apiserver authenticates (the same
  name and groups its SelfSubjectReview reports, ``system:authenticated`` included) — also when the panel impersonates
  people it authenticated itself; and its answer is the person's SelfSubjectAccessReview's: a grant to every
  authenticated user lets an impersonated person read what kube would let them read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.identityfixtures import TEAM_A, TEAM_B, Panel, Teams
from tests.support import wait_for

from .control_plane import AccessReview, AuditLog, ControlPlane, requests_of, task_event
from .event_stream import EventStream
from .kinds_and_bodies import BY_PLURAL, KIND_LIST, body, unique
from .panel_http import loopback, problem
from .people import Tokens

Attributes = tuple[str, str, str, str, str, str]  # verb, group, resource, subresource, namespace, name
PANEL_IDENTITY = "admin"  # the OIDC control plane's admin kubeconfig: what the panels connect with
REVIEW_CACHE_TTL_S = 0.01  # how long the reviewing panels keep a decision
GROUP_OF = {kind.plural: kind.group for kind in KIND_LIST} | {"events": "", "namespaces": ""}


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with loopback() as session:
        yield session


@pytest.fixture(scope="module")
def reviewing(panel_factory: Callable[..., Panel]) -> Panel:
    """A passthrough panel whose reviews are cached 10 ms: every request makes every review it needs."""
    return panel_factory("passthrough", review_cache_ttl_s=REVIEW_CACHE_TTL_S, stream_review_ttl_s=REVIEW_CACHE_TTL_S)


@pytest.fixture(scope="module")
def reviewing_impersonator(panel_factory: Callable[..., Panel]) -> Panel:
    return panel_factory("impersonate", review_cache_ttl_s=REVIEW_CACHE_TTL_S, stream_review_ttl_s=REVIEW_CACHE_TTL_S)


def of(kind: str, verb: str, namespace: str = "", name: str = "") -> Attributes:
    return (verb, GROUP_OF[kind], kind, "", namespace, name)


class Reviews:
    """The access reviews about one person while a block of requests ran."""

    def __init__(self, audit: AuditLog, control_plane: ControlPlane, token: str) -> None:
        self.audit, self.control_plane, self.token = audit, control_plane, token
        self.person = control_plane.whoami(token)
        self.found: list[AccessReview] = []

    def __enter__(self) -> Reviews:
        # A request just before the block (a wait for the object, say) may have left decisions in the panel's cache
        # that the block's own requests would then not ask for again: let them expire first.
        time.sleep(5 * REVIEW_CACHE_TTL_S)
        self.start = self.audit.mark()
        return self

    def __exit__(self, *exc: object) -> None:
        self.found = self.audit.access_reviews(self.start, about=self.person["username"])

    def attributes(self) -> set[Attributes]:
        return {review.attributes for review in self.found}

    def assert_about_the_person(self) -> None:
        """Asked by the panel about exactly whom kube authenticates, and answered as the person's own review is."""
        for review in self.found:
            assert review.requester == PANEL_IDENTITY, review
            assert (review.user, sorted(review.groups)) == (self.person["username"], sorted(self.person.get("groups", []))), review
            allowed = self.control_plane.allows(self.token, review.verb, review.resource, review.group, review.namespace, review.name)
            assert review.allowed == allowed, review
        assert self.found, "no access review was made"


def test_get_and_list_review_exactly_what_the_url_names(
    reviewing: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    missing = unique("missing")
    with Reviews(audit, control_plane, tokens["alice"]) as alice:
        problem(http.get(f"{reviewing.url}/darkrooms/{TEAM_A}/{missing}", headers=tokens.bearer("alice")), 404)
    assert alice.attributes() == {of("darkrooms", "get", TEAM_A, missing)}
    alice.assert_about_the_person()

    with Reviews(audit, control_plane, tokens["carol"]) as carol:
        problem(http.get(f"{reviewing.url}/tasks/{TEAM_B}/{missing}", headers=tokens.bearer("carol")), 403)
    assert carol.attributes() == {of("tasks", "get", TEAM_B, missing)}
    carol.assert_about_the_person()

    with Reviews(audit, control_plane, tokens["bob"]) as bob:
        problem(http.get(f"{reviewing.url}/postgresqls", params={"namespace": TEAM_B}, headers=tokens.bearer("bob")), 200)
    assert bob.attributes() == {of("postgresqls", "list", TEAM_B)}
    bob.assert_about_the_person()

    for namespace, editor in ((TEAM_A, "alice"), (TEAM_B, "bob")):
        made = http.post(f"{reviewing.url}/darkrooms", json=body("darkrooms", unique("listed"), namespace), headers=tokens.bearer(editor))
        problem(made, 201)
    every = control_plane.request("GET", "/apis/deployments.example.com/v1/darkrooms").json()["items"]
    holding = {item["metadata"]["namespace"] for item in every}
    with Reviews(audit, control_plane, tokens["carol"]) as carol:
        assert problem(http.get(f"{reviewing.url}/darkrooms", headers=tokens.bearer("carol")), 200)["items"] == []
    assert carol.attributes() == {of("darkrooms", "list")} | {of("darkrooms", "list", ns) for ns in holding}
    carol.assert_about_the_person()


def test_writes_are_decided_by_kube_as_the_person(
    reviewing: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    name = unique("written")
    with Reviews(audit, control_plane, tokens["alice"]) as alice:
        problem(http.post(f"{reviewing.url}/darkrooms", json=body("darkrooms", name, TEAM_A), headers=tokens.bearer("alice")), 201)
    assert alice.found == [], "a create is kube-apiserver's decision, made as the person: no review of the panel's"
    created = requests_of(audit.events(alice.start), resource="darkrooms", verb="create", name=name)
    assert [(e["user"]["username"], e["objectRef"]["namespace"], e["responseStatus"]["code"]) for e in created] == [
        ("oidc:alice", TEAM_A, 201)
    ]

    with Reviews(audit, control_plane, tokens["alice"]) as alice:
        response = http.delete(f"{reviewing.url}/darkrooms/{TEAM_A}/{name}", headers=tokens.bearer("alice"))
        assert response.status_code == 204, response.text
    assert alice.attributes() == {of("darkrooms", "get", TEAM_A, name)}  # the object it deletes, from the cache
    alice.assert_about_the_person()
    deleted = requests_of(audit.events(alice.start), resource="darkrooms", verb="delete", name=name)
    assert [e["user"]["username"] for e in deleted] == ["oidc:alice"]


def test_combined_tasks_and_namespaces_review_each_thing_they_show(
    reviewing: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    name = unique("task")
    problem(http.post(f"{reviewing.url}/tasks", json=body("tasks", name, TEAM_A), headers=tokens.bearer("alice")), 201)
    task = control_plane.get(BY_PLURAL["tasks"].kube_path(TEAM_A, name))
    assert task is not None
    uid = task["metadata"]["uid"]
    task_event(control_plane, TEAM_A, uid, about=(TEAM_A, name, uid))
    task_event(control_plane, TEAM_B, uid, about=(TEAM_B, unique("elsewhere"), unique("uid")))  # labelled for it, in team-b

    def both_events() -> dict[str, Any] | None:
        found = problem(http.get(f"{reviewing.url}/combinedtasks/{TEAM_A}/{name}", headers=tokens.bearer("bob")), 200)
        return found if len(found["status"]["events"]) == 2 else None

    wait_for(both_events, timeout_s=10, message="bob to see the Task's two Events")
    with Reviews(audit, control_plane, tokens["bob"]) as bob:
        combined = problem(http.get(f"{reviewing.url}/combinedtasks/{TEAM_A}/{name}", headers=tokens.bearer("bob")), 200)
    assert len(combined["status"]["events"]) == 2
    assert bob.attributes() == {
        of("tasks", "get", TEAM_A, name),
        of("events", "list"),
        of("events", "list", TEAM_A),
        of("events", "list", TEAM_B),
    }
    bob.assert_about_the_person()

    namespaces = [ns["metadata"]["name"] for ns in control_plane.request("GET", "/api/v1/namespaces").json()["items"]]
    token = tokens["alice"]
    expected = {of("namespaces", "list")}
    for kind in KIND_LIST:  # may alice list one of our kinds everywhere? (then every namespace is hers to see)
        expected.add(of(kind.plural, "list"))
        assert not control_plane.allows(token, "list", kind.plural, kind.group, "")
    for namespace in namespaces:  # what Services.namespaces asks, stopping at the first "yes"
        expected.add(of("namespaces", "get", namespace, namespace))
        if control_plane.allows(token, "get", "namespaces", "", namespace, namespace):
            continue
        for kind in KIND_LIST:
            expected.add(of(kind.plural, "list", namespace))
            if control_plane.allows(token, "list", kind.plural, kind.group, namespace):
                break
    with Reviews(audit, control_plane, token) as alice:
        listed = problem(http.get(f"{reviewing.url}/namespaces", headers=tokens.bearer("alice")), 200)
    assert {ns["name"] for ns in listed["items"]} == {TEAM_A}
    assert alice.attributes() == expected
    alice.assert_about_the_person()


def test_a_stream_reviews_each_change_it_carries_or_withholds(
    reviewing: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    with Reviews(audit, control_plane, tokens["alice"]) as alice:
        stream = EventStream(http, f"{reviewing.url}/watch?kind=Task", tokens.bearer("alice"))
        try:
            assert stream.status == 200
            hidden, shown = unique("hidden"), unique("shown")
            problem(http.post(f"{reviewing.url}/tasks", json=body("tasks", hidden, TEAM_B), headers=tokens.bearer("bob")), 201)
            problem(http.post(f"{reviewing.url}/tasks", json=body("tasks", shown, TEAM_A), headers=tokens.bearer("alice")), 201)
            seen = wait_for(lambda: [f.json() for f in stream.events()] or None, timeout_s=10, message="alice's stream to carry her Task")
        finally:
            stream.close()
    assert [(e["type"], e["namespace"], e["name"]) for e in seen] == [("ADDED", TEAM_A, shown)]
    # a change she may not list is withheld after asking; one she may, shown after asking: both namespaces reviewed
    assert alice.attributes() == {of("tasks", "list"), of("tasks", "list", TEAM_B), of("tasks", "list", TEAM_A)}
    alice.assert_about_the_person()


def test_an_impersonated_person_is_reviewed_as_kube_knows_them(
    reviewing_impersonator: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    missing = unique("missing")
    for person, status in (("alice", 404), ("bob", 404), ("carol", 403)):
        with Reviews(audit, control_plane, tokens[person]) as reviews:
            problem(http.get(f"{reviewing_impersonator.url}/darkrooms/{TEAM_A}/{missing}", headers=tokens.bearer(person)), status)
        assert reviews.attributes() == {of("darkrooms", "get", TEAM_A, missing)}
        reviews.assert_about_the_person()


def test_a_grant_to_every_authenticated_user_counts_for_an_impersonated_reader(
    impersonating_panel: Panel, tokens: Tokens, control_plane: ControlPlane, teams: Teams, http: requests.Session
) -> None:
    name = unique("public")
    problem(http.post(f"{impersonating_panel.url}/darkrooms", json=body("darkrooms", name, TEAM_B), headers=tokens.bearer("bob")), 201)
    role = f"read-{name}"
    teams.kubectl(
        "create", "role", role, "-n", TEAM_B, "--verb=get", "--resource=darkrooms.deployments.example.com", f"--resource-name={name}"
    )
    teams.kubectl("create", "rolebinding", role, "-n", TEAM_B, f"--role={role}", "--group=system:authenticated")
    try:
        assert control_plane.allows(tokens["carol"], "get", "darkrooms", "deployments.example.com", TEAM_B, name)
        shown = http.get(f"{impersonating_panel.url}/darkrooms/{TEAM_B}/{name}", headers=tokens.bearer("carol"))
        assert problem(shown, 200)["name"] == name  # as kube-apiserver would answer carol, impersonated or not
    finally:
        teams.kubectl("delete", "rolebinding,role", role, "-n", TEAM_B)
