"""The API's self-description: ``/openapi.json`` (OpenAPI 3.0.3) and a browsable ``/docs`` page.

:func:`register` is called last by :func:`backend.app.create_app`; the document is built on first
request from the app's ``url_map`` (so it always matches the routes that really exist) with apispec
and its MarshmallowPlugin: each view's docstring carries its operations as YAML after a ``---``
line (``yaml_utils.load_operations_from_docstring``), and the marshmallow schemas that
:data:`backend.core.kinds.registry.SCHEMAS` holds (name → schema class: the common ones and each registered kind's)
become components, so docstrings can say
``schema: DarkroomSchema`` or ``$ref: "#/components/schemas/Darkroom"``. Shared components owned
here: ``Problem`` (RFC 9457), ``Health``, ``Login``, ``WatchEvent``, ``ServerSentEvent`` (one event of a
``text/event-stream`` answer as a client reads it: in OpenAPI 3.0 a stream's ``schema`` describes each event).

Path variables (``<namespace>``) become ``{namespace}`` with a path-level parameter. With a token
configured, ``bearerAuth`` and ``sessionCookie`` security schemes apply to every operation that
does not say ``security: []`` itself, and each such operation documents 401. OpenAPI 3.0.3 rather
than 3.1 because apispec's marshmallow conversion and schemathesis' validation are most mature for
it. ``/docs`` is rendered server-side from the same document by :mod:`backend.api.docspage` (no CDN, no JavaScript).
"""

from __future__ import annotations

import copy
import re
import threading
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.yaml_utils import load_operations_from_docstring
from flask import Flask, Response, jsonify

import backend
from backend.api import docspage
from backend.core.kinds.registry import SCHEMAS, TITLES, listed
from backend.settings import ApiSettings

OPENAPI_VERSION = "3.0.3"
METHODS = ("get", "put", "post", "patch", "delete")
RULE_VARIABLE = re.compile(r"<(?:(?P<converter>\w+)(?:\([^)]*\))?:)?(?P<name>\w+)>")
CONVERTER_TYPES = {"int": {"type": "integer"}, "float": {"type": "number"}}
DESCRIPTION = (
    f"Friendly JSON for {listed(TITLES)} custom resources. Errors are RFC 9457 problem details "
    "(`application/problem+json`); `ETag` is the object's resourceVersion and `If-Match` guards updates; "
    "`?dryRun=All` checks a write without storing it. A Postgresql's `password` is write-only and goes only "
    "into its Secret `<name>-credentials`; postgres applies it when it first initialises its data directory, "
    "so changing it later updates the Secret only. Every request acts as the person who makes it: send your own "
    "Kubernetes token (or the OIDC ID token the cluster trusts) as `Authorization: Bearer`, and the cluster decides what "
    "you may see and do, as with kubectl."
)

PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {
            "type": "object",
            "description": "Messages per friendly field path (e.g. `source.baseUrl`).",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "checks": {"type": "object", "description": "Readiness checks (only from /readyz).", "additionalProperties": {"type": "string"}},
        "user": {"type": "string", "description": "A refusal (403): who was refused, as the cluster knows them."},
        "verb": {"type": "string", "description": "A refusal (403): what was refused (`create`, `list`, ...)."},
        "group": {"type": "string", "description": "A refusal (403): the API group of the resource (`` for core)."},
        "resource": {"type": "string", "description": "A refusal (403): the resource (`darkrooms`, `secrets`, ...)."},
        "subresource": {"type": "string", "description": "A refusal (403): the subresource, if any."},
        "namespace": {"type": "string", "description": "A refusal (403): the namespace (absent: cluster-wide or every namespace)."},
        "name": {"type": "string", "description": "A refusal (403): the object's name, if one."},
    },
    "required": ["type", "title", "status"],
}
HEALTH = {
    "type": "object",
    "properties": {"status": {"type": "string"}, "checks": {"type": "object", "additionalProperties": {"type": "string"}}},
    "required": ["status"],
}
LOGIN = {
    "type": "object",
    "properties": {"token": {"type": "string", "description": "The API token."}, "next": {"type": "string"}},
    "required": ["token"],
}
WATCH_EVENT = {
    "type": "object",
    "description": f"The data of a {listed([f'`{title.lower()}`' for title in TITLES], 'or')} event on /watch.",
    "properties": {
        "type": {"type": "string", "enum": ["ADDED", "MODIFIED", "DELETED"]},
        "kind": {"type": "string", "enum": list(TITLES)},
        "namespace": {"type": "string"},
        "name": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "object": {"type": "object", "description": "The friendly representation (as GET returns it)."},
    },
    "required": ["type", "kind", "namespace", "name", "object"],
}
SERVER_SENT_EVENT = {
    "type": "object",
    "description": (
        "One event of a Server-Sent Events stream, as an EventSource hands it to a client: its name, its data lines "
        "joined with newlines, the last id seen and, on the first, the reconnection delay. Comments (heartbeats) are no events."
    ),
    "properties": {
        "event": {"type": "string", "description": "The event's name."},
        "data": {"type": "string", "description": "The event's data."},
        "id": {"type": "string", "description": "The id to resume after (`Last-Event-ID`)."},
        "retry": {"type": "integer", "description": "The reconnection delay in milliseconds."},
    },
    "required": ["event", "data"],
}
OWN_COMPONENTS = {"Problem": PROBLEM, "Health": HEALTH, "Login": LOGIN, "WatchEvent": WATCH_EVENT, "ServerSentEvent": SERVER_SENT_EVENT}
UNAUTHORIZED = {
    "description": "Missing or invalid bearer token (your Kubernetes or OIDC ID token) / session cookie.",
    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
}
# Every request acts as its person: the cluster may refuse what they may not do (a problem naming verb, resource, namespace).
FORBIDDEN = {
    "description": "You may not do this (the cluster's refusal, for you): the problem names user, verb, group, resource, namespace.",
    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
}


def openapi_path(rule: str) -> tuple[str, list[dict[str, Any]]]:
    """Flask rule → (OpenAPI path, its path parameters)."""
    parameters = []
    for match in RULE_VARIABLE.finditer(rule):
        schema = dict(CONVERTER_TYPES.get(match["converter"] or "", {"type": "string"}))
        parameters.append({"name": match["name"], "in": "path", "required": True, "schema": schema})
    return RULE_VARIABLE.sub(lambda m: "{" + m["name"] + "}", rule), parameters


def build(app: Flask, *, settings: ApiSettings) -> dict[str, Any]:
    """The OpenAPI document of ``app`` as a dict."""
    spec = APISpec(
        title="Darkroom Control Panel API",
        version=backend.__version__,
        openapi_version=OPENAPI_VERSION,
        plugins=[MarshmallowPlugin()],
        info={"description": DESCRIPTION},
    )
    schemas = SCHEMAS
    for name, schema in schemas.items():
        spec.components.schema(name, schema=schema)
    for name, component in OWN_COMPONENTS.items():
        if name not in schemas:
            spec.components.schema(name, component=copy.deepcopy(component))
    secured = not settings.local
    if secured:
        spec.components.security_scheme("bearerAuth", {"type": "http", "scheme": "bearer"})
        spec.components.security_scheme("sessionCookie", {"type": "apiKey", "in": "cookie", "name": "darkroom_session"})
        spec.options["security"] = [{"bearerAuth": []}, {"sessionCookie": []}]

    paths: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint == "static":
            continue
        view = app.view_functions[rule.endpoint]
        documented = load_operations_from_docstring(view.__doc__ or "")
        methods = {m.lower() for m in rule.methods or ()}
        operations = {m: copy.deepcopy(op) for m, op in documented.items() if m in methods and m in METHODS}
        if not operations:
            continue
        path, parameters = openapi_path(rule.rule)
        merged, _ = paths.setdefault(path, ({}, parameters))
        for method, operation in operations.items():
            if secured and operation.get("security") != []:
                operation.setdefault("responses", {}).setdefault("401", copy.deepcopy(UNAUTHORIZED))
                operation["responses"].setdefault("403", copy.deepcopy(FORBIDDEN))
            merged[method] = operation
    for path, (operations, parameters) in paths.items():
        spec.path(path=path, operations=operations, parameters=copy.deepcopy(parameters) or None)
    return spec.to_dict()


def undocumented(app: Flask) -> list[str]:
    """``METHOD /rule`` of every route whose view has no YAML operation for that method."""
    missing = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        documented = load_operations_from_docstring(app.view_functions[rule.endpoint].__doc__ or "")
        missing += [f"{m} {rule.rule}" for m in sorted(rule.methods or ()) if m.lower() in METHODS and m.lower() not in documented]
    return missing


def register(app: Flask, *, settings: ApiSettings) -> None:
    """Add ``/openapi.json`` and ``/docs``; the document is built once, on first use."""
    lock = threading.Lock()
    built: list[dict[str, Any]] = []

    def document() -> dict[str, Any]:
        with lock:
            if not built:
                built.append(build(app, settings=settings))
            return built[0]

    @app.get("/openapi.json")
    def openapi_json() -> Response:
        """This API's OpenAPI document.
        ---
        get:
          tags: [documentation]
          summary: OpenAPI 3 document
          responses:
            "200":
              description: The OpenAPI document.
              content:
                application/json:
                  schema: {type: object}
        """
        return jsonify(document())

    @app.get("/docs")
    def docs() -> Response:
        """Browsable API reference generated from the OpenAPI document.
        ---
        get:
          tags: [documentation]
          summary: API reference (HTML)
          responses:
            "200":
              description: The reference page.
              content:
                text/html:
                  schema: {type: string}
        """
        return Response(docspage.render(document()), mimetype="text/html")
