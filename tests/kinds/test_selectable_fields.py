"""The Task CRD's ``selectableFields`` (kube 1.32+), through kubectl, on both clusters.

Behaviours: ``kubectl get tasks --field-selector spec.taskState=Pending`` lists the Pending Tasks only
(the default state counts); ``spec.priority=9`` and ``!=`` select by the integer field; a field the CRD
does not declare is kube's "Error from server (BadRequest): ... field label not supported: spec.details".
"""

from __future__ import annotations

import yaml

from kinds.tasks import SELECTABLE_FIELDS
from tests.support import Kubectl


def _task(name: str, namespace: str, priority: int, state: str | None) -> dict[str, object]:
    spec: dict[str, object] = {"priority": priority, "deadline": "2030-01-01T00:00:00Z"}
    if state:
        spec["taskState"] = state
    return {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _names(kubectl: Kubectl, namespace: str, selector: str) -> set[str]:
    out = kubectl.run("get", "tasks", "-n", namespace, "--field-selector", selector, "-o", "name").stdout.split()
    return {line.rsplit("/", 1)[1] for line in out}


def test_kubectl_selects_tasks_by_selectable_fields(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    assert SELECTABLE_FIELDS == ("spec.priority", "spec.taskState")
    tasks = [_task("open", namespace, 9, None), _task("done", namespace, 9, "Finished"), _task("low", namespace, 2, "Pending")]
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump_all(tasks))

    assert _names(kubectl, namespace, "spec.taskState=Pending") == {"open", "low"}
    assert _names(kubectl, namespace, "spec.taskState=Finished") == {"done"}
    assert _names(kubectl, namespace, "spec.priority=9") == {"open", "done"}
    assert _names(kubectl, namespace, "spec.priority!=9,spec.taskState==Pending") == {"low"}

    bad = kubectl.run("get", "tasks", "-n", namespace, "--field-selector", "spec.details=x", check=False)
    assert bad.returncode != 0
    assert "Error from server (BadRequest)" in bad.stderr and "field label not supported: spec.details" in bad.stderr
