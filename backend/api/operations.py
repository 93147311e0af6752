"""Operations endpoints and request metrics: ``/healthz``, ``/readyz``, ``/metrics``.

:func:`register` is called once per app by :func:`backend.app.create_app`. It owns a Prometheus
registry private to the app instance (several apps can live in one process: tests), request
metrics recorded by ``request_started`` / ``after_request`` hooks, and collectors that read the
informer cache's counters (:meth:`cluster.Cache.stats`) and the access reviews' (sent, or answered from their
caches) at scrape time. Other modules add their own metrics to the same registry through :func:`registry`
(e.g. :mod:`backend.api.watch.watching`).

``/healthz`` answers 200 while the process serves. ``/readyz`` answers 200 when the cache has
synced and the API server answers; the reachability probe is cached for
:data:`PROBE_CACHE_S` and never runs twice at once, so load balancers polling ``/readyz`` cannot
hammer the API server. Both are open without authentication (see :mod:`backend.identity.authentication`)
and answer any Host (:mod:`backend.api.hardening`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, Response, g, jsonify, request, request_started
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from backend.api.problems import Problem
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings

EXTENSION = "darkroom_control_panel.metrics"
PROBE_CACHE_S = 1.5
PROBE_TIMEOUT_S = 2.0
UNMATCHED = "<unmatched>"
LATENCY_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def registry(app: Flask) -> CollectorRegistry:
    """The app's private Prometheus registry (created by :func:`register`)."""
    found: CollectorRegistry = app.extensions[EXTENSION]
    return found


class CacheCollector(Collector):
    """Informer counters as metric families, read from the cache at scrape time (no polling thread)."""

    def __init__(self, access: ClusterAccess) -> None:
        self.access = access

    def collect(self) -> Iterator[Any]:
        objects = GaugeMetricFamily("darkroom_api_cache_objects", "Objects held by the informer", labels=["resource"])
        synced = GaugeMetricFamily("darkroom_api_cache_synced", "1 once the informer has listed", labels=["resource"])
        restarts = CounterMetricFamily("darkroom_api_cache_watch_restarts", "Watches re-opened by the informer", labels=["resource"])
        relists = CounterMetricFamily("darkroom_api_cache_relists", "Full relists after the first list", labels=["resource"])
        quiet = GaugeMetricFamily(
            "darkroom_api_cache_seconds_since_last_event", "Seconds since the informer last heard from the API server", labels=["resource"]
        )
        for stats in self.access.cache.stats():
            objects.add_metric([stats.resource], stats.objects)
            synced.add_metric([stats.resource], 1.0 if stats.synced else 0.0)
            restarts.add_metric([stats.resource], stats.watch_restarts)
            relists.add_metric([stats.resource], stats.relists)
            if stats.seconds_since_last_event is not None:
                quiet.add_metric([stats.resource], stats.seconds_since_last_event)
        yield from (objects, synced, restarts, relists, quiet)


class ReviewCollector(Collector):
    """``darkroom_api_reviews_total{review, answer}``: TokenReviews, SubjectAccessReviews and SelfSubjectAccessReviews
    sent to the API server (``answer="sent"``) or answered from their caches (``answer="cached"``), read from the
    reviewers of :class:`backend.core.access.ClusterAccess` at scrape time. How well the caches of the person-by-person
    reads work: a cached answer costs microseconds, a sent one a round trip to the API server."""

    def __init__(self, access: ClusterAccess) -> None:
        self.access = access

    def collect(self) -> Iterator[Any]:
        reviews = CounterMetricFamily(
            "darkroom_api_reviews", "Access reviews sent to the API server or answered from the cache", labels=["review", "answer"]
        )
        for review, stats in (
            ("tokenreview", self.access.tokens.stats),
            ("subjectaccessreview", self.access.access_reviews.stats),
            ("selfsubjectaccessreview", self.access.self_reviews.stats),
        ):
            reviews.add_metric([review, "sent"], stats.sent)
            reviews.add_metric([review, "cached"], stats.cached)
        yield reviews


class ReachabilityProbe:
    """``access.reachable()`` at most once per ``cache_s``; concurrent callers share the last answer."""

    def __init__(self, access: ClusterAccess, *, cache_s: float = PROBE_CACHE_S, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.access = access
        self.cache_s = cache_s
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._checked_at: float | None = None
        self._reason: str | None = None

    def __call__(self) -> str | None:
        """None when reachable, else why not."""
        now = time.monotonic()
        if self._checked_at is not None and now - self._checked_at < self.cache_s:
            return self._reason
        if not self._lock.acquire(blocking=self._checked_at is None):
            return self._reason  # a probe is running: answer with the previous result
        try:
            if self._checked_at is None or time.monotonic() - self._checked_at >= self.cache_s:
                self._reason = self.access.reachable(self.timeout_s)
                self._checked_at = time.monotonic()
            return self._reason
        finally:
            self._lock.release()


def register(app: Flask, *, settings: ApiSettings, access: ClusterAccess) -> None:
    """Add the operations endpoints, the request metrics hooks and the app's metrics registry."""
    del settings  # nothing configurable yet; kept for the uniform register() signature
    metrics = CollectorRegistry(auto_describe=True)
    app.extensions[EXTENSION] = metrics
    requests_total = Counter(
        "darkroom_api_requests", "HTTP requests answered", labelnames=("method", "endpoint", "status"), registry=metrics
    )
    latency = Histogram(
        "darkroom_api_request_duration_seconds",
        "Time to answer (for streams: to the first byte)",
        labelnames=("method", "endpoint"),
        buckets=LATENCY_BUCKETS_S,
        registry=metrics,
    )
    metrics.register(CacheCollector(access))
    metrics.register(ReviewCollector(access))
    probe = ReachabilityProbe(access)

    def _started(sender: Flask, **_: Any) -> None:
        g.metrics_started_at = time.perf_counter()

    # request_started fires before any before_request hook, so requests that auth rejects are timed too.
    request_started.connect(_started, app, weak=False)

    @app.after_request
    def _record(response: Response) -> Response:
        rule = request.url_rule
        endpoint = rule.rule if rule is not None else UNMATCHED
        requests_total.labels(request.method, endpoint, str(response.status_code)).inc()
        started = g.get("metrics_started_at")
        if started is not None:
            latency.labels(request.method, endpoint).observe(time.perf_counter() - started)
        return response

    @app.get("/healthz")
    def healthz() -> Response:
        """Liveness: 200 while the process serves requests.
        ---
        get:
          tags: [operations]
          summary: Liveness probe
          security: []
          responses:
            "200":
              description: The process is serving.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Health"}
        """
        return jsonify(status="ok")

    @app.get("/readyz")
    def readyz() -> Response:
        """Readiness: 200 when the informer cache has synced and the API server answers.
        ---
        get:
          tags: [operations]
          summary: Readiness probe
          security: []
          responses:
            "200":
              description: Ready to serve.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Health"}
            "503":
              description: Not ready; ``checks`` says which check failed.
              content:
                application/problem+json:
                  schema: {$ref: "#/components/schemas/Problem"}
        """
        checks = {"cache": "ok" if access.synced else "not synced", "cluster": "ok"}
        unreachable = probe()
        if unreachable is not None:
            checks["cluster"] = f"unreachable: {unreachable}"
        failed = [name for name, result in checks.items() if result != "ok"]
        if failed:
            detail = "; ".join(f"{name}: {checks[name]}" for name in failed)
            raise Problem(503, f"not ready ({detail})", extra={"checks": checks}, headers={"Retry-After": "1"})
        return jsonify(status="ready", checks=checks)

    @app.get("/metrics")
    def metrics_endpoint() -> Response:
        """Prometheus metrics: requests, latency, informer cache, live-update subscribers.
        ---
        get:
          tags: [operations]
          summary: Prometheus metrics (text exposition format)
          responses:
            "200":
              description: Metrics in the Prometheus text format.
              content:
                text/plain:
                  schema: {type: string}
        """
        return Response(generate_latest(metrics), content_type=CONTENT_TYPE_LATEST)
