"""The pods of Deployments and StatefulSets, and their logs, on devcluster and the real control plane.

The same assertions on both servers (devcluster simulates the controllers and the kubelet in ``devcluster/replicasets.py``,
``pods.py``, ``statefulsets.py`` and ``podlogs.py``; kube runs its controllers, realcluster's node simulates the kubelet and
its ``containerLogs``). Covers:
- a Deployment gets a ReplicaSet ``<deployment>-<hash>`` (controller reference, ``pod-template-hash`` label) and its
  replicas of pods ``<replicaset>-<5 chars>`` that turn Running and Ready (conditions, container statuses, node, IP);
- a new pod template rolls to a new ReplicaSet and the old one goes to 0; scaling down removes pods;
- a StatefulSet's pods ``<name>-<ordinal>`` owned by it, mounting their claims;
- deleting the owner deletes the ReplicaSets and pods (garbage collector);
- ``kubectl logs``: the simulated text names the image and the env variables, never a value (one from a Secret),
  ``--tail``, ``-f`` (a few lines, then stopped), ``--previous`` (the kubelet's error);
- a pod annotated ``simulation.example.com/log-lines-per-second`` writes that many lines a second, the same text and
  stamps on both (line i at the container's start + i/rate s): ``--tail``, ``--since-time``, ``--timestamps``,
  ``--limit-bytes`` and ``-f`` keep working on it; a follower that goes mid-stream ends its stream with no error logged.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support import GC_TIMEOUT_S, Kubectl, wait_for

TIMEOUT_S = 30.0
SECRET_VALUE = "s3cr3t-value-never-shown"


def get(kubectl: Kubectl, namespace: str, *what: str) -> Any:
    return json.loads(kubectl.run("get", *what, "-n", namespace, "-o", "json").stdout)


def pods_of(kubectl: Kubectl, namespace: str, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = get(kubectl, namespace, "pods", "-l", selector)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def all_ready(pods: list[dict[str, Any]], count: int) -> list[dict[str, Any]] | None:
    def ready(pod: dict[str, Any]) -> bool:
        status = pod.get("status") or {}
        conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
        return status.get("phase") == "Running" and conditions.get("Ready") == "True" and conditions.get("ContainersReady") == "True"

    return pods if len(pods) == count and all(ready(p) for p in pods) else None


def deployment(kubectl: Kubectl, namespace: str, name: str, replicas: int, annotations: dict[str, str] | None = None) -> None:
    kubectl.run("create", "secret", "generic", f"{name}-secret", "-n", namespace, f"--from-literal=password={SECRET_VALUE}")
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "args": ["--port", "8080"],
                            "env": [
                                {"name": "GREETING", "value": "plain-value-never-shown"},
                                {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": f"{name}-secret", "key": "password"}}},
                            ],
                        }
                    ]
                },
            },
        },
    }
    kubectl.run("apply", "-f", "-", input_text=json.dumps(body))


def test_deployment_replicasets_and_pods(kubectl: Kubectl, namespace: str) -> None:
    deployment(kubectl, namespace, "web", 2)
    pods = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=web"), 2), TIMEOUT_S, 0.2, "2 ready pods")
    replicasets = get(kubectl, namespace, "replicasets", "-l", "app=web")["items"]
    assert len(replicasets) == 1
    rs = replicasets[0]
    dep = get(kubectl, namespace, "deployment", "web")
    owner = rs["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("Deployment", "web", dep["metadata"]["uid"], True)
    digest = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{digest}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": digest}
    for pod in pods:
        assert re.fullmatch(rf"web-{digest}-[a-z0-9]{{5}}", pod["metadata"]["name"])
        ref = pod["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "ReplicaSet",
            rs["metadata"]["name"],
            rs["metadata"]["uid"],
            True,
        )
        assert pod["metadata"]["labels"]["pod-template-hash"] == digest
        assert pod["spec"]["nodeName"] and pod["status"]["podIP"] and pod["status"]["hostIP"]
        (container,) = pod["status"]["containerStatuses"]
        assert (container["name"], container["ready"], container["restartCount"]) == ("web", True, 0)
        assert "running" in container["state"]
    wait_for(lambda: get(kubectl, namespace, "rs", rs["metadata"]["name"])["status"].get("readyReplicas") == 2 or None, TIMEOUT_S, 0.2)

    # a new template rolls to a new ReplicaSet; the old one scales to 0
    kubectl.run("set", "image", "deployment/web", "web=nginx:1.28", "-n", namespace)

    def rolled() -> list[dict[str, Any]] | None:
        sets = get(kubectl, namespace, "replicasets", "-l", "app=web")["items"]
        new = [s for s in sets if s["metadata"]["name"] != rs["metadata"]["name"]]
        old = [s for s in sets if s["metadata"]["name"] == rs["metadata"]["name"]]
        pods = pods_of(kubectl, namespace, "app=web")
        done = new and old and old[0]["spec"]["replicas"] == 0 and all_ready(pods, 2)
        return pods if done and all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in pods) else None

    wait_for(rolled, TIMEOUT_S, 0.2, "the rollout to a new ReplicaSet")

    # scaling down removes pods
    kubectl.run("scale", "deployment/web", "--replicas=1", "-n", namespace)
    wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=web"), 1), TIMEOUT_S, 0.2, "1 pod left")

    # the owner's deletion takes the ReplicaSets and pods with it
    kubectl.run("delete", "deployment", "web", "-n", namespace)
    wait_for(
        lambda: not get(kubectl, namespace, "replicasets,pods", "-l", "app=web")["items"] or None,
        GC_TIMEOUT_S,
        0.2,
        "ReplicaSets and pods gone",
    )


def test_statefulset_pods(kubectl: Kubectl, namespace: str) -> None:
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "pg", "image": "postgres:16"}]}},
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
            ],
        },
    }
    kubectl.run("apply", "-f", "-", input_text=json.dumps(body))
    pods = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=db"), 2), TIMEOUT_S, 0.2, "2 ready pods")
    sts = get(kubectl, namespace, "statefulset", "db")
    assert sorted(p["metadata"]["name"] for p in pods) == ["db-0", "db-1"]
    for pod in pods:
        ref = pod["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["uid"], ref["controller"]) == ("StatefulSet", sts["metadata"]["uid"], True)
        claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"] if v.get("persistentVolumeClaim")]
        assert claims == [f"data-{pod['metadata']['name']}"]
    kubectl.run("delete", "statefulset", "db", "-n", namespace)
    wait_for(lambda: not pods_of(kubectl, namespace, "app=db") or None, GC_TIMEOUT_S, 0.2, "pods gone")


def test_kubectl_logs(kubectl: Kubectl, namespace: str) -> None:
    deployment(kubectl, namespace, "logs", 1)
    (pod,) = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=logs"), 1), TIMEOUT_S, 0.2, "a ready pod")
    name = pod["metadata"]["name"]
    text = kubectl.run("logs", name, "-n", namespace).stdout
    assert "simulated: no container runs on" in text
    assert "image: nginx:1.27" in text
    assert 'args: ["--port","8080"]' in text
    assert "env: GREETING, PASSWORD" in text
    assert SECRET_VALUE not in text and "plain-value-never-shown" not in text
    lines = text.splitlines()
    assert kubectl.run("logs", name, "-n", namespace, "--tail=2").stdout.splitlines() == lines[-2:]
    stamped = kubectl.run("logs", name, "-n", namespace, "--timestamps", "--tail=1").stdout
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z " + re.escape(lines[-1]) + "\n", stamped)
    assert kubectl.run("logs", "deployment/logs", "-n", namespace).stdout == text

    previous = kubectl.run("logs", name, "-n", namespace, "--previous", check=False)
    assert previous.returncode != 0
    assert f'previous terminated container "web" in pod "{name}" not found' in previous.stderr

    follow = kubectl.popen("logs", "-f", name, "-n", namespace)
    try:
        assert follow.stdout is not None
        read = [follow.stdout.readline() for _ in range(len(lines) + 1)]
    finally:
        follow.terminate()
        follow.communicate(timeout=10)  # reaps it and closes its pipes
    assert [line.rstrip("\n") for line in read[: len(lines)]] == lines
    assert read[-1].startswith("simulated: no container runs on")
    assert SECRET_VALUE not in "".join(read)


def test_logs_of_an_unknown_container(kubectl: Kubectl, namespace: str) -> None:
    deployment(kubectl, namespace, "one", 1)
    (pod,) = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=one"), 1), TIMEOUT_S, 0.2, "a ready pod")
    result = kubectl.run("logs", pod["metadata"]["name"], "-c", "nope", "-n", namespace, check=False)
    assert result.returncode != 0 and "container nope is not valid for pod" in result.stderr


RATE_ANNOTATION = "simulation.example.com/log-lines-per-second"
STAMPED = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z (.*)")


def stamp_of(line: str) -> datetime:
    match = STAMPED.fullmatch(line)
    assert match, line
    return datetime.fromisoformat(match.group(1) + "+00:00") + timedelta(microseconds=int(match.group(2)) // 1000)


def test_kubectl_logs_of_a_pod_writing_at_a_rate(kubectl: Kubectl, namespace: str) -> None:
    deployment(kubectl, namespace, "busy", 1, annotations={RATE_ANNOTATION: "1000"})
    (pod,) = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=busy"), 1), TIMEOUT_S, 0.2, "a ready pod")
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    started = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"].replace("Z", "+00:00"))
    text = f"simulated: line {{}} of a container writing 1000 lines/s on {node}"
    while datetime.now(UTC) < started + timedelta(seconds=2.2):  # two seconds of lines at least
        time.sleep(0.1)

    before = datetime.now(UTC)
    stamped = kubectl.run("logs", name, "-n", namespace, "--timestamps").stdout.splitlines()
    after = datetime.now(UTC)
    startup = [line for line in stamped if " simulated: line " not in line]
    assert [STAMPED.fullmatch(line).group(3) for line in startup][1] == "image: nginx:1.27"  # type: ignore[union-attr]
    assert all(stamp_of(line) == started for line in startup) and stamped[: len(startup)] == startup
    rated = stamped[len(startup) :]
    # line i is stamped the container's start + i ms, and is there once that time has come
    assert len(rated) >= 2000 and started + timedelta(milliseconds=len(rated)) <= after
    assert before - started - timedelta(milliseconds=len(rated)) < timedelta(milliseconds=1)
    for i in (1, 2, 999, 1000, len(rated)):
        line = rated[i - 1]
        assert STAMPED.fullmatch(line).group(3) == text.format(i), line  # type: ignore[union-attr]
        assert stamp_of(line) == started + timedelta(milliseconds=i)

    tail = kubectl.run("logs", name, "-n", namespace, "--tail=3").stdout.splitlines()
    indexes = [int(re.fullmatch(text.format(r"(\d+)"), line).group(1)) for line in tail]  # type: ignore[union-attr]
    assert indexes == [indexes[0], indexes[0] + 1, indexes[0] + 2] and indexes[0] >= len(rated) - 2
    since = (started + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")  # lines from 1 s after the start: 1000 on
    later = kubectl.run("logs", name, "-n", namespace, f"--since-time={since}").stdout.splitlines()
    assert later[:2] == [text.format(1000), text.format(1001)]
    cut = kubectl.run("logs", name, "-n", namespace, "--limit-bytes=100").stdout
    assert len(cut) == 100 and cut.startswith("simulated: no container runs on")

    follow = kubectl.popen("logs", "-f", name, "-n", namespace, "--tail=1")
    try:
        assert follow.stdout is not None
        read = [follow.stdout.readline().rstrip("\n") for _ in range(1500)]  # 1.5 s of lines: several writes
    finally:
        follow.terminate()
        follow.communicate(timeout=10)
    followed = [int(re.fullmatch(text.format(r"(\d+)"), line).group(1)) for line in read]  # type: ignore[union-attr]
    assert followed == list(range(followed[0], followed[0] + 1500))  # consecutive: none lost, none twice


@pytest.mark.parametrize("value", ["0", "-5", "+5", " 5", "1.5", "many"])
def test_an_invalid_log_rate_is_as_if_unset(kubectl: Kubectl, namespace: str, value: str) -> None:
    deployment(kubectl, namespace, "calm", 1, annotations={RATE_ANNOTATION: value})
    (pod,) = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=calm"), 1), TIMEOUT_S, 0.2, "a ready pod")
    time.sleep(0.5)
    text = kubectl.run("logs", pod["metadata"]["name"], "-n", namespace).stdout
    assert text.startswith("simulated: no container runs on") and " lines/s " not in text and len(text.splitlines()) == 5


def test_a_follower_that_goes_ends_its_stream_quietly(kubectl: Kubectl, namespace: str, kube: Any) -> None:
    """``kubectl logs -f`` stopped while lines still come (the dashboard's logs page left): the server ends that stream
    and logs no error about the closed connection (devcluster printed a traceback per stream into `make api`'s terminal)."""
    deployment(kubectl, namespace, "leaving", 1, annotations={RATE_ANNOTATION: "1000"})
    (pod,) = wait_for(lambda: all_ready(pods_of(kubectl, namespace, "app=leaving"), 1), TIMEOUT_S, 0.2, "a ready pod")
    log_path = getattr(kube, "log_path", None)
    assert log_path is not None
    seen = log_path.stat().st_size
    for _ in range(3):
        follow = kubectl.popen("logs", "-f", pod["metadata"]["name"], "-n", namespace, "--tail=1")
        assert follow.stdout is not None
        assert "of a container writing 1000 lines/s" in follow.stdout.readline()
        follow.kill()  # gone mid-stream
        follow.communicate(timeout=10)
    time.sleep(1.0)  # the server's next writes (every 0.1 s at most) find the connections closed
    with log_path.open("rb") as log:
        log.seek(seen)
        written = log.read().decode(errors="replace")
    assert "Error handling request" not in written and "Traceback" not in written, written[-3000:]
