"""The combinedtasks server through the real kube-apiserver's own aggregator.

kube-apiserver refuses loopback addresses as endpoints and reaches a Service's endpoints directly
(realcluster runs it with ``--enable-aggregator-routing=true``), so the server runs in a network
namespace this test creates (``ip netns``, a veth pair on a private /30, never another host): it listens
on the namespace's veth address, and reaches the API server (host loopback only) through two TCP relays
(``relay.py``). Registered as deploy/ does it — a selector-less Service, its Endpoints (mirrored into an
EndpointSlice by kube-controller-manager) at that address, the APIService with the server's certificate
as caBundle.

Behaviours: the APIService becomes Available; through kube-apiserver with alice's token (view in her
namespace), ``kubectl get combinedtasks -A`` prints the server's Table, ``get ct --field-selector
spec.priority=9`` filters, ``-o yaml`` carries the Events, ``get ct -w`` prints the row again when an
Event is written; kube's front proxy sends alice as X-Remote-User, so a namespace she cannot view is
Forbidden by the server's SubjectAccessReview.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from aggregator.certificates import self_signed
from tests.clusters import ROOT
from tests.support import Kubectl, wait_for

from .aggregated_server import SYSTEM_NAMESPACE, Aggregator, service_account_kubeconfig
from .objects import add_event, create_task, token_kubeconfig, wait_for_events, wait_for_watch_row

SERVICE = "darkroom-aggregator"
APISERVICE = "v1.search.task.example.example.com"
PORT = 8443


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def netns_server(aggregator: Aggregator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """The server in a fresh network namespace, registered with the real API server; yields the admin's kubectl."""
    tmp = tmp_path_factory.mktemp("netns")
    n = os.getpid() % 200 + 20
    netns, host_if, peer_if = f"dvgagg{n}", f"dvgh{n}", f"dvgp{n}"
    host_ip, peer_ip = f"10.213.{n}.1", f"10.213.{n}.2"
    _ip("netns", "add", netns)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        _ip("link", "add", host_if, "type", "veth", "peer", "name", peer_if)
        _ip("link", "set", peer_if, "netns", netns)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("netns", "exec", netns, "ip", "addr", "add", f"{peer_ip}/30", "dev", peer_if)
        _ip("netns", "exec", netns, "ip", "link", "set", peer_if, "up")
        _ip("netns", "exec", netns, "ip", "link", "set", "lo", "up")

        api_port = int(aggregator.cluster.url.rsplit(":", 1)[1])
        relay = str(Path(__file__).with_name("relay.py"))
        for argv in (
            [sys.executable, relay, host_ip, str(api_port), "127.0.0.1", str(api_port)],
            ["ip", "netns", "exec", netns, sys.executable, relay, "127.0.0.1", str(api_port), host_ip, str(api_port)],
        ):
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE))
            assert procs[-1].stdout is not None and procs[-1].stdout.readline() == b"listening\n"

        cert, _ = self_signed(tmp / "certs", names=[f"{SERVICE}.{SYSTEM_NAMESPACE}.svc"])
        kubeconfig = service_account_kubeconfig(aggregator.cluster, aggregator.kubectl, tmp / "aggregator.kubeconfig")
        log = tmp / "aggregator.log"
        argv = ["ip", "netns", "exec", netns, sys.executable, "-m", "aggregator", "--kubeconfig", str(kubeconfig)]
        argv += ["--bind-address", peer_ip, "--secure-port", str(PORT), "--cert-dir", str(tmp / "certs"), "--bookmark-interval-s", "1"]
        with log.open("wb") as out:
            procs.append(subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT))

        meta = {"name": SERVICE, "namespace": SYSTEM_NAMESPACE}
        docs = [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": meta,
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": PORT}]},
            },
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": meta,
                "subsets": [{"addresses": [{"ip": peer_ip}], "ports": [{"name": "https", "port": PORT}]}],
            },
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": APISERVICE},
                "spec": {
                    "group": "search.task.example.example.com",
                    "version": "v1",
                    "groupPriorityMinimum": 1000,
                    "versionPriority": 15,
                    "caBundle": base64.b64encode(cert.read_bytes()).decode(),
                    "service": {**meta, "port": 443},
                },
            },
        ]
        kubectl = aggregator.kubectl
        kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump_all(docs))

        def available() -> bool:
            if procs[-1].poll() is not None:
                raise AssertionError(f"the aggregated server exited: {log.read_text()[-3000:]}")
            got = yaml.safe_load(kubectl.run("get", "apiservice", APISERVICE, "-o", "yaml").stdout)
            return any(c["type"] == "Available" and c["status"] == "True" for c in (got.get("status") or {}).get("conditions") or ())

        wait_for(available, timeout_s=90, message="the APIService Available on the real control plane")
        yield kubectl
    finally:
        subprocess.run(
            ["kubectl", "--kubeconfig", str(aggregator.cluster.kubeconfig), "delete", "apiservice", APISERVICE, "--ignore-not-found"],
            check=False,
            capture_output=True,
        )
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)
            if proc.stdout is not None:
                proc.stdout.close()
        subprocess.run(["ip", "link", "del", host_if], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", netns], check=False, capture_output=True)


@pytest.fixture
def kubectl_alice(aggregator: Aggregator, netns_server: Kubectl, tmp_path: Path) -> Kubectl:
    return token_kubeconfig(
        tmp_path / "alice.kubeconfig", server=aggregator.cluster.url, ca=aggregator.cluster.ca_path, token=aggregator.token("alice")
    )


def test_kubectl_through_kube_apiserver(aggregator: Aggregator, team: str, kubectl_alice: Kubectl) -> None:
    urgent = create_task(aggregator, team, "urgent", priority=9)
    create_task(aggregator, team, "later", priority=2)
    add_event(aggregator, urgent, "TaskCreated", seconds_ago=45)
    wait_for_events(aggregator, team, "urgent", 1)
    # kube's discovery manager reads the server's discovery on its own schedule (the 406 fallback to the
    # group-version document, aggregator/app.py); kubectl finds `ct` once it has.
    wait_for(
        lambda: "urgent" in kubectl_alice.run("get", "ct", "-n", team, check=False).stdout, timeout_s=60, message="urgent through kube"
    )

    table = kubectl_alice.run("get", "combinedtasks", "-n", team).stdout.splitlines()
    assert table[0].split() == ["NAME", "PRIORITY", "DEADLINE", "STATE", "EVENTS", "LAST", "EVENT", "AGE"]
    assert [row.split()[:5] for row in table[1:]] == [
        ["later", "2", "2030-01-01T00:00:00Z", "Pending", "0"],
        ["urgent", "9", "2030-01-01T00:00:00Z", "Pending", "1"],
    ]
    selected = kubectl_alice.run("get", "ct", "-n", team, "--field-selector", "spec.priority=9", "-o", "name").stdout.split()
    assert selected == ["combinedtask.search.task.example.example.com/urgent"]
    listed = yaml.safe_load(kubectl_alice.run("get", "combinedtasks", "-n", team, "-o", "yaml").stdout)
    by_name = {i["metadata"]["name"]: i for i in listed["items"]}
    assert [e["reason"] for e in by_name["urgent"]["status"]["events"]] == ["TaskCreated"]

    # alice's identity reaches the server through kube's front proxy: elsewhere she may not list.
    other = f"ct-other-{uuid.uuid4().hex[:6]}"
    aggregator.kubectl.run("create", "namespace", other)
    try:
        refused = kubectl_alice.run("get", "ct", "-n", other, check=False)
        assert refused.returncode != 0 and "Forbidden" in refused.stderr and 'User "alice"' in refused.stderr
    finally:
        aggregator.kubectl.run("delete", "namespace", other, "--wait=false")

    watch = kubectl_alice.popen("get", "ct", "-n", team, "-w")
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().split()[:2] == ["NAME", "PRIORITY"]
        assert {watch.stdout.readline().split()[0] for _ in range(2)} == {"urgent", "later"}
        add_event(aggregator, urgent, "TaskUpdated", seconds_ago=5)
        wait_for_watch_row(watch.stdout, "urgent", "2", "TaskUpdated")
    finally:
        watch.kill()
        watch.communicate(timeout=10)
