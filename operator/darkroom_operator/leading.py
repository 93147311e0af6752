"""Leader election on a ``coordination.k8s.io/v1`` Lease with the official client's ``kubernetes.leaderelection``.

Called by :mod:`darkroom_operator.__main__`: :class:`LeaderElector` runs the library's
``LeaderElection.run()`` on a daemon thread; when this replica acquires the Lease
(``settings.lease_namespace``/``lease_name``, holder ``settings.identity``) ``on_started_leading``
starts the controllers; when it fails to renew within ``renew_deadline_s`` it calls ``on_lost`` —
the entry point stops reconciling and exits non-zero (client-go's convention: a replica that lost
its lease restarts and campaigns again with a clean state). :meth:`LeaderElector.stop` ends the
campaign and, if we lead, releases the Lease (holder cleared, like client-go's ReleaseOnCancel) so
a standby takes over at its next retry instead of waiting for the lease to expire.

How the library behaves (kubernetes v37) and what we fix around it, minimally:

- ``LeaseLock`` builds ``CoordinationV1Api()`` on the *global default* configuration, not our
  connection, and calls it without timeouts: we swap in :class:`_LeaseApi`, the same API on a
  copy of our connection's configuration with a request timeout and no urllib3 retries (a hung
  renew must not outlast the lease; three silent retries would multiply the timeout), which also
  records when the server last answered (for ``/readyz`` of a standby) and says why a Lease could
  not be created (missing namespace, RBAC) instead of the library's INFO line.
- ``electionconfig.Config`` validates with ``sys.exit()`` and refuses a retry period under 1 s; we
  validate in :class:`~darkroom_operator.settings.OperatorSettings` (plus the library's
  ``renew_deadline > 1.2 · retry_period``) and fill the same attributes without its constructor.
  The Lease's ``leaseDurationSeconds`` is an integer, so the duration is rounded up.
- ``LeaderElection.run()`` has no way to stop: its loops sleep and retry forever, and a transport
  error (server down: urllib3 raises, not ``ApiException``) escapes ``try_acquire_or_renew`` and
  kills the thread silently — a follower would never take over, a leader would never notice. Our
  subclass catches and logs such errors (an attempt that failed), and raises :class:`_Stopped`
  out of the loops once :meth:`LeaderElector.stop` is called; a lock around each attempt makes
  sure no renew lands after our release.
- The library logs every retry at INFO on the ``leaderelection`` logger (capped in
  :mod:`darkroom_operator.logs`); this module logs the transitions.
- It creates the Lease when absent (404), in a namespace that must exist.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from darkroom_operator.metrics import Metrics
from darkroom_operator.settings import OperatorSettings

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2  # the library's check: renew_deadline > JITTER_FACTOR * retry_period


class _Stopped(Exception):
    """Raised inside the library's loops to end ``run()`` once we stop campaigning."""


class _LeaseApi:
    """``CoordinationV1Api`` on our ApiClient with a per-request timeout; remembers when the server last answered."""

    def __init__(self, *, api_client: Any, timeout_s: float, lease: str) -> None:
        self._api = k8s_client.CoordinationV1Api(api_client)
        self._timeout_s = timeout_s
        self._lease = lease
        self.last_answer: float | None = None  # time.monotonic() of the last response, errors included

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            result = getattr(self._api, method)(*args, _request_timeout=self._timeout_s, **kwargs)
        except ApiException as e:
            if e.status:
                self.last_answer = time.monotonic()
            if method == "create_namespaced_lease":
                log.warning("cannot create the leader Lease", extra={"lease": self._lease, "status": e.status, "reason": e.reason})
            raise
        self.last_answer = time.monotonic()
        return result

    def read_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("read_namespaced_lease", *args, **kwargs)

    def create_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("create_namespaced_lease", *args, **kwargs)

    def replace_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("replace_namespaced_lease", *args, **kwargs)


class _Election(leaderelection.LeaderElection):
    """The library's election, stoppable, and surviving transport errors (see the module docstring)."""

    def __init__(self, config: electionconfig.Config, *, stopping: threading.Event, attempt_lock: threading.Lock) -> None:
        super().__init__(config)
        self._stopping = stopping
        self._attempt_lock = attempt_lock

    def try_acquire_or_renew(self) -> bool:
        with self._attempt_lock:
            if self._stopping.is_set():
                raise _Stopped
            try:
                return bool(super().try_acquire_or_renew())
            except Exception as e:
                log.warning("leader election attempt failed", extra={"error": f"{type(e).__name__}: {e}"})
                return False


def _config(lock: LeaseLock, settings: OperatorSettings, on_started: Callable[[], None], on_stopped: Callable[[], None]) -> Any:
    config = electionconfig.Config.__new__(electionconfig.Config)  # its __init__ sys.exit()s on sub-second retry periods
    config.jitter_factor = JITTER_FACTOR
    config.lock = lock
    config.lease_duration = math.ceil(settings.lease_duration_s)  # written as the integer leaseDurationSeconds
    config.renew_deadline = settings.renew_deadline_s
    config.retry_period = settings.retry_period_s
    config.onstarted_leading = on_started
    config.onstopped_leading = on_stopped
    return config


class LeaderElector:
    """Campaign for the Lease on a daemon thread; see the module docstring for the callbacks' contract."""

    def __init__(
        self,
        *,
        api_client: Any,
        settings: OperatorSettings,
        metrics: Metrics,
        on_started_leading: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        if settings.renew_deadline_s <= JITTER_FACTOR * settings.retry_period_s:
            raise ValueError(f"renew_deadline_s must be more than {JITTER_FACTOR} x retry_period_s")
        self.settings = settings
        self.metrics = metrics
        self._on_started_leading = on_started_leading
        self._on_lost = on_lost
        self.lease = f"{settings.lease_namespace}/{settings.lease_name}"
        self._lock = LeaseLock(settings.lease_name, settings.lease_namespace, settings.identity)
        timeout_s = max(0.5, min(settings.retry_period_s * 2, (settings.lease_duration_s - settings.renew_deadline_s) / 2))
        configuration = copy.deepcopy(api_client.configuration)
        configuration.retries = False  # one attempt per call, bounded by timeout_s
        self._api_client = k8s_client.ApiClient(configuration)
        self._api_client.user_agent = api_client.user_agent
        self.api = _LeaseApi(api_client=self._api_client, timeout_s=timeout_s, lease=self.lease)
        self._lock.api_instance = self.api
        self._stopping = threading.Event()
        self._attempt_lock = threading.Lock()
        self._leading = threading.Event()
        self._election = _Election(
            _config(self._lock, settings, self._started, self._stopped), stopping=self._stopping, attempt_lock=self._attempt_lock
        )
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def is_leading(self) -> bool:
        return self._leading.is_set()

    @property
    def campaigning(self) -> bool:
        """True while the election thread runs and the Lease API answered within the lease duration."""
        last = self.api.last_answer
        return self._thread.is_alive() and last is not None and time.monotonic() - last <= self.settings.lease_duration_s

    def start(self) -> LeaderElector:
        log.info("campaigning for the leader Lease", extra={"lease": self.lease, "identity": self.settings.identity})
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._election.run()
        except _Stopped:
            return
        except Exception:
            log.exception("leader election ended unexpectedly")
            if not self._stopping.is_set():
                self._stopped()

    def _started(self) -> None:
        if self._stopping.is_set():
            raise _Stopped  # makes the library stop renewing
        self._leading.set()
        self.metrics.leader.set(1)
        log.info("became the leader", extra={"lease": self.lease, "identity": self.settings.identity})
        self._on_started_leading()

    def _stopped(self) -> None:
        was_leading = self._leading.is_set()
        self._leading.clear()
        self.metrics.leader.set(0)
        if self._stopping.is_set():
            return
        log.error(
            "lost the leader Lease; stopping", extra={"lease": self.lease, "identity": self.settings.identity, "was_leading": was_leading}
        )
        self._on_lost()

    def stop(self) -> None:
        """Stop campaigning/renewing (waits for an attempt in flight); non-blocking otherwise."""
        self._stopping.set()
        with self._attempt_lock:
            pass

    def release(self) -> bool:
        """After :meth:`stop`: if we hold the Lease, clear its holder so another replica takes over now. True if released."""
        self.stop()
        was_leading = self._leading.is_set()
        self._leading.clear()
        self.metrics.leader.set(0)
        if not was_leading:
            return False
        try:
            lease = self.api.read_namespaced_lease(self.settings.lease_name, self.settings.lease_namespace)
            if lease.spec is None or lease.spec.holder_identity != self.settings.identity:
                return False
            now = datetime.now(UTC)
            lease.spec.holder_identity = ""
            lease.spec.lease_duration_seconds = 1
            lease.spec.acquire_time = now
            lease.spec.renew_time = now
            self.api.replace_namespaced_lease(self.settings.lease_name, self.settings.lease_namespace, lease)
        except Exception as e:
            log.warning("could not release the leader Lease", extra={"lease": self.lease, "error": f"{type(e).__name__}: {e}"})
            return False
        log.info("released the leader Lease", extra={"lease": self.lease, "identity": self.settings.identity})
        return True

    def close(self) -> None:
        """Close the Lease API's connection pool (after :meth:`stop` / :meth:`release`)."""
        self.stop()
        self._api_client.close()
