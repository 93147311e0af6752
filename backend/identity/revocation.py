"""Sessions that ended before their cookie did: the list of logged-out sessions every replica checks.

A dashboard session cookie is signed and stateless (:class:`backend.identity.sessions.Sessions`), so a copy of
it would keep working until it expires. A logout therefore revokes the session's id in a ConfigMap
shared by all API replicas — :data:`NAME` in ``settings.session_namespace`` (the API's own namespace,
``darkroom-system`` in deploy/), labelled :data:`LABELS` (declared with the informer that watches it,
:data:`backend.core.access.SESSIONS_LABELS`) — whose data maps revoked ids to the unix time
their cookie would have expired anyway. Each replica's informer holds it, so a revocation reaches the
others within one watch event; expired entries are pruned by the next logout. Written with merge
patches (no read-modify-write race between replicas); created on first use. Used only when
authentication is on (``settings.api_token``).
"""

from __future__ import annotations

import logging
import time

from backend.core.access import SESSIONS_LABELS
from cluster import CONFIGMAPS, AlreadyExists, CachedClient, ClusterError, NotFound

log = logging.getLogger(__name__)

NAME = "darkroom-api-sessions"
LABELS = SESSIONS_LABELS


class Revocations:
    def __init__(self, *, client: CachedClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace

    def revoked(self, session_id: str) -> bool:
        stored = self.client.peek(CONFIGMAPS, NAME, namespace=self.namespace)
        return stored is not None and session_id in (stored.get("data") or {})

    def revoke(self, session_id: str, *, expires_at: float) -> bool:
        """Record the logout; False (logged) when the store cannot be written."""
        now = time.time()
        stored = self.client.peek(CONFIGMAPS, NAME, namespace=self.namespace)
        listed: dict[str, str] = dict(stored.get("data") or {}) if stored is not None else {}
        expired = {k: None for k, v in listed.items() if not v.isdigit() or int(v) < now}
        data: dict[str, str | None] = {**expired, session_id: str(int(expires_at))}
        try:
            try:
                self.client.patch(CONFIGMAPS, NAME, {"data": data}, namespace=self.namespace)
            except NotFound:
                body = {"metadata": {"name": NAME, "namespace": self.namespace, "labels": LABELS}, "data": {session_id: data[session_id]}}
                try:
                    self.client.create(CONFIGMAPS, body, namespace=self.namespace)
                except AlreadyExists:  # another replica created it just now
                    self.client.patch(CONFIGMAPS, NAME, {"data": data}, namespace=self.namespace)
        except ClusterError as e:
            log.warning("could not revoke a session at logout (%s/%s): %s", self.namespace, NAME, e.message)
            return False
        return True
