"""``GET /namespaces``: namespace names for the dashboard's switcher (blueprint ``namespaces``).

Read from the namespaces informer; when the API serves one namespace only, just that one
(:meth:`backend.core.services.Services.namespaces`). :func:`blueprint` is called by
:func:`backend.app.create_app` with the app's services.
"""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

from backend.api import apidocs, bodies
from backend.core.services import Services


def blueprint(services: Services) -> Blueprint:
    """The ``namespaces`` blueprint over the app's namespaces informer."""
    found = Blueprint("namespaces", __name__)

    def list_namespaces() -> Response:
        items = [{"name": ns["metadata"]["name"], "phase": (ns.get("status") or {}).get("phase")} for ns in services.namespaces()]
        return Response(orjson.dumps({"items": items}), mimetype=bodies.JSON)

    apidocs.document(list_namespaces, "GET", "List namespaces", {
        "tags": ["Namespaces"],
        "description": "Names (sorted) for choosing where to look or create: those you may see (all when you may list namespaces;"
        " otherwise those you may get or list one of our kinds in); only the served namespace when the API is limited to one.",
        "responses": {"200": apidocs.json_response("NamespaceList", "The namespaces."), **apidocs.problems(503)},
    })  # fmt: skip
    found.add_url_rule("/namespaces", view_func=list_namespaces, methods=["GET"])
    return found
