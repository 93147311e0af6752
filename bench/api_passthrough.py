"""The baseline of bench/api.py: ``GET /darkrooms`` listing straight from the API server on every request.

A tiny separate Flask app (never part of the product), served by the same gunicorn configuration
as the product (``gunicorn -c backend/server/gunicorn_conf.py api_passthrough:app`` with ``bench/`` on
``PYTHONPATH``). It answers the same friendly JSON as the product's ``GET /darkrooms`` (same
conversion, order and envelope; bench/api.py checks the bodies are equal) but has no informer
cache and no memoization: one LIST request to the API server per request, then every object
converted and encoded, which is what an API without a cache does (the seed's API did exactly this).
"""

from __future__ import annotations

import os

import orjson
from flask import Flask, Response

from backend.api.bodies import JSON
from backend.core.kinds.darkrooms import KIND
from backend.core.listing import list_body
from backend.settings import ApiSettings
from cluster import DARKROOMS, ConnectionSettings, connect
from cluster.bodies import object_key

settings = ApiSettings.from_environ(os.environ)
connection = connect(ConnectionSettings(kubeconfig=settings.kubeconfig), environ=os.environ)
app = Flask("api_passthrough")


@app.get("/darkrooms")
def list_darkrooms() -> Response:
    items = connection.transport.request("GET", DARKROOMS.path())["items"]
    for item in items:
        item.setdefault("apiVersion", DARKROOMS.api_version)
        item.setdefault("kind", DARKROOMS.kind)
    items.sort(key=object_key)
    encoded = [orjson.dumps(KIND.to_friendly(item, settings=settings)) for item in items]
    return Response(list_body(encoded, token=None, total=len(items)), mimetype=JSON)
