"""One operator process's lifecycle: serve probes, sync informers, lead (or not), reconcile, shut down.

:class:`Operator` is built by :mod:`darkroom_operator.__main__` (and by tests, in-process, with
fake reconcilers) from a connection's ``ApiClient``, a :class:`cluster.Cache` whose informers the
:class:`~darkroom_operator.runtime.controllers.Controllers` declared, and the settings. :meth:`Operator.run`
blocks until :meth:`Operator.request_stop` (SIGTERM/SIGINT) or a lost Lease, then shuts down in
order: stop campaigning, stop taking work and let in-flight reconciles finish (up to
``shutdown_timeout_s``; not at all after a lost Lease), release the Lease if we held it (so a standby takes over at once), stop
informers and the health server. The exit code is 0 for a requested stop, 1 when leadership was
lost (the process must restart; see :mod:`darkroom_operator.runtime.leading`).

Readiness (``/readyz``): the informers have listed (a replica is useful only with a warm cache),
and — with leader election — this replica either leads or stands by healthily, meaning its
election thread runs and the Lease API answered within the last lease duration. A standby is
*ready* on purpose: it is a hot spare that takes over within one lease duration, and an unready
standby would stall a rolling update waiting for a pod that cannot lead while the old one holds
the Lease. Without leader election: informers synced and controllers running.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from cluster import Cache
from darkroom_operator.runtime.controllers import Controllers
from darkroom_operator.runtime.leading import LeaderElector
from darkroom_operator.runtime.metrics import Metrics
from darkroom_operator.runtime.serving import HealthServer
from darkroom_operator.settings import OperatorSettings

log = logging.getLogger(__name__)

EXIT_OK, EXIT_LOST_LEASE = 0, 1
SYNC_LOG_INTERVAL_S = 10.0
WATCHDOG_GRACE_S = 10.0


class Operator:
    """Ties cache, controllers, leader election, metrics and the health server together."""

    def __init__(self, *, settings: OperatorSettings, api_client: Any, cache: Cache, controllers: Controllers, metrics: Metrics) -> None:
        self.settings = settings
        self.cache = cache
        self.controllers = controllers
        self.metrics = metrics
        self.exit_code = EXIT_OK
        self._stop = threading.Event()
        self.elector: LeaderElector | None = None
        if settings.leader_election:
            self.elector = LeaderElector(
                api_client=api_client,
                cache=cache,
                settings=settings,
                metrics=metrics,
                on_started_leading=controllers.start,
                on_lost=self._lost,
            )
        self.server: HealthServer | None = None
        if settings.health_port >= 0:
            self.server = HealthServer(host=settings.health_host, port=settings.health_port, registry=metrics.registry, checks=self.checks)

    # -- probes --------------------------------------------------------------------------------

    def checks(self) -> dict[str, tuple[bool, str]]:
        unsynced = [s.resource for s in self.cache.stats() if not s.synced]
        results = {"informers": (not unsynced, f"not synced: {', '.join(unsynced)}")}
        if self._stop.is_set():
            results["shutdown"] = (False, "shutting down")
        elif self.elector is not None:
            if self.elector.is_leading:
                results["leader-election"] = (True, "leading")
            else:
                results["leader-election"] = (self.elector.campaigning, "no answer from the Lease API within the lease duration")
        else:
            results["controllers"] = (self.controllers.running, "not started")
        return results

    # -- lifecycle -----------------------------------------------------------------------------

    def serve(self) -> str | None:
        """Start the health server; its URL (None when disabled)."""
        if self.server is None:
            return None
        self.server.start()
        return self.server.url

    def request_stop(self) -> None:
        """Ask :meth:`run` to shut down (safe from signal handlers and any thread)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _lost(self) -> None:
        self.exit_code = EXIT_LOST_LEASE
        self.controllers.request_stop()  # stop reconciling at once; run() does the rest
        self._stop.set()

    def run(self) -> int:
        """Sync, lead/reconcile until asked to stop; then shut down. The exit code."""
        self.cache.start()
        started = time.monotonic()
        while not self._stop.is_set() and not self.cache.wait_for_sync(min(1.0, SYNC_LOG_INTERVAL_S)):
            if time.monotonic() - started >= SYNC_LOG_INTERVAL_S:
                started = time.monotonic()
                unsynced = [s.resource for s in self.cache.stats() if not s.synced]
                log.warning("waiting for informers to sync", extra={"unsynced": unsynced})
        if not self._stop.is_set():
            log.info("informers synced", extra={"informers": [s.resource for s in self.cache.stats()]})
            if self.elector is not None:
                self.elector.start()
            else:
                self.metrics.leader.set(1)
                self.controllers.start()
        while not self._stop.wait(1.0):  # a timed wait keeps the main thread responsive to signals
            pass
        return self.shutdown()

    def shutdown(self) -> int:
        """Stop in order (see the module docstring); idempotent. The exit code."""
        watchdog = threading.Timer(self.settings.shutdown_timeout_s + WATCHDOG_GRACE_S, self._give_up)
        watchdog.daemon = True
        watchdog.start()
        self._stop.set()
        log.info("shutting down", extra={"exit_code": self.exit_code})
        if self.elector is not None:
            self.elector.stop()
        # A replica that lost the Lease must stop writing now: another one may lead already. It does
        # not wait for reconciles in flight — they end with the process; reconciles are idempotent
        # and the new leader redoes them.
        finished = self.controllers.stop(self.settings.shutdown_timeout_s if self.exit_code == EXIT_OK else 0.0)
        if self.elector is not None and self.exit_code == EXIT_OK and finished:
            # Released only when nothing of ours still runs; otherwise the Lease expires on its own.
            self.elector.release()
        if self.elector is not None:
            self.elector.close()
        self.metrics.leader.set(0)
        self.cache.stop()
        if self.server is not None:
            self.server.stop()
        watchdog.cancel()
        log.info("stopped", extra={"exit_code": self.exit_code})
        return self.exit_code

    def _give_up(self) -> None:
        log.error("shutdown is stuck; exiting now", extra={"exit_code": self.exit_code or 1})
        os._exit(self.exit_code or 1)
