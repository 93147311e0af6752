"""The reconciler's leader election: :class:`cluster.electing.LeaderElector` on a thread, wired to the operator.

Called by :mod:`darkroom_operator.runtime.running`: :class:`LeaderElector` campaigns on a daemon thread for
the Lease ``settings.lease_namespace``/``lease_name`` as ``settings.identity`` with the settings'
timings (client-go's 15 s / 10 s / 2 s by default). Once this replica leads, ``on_started_leading``
starts the controllers; when a renewal misses the renew deadline it calls ``on_lost`` — the entry
point stops reconciling and exits non-zero (client-go's convention: a replica that lost its lease
restarts and campaigns again with a clean state). :meth:`LeaderElector.stop` ends the campaign
(an attempt in flight finishes first, so nothing of ours is written after it returns);
:meth:`LeaderElector.release` then hands the Lease back (holder cleared, like client-go's
ReleaseOnCancel) so a standby takes over at its next retry instead of waiting for the lease to expire.

The elector talks to the API server through a :class:`cluster.CachedClient` of its own whose
transport bounds every request (connect and read) well under the renew deadline and never
retries silently: a hung renew must not outlast the lease. It needs ``get``, ``update`` (and, once,
``create``) on that one Lease, nothing more. It records when the server last answered, so a standby
is ``/readyz``-healthy only while the Lease API answers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from cluster import Cache, CachedClient, ClientSettings, Transport
from cluster.electing import LeaderElector as Elector
from cluster.electing import Timings
from darkroom_operator.runtime.metrics import Metrics
from darkroom_operator.settings import OperatorSettings

log = logging.getLogger(__name__)


def request_timeout_s(settings: OperatorSettings) -> float:
    """Per request (connect, and read): a few tries fit in the renew deadline, and the one in flight at the
    deadline ends within the slack left before the others may take over (2.4 s for 15 / 10 / 2 s)."""
    slack_s = settings.lease_duration_s - settings.renew_deadline_s - settings.retry_period_s
    return max(0.5, min(settings.retry_period_s * 2, slack_s * 0.8))


class LeaderElector:
    """Campaign for the Lease on a daemon thread; see the module docstring for the callbacks' contract."""

    def __init__(
        self,
        *,
        api_client: Any,
        cache: Cache,
        settings: OperatorSettings,
        metrics: Metrics,
        on_started_leading: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self._on_started_leading = on_started_leading
        self._on_lost = on_lost
        timeout_s = request_timeout_s(settings)
        transport = Transport(api_client=api_client, connect_timeout_s=timeout_s, request_timeout_s=timeout_s)
        self.elector = Elector(
            client=CachedClient(transport=transport, cache=cache, settings=ClientSettings(field_manager=settings.field_manager)),
            namespace=settings.lease_namespace,
            name=settings.lease_name,
            identity=settings.identity,
            timings=Timings(
                lease_duration_s=settings.lease_duration_s,
                renew_deadline_s=settings.renew_deadline_s,
                retry_period_s=settings.retry_period_s,
            ),
        )
        self.lease = self.elector.lease
        self._leading = threading.Event()
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def is_leading(self) -> bool:
        return self._leading.is_set()

    @property
    def campaigning(self) -> bool:
        """True while the election thread runs and the Lease API answered within the lease duration."""
        last = self.elector.last_answer
        return self._thread.is_alive() and last is not None and time.monotonic() - last <= self.settings.lease_duration_s

    def start(self) -> LeaderElector:
        log.info("campaigning for the leader Lease", extra={"lease": self.lease, "identity": self.settings.identity})
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.elector.run(on_started_leading=self._started, on_stopped_leading=self._stopped)
        except Exception:
            log.exception("leader election ended unexpectedly")
            self._stopped()

    def _started(self) -> None:
        self._leading.set()
        self.metrics.leader.set(1)
        log.info("became the leader", extra={"lease": self.lease, "identity": self.settings.identity})
        self._on_started_leading()

    def _stopped(self) -> None:
        if self.elector.stopped:
            return  # asked to stop: :meth:`release` hands the Lease back (and clears the flag) if we led
        was_leading = self._leading.is_set()
        self._leading.clear()
        self.metrics.leader.set(0)
        log.error(
            "lost the leader Lease; stopping", extra={"lease": self.lease, "identity": self.settings.identity, "was_leading": was_leading}
        )
        self._on_lost()

    def stop(self) -> None:
        """Stop campaigning/renewing (waits for an attempt in flight); non-blocking otherwise."""
        self.elector.stop()

    def release(self) -> bool:
        """After :meth:`stop`: if we hold the Lease, clear its holder so another replica takes over now. True if released."""
        self.stop()
        was_leading = self._leading.is_set()
        self._leading.clear()
        self.metrics.leader.set(0)
        if not was_leading or not self.elector.release():
            return False
        log.info("released the leader Lease", extra={"lease": self.lease, "identity": self.settings.identity})
        return True

    def close(self) -> None:
        """Stop campaigning (the connection pool is the operator's, closed with its connection)."""
        self.stop()
