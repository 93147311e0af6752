"""The production server around the app: ``gunicorn -c python:backend.server.gunicorn_conf backend.server.wsgi:app``.

The WSGI entry point (:mod:`.wsgi`), gunicorn's configuration (:mod:`.gunicorn_conf`) and worker (:mod:`.workers`),
the ASGI front (:mod:`.asgi`) with its event-loop streams (:mod:`.streaming`), log hygiene (:mod:`.logs`) and
shutting an app down (:mod:`.shutdown`).
"""
