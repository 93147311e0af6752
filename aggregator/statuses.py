"""Errors as ``metav1.Status`` bodies: the one exception every handler raises, and how it is encoded.

:class:`ApiError` carries the HTTP code, ``reason`` and message kube-apiserver would give for the same
request; the app's error middleware (:mod:`aggregator.app`) turns it (and any unexpected exception,
as a 500 InternalError without its details) into a Status response. Watch streams put the same body in
an ``ERROR`` event.
"""

from __future__ import annotations

from typing import Any

from aggregator import resources


class ApiError(Exception):
    """A request that fails with a ``metav1.Status`` of ``code`` and ``reason``."""

    def __init__(self, code: int, reason: str, message: str, *, details: dict[str, Any] | None = None, continue_token: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.continue_token = continue_token
        self.headers: dict[str, str] = {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"continue": self.continue_token} if self.continue_token else {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid_list_options(causes: list[tuple[str, str, str]]) -> ApiError:
    """422 as kube's ListOptions validation answers: ``(field, reason, message)`` causes."""
    text = ", ".join(f"{field}: {message}" for field, _, message in causes)
    return ApiError(
        422,
        "Invalid",
        f'ListOptions.meta.k8s.io "" is invalid: {text}' if len(causes) == 1 else f'ListOptions.meta.k8s.io "" is invalid: [{text}]',
        details={
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [{"reason": reason, "message": message, "field": field} for field, reason, message in causes],
        },
    )


def not_found(name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{resources.PLURAL}.{resources.GROUP} "{name}" not found',
        details={"name": name, "group": resources.GROUP, "kind": resources.PLURAL},
    )


def no_route() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", details={})


def not_acceptable(accept: str) -> ApiError:
    return ApiError(406, "NotAcceptable", f"the server was unable to respond with a content type that the client supports ({accept})")


def expired(message: str, *, continue_token: str = "") -> ApiError:
    return ApiError(410, "Expired", message, continue_token=continue_token)


def too_large_resource_version(requested: int, current: int) -> ApiError:
    """What kube's watch cache answers a read at a resourceVersion it did not reach in time (504, retry after 1 s)."""
    error = ApiError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1},
    )
    error.headers["Retry-After"] = "1"
    return error


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(user: str, verb: str, what: str, scope: str, reason: str) -> ApiError:
    """403 with kube's wording: ``User "alice" cannot list resource "combinedtasks" in API group "..." in the namespace "x"``."""
    subject = "forbidden" if what == "forbidden" else f"{what} is forbidden"
    message = f'{subject}: User "{user}" cannot {verb} {scope}'
    if reason:
        message += f": {reason}"
    return ApiError(403, "Forbidden", message, details={"group": resources.GROUP, "kind": resources.PLURAL})


def unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def internal() -> ApiError:
    return ApiError(500, "InternalError", "Internal error occurred: the aggregated API server failed to answer; see its log")
