"""OpenAPI operation docstrings of the generated resource views, built from data so every kind says the same.

:func:`document` gives a view its apispec-style docstring (summary line, ``---``, YAML keyed by the
HTTP method; :func:`document_methods` for a view of several methods, such as a ``MethodView``) — the form
:mod:`backend.api.openapi` reads from each view in ``app.url_map``. Schema
names refer to ``backend.core.kinds.registry.SCHEMAS``. Called by :mod:`backend.api.endpoints`,
:mod:`backend.api.combinedtasks` and :mod:`backend.api.namespaces` when they build their views.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import yaml

from backend.api.problems import PROBLEM_JSON
from backend.core.kinds.base import Kind

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"

View = TypeVar("View", bound=Callable[..., Any])

PROBLEMS = {
    400: (
        "Malformed request: invalid JSON, JSON nested too deep, empty body, a bad query parameter (limit, continue token, label"
        " or field selector, sort, dryRun) — `errors` names it —, or a query parameter the operation does not take (`errors`:"
        " `unknown query parameter`)."
    ),
    404: "No such object.",
    409: (
        "Conflict: the name is taken (POST), the object changed since the body's resourceVersion (PUT/PATCH) or during the delete, "
        "or a field clashes with another object (a sub-domain another Darkroom holds, a password for a Postgresql whose data "
        "volume was kept): `errors` then maps each clashing friendly field path to what it clashes with. Beside field errors, "
        "such a clash is one more entry of the 422's `errors`."
    ),
    412: "If-Match names a version that is no longer current.",
    413: "The body is larger than the configured maximum.",
    415: "Wrong Content-Type.",
    422: "Validation failed: `errors` maps each friendly field path (e.g. `source.baseUrl`, `subDomains.1`) to messages.",
    503: "The cluster is unavailable or the cache has not caught up.",
}


def ref(schema: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{schema}"}


def problems(*statuses: int) -> dict[str, Any]:
    return {str(s): {"description": PROBLEMS[s], "content": {PROBLEM_JSON: {"schema": ref("Problem")}}} for s in statuses}


def json_response(schema: str, description: str, *, etag: bool = False, location: bool = False) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description, "content": {JSON: {"schema": ref(schema)}}}
    headers = {}
    if etag:
        headers["ETag"] = {"description": "The object's resourceVersion (strong, quoted).", "schema": {"type": "string"}}
    if location:
        headers["Location"] = {"description": "URL of the new object.", "schema": {"type": "string"}}
    if headers:
        response["headers"] = headers
    return response


def path_parameters(title: str) -> list[dict[str, Any]]:
    return [
        {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}, "description": f"Namespace of the {title}."},
        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}, "description": f"Name of the {title}."},
    ]


IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": 'Only act if the object\'s ETag (quoted resourceVersion, e.g. "42") is one of these; 412 otherwise.',
}

DRY_RUN = {
    "name": "dryRun",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": ["All"]},
    "description": "`All`: run every check (the API server's too) and answer what would be stored; store nothing.",
}


def list_parameters(kind: Kind, page_size_max: int = 1000) -> list[dict[str, Any]]:
    """The query parameters of a collection of ``kind`` (:func:`backend.api.queries.list_query` reads them)."""
    fields = ", ".join(f"`{field}`" for field in kind.selectable_fields)
    keys = list(kind.sorts)
    return [
        {"name": "namespace", "in": "query", "schema": {"type": "string"}, "description": "Only this namespace (default: all)."},
        {
            "name": "labelSelector",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Kubernetes label selector, e.g. `tier=web,env in (a,b)`.",
        },
        {
            "name": "fieldSelector",
            "in": "query",
            "schema": {"type": "string"},
            "description": (
                f"Kubernetes field selector over the fields kube supports for a {kind.title}: {fields}. Operators `=`, `==`, `!=`;"
                " terms joined by `,` must all hold (e.g. `metadata.name!=a,metadata.namespace=team-a`). Another field is a 400"
                ' naming it ("field label not supported").'
            ),
        },
        {
            "name": "q",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Only names containing this text (as the dashboard's filter).",
        },
        {
            "name": "sort",
            "in": "query",
            "schema": {"type": "string", "enum": [*keys, *(f"-{key}" for key in keys)]},
            "description": (
                "Order by this key (`-key`: descending), as the dashboard's columns; ties, and no `sort`, keep namespace then"
                " name. `age` ascending is youngest first. A `continue` token belongs to the order it was issued for."
            ),
        },
        {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": page_size_max},
            "description": "Page size (default: everything in one page).",
        },
        {"name": "continue", "in": "query", "schema": {"type": "string"}, "description": "Token from the previous page's `continue`."},
    ]


def request_body(schema: str, *, content_type: str | tuple[str, ...] = JSON) -> dict[str, Any]:
    types = (content_type,) if isinstance(content_type, str) else content_type
    return {"required": True, "content": {t: {"schema": ref(schema)} for t in types}}


def document(view: View, method: str, summary: str, operation: Mapping[str, Any]) -> View:
    """Set ``view.__doc__`` to ``summary`` + ``---`` + ``{method: operation}`` in YAML; returns the view."""
    return document_methods(view, {method: (summary, operation)})


def document_methods(view: View, operations: Mapping[str, tuple[str, Mapping[str, Any]]]) -> View:
    """Set ``view.__doc__`` to the summaries + ``---`` + ``{method: operation}`` of every method in YAML, in the
    order given (the order of the OpenAPI document's operations); returns the view."""
    summaries = "; ".join(summary for summary, _ in operations.values())
    # One YAML mapping per method, concatenated: an object shared by two operations (IF_MATCH) stays two copies, as
    # when each method had a view of its own (one dump of them all would alias them).
    view.__doc__ = f"{summaries}\n---\n" + "".join(
        yaml.safe_dump({method.lower(): {"summary": summary, **operation}}, sort_keys=False, allow_unicode=True)
        for method, (summary, operation) in operations.items()
    )
    return view
