"""``GET /namespaces``: namespace names for the dashboard's switcher (blueprint ``namespaces``).

Read from the namespaces informer; when the API serves one namespace only, just that one.
Registered by :func:`backend.app.create_app`.
"""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

from backend import apidocs, listing, state
from cluster import NAMESPACES

blueprint = Blueprint("namespaces", __name__)


def list_namespaces() -> Response:
    settings = state.current().settings
    items = [
        {"name": ns["metadata"]["name"], "phase": (ns.get("status") or {}).get("phase")}
        for ns in state.current().access.client.list(NAMESPACES)
        if settings.namespace is None or ns["metadata"]["name"] == settings.namespace
    ]
    return Response(orjson.dumps({"items": items}), mimetype=listing.JSON)


apidocs.document(list_namespaces, "GET", "List namespaces", {
    "tags": ["Namespaces"],
    "description": "Names (sorted) for choosing where to look or create; only the served namespace when the API is limited to one.",
    "responses": {"200": apidocs.json_response("NamespaceList", "The namespaces."), **apidocs.problems(503)},
})  # fmt: skip
blueprint.add_url_rule("/namespaces", view_func=list_namespaces, methods=["GET"])
