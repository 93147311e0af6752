"""devcluster's aggregation layer, with the real aggregated server and an echo backend.

Behaviours:
- the ``combinedtasks`` server registered as ``make api`` does it (Service, EndpointSlice at 127.0.0.1,
  APIService with the server's certificate as caBundle) becomes ``Available`` (reason Passed); ``/apis``
  lists its group after the built-in ones and ``/apis/<group>`` is an APIGroup;
- through devcluster's proxy, kubectl: ``get combinedtasks -A`` (the server's Table), ``get ct
  --field-selector spec.priority=9``, ``-o yaml`` (Events under status.events), ``explain
  combinedtasks.status.events`` (the server's OpenAPI v3 document, listed in devcluster's), ``get ct -w``
  (a new Event shows as a new row);
- the proxy presents the front-proxy client certificate (CN front-proxy-client, issued by the CA the
  ``extension-apiserver-authentication`` ConfigMap names) with ``X-Remote-User``/``X-Remote-Group`` of the
  caller devcluster authenticated — the kubeconfig's token is ``kubernetes-admin`` in system:masters, no
  credentials is ``system:unsecured`` — never the caller's own ``Authorization`` or ``X-Remote-*``; a token
  devcluster did not issue is 401;
- TokenReview authenticates the kubeconfig's token and nothing else; SubjectAccessReview allows
  ``kubernetes-admin`` and denies ``alice``;
- an APIService whose Service is missing is ``ServiceNotFound``; one whose backend is gone turns
  ``FailedDiscoveryCheck`` and requests for it are 503 ServiceUnavailable.
"""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from cryptography import x509

from aggregator.certificates import self_signed
from kinds.tasks import TASK_UID_LABEL
from tests.clusters import ROOT, DevclusterProcess, free_port
from tests.support import Kubectl, install_crds, wait_for

from .objects import wait_for_watch_row

pytestmark = pytest.mark.devcluster_only  # the aggregation layer of devcluster itself

sys.path.insert(0, str(ROOT / "scripts"))
import run_api  # noqa: E402  (make api's registration, reused as is)

GROUP = "search.task.example.example.com"


def _condition(kubectl: Kubectl, name: str) -> dict[str, Any]:
    obj = json.loads(kubectl.run("get", "apiservice", name, "-o", "json").stdout)
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "Available"), {})


def _token(cluster: DevclusterProcess) -> str:
    return (cluster.data_dir / "pki" / "admin.token").read_text().strip()


@pytest.fixture(scope="module")
def registered(devcluster: DevclusterProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """The combinedtasks server behind the session devcluster, registered as make api does."""
    tmp = tmp_path_factory.mktemp("dev-aggregator")
    install_crds(devcluster.kubeconfig)
    kubectl = Kubectl(devcluster.kubeconfig, tmp / "cache")
    port = free_port()
    cert, _ = run_api.aggregator_certificate(tmp / "certs")
    log = tmp / "aggregator.log"
    argv = [sys.executable, "-m", "aggregator", "--kubeconfig", str(devcluster.kubeconfig), "--bind-address", "127.0.0.1"]
    argv += ["--secure-port", str(port), "--cert-dir", str(tmp / "certs"), "--bookmark-interval-s", "1"]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        run_api.register_aggregator(str(devcluster.kubeconfig), port, cert.read_bytes())
        wait_for(lambda: run_api.apiservice_problem(str(devcluster.kubeconfig)) is None, timeout_s=60, message="the APIService Available")
        yield kubectl
    finally:
        run_api.unregister_aggregator(str(devcluster.kubeconfig))
        proc.terminate()
        proc.wait(30)


@pytest.fixture
def team(registered: Kubectl) -> Iterator[str]:
    name = f"ct-{uuid.uuid4().hex[:8]}"
    registered.run("create", "namespace", name)
    yield name
    registered.run("delete", "namespace", name, "--wait=false")


def _task(kubectl: Kubectl, namespace: str, name: str, priority: int) -> str:
    body = {
        "apiVersion": "example.example.com/v1",
        "kind": "Task",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"priority": priority, "deadline": "2030-01-01T00:00:00Z"},
    }
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump(body))
    return str(json.loads(kubectl.run("get", "task", "-n", namespace, name, "-o", "json").stdout)["metadata"]["uid"])


def _event(kubectl: Kubectl, namespace: str, task: str, uid: str, reason: str, at: str = "2026-01-01T00:00:00Z") -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{task}.{uuid.uuid4().hex[:8]}", "namespace": namespace, "labels": {TASK_UID_LABEL: uid}},
        "involvedObject": {"apiVersion": "example.example.com/v1", "kind": "Task", "name": task, "namespace": namespace, "uid": uid},
        "reason": reason,
        "message": f"{reason} happened",
        "type": "Normal",
        "firstTimestamp": at,
        "lastTimestamp": at,
    }
    kubectl.run("create", "-f", "-", input_text=yaml.safe_dump(body))


def test_registered_server_is_available_and_discovered(devcluster: DevclusterProcess, registered: Kubectl) -> None:
    condition = _condition(registered, run_api.APISERVICE)
    assert (condition["status"], condition["reason"], condition["message"]) == ("True", "Passed", "all checks passed")
    groups = [g["name"] for g in requests.get(f"{devcluster.url}/apis", timeout=10).json()["groups"]]
    assert GROUP in groups and groups.index(GROUP) > groups.index("apps")
    group = requests.get(f"{devcluster.url}/apis/{GROUP}", timeout=10).json()
    assert group["kind"] == "APIGroup" and group["preferredVersion"] == {"groupVersion": f"{GROUP}/v1", "version": "v1"}
    resources = requests.get(f"{devcluster.url}/apis/{GROUP}/v1", timeout=10).json()["resources"]
    assert [r["name"] for r in resources] == ["combinedtasks"]


def test_kubectl_through_devcluster(registered: Kubectl, team: str) -> None:
    uid = _task(registered, team, "urgent", 9)
    _task(registered, team, "later", 2)
    _event(registered, team, "urgent", uid, "TaskCreated")
    wait_for(
        lambda: "TaskCreated" in registered.run("get", "ct", "-n", team, "urgent", "-o", "yaml").stdout, message="the Event in the view"
    )

    table = registered.run("get", "combinedtasks", "-A").stdout.splitlines()
    assert table[0].split() == ["NAMESPACE", "NAME", "PRIORITY", "DEADLINE", "STATE", "EVENTS", "LAST", "EVENT", "AGE"]
    assert [row.split()[1:6] for row in table[1:] if row.startswith(team)] == [
        ["later", "2", "2030-01-01T00:00:00Z", "Pending", "0"],
        ["urgent", "9", "2030-01-01T00:00:00Z", "Pending", "1"],
    ]
    selected = registered.run("get", "ct", "-A", "--field-selector", "spec.priority=9", "-o", "name").stdout.split()
    assert "combinedtask.search.task.example.example.com/urgent" in selected
    assert "combinedtask.search.task.example.example.com/later" not in selected
    listed = yaml.safe_load(registered.run("get", "combinedtasks", "-n", team, "-o", "yaml").stdout)
    urgent = next(i for i in listed["items"] if i["metadata"]["name"] == "urgent")
    assert urgent["kind"] == "CombinedTask" and [e["reason"] for e in urgent["status"]["events"]] == ["TaskCreated"]
    explained = registered.run("explain", "combinedtasks.status.events").stdout  # the server's OpenAPI, listed by devcluster
    assert "KIND:       CombinedTask" in explained and "FIELD: events <[]Event>" in explained

    watch = registered.popen("get", "ct", "-n", team, "-w")
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().split()[:2] == ["NAME", "PRIORITY"]
        first = {watch.stdout.readline().split()[0] for _ in range(2)}
        assert first == {"urgent", "later"}
        _event(registered, team, "urgent", uid, "TaskUpdated", at="2026-01-02T00:00:00Z")
        wait_for_watch_row(watch.stdout, "urgent", "2", "TaskUpdated")
    finally:
        watch.kill()
        watch.communicate(timeout=10)


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers with what it received: headers (all values) and the client certificate's subject and issuer."""

    def do_GET(self) -> None:
        der = self.connection.getpeercert(binary_form=True)
        cert = x509.load_der_x509_certificate(der) if der else None
        body = json.dumps(
            {
                "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "subject": cert.subject.rfc4514_string() if cert else None,
                "issuer": cert.issuer.rfc4514_string() if cert else None,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo(devcluster: DevclusterProcess, tmp_path: Path) -> Iterator[tuple[Kubectl, str]]:
    """An HTTPS echo server trusting the published front-proxy CA, registered as v1.<group> of a fresh group."""
    kubectl = Kubectl(devcluster.kubeconfig, tmp_path / "cache")
    ca = yaml.safe_load(kubectl.run("get", "cm", "-n", "kube-system", "extension-apiserver-authentication", "-o", "yaml").stdout)
    (tmp_path / "front-proxy-ca.crt").write_text(ca["data"]["requestheader-client-ca-file"])
    group = f"echo-{uuid.uuid4().hex[:6]}.example.com"
    name, namespace = "echo", f"echo-{uuid.uuid4().hex[:6]}"
    cert, _ = self_signed(tmp_path / "certs", names=[f"{name}.{namespace}.svc"])  # the name devcluster checks
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, tmp_path / "certs" / "apiserver.key")
    context.load_verify_locations(tmp_path / "front-proxy-ca.crt")
    context.verify_mode = ssl.CERT_REQUIRED  # only devcluster's front-proxy certificate gets in
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace}, "spec": {"ports": [{"port": 443}]}},
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": namespace, "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4",
            "ports": [{"port": server.server_address[1]}],
            "endpoints": [{"addresses": ["127.0.0.1"]}],
        },
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": f"v1.{group}"},
            "spec": {
                "group": group,
                "version": "v1",
                "groupPriorityMinimum": 100,
                "versionPriority": 10,
                "caBundle": base64.b64encode(cert.read_bytes()).decode(),
                "service": {"name": name, "namespace": namespace},
            },
        },
    ]
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump_all(docs))
    wait_for(lambda: _condition(kubectl, f"v1.{group}").get("status") == "True", timeout_s=30, message="the echo APIService Available")
    yield kubectl, group
    server.shutdown()
    server.server_close()
    kubectl.run("delete", "apiservice", f"v1.{group}")
    kubectl.run("delete", "namespace", namespace, "--wait=false")


def _echoed(devcluster: DevclusterProcess, group: str, headers: dict[str, str]) -> dict[str, Any]:
    response = requests.get(f"{devcluster.url}/apis/{group}/v1/things?limit=1", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_proxy_presents_the_front_proxy_certificate_and_the_callers_identity(
    devcluster: DevclusterProcess, echo: tuple[Kubectl, str]
) -> None:
    _, group = echo
    spoofed = {"X-Remote-User": "alice", "X-Remote-Group": "system:masters", "Impersonate-User": "bob"}
    with_token = _echoed(devcluster, group, {"Authorization": f"Bearer {_token(devcluster)}", **spoofed})
    assert with_token["path"] == f"/apis/{group}/v1/things?limit=1"
    assert with_token["subject"] == "CN=front-proxy-client" and with_token["issuer"] == "CN=front-proxy-ca"
    remote = [(k, v) for k, v in with_token["headers"] if k.lower().startswith(("x-remote-", "authorization", "impersonate-"))]
    assert remote == [
        ("X-Remote-User", "kubernetes-admin"),
        ("X-Remote-Group", "system:masters"),
        ("X-Remote-Group", "system:authenticated"),
    ]

    without = _echoed(devcluster, group, spoofed)
    remote = [(k, v) for k, v in without["headers"] if k.lower().startswith(("x-remote-", "authorization", "impersonate-"))]
    assert remote == [
        ("X-Remote-User", "system:unsecured"),
        ("X-Remote-Group", "system:masters"),
        ("X-Remote-Group", "system:authenticated"),
    ]

    refused = requests.get(f"{devcluster.url}/apis/{group}/v1/things", headers={"Authorization": "Bearer not-ours"}, timeout=10)
    assert refused.status_code == 401 and refused.json()["reason"] == "Unauthorized"


def test_token_and_subject_access_reviews(devcluster: DevclusterProcess) -> None:
    def review(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = requests.post(f"{devcluster.url}{path}", json=body, timeout=10)
        assert response.status_code == 201, response.text
        status: dict[str, Any] = response.json()["status"]
        return status

    tokens = "/apis/authentication.k8s.io/v1/tokenreviews"
    ours = review(tokens, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": _token(devcluster)}})
    assert ours["authenticated"] is True and ours["user"]["username"] == "kubernetes-admin"
    assert "system:masters" in ours["user"]["groups"]
    other = review(tokens, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "someone-elses"}})
    assert not other.get("authenticated") and other["user"] == {}

    sars = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    attributes = {"resourceAttributes": {"group": GROUP, "resource": "combinedtasks", "verb": "list"}}
    admin = review(
        sars, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": "kubernetes-admin", **attributes}}
    )
    alice = review(sars, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": "alice", **attributes}})
    assert admin["allowed"] is True and alice["allowed"] is False
    invalid = requests.post(f"{devcluster.url}{sars}", json={"kind": "SubjectAccessReview", "spec": attributes}, timeout=10)
    assert invalid.status_code == 422 and invalid.json()["reason"] == "Invalid"


def test_unavailable_backends(devcluster: DevclusterProcess, echo: tuple[Kubectl, str], tmp_path: Path) -> None:
    kubectl, _ = echo
    missing = f"v1.missing-{uuid.uuid4().hex[:6]}.example.com"
    spec = {"group": missing[3:], "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10, "insecureSkipTLSVerify": True}
    spec["service"] = {"name": "nowhere", "namespace": "default"}
    kubectl.run(
        "apply",
        "-f",
        "-",
        input_text=yaml.safe_dump(
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": missing}, "spec": spec}
        ),
    )
    try:
        wait_for(lambda: _condition(kubectl, missing).get("reason") == "ServiceNotFound", timeout_s=30, message="ServiceNotFound")
        assert _condition(kubectl, missing)["message"] == 'service/nowhere in "default" is not present'
        response = requests.get(f"{devcluster.url}/apis/{missing[3:]}/v1/things", timeout=10)
        assert response.status_code == 503 and response.json()["reason"] == "ServiceUnavailable"
    finally:
        kubectl.run("delete", "apiservice", missing)
