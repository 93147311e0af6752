"""The core's refusals: a small tree of domain errors, each carrying a message that is safe to show.

Raised by the kind services (:mod:`backend.core.services`), the writes (:mod:`backend.core.writing`), the
kinds (:mod:`backend.core.kinds`), validation (:mod:`backend.core.validation`) and paging
(:mod:`backend.core.listing`) in place of anything HTTP. The JSON API maps each to one status and a
problem+json answer (:func:`backend.api.problems.problem_of`, the one mapping, installed as error handlers
so views let them propagate); the dashboard shows them inline through the same mapping. Errors of the API
server that the core does not interpret (:mod:`cluster.errors`) propagate as they are. Callers pass
messages that quote no submitted value and no secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class Failure(Exception):
    """Something the core refused or could not do; ``detail`` says what, safe to show."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(Failure):
    """The request itself is malformed where no field is to blame (a continue token this API did not issue)."""


class Forbidden(Failure):
    """The caller may not do this."""


class NotFound(Failure):
    """No such object (or one in a namespace this API does not serve)."""


class Conflict(Failure):
    """The object is not in a state that allows this: a name taken, a stale version, a write that kept racing, a
    field that clashes with another object (a sub-domain another Darkroom holds).

    ``version``: the current resourceVersion, when the conflict is with a version the caller named. ``errors``: the
    friendly field paths that clash, with what each clashes with (empty when no field is to blame), so a form
    shows the conflict at its field.
    """

    def __init__(self, detail: str, *, version: str | None = None, errors: Mapping[str, Sequence[str]] | None = None) -> None:
        super().__init__(detail)
        self.version = version
        self.errors = {path: list(messages) for path, messages in (errors or {}).items()}


class PreconditionFailed(Failure):
    """The caller's precondition (the versions it accepts) does not hold; ``version`` is the current one."""

    def __init__(self, detail: str, *, version: str) -> None:
        super().__init__(detail)
        self.version = version


class Invalid(Failure):
    """A body that cannot be stored: ``errors`` maps friendly field paths (``source.baseUrl``; ``$`` for the body
    as a whole) to messages, every problem at once."""

    def __init__(self, errors: Mapping[str, Sequence[str]], detail: str | None = None) -> None:
        super().__init__(detail or f"invalid fields: {', '.join(sorted(errors))}")
        self.errors = {path: list(messages) for path, messages in errors.items()}


class Unavailable(Failure):
    """Not now: the cluster or the cache cannot answer; ``retry_after_s`` says when to try again, if known."""

    def __init__(self, detail: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s
