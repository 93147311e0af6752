"""When is a Darkroom Ready? The ``Ready`` condition from its Deployment (pure, no I/O).

Called by :mod:`darkroom_operator.darkrooms` on every reconcile. Ready is True only when the
Deployment is available *and* up to date — the same test ``kubectl rollout status`` makes:
the Deployment controller has observed the latest generation, every desired replica runs the
current template (``updatedReplicas``), no old replica is left (``replicas``), every replica is
available (``availableReplicas``) and the ``Available`` condition is True.

A Darkroom scaled to zero replicas is **not** Ready (reason ``ScaledToZero``): nothing serves its
domains, and Ready answers "does it serve images?", not "did the rollout finish?". The reasons, and
which of them are steps of a rollout rather than failures, are defined in :mod:`kinds.darkrooms`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from darkroom_operator.runtime.conditions import FALSE, TRUE, condition, find
from kinds.darkrooms import (
    DEPLOYMENT_AVAILABLE,
    DEPLOYMENT_MISSING,
    DEPLOYMENT_UNAVAILABLE,
    PODS_UNAVAILABLE,
    READY,
    ROLLOUT_IN_PROGRESS,
    SCALED_TO_ZERO,
)


def readiness(deployment: Mapping[str, Any] | None, *, observed_generation: int | None, secret: str | None = None) -> dict[str, Any]:
    """The ``Ready`` condition (without lastTransitionTime) for a Darkroom whose Deployment is ``deployment``.

    ``secret`` names the S3 credentials Secret, if any: pods that never become available are then
    most likely waiting for it, and the message says so.
    """

    def ready(status: bool, reason: str, message: str) -> dict[str, Any]:
        return condition(READY, TRUE if status else FALSE, reason, message, observed_generation=observed_generation)

    if deployment is None:
        return ready(False, DEPLOYMENT_MISSING, "the Deployment does not exist yet")
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    wanted = int(spec.get("replicas", 1))
    generation = int(deployment["metadata"].get("generation") or 0)
    if int(status.get("observedGeneration") or 0) < generation:
        return ready(False, ROLLOUT_IN_PROGRESS, f"waiting for the Deployment controller to observe generation {generation}")
    if wanted == 0:
        return ready(False, SCALED_TO_ZERO, "spec.replicas is 0: no pod serves the domains")
    updated = int(status.get("updatedReplicas") or 0)
    total = int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    if updated < wanted:
        return ready(False, ROLLOUT_IN_PROGRESS, f"{updated} of {wanted} pods run the current template")
    if total > updated:
        return ready(False, ROLLOUT_IN_PROGRESS, f"{total - updated} old pods are pending termination")
    if available < wanted:
        hint = f'; the pods read Secret "{secret}" (keys accessKey, secretKey): check that it exists' if secret else ""
        return ready(False, PODS_UNAVAILABLE, f"{available} of {wanted} pods are available{hint}")
    available_condition = find(status.get("conditions"), "Available")
    if available_condition is None or available_condition.get("status") != TRUE:
        message = (available_condition or {}).get("message") or "the Deployment has no Available condition"
        return ready(False, DEPLOYMENT_UNAVAILABLE, str(message))
    return ready(True, DEPLOYMENT_AVAILABLE, f"{available} of {wanted} pods are available and up to date")
