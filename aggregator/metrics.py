"""Prometheus metrics of the aggregated server (``GET /metrics``, authorized like any non-resource path).

``aggregator_kube_requests_total{method,resource}`` counts every request this server makes to the
Kubernetes API (lists, watches, TokenReviews, SubjectAccessReviews, the auth ConfigMap): the
:class:`CountingTransport` wraps the cluster transport. It is how a test proves that serving a list
makes no API call. Also the requests served, by verb and code, and the number of CombinedTasks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from cluster import Transport
from cluster.requesting import JSON, QueryValue, Stream


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.kube_requests = Counter(
            "aggregator_kube_requests", "Requests this server made to the Kubernetes API.", ["method", "resource"], registry=self.registry
        )
        self.served = Counter("aggregator_requests", "Requests served.", ["verb", "code"], registry=self.registry)
        self.objects = Gauge("aggregator_combinedtasks", "CombinedTasks in the view.", registry=self.registry)


def _resource(path: str) -> str:
    """``tasks``, ``events``, ``tokenreviews``, ...: the resource segment of an API path (names and namespaces left out)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        parts = parts[3:]
    else:
        return path
    if parts[:1] == ["namespaces"] and len(parts) >= 3:
        parts = parts[2:]
    return parts[0] if parts else "namespaces"


class CountingTransport(Transport):
    """A :class:`cluster.Transport` that counts each request in :class:`Metrics`."""

    def __init__(self, *, inner: Transport, metrics: Metrics) -> None:
        super().__init__(api_client=inner.api_client, connect_timeout_s=inner.connect_timeout_s, request_timeout_s=inner.request_timeout_s)
        self.metrics = metrics

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.metrics.kube_requests.labels(method, _resource(path)).inc()
        return super().request(method, path, **kwargs)

    @contextmanager
    def stream(self, path: str, *, query: Mapping[str, QueryValue], read_timeout_s: float, accept: str = JSON) -> Iterator[Stream]:
        self.metrics.kube_requests.labels("WATCH", _resource(path)).inc()
        with super().stream(path, query=query, read_timeout_s=read_timeout_s, accept=accept) as stream:
            yield stream
