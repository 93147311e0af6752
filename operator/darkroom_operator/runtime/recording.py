"""Kubernetes Events about our objects (core/v1 ``Event``), the way client-go's legacy recorder writes them.

Built once by the runtime (``EventRecorder(client=..., settings=...)``) and handed to reconcilers
through :class:`darkroom_operator.runtime.reconciling.Context`. Each call creates one Event in the object's
namespace with ``involvedObject`` (apiVersion, kind, name, namespace, uid, resourceVersion),
``source.component`` / ``reportingComponent`` = ``settings.component``, ``reportingInstance`` =
``settings.identity``, ``firstTimestamp`` = ``lastTimestamp`` = now and ``count`` 1 (``eventTime``
stays unset, as for every core/v1 Event a legacy recorder writes).

Names: by default ``<object>.<hex nanoseconds>`` like client-go. A caller that needs an Event to
exist exactly once — across retries and restarts — passes a deterministic ``name``: creating it
again answers AlreadyExists, which counts as success.

Messages are the caller's text, cut to :data:`MAX_MESSAGE_CHARS`; callers only ever put spec
fields and API error messages in them (the operator never reads Secrets, so it has no secret
value to leak).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from cluster import EVENTS, AlreadyExists, CachedClient
from darkroom_operator.runtime.conditions import timestamp
from darkroom_operator.settings import OperatorSettings

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 1024
MAX_NAME_CHARS = 253
NORMAL, WARNING = "Normal", "Warning"


def utc_now() -> datetime:
    return datetime.now(UTC)


def event_name(object_name: str, suffix: str) -> str:
    """``<object_name>.<suffix>`` kept within the 253 characters of a DNS subdomain (the object part is shortened)."""
    room = MAX_NAME_CHARS - len(suffix) - 1
    return f"{object_name[:room].rstrip('.-')}.{suffix}"


class EventRecorder:
    """Creates core/v1 Events through the cached client (so its writes count as the operator's own)."""

    def __init__(self, *, client: CachedClient, settings: OperatorSettings, now: Callable[[], datetime] = utc_now) -> None:
        self.client = client
        self.settings = settings
        self.now = now

    def body(
        self,
        obj: Mapping[str, Any],
        *,
        type_: str,
        reason: str,
        message: str,
        name: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The Event body :meth:`event` would create (no I/O)."""
        if type_ not in (NORMAL, WARNING):
            raise ValueError(f"event type must be Normal or Warning, not {type_!r}")
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        stamp = timestamp(self.now())
        metadata: dict[str, Any] = {"name": name or event_name(meta["name"], f"{time.time_ns():x}"), "namespace": namespace}
        if labels:
            metadata["labels"] = dict(labels)
        involved = {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta["name"],
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": metadata,
            "involvedObject": {k: v for k, v in involved.items() if v},
            "type": type_,
            "reason": reason,
            "message": message[:MAX_MESSAGE_CHARS],
            "source": {"component": self.settings.component},
            "reportingComponent": self.settings.component,
            "reportingInstance": self.settings.identity,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }

    def event(
        self,
        obj: Mapping[str, Any],
        *,
        type_: str,
        reason: str,
        message: str,
        name: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> dict[str, Any] | None:
        """Create the Event; returns it, or None when ``name`` was given and it already exists.

        Other API errors propagate (:class:`cluster.ClusterError`): callers decide whether an Event is
        worth a retry (Task lifecycle Events are) or only a log line (Darkroom status Events).
        """
        body = self.body(obj, type_=type_, reason=reason, message=message, name=name, labels=labels)
        try:
            created = self.client.create(EVENTS, body, field_manager=self.settings.field_manager)
        except AlreadyExists:
            if name is not None:
                return None  # exactly-once: a replay after a crash or a retry
            body["metadata"]["name"] = event_name(obj["metadata"]["name"], f"{time.time_ns():x}")
            created = self.client.create(EVENTS, body, field_manager=self.settings.field_manager)
        log.debug(
            "event recorded",
            extra={
                "kind": obj.get("kind"),
                "key": f"{body['metadata']['namespace']}/{obj['metadata']['name']}",
                "reason": reason,
                "type": type_,
            },
        )
        return created
