"""Tasks and Events for the aggregated server's tests, written as the cluster admin (helpers, no tests)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO, Any

import yaml

from kinds.tasks import TASK_UID_LABEL
from tests.support import Kubectl, as_dict, wait_for

from .aggregated_server import GROUP_PATH, Aggregator


def create_task(
    server: Aggregator, namespace: str, name: str, *, priority: int = 5, state: str = "Pending", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    from kubernetes import client

    body = {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {"priority": priority, "deadline": "2030-01-01T00:00:00Z", "details": f"{name} details", "taskState": state},
    }
    created = as_dict(
        client.CustomObjectsApi(server.admin).create_namespaced_custom_object("example.example.com", "v1", namespace, "tasks", body)
    )
    return created


def patch_task(server: Aggregator, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
    from kubernetes import client

    patched = as_dict(
        client.CustomObjectsApi(server.admin).patch_namespaced_custom_object("example.example.com", "v1", namespace, "tasks", name, patch)
    )
    return patched


def add_event(server: Aggregator, task: dict[str, Any], reason: str, *, seconds_ago: int = 60, labelled: bool = True) -> str:
    """An Event of ``task``: labelled with its UID (as the reconciler writes them) or only about it (involvedObject)."""
    from kubernetes import client

    meta = task["metadata"]
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))
    name = f"{meta['name']}.{reason.lower()}.{int(time.time() * 1e6)}"
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta["namespace"], "labels": {TASK_UID_LABEL: meta["uid"]} if labelled else {}},
        "involvedObject": {
            "apiVersion": "example.example.com/v1",
            "kind": "Task",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
        },
        "reason": reason,
        "message": f"{reason} for {meta['name']}",
        "type": "Normal",
        "firstTimestamp": when,
        "lastTimestamp": when,
        "source": {"component": "aggregator-tests"},
    }
    client.CoreV1Api(server.admin).create_namespaced_event(meta["namespace"], body)
    return name


def combined(server: Aggregator, namespace: str, name: str) -> dict[str, Any]:
    response = server.get(f"{GROUP_PATH}/namespaces/{namespace}/combinedtasks/{name}", token=server.token())
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_for_events(server: Aggregator, namespace: str, name: str, count: int) -> dict[str, Any]:
    """The CombinedTask once it shows ``count`` Events (the view follows the watch streams)."""

    def shown() -> dict[str, Any] | None:
        response = server.get(f"{GROUP_PATH}/namespaces/{namespace}/combinedtasks/{name}", token=server.token())
        if response.status_code != 200:
            return None
        body: dict[str, Any] = response.json()
        return body if len(body["status"]["events"]) == count else None

    found = wait_for(shown, timeout_s=15, message=f"{namespace}/{name} with {count} events")
    assert isinstance(found, dict)
    return found


def token_kubeconfig(path: Path, *, server: str, ca: Path, token: str, user: str = "alice") -> Kubectl:
    """A kubectl for ``user`` with a bearer token against ``server`` (cache next to the kubeconfig)."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "server", "cluster": {"server": server, "certificate-authority": str(ca)}}],
                "users": [{"name": user, "user": {"token": token}}],
                "contexts": [{"name": user, "context": {"cluster": "server", "user": user}}],
                "current-context": user,
            }
        )
    )
    return Kubectl(path, path.with_name(path.name + ".cache"))


def wait_for_watch_row(stdout: IO[str], name: str, events: str, last_event: str, *, timeout_s: float = 20) -> None:
    """Read ``kubectl get ct -w`` rows until ``name`` shows ``events`` Events, the last one ``last_event``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = stdout.readline().split()
        if row and row[0] == name and row[4] == events:
            assert row[5] == last_event
            return
    raise AssertionError(f"kubectl -w did not print {name} with {events} Events")
