"""The Server-Sent Events wire format of ``/watch`` and the dashboard's live rows: every frame a stream writes.

Pure bytes, no I/O: the broadcaster encodes each change once (:func:`event_frame`, :mod:`.broadcasting`) and a
client's :class:`.streams.Subscription` adds the rest (:func:`ready_frame` first, with the reconnection delay
:data:`RETRY_MS`; :func:`reset_frame` when its resume point is gone; :func:`heartbeat_frame` when idle, carrying the
id so filtered clients' resume points keep up).
"""

from __future__ import annotations

import orjson

RETRY_MS = 2000


def event_frame(event_id: int, kind: str, payload: bytes) -> bytes:
    """A change: ``event: <kind in lower case>`` with its id and ``payload`` (JSON) as data."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event_id, kind.lower().encode(), payload)


def ready_frame(cursor: int) -> bytes:
    """The first frame of a stream: the reconnection delay and ``event: ready`` at the client's resume point."""
    return b"retry: %d\nid: %d\nevent: ready\ndata: %s\n\n" % (RETRY_MS, cursor, orjson.dumps({"lastEventId": cursor}))


def reset_frame(event_id: int, reason: str) -> bytes:
    """``event: reset``: the client reloads the state (why: ``reason``), then keeps listening from ``event_id``."""
    data = orjson.dumps({"reason": reason, "lastEventId": event_id})
    return b"id: %d\nevent: reset\ndata: %s\n\n" % (event_id, data)


def heartbeat_frame(cursor: int) -> bytes:
    """A comment that keeps an idle stream open, with the id the client has seen up to."""
    return b": heartbeat\nid: %d\n\n" % cursor
