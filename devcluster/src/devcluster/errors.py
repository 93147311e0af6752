"""The API errors devcluster returns, shaped as kube-apiserver's ``metav1.Status``.

Every failure a request can meet is raised as :class:`StatusError` and rendered by the HTTP layer
(``serving/``) as a Status body with the real ``code`` and ``reason``. Validation code reports
problems as :class:`Cause` lists (``field`` + ``reason`` + ``message``, like apimachinery's
``field.Error``) and the caller turns them into one 422 Invalid with :func:`invalid`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass(frozen=True)
class Cause:
    """One field problem, as in ``metav1.StatusCause``; ``message`` excludes the field path."""

    field: str
    reason: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def _render(value: Any) -> str:
    """Render a value inside an error message the way apimachinery's field errors do."""
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


def required(path: str, detail: str = "") -> Cause:
    return Cause(path, "FieldValueRequired", "Required value" + (f": {detail}" if detail else ""))


def invalid_value(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, "FieldValueInvalid", f"Invalid value: {_render(value)}: {detail}")


def not_supported(path: str, value: Any, supported: list[Any]) -> Cause:
    choices = ", ".join(_render(v) for v in supported)
    return Cause(path, "FieldValueNotSupported", f"Unsupported value: {_render(value)}: supported values: {choices}")


def duplicate(path: str, value: Any) -> Cause:
    return Cause(path, "FieldValueDuplicate", f"Duplicate value: {_render(value)}")


def too_long(path: str, limit: int) -> Cause:
    return Cause(path, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes")


def too_many(path: str, actual: int, limit: int) -> Cause:
    return Cause(path, "FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items")


def forbidden(path: str, detail: str) -> Cause:
    return Cause(path, "FieldValueForbidden", f"Forbidden: {detail}")


def type_invalid(path: str, value: Any, expected: str) -> Cause:
    return Cause(
        path,
        "FieldValueTypeInvalid",
        f"Invalid value: {_render(value)}: {path} in body must be of type {expected}: {_render(type_name(value))}",
    )


def type_name(value: Any) -> str:
    """The JSON type name apimachinery prints for ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


@dataclass
class StatusError(Exception):
    """An API error; ``body()`` is the ``metav1.Status`` kube-apiserver would send."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    list_meta: dict[str, Any] = field(default_factory=dict)  # Status.metadata (e.g. a fresh continue token)
    # kube's generic responses (NewGenericServerResponse) carry an empty ``"details": {}``
    empty_details: bool = False

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        # metav1.Status's field order (kube serialises the Go struct in declaration order).
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # an internal error kube did not classify has no reason
            status["reason"] = self.reason
        if self.details or self.empty_details:
            status["details"] = self.details
        status["code"] = self.code
        return status


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}  # metav1.StatusDetails: name is omitempty
    if group:
        details["group"] = group
    details["kind"] = kind
    return details


def not_found(resource: str, group: str, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{_qualified(resource, group)} "{name}" not found', _details(name, group, resource))


def already_exists(resource: str, group: str, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{_qualified(resource, group)} "{name}" already exists', _details(name, group, resource))


def conflict(resource: str, group: str, name: str, detail: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {detail}',
        _details(name, group, resource),
    )


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(kind: str, group: str, name: str, causes: list[Cause]) -> StatusError:
    """422 Invalid for ``causes`` (non-empty), message formatted as kube-apiserver formats it."""
    rendered = [str(c) for c in causes]
    summary = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    details = _details(name, group, kind)
    details["causes"] = [c.as_dict() for c in causes]
    return StatusError(422, "Invalid", f'{_qualified(kind, group)} "{name}" is invalid: {summary}', details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden_error(resource: str, group: str, name: str, detail: str) -> StatusError:
    return StatusError(403, "Forbidden", f'{_qualified(resource, group)} "{name}" is forbidden: {detail}', _details(name, group, resource))


def method_not_allowed() -> StatusError:
    """The router's 405 (no verb of the resource matches the method)."""
    return StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", empty_details=True)


def not_found_route() -> StatusError:
    """The API group version exists but nothing under it matches the path."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", empty_details=True)


def internal(message: str) -> StatusError:
    """A plain Go error surfacing from a handler: 500 with no reason."""
    return StatusError(500, "", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def unsupported_media_type(content_type: str, accepted: list[str]) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
    )


def not_acceptable(accepted: list[str]) -> StatusError:
    return StatusError(406, "NotAcceptable", f"406: Not Acceptable\n\nAvailable representations: {', '.join(accepted)}", empty_details=True)


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def request_entity_too_large(limit: int) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")
