"""The reconciler's and the API's real requests stay within their RBAC rules — and use every verb granted.

One scenario on a private cluster of each kind with ``--audit-log`` (devcluster's own log; on the real
control plane kube-apiserver's audit log, and real RBAC: each component authenticates as its
ServiceAccount with a TokenRequest token, so a missing rule is a 403): the rendered base is applied with kubectl
(namespace, CRDs, ServiceAccounts, RBAC, Deployments, ...); then the two real entry points run
with the environment their Deployments give them (fieldRefs and secretKeyRefs resolved the way the
kubelet would; only the bind address is loopback instead of the pod IP, and the lease timings are
short): ``python -m darkroom_operator`` with leader election on, and gunicorn with
``backend/server/gunicorn_conf.py``. Through the HTTP API (bearer token) the test creates a WebFolder and
an S3 Darkroom (credentials Secret), scales one, switches the S3 one to a WebFolder (Secret
removed), creates, finishes and deletes a Task (finalizer added and removed by the reconciler,
lifecycle Events), creates two Postgresqls (one with a password the API writes to its Secret, one
whose password the reconciler generates and the API then replaces), answers 412 to a stale If-Match,
deletes them (the reconciler's finalizer), deletes both Darkrooms, reads every list endpoint, and stops
both processes (the Lease is released).

Every audit record is attributed by User-Agent (``darkroom-operator/``,
``darkroom-control-panel-api/``) and checked against the rules the rendered bindings give that
component's ServiceAccount (:func:`tests.deploy.manifests.grants`): a server-side apply that
created its object (201) needs ``create`` as well as ``patch``, as kube-apiserver authorizes it.
Then the converse: every (group, resource, verb) granted was used, except the ones listed in
:data:`GRANTED_BUT_NOT_REQUESTED` with the reason.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from support import ROOT, ClusterProcess, Kubectl, as_dict, free_port, read_audit_log, wait_for

from .manifests import API_SA, NAMESPACE, OPERATOR_SA, Grants, Request, grants, one, render
from .running import UNREADABLE_CHILD, Process, http, login_cookie, page, resolve_env, service_account_kubeconfig, status_of

OPERATOR_AGENT, API_AGENT = "darkroom-operator/", "darkroom-control-panel-api/"
TEAM = "team-a"
POD_NAMES = {"darkroom-operator": "darkroom-operator-7c9d8-abcde", "darkroom-api": "darkroom-api-5f6b7-fghij"}
SHORT_LEASE = {
    "DARKROOM_OPERATOR_LEASE_DURATION_S": "4",
    "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "3",
    "DARKROOM_OPERATOR_RETRY_PERIOD_S": "0.5",
}
# (component, apiGroup, resource, verb): granted on purpose although no request in the scenario uses it.
GRANTED_BUT_NOT_REQUESTED = {
    # Not a request: the OwnerReferencesPermissionEnforcement admission plugin checks it when the
    # reconciler sets blockOwnerDeletion on a child's ownerReference to a Darkroom.
    ("operator", "deployments.example.com", "darkrooms/finalizers", "update"),
    ("operator", "database.db.example.com", "postgresqls/finalizers", "update"),
}


def audit_requests(path: Path, agent: str) -> list[tuple[Request, int]]:
    return [
        (Request(r.verb, r.api_group, r.resource, r.subresource, r.namespace, r.name), r.code)
        for r in read_audit_log(path)
        if r.user_agent.startswith(agent)
    ]


def required(request: Request, code: int) -> list[Request]:
    """What RBAC checks for this request: a server-side apply that created its object also needs create."""
    if request.verb == "patch" and code == 201:
        return [request, Request("create", request.api_group, request.resource, request.subresource, request.namespace, request.name)]
    return [request]


def denied(requests: list[tuple[Request, int]], granted: Grants) -> list[str]:
    return sorted({str(need) for request, code in requests for need in required(request, code) if not granted.allows(need)})


def unused(component: str, requests: list[tuple[Request, int]], granted: Grants) -> list[str]:
    used = {
        (need.api_group, need.resource + (f"/{need.subresource}" if need.subresource else ""), need.verb)
        for request, code in requests
        for need in required(request, code)
    }
    missing = []
    for rule in granted.all_rules():
        for group in rule.api_groups:
            for resource in rule.resources:
                for verb in rule.verbs:
                    if (group, resource, verb) not in used and (component, group, resource, verb) not in GRANTED_BUT_NOT_REQUESTED:
                        missing.append(f"{verb} {group or 'core'} {resource}")
    return sorted(missing)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in reversed(started):
        process.stop()


def _custom_object(custom: client.CustomObjectsApi, kind: tuple[str, str, str], name: str) -> dict[str, Any] | None:
    """One of TEAM's custom objects of ``kind`` (group, version, plural); None while the server answers an error."""
    group, version, plural = kind
    try:
        return as_dict(custom.get_namespaced_custom_object(group, version, TEAM, plural, name))
    except client.ApiException:
        return None


@pytest.mark.kubectl
@pytest.mark.slow
def test_real_requests_stay_within_the_rendered_rbac(
    fresh_kube: Callable[..., ClusterProcess], tmp_path: Path, processes: list[Process]
) -> None:
    from kubernetes import config

    audit = tmp_path / "audit.jsonl"
    cluster = fresh_kube(audit_log=audit)
    kubectl = Kubectl(cluster.kubeconfig, tmp_path / "kubectl-cache")
    kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-k", str(ROOT / "deploy" / "base"))
    kubectl.run(
        "wait", "--for=condition=Established", "--timeout=30s", "crd/darkrooms.deployments.example.com", "crd/tasks.example.example.com"
    )
    kubectl.run("create", "namespace", TEAM)
    docs = render("base")

    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "KUBECONFIG", "PORT"))}
    base_env["PYTHONUNBUFFERED"] = "1"
    # Each component authenticates as its ServiceAccount (on the real control plane RBAC then decides).
    as_operator = service_account_kubeconfig(cluster, NAMESPACE, OPERATOR_SA, tmp_path / "operator.kubeconfig")
    as_api = service_account_kubeconfig(cluster, NAMESPACE, API_SA, tmp_path / "api.kubeconfig")
    token = secrets.token_hex(16)

    operator_container = one(docs, "Deployment", "darkroom-operator")["spec"]["template"]["spec"]["containers"][0]
    operator_env = resolve_env(operator_container, pod=POD_NAMES["darkroom-operator"], secret_values={})
    health_port = free_port()
    operator_env.update({"DARKROOM_OPERATOR_HEALTH_HOST": "127.0.0.1", "DARKROOM_OPERATOR_HEALTH_PORT": str(health_port), **SHORT_LEASE})
    assert operator_container["command"][0] == "python"
    processes.append(
        Process(
            "reconciler",
            [sys.executable, *operator_container["command"][1:]],
            {**base_env, **operator_env, "KUBECONFIG": str(as_operator)},
            tmp_path / "operator.log",
        )
    )

    api_container = one(docs, "Deployment", "darkroom-api")["spec"]["template"]["spec"]["containers"][0]
    api_env = resolve_env(
        api_container, pod=POD_NAMES["darkroom-api"], secret_values={"api-token": token, "secret-key": secrets.token_hex(16)}
    )
    api_port = free_port()
    api_env.update({"DARKROOM_API_HOST": "127.0.0.1", "PORT": str(api_port)})
    assert api_container["command"][0] == "gunicorn"
    processes.append(
        Process(
            "API",
            [sys.executable, "-m", "gunicorn", *api_container["command"][1:]],
            {**base_env, **api_env, "KUBECONFIG": str(as_api)},
            tmp_path / "api.log",
        )
    )
    reconciler, api_process = processes
    base = f"http://127.0.0.1:{api_port}"
    wait_for(lambda: api_process.alive() and status_of(base + "/readyz") == 200, timeout_s=60, message="the API's /readyz")
    wait_for(lambda: reconciler.alive() and status_of(f"http://127.0.0.1:{health_port}/readyz") == 200, timeout_s=60, message="/readyz")

    kube = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    try:
        coordination, custom = client.CoordinationV1Api(kube), client.CustomObjectsApi(kube)
        apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)

        def holder() -> str:
            try:
                return str(coordination.read_namespaced_lease("darkroom-operator", NAMESPACE).spec.holder_identity or "")
            except client.ApiException:
                return ""

        wait_for(lambda: holder() == POD_NAMES["darkroom-operator"], timeout_s=30, message="the reconciler to lead")

        def darkroom(name: str) -> dict[str, Any] | None:
            return _custom_object(custom, ("deployments.example.com", "v1alpha1", "darkrooms"), name)

        def ready(name: str) -> bool:
            found = darkroom(name)
            conditions = ((found or {}).get("status") or {}).get("conditions") or []
            return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

        def secret_names() -> set[str]:
            return {s.metadata.name for s in core.list_namespaced_secret(TEAM).items}

        webfolder = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": ["web"]}
        code, body = http("POST", base + "/darkrooms", token, {"name": "web", "namespace": TEAM, **webfolder})
        assert code == 201, body
        s3_source = {
            "type": "S3",
            "bucket": "demo-images",
            "region": "eu-west-1",
            "accessKey": "AKIDEXAMPLE",
            "secretKey": "wJalrEXAMPLEKEY",
        }
        code, body = http("POST", base + "/darkrooms", token, {"name": "s3", "namespace": TEAM, "source": s3_source, "subDomains": ["s3"]})
        assert code == 201, body
        wait_for(lambda: ready("web") and ready("s3"), timeout_s=60, message="both Darkrooms Ready")
        assert {d.metadata.name for d in apps.list_namespaced_deployment(TEAM).items} == {"web", "s3"}
        assert "s3-s3-credentials" in secret_names()

        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"replicas": 2}, "application/merge-patch+json")
        assert code == 200, body
        wait_for(lambda: apps.read_namespaced_deployment("web", TEAM).spec.replicas == 2, timeout_s=30, message="web scaled")
        # A newer Darkroom loses its only host to the older "web": its Ingress is withdrawn. (The claim's age
        # is creationTimestamp, in whole seconds: wait one so that "late" is unambiguously newer.)
        time.sleep(1.1)
        code, body = http("POST", base + "/darkrooms", token, {"name": "late", "namespace": TEAM, **webfolder, "subDomains": ["late"]})
        assert code == 201, body
        wait_for(lambda: ready("late"), timeout_s=60, message="late Ready")
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"subDomains": ["web", "late"]}, "application/merge-patch+json")
        assert code == 200, body
        networking = client.NetworkingV1Api(kube)
        wait_for(lambda: "late" not in {i.metadata.name for i in networking.list_namespaced_ingress(TEAM).items}, timeout_s=30)
        switch = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/s3-copy"}}
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/s3", token, switch, "application/merge-patch+json")
        assert code == 200, body
        wait_for(lambda: "s3-s3-credentials" not in secret_names(), timeout_s=30, message="the credentials Secret removed")

        task = {"name": "notes", "namespace": TEAM, "priority": 3, "details": "Write the notes.", "deadline": "2030-01-01T00:00:00Z"}
        code, body = http("POST", base + "/tasks", token, task)
        assert code == 201, body

        def task_object() -> dict[str, Any] | None:
            return _custom_object(custom, ("example.example.com", "v1", "tasks"), "notes")

        def reasons() -> set[str]:
            return {e.reason for e in core.list_namespaced_event(TEAM).items}

        wait_for(lambda: "TaskCreated" in reasons() and (task_object() or {}).get("metadata", {}).get("finalizers"), timeout_s=30)
        code, body = http("PATCH", base + f"/tasks/{TEAM}/notes", token, {"state": "Finished"}, "application/merge-patch+json")
        assert code == 200, body
        wait_for(lambda: "TaskUpdated" in reasons(), timeout_s=30, message="TaskUpdated")
        code, body = http("PATCH", base + f"/tasks/{TEAM}/notes", token, {"priority": 4}, "application/merge-patch+json", if_match='"1"')
        assert code == 412, body
        code, body = http("DELETE", base + f"/tasks/{TEAM}/notes", token)
        assert code in (202, 204), body
        wait_for(lambda: task_object() is None, timeout_s=30, message="the Task gone (finalizer removed)")
        assert "TaskDeleted" in reasons()

        # Postgresqls: one with a given password (the API writes its Secret), one whose password the
        # reconciler generates and the API then replaces (a JSON patch of the reconciler's Secret).
        def postgresql(name: str) -> dict[str, Any] | None:
            return _custom_object(custom, ("database.db.example.com", "v1", "postgresqls"), name)

        def running(name: str) -> bool:
            return bool(((postgresql(name) or {}).get("status") or {}).get("phase") == "Running")

        code, body = http("POST", base + "/postgresqls", token, {"name": "given", "namespace": TEAM, "password": "pw-given-123"})
        assert code == 201, body
        code, body = http("POST", base + "/postgresqls", token, {"name": "made", "namespace": TEAM, "deletionPolicy": "Delete"})
        assert code == 201, body
        wait_for(lambda: running("given") and running("made"), timeout_s=60, message="both Postgresqls Running")
        # The dashboard's detail pages read each child by name (the children panels).
        cookie = login_cookie(base, token)
        assert cookie is not None
        for path in (f"/ui/darkrooms/{TEAM}/web", f"/ui/postgresqls/{TEAM}/made"):
            code, html = page(base + path, cookie)
            assert code == 200 and UNREADABLE_CHILD not in html and "not created yet" not in html, (path, code, html[-2000:])
        assert {"given-credentials", "made-credentials"} <= secret_names()
        code, body = http("GET", base + f"/postgresqls/{TEAM}/made", token)
        assert code == 200, body
        code, body = http("PUT", base + f"/postgresqls/{TEAM}/made", token, {**body, "password": "pw-replaced-456"})
        assert code == 200, body
        code, body = http(
            "PATCH", base + f"/postgresqls/{TEAM}/made", token, {"storage": {"size": "2Gi"}}, "application/merge-patch+json", if_match='"1"'
        )
        assert code == 412, body
        for name in ("given", "made"):
            code, body = http("DELETE", base + f"/postgresqls/{TEAM}/{name}", token)
            assert code in (202, 204), body
        wait_for(lambda: postgresql("given") is None and postgresql("made") is None, timeout_s=60, message="Postgresqls gone")

        # A write with an If-Match the cache does not know makes the API re-read the object from the server first.
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"replicas": 1}, "application/merge-patch+json", if_match='"1"')
        assert code == 412, body
        # A dashboard session: logging out revokes it in the sessions ConfigMap every replica watches.
        cookie = login_cookie(base, token)
        assert cookie is not None
        assert status_of(base + "/logout", method="POST", headers={"Cookie": cookie}, timeout_s=30) == 204
        assert status_of(base + "/metrics", headers={"Cookie": cookie}, timeout_s=30) == 401
        for path in ("/darkrooms", "/tasks", "/combinedtasks", "/postgresqls", "/namespaces", f"/darkrooms/{TEAM}/web", "/metrics"):
            code, body = http("GET", base + path, token)
            assert code == 200, (path, body)
        for name in ("web", "s3", "late"):
            code, body = http("DELETE", base + f"/darkrooms/{TEAM}/{name}", token)
            assert code in (202, 204), body
        wait_for(lambda: all(darkroom(n) is None for n in ("web", "s3", "late")), timeout_s=30, message="Darkrooms deleted")
    finally:
        kube.close()

    assert reconciler.stop() == 0
    assert api_process.stop() == 0

    operator_requests = audit_requests(audit, OPERATOR_AGENT)
    api_requests = audit_requests(audit, API_AGENT)
    assert len(operator_requests) > 20 and len(api_requests) > 10, "the audit log attributes requests by User-Agent"
    operator_grants, api_grants = grants(docs, OPERATOR_SA), grants(docs, API_SA)
    for component, requests, granted in (("operator", operator_requests, operator_grants), ("api", api_requests, api_grants)):
        refused = sorted({str(request) for request, code in requests if code == 403})
        assert not refused, f"the API server refused the {component}'s requests: {refused}"
        forbidden = denied(requests, granted)
        assert not forbidden, f"the {component} made requests its RBAC forbids: {forbidden}"
        extra = unused(component, requests, granted)
        assert not extra, f"granted to the {component} but never used (least privilege): {extra}"
    # The reconciler gets a Postgresql's password Secret (never lists or watches Secrets) and creates a generated one.
    assert {r.verb for r, _ in operator_requests if r.resource == "secrets"} == {"get", "create"}
    assert {r.verb for r, _ in api_requests if r.resource == "secrets"} == {"create", "patch", "delete"}
