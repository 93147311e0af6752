"""What an object's state and its conditions *mean*, independent of any kind (pure types).

A kind module (:mod:`kinds.darkrooms`, :mod:`kinds.tasks`) computes a :class:`State` from a stored
object; the dashboard shows its ``word`` in a badge coloured by its ``tone`` and the API returns its
``key``. Conditions are coloured by the same tones through :class:`ConditionMeaning`, so a condition
table and a state badge never disagree (``Overdue=False`` is good news, ``Ready=False`` because a
rollout is under way is progress, not failure).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Tone = Literal["good", "progress", "idle", "attention", "bad"]
"""good: working as asked; progress: on its way there; idle: stopped on purpose (scaled to zero,
being deleted); attention: needs a look but is not broken; bad: failed, needs someone to act."""

TONES: tuple[Tone, ...] = ("good", "progress", "idle", "attention", "bad")


@dataclass(frozen=True)
class State:
    """One state of an object: ``key`` for machines (API, ``data-state``), ``word`` for people."""

    key: str
    word: str
    tone: Tone
    detail: str = ""  # why, in a sentence (a condition message), or empty

    def because(self, detail: str) -> State:
        return State(self.key, self.word, self.tone, detail)


@dataclass(frozen=True)
class ConditionMeaning:
    """How to read one condition type: which status is good news, and the tone of each reason otherwise."""

    type: str
    good_status: Literal["True", "False"] = "True"
    reason_tones: Mapping[str, Tone] = field(default_factory=dict)
    otherwise: Tone = "bad"  # the tone of the other status when its reason is not in ``reason_tones``

    def tone(self, status: str | None, reason: str | None) -> Tone:
        if status == self.good_status:
            return "good"
        if status not in ("True", "False"):
            return "idle"
        return self.reason_tones.get(reason or "", self.otherwise)


def find_condition(obj: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    """The condition ``type_`` of a stored object's status, or None."""
    for item in (obj.get("status") or {}).get("conditions") or ():
        if isinstance(item, Mapping) and item.get("type") == type_:
            return item
    return None


def is_current(obj: Mapping[str, Any], condition: Mapping[str, Any]) -> bool:
    """Whether ``condition`` was set for the object's current generation (no observedGeneration: assumed so)."""
    status = obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation")
    observed = condition.get("observedGeneration", status.get("observedGeneration", generation))
    return generation is None or observed is None or int(observed) >= int(generation)


def terminating(obj: Mapping[str, Any]) -> bool:
    return (obj.get("metadata") or {}).get("deletionTimestamp") is not None


def awaiting_reconciler(obj: Mapping[str, Any]) -> bool:
    """Whether the reconciler has not yet observed the object's latest generation."""
    generation = (obj.get("metadata") or {}).get("generation")
    observed = (obj.get("status") or {}).get("observedGeneration")
    return generation is not None and (observed is None or int(observed) < int(generation))


@dataclass(frozen=True)
class Lifecycle:
    """How a reconciled kind's state follows from its ``Ready`` and ``Reconciled`` conditions — the one rule.

    In order: being deleted (``terminating``); not yet seen by the reconciler at its current
    generation (``reconciling``); a failed reconcile, ``Reconciled=False`` (``failed``, saying why);
    then ``Ready``: True is ``ready``; False for one of ``starting_reasons`` (a step on the way) or no
    current Ready yet is ``starting``; a reason in ``by_reason`` has a state of its own (Scaled to 0);
    any other False is ``failed``.
    """

    ready: State
    starting: State
    reconciling: State
    terminating: State
    failed: State
    starting_reasons: frozenset[str]
    by_reason: Mapping[str, State] = field(default_factory=dict)
    terminating_detail: str = "deletion requested; waiting for finalizers"
    ready_type: str = "Ready"
    reconciled_type: str = "Reconciled"

    @property
    def states(self) -> tuple[State, ...]:
        return (self.ready, self.starting, self.reconciling, *self.by_reason.values(), self.terminating, self.failed)

    def condition_meanings(self) -> dict[str, ConditionMeaning]:
        """The tones of the two conditions, consistent with the states (a starting reason is progress, ...)."""
        tones: dict[str, Tone] = {**dict.fromkeys(self.starting_reasons, self.starting.tone)}
        tones.update({reason: state.tone for reason, state in self.by_reason.items()})
        return {
            self.ready_type: ConditionMeaning(self.ready_type, reason_tones=tones),
            self.reconciled_type: ConditionMeaning(self.reconciled_type),
        }

    def state(self, obj: Mapping[str, Any]) -> State:
        if terminating(obj):
            return self.terminating.because(self.terminating_detail)
        if awaiting_reconciler(obj):
            return self.reconciling.because("the reconciler has not caught up with the latest change yet")
        reconciled = find_condition(obj, self.reconciled_type)
        if reconciled is not None and reconciled.get("status") == "False":
            return self.failed.because(_sentence(reconciled))
        ready = find_condition(obj, self.ready_type)
        if ready is None or not is_current(obj, ready):
            return self.starting.because(_sentence(ready) if ready else "waiting for the reconciler")
        reason = str(ready.get("reason") or "")
        if ready.get("status") == "True":
            return self.ready.because(_sentence(ready))
        if reason in self.by_reason:
            return self.by_reason[reason].because(_sentence(ready))
        if ready.get("status") == "False" and reason not in self.starting_reasons:
            return self.failed.because(_sentence(ready))
        return self.starting.because(_sentence(ready))


def _sentence(condition: Mapping[str, Any]) -> str:
    return str(condition.get("message") or condition.get("reason") or "")
