"""Our small error tree for cluster access, and the one place API/transport failures map into it.

:mod:`cluster.requesting` wraps every failed request here (``raise from_status(...) from e``), so
callers — backend (problem+json) and operator (retry / no retry) — catch :class:`ClusterError`
subclasses and never see ``urllib3`` or ``kubernetes.client.ApiException``. The original error stays
chained as ``__cause__``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from cluster.attributes import ResourceAttributes


@dataclass(frozen=True)
class Cause:
    """One field-level reason of an :class:`Invalid` (``status.details.causes[]``)."""

    field: str
    reason: str
    message: str


class ClusterError(Exception):
    """A request to the API server failed. ``status`` is the HTTP code (0: no response)."""

    status: int = 0
    retryable: bool = False

    def __init__(self, message: str, *, status: int | None = None, reason: str = "", body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.reason = reason
        self.body = body or {}


class NotFound(ClusterError):
    status = 404


class AlreadyExists(ClusterError):
    status = 409


class Conflict(ClusterError):
    """A resourceVersion precondition failed or server-side apply hit a field conflict."""

    status = 409
    retryable = True


class Invalid(ClusterError):
    status = 422

    @property
    def causes(self) -> list[Cause]:
        details = self.body.get("details") or {}
        return [Cause(c.get("field", ""), c.get("reason", ""), c.get("message", "")) for c in details.get("causes") or []]


class Forbidden(ClusterError):
    """Refused. For a request made for a person (:class:`cluster.acting.ActingClient`) ``user`` names them and
    ``attributes`` says what they were refused; otherwise it was the process's own credentials."""

    status = 403
    user: str | None = None
    attributes: ResourceAttributes | None = None

    def made_for(self, user: str, attributes: ResourceAttributes | None) -> Forbidden:
        """This refusal, marked as one of ``user``'s (returns itself)."""
        self.user, self.attributes = user, attributes
        return self


class Unauthorized(Forbidden):
    status = 401


class Gone(ClusterError):
    """The resourceVersion or continue token is older than the server's history (410 Expired)."""

    status = 410


class Unavailable(ClusterError):
    """The server could not be reached or asked us to come back later (5xx, 429, transport errors)."""

    status = 503
    retryable = True


class BadRequest(ClusterError):
    status = 400


def _status_body(body: bytes) -> dict[str, Any]:
    try:
        parsed = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        return {"message": body[:500].decode("utf-8", "replace")}
    return parsed if isinstance(parsed, dict) else {}


def from_status(status: int, body: bytes | dict[str, Any], *, what: str) -> ClusterError:
    """The error for an HTTP error response (``body`` raw bytes or a parsed ``Status``)."""
    parsed = body if isinstance(body, dict) else _status_body(body)
    reason = str(parsed.get("reason", ""))
    message = str(parsed.get("message") or f"{what}: HTTP {status}")
    kind: type[ClusterError]
    if status == 404:
        kind = NotFound
    elif status == 409:
        kind = AlreadyExists if reason == "AlreadyExists" else Conflict
    elif status == 422:
        kind = Invalid
    elif status == 403:
        kind = Forbidden
    elif status == 401:
        kind = Unauthorized
    elif status == 410:
        kind = Gone
    elif status == 400:
        kind = BadRequest
    elif status == 429 or status >= 500:
        kind = Unavailable
    else:
        kind = ClusterError
    return kind(message, status=status, reason=reason, body=parsed)


def from_transport(error: BaseException, *, what: str) -> Unavailable:
    """The error for a request that got no (complete) response: refused, reset, timed out, TLS."""
    return Unavailable(f"{what}: {type(error).__name__}: {error}", status=0, reason="ServiceUnavailable")


def from_api_exception(error: Any, *, what: str) -> ClusterError:
    """The error for a ``kubernetes.client.ApiException`` (callers that used the official client)."""
    status = int(getattr(error, "status", 0) or 0)
    if status == 0:
        return from_transport(error, what=what)
    body = getattr(error, "body", b"") or b""
    return from_status(status, body.encode() if isinstance(body, str) else body, what=what)
