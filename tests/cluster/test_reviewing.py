"""The review caches of cluster.reviewing, with a transport that records what would be sent.

Behaviours: a decision is reused for its TTL (allowed and denied apart) and asked again after it; concurrent
askers of one missing decision share one review; a failed review is raised to every waiter's own attempt,
never cached and never "allowed"; ``known`` answers without blocking (None until a review was made) and is counted
as a cached answer;
``system:masters`` needs no review; the SubjectAccessReview carries the person's name, groups, uid, extra
and exactly the attributes asked; a TokenReview's cache key is a digest (the token itself is kept nowhere);
the subject fields of a User and the headers of impersonation.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from cluster import ClusterError, Unavailable, reviewing
from cluster.attributes import NonResourceAttributes, ResourceAttributes
from cluster.identities import BearerToken, Impersonation, User
from cluster.reviewing import AccessReviewer, TokenReviewer

ALICE = User(name="alice", groups=("dev", "system:authenticated"), uid="u-1", extra={"scopes": ("a", "b")})
LIST_A = ResourceAttributes("list", "darkrooms", group="deployments.example.com", namespace="team-a")


class Recording:
    """A transport whose answer is ``answer(body)``; ``delay_s`` makes every request slow; ``fail`` raises."""

    def __init__(self, answer: Any, *, delay_s: float = 0.0) -> None:
        self.answer = answer
        self.delay_s = delay_s
        self.bodies: list[dict[str, Any]] = []
        self.fail = False
        self._lock = threading.Lock()

    def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        with self._lock:
            self.bodies.append(body)
        time.sleep(self.delay_s)
        if self.fail:
            raise Unavailable("the cluster is down")
        result: dict[str, Any] = self.answer(body) if callable(self.answer) else self.answer
        return result


def test_decisions_are_cached_for_their_ttl() -> None:
    transport = Recording({"status": {"allowed": False, "reason": "no"}})
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=60, deny_ttl_s=0.2)  # type: ignore[arg-type]
    assert reviewer.known(ALICE, LIST_A) is None
    assert not reviewer.allowed(ALICE, LIST_A)
    assert reviewer.known(ALICE, LIST_A) is not None
    assert not reviewer.allowed(ALICE, LIST_A)
    assert reviewer.stats.sent == 1 and reviewer.stats.cached == 2  # known's answer counts as served from the cache too
    time.sleep(0.25)  # the denial expired
    assert reviewer.known(ALICE, LIST_A) is None
    reviewer.allowed(ALICE, LIST_A)
    assert reviewer.stats.sent == 2
    assert transport.bodies[0]["spec"] == {
        "user": "alice",
        "groups": ["dev", "system:authenticated"],
        "uid": "u-1",
        "extra": {"scopes": ["a", "b"]},
        "resourceAttributes": {"namespace": "team-a", "verb": "list", "group": "deployments.example.com", "resource": "darkrooms"},
    }
    reviewer.allowed(ALICE, NonResourceAttributes(path="/metrics", verb="get"))
    assert transport.bodies[-1]["spec"]["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}


def test_masters_need_no_review() -> None:
    transport = Recording({"status": {"allowed": False}})
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=60, deny_ttl_s=60)  # type: ignore[arg-type]
    root = User("root", groups=("system:masters",))
    assert reviewer.allowed(root, LIST_A) and reviewer.known(root, LIST_A) is not None
    assert transport.bodies == []


def test_concurrent_askers_share_one_review() -> None:
    transport = Recording({"status": {"allowed": True}}, delay_s=0.3)
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=60, deny_ttl_s=60)  # type: ignore[arg-type]
    answers: list[bool] = []
    threads = [threading.Thread(target=lambda: answers.append(reviewer.allowed(ALICE, LIST_A))) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert answers == [True] * 20
    assert len(transport.bodies) == 1


def test_a_failed_review_is_raised_never_cached_never_allowed() -> None:
    transport = Recording({"status": {"allowed": True}}, delay_s=0.1)
    transport.fail = True
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=60, deny_ttl_s=60)  # type: ignore[arg-type]
    outcomes: list[str] = []

    def ask() -> None:
        try:
            outcomes.append(str(reviewer.allowed(ALICE, LIST_A)))
        except ClusterError:
            outcomes.append("error")

    threads = [threading.Thread(target=ask) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert outcomes == ["error"] * 5
    assert reviewer.known(ALICE, LIST_A) is None
    transport.fail = False
    assert reviewer.allowed(ALICE, LIST_A)


def test_token_reviews_keep_no_token() -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        known = body["spec"]["token"] == "good"
        return {"status": {"authenticated": known, "user": {"username": "alice", "groups": ["dev"]} if known else {}}}

    transport = Recording(answer)
    reviewer = TokenReviewer(transport=transport, ttl_s=60, audiences=("https://kubernetes.default.svc",))  # type: ignore[arg-type]
    assert reviewer.review("good") == User("alice", ("dev",), how="token")
    assert reviewer.review("bad") is None
    assert reviewer.review("good") is not None and reviewer.review("bad") is None
    assert len(transport.bodies) == 2
    assert transport.bodies[0]["spec"]["audiences"] == ["https://kubernetes.default.svc"]
    assert "good" not in repr(reviewer.__dict__) and "bad" not in repr(reviewer.__dict__)


def test_identity_headers_and_subjects() -> None:
    carol = User("carol", groups=("system:authenticated", "design"), extra={"Acme.com/Project X": ("atlas",)})
    assert Impersonation(carol).headers() == [
        ("Impersonate-User", "carol"),
        ("Impersonate-Group", "design"),
        ("Impersonate-Extra-Acme.com%2FProject%20X", "atlas"),
    ]
    assert BearerToken("t0k3n").headers() == [("Authorization", "Bearer t0k3n")]
    assert "t0k3n" not in repr(BearerToken("t0k3n")) and "t0k3n" not in BearerToken("t0k3n").key
    assert carol.subject() == {"user": "carol", "groups": ["system:authenticated", "design"], "extra": {"Acme.com/Project X": ["atlas"]}}


@pytest.mark.parametrize(
    ("attributes", "text"),
    [
        (LIST_A, 'list darkrooms.deployments.example.com in namespace "team-a"'),
        (
            ResourceAttributes("list", "darkrooms", group="deployments.example.com"),
            "list darkrooms.deployments.example.com in every namespace",
        ),
        (ResourceAttributes("get", "secrets", namespace="b", name="pw"), 'get secrets "pw" in namespace "b"'),
    ],
)
def test_attributes_describe_themselves(attributes: ResourceAttributes, text: str) -> None:
    assert attributes.describe() == text


def test_a_stream_acts_on_decisions_up_to_its_own_ttl() -> None:
    transport = Recording({"status": {"allowed": True}})
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=0.2, deny_ttl_s=0.2, stream_ttl_s=0.6)  # type: ignore[arg-type]
    assert reviewer.allowed(ALICE, LIST_A)
    time.sleep(0.3)  # past the requests' TTL, within the streams'
    assert reviewer.known(ALICE, LIST_A) is None  # a request asks again ...
    assert reviewer.known(ALICE, LIST_A, for_stream=True) is not None  # ... a stream acts on what was decided
    assert reviewer.allowed(ALICE, LIST_A, for_stream=True) and reviewer.stats.sent == 1
    assert reviewer.allowed(ALICE, LIST_A) and reviewer.stats.sent == 2  # the request's review refreshes it for both
    time.sleep(0.7)  # past the streams' TTL too
    assert reviewer.known(ALICE, LIST_A, for_stream=True) is None
    assert reviewer.allowed(ALICE, LIST_A, for_stream=True) and reviewer.stats.sent == 3


def test_without_a_stream_ttl_streams_ask_as_requests_do() -> None:
    transport = Recording({"status": {"allowed": False}})
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=0.2, deny_ttl_s=0.2)  # type: ignore[arg-type]
    assert not reviewer.allowed(ALICE, LIST_A, for_stream=True)
    time.sleep(0.3)
    assert reviewer.known(ALICE, LIST_A, for_stream=True) is None


def test_a_decision_a_stream_keeps_using_is_reviewed_again_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]  # the reviewer's clock, moved by the test (a loaded machine's sleeps would overshoot the TTLs)
    monkeypatch.setattr(reviewing, "time", SimpleNamespace(monotonic=lambda: now[0]))
    answers: list[dict[str, Any]] = [{"status": {"allowed": True}}, {"status": {"allowed": False, "reason": "taken away"}}]
    asked: list[Any] = []

    def answer(body: Any) -> dict[str, Any]:
        asked.append(body)
        return answers[0] if len(asked) == 1 else answers[1]

    transport = Recording(answer)
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=0.1, deny_ttl_s=0.1, stream_ttl_s=1.0)  # type: ignore[arg-type]
    assert reviewer.allowed(ALICE, LIST_A)
    now[0] += 0.5  # past the requests' TTL, before the refresh point (0.75 of the stream TTL): no review
    assert reviewer.known(ALICE, LIST_A, for_stream=True) == reviewer.decide(ALICE, LIST_A, for_stream=True)
    assert reviewer.stats.sent == 1
    now[0] += 0.3  # past the refresh point: the stream goes on with what it has, a review goes out meanwhile
    decision = reviewer.known(ALICE, LIST_A, for_stream=True)
    assert decision is not None and decision.allowed
    for _ in range(3):
        reviewer.known(ALICE, LIST_A, for_stream=True)  # one refresh at a time, however many ask
    deadline = time.monotonic() + 5
    while (reviewer.known(ALICE, LIST_A, for_stream=True) or decision).allowed and time.monotonic() < deadline:
        time.sleep(0.01)
    refreshed = reviewer.known(ALICE, LIST_A, for_stream=True)
    assert refreshed is not None and not refreshed.allowed and refreshed.reason == "taken away"
    assert len(transport.bodies) == 2


def test_a_failed_background_review_leaves_the_decision_to_age_out(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]  # the reviewer's clock, moved by the test (a loaded machine's sleeps would overshoot the TTLs)
    monkeypatch.setattr(reviewing, "time", SimpleNamespace(monotonic=lambda: now[0]))
    transport = Recording({"status": {"allowed": True}})
    reviewer = AccessReviewer(transport=transport, allow_ttl_s=0.1, deny_ttl_s=0.1, stream_ttl_s=0.5)  # type: ignore[arg-type]
    assert reviewer.allowed(ALICE, LIST_A)
    transport.fail = True
    now[0] += 0.4
    assert reviewer.known(ALICE, LIST_A, for_stream=True) is not None  # used; the refresh fails in the background
    deadline = time.monotonic() + 10
    while len(transport.bodies) < 2 or reviewer._refreshing:  # the background refresh was sent and has failed
        assert time.monotonic() < deadline, "the background refresh never ran"
        time.sleep(0.01)
    now[0] += 0.2  # too old now
    assert reviewer.known(ALICE, LIST_A, for_stream=True) is None
    with pytest.raises(ClusterError):
        reviewer.decide(ALICE, LIST_A, for_stream=True)
