"""The production server's ASGI application: the Flask app behind a front that keeps threads for work.

:class:`Front` wraps the WSGI app gunicorn loads (``backend.server.wsgi:app``); the gunicorn worker class
:class:`backend.server.workers.StreamingWorker` builds it, and uvicorn's HTTP/1.1 protocol calls it on the
worker's one event loop. Connections, header parsing, slow clients and idle ``/watch`` streams cost
the loop a socket and a coroutine each; threads run only Flask views. Per request:

1. ``/healthz`` and ``/readyz`` (the kubelet's probes) run on :data:`PROBE_THREADS` threads of
   their own: however many slow views fill the request pool, the probes do not queue behind them
   (both answer in microseconds: liveness is constant, readiness is cached by
   :class:`backend.api.operations.ReachabilityProbe`, so clients calling them cannot hold those threads).
   Together with the loop, which only parses and writes, no client load can starve them.
2. The body is read on the loop, at most ``settings.max_content_length_bytes`` (413) and within
   ``settings.body_timeout_s`` (408; the connection is closed), before a thread is involved: a
   client sending one byte a second holds no thread. (Header read time is bounded by the
   protocol, :class:`backend.server.workers.HeaderDeadline`.)
3. The Flask app runs in the request pool (``settings.request_threads`` threads) on the environ
   a2wsgi builds from the scope; the thread produces the whole response (status, headers, body)
   and hands it to the loop in one step. (a2wsgi's own adapter crosses from thread to loop for
   every response message: three waits per request on a loop that may be busy writing an event
   to 1,000 streams; ``bench/streams.py`` measured the difference in p99.)
4. ``/watch``: the scope carries a :class:`backend.api.watch.streams.Handoff`. When the view filled it and
   answered 200, the response head goes out and :func:`backend.server.streaming.pump` writes the frames on
   the loop; the view's thread is free as soon as the view returns. The stream's cap lease is
   released when it ends. A pod log's stream (the handoff's ``pushed``: frames from reader threads of its own) is
   written the same way by :func:`backend.server.streaming.pump_pushed`.
5. One access-log line per request on the ``darkroom_control_panel.access`` logger (wired to
   gunicorn's access log by the worker): client, the person the request acted as (``-`` before
   authentication, ``(local)`` in the local mode; never a token: :data:`backend.api.actors.ACCESS_USER`),
   method, path *without* the query string, protocol, status, bytes, milliseconds; request data escaped
   (:func:`backend.server.logs.escape`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import io
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
from a2wsgi.wsgi import build_environ

from backend.api.actors import ACCESS_USER
from backend.api.problems import PROBLEM_JSON, TITLES, TYPE_BASE
from backend.api.watch.streams import HANDOFF, Handoff
from backend.server import streaming
from backend.server.logs import escape
from backend.settings import ApiSettings

ACCESS_LOGGER = "darkroom_control_panel.access"
PROBE_PATHS = frozenset({"/healthz", "/readyz"})
PROBE_THREADS = 2

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

access_log = logging.getLogger(ACCESS_LOGGER)


class Front:
    """ASGI 3 application serving the WSGI app ``app`` (see the module docstring)."""

    def __init__(self, app: Any, *, settings: ApiSettings) -> None:
        self.app = app
        self.settings = settings
        self._requests = ThreadPoolExecutor(settings.request_threads, thread_name_prefix="request")
        self._probes = ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="probe")
        self._wakers = streaming.Wakers()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets: not served
            await send({"type": "websocket.close", "code": 1000})
            return
        record = _AccessRecord(scope, send)
        try:
            await self._http(scope, receive, record.send)
        finally:
            record.write()

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        pool = self._probes if scope["path"] in PROBE_PATHS else self._requests
        handoff = Handoff()
        scope[HANDOFF] = handoff
        try:
            environ = dict(build_environ(scope, io.BytesIO(body)))  # type: ignore[arg-type]  # any file-like wsgi.input
            call = functools.partial(contextvars.copy_context().run, _call_wsgi, self.app, environ)
            status, headers, chunks = await asyncio.get_running_loop().run_in_executor(pool, call)
            subscription, pushed = handoff.subscription, handoff.pushed
            if (subscription is None and pushed is None) or status != 200:
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": False})
                return
            headers = [(name, value) for name, value in headers if name != b"content-length"]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            if subscription is not None:
                await streaming.pump(subscription, send=send, receive=receive, waker=self._wakers.get(subscription.broadcaster))
            elif pushed is not None:
                await streaming.pump_pushed(pushed, send=send, receive=receive)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            handoff.release()

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, or None once the request was answered (413, 408) or the client left."""
        limit = self.settings.max_content_length_bytes
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _problem(send, 413, f"the request body is larger than {limit} bytes", close=True)
            return None
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.settings.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        await _problem(send, 413, f"the request body is larger than {limit} bytes", close=True)
                        return None
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            await _problem(send, 408, f"the request body did not arrive within {self.settings.body_timeout_s:g} s", close=True)
            return None


def _call_wsgi(app: Any, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
    """Run the WSGI app to the end in this (pool) thread: status, headers, body chunks."""
    head: list[Any] = []
    chunks: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info is not None and head:
            raise exc_info[1].with_traceback(exc_info[2])
        head[:] = [int(status.split(" ", 1)[0]), [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]]
        return chunks.append

    iterable = app(environ, start_response)
    try:
        chunks.extend(chunk for chunk in iterable if chunk)
    finally:
        close = getattr(iterable, "close", None)
        if close is not None:
            close()
    return head[0], head[1], chunks


class _AccessRecord:
    """Wraps ``send`` to see the status and body size; :meth:`write` logs the line."""

    def __init__(self, scope: Scope, send: Send) -> None:
        self.scope = scope
        self._send = send
        self.status = 0
        self.size = 0
        self.started = time.perf_counter()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.size += len(message.get("body", b""))
        await self._send(message)

    def write(self) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return
        scope = self.scope
        raw = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
        path = raw.decode("latin-1").split("?", 1)[0]  # never the query string
        client = scope.get("client")
        access_log.info(
            '%s %s "%s %s HTTP/%s" %s %s %dms',
            escape(client[0]) if client else "-",
            escape(str(scope.get(ACCESS_USER) or "-")),
            escape(scope["method"]),
            escape(path),
            escape(scope.get("http_version", "1.1")),
            self.status or "-",
            self.size,
            (time.perf_counter() - self.started) * 1000,
        )


async def _problem(send: Send, status: int, detail: str, *, close: bool = False) -> None:
    """A problem+json answer from the front itself (before or outside the Flask app)."""
    title = TITLES.get(status, "Error")
    body = orjson.dumps({"type": TYPE_BASE + title.lower().replace(" ", "-"), "title": title, "status": status, "detail": detail})
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store"),
    ]
    if close:  # the rest of the request is not read: the connection cannot carry another one
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to start or stop here: the gunicorn hooks own startup and shutdown (:mod:`backend.server.shutdown`)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
