"""The deploy/ RBAC is exactly enough on a real control plane: every rule is needed.

tests/deploy/test_rbac_audit.py shows the components need *nothing more* than their rules (on the real
control plane, as their ServiceAccounts, with no request refused). This module shows they need
*nothing less*: on a private real cluster (kube-apiserver with RBAC, the
OwnerReferencesPermissionEnforcement admission plugin, its audit log) with deploy/base applied, each
rule of the reconciler's and the API's Roles is removed in turn, the component runs its scenario as
its ServiceAccount, and something fails — a step of the scenario does not happen *and* the audit log
shows a request of that ServiceAccount refused with 403. The rule is put back afterwards (and a
SubjectAccessReview confirms each change took effect before the scenario starts).

Scenarios: the reconciler (leader election on) turns an admin-created Darkroom Ready with its four
children and an Event, handles a Task (finalizer, labels, status, TaskCreated, then TaskDeleted when
it is deleted), turns an admin-created Postgresql Running (generated password Secret, StatefulSet,
Services, ConfigMap; finalizer) and lets it go when it is deleted, and releases its Lease on
SIGTERM (the Lease is deleted first, so it must create it);
the API (gunicorn, bearer token) becomes ready, creates an S3 Darkroom (credentials Secret), answers 412 to a stale If-Match after
re-reading the object, switches the Darkroom to a WebFolder (Secret removed), lists tasks with their events and the
namespaces, creates and deletes a Task, deletes the Darkroom, and logs a dashboard session in and
out (the sessions ConfigMap is deleted first, so the logout must create it; the old cookie must
then be refused). Runs on the real control plane only:
devcluster authorizes nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, ClusterProcess, Kubectl, as_dict, free_port, read_audit_log, wait_for

from .manifests import API_SA, NAMESPACE, OPERATOR_SA, one, render
from .running import UNREADABLE_CHILD, Process, http, login_cookie, page, resolve_env, service_account_kubeconfig, status_of

TEAM = "team-rbac"
# Each step takes about a second on the real control plane. With every rule a slow machine gets the
# longer wait; without one, a step that never happens costs the shorter one (the 403 in the audit log is
# what proves the cause).
STEP_TIMEOUT_S = 30.0
WITHOUT_A_RULE_TIMEOUT_S = 10.0
POD_NAMES = {OPERATOR_SA: "darkroom-operator-7c9d8-abcde", API_SA: "darkroom-api-5f6b7-fghij"}
SHORT_LEASE = {
    "DARKROOM_OPERATOR_LEASE_DURATION_S": "4",
    "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "3",
    "DARKROOM_OPERATOR_RETRY_PERIOD_S": "0.5",
}
ROLES: tuple[tuple[str, str, str], ...] = (
    ("ClusterRole", "darkroom-operator", OPERATOR_SA),
    ("Role", "darkroom-operator-leader-election", OPERATOR_SA),
)
ROLES += (("ClusterRole", "darkroom-api", API_SA),)


@dataclass(frozen=True)
class Rule:
    """One rule of one of the rendered Roles, and who holds it."""

    role_kind: str
    role_name: str
    index: int
    body: dict[str, Any]
    service_account: str

    def __str__(self) -> str:
        names = f" [{','.join(self.body['resourceNames'])}]" if self.body.get("resourceNames") else ""
        groups = ",".join(g or "core" for g in self.body["apiGroups"])
        return f"{self.role_name}#{self.index} {groups} {','.join(self.body['resources'])}{names}: {','.join(self.body['verbs'])}"


def rules() -> list[Rule]:
    docs = render("base")
    return [
        Rule(kind, name, index, rule, account) for kind, name, account in ROLES for index, rule in enumerate(one(docs, kind, name)["rules"])
    ]


@dataclass
class RbacCluster:
    cluster: ClusterProcess
    audit: Path
    kubeconfigs: dict[str, Path]
    admin: Any  # kubernetes.client.ApiClient
    tmp: Path


@pytest.fixture(scope="module")
def rbac(realcluster_required: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RbacCluster]:
    from kubernetes import config
    from support import RealclusterProcess

    tmp = tmp_path_factory.mktemp("rbac-real")
    audit = tmp / "audit.jsonl"
    cluster = RealclusterProcess(tmp / "cluster", extra_args=["--pod-ready-delay", "300ms", "--audit-log", str(audit)]).start()
    try:
        kubectl = Kubectl(cluster.kubeconfig, tmp / "kubectl-cache")
        kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-k", str(ROOT / "deploy" / "base"))
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=30s", "crd/darkrooms.deployments.example.com", "crd/tasks.example.example.com"
        )
        kubectl.run("create", "namespace", TEAM)
        kubeconfigs = {
            account: service_account_kubeconfig(cluster, NAMESPACE, account, tmp / f"{account}.kubeconfig")
            for account in (OPERATOR_SA, API_SA)
        }
        admin = config.new_client_from_config(config_file=str(cluster.kubeconfig))
        yield RbacCluster(cluster=cluster, audit=audit, kubeconfigs=kubeconfigs, admin=admin, tmp=tmp)
        admin.close()
    finally:
        cluster.stop()


# -- the scenarios ---------------------------------------------------------------------------------


class Refusals:
    """Whether ``account`` has had a request refused (403) since this was made: reads only the audit log's new lines."""

    def __init__(self, audit: Path, account: str) -> None:
        self.audit = audit
        self.user = f"system:serviceaccount:{NAMESPACE}:{account}"
        self.offset = audit.stat().st_size if audit.exists() else 0
        self.seen = False

    def __call__(self) -> bool:
        if self.seen or not self.audit.exists():
            return self.seen
        with self.audit.open("rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line being written is read next time
        self.offset += len(complete)
        for line in complete.splitlines():
            if self.user.encode() in line:
                entry = json.loads(line)
                if (entry.get("user") or {}).get("username") == self.user and (entry.get("responseStatus") or {}).get("code") == 403:
                    self.seen = True
        return self.seen


class Steps:
    """Runs named waits; the first one that does not happen is recorded and ends the scenario.

    ``refused`` (a rule removed): a wait ends as soon as the component has had a request refused — the step
    it waits for needed what was refused — instead of after the whole timeout (24 rules x 10 s in CI)."""

    def __init__(self, process: Process, timeout_s: float, refused: Callable[[], bool] | None = None) -> None:
        self.process = process
        self.timeout_s = timeout_s
        self.refused = refused
        self.problems: list[str] = []

    def wait(self, what: str, check: Callable[[], object]) -> None:
        def happened() -> object:
            if self.refused is not None and self.refused():
                raise AssertionError(f"{what} did not happen: a request of the component was refused (403)")
            return self.process.alive() and check()

        try:
            wait_for(happened, timeout_s=self.timeout_s, interval_s=0.1, message=what)
        except AssertionError as e:
            self.problems.append(str(e).splitlines()[0])
            raise StopScenario from e

    def expect(self, what: str, ok: bool, detail: object = "") -> None:
        if not ok:
            self.problems.append(f"{what}: {detail}")
            raise StopScenario


class StopScenario(Exception):
    pass


def component_env(account: str, kubeconfig: Path, extra: dict[str, str]) -> dict[str, str]:
    docs = render("base")
    container = one(docs, "Deployment", account)["spec"]["template"]["spec"]["containers"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "KUBECONFIG", "PORT"))}
    env.update(resolve_env(container, pod=POD_NAMES[account], secret_values=extra))
    env.update({"PYTHONUNBUFFERED": "1", "KUBECONFIG": str(kubeconfig)})
    return env


def run_operator_scenario(rbac: RbacCluster, timeout_s: float, refused: Callable[[], bool] | None = None) -> list[str]:
    from kubernetes import client

    custom, core = client.CustomObjectsApi(rbac.admin), client.CoreV1Api(rbac.admin)
    coordination = client.CoordinationV1Api(rbac.admin)
    suffix = uuid.uuid4().hex[:6]
    health = free_port()
    env = component_env(OPERATOR_SA, rbac.kubeconfigs[OPERATOR_SA], {})
    env.update({"DARKROOM_OPERATOR_HEALTH_HOST": "127.0.0.1", "DARKROOM_OPERATOR_HEALTH_PORT": str(health), **SHORT_LEASE})
    try:  # a fresh start: the elector must create its Lease, not only take over a released one
        coordination.delete_namespaced_lease("darkroom-operator", NAMESPACE)
    except client.ApiException as e:
        if e.status != 404:
            raise
    process = Process("reconciler", [sys.executable, "-m", "darkroom_operator"], env, rbac.tmp / f"operator-{suffix}.log")
    steps = Steps(process, timeout_s, refused)

    def holder() -> str:
        try:
            return str(coordination.read_namespaced_lease("darkroom-operator", NAMESPACE).spec.holder_identity or "")
        except client.ApiException:
            return ""

    def conditions(group: str, version: str, plural: str, name: str) -> dict[str, str]:
        try:
            found = as_dict(custom.get_namespaced_custom_object(group, version, TEAM, plural, name))
        except client.ApiException:
            return {}
        return {c["type"]: c["status"] for c in (found.get("status") or {}).get("conditions") or []}

    def task() -> dict[str, Any] | None:
        try:
            found = as_dict(custom.get_namespaced_custom_object("example.example.com", "v1", TEAM, "tasks", f"t-{suffix}"))
            return found
        except client.ApiException:
            return None

    def reasons(name: str) -> set[str]:
        return {e.reason for e in core.list_namespaced_event(TEAM, field_selector=f"involvedObject.name={name}").items}

    try:
        steps.wait("the reconciler's /readyz", lambda: status_of(f"http://127.0.0.1:{health}/readyz") == 200)
        steps.wait("the reconciler to lead", lambda: holder() == POD_NAMES[OPERATOR_SA])
        darkroom = {
            "apiVersion": "deployments.example.com/v1alpha1",
            "kind": "Darkroom",
            "metadata": {"name": f"dr-{suffix}", "namespace": TEAM},
            "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": [f"dr-{suffix}"]},
        }
        custom.create_namespaced_custom_object("deployments.example.com", "v1alpha1", TEAM, "darkrooms", darkroom)
        overdue_task = {
            "apiVersion": "example.example.com/v1",
            "kind": "Task",
            "metadata": {"name": f"t-{suffix}", "namespace": TEAM},
            "spec": {"priority": 3, "deadline": "2001-01-01T00:00:00Z"},
        }
        custom.create_namespaced_custom_object("example.example.com", "v1", TEAM, "tasks", overdue_task)
        steps.wait(
            "the Darkroom Ready",
            lambda: conditions("deployments.example.com", "v1alpha1", "darkrooms", f"dr-{suffix}").get("Ready") == "True",
        )
        steps.wait("an Event about the Darkroom", lambda: reasons(f"dr-{suffix}"))
        steps.wait(
            "the Task's finalizer and labels",
            lambda: (task() or {}).get("metadata", {}).get("finalizers") and task()["metadata"].get("labels"),
        )
        steps.wait("the Task Overdue", lambda: conditions("example.example.com", "v1", "tasks", f"t-{suffix}").get("Overdue") == "True")
        steps.wait("TaskCreated", lambda: "TaskCreated" in reasons(f"t-{suffix}"))
        custom.delete_namespaced_custom_object("example.example.com", "v1", TEAM, "tasks", f"t-{suffix}")
        steps.wait("the Task gone", lambda: task() is None)
        steps.expect("TaskDeleted recorded", "TaskDeleted" in reasons(f"t-{suffix}"))
        database = {
            "apiVersion": "database.db.example.com/v1",
            "kind": "Postgresql",
            "metadata": {"name": f"pg-{suffix}", "namespace": TEAM},
            "spec": {"deletionPolicy": "Delete"},
        }
        custom.create_namespaced_custom_object("database.db.example.com", "v1", TEAM, "postgresqls", database)
        steps.wait(
            "the Postgresql Ready",
            lambda: conditions("database.db.example.com", "v1", "postgresqls", f"pg-{suffix}").get("Ready") == "True",
        )
        custom.delete_namespaced_custom_object("database.db.example.com", "v1", TEAM, "postgresqls", f"pg-{suffix}")
        steps.wait(
            "the Postgresql gone (finalizer removed)",
            lambda: not conditions("database.db.example.com", "v1", "postgresqls", f"pg-{suffix}"),
        )
        steps.expect("VolumesDeleted recorded", "VolumesDeleted" in reasons(f"pg-{suffix}"))
        code = process.stop()
        steps.expect("a clean exit that releases the Lease", code == 0 and holder() == "", f"exit {code}, holder {holder()!r}")
    except StopScenario:
        pass
    finally:
        process.stop()
    return steps.problems


def run_api_scenario(rbac: RbacCluster, timeout_s: float, refused: Callable[[], bool] | None = None) -> list[str]:
    from kubernetes import client

    try:  # a fresh start: the first logout must create the sessions ConfigMap
        client.CoreV1Api(rbac.admin).delete_namespaced_config_map("darkroom-api-sessions", NAMESPACE)
    except client.ApiException as e:
        if e.status != 404:
            raise
    suffix = uuid.uuid4().hex[:6]
    token, port = secrets.token_hex(16), free_port()
    env = component_env(API_SA, rbac.kubeconfigs[API_SA], {"api-token": token, "secret-key": secrets.token_hex(16)})
    env.update({"DARKROOM_API_HOST": "127.0.0.1", "PORT": str(port)})
    argv = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "backend" / "server" / "gunicorn_conf.py"), "backend.server.wsgi:app"]
    process = Process("API", argv, env, rbac.tmp / f"api-{suffix}.log")
    steps = Steps(process, timeout_s, refused)
    base = f"http://127.0.0.1:{port}"
    name = f"s3-{suffix}"
    item = f"{base}/darkrooms/{TEAM}/{name}"
    merge = "application/merge-patch+json"
    try:
        steps.wait("the API's /readyz", lambda: status_of(base + "/readyz") == 200)
        source = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "accessKey": "AKIDEXAMPLE", "secretKey": "wJalrEXAMPLEKEY"}
        code, body = http("POST", base + "/darkrooms", token, {"name": name, "namespace": TEAM, "source": source, "subDomains": [name]})
        steps.expect("POST an S3 Darkroom", code == 201, (code, body))
        code, body = http("PATCH", item, token, {"replicas": 2}, merge, if_match='"1"')
        steps.expect("412 for a stale If-Match (re-read from the server)", code == 412, (code, body))
        code, body = http("PATCH", item, token, {"source": {"type": "WebFolder", "baseUrl": "https://example.com/x"}}, merge)
        steps.expect("switch to a WebFolder (Secret removed)", code == 200, (code, body))
        code, body = http("POST", base + "/postgresqls", token, {"name": f"pg-{suffix}", "namespace": TEAM, "password": "pw-rbac-789"})
        steps.expect("POST a Postgresql with a password", code == 201, (code, body))
        viewer = login_cookie(base, token)
        steps.expect("log in to view detail pages", viewer is not None)
        for path in (f"/ui/darkrooms/{TEAM}/{name}", f"/ui/postgresqls/{TEAM}/pg-{suffix}"):
            code, html = page(base + path, str(viewer))  # no reconciler here: every child is "not created yet" (a 404)
            steps.expect(f"{path} reads every child", code == 200 and UNREADABLE_CHILD not in html, (code, html[-1500:]))
        code, body = http("DELETE", f"{base}/postgresqls/{TEAM}/pg-{suffix}", token)
        steps.expect("DELETE the Postgresql", code in (202, 204), (code, body))
        for path in ("/combinedtasks", "/namespaces", "/postgresqls"):
            code, body = http("GET", base + path, token)
            steps.expect(f"GET {path}", code == 200, (code, body))
        task = {"name": f"t-{suffix}", "namespace": TEAM, "priority": 1, "deadline": "2030-01-01T00:00:00Z"}
        code, body = http("POST", base + "/tasks", token, task)
        steps.expect("POST a Task", code == 201, (code, body))
        code, body = http("DELETE", f"{base}/tasks/{TEAM}/t-{suffix}", token)
        steps.expect("DELETE the Task", code in (202, 204), (code, body))
        code, body = http("DELETE", item, token)
        steps.expect("DELETE the Darkroom", code in (202, 204), (code, body))
        session = login_cookie(base, token)
        steps.expect("log in", session is not None)
        steps.expect("log out", status_of(base + "/logout", method="POST", headers={"Cookie": str(session)}, timeout_s=10) == 204)
        steps.expect("the logged-out session refused", status_of(base + "/metrics", headers={"Cookie": str(session)}, timeout_s=10) == 401)
    except StopScenario:
        pass
    finally:
        process.stop()
    return steps.problems


SCENARIOS = {OPERATOR_SA: run_operator_scenario, API_SA: run_api_scenario}


def refused(rbac: RbacCluster, account: str, skip: int) -> list[str]:
    user = f"system:serviceaccount:{NAMESPACE}:{account}"
    return sorted(
        {
            f"{r.verb} {r.api_group or 'core'} {r.resource}{'/' + r.subresource if r.subresource else ''}"
            for r in read_audit_log(rbac.audit)[skip:]
            if r.user == user and r.code == 403
        }
    )


# -- the role edits ----------------------------------------------------------------------------------


def allowed(rbac: RbacCluster, rule: Rule) -> bool:
    """A SubjectAccessReview for the rule's first (group, resource, verb, name) as its ServiceAccount."""
    from kubernetes import client

    resource, _, subresource = rule.body["resources"][0].partition("/")
    namespace = NAMESPACE if rule.role_kind == "Role" else ("" if resource == "namespaces" else TEAM)
    review = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=f"system:serviceaccount:{NAMESPACE}:{rule.service_account}",
            groups=["system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}", "system:authenticated"],
            resource_attributes=client.V1ResourceAttributes(
                group=rule.body["apiGroups"][0],
                resource=resource,
                subresource=subresource or None,
                verb=rule.body["verbs"][0],
                namespace=namespace or None,
                name=(rule.body.get("resourceNames") or [None])[0],
            ),
        )
    )
    return bool(client.AuthorizationV1Api(rbac.admin).create_subject_access_review(review).status.allowed)


def edit_role(rbac: RbacCluster, rule: Rule, operations: list[dict[str, Any]]) -> None:
    """A JSON patch of the rule's Role, as the admin (the official client sends a list body as a JSON patch)."""
    from kubernetes import client

    api = client.RbacAuthorizationV1Api(rbac.admin)
    if rule.role_kind == "Role":
        api.patch_namespaced_role(rule.role_name, NAMESPACE, operations)
    else:
        api.patch_cluster_role(rule.role_name, operations)


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_scenario_passes_with_every_rule(rbac: RbacCluster) -> None:
    for account, scenario in SCENARIOS.items():
        skip = len(read_audit_log(rbac.audit))
        assert scenario(rbac, STEP_TIMEOUT_S) == [], account
        assert refused(rbac, account, skip) == [], account


@pytest.mark.slow
@pytest.mark.parametrize("rule", rules(), ids=str)
def test_each_rule_is_needed(rbac: RbacCluster, rule: Rule) -> None:
    path = f"/rules/{rule.index}"
    edit_role(rbac, rule, [{"op": "test", "path": path, "value": rule.body}, {"op": "remove", "path": path}])
    try:
        wait_for(lambda: not allowed(rbac, rule), timeout_s=10, message="the removal to take effect")
        skip = len(read_audit_log(rbac.audit))
        problems = SCENARIOS[rule.service_account](rbac, WITHOUT_A_RULE_TIMEOUT_S, Refusals(rbac.audit, rule.service_account))
        assert problems, f"the {rule.service_account} did its whole job without {rule}: the rule is not needed"
        assert refused(rbac, rule.service_account, skip), f"the scenario failed ({problems}) but no request was refused (403)"
    finally:
        edit_role(rbac, rule, [{"op": "add", "path": path, "value": rule.body}])
        wait_for(lambda: allowed(rbac, rule), timeout_s=10, message="the rule restored")


def test_the_api_can_touch_no_secret_but_its_own(rbac: RbacCluster) -> None:
    """Issue 12.10: the ClusterRole lets the API write Secrets anywhere; deploy/'s admission policy
    narrows that to its own credentials Secrets — a foreign Secret can be neither created, patched
    (which would answer with its data) nor deleted by the API's ServiceAccount."""
    from kubernetes import client, config

    admin = client.CoreV1Api(rbac.admin)
    admin.create_namespaced_secret(TEAM, {"metadata": {"name": "payments-db"}, "stringData": {"password": "hunter2"}})
    as_api = config.new_client_from_config(config_file=str(rbac.kubeconfigs[API_SA]))
    try:
        core = client.CoreV1Api(as_api)
        attempts: dict[str, Callable[[], object]] = {
            "patch": lambda: core.patch_namespaced_secret(
                "payments-db", TEAM, [{"op": "test", "path": "/metadata/name", "value": "payments-db"}]
            ),
            "delete": lambda: core.delete_namespaced_secret("payments-db", TEAM),
            "create": lambda: core.create_namespaced_secret(TEAM, {"metadata": {"name": "anything"}, "stringData": {"k": "v"}}),
            "create unlabelled": lambda: core.create_namespaced_secret(
                TEAM, {"metadata": {"name": "fake-s3-credentials"}, "stringData": {"k": "v"}}
            ),
        }
        for what, attempt in attempts.items():
            with pytest.raises(client.ApiException) as refused:
                attempt()
            assert refused.value.status in (403, 422), what
            assert "darkroom-api-secrets" in refused.value.body and "hunter2" not in refused.value.body, what
        ours = {"name": "fine-s3-credentials", "labels": {"app.kubernetes.io/managed-by": "darkroom-control-panel"}}
        core.create_namespaced_secret(TEAM, {"metadata": ours, "stringData": {"accessKey": "a", "secretKey": "s"}})
        core.delete_namespaced_secret("fine-s3-credentials", TEAM)
    finally:
        as_api.close()
    assert admin.read_namespaced_secret("payments-db", TEAM).data == {"password": "aHVudGVyMg=="}
