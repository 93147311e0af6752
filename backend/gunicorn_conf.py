"""gunicorn configuration for production: ``gunicorn -c backend/gunicorn_conf.py backend.wsgi:app``.

**One worker process**, many threads (``gthread``): the informer cache lives in the process, so
every extra worker would hold another full copy of every Darkroom, Task and Event and open its own
watches on the API server, and read-your-writes only holds within one cache. Threads serve requests
from that one cache; each open ``/watch`` (Server-Sent Events) stream holds a thread for its
lifetime, hence :data:`threads` well above the expected number of dashboards. Override any setting
on the command line (``--threads 64``) or with ``GUNICORN_CMD_ARGS``.

``bind`` comes from the same settings as the app (``DARKROOM_API_HOST`` / ``PORT``) and unsafe
settings (off loopback without a token) stop gunicorn before it forks. The access log records
method, path (``%(U)s``: without the query string), protocol, status, size and time; never the
query string, the request line (``%(r)s``), the referrer or any header, so no token or cookie can
reach the log. The app is not preloaded: its informer threads must start in the worker, after the
fork. On SIGTERM the worker ends the ``/watch`` streams at once (gunicorn would otherwise wait
``graceful_timeout`` for them), finishes in-flight requests and stops the informers on exit.
Behind a TLS-terminating proxy, set ``FORWARDED_ALLOW_IPS`` (a gunicorn setting) to the proxy's
address so ``X-Forwarded-Proto: https`` is trusted and session cookies get the Secure flag.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from backend import serving
from backend.settings import ApiSettings

_settings = ApiSettings.from_environ(os.environ).check()

bind = f"[{_settings.host}]:{_settings.port}" if ":" in _settings.host else f"{_settings.host}:{_settings.port}"
workers = 1
worker_class = "gthread"
threads = 32
preload_app = False
timeout = 30
graceful_timeout = 10
keepalive = 5
accesslog = "-"
errorlog = "-"
loglevel = _settings.log_level.lower()
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms'
proc_name = "darkroom-control-panel-api"
control_socket_disable = True  # gunicorn >= 24's control socket is shared per user ($HOME/.gunicorn); we do not use it


def post_worker_init(worker: Any) -> None:
    """Chain a stream-closing step in front of the worker's own SIGTERM handler."""
    graceful = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: Any) -> None:
        serving.close_streams(worker.wsgi)
        if callable(graceful):
            graceful(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.siginterrupt(signal.SIGTERM, False)


def worker_int(worker: Any) -> None:
    """SIGINT / SIGQUIT: the worker exits at once; end the streams first."""
    serving.close_streams(worker.wsgi)


def worker_exit(server: Any, worker: Any) -> None:
    """Stop the informers and close the cluster connection of the exiting worker."""
    app = getattr(worker, "wsgi", None)
    if app is not None:
        serving.shutdown(app)
