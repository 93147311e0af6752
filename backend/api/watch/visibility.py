"""Which changes one stream may carry: only those its person may list, re-checked while the stream lives.

Every stream reads the one broadcaster of the app (one watch per kind, filled with the API's own
credentials). A :class:`Visibility` per stream decides, per event, whether its person may ``list`` the
event's kind in the event's namespace (or everywhere) — the same SubjectAccessReviews, and the same cache,
as every read of the shared cache (:class:`cluster.acting.ActingClient`). So a stream never carries a row,
an update or a deletion its person could not list.

Streams are served on an event loop (:mod:`backend.server.streaming`), which must never wait for a review:
:meth:`Visibility.known` answers from the cache or says "unknown", and the stream then has the blocking
:meth:`Visibility.decide` run in a thread before it goes on
(:attr:`backend.api.watch.streams.Subscription.blocked`). The decisions a stream acts on may be older than a
request's (``stream_review_ttl_s``, 60 s by default, against ``review_cache_ttl_s``:
:class:`cluster.reviewing.AccessReviewer`): a right taken away stops the rows within that time — kube-apiserver
itself authorizes a watch only when it starts. Every ``recheck_s`` the person's credentials are checked again
(:meth:`Visibility.recheck`, also in a thread): a session that ended or a token that was revoked ends the stream
(:class:`Ended`) — the client's reconnection then meets the login. A review that cannot be made ends the stream too:
never "allowed".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping

from cluster import Resource
from cluster.acting import ActingClient
from cluster.attributes import ResourceAttributes
from cluster.reviewing import AccessReviewer

from .broadcasting import Event


class Ended(Exception):
    """The stream's person may no longer be served (session ended, token revoked)."""


class Visibility:
    """The person of one stream, their client and how to check that they are still who they were."""

    def __init__(
        self,
        client: ActingClient,
        reviewer: AccessReviewer,
        resources: Mapping[str, tuple[Resource, ...]],
        *,
        still_valid: Callable[[], bool] | None = None,
        recheck_s: float = 10.0,
    ) -> None:
        self.client = client
        self.reviewer = reviewer
        self.resources = resources  # event kind (title) -> the resources its person must be able to list
        self.still_valid = still_valid
        self.recheck_s = recheck_s
        self._next_check = time.monotonic() + recheck_s
        self.shown = 0
        self.withheld = 0

    def known(self, event: Event) -> bool | None:
        """Whether ``event`` may be shown, if that is known without a review; None otherwise. Never blocks."""
        user = self.client.actor.user
        if user is None:
            return True
        for resource in self.resources[event.kind]:
            decision = self.reviewer.known(user, ResourceAttributes.of("list", resource), for_stream=True)
            if decision is None:
                return None
            if decision.allowed:
                continue
            decision = self.reviewer.known(user, ResourceAttributes.of("list", resource, namespace=event.namespace), for_stream=True)
            if decision is None:
                return None
            if not decision.allowed:
                return False
        return True

    def review_key(self, event: Event) -> Hashable:
        """What :meth:`decide` depends on: every stream of one person held up by events of one kind in one namespace
        waits for the same reviews, so the server runs them once for all of those streams."""
        user = self.client.actor.user
        return (user.key() if user is not None else None, event.kind, event.namespace)

    def decide(self, event: Event) -> bool:
        """Whether ``event`` may be shown (blocking: reviews what is not cached). ClusterError when it cannot be reviewed."""
        return all(
            self.client.may("list", resource, for_stream=True)
            or self.client.may("list", resource, namespace=event.namespace, for_stream=True)
            for resource in self.resources[event.kind]
        )

    def count(self, shown: bool) -> None:
        if shown:
            self.shown += 1
        else:
            self.withheld += 1

    def recheck_due(self) -> bool:
        return self.still_valid is not None and time.monotonic() >= self._next_check

    def recheck(self) -> None:
        """Check the person's credentials again (blocking); :class:`Ended` when they are no longer accepted."""
        self._next_check = time.monotonic() + self.recheck_s
        if self.still_valid is not None and not self.still_valid():
            raise Ended("the session ended or the token is no longer accepted")
