"""Shutting an app down: its ``/watch`` streams first, then its informers.

:func:`close_streams` and :func:`shutdown` are called by the production worker
(:mod:`backend.server.workers`, on SIGTERM / SIGINT), the gunicorn hooks of :mod:`backend.server.gunicorn_conf`
(when the worker exits) and by any entry point that stops an app: they end open ``/watch`` streams
(on the event loop and in threads alike) and with them the dashboard's log streams (their readers stop; the broadcaster
closes them: :meth:`backend.api.watch.broadcasting.Broadcaster.on_close`), then stop the informers. Apps without those parts (e.g.
the benchmark's baseline) are left alone.
"""

from __future__ import annotations

from typing import Any

from backend.api.watch import watching
from backend.core import services


def close_streams(app: Any) -> None:
    """End every open ``/watch`` stream of ``app`` (SSE clients reconnect to the next process)."""
    extensions = getattr(app, "extensions", None)
    if extensions is not None and watching.EXTENSION in extensions:
        watching.close(app)


def shutdown(app: Any) -> None:
    """End the streams, then stop the informer cache and the cluster connection of ``app``."""
    close_streams(app)
    found = getattr(app, "extensions", {}).get(services.EXTENSION)
    if found is not None:
        found.access.stop()
