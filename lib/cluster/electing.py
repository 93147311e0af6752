"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics, over the cached client.

Used by the reconciler (:mod:`darkroom_operator.runtime.leading`), which runs :meth:`LeaderElector.run` on a
thread of its own; anything with the :class:`LeaseClient` methods of :class:`cluster.CachedClient`
(``get`` / ``create`` / ``update``) can carry it. What it follows, from
``k8s.io/client-go/tools/leaderelection`` (``tryAcquireOrRenew``, ``acquire``, ``renew``, ``release``):

- One attempt (:meth:`LeaderElector.try_acquire_or_renew`): a leader whose lease is still valid
  first updates the Lease it last wrote (the fast path); otherwise the Lease is read from the server
  (created when absent). Someone else's unexpired lease is left alone; else the Lease is written
  with us as holder — ``leaseTransitions`` + 1 when the holder changes, ``acquireTime`` kept while we
  keep it, ``renewTime`` now. Every update is a PUT carrying the ``resourceVersion`` last read, so of
  two replicas racing for an expired Lease exactly one wins (the other gets 409 Conflict).
- Expiry is judged by *observed* time, never by comparing clocks across machines: a lease is valid
  until ``leaseDurationSeconds`` (the record's own) after the moment this process last saw the record
  change, on its monotonic clock. ``renewTime`` / ``acquireTime`` are written (as MicroTime,
  ``2006-01-02T15:04:05.000000Z``) for people and tools, and never read for the decision.
- Campaign (:meth:`LeaderElector.run`): try at once, then every ``retry_period_s`` stretched by a
  random jitter of up to ``jitter_factor`` times (client-go's 1.2), until acquired. Then renew: a
  renewal round tries every ``retry_period_s``; a round that has not succeeded within
  ``renew_deadline_s`` of its start loses leadership (no request starts after that deadline). Between
  successful rounds it waits ``retry_period_s``.
- Release (:meth:`LeaderElector.release`, client-go's ReleaseOnCancel): if the server still names us
  holder, write an empty holder, ``leaseDurationSeconds`` 1 and now as both times (transitions
  kept), so a standby takes over at its next retry instead of after a whole lease.

Defaults are client-go's: 15 s lease, 10 s renew deadline, 2 s retry period. A failed attempt
(server away, 5xx, RBAC) counts as "not acquired / not renewed" and is logged. The caller bounds each
request (its transport's timeouts) under ``lease_duration_s - renew_deadline_s - retry_period_s``, so a
leader that cannot renew stops acting before any other replica may take the Lease.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from cluster import errors
from cluster.bodies import thaw
from cluster.resources import LEASES, Resource

log = logging.getLogger(__name__)

MICROTIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # metav1.MicroTime's RFC3339Micro, always UTC


class LeaseClient(Protocol):
    """The part of :class:`cluster.CachedClient` the elector uses (reads with ``fresh=True``: from the server)."""

    def get(self, resource: Resource, name: str, *, namespace: str | None = None, fresh: bool = False) -> Mapping[str, Any]: ...

    def create(self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None) -> Mapping[str, Any]: ...

    def update(self, resource: Resource, body: Mapping[str, Any]) -> Mapping[str, Any]: ...


class Clock:
    """Time as the elector sees it: ``monotonic`` for every decision, ``now`` for the times written, ``wait``
    to pause (True when ``stop`` was set meanwhile). Tests pass a fake."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        return stop.wait(max(0.0, seconds))


@dataclass(frozen=True)
class Timings:
    """Lease duration, renew deadline and retry period (client-go's defaults) and the retry jitter."""

    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0
    jitter_factor: float = 1.2

    def __post_init__(self) -> None:
        if not self.lease_duration_s > self.renew_deadline_s:
            raise ValueError("lease_duration_s must be more than renew_deadline_s")
        if not self.renew_deadline_s > self.jitter_factor * self.retry_period_s:
            raise ValueError(f"renew_deadline_s must be more than {self.jitter_factor} x retry_period_s")
        if not self.retry_period_s > 0:
            raise ValueError("retry_period_s must be positive")

    @property
    def lease_duration_seconds(self) -> int:
        """``spec.leaseDurationSeconds`` is an integer: rounded up, so a sub-second setting never writes 0."""
        return max(1, math.ceil(self.lease_duration_s))


@dataclass(frozen=True)
class LeaseRecord:
    """A Lease's spec as the election reads and writes it."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    lease_transitions: int = 0

    @classmethod
    def of(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=_parse_time(spec.get("acquireTime")),
            renew_time=_parse_time(spec.get("renewTime")),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": _format_time(self.acquire_time),
            "renewTime": _format_time(self.renew_time),
            "leaseTransitions": self.lease_transitions,
        }


def _format_time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).strftime(MICROTIME_FORMAT) if value is not None else None


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None  # written by someone else in a shape we cannot read: only for display anyway


class LeaderElector:
    """One replica's campaign for one Lease. Thread-safe: attempts, :meth:`stop` and :meth:`release` never overlap."""

    def __init__(
        self,
        *,
        client: LeaseClient,
        namespace: str,
        name: str,
        identity: str,
        timings: Timings = Timings(),
        clock: Clock | None = None,
    ) -> None:
        if not identity:
            raise ValueError("a leader election needs a non-empty identity")
        self.client = client
        self.namespace, self.name, self.identity = namespace, name, identity
        self.timings = timings
        self.clock = clock or Clock()
        self.last_answer: float | None = None  # clock.monotonic() of the server's last response, errors included
        self._observed = LeaseRecord()
        self._observed_at: float | None = None  # clock.monotonic() when the observed record last changed
        self._lease: dict[str, Any] | None = None  # the Lease as last read or written (its resourceVersion)
        self._deadline: float | None = None  # while renewing: no request starts after the round's deadline
        self._lock = threading.Lock()
        self._stop = threading.Event()

    @property
    def lease(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_leader(self) -> bool:
        """Whether the record last observed names us (what client-go's ``IsLeader`` says)."""
        return self._observed.holder_identity == self.identity

    @property
    def observed(self) -> LeaseRecord:
        return self._observed

    def _lease_valid(self, now: float) -> bool:
        return self._observed_at is not None and self._observed_at + self._observed.lease_duration_seconds > now

    def _observe(self, record: LeaseRecord, lease: Mapping[str, Any], *, written: bool = False) -> None:
        """Note the Lease as read (its clock restarts only when the record changed) or as we wrote it."""
        if written or record != self._observed or self._observed_at is None:
            self._observed, self._observed_at = record, self.clock.monotonic()
        self._lease = thaw(lease)

    # -- server calls ----------------------------------------------------------------------------

    def _call(self, call: Callable[[], Mapping[str, Any]]) -> Mapping[str, Any]:
        if self._deadline is not None and self.clock.monotonic() >= self._deadline:
            raise errors.Unavailable("the renew deadline has passed", status=0)  # client-go's context deadline
        try:
            result = call()
        except errors.ClusterError as e:
            if e.status:
                self.last_answer = self.clock.monotonic()
            raise
        self.last_answer = self.clock.monotonic()
        return result

    def _get(self) -> Mapping[str, Any]:
        return self._call(lambda: self.client.get(LEASES, self.name, namespace=self.namespace, fresh=True))

    def _update(self, record: LeaseRecord) -> None:
        """PUT ``record`` on the Lease last seen (its resourceVersion is the precondition)."""
        if self._lease is None:
            raise errors.Conflict("the Lease has not been read yet", status=409)
        body = {**self._lease, "spec": {**(self._lease.get("spec") or {}), **record.spec()}}
        self._observe(record, self._call(lambda: self.client.update(LEASES, body)), written=True)

    def _create(self, record: LeaseRecord) -> None:
        body = {
            "apiVersion": LEASES.api_version,
            "kind": LEASES.kind,
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.spec(),
        }
        try:
            created = self._call(lambda: self.client.create(LEASES, body, namespace=self.namespace))
        except errors.AlreadyExists:
            raise  # another replica created it just now: it won this round
        except errors.ClusterError as e:  # e.g. no such namespace, or RBAC
            log.warning("cannot create the leader Lease", extra={"lease": self.lease, "status": e.status, "reason": e.reason})
            raise
        self._observe(record, created, written=True)

    # -- one attempt -----------------------------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        """One attempt to become or stay the leader (client-go's ``tryAcquireOrRenew``). True: we lead.

        Failed requests count as a failed attempt (logged), never raise."""
        now_wall, now = self.clock.now(), self.clock.monotonic()
        wanted = LeaseRecord(
            holder_identity=self.identity,
            lease_duration_seconds=self.timings.lease_duration_seconds,
            acquire_time=now_wall,
            renew_time=now_wall,
        )
        try:
            if self.is_leader and self._lease_valid(now):  # 1. the fast path: renew what we wrote last
                renewed = _keeping(wanted, self._observed)
                try:
                    self._update(renewed)
                    return True
                except errors.ClusterError as e:
                    log.debug("optimistic renew failed; reading the Lease", extra={"lease": self.lease, "error": e.message})
            try:  # 2. read, or create when absent
                current = self._get()
            except errors.NotFound:
                self._create(wanted)
                return True
            record = LeaseRecord.of(current)
            self._observe(record, current)
            if record.holder_identity and self._lease_valid(now) and not self.is_leader:
                return False  # 3. someone else's lease has not expired (by our own observation)
            # 4. take it, or renew it when it names us
            self._update(_keeping(wanted, record) if self.is_leader else replace(wanted, lease_transitions=record.lease_transitions + 1))
            return True
        except (errors.Conflict, errors.AlreadyExists):
            return False  # another replica wrote first (our resourceVersion is stale): it won this round
        except errors.ClusterError as e:
            log.warning("leader election attempt failed", extra={"lease": self.lease, "error": f"{type(e).__name__}: {e.message}"})
            return False

    # -- the campaign ----------------------------------------------------------------------------

    def _attempt(self) -> bool | None:
        """One attempt under the lock; None once stopped (no write lands after :meth:`stop` returned)."""
        with self._lock:
            if self._stop.is_set():
                return None
            return self.try_acquire_or_renew()

    def _jittered(self) -> float:
        return self.timings.retry_period_s * (1.0 + random.random() * self.timings.jitter_factor)

    def acquire(self) -> bool:
        """Try until acquired (True) or stopped (False)."""
        while True:
            result = self._attempt()
            if result is None:
                return False
            if result:
                return True
            if self.clock.wait(self._jittered(), self._stop):
                return False

    def renew(self) -> bool:
        """Renew until a round misses the renew deadline (False: leadership lost) or we are stopped (True).

        As client-go's renew deadline is a context that cuts requests in flight, no request starts after it
        and an attempt that ends after it counts as missed: bounded requests then keep a leader that cannot
        renew from acting past ``retry_period_s + renew_deadline_s`` + one request after its last renewal."""
        try:
            while True:
                deadline = self._deadline = self.clock.monotonic() + self.timings.renew_deadline_s
                while True:
                    result = self._attempt()
                    if result is None:
                        return True
                    remaining = deadline - self.clock.monotonic()
                    if remaining <= 0:
                        return False
                    if result:
                        break
                    if self.clock.wait(min(self.timings.retry_period_s, remaining), self._stop):
                        return True
                self._deadline = None
                if self.clock.wait(self.timings.retry_period_s, self._stop):
                    return True
        finally:
            self._deadline = None

    def run(self, *, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]) -> None:
        """Campaign, lead, and return when stopped or when leadership is lost. ``on_started_leading`` (must
        not block) runs once we lead; ``on_stopped_leading`` when we led and stopped leading, either way."""
        if not self.acquire():
            return
        log.info("acquired the leader Lease", extra={"lease": self.lease, "identity": self.identity})
        try:
            on_started_leading()
            self.renew()
        finally:
            on_stopped_leading()

    # -- stopping --------------------------------------------------------------------------------

    def stop(self) -> None:
        """End the campaign; waits for an attempt in flight, so no write of ours lands after this returns."""
        self._stop.set()
        with self._lock:
            pass

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def release(self) -> bool:
        """Stop, then hand the Lease back if the server still names us holder. True if released."""
        self.stop()
        with self._lock:
            if not self.is_leader:
                return False
            try:
                current = self._get()
                record = LeaseRecord.of(current)
                self._observe(record, current)
                if record.holder_identity != self.identity:
                    return False
                now = self.clock.now()
                self._update(
                    LeaseRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now, lease_transitions=record.lease_transitions)
                )
            except errors.ClusterError as e:
                log.warning("could not release the leader Lease", extra={"lease": self.lease, "error": f"{type(e).__name__}: {e.message}"})
                return False
            return True


def _keeping(wanted: LeaseRecord, held: LeaseRecord) -> LeaseRecord:
    """``wanted`` renewing a lease we hold: acquireTime and leaseTransitions stay."""
    return LeaseRecord(
        holder_identity=wanted.holder_identity,
        lease_duration_seconds=wanted.lease_duration_seconds,
        acquire_time=held.acquire_time or wanted.acquire_time,
        renew_time=wanted.renew_time,
        lease_transitions=held.lease_transitions,
    )
