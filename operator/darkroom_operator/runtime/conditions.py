"""Status conditions (``metav1.Condition``): build, set and compare them, keeping lastTransitionTime honest.

Called by :mod:`darkroom_operator.darkrooms` and :mod:`darkroom_operator.postgresqls` (``Ready``,
``Reconciled``, and the Events their transitions deserve: :func:`transition_events`, which reads a kind's
``Ready`` reasons through :class:`ReadyReasons`) and
:mod:`darkroom_operator.tasks` (``Overdue``). Conditions are plain dicts in the shape the CRDs
declare: ``type``, ``status`` ("True"/"False"/"Unknown"), ``reason`` (CamelCase), ``message``,
``observedGeneration`` and ``lastTransitionTime``. The transition time changes only when the
status does — a new reason or message alone keeps it (the Kubernetes API conventions, and
``meta.SetStatusCondition`` in apimachinery).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ReadyReasons:
    """How to read a kind's ``Ready=False`` reasons for Events (the kind's :class:`kinds.states.Lifecycle` says it).

    ``steps``: a step on the way (a rollout, a pod starting) — no one needs to act; ``on_purpose``: a state the
    user asked for (scaled to zero). Every other reason is a failure someone must act on (a host another
    Darkroom holds, a missing password Secret, an unavailable Deployment)."""

    steps: frozenset[str] = frozenset()
    on_purpose: frozenset[str] = frozenset()


def _was_true(old: Mapping[str, Any] | None) -> bool:
    return old is not None and old.get("status") == TRUE


def _ready_event(old: Mapping[str, Any] | None, ready: Mapping[str, Any], reasons: ReadyReasons) -> tuple[str, str, str] | None:
    """The Event a change of ``Ready`` deserves (see :func:`transition_events`), or None."""
    if ready["status"] == TRUE:
        return ("Normal", "Ready", ready["message"]) if transitioned(old, ready) else None
    reason = str(ready.get("reason") or "")
    if reason in reasons.on_purpose:
        return ("Normal", reason, ready["message"]) if old is None or old.get("reason") != reason else None
    if reason in reasons.steps:
        if not _was_true(old):
            return None  # still on its way: starting, or another step of the same rollout
        assert old is not None
        if old.get("observedGeneration") != ready.get("observedGeneration"):
            return ("Normal", "Updating", f"rolling out generation {ready.get('observedGeneration')}: {ready['message']}")
        return ("Warning", "NotReady", ready["message"])
    return ("Warning", reason, ready["message"]) if newly_failed(old, ready) else None


def transition_events(
    old_ready: Mapping[str, Any] | None,
    ready: Mapping[str, Any],
    old_reconciled: Mapping[str, Any] | None,
    reconciled: Mapping[str, Any],
    *,
    reasons: ReadyReasons = ReadyReasons(),
) -> list[tuple[str, str, str]]:
    """The Events (type, reason, message) a change of ``Ready``/``Reconciled`` deserves — one per transition, never
    one per resync (an unchanged condition gives none).

    ``Reconciled``: a Warning with its reason when it turns False or fails anew (:func:`newly_failed`), a Normal
    ``Reconciled`` when it recovers. ``Ready``: a Normal ``Ready`` when it turns True; when it is False, by its
    reason (``reasons``): a failure someone must act on is a Warning named by that reason (``HostConflict``,
    ``PasswordSecretMissing``), once per failure as for Reconciled — also when the object was never Ready; losing
    readiness for a step reason is a Warning ``NotReady`` (pods became unavailable), except the rollout of a new
    generation, which the user asked for (a Normal ``Updating``; a rollout that fails says so by its own failure);
    a state the user asked for (``ScaledToZero``) is a Normal Event named by its reason.
    """
    events: list[tuple[str, str, str]] = []
    if reconciled["status"] == FALSE and newly_failed(old_reconciled, reconciled):
        events.append(("Warning", reconciled["reason"], reconciled["message"]))
    elif reconciled["status"] == TRUE and old_reconciled is not None and old_reconciled.get("status") == FALSE:
        events.append(("Normal", "Reconciled", reconciled["message"]))
    ready_event = _ready_event(old_ready, ready, reasons)
    if ready_event is not None:
        events.append(ready_event)
    return events
