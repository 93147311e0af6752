"""RFC 9457 problem details: the one error model of the API.

Every error response is ``application/problem+json`` with ``type``, ``title``, ``status``,
``detail`` and, for validation failures, ``errors``: a mapping of friendly field path (e.g.
``source.baseUrl``) to a list of messages. Views raise :class:`Problem` (or let
:mod:`cluster.errors` exceptions propagate: :func:`from_cluster_error` maps them); the handlers
registered by :func:`register` turn them into responses. Nothing here ever echoes secrets: callers
pass messages that are safe to show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from cluster import ClusterError

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://darkroom-control-panel.example.com/problems/"

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    410: "Gone",
    412: "Precondition Failed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    428: "Precondition Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Problem(Exception):
    """Raise from a view to answer with a problem+json response."""

    def __init__(
        self,
        status: int,
        detail: str | None = None,
        *,
        title: str | None = None,
        type_: str | None = None,
        errors: Mapping[str, Sequence[str]] | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail or title or TITLES.get(status, "Error"))
        self.status = status
        self.detail = detail
        self.title = title or TITLES.get(status, "Error")
        self.type = type_ or TYPE_BASE + self.title.lower().replace(" ", "-")
        self.errors = {k: list(v) for k, v in (errors or {}).items()}
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type, "title": self.title, "status": self.status}
        if self.detail:
            body["detail"] = self.detail
        if self.errors:
            body["errors"] = self.errors
        body["instance"] = request.path if request else None
        body.update(self.extra)
        return {k: v for k, v in body.items() if v is not None}

    def response(self) -> Response:
        response = Response(orjson.dumps(self.to_dict()), status=self.status, mimetype=PROBLEM_JSON)
        for name, value in self.headers.items():
            response.headers[name] = value
        return response


def from_cluster_error(error: ClusterError) -> Problem:
    """Map an API server error to the status a client of ours should see (never 500 for its mistakes)."""
    status = error.status
    if not status or status >= 500:
        return Problem(503, f"the cluster is unavailable: {error.message}")
    if status in (401, 403):
        # Our own credentials were refused: that is our problem, not the caller's.
        return Problem(503, f"the cluster refused the control panel's credentials: {error.message}")
    if status == 410:
        return Problem(410, error.message)
    return Problem(status, error.message)


def register(app: Flask) -> None:
    """Install handlers so every error, ours or Werkzeug's, is problem+json."""

    @app.errorhandler(Problem)
    def _problem(error: Problem) -> Response:
        return error.response()

    @app.errorhandler(ClusterError)
    def _cluster(error: ClusterError) -> Response:
        return from_cluster_error(error).response()

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> Response:
        status = error.code or 500
        headers = {}
        if status == 405 and error.get_response().headers.get("Allow"):
            headers["Allow"] = error.get_response().headers["Allow"]
        return Problem(status, error.description, headers=headers).response()
