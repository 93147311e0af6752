"""gunicorn entry point: ``gunicorn -c python:backend.server.gunicorn_conf backend.server.wsgi:app``.

Builds the settings from the environment (``DARKROOM_API_*``, ``PORT``), configures logging and
creates the app, once per worker process: gunicorn must not preload it in the master, because the
informer threads have to start after the fork. Shutdown is driven by the hooks in
:mod:`backend.server.gunicorn_conf` through :mod:`backend.server.shutdown`.

Once the app is made (its informer cache synced: ``ClusterAccess.start`` waits), everything alive is moved out of the
garbage collector's generations (``gc.freeze``): the cached objects are many (tens of thousands of Darkrooms are
millions of small containers), immutable and long-lived, and a full collection walking them all paused requests for
hundreds of milliseconds (``bench/scale.py --gc-pauses``). Objects made later — changes, requests — are collected as
usual; a frozen object that becomes garbage is still freed by its reference count (the cache's frozen bodies hold no
cycles).
"""

from __future__ import annotations

import gc
import logging
import os

from backend.app import create_app
from backend.settings import ApiSettings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"

settings = ApiSettings.from_environ(os.environ)
logging.basicConfig(level=settings.log_level.upper(), format=LOG_FORMAT)
app = create_app(settings)
gc.freeze()  # the synced cache out of the collector's walks (the module docstring)
