"""gunicorn entry point: ``gunicorn -c python:backend.server.gunicorn_conf backend.server.wsgi:app``.

Builds the settings from the environment (``DARKROOM_API_*``, ``PORT``), configures logging and
creates the app, once per worker process: gunicorn must not preload it in the master, because the
informer threads have to start after the fork. Shutdown is driven by the hooks in
:mod:`backend.server.gunicorn_conf` through :mod:`backend.server.shutdown`.
"""

from __future__ import annotations

import logging
import os

from backend.app import create_app
from backend.settings import ApiSettings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"

settings = ApiSettings.from_environ(os.environ)
logging.basicConfig(level=settings.log_level.upper(), format=LOG_FORMAT)
app = create_app(settings)
