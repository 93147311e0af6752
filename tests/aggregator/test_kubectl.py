"""kubectl pointed straight at the aggregated server (its URL and CA, alice's token), as a user would.

Behaviours: ``kubectl get combinedtasks -A`` prints the server's Table (NAMESPACE, NAME, PRIORITY, DEADLINE,
STATE, EVENTS, LAST EVENT, AGE); ``-o yaml`` shows the Events under status.events; ``kubectl get ct
--field-selector spec.priority=9`` filters on the server (short name from discovery); ``kubectl explain
combinedtasks.status.events`` reads the OpenAPI v3 document; ``kubectl get ct -w`` prints the row again
when an Event is written; a bad field selector is kubectl's "Error from server (BadRequest)".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support import Kubectl

from .aggregated_server import Aggregator
from .objects import add_event, create_task, token_kubeconfig, wait_for_events, wait_for_watch_row


@pytest.fixture(scope="module")
def alice_views_everything(aggregator: Aggregator) -> Iterator[None]:
    """alice may read every namespace while this module runs (the session cluster's alice has nothing otherwise)."""
    name = "aggregator-tests-alice-view"
    aggregator.kubectl.run("create", "clusterrolebinding", name, "--clusterrole=view", "--user=alice")
    yield
    aggregator.kubectl.run("delete", "clusterrolebinding", name)


@pytest.fixture
def kubectl_alice(aggregator: Aggregator, alice_views_everything: None, tmp_path: Path) -> Kubectl:
    return token_kubeconfig(tmp_path / "alice.kubeconfig", server=aggregator.url, ca=aggregator.ca, token=aggregator.token("alice"))


def test_kubectl_get_yaml_field_selector_and_explain(aggregator: Aggregator, team: str, kubectl_alice: Kubectl) -> None:
    urgent = create_task(aggregator, team, "urgent", priority=9)
    create_task(aggregator, team, "later", priority=2)
    add_event(aggregator, urgent, "TaskCreated", seconds_ago=45)
    wait_for_events(aggregator, team, "urgent", 1)

    table = kubectl_alice.run("get", "combinedtasks", "-A").stdout.splitlines()
    assert table[0].split() == ["NAMESPACE", "NAME", "PRIORITY", "DEADLINE", "STATE", "EVENTS", "LAST", "EVENT", "AGE"]
    mine = [line.split() for line in table[1:] if line.startswith(team)]
    assert [row[1:6] for row in mine] == [
        ["later", "2", "2030-01-01T00:00:00Z", "Pending", "0"],
        ["urgent", "9", "2030-01-01T00:00:00Z", "Pending", "1"],
    ]

    listed = yaml.safe_load(kubectl_alice.run("get", "combinedtasks", "-n", team, "-o", "yaml").stdout)
    by_name = {i["metadata"]["name"]: i for i in listed["items"]}
    assert by_name["urgent"]["kind"] == "CombinedTask"
    assert [e["reason"] for e in by_name["urgent"]["status"]["events"]] == ["TaskCreated"]

    selected = kubectl_alice.run("get", "ct", "-A", "--field-selector", "spec.priority=9", "-o", "name").stdout.split()
    assert "combinedtask.search.task.example.example.com/urgent" in selected
    assert "combinedtask.search.task.example.example.com/later" not in selected

    explained = kubectl_alice.run("explain", "combinedtasks.status.events").stdout
    assert "KIND:       CombinedTask" in explained and "FIELD: events <[]Event>" in explained and "reason" in explained

    bad = kubectl_alice.run("get", "ct", "-A", "--field-selector", "spec.details=x", check=False)
    assert (
        bad.returncode != 0 and "Error from server (BadRequest)" in bad.stderr and "field label not supported: spec.details" in bad.stderr
    )


def test_kubectl_watch(aggregator: Aggregator, team: str, kubectl_alice: Kubectl) -> None:
    task = create_task(aggregator, team, "followed", priority=5)
    from tests.support import wait_for

    wait_for(lambda: kubectl_alice.run("get", "ct", "-n", team, "followed", check=False).returncode == 0, message="followed visible")
    watch = kubectl_alice.popen("get", "ct", "-n", team, "-w")
    try:
        assert watch.stdout is not None
        header = watch.stdout.readline()
        assert header.split()[:2] == ["NAME", "PRIORITY"]
        first = watch.stdout.readline().split()
        assert first[0] == "followed" and first[4] == "0"
        add_event(aggregator, task, "TaskUpdated", seconds_ago=5)
        wait_for_watch_row(watch.stdout, "followed", "1", "TaskUpdated")
    finally:
        watch.kill()
        watch.communicate(timeout=10)  # closes the pipes
