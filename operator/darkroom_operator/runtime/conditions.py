"""Status conditions (``metav1.Condition``): build, set and compare them, keeping lastTransitionTime honest.

Called by :mod:`darkroom_operator.darkrooms` and :mod:`darkroom_operator.postgresqls` (``Ready``,
``Reconciled``, and the Events their transitions deserve: :func:`transition_events`) and
:mod:`darkroom_operator.tasks` (``Overdue``). Conditions are plain dicts in the shape the CRDs
declare: ``type``, ``status`` ("True"/"False"/"Unknown"), ``reason`` (CamelCase), ``message``,
``observedGeneration`` and ``lastTransitionTime``. The transition time changes only when the
status does — a new reason or message alone keeps it (the Kubernetes API conventions, and
``meta.SetStatusCondition`` in apimachinery).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

# Fields whose change is worth a status write (lastTransitionTime follows from ``status``).
_COMPARED = ("status", "reason", "message", "observedGeneration")


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with second precision (``metav1.Time``'s wire form): ``2027-03-31T17:00:00Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(type_: str, status: bool | str, reason: str, message: str, *, observed_generation: int | None) -> dict[str, Any]:
    """A condition without ``lastTransitionTime`` (:func:`set_condition` supplies it). ``status`` may be a bool."""
    if isinstance(status, bool):
        status = TRUE if status else FALSE
    if status not in (TRUE, FALSE, UNKNOWN):
        raise ValueError(f"condition status must be True, False or Unknown, not {status!r}")
    result: dict[str, Any] = {"type": type_, "status": status, "reason": reason, "message": message}
    if observed_generation is not None:
        result["observedGeneration"] = observed_generation
    return result


def find(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions or () if c.get("type") == type_), None)


def set_condition(conditions: Sequence[Mapping[str, Any]] | None, new: Mapping[str, Any], *, now: datetime) -> list[dict[str, Any]]:
    """A new list with ``new`` replacing the condition of its type (or appended; other types kept in place).

    ``lastTransitionTime`` is kept from the existing condition when ``status`` is unchanged,
    otherwise it is ``now``.
    """
    old = find(conditions, new["type"])
    updated = {k: v for k, v in new.items() if k != "lastTransitionTime"}
    if old is not None and old.get("status") == new["status"] and old.get("lastTransitionTime"):
        updated["lastTransitionTime"] = old["lastTransitionTime"]
    else:
        updated["lastTransitionTime"] = timestamp(now)
    result = [dict(c) for c in conditions or () if c.get("type") != new["type"]]
    position = next((i for i, c in enumerate(conditions or ()) if c.get("type") == new["type"]), len(result))
    result.insert(position, updated)
    return result


def same(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether ``old`` already says what ``new`` says (status, reason, message, observedGeneration)."""
    return old is not None and all(old.get(k) == new.get(k) for k in _COMPARED)


def transitioned(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether ``new`` changes the status of ``old`` (absent counts as Unknown)."""
    status: object = new["status"]
    return (old.get("status") if old else UNKNOWN) != status


def newly_failed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a failed Reconciled condition deserves a Warning event: a new failure, a different kind of
    failure, or a new spec generation that still fails differently. Retries of the same failure
    (whose API error text may vary) do not repeat it."""
    if old is None or transitioned(old, new) or old.get("reason") != new["reason"]:
        return True
    return old.get("observedGeneration") != new.get("observedGeneration") and old.get("message") != new["message"]


def transition_events(
    old_ready: Mapping[str, Any] | None, ready: Mapping[str, Any], old_reconciled: Mapping[str, Any] | None, reconciled: Mapping[str, Any]
) -> list[tuple[str, str, str]]:
    """The Events (type, reason, message) a change of ``Ready``/``Reconciled`` deserves.

    A Warning when Reconciled turns False (or fails anew, :func:`newly_failed`), a Normal
    ``Reconciled`` when it recovers, Normal ``Ready``/``NotReady`` when Ready flips.
    """
    events: list[tuple[str, str, str]] = []
    if reconciled["status"] == FALSE and newly_failed(old_reconciled, reconciled):
        events.append(("Warning", reconciled["reason"], reconciled["message"]))
    elif reconciled["status"] == TRUE and old_reconciled is not None and old_reconciled.get("status") == FALSE:
        events.append(("Normal", "Reconciled", reconciled["message"]))
    if ready["status"] == TRUE and transitioned(old_ready, ready):
        events.append(("Normal", "Ready", ready["message"]))
    elif old_ready is not None and old_ready.get("status") == TRUE and ready["status"] != TRUE:
        events.append(("Normal", "NotReady", ready["message"]))
    return events
