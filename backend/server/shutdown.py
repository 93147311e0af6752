"""Serving helpers for the entry points: shutting an app down, and a quiet werkzeug request handler.

:func:`close_streams` and :func:`shutdown` are called by the production worker
(:mod:`backend.server.workers`, on SIGTERM / SIGINT), the gunicorn hooks of :mod:`backend.server.gunicorn_conf`
(when the worker exits) and by any entry point that stops an app: they end open ``/watch`` streams
(on the event loop and in threads alike), then stop the informers. Apps without those parts (e.g.
the benchmark's baseline) are left alone.

``scripts/run_api.py`` (``make api``) and the tests serve with werkzeug instead of gunicorn and pass
:class:`RequestHandler` as ``werkzeug.serving.make_server(..., request_handler=RequestHandler)``:
its request log line has the method, the path without the query string, the protocol, status and
size. Nothing a client puts in a URL (a misplaced token, say) reaches the log; headers are never logged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from werkzeug.serving import WSGIRequestHandler

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


def without_query(target: str) -> str:
    """``/path?secret=1`` → ``/path`` (also for absolute-form targets)."""
    return urlsplit(target).path or "/"


class RequestHandler(WSGIRequestHandler):
    """werkzeug's handler with a request log that omits query strings."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        command = getattr(self, "command", None)
        path = getattr(self, "path", None)
        if command and path is not None:
            line = f"{command} {without_query(path)} {self.request_version}"
        else:  # the request line did not parse: log only its first word
            line = (getattr(self, "requestline", "") or "").split(" ", 1)[0] + " <unparsed>"
        self.log("info", '"%s" %s %s', line.translate(self._control_char_table), code, size)
