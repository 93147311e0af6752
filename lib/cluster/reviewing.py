"""Asking the API server who a token is and what someone may do, with short caches: the one implementation
of delegated authentication and authorization that the API and the aggregated API server share.

- :class:`TokenReviewer` — ``TokenReview`` (authentication.k8s.io/v1): the :class:`User` a bearer token
  stands for, or None. Cached per token digest (never the token) for ``ttl_s``, successes and failures
  alike — k8s.io/apiserver's ``--authentication-token-webhook-cache-ttl``.
- :class:`AccessReviewer` — ``SubjectAccessReview`` (authorization.k8s.io/v1) about a :class:`User` the
  process has authenticated, as k8s.io/apiserver's delegating authorizer asks it: members of
  ``system:masters`` are allowed without asking; every other decision is cached per (user, attributes)
  for ``allow_ttl_s`` / ``deny_ttl_s``. Needs ``create subjectaccessreviews`` for the process.
- :class:`SelfAccessReviewer` — ``SelfSubjectAccessReview`` made *with* someone's credentials: what they may
  do, answered for whoever those credentials authenticate as (any authenticated user may ask it of
  themselves: ``system:basic-user``). For showing what a person may do; the server still decides.

Blocking and thread-safe (call from a worker thread). A review that cannot be made (the API server
unreachable, our own credentials refused) raises :class:`cluster.errors.ClusterError`: callers answer
503 — an outage is never "allowed", and never "not authenticated" either.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cluster.attributes import Attributes
from cluster.errors import ClusterError
from cluster.identities import MASTERS, Credentials, User
from cluster.requesting import Transport

TOKENREVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECTACCESSREVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SELFSUBJECTACCESSREVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
MAX_ENTRIES = 50_000
#: the share of a stream TTL after which a decision a stream uses is reviewed again in the background
STREAM_REFRESH_AT = 0.75
#: threads for those background reviews (I/O: each waits for kube-apiserver)
REFRESH_THREADS = 4

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


class ReviewStats:
    """Counts for ``/metrics`` (``darkroom_api_reviews_total``) and tests: reviews sent, answers served from the cache
    (by a blocking ask or by :meth:`AccessReviewer.known`). Exact under concurrency: askers run in many threads."""

    def __init__(self) -> None:
        self.sent = 0
        self.cached = 0
        self._lock = threading.Lock()

    def count_sent(self) -> None:
        with self._lock:
            self.sent += 1

    def count_cached(self) -> None:
        with self._lock:
            self.cached += 1


class _Expiring(Generic[K, V]):
    """A dict whose entries expire (monotonic clock); bounded, expired entries pruned when it is full. Concurrent
    askers of one missing key share one answer (:meth:`flight`): when a decision expires under 100 open streams of
    one person, one review goes out, not 100."""

    def __init__(self) -> None:
        self._entries: dict[K, tuple[float, float, V, float]] = {}  # key -> (fresh until, kept until, value, made at)
        self._lock = threading.Lock()
        self._flights: dict[K, threading.Event] = {}

    def flight(self, key: K) -> threading.Event | None:
        """None: the caller asks and must :meth:`land` the key afterwards; else an event set when the asker has."""
        with self._lock:
            waiting = self._flights.get(key)
            if waiting is None:
                self._flights[key] = threading.Event()
            return waiting

    def land(self, key: K) -> None:
        with self._lock:
            event = self._flights.pop(key, None)
        if event is not None:
            event.set()

    def get(self, key: K, *, kept: bool = False) -> tuple[bool, V | None]:
        """The entry while it is fresh (``kept``: while it is kept, which may be longer: see :meth:`put`)."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or (entry[1] if kept else entry[0]) <= now:
            return False, None
        return True, entry[2]

    def made(self, key: K) -> float | None:
        """When the entry was stored (monotonic clock); None when there is none."""
        with self._lock:
            entry = self._entries.get(key)
        return None if entry is None else entry[3]

    def put(self, key: K, value: V, ttl_s: float, keep_s: float = 0.0) -> None:
        """Store ``value``: fresh for ``ttl_s``, kept (for :meth:`get` with ``kept``) for ``keep_s`` if that is longer."""
        now = time.monotonic()
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries = {k: v for k, v in self._entries.items() if v[1] > now}
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
            self._entries[key] = (now + ttl_s, now + max(ttl_s, keep_s), value, now)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


FLIGHT_WAIT_S = 30.0


def _remembered(
    cache: _Expiring[K, V],
    stats: ReviewStats,
    key: K,
    ask: Callable[[], V],
    ttl_of: Callable[[V], float],
    *,
    keep_s: float = 0.0,
    kept: bool = False,
) -> V:
    asker = False
    for _ in range(3):
        found, value = cache.get(key, kept=kept)
        if found:
            stats.count_cached()
            return value  # type: ignore[return-value]  # found: the stored value, which may itself be None
        waiting = cache.flight(key)
        if waiting is None:
            asker = True
            break
        waiting.wait(FLIGHT_WAIT_S)  # another thread is asking; its answer (or its failure) comes first
    try:
        stats.count_sent()
        answer = ask()
        cache.put(key, answer, ttl_of(answer), keep_s)
    finally:
        if asker:
            cache.land(key)
    return answer


class TokenReviewer:
    """TokenReview with a TTL cache keyed by the token's SHA-256."""

    def __init__(self, *, transport: Transport, ttl_s: float, audiences: Sequence[str] = ()) -> None:
        self.transport = transport
        self.ttl_s = ttl_s
        self.audiences = tuple(audiences)
        self.stats = ReviewStats()
        self._cache: _Expiring[str, User | None] = _Expiring()

    @property
    def reviews(self) -> int:
        return self.stats.sent

    def review(self, token: str) -> User | None:
        """The user ``token`` authenticates as, or None. ClusterError when the review could not be made."""
        key = hashlib.sha256(token.encode()).hexdigest()
        return _remembered(self._cache, self.stats, key, lambda: self._ask(token), lambda _user: self.ttl_s)

    def _ask(self, token: str) -> User | None:
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = list(self.audiences)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        status = self.transport.request("POST", TOKENREVIEWS, body=body).get("status") or {}
        if not status.get("authenticated"):
            return None
        return User.from_user_info(status.get("user") or {}, how="token")


def _decision(status: dict[str, Any]) -> Decision:
    return Decision(bool(status.get("allowed")) and not status.get("denied"), str(status.get("reason") or ""))


class AccessReviewer:
    """SubjectAccessReview about an authenticated user, with a TTL cache per (user, attributes).

    ``stream_ttl_s``: how old a decision a live stream still acts on (``for_stream``; at least the TTL). A stream
    carries the changes of every namespace to each of its person's tabs, so it needs a decision per namespace per
    person over and over: with the requests' short TTL, 100 people's streams on 20 namespaces meant ~200 reviews a
    second and deliveries seconds late (``bench/identity.py``). kube-apiserver authorizes a watch once, when it
    starts; a stream here acts on decisions at most ``stream_ttl_s`` old. Requests keep the short TTL. So that the
    decisions a stream keeps using never all expire at once (a burst of reviews, and deliveries waiting for them), one
    that a stream meets past :data:`STREAM_REFRESH_AT` of its stream TTL is reviewed again in the background while it
    goes on being used (a failed refresh changes nothing: once the decision is too old, the stream's blocking
    :meth:`decide` raises).
    """

    def __init__(
        self,
        *,
        transport: Transport,
        allow_ttl_s: float,
        deny_ttl_s: float,
        stream_ttl_s: float = 0.0,
        always_allow_groups: Sequence[str] = (MASTERS,),
    ) -> None:
        self.transport = transport
        self.allow_ttl_s = allow_ttl_s
        self.deny_ttl_s = deny_ttl_s
        self.stream_ttl_s = stream_ttl_s
        self._refreshing: set[tuple[Any, ...]] = set()
        self._refresh_lock = threading.Lock()
        self._refresher: ThreadPoolExecutor | None = None
        self.always_allow_groups = frozenset(always_allow_groups)
        self.stats = ReviewStats()
        self._cache: _Expiring[tuple[Any, ...], Decision] = _Expiring()

    @property
    def reviews(self) -> int:
        return self.stats.sent

    def decide(self, user: User, attributes: Attributes, *, for_stream: bool = False) -> Decision:
        if self.always_allow_groups.intersection(user.groups):
            return Decision(True)
        return _remembered(
            self._cache,
            self.stats,
            (user.key(), attributes),
            lambda: self._ask(user, attributes),
            self._ttl,
            keep_s=self.stream_ttl_s,
            kept=for_stream,
        )

    def allowed(self, user: User, attributes: Attributes, *, for_stream: bool = False) -> bool:
        return self.decide(user, attributes, for_stream=for_stream).allowed

    def known(self, user: User, attributes: Attributes, *, for_stream: bool = False) -> Decision | None:
        """The decision if it is at hand without a review (always-allowed group, or cached); None otherwise. Never blocks:
        for event loops, which then :meth:`decide` in a thread."""
        if self.always_allow_groups.intersection(user.groups):
            return Decision(True)
        key = (user.key(), attributes)
        found, decision = self._cache.get(key, kept=for_stream)
        if not found:
            return None
        self.stats.count_cached()
        if for_stream:
            made = self._cache.made(key)
            if made is not None and time.monotonic() - made >= max(self._ttl(decision), STREAM_REFRESH_AT * self.stream_ttl_s):  # type: ignore[arg-type]
                self._refresh(key, user, attributes)
        return decision

    def _refresh(self, key: tuple[Any, ...], user: User, attributes: Attributes) -> None:
        """Review ``key`` again in the background, once at a time (see the class docstring)."""
        with self._refresh_lock:
            if key in self._refreshing:
                return
            self._refreshing.add(key)
            if self._refresher is None:
                self._refresher = ThreadPoolExecutor(max_workers=REFRESH_THREADS, thread_name_prefix="access-review-refresh")
            refresher = self._refresher

        def run() -> None:
            try:
                self.stats.count_sent()
                answer = self._ask(user, attributes)
                self._cache.put(key, answer, self._ttl(answer), self.stream_ttl_s)
            except ClusterError:
                pass  # the decision in hand stays until it is too old; then a blocking decide raises
            finally:
                with self._refresh_lock:
                    self._refreshing.discard(key)

        refresher.submit(run)

    def _ttl(self, decision: Decision) -> float:
        return self.allow_ttl_s if decision.allowed else self.deny_ttl_s

    def _ask(self, user: User, attributes: Attributes) -> Decision:
        spec = {**user.subject(), **attributes.review_fields()}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        return _decision(self.transport.request("POST", SUBJECTACCESSREVIEWS, body=body).get("status") or {})


class SelfAccessReviewer:
    """SelfSubjectAccessReview made with someone's credentials, cached per (credentials, attributes)."""

    def __init__(self, *, transport: Transport, ttl_s: float) -> None:
        self.transport = transport
        self.ttl_s = ttl_s
        self.stats = ReviewStats()
        self._cache: _Expiring[tuple[str, Attributes], Decision] = _Expiring()

    def decide(self, credentials: Credentials, attributes: Attributes) -> Decision:
        return _remembered(
            self._cache, self.stats, (credentials.key, attributes), lambda: self._ask(credentials, attributes), lambda _d: self.ttl_s
        )

    def _ask(self, credentials: Credentials, attributes: Attributes) -> Decision:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": attributes.review_fields()}
        status = self.transport.request("POST", SELFSUBJECTACCESSREVIEWS, body=body, credentials=credentials).get("status") or {}
        return _decision(status)
