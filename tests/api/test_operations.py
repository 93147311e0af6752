"""/healthz, /readyz and /metrics of the API against devcluster.

Covers: liveness is always 200; readiness is 200 when synced and reachable, 503 problem+json naming
the failed check before the cache syncs (a cluster without our CRDs never lets the Darkroom
informer list) and when the API server is gone; request metrics are labelled by route rule (not
raw path) and status; the informer cache gauges and counters are exported; the access reviews sent to
the API server and answered from the caches are counted exactly (the streams' non-blocking look-ups too); every
app has its own registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flask import Flask

from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from cluster.attributes import ResourceAttributes
from cluster.identities import User
from tests.clusters import DevclusterProcess
from tests.support import wait_for


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one Prometheus sample in ``text`` (labels in any order)."""
    for line in text.splitlines():
        match = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if match is None or match[1] != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match[2] or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match[3])
    return None


def test_healthz_and_readyz_when_synced(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json() == {"status": "ready", "checks": {"cache": "ok", "cluster": "ok"}}


def test_readyz_names_the_failing_check(make_app: Callable[..., Flask], fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster()  # no CRDs: the Darkroom and Task informers can never list
    access = ClusterAccess.start(ApiSettings(kubeconfig=cluster.kubeconfig, cache_sync_timeout_s=0.1), environ={})
    try:
        client = make_app(access=access).test_client()
        assert client.get("/healthz").status_code == 200
        response = client.get("/readyz")
        assert response.status_code == 503
        assert response.mimetype == "application/problem+json"
        problem = response.get_json()
        assert problem["status"] == 503
        assert problem["checks"] == {"cache": "not synced", "cluster": "ok"}
        assert "cache: not synced" in problem["detail"]

        cluster.stop()

        def cluster_reported_down() -> dict[str, Any] | None:
            body = client.get("/readyz").get_json()
            return body if body["checks"]["cluster"] != "ok" else None

        body = wait_for(cluster_reported_down, timeout_s=15, message="/readyz to notice the API server is gone")
        assert isinstance(body, dict)
        assert body["checks"]["cluster"].startswith("unreachable: ")
        assert client.get("/healthz").status_code == 200
    finally:
        access.stop()


def test_request_metrics_by_rule_and_status(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    for _ in range(3):
        assert client.get("/healthz").status_code == 200
    assert client.get("/no/such/path-1").status_code == 404
    assert client.get("/no/such/path-2").status_code == 404
    assert client.post("/healthz").status_code == 405
    text = client.get("/metrics").get_data(as_text=True)

    assert sample(text, "darkroom_api_requests_total", method="GET", endpoint="/healthz", status="200") == 3
    assert sample(text, "darkroom_api_requests_total", method="GET", endpoint="<unmatched>", status="404") == 2
    assert sample(text, "darkroom_api_requests_total", method="POST", endpoint="<unmatched>", status="405") == 1
    assert "/no/such/path" not in text  # raw paths never become label values
    assert sample(text, "darkroom_api_request_duration_seconds_count", method="GET", endpoint="/healthz") == 3
    assert sample(text, "darkroom_api_request_duration_seconds_bucket", method="GET", endpoint="/healthz", le="+Inf") == 3

    # a second app has its own registry
    other = make_app().test_client().get("/metrics").get_data(as_text=True)
    assert sample(other, "darkroom_api_requests_total", method="GET", endpoint="/healthz", status="200") is None


def test_cache_metrics(make_app: Callable[..., Flask], access: ClusterAccess) -> None:
    response = make_app().test_client().get("/metrics")
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    text = response.get_data(as_text=True)
    for stats in access.cache.stats():
        assert sample(text, "darkroom_api_cache_synced", resource=stats.resource) == 1
        assert sample(text, "darkroom_api_cache_objects", resource=stats.resource) is not None
        assert sample(text, "darkroom_api_cache_watch_restarts_total", resource=stats.resource) is not None
        assert sample(text, "darkroom_api_cache_relists_total", resource=stats.resource) is not None
    namespaces = next(s for s in access.cache.stats() if s.resource == "namespaces")
    assert sample(text, "darkroom_api_cache_objects", resource="namespaces") >= 1  # type: ignore[operator]
    assert namespaces.objects >= 1
    assert sample(text, "darkroom_api_watch_subscribers") == 0


def test_review_metrics(make_app: Callable[..., Flask], access: ClusterAccess) -> None:
    client = make_app().test_client()

    def reviews() -> dict[tuple[str, str], float | None]:
        text = client.get("/metrics").get_data(as_text=True)
        return {
            (review, answer): sample(text, "darkroom_api_reviews_total", review=review, answer=answer)
            for review in ("tokenreview", "subjectaccessreview", "selfsubjectaccessreview")
            for answer in ("sent", "cached")
        }

    before = reviews()
    assert None not in before.values()
    assert access.tokens.review("not-a-token-this-cluster-knows") is None
    assert access.tokens.review("not-a-token-this-cluster-knows") is None  # the refusal is cached too
    carol, listing = User("carol"), ResourceAttributes("list", "darkrooms", group="deployments.example.com", namespace="team-z")
    decision = access.access_reviews.decide(carol, listing)
    assert access.access_reviews.decide(carol, listing) == decision
    assert access.access_reviews.known(carol, listing) == decision  # a stream's look-up on the event loop
    after = reviews()
    delta = {key: (after[key] or 0) - (before[key] or 0) for key in after}
    assert delta == {
        ("tokenreview", "sent"): 1,
        ("tokenreview", "cached"): 1,
        ("subjectaccessreview", "sent"): 1,
        ("subjectaccessreview", "cached"): 2,
        ("selfsubjectaccessreview", "sent"): 0,
        ("selfsubjectaccessreview", "cached"): 0,
    }
