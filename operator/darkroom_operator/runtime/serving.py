"""The operator's probe and metrics server: ``/healthz``, ``/readyz``, ``/metrics`` on one small HTTP port.

Started by :mod:`darkroom_operator.__main__` on ``settings.health_host``/``health_port`` (port 0
binds a free port — :attr:`HealthServer.port` tells which; -1 means no server at all). A stdlib
``ThreadingHTTPServer`` on a daemon thread: three GET endpoints need no framework.

- ``/healthz``: the process is alive and its HTTP thread answers → 200 ``ok``.
- ``/readyz``: the checks from ``checks()`` (name → (ok, detail)); 200 when all pass, else 503.
  The body lists each check as ``[+]name ok`` / ``[-]name: why`` like kube-apiserver's.
- ``/metrics``: the process's private prometheus registry (text exposition format).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

log = logging.getLogger(__name__)

Checks = Callable[[], Mapping[str, tuple[bool, str]]]


class HealthServer:
    """Serve the probes and metrics until :meth:`stop`."""

    def __init__(self, *, host: str, port: int, registry: CollectorRegistry, checks: Checks) -> None:
        if port < 0:
            raise ValueError("port must be 0 (any free port) or positive")
        self.registry = registry
        self.checks = checks
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="health-server", daemon=True)

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def readiness(self) -> tuple[bool, str]:
        try:
            results = dict(self.checks())
        except Exception as e:  # a broken check must not take the probe down with a traceback page
            log.exception("readiness check failed")
            return False, f"[-]checks: {type(e).__name__}\n"
        lines = [f"[+]{name} ok" if ok else f"[-]{name}: {detail}" for name, (ok, detail) in results.items()]
        ready = all(ok for ok, _ in results.values())
        return ready, "\n".join(lines) + ("\nreadyz check passed\n" if ready else "\nreadyz check failed\n")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "darkroom-operator"
            sys_version = ""

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/healthz":
                    self._send(200, b"ok\n", "text/plain; charset=utf-8")
                elif path == "/readyz":
                    ready, text = server.readiness()
                    self._send(200 if ready else 503, text.encode(), "text/plain; charset=utf-8")
                elif path == "/metrics":
                    self._send(200, generate_latest(server.registry), CONTENT_TYPE_LATEST)
                else:
                    self._send(404, b"not found: try /healthz, /readyz or /metrics\n", "text/plain; charset=utf-8")

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("health server: " + format, *args)

        return Handler
