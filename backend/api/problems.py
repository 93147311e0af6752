"""RFC 9457 problem details: the one error model of the API, and the one mapping onto it.

Every error response is ``application/problem+json`` with ``type``, ``title``, ``status``,
``detail`` and, for validation failures, ``errors``: a mapping of friendly field path (e.g.
``source.baseUrl``) to a list of messages. Views raise :class:`Problem` for what only HTTP knows (a bad
header, a wrong content type) and let the core's domain errors (:mod:`backend.core.errors`) and the API
server's (:mod:`cluster.errors`) propagate: :func:`problem_of` is the one mapping of each to a status and a
problem (404 not found, 409 conflict, 412 precondition failed with the current version as ``ETag``, 422 invalid
with ``errors``, 503 unavailable with ``Retry-After`` when known, ...). The handlers registered by
:func:`register` turn all of them into responses; the dashboard shows the same mapping inline. A request no view took
(an unknown URL, a method the URL does not take) is answered by the presenter the dashboard installs
(:func:`present_routing_errors`): its HTML error page for a browser, problem+json for everyone else. Nothing here ever
echoes secrets: callers pass messages that are safe to show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from flask import Flask, Response, current_app, request
from flask.sansio.app import App
from werkzeug.exceptions import HTTPException

from backend.core import errors
from cluster import ClusterError, Forbidden

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


def refusal(error: Forbidden) -> Problem:
    """A refusal of a request made for a person (:class:`cluster.acting.ActingClient` marks them): 403 naming who was
    refused what — verb, group, resource, namespace, name — or 401 when their credentials were no longer accepted."""
    if error.status == 401:
        return Problem(
            401,
            "the cluster no longer accepts your credentials (expired or revoked): log in again",
            headers={"WWW-Authenticate": 'Bearer realm="darkroom-control-panel", error="invalid_token"'},
        )
    attributes = error.attributes
    if attributes is None:
        return Problem(403, f"the cluster refused this request for {error.user}: {error.message}", extra={"user": error.user})
    return Problem(403, f"{attributes.refused()} (as {error.user})", extra={"user": error.user, **attributes.fields()})


def from_cluster_error(error: ClusterError) -> Problem:
    """Map an API server error to the status a client of ours should see (never 500 for its mistakes)."""
    status = error.status
    if not status or status >= 500:
        return Problem(503, f"the cluster is unavailable: {error.message}")
    if isinstance(error, Forbidden) and error.user is not None:
        return refusal(error)
    if status in (401, 403):
        # Our own credentials were refused: that is our problem, not the caller's.
        return Problem(503, f"the cluster refused the control panel's credentials: {error.message}")
    if status == 410:
        return Problem(410, error.message)
    return Problem(status, error.message)


# The status of each domain error (a subclass not listed here takes its nearest listed base's).
STATUSES: dict[type[errors.Failure], int] = {
    errors.BadRequest: 400,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.PreconditionFailed: 412,
    errors.Invalid: 422,
    errors.Unavailable: 503,
}


def from_failure(failure: errors.Failure) -> Problem:
    """The problem a domain error of the core means for a client: its status, its detail, and what it carries
    (``errors`` of an Invalid or of a Conflict that names its fields, the current version as ``ETag`` of a stale
    write, ``Retry-After`` when known)."""
    status = next((STATUSES[cls] for cls in type(failure).__mro__ if cls in STATUSES), 500)
    headers = {}
    if isinstance(failure, errors.Conflict | errors.PreconditionFailed) and failure.version is not None:
        headers["ETag"] = f'"{failure.version}"'
    if isinstance(failure, errors.Unavailable) and failure.retry_after_s is not None:
        headers["Retry-After"] = str(failure.retry_after_s)
    fields = failure.errors if isinstance(failure, errors.Invalid | errors.Conflict) else None
    return Problem(status, failure.detail, errors=fields, headers=headers)


def problem_of(error: errors.Failure | ClusterError | Problem) -> Problem:
    """What any failure of a request means for the client: a domain error, an API server error or a problem as it is."""
    if isinstance(error, errors.Failure):
        return from_failure(error)
    if isinstance(error, ClusterError):
        return from_cluster_error(error)
    return error


# Renders the answer to a request no view took for whoever asked (the dashboard's HTML page for a browser), or None.
Presenter = Callable[[Problem], Response | None]
PRESENTER = "problems.presenter"


def present_routing_errors(app: App, presenter: Presenter) -> None:
    """Let ``presenter`` answer requests no view took (:func:`routing_answer`): the dashboard's error page for a browser."""
    app.extensions[PRESENTER] = presenter


def routing_answer(problem: Problem) -> Response:
    """The answer to a Werkzeug error: for a request no view took — a URL nothing serves (404), a method the URL does
    not take (405) — what the app's presenter renders for the one who asked (a browser gets a page, never raw JSON);
    problem+json otherwise (and always for a view's own errors: the JSON API answers JSON)."""
    presenter: Presenter | None = current_app.extensions.get(PRESENTER)
    page = presenter(problem) if presenter is not None and request.url_rule is None else None
    return page if page is not None else problem.response()


def register(app: Flask) -> None:
    """Install handlers so every error, ours, the core's, the cluster's or Werkzeug's, is problem+json (a request no
    view took: see :func:`routing_answer`)."""

    @app.errorhandler(Problem)
    def _problem(error: Problem) -> Response:
        return error.response()

    @app.errorhandler(errors.Failure)
    def _failure(error: errors.Failure) -> Response:
        return from_failure(error).response()

    @app.errorhandler(ClusterError)
    def _cluster(error: ClusterError) -> Response:
        return from_cluster_error(error).response()

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> Response:
        status = error.code or 500
        headers = {}
        if status == 405 and error.get_response().headers.get("Allow"):
            headers["Allow"] = error.get_response().headers["Allow"]
        return routing_answer(Problem(status, error.description, headers=headers))
