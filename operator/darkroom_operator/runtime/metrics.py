"""Prometheus metrics of one operator process, in a private :class:`CollectorRegistry`.

Built by :mod:`darkroom_operator.__main__` (tests may build several per interpreter, hence no
global registry); :mod:`darkroom_operator.runtime.controllers` records reconcile outcomes and durations,
:mod:`darkroom_operator.runtime.leading` sets the leader gauge, :mod:`darkroom_operator.runtime.serving` exposes
``/metrics``. Workqueue and informer figures are read at scrape time from
:meth:`darkroom_operator.runtime.workqueues.WorkQueue.stats` and :meth:`cluster.Cache.stats` (names follow
client-go's workqueue metrics so existing dashboards apply).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from cluster import Cache
from darkroom_operator.runtime.workqueues import WorkQueue

RESULTS = ("success", "requeue_after", "error", "conflict", "gone", "unavailable")
"""Values of the ``result`` label: ``gone`` = the primary was deleted while it was being reconciled;
``unavailable`` = the API server was away (retried without a per-key failure, see ConnectionBackoff)."""

DURATION_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    """The process's metrics. ``watch_queue``/``watch_cache`` register what is read at scrape time."""

    def __init__(self, *, registry: CollectorRegistry | None = None) -> None:
        disable_created_metrics()  # no ``*_created`` series: they double every counter for no use here
        self.registry = registry or CollectorRegistry()
        self.reconcile_total = Counter(
            "darkroom_operator_reconcile", "Reconciles by controller and result.", ["controller", "result"], registry=self.registry
        )
        self.reconcile_duration = Histogram(
            "darkroom_operator_reconcile_duration_seconds",
            "Time spent in one reconcile.",
            ["controller"],
            buckets=DURATION_BUCKETS_S,
            registry=self.registry,
        )
        self.leader = Gauge(
            "darkroom_operator_leader",
            "1 while this replica holds the leader Lease (always 1 without leader election).",
            registry=self.registry,
        )
        self._queues: list[WorkQueue] = []
        self._caches: list[Cache] = []
        self._lock = threading.Lock()
        self.registry.register(_SnapshotCollector(self))

    def watch_queue(self, queue: WorkQueue) -> None:
        with self._lock:
            self._queues.append(queue)

    def watch_cache(self, cache: Cache) -> None:
        with self._lock:
            self._caches.append(cache)

    def declare_controller(self, controller: str) -> None:
        """Create the controller's series at zero, so a scrape shows them before the first reconcile."""
        for result in RESULTS:
            self.reconcile_total.labels(controller, result)
        self.reconcile_duration.labels(controller)

    def snapshot_sources(self) -> tuple[list[WorkQueue], list[Cache]]:
        with self._lock:
            return list(self._queues), list(self._caches)


class _SnapshotCollector(Collector):
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        queues, caches = self.metrics.snapshot_sources()
        depth = GaugeMetricFamily("workqueue_depth", "Keys waiting in the workqueue.", labels=["name"])
        delayed = GaugeMetricFamily("workqueue_delayed", "Keys held back by add_after / rate limiting.", labels=["name"])
        adds = CounterMetricFamily("workqueue_adds", "Keys added (collapsed adds not counted).", labels=["name"])
        retries = CounterMetricFamily("workqueue_retries", "Rate-limited re-adds.", labels=["name"])
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds", "How long the longest running reconcile has been running.", labels=["name"]
        )
        unfinished = GaugeMetricFamily("workqueue_unfinished_work_seconds", "Total time of reconciles in flight.", labels=["name"])
        for queue in queues:
            stats = queue.stats()
            depth.add_metric([stats.name], stats.depth)
            delayed.add_metric([stats.name], stats.waiting)
            adds.add_metric([stats.name], stats.adds_total)
            retries.add_metric([stats.name], stats.retries_total)
            longest.add_metric([stats.name], stats.longest_running_s)
            unfinished.add_metric([stats.name], stats.unfinished_work_s)
        yield from (depth, delayed, adds, retries, longest, unfinished)

        objects = GaugeMetricFamily("darkroom_operator_informer_objects", "Objects in the informer's cache.", labels=["resource"])
        synced = GaugeMetricFamily("darkroom_operator_informer_synced", "1 once the informer has listed.", labels=["resource"])
        restarts = CounterMetricFamily("darkroom_operator_informer_watch_restarts", "Watches re-opened.", labels=["resource"])
        relists = CounterMetricFamily(
            "darkroom_operator_informer_relists", "Relists after the first list (e.g. 410 Gone).", labels=["resource"]
        )
        silence = GaugeMetricFamily(
            "darkroom_operator_informer_seconds_since_last_event", "Seconds since the last watch event or bookmark.", labels=["resource"]
        )
        for cache in caches:
            for informer in cache.stats():
                objects.add_metric([informer.resource], informer.objects)
                synced.add_metric([informer.resource], 1.0 if informer.synced else 0.0)
                restarts.add_metric([informer.resource], informer.watch_restarts)
                relists.add_metric([informer.resource], informer.relists)
                if informer.seconds_since_last_event is not None:
                    silence.add_metric([informer.resource], informer.seconds_since_last_event)
        yield from (objects, synced, restarts, relists, silence)
