"""Caps on concurrent ``/watch`` streams: per client and in total.

:class:`StreamLimits` is created once per app by :func:`backend.api.watch.watching.register`; the ``/watch``
view calls :meth:`StreamLimits.acquire` before it opens a stream and answers 503 with
``Retry-After`` (``settings.stream_retry_after_s``) on :class:`LimitReached`. The :class:`Lease`
it gets is released exactly once when the stream ends, whichever server streamed it.

A client is its address as the app sees it (``request.remote_addr``): behind a proxy trusted
through ``FORWARDED_ALLOW_IPS`` the production server sets it from ``X-Forwarded-For``, so the
cap applies per end user rather than to the Ingress controller as a whole.

Why caps at all, when streams no longer hold threads: each stream still costs a socket, a task
and write buffers, and every published event is written to each of them. ``stream_max_total``
(default 2,000) bounds that (1,000 streams took the worker from 57 to 74 MiB resident in
``bench/streams.py``: ~35 MiB at the cap, well inside the pod's 512 MiB limit);
``stream_max_per_client`` (default 32) keeps one script or one browser with many tabs from taking
the whole budget while leaving room for a shared NAT address.
"""

from __future__ import annotations

import threading


class LimitReached(Exception):
    """A stream cap is full; ``cap`` is ``"client"`` or ``"total"``."""

    def __init__(self, cap: str, message: str) -> None:
        super().__init__(message)
        self.cap = cap


class Lease:
    """One open stream's share of the caps; :meth:`release` is idempotent."""

    def __init__(self, limits: StreamLimits, client: str) -> None:
        self._limits = limits
        self._client = client
        self._released = False

    def release(self) -> None:
        with self._limits.lock:
            if self._released:
                return
            self._released = True
            self._limits.drop(self._client)


class StreamLimits:
    """Counts open streams in total and per client (thread-safe)."""

    def __init__(self, *, max_total: int, max_per_client: int) -> None:
        self.max_total = max_total
        self.max_per_client = max_per_client
        self.lock = threading.Lock()
        self.total = 0
        self.per_client: dict[str, int] = {}

    def acquire(self, client: str) -> Lease:
        """A lease for one more stream of ``client``; :class:`LimitReached` when a cap is full."""
        with self.lock:
            if self.total >= self.max_total:
                raise LimitReached("total", f"the server has reached its limit of {self.max_total} open streams; try again later")
            held = self.per_client.get(client, 0)
            if held >= self.max_per_client:
                raise LimitReached(
                    "client", f"this client already has {held} open streams (the limit is {self.max_per_client}); close some first"
                )
            self.total += 1
            self.per_client[client] = held + 1
        return Lease(self, client)

    def drop(self, client: str) -> None:
        """Called by :meth:`Lease.release` with :attr:`lock` held."""
        self.total -= 1
        left = self.per_client.get(client, 1) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)
