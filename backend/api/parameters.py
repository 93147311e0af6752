"""Query parameters are never silently ignored: a request to the API with one its operation does not take is a 400.

:func:`register` installs a before-request hook. The query parameters a request may carry are the ``in: query``
parameters of its view's OpenAPI operation for its method (HEAD: GET's) — the docstring YAML that
:mod:`backend.api.openapi` publishes —, so what the document says the API accepts and what it accepts cannot drift.
Any other is a 400 problem naming each in ``errors`` (``{"fieldSelector": ["unknown query parameter"]}``) and, in
``detail``, what the operation takes: a script whose filter is misspelled, or not supported, learns it before it acts on
"what matched" — never a list of everything.

Exempt are a browser's navigations: an operation that answers with an HTML page or a redirect (the dashboard's pages,
``/login``, ``/docs``), whose modules say what they do with a parameter they do not know (the dashboard's lists:
:mod:`backend.dashboard.browsing`); CORS preflights (OPTIONS); and requests no route took (their 404 or 405 comes
first).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from apispec.yaml_utils import load_operations_from_docstring
from flask import Flask, current_app, request

from backend.api.problems import Problem

UNKNOWN = "unknown query parameter"


def _browser_navigation(operation: Mapping[str, Any]) -> bool:
    """Whether an operation answers a browser's navigation: a success that is an HTML page, or a redirect."""
    for status, response in (operation.get("responses") or {}).items():
        code = str(status)
        if code.startswith("3") or (code.startswith("2") and "text/html" in ((response or {}).get("content") or {})):
            return True
    return False


def accepted(doc: str | None, method: str) -> tuple[str, ...] | None:
    """The query parameters the operation of ``method`` in a view's docstring takes; None when it is exempt (a
    browser's navigation, or no operation documented for ``method``)."""
    operations = load_operations_from_docstring(doc or "")
    operation = operations.get("get" if method == "head" else method)
    if not isinstance(operation, Mapping) or _browser_navigation(operation):
        return None
    return tuple(p["name"] for p in operation.get("parameters") or () if isinstance(p, Mapping) and p.get("in") == "query")


def register(app: Flask) -> None:
    """Refuse, before any view, the query parameters a request's operation does not take."""
    known: dict[tuple[str, str], tuple[str, ...] | None] = {}
    lock = threading.Lock()

    @app.before_request
    def _only_known_parameters() -> None:
        if request.method == "OPTIONS" or request.endpoint is None or request.routing_exception is not None:
            return
        key = (request.endpoint, request.method.lower())
        if key not in known:
            found = accepted(current_app.view_functions[request.endpoint].__doc__, key[1])
            with lock:
                known[key] = found
        taken = known[key]
        if taken is None:
            return
        unknown = [name for name in request.args if name not in taken]
        if unknown:
            names = ", ".join(f'"{name}"' for name in unknown)
            takes = f"it takes {', '.join(taken)}" if taken else "it takes none"
            raise Problem(400, f"unknown query parameter {names}: {takes}", errors={name: [UNKNOWN] for name in unknown})
