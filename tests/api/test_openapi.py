"""/openapi.json and /docs: the API's self-description.

Covers: the document is valid OpenAPI 3.0 (schemathesis' meta-schema validation) and every
``$ref`` resolves; every route of the app is documented (nothing is served that the document does
not name) and every documented path exists; path variables become path parameters; the marshmallow
schemas of the resources are components; in the local mode no security is documented; in the login
mode bearer and session-cookie security schemes apply to every operation but the open ones (probes,
login and logout, the identity provider's redirect and callback), which document ``security: []``,
and each secured operation documents 401; /docs lists every operation, rendered server-side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import schemathesis
from flask import Flask

from backend.api import openapi
from backend.core.kinds.registry import SCHEMAS
from tests.identity.logins import Person

OPEN_OPERATIONS = {
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/login"),
    ("post", "/login"),
    ("post", "/logout"),
    ("get", "/login/oidc"),
    ("get", "/login/oidc/callback"),
}


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in openapi.METHODS:
            if method in item:
                yield method, path, item[method]


def test_document_is_valid_and_complete(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    response = app.test_client().get("/openapi.json")
    assert response.status_code == 200
    doc = response.get_json()
    assert doc["openapi"] == "3.0.3"
    schemathesis.openapi.from_dict(doc).validate()
    for ref in set(refs(doc)):
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.rsplit("/", 1)[-1] in doc["components"]["schemas"], ref

    assert openapi.undocumented(app) == []
    served = {openapi.openapi_path(rule.rule)[0] for rule in app.url_map.iter_rules() if rule.endpoint != "static"}
    assert set(doc["paths"]) == served
    for name in (*SCHEMAS, "Problem", "Health", "Login", "WatchEvent"):
        assert name in doc["components"]["schemas"], name

    item = doc["paths"]["/darkrooms/{namespace}/{name}"]
    assert {(p["name"], p["in"], p["required"]) for p in item["parameters"]} == {("namespace", "path", True), ("name", "path", True)}
    for method, path, operation in operations(doc):
        assert operation["responses"], (method, path)
        assert "401" not in operation["responses"] or (method, path) in OPEN_OPERATIONS, (method, path)
    assert "securitySchemes" not in doc.get("components", {})
    assert "security" not in doc


def test_security_documented_in_the_login_mode(make_login_app: Callable[..., Flask], person: Person) -> None:
    doc = make_login_app().test_client().get("/openapi.json", headers=person.bearer).get_json()
    schemathesis.openapi.from_dict(doc).validate()
    assert doc["components"]["securitySchemes"] == {
        "bearerAuth": {"type": "http", "scheme": "bearer"},
        "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "darkroom_session"},
    }
    assert doc["security"] == [{"bearerAuth": []}, {"sessionCookie": []}]
    for method, path, operation in operations(doc):
        if (method, path) in OPEN_OPERATIONS:
            assert operation["security"] == [], (method, path)
            assert "401" not in operation["responses"] or path == "/login"
        else:
            assert "security" not in operation, (method, path)
            assert operation["responses"]["401"]["content"]["application/problem+json"]["schema"] == {
                "$ref": "#/components/schemas/Problem"
            }


def test_docs_page_lists_every_operation(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    doc = client.get("/openapi.json").get_json()
    page = client.get("/docs")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert 'href="/openapi.json"' in html
    assert "<script" not in html
    for method, path, _ in operations(doc):
        assert f'<span class="method method-{method}">{method.upper()}</span> <code class="path">{path}</code>' in html, (method, path)
    for name in doc["components"]["schemas"]:
        assert f'id="schema-{name}"' in html


def test_the_collections_document_every_query_parameter_they_take(make_app: Callable[..., Flask]) -> None:
    """What a list takes is what the document says (backend/api/parameters.py refuses anything else): the selectors,
    ``q``, ``sort`` with the kind's own keys, paging; ``fieldSelector`` names the fields kube supports for the kind."""
    doc = make_app().test_client().get("/openapi.json").get_json()
    listed = ["namespace", "labelSelector", "fieldSelector", "q", "sort", "limit", "continue"]
    for path in ("/darkrooms", "/tasks", "/postgresqls", "/combinedtasks"):
        parameters = {p["name"]: p for p in doc["paths"][path]["get"]["parameters"]}
        assert list(parameters) == listed, path
        assert all(p["in"] == "query" for p in parameters.values())
        assert "metadata.name" in parameters["fieldSelector"]["description"]
        assert {"name", "-name", "age", "-age", "state"} <= set(parameters["sort"]["schema"]["enum"])
        task_fields = "spec.taskState" in parameters["fieldSelector"]["description"]
        assert task_fields == (path in ("/tasks", "/combinedtasks")), path
        assert ("-priority" in parameters["sort"]["schema"]["enum"]) == task_fields, path
