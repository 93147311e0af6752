"""gunicorn configuration for production: ``gunicorn -c python:backend.server.gunicorn_conf backend.server.wsgi:app``.

**One worker process** (the informer cache lives in the process: every extra worker would hold
another full copy of every Darkroom, Task and Event, open its own watches on the API server, and
read-your-writes only holds within one cache), of class :class:`backend.server.workers.StreamingWorker`:
one asyncio loop runs uvicorn's HTTP/1.1 protocol for every connection, Flask views run in
``settings.request_threads`` threads, and ``/watch`` streams run on the loop without a thread
(:mod:`backend.server.asgi`). So open dashboards, slow clients and idle keep-alive connections cost
sockets, not request threads; ``/watch`` is capped per client and in total (503 + ``Retry-After``),
request headers must arrive within ``settings.header_timeout_s`` and bodies within
``settings.body_timeout_s``. Override gunicorn settings on the command line or with
``GUNICORN_CMD_ARGS``.

``/healthz`` and ``/readyz`` are answered by threads of their own (the kubelet's path, which no
client load can starve). ``bind`` comes from the same settings as the app (``DARKROOM_API_HOST`` /
``PORT``); unsafe settings stop gunicorn before it forks, and :func:`when_ready` checks the
addresses *actually bound*, whatever ``--bind`` / ``GUNICORN_CMD_ARGS`` said: off loopback without
a token, gunicorn exits.

Logs: the access log (written by the front, on gunicorn's access log handlers) has client,
method, path without the query string, protocol, status, size and time; never the query string,
the referrer or any header, so no token or cookie can reach it. Every log line has control
characters escaped (:mod:`backend.server.logs`), so request data cannot forge lines or terminal escapes.
The app is not preloaded: its informer threads must start in the worker, after the fork. On
SIGTERM the worker ends the ``/watch`` streams at once, finishes in-flight requests and stops the
informers on exit. Behind a TLS-terminating proxy, set ``FORWARDED_ALLOW_IPS`` (a gunicorn
setting, passed on to uvicorn) to the proxy's address(es) so ``X-Forwarded-Proto: https`` is
trusted (Secure cookies, HSTS) and ``X-Forwarded-For`` names the client the stream caps count.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

from envsettings.startup import skip_kubernetes_validate

# This module is gunicorn's configuration, loaded by its master only, before the imports below bring in the official
# client's package; the worker forks inherit the master's modules.
skip_kubernetes_validate()

from backend.server import shutdown  # noqa: E402
from backend.settings import ENV_PREFIX, ApiSettings  # noqa: E402

_settings = ApiSettings.from_environ(os.environ).check()


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


bind = _address(_settings.host, _settings.port)
workers = 1
worker_class = "backend.server.workers.StreamingWorker"
threads = 1  # unused by this worker: request threads are DARKROOM_API_REQUEST_THREADS
preload_app = False
timeout = 30
graceful_timeout = 10
keepalive = 5
accesslog = "-"
errorlog = "-"
loglevel = _settings.log_level.lower()
proc_name = "darkroom-control-panel-api"
control_socket_disable = True  # gunicorn >= 24's control socket is shared per user ($HOME/.gunicorn); we do not use it


def exposed(listeners: list[Any]) -> list[str]:
    """The bound addresses of ``listeners`` that are reachable from other hosts (not loopback, not a unix socket)."""
    found = []
    for listener in listeners:
        sock = getattr(listener, "sock", listener)
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            continue
        host, port = sock.getsockname()[:2]
        if not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback:
            found.append(_address(host, port))
    return found


def when_ready(server: Any) -> None:
    """Refuse to serve the local one-person mode off loopback, judging by the sockets bound, not by the settings."""
    open_to_others = exposed(server.LISTENERS)
    if open_to_others and _settings.local:
        reason = (
            f"refusing to serve on {', '.join(open_to_others)} in the local mode (acting as this process's own kubeconfig"
            f" identity): off loopback every person must log in (set {ENV_PREFIX}AUTHENTICATION=login), whatever --bind or"
            " GUNICORN_CMD_ARGS say"
        )
        server.log.error(reason)
        server.halt(reason=reason, exit_status=1)


def worker_int(worker: Any) -> None:
    """SIGINT / SIGQUIT: the worker exits at once; end the streams first."""
    shutdown.close_streams(getattr(worker, "target", None) or worker.wsgi)


def worker_exit(server: Any, worker: Any) -> None:
    """Stop the informers and close the cluster connection of the exiting worker."""
    app = getattr(worker, "target", None) or getattr(worker, "wsgi", None)
    if app is not None:
        shutdown.shutdown(app)
