"""The resource routes document themselves: every method of every route of the darkrooms, tasks,
combinedtasks and namespaces blueprints has an OpenAPI operation in its view docstring, every schema
it names is in ``backend.core.kinds.registry.SCHEMAS``, write operations list their problem responses, and the
document served at ``/openapi.json`` carries them.
"""

from __future__ import annotations

from typing import Any

from apispec.yaml_utils import load_operations_from_docstring
from flask import Flask
from flask.testing import FlaskClient

from backend.core.kinds.registry import SCHEMAS

BLUEPRINTS = ("darkrooms", "tasks", "combinedtasks", "namespaces")


def refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if "$ref" in node else set()
        return found.union(*(refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(refs(v) for v in node))
    return set()


def operations(app: Flask) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for rule in app.url_map.iter_rules():
        if rule.endpoint.split(".")[0] not in BLUEPRINTS:
            continue
        documented = load_operations_from_docstring(app.view_functions[rule.endpoint].__doc__ or "")
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            assert method.lower() in documented, f"{method} {rule.rule} has no documented operation"
            found[(method, rule.rule)] = documented[method.lower()]
    return found


def test_every_resource_route_is_documented_with_known_schemas(app: Flask) -> None:
    documented = operations(app)
    assert len(documented) == 2 * 6 + 2 + 1
    for (method, rule), operation in documented.items():
        assert operation["summary"], (method, rule)
        assert refs(operation) <= set(SCHEMAS), (method, rule, refs(operation) - set(SCHEMAS))
        statuses = set(operation["responses"])
        assert "503" in statuses
        if method in ("POST", "PUT", "PATCH"):
            assert {"400", "413", "415", "422"} <= statuses, (method, rule)
        if method in ("PUT", "PATCH", "DELETE"):
            assert {"404", "409", "412"} <= statuses, (method, rule)


def test_the_served_document_has_the_resource_operations(http: FlaskClient) -> None:
    document = http.get("/openapi.json").get_json()
    assert set(SCHEMAS) <= set(document["components"]["schemas"])
    item = document["paths"]["/darkrooms/{namespace}/{name}"]
    assert set(item) >= {"get", "put", "patch", "delete"}
    assert set(item["patch"]["requestBody"]["content"]) == {"application/merge-patch+json", "application/json"}
    assert document["components"]["schemas"]["DarkroomCreate"]["additionalProperties"] is False
