"""The gunicorn worker class of the production server: one asyncio loop, uvicorn's HTTP/1.1, the app behind
:class:`backend.server.asgi.Front`.

Named by :mod:`backend.server.gunicorn_conf` (``worker_class``). gunicorn stays the process manager (one
worker process: the informer cache lives in it), loads the WSGI target as before
(``backend.server.wsgi:app``) and runs its hooks; :class:`StreamingWorker` (uvicorn-worker's worker)
serves the listeners with uvicorn's httptools protocol on one event loop and wraps the target in
the front, which runs Flask views in a thread pool and ``/watch`` streams on the loop.

Why this and not gthread, gevent or a second stream server (measured by ``bench/streams.py``):
gthread parses each request in a pool thread, so 32 slow clients or 32 streams stop it; gevent
would monkey-patch the informers and the Kubernetes client of the whole process and run CPU-heavy
list encodings on the one hub that also carries every stream and probe; a second server on another
port would need its own routing in the Ingress and still leave the API's own port to slow clients.
Here slow clients, idle keep-alive connections and streams are sockets on the loop; threads are
taken only by requests whose headers and body are in.

Added on top of uvicorn, through its documented ``http`` protocol-class option:
:class:`HeaderDeadline` closes a connection whose request headers are not complete within
``settings.header_timeout_s`` (uvicorn itself bounds only the idle time between requests). Shutdown:
on SIGTERM/SIGINT the broadcaster is closed first (:func:`backend.server.shutdown.close_streams`), so open
streams end with a complete response and uvicorn's graceful shutdown finishes within gunicorn's
``graceful_timeout`` instead of waiting for endless streams.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from types import FrameType
from typing import Any

import uvicorn
from gunicorn.arbiter import Arbiter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn_worker import UvicornWorker

from backend.server import logs, shutdown
from backend.server.asgi import ACCESS_LOGGER, Front
from backend.settings import ApiSettings

log = logging.getLogger(__name__)
PARENT_CHECK_S = 1.0


class HeaderDeadline(HttpToolsProtocol):
    """uvicorn's protocol plus a deadline for request headers (slow-loris clients are cut off).

    Armed when the connection opens and when a request's first byte is parsed; disarmed when its
    headers are complete. The idle time between requests stays uvicorn's keep-alive timeout.
    """

    header_timeout_s: float = 10.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closing a connection from %s: no complete request headers within %g s", self.client, self.header_timeout_s)
            self.transport.close()


def header_deadline(timeout_s: float) -> type[HeaderDeadline]:
    return type("HeaderDeadline", (HeaderDeadline,), {"header_timeout_s": timeout_s})


class _Server(uvicorn.Server):
    """uvicorn's server, ending the streams first when told to exit, and not re-raising the signal after
    a graceful exit (the worker then returns normally: gunicorn's ``worker_exit`` hook runs, exit code 0)."""

    def __init__(self, config: uvicorn.Config, *, on_exit: Any) -> None:
        super().__init__(config)
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._on_exit()
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True


class StreamingWorker(UvicornWorker):
    """gunicorn worker: the loaded WSGI app behind :class:`backend.server.asgi.Front`, served by uvicorn."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.settings = ApiSettings.from_environ(os.environ)
        self.CONFIG_KWARGS = {
            "loop": "auto",  # uvloop when installed
            "http": header_deadline(self.settings.header_timeout_s),
            "ws": "none",
            "interface": "asgi3",
            "lifespan": "off",  # startup and shutdown are gunicorn's hooks
            "access_log": False,  # uvicorn's line carries the query string; the front writes ours
            "proxy_headers": True,  # scheme and client from X-Forwarded-* of FORWARDED_ALLOW_IPS peers
            "server_header": False,
        }
        super().__init__(*args, **kwargs)
        # End well before gunicorn's master gives up on the worker.
        self.config.timeout_graceful_shutdown = max(1, int(self.cfg.graceful_timeout) - 1)
        access = logging.getLogger(ACCESS_LOGGER)
        access.handlers = self.log.access_log.handlers
        access.setLevel(logging.INFO)
        access.propagate = False
        self.target: Any = None

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.target = self.wsgi
        self.wsgi: Any = Front(self.target, settings=self.settings)
        # Every handler set up by now: gunicorn's error and access logs, uvicorn's, the app's root logger.
        logs.install([self.log.error_log, self.log.access_log])

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self.config.app = self.wsgi
        server = _Server(self.config, on_exit=lambda: loop.call_soon_threadsafe(shutdown.close_streams, self.target))
        self._install_sigquit_handler()
        orphaned = loop.create_task(self._exit_when_orphaned(server))
        try:
            await server.serve(sockets=self.sockets)
        finally:
            orphaned.cancel()
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)

    async def _exit_when_orphaned(self, server: _Server) -> None:
        """Shut down when the master is gone (killed): gunicorn's own workers do, uvicorn's does not."""
        while not server.should_exit:
            await asyncio.sleep(PARENT_CHECK_S)
            if os.getppid() != self.ppid:
                self.log.info("Parent changed, shutting down: %s", self)
                server.handle_exit(signal.SIGTERM, None)
