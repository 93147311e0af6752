"""backend: the REST API and the HTMX dashboard of Darkroom Control Panel (Flask).

``create_app(settings)`` in :mod:`backend.app` builds the app; :mod:`backend.core.access` owns the
informer cache and cached client it reads through; blueprints per resource turn friendly JSON into
CR objects (marshmallow schemas) and back. Production runs under gunicorn (:mod:`backend.server.wsgi`).
"""

__version__ = "0.1.0"
