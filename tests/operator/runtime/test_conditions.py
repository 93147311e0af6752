"""Status conditions (darkroom_operator.runtime.conditions) and the Ready rule (darkroom_operator.readiness).

Behaviours: lastTransitionTime is kept while the status stays the same (even when reason or message
change) and set to now when it changes; other condition types keep their place; conditions compare
on status/reason/message/observedGeneration; timestamps are RFC 3339 UTC seconds. Ready is True
only for an available, fully rolled-out Deployment of the latest generation; every other state
(missing, generation not observed, scaled to zero, rollout in progress, old pods, unavailable pods
with a Secret hint, Available condition False) is False with its own reason. The Events of a transition
(:func:`transition_events`): a failure someone must act on is one Warning named by its reason — also for an
object that was never Ready (a host conflict, a missing password Secret) — and never again for the same
failure on a resync; losing readiness is a Warning ``NotReady``, a rollout of a new generation a Normal
``Updating``, scaling to zero a Normal ``ScaledToZero``, recovery a Normal ``Ready``; Reconciled=False is a
Warning and its recovery a Normal ``Reconciled``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from darkroom_operator.readiness import readiness
from darkroom_operator.runtime.conditions import (
    ReadyReasons,
    condition,
    find,
    same,
    set_condition,
    timestamp,
    transition_events,
    transitioned,
)

T0 = datetime(2027, 3, 31, 17, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


def test_timestamp_is_utc_seconds() -> None:
    assert timestamp(T0) == "2027-03-31T17:00:00Z"
    assert timestamp(datetime(2027, 3, 31, 19, 0, 0, 999999, tzinfo=timezone(timedelta(hours=2)))) == "2027-03-31T17:00:00Z"
    assert timestamp(datetime(2027, 3, 31, 17, 0, 0)) == "2027-03-31T17:00:00Z"  # naive means UTC


def test_condition_accepts_bools_and_rejects_other_statuses() -> None:
    assert condition("Ready", True, "Ok", "fine", observed_generation=3) == {
        "type": "Ready",
        "status": "True",
        "reason": "Ok",
        "message": "fine",
        "observedGeneration": 3,
    }
    assert "observedGeneration" not in condition("Ready", "Unknown", "R", "", observed_generation=None)
    with pytest.raises(ValueError, match="True, False or Unknown"):
        condition("Ready", "yes", "R", "", observed_generation=1)


def test_new_condition_gets_now() -> None:
    result = set_condition(None, condition("Ready", False, "Waiting", "w", observed_generation=1), now=T0)
    assert result == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "Waiting",
            "message": "w",
            "observedGeneration": 1,
            "lastTransitionTime": "2027-03-31T17:00:00Z",
        }
    ]


def test_transition_time_kept_unless_status_changes() -> None:
    first = set_condition([], condition("Ready", False, "Waiting", "0 of 1", observed_generation=1), now=T0)
    reworded = set_condition(first, condition("Ready", False, "Rolling", "1 of 2", observed_generation=2), now=T1)
    assert reworded[0]["lastTransitionTime"] == timestamp(T0)
    assert reworded[0]["reason"] == "Rolling" and reworded[0]["observedGeneration"] == 2
    flipped = set_condition(reworded, condition("Ready", True, "Ok", "fine", observed_generation=2), now=T1)
    assert flipped[0]["lastTransitionTime"] == timestamp(T1)
    assert first[0]["reason"] == "Waiting"  # inputs are not modified


def test_other_conditions_keep_their_place() -> None:
    existing: list[dict[str, Any]] = [
        {"type": "Foreign", "status": "True", "reason": "X", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"},
        {"type": "Ready", "status": "False", "reason": "W", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"},
        {"type": "Other", "status": "True", "reason": "Y", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"},
    ]
    result = set_condition(existing, condition("Ready", True, "Ok", "", observed_generation=1), now=T0)
    assert [c["type"] for c in result] == ["Foreign", "Ready", "Other"]
    assert result[0] == existing[0] and result[2] == existing[2]
    appended = set_condition(existing, condition("Reconciled", True, "Applied", "", observed_generation=1), now=T0)
    assert [c["type"] for c in appended] == ["Foreign", "Ready", "Other", "Reconciled"]


def test_same_and_transitioned() -> None:
    old = set_condition([], condition("Ready", True, "Ok", "m", observed_generation=1), now=T0)[0]
    assert same(old, condition("Ready", True, "Ok", "m", observed_generation=1))
    assert not same(old, condition("Ready", True, "Ok", "other", observed_generation=1))
    assert not same(old, condition("Ready", True, "Ok", "m", observed_generation=2))
    assert not same(None, old)
    assert not transitioned(old, condition("Ready", True, "Other", "x", observed_generation=1))
    assert transitioned(old, condition("Ready", False, "Ok", "m", observed_generation=1))
    assert transitioned(None, condition("Ready", False, "Ok", "m", observed_generation=1))
    assert find([old], "Ready") is old and find([old], "Nope") is None and find(None, "Ready") is None


def deployment(wanted: int = 2, generation: int = 3, **status: Any) -> dict[str, Any]:
    base = {
        "observedGeneration": generation,
        "replicas": wanted,
        "updatedReplicas": wanted,
        "readyReplicas": wanted,
        "availableReplicas": wanted,
        "conditions": [{"type": "Available", "status": "True", "message": "Deployment has minimum availability."}],
    }
    base.update(status)
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": wanted},
        "status": {k: v for k, v in base.items() if v is not None},
    }


def test_ready_only_when_available_and_up_to_date() -> None:
    ready = readiness(deployment(), observed_generation=7)
    assert ready == {
        "type": "Ready",
        "status": "True",
        "reason": "DeploymentAvailable",
        "message": "2 of 2 pods are available and up to date",
        "observedGeneration": 7,
    }


@pytest.mark.parametrize(
    ("dep", "reason", "message"),
    [
        (None, "DeploymentMissing", "the Deployment does not exist yet"),
        (deployment(observedGeneration=2), "RolloutInProgress", "waiting for the Deployment controller to observe generation 3"),
        (deployment(updatedReplicas=1), "RolloutInProgress", "1 of 2 pods run the current template"),
        (deployment(replicas=3), "RolloutInProgress", "1 old pods are pending termination"),
        (deployment(availableReplicas=1), "PodsUnavailable", "1 of 2 pods are available"),
        (deployment(availableReplicas=None), "PodsUnavailable", "0 of 2 pods are available"),
        (
            deployment(conditions=[{"type": "Available", "status": "False", "message": "Deployment does not have minimum availability."}]),
            "DeploymentUnavailable",
            "Deployment does not have minimum availability.",
        ),
        (deployment(conditions=None), "DeploymentUnavailable", "the Deployment has no Available condition"),
        (deployment(wanted=0), "ScaledToZero", "spec.replicas is 0: no pod serves the domains"),
    ],
)
def test_not_ready(dep: dict[str, Any] | None, reason: str, message: str) -> None:
    result = readiness(dep, observed_generation=1)
    assert (result["status"], result["reason"], result["message"]) == ("False", reason, message)


def test_unavailable_pods_hint_at_the_credentials_secret() -> None:
    result = readiness(deployment(availableReplicas=0), observed_generation=1, secret="s3-creds")
    assert (
        result["message"] == '0 of 2 pods are available; the pods read Secret "s3-creds" (keys accessKey, secretKey): check that it exists'
    )


REASONS = ReadyReasons(steps=frozenset({"RolloutInProgress", "PodsUnavailable"}), on_purpose=frozenset({"ScaledToZero"}))
APPLIED = condition("Reconciled", True, "Applied", "all applied", observed_generation=1)


def ready(status: bool, reason: str, message: str = "m", generation: int = 1) -> dict[str, Any]:
    return condition("Ready", status, reason, message, observed_generation=generation)


def events(old: dict[str, Any] | None, new: dict[str, Any]) -> list[tuple[str, str]]:
    return [(type_, reason) for type_, reason, _ in transition_events(old, new, APPLIED, APPLIED, reasons=REASONS)]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # A failure someone must act on: a Warning by its reason, even when the object was never Ready ...
        (None, ready(False, "HostConflict"), [("Warning", "HostConflict")]),
        (ready(False, "RolloutInProgress"), ready(False, "PasswordSecretMissing"), [("Warning", "PasswordSecretMissing")]),
        (ready(True, "Available"), ready(False, "DeploymentUnavailable"), [("Warning", "DeploymentUnavailable")]),
        (ready(False, "HostConflict"), ready(False, "DeploymentUnavailable"), [("Warning", "DeploymentUnavailable")]),
        # ... once: not again on a resync, nor for a new message of the same failure and generation ...
        (ready(False, "HostConflict"), ready(False, "HostConflict"), []),
        (ready(False, "HostConflict", "a"), ready(False, "HostConflict", "b"), []),
        # ... but again for a new generation that fails differently.
        (ready(False, "HostConflict", "a"), ready(False, "HostConflict", "b", generation=2), [("Warning", "HostConflict")]),
        # Losing readiness is a Warning; a rollout the user started by a spec change is not.
        (ready(True, "Available"), ready(False, "PodsUnavailable"), [("Warning", "NotReady")]),
        (ready(True, "Available"), ready(False, "RolloutInProgress", generation=2), [("Normal", "Updating")]),
        (ready(False, "RolloutInProgress"), ready(False, "PodsUnavailable"), []),
        (None, ready(False, "RolloutInProgress"), []),
        # What the user asked for, and recovery.
        (ready(True, "Available"), ready(False, "ScaledToZero", generation=2), [("Normal", "ScaledToZero")]),
        (ready(False, "ScaledToZero"), ready(False, "ScaledToZero"), []),
        (ready(False, "HostConflict"), ready(True, "Available"), [("Normal", "Ready")]),
        (ready(True, "Available"), ready(True, "Available", "n"), []),
    ],
)
def test_ready_transitions_and_their_events(old: dict[str, Any] | None, new: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert events(old, new) == expected


def test_reconciled_failures_warn_once_and_recovery_is_normal() -> None:
    failed = condition("Reconciled", False, "ChildConflict", "taken", observed_generation=1)
    up = ready(True, "Available")
    assert transition_events(up, up, APPLIED, failed, reasons=REASONS) == [("Warning", "ChildConflict", "taken")]
    assert transition_events(up, up, failed, failed, reasons=REASONS) == []
    assert transition_events(up, up, failed, APPLIED, reasons=REASONS) == [("Normal", "Reconciled", "all applied")]
