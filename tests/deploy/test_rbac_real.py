"""The deploy/ RBAC is exactly enough on a real control plane: every rule is needed — and people's rights are their own.

tests/deploy/test_rbac_audit.py shows the components need *nothing more* than their rules (on the real
control plane, as their ServiceAccounts, with no request refused). This module shows they need
*nothing less*: on a private real cluster (kube-apiserver with RBAC, the
OwnerReferencesPermissionEnforcement admission plugin, its audit log) with deploy/base applied, each
rule of the reconciler's Roles, the API's ClusterRole ``darkroom-api`` and its sessions Role (in darkroom-sessions) is
removed in turn, the component runs its scenario as its ServiceAccount, and something fails — a step of the scenario does
not happen *and* the audit log shows a request *of that ServiceAccount's own* refused with 403 (a person's
refusal does not count). The rule is put back afterwards (and a SubjectAccessReview confirms each change took
effect before the scenario starts).

Scenarios: the reconciler (leader election on) turns an admin-created Darkroom Ready with its four
children and an Event, handles a Task (finalizer, labels, status, TaskCreated, then TaskDeleted when
it is deleted), turns an admin-created Postgresql Running (generated password Secret, StatefulSet,
Services, ConfigMap; finalizer) and lets it go when it is deleted, and releases its Lease on
SIGTERM (the Lease is deleted first, so it must create it).
The API (gunicorn, the Deployment's environment: login mode, passthrough) does the work of a *person* — a
ServiceAccount of the test namespace bound to the built-in ``edit``, their token sent as a bearer token and pasted
at ``POST /login``: it becomes ready, creates an S3 Darkroom (its keys' Secret written as the person), answers 412
to a stale If-Match, switches the Darkroom to a WebFolder (Secret removed), creates a Task and lists it with its
Events, lists the namespaces, deletes the Task and the Darkroom, and a dashboard session logs in, shows a page
and logs out (the old cookie is then refused: the API looks the ended session up).
The impersonation component (deploy/components/impersonation): the API in ``impersonate`` mode verifies alice's
ID token from a real OpenID provider (ORY Hydra) and creates, lists and deletes a Darkroom as her — kube-apiserver
records its ServiceAccount impersonating ``oidc:alice``, whose rights come from her group; each of the component's
two rules (users, groups) is removed in turn and the API's impersonation is refused (403).

Besides: the API's ServiceAccount may neither read nor write any Secret of its own namespace darkroom-system (RBAC:
its sessions are in darkroom-sessions), and the admission policy lets it write login-session Secrets of
darkroom-sessions and nothing else — not another kind of Secret there, and no Secret at all elsewhere even when RBAC
would allow it (the API's account bound to ``edit`` in a team's namespace by mistake); and the user roles of
deploy/base/rbac-users.yaml: a person with the built-in ``edit`` in a namespace can do there everything the dashboard
offers (create, edit, scale, delete Darkrooms, Tasks and Postgresqls, detail pages with their children, "Show
password"), one with ``view`` can read it all but neither write nor read a password. Runs on the real control plane
only: devcluster authorizes nothing.
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tests.clusters import ROOT, RealclusterProcess, free_port
from tests.support import Kubectl, as_dict, wait_for

from .audit import Refusals, account, entries, log_size, refused
from .manifests import API_SA, NAMESPACE, OPERATOR_SA, SESSIONS_NAMESPACE, one, render, render_with_components
from .running import (
    POD_NAMES,
    UNREADABLE_CHILD,
    Browser,
    Process,
    api_argv,
    deployment_env,
    http,
    service_account_kubeconfig,
    service_account_token,
    status_of,
)

if TYPE_CHECKING:
    from tests.identityprovider import HydraProcess, OAuthClient

TEAM = "team-rbac"
EDITOR, VIEWER = "editor", "viewer"  # ServiceAccounts of TEAM bound to the built-in edit and view: people who paste a token
ALICE_GROUP = "oidc:team-a-editors"  # alice's group at the provider, prefixed as the API impersonates it
OIDC_CLIENT_ID = "darkroom-rbac-real"
# Each step takes about a second on the real control plane, many more on a loaded machine (a process's start most of
# all). Without a rule the same timeout applies, at no cost: a wait ends at the component's first refused request
# (Steps), so only a rule that is not needed — a failing test — waits it out.
STEP_TIMEOUT_S = 30.0
SHORT_LEASE = {
    "DARKROOM_OPERATOR_LEASE_DURATION_S": "4",
    "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "3",
    "DARKROOM_OPERATOR_RETRY_PERIOD_S": "0.5",
}
ROLES: tuple[tuple[str, str, str], ...] = (
    ("ClusterRole", "darkroom-operator", OPERATOR_SA),
    ("Role", "darkroom-operator-leader-election", OPERATOR_SA),
    ("ClusterRole", "darkroom-api", API_SA),
    ("Role", "darkroom-api-sessions", API_SA),
)
IMPERSONATION_ROLE = ("ClusterRole", "darkroom-api-impersonate", API_SA)
CLUSTER_SCOPED_RESOURCES = {"namespaces", "tokenreviews", "subjectaccessreviews", "users", "groups"}
MERGE = "application/merge-patch+json"
SESSION_TYPE = "darkroom-control-panel.example.com/session"  # backend/identity/sessions.py


@dataclass(frozen=True)
class Rule:
    """One rule of one of the rendered Roles, and who holds it."""

    role_kind: str
    role_name: str
    namespace: str  # a Role's ("" for a ClusterRole)
    index: int
    body: dict[str, Any]
    service_account: str
    role_rules: tuple[dict[str, Any], ...]  # all the Role's rules, to put back

    def __str__(self) -> str:
        names = f" [{','.join(self.body['resourceNames'])}]" if self.body.get("resourceNames") else ""
        groups = ",".join(g or "core" for g in self.body["apiGroups"])
        return f"{self.role_name}#{self.index} {groups} {','.join(self.body['resources'])}{names}: {','.join(self.body['verbs'])}"


def with_impersonation(tmp: Path) -> list[dict[str, Any]]:
    """deploy/base with deploy/components/impersonation, as an overlay adds it."""
    return render_with_components(tmp, "impersonation")


def rules_of(docs: list[dict[str, Any]], roles: tuple[tuple[str, str, str], ...]) -> list[Rule]:
    found = []
    for kind, name, sa in roles:
        role = one(docs, kind, name)
        role_rules, namespace = tuple(role["rules"]), role["metadata"].get("namespace", "")
        found += [Rule(kind, name, namespace, index, rule, sa, role_rules) for index, rule in enumerate(role_rules)]
    return found


def impersonation_rules() -> list[Rule]:
    with tempfile.TemporaryDirectory() as tmp:
        return rules_of(with_impersonation(Path(tmp)), (IMPERSONATION_ROLE,))


# -- the cluster, the people, the provider -------------------------------------------------------------


@dataclass
class RbacCluster:
    cluster: RealclusterProcess
    audit: Path
    kubeconfigs: dict[str, Path]
    tokens: dict[str, str]  # the people's: EDITOR, VIEWER
    impersonating: list[dict[str, Any]]  # the base rendered with the impersonation component
    admin: Any  # kubernetes.client.ApiClient
    tmp: Path


def _kubectl_apply(kubectl: Kubectl, docs: list[dict[str, Any]]) -> None:
    kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-f", "-", input_text=yaml.safe_dump_all(docs))


def _bind_people(kubectl: Kubectl) -> None:
    """The people of TEAM: ServiceAccounts with the built-in edit and view, and alice's provider group with edit."""
    for person, role in ((EDITOR, "edit"), (VIEWER, "view")):
        kubectl.run("create", "serviceaccount", person, "-n", TEAM)
        kubectl.run("create", "rolebinding", f"{person}-{role}", "-n", TEAM, f"--clusterrole={role}", f"--serviceaccount={TEAM}:{person}")
    kubectl.run("create", "rolebinding", "alice-group-edit", "-n", TEAM, "--clusterrole=edit", f"--group={ALICE_GROUP}")


def _may(
    admin: Any,
    user: str,
    verb: str,
    group: str,
    resource: str,
    namespace: str | None,
    *,
    name: str | None = None,
    subresource: str | None = None,
) -> bool:
    """A SubjectAccessReview for ``user`` (a ServiceAccount gets its groups, as its token would carry them)."""
    from kubernetes import client

    groups = ["system:authenticated"]
    if user.startswith("system:serviceaccount:"):
        groups += ["system:serviceaccounts", f"system:serviceaccounts:{user.split(':')[2]}"]
    attributes = client.V1ResourceAttributes(
        group=group, resource=resource, subresource=subresource, verb=verb, namespace=namespace, name=name
    )
    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(user=user, groups=groups, resource_attributes=attributes))
    return bool(client.AuthorizationV1Api(admin).create_subject_access_review(review).status.allowed)


@pytest.fixture(scope="module")
def rbac(realcluster_required: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RbacCluster]:
    from kubernetes import config

    tmp = tmp_path_factory.mktemp("rbac-real")
    audit = tmp / "audit.jsonl"
    cluster = RealclusterProcess(tmp / "cluster", extra_args=["--pod-ready-delay", "300ms", "--audit-log", str(audit)]).start()
    try:
        kubectl = Kubectl(cluster.kubeconfig, tmp / "kubectl-cache")
        kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-k", str(ROOT / "deploy" / "base"))
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=30s", "crd/darkrooms.deployments.example.com", "crd/tasks.example.example.com"
        )
        (tmp / "component").mkdir()
        impersonating = with_impersonation(tmp / "component")
        # the impersonation component's RBAC (its Deployment patch is what the impersonating API runs with)
        _kubectl_apply(kubectl, [one(impersonating, kind, "darkroom-api-impersonate") for kind in ("ClusterRole", "ClusterRoleBinding")])
        kubectl.run("create", "namespace", TEAM)
        _bind_people(kubectl)
        admin = config.new_client_from_config(config_file=str(cluster.kubeconfig))
        # kube-controller-manager aggregates our kinds into the built-in roles shortly after they appear
        wait_for(
            lambda: _may(admin, account(EDITOR, TEAM), "create", "deployments.example.com", "darkrooms", TEAM),
            timeout_s=30,
            message="edit to include Darkrooms",
        )
        kubeconfigs = {sa: service_account_kubeconfig(cluster, NAMESPACE, sa, tmp / f"{sa}.kubeconfig") for sa in (OPERATOR_SA, API_SA)}
        tokens = {person: service_account_token(cluster, TEAM, person, tmp / "kubectl-cache") for person in (EDITOR, VIEWER)}
        yield RbacCluster(
            cluster=cluster, audit=audit, kubeconfigs=kubeconfigs, tokens=tokens, impersonating=impersonating, admin=admin, tmp=tmp
        )
        admin.close()
    finally:
        cluster.stop()


@dataclass(frozen=True)
class Provider:
    """The OpenID provider the impersonating API trusts, and our client there."""

    hydra: HydraProcess
    client: OAuthClient

    def id_token(self, user: str) -> str:
        person = self.hydra.users[user]
        return self.hydra.authorization_code_tokens(self.client, person.username, person.password).id_token


@pytest.fixture(scope="module")
def provider(identity_provider: HydraProcess) -> Provider:
    # Only ID tokens are asked for here (bearer requests): the redirect URI need not listen.
    callback = f"http://127.0.0.1:{free_port()}/login/oidc/callback"
    client = identity_provider.register_client(OIDC_CLIENT_ID, secrets.token_urlsafe(24), [callback])
    return Provider(hydra=identity_provider, client=client)


# -- the scenarios ---------------------------------------------------------------------------------


class Steps:
    """Runs named waits; the first one that does not happen is recorded and ends the scenario.

    ``refused`` (a rule removed): a wait ends as soon as the component has had a request refused — the step
    it waits for needed what was refused — instead of after the whole timeout."""

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


def names(answer: tuple[int, Any]) -> set[str]:
    """The names in a list the API answered (none for anything but 200)."""
    code, body = answer
    if code != 200 or not isinstance(body, dict):
        return set()
    return {item.get("name") or item["metadata"]["name"] for item in body.get("items", [])}


def start_api(rbac: RbacCluster, docs: list[dict[str, Any]], suffix: str, **settings: str) -> tuple[Process, str]:
    """The API as the Deployment in ``docs`` runs it, as its ServiceAccount, on a loopback port; ``settings`` on top."""
    port = free_port()
    env = deployment_env(docs, API_SA, kubeconfig=rbac.kubeconfigs[API_SA], secret_values={"secret-key": secrets.token_hex(32)})
    env.update({"DARKROOM_API_HOST": "127.0.0.1", "PORT": str(port), **settings})
    container = one(docs, "Deployment", API_SA)["spec"]["template"]["spec"]["containers"][0]
    return Process("API", api_argv(container), env, rbac.tmp / f"api-{suffix}.log"), f"http://127.0.0.1:{port}"


def run_operator_scenario(rbac: RbacCluster, timeout_s: float, refused: Callable[[], bool] | None = None) -> list[str]:
    from kubernetes import client

    custom, core = client.CustomObjectsApi(rbac.admin), client.CoreV1Api(rbac.admin)
    coordination = client.CoordinationV1Api(rbac.admin)
    suffix = uuid.uuid4().hex[:6]
    health = free_port()
    env = deployment_env(render("base"), OPERATOR_SA, kubeconfig=rbac.kubeconfigs[OPERATOR_SA], secret_values={})
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
            "apiVersion": "deployments.example.com/v1",
            "kind": "Darkroom",
            "metadata": {"name": f"dr-{suffix}", "namespace": TEAM},
            "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": [f"dr-{suffix}"]},
        }
        custom.create_namespaced_custom_object("deployments.example.com", "v1", TEAM, "darkrooms", darkroom)
        overdue_task = {
            "apiVersion": "example.example.com/v1",
            "kind": "Task",
            "metadata": {"name": f"t-{suffix}", "namespace": TEAM},
            "spec": {"priority": 3, "deadline": "2001-01-01T00:00:00Z"},
        }
        custom.create_namespaced_custom_object("example.example.com", "v1", TEAM, "tasks", overdue_task)
        steps.wait(
            "the Darkroom Ready",
            lambda: conditions("deployments.example.com", "v1", "darkrooms", f"dr-{suffix}").get("Ready") == "True",
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
    """A person (EDITOR's token) at work through the API, which runs as its ServiceAccount in passthrough mode."""
    suffix = uuid.uuid4().hex[:6]
    process, base = start_api(rbac, render("base"), suffix)
    steps = Steps(process, timeout_s, refused)
    token = rbac.tokens[EDITOR]
    name, task = f"s3-{suffix}", f"t-{suffix}"
    item = f"{base}/darkrooms/{TEAM}/{name}"
    try:
        steps.wait("the API's /readyz", lambda: status_of(base + "/readyz") == 200)
        source = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "accessKey": "AKIDEXAMPLE", "secretKey": "wJalrEXAMPLEKEY"}
        code, body = http("POST", base + "/darkrooms", token, {"name": name, "namespace": TEAM, "source": source, "subDomains": [name]})
        steps.expect("POST an S3 Darkroom (its Secret written as the person)", code == 201, (code, body))
        code, body = http("PATCH", item, token, {"replicas": 2}, MERGE, if_match='"1"')
        steps.expect("412 for a stale If-Match (re-read from the server)", code == 412, (code, body))
        code, body = http("PATCH", item, token, {"source": {"type": "WebFolder", "baseUrl": "https://example.com/x"}}, MERGE)
        steps.expect("switch to a WebFolder (Secret removed)", code == 200, (code, body))
        code, body = http(
            "POST", base + "/tasks", token, {"name": task, "namespace": TEAM, "priority": 1, "deadline": "2030-01-01T00:00:00Z"}
        )
        steps.expect("POST a Task", code == 201, (code, body))
        steps.wait(
            "the Task among the tasks with their events",
            lambda: task in names(http("GET", f"{base}/combinedtasks?namespace={TEAM}", token)),
        )
        code, body = http("GET", base + "/namespaces", token)
        steps.expect(
            "GET /namespaces offers the person's namespace", code == 200 and TEAM in {n["name"] for n in body["items"]}, (code, body)
        )
        code, body = http("DELETE", f"{base}/tasks/{TEAM}/{task}", token)
        steps.expect("DELETE the Task", code in (202, 204), (code, body))
        code, body = http("DELETE", item, token)
        steps.expect("DELETE the Darkroom", code in (202, 204), (code, body))
        browser = Browser(base)
        steps.expect("log in with the pasted token", browser.log_in(token) == 204)
        code, html = browser.page(f"/ui/tasks?namespace={TEAM}")
        steps.expect("a dashboard page in the session", code == 200, (code, html[-1500:]))
        copy = Browser(base)  # a copy of the cookie, kept past the logout
        copy.http.cookies.update(browser.http.cookies)
        steps.expect("log out", browser.log_out() == 204)
        steps.expect("the ended session refused (looked up: gone)", copy.json("/darkrooms")[0] == 401)
    except StopScenario:
        pass
    finally:
        process.stop()
    return steps.problems


def run_impersonation_scenario(
    rbac: RbacCluster, provider: Provider, timeout_s: float, refused: Callable[[], bool] | None = None
) -> list[str]:
    """alice (her ID token) through the API in impersonation mode (deploy/components/impersonation): the cluster does
    not trust the provider; the API verifies the token and acts as ``oidc:alice`` in her group."""
    suffix = uuid.uuid4().hex[:6]
    process, base = start_api(
        rbac,
        rbac.impersonating,
        f"impersonate-{suffix}",
        DARKROOM_API_OIDC_ISSUER_URL=provider.hydra.issuer,
        DARKROOM_API_OIDC_CLIENT_ID=provider.client.client_id,
        DARKROOM_API_OIDC_CLIENT_SECRET=provider.client.client_secret,
        DARKROOM_API_OIDC_CA_FILE=str(provider.hydra.ca_path),
        DARKROOM_API_OIDC_SCOPES="openid profile email groups offline_access",
    )
    steps = Steps(process, timeout_s, refused)
    token = provider.id_token("alice")
    name = f"as-alice-{suffix}"
    try:
        steps.wait("the API's /readyz", lambda: status_of(base + "/readyz") == 200)
        body = {"name": name, "namespace": TEAM, "source": {"type": "WebFolder", "baseUrl": "https://example.com/a"}, "subDomains": [name]}
        code, answer = http("POST", base + "/darkrooms", token, body)
        steps.expect("POST a Darkroom as alice", code == 201, (code, answer))
        listed = http("GET", f"{base}/darkrooms?namespace={TEAM}", token)
        steps.expect("alice lists it", name in names(listed), listed)
        code, answer = http("DELETE", f"{base}/darkrooms/{TEAM}/{name}", token)
        steps.expect("DELETE it as alice", code in (202, 204), (code, answer))
    except StopScenario:
        pass
    finally:
        process.stop()
    return steps.problems


# -- the role edits ----------------------------------------------------------------------------------


def allowed(rbac: RbacCluster, rule: Rule) -> bool:
    """Whether the rule's ServiceAccount may do the rule's first (group, resource, verb, name): a SubjectAccessReview."""
    resource, _, subresource = rule.body["resources"][0].partition("/")
    if rule.role_kind == "Role":
        namespace: str | None = rule.namespace
    else:
        namespace = None if resource in CLUSTER_SCOPED_RESOURCES else TEAM
    return _may(
        rbac.admin,
        account(rule.service_account),
        rule.body["verbs"][0],
        rule.body["apiGroups"][0],
        resource,
        namespace,
        name=(rule.body.get("resourceNames") or [None])[0],
        subresource=subresource or None,
    )


def edit_role(rbac: RbacCluster, rule: Rule, operations: list[dict[str, Any]]) -> None:
    """A JSON patch of the rule's Role, as the admin (the official client sends a list body as a JSON patch)."""
    from kubernetes import client

    api = client.RbacAuthorizationV1Api(rbac.admin)
    if rule.role_kind == "Role":
        api.patch_namespaced_role(rule.role_name, rule.namespace, operations)
    else:
        api.patch_cluster_role(rule.role_name, operations)


def assert_needed(rbac: RbacCluster, rule: Rule, scenario: Callable[[float, Callable[[], bool]], list[str]]) -> None:
    """Without ``rule`` the scenario fails, and the audit log shows a request of the rule's ServiceAccount refused."""
    path = f"/rules/{rule.index}"
    user = account(rule.service_account)
    edit_role(rbac, rule, [{"op": "test", "path": path, "value": rule.body}, {"op": "remove", "path": path}])
    try:
        wait_for(lambda: not allowed(rbac, rule), timeout_s=10, message="the removal to take effect")
        since = log_size(rbac.audit)
        problems = scenario(STEP_TIMEOUT_S, Refusals(rbac.audit, user))
        assert problems, f"{rule.service_account} did its whole job without {rule}: the rule is not needed"
        assert refused(rbac.audit, user, since), f"the scenario failed ({problems}) but no request of {user} was refused (403)"
    finally:
        # the whole list (a Role whose only rule was removed has no rules field to add to)
        edit_role(rbac, rule, [{"op": "add", "path": "/rules", "value": list(rule.role_rules)}])
        wait_for(lambda: allowed(rbac, rule), timeout_s=10, message="the rule restored")


SCENARIOS = {OPERATOR_SA: run_operator_scenario, API_SA: run_api_scenario}


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_scenario_passes_with_every_rule(rbac: RbacCluster, provider: Provider) -> None:
    for sa, scenario in SCENARIOS.items():
        since = log_size(rbac.audit)
        assert scenario(rbac, STEP_TIMEOUT_S) == [], sa
        assert refused(rbac.audit, account(sa), since) == [], sa
    since = log_size(rbac.audit)
    assert run_impersonation_scenario(rbac, provider, STEP_TIMEOUT_S) == []
    assert refused(rbac.audit, account(API_SA), since) == []
    # kube-apiserver saw alice's write: the API's ServiceAccount impersonating her, with her group.
    writes = [e for e in entries(rbac.audit, since) if e.request.verb == "create" and e.request.resource == "darkrooms"]
    assert [(w.user, w.impersonated_user, ALICE_GROUP in w.impersonated_groups, w.code) for w in writes] == [
        (account(API_SA), "oidc:alice", True, 201)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("rule", rules_of(render("base"), ROLES), ids=str)
def test_each_rule_is_needed(rbac: RbacCluster, rule: Rule) -> None:
    assert_needed(rbac, rule, lambda timeout_s, refusals: SCENARIOS[rule.service_account](rbac, timeout_s, refusals))


@pytest.mark.slow
@pytest.mark.parametrize("rule", impersonation_rules(), ids=str)
def test_each_impersonation_rule_is_needed(rbac: RbacCluster, provider: Provider, rule: Rule) -> None:
    assert_needed(rbac, rule, lambda timeout_s, refusals: run_impersonation_scenario(rbac, provider, timeout_s, refusals))


SESSION_LABELS = {"app.kubernetes.io/managed-by": "darkroom-control-panel", "app.kubernetes.io/component": "api-session"}


def a_session(name: str, **fields: Any) -> dict[str, Any]:
    """A login session's Secret as backend/identity/sessions.py writes it; ``fields`` on top."""
    return {"metadata": {"name": name, "labels": SESSION_LABELS}, "type": SESSION_TYPE, "stringData": {"session": "{}"}, **fields}


def refusal(attempt: Callable[[], object]) -> str:
    """The message of the 403 that ``attempt`` (a request as the API's ServiceAccount) gets."""
    from kubernetes import client

    with pytest.raises(client.ApiException) as refused:
        attempt()
    assert refused.value.status == 403, refused.value.body
    return str(json.loads(refused.value.body)["message"])


def test_the_api_reads_and_writes_no_secret_of_its_own_namespace(rbac: RbacCluster) -> None:
    """darkroom-system holds the Secret darkroom-api (the cookie signing key, the OIDC client secret) and may hold TLS
    keys: the API's ServiceAccount may not read it, list or watch the namespace's Secrets, change, delete or create
    one there — RBAC refuses (the sessions Role is in darkroom-sessions), before any admission policy is asked."""
    from kubernetes import client, config

    admin = client.CoreV1Api(rbac.admin)
    admin.create_namespaced_secret(NAMESPACE, {"metadata": {"name": "darkroom-api"}, "stringData": {"secret-key": "k"}})
    as_api = config.new_client_from_config(config_file=str(rbac.kubeconfigs[API_SA]))
    try:
        core = client.CoreV1Api(as_api)
        replacement = {"metadata": {"name": "darkroom-api"}, "stringData": {"secret-key": "mine"}}
        attempts: dict[str, Callable[[], object]] = {
            "get darkroom-api": lambda: core.read_namespaced_secret("darkroom-api", NAMESPACE),
            "list the namespace's Secrets": lambda: core.list_namespaced_secret(NAMESPACE),
            "watch them": lambda: core.list_namespaced_secret(NAMESPACE, watch=True, timeout_seconds=1),
            "overwrite darkroom-api": lambda: core.replace_namespaced_secret("darkroom-api", NAMESPACE, replacement),
            "delete darkroom-api": lambda: core.delete_namespaced_secret("darkroom-api", NAMESPACE),
            "create a session there": lambda: core.create_namespaced_secret(NAMESPACE, a_session("darkroom-session-0123456789abcdef")),
        }
        for what, attempt in attempts.items():
            body = refusal(attempt)
            assert "darkroom-api-secrets" not in body and f'in the namespace "{NAMESPACE}"' in body, (what, body)
    finally:
        as_api.close()
    assert admin.read_namespaced_secret("darkroom-api", NAMESPACE).data == {"secret-key": "aw=="}
    admin.delete_namespaced_secret("darkroom-api", NAMESPACE)


def test_the_api_writes_no_secret_but_its_login_sessions(rbac: RbacCluster) -> None:
    """In darkroom-sessions the API's ServiceAccount creates, changes and deletes its login sessions; the admission
    policy darkroom-api-secrets refuses it any other Secret there (one someone put there, an Opaque one, a session's
    name without its labels, a ServiceAccount token Secret). And should RBAC ever let it write Secrets elsewhere — its
    account bound to the built-in edit in a team's namespace — the policy still refuses every write there, sessions
    included: RBAC alone refuses it a team's Secret otherwise."""
    from kubernetes import client, config

    admin = client.CoreV1Api(rbac.admin)
    admin.create_namespaced_secret(TEAM, {"metadata": {"name": "payments-db"}, "stringData": {"password": "hunter2"}})
    admin.create_namespaced_secret(SESSIONS_NAMESPACE, {"metadata": {"name": "put-here"}, "stringData": {"k": "v"}})
    session = "darkroom-session-0123456789abcdef"
    as_api = config.new_client_from_config(config_file=str(rbac.kubeconfigs[API_SA]))
    rbac_api = client.RbacAuthorizationV1Api(rbac.admin)
    try:
        core = client.CoreV1Api(as_api)
        by_rbac: dict[str, Callable[[], object]] = {
            "read a person's Secret": lambda: core.read_namespaced_secret("payments-db", TEAM),
            "create a session in a team's namespace": lambda: core.create_namespaced_secret(TEAM, a_session(session)),
            "delete a person's Secret": lambda: core.delete_namespaced_secret("payments-db", TEAM),
        }
        by_policy: dict[str, Callable[[], object]] = {
            "overwrite a Secret that is not a session": lambda: core.replace_namespaced_secret(
                "put-here", SESSIONS_NAMESPACE, {"metadata": {"name": "put-here"}, "stringData": {"k": "mine"}}
            ),
            "delete a Secret that is not a session": lambda: core.delete_namespaced_secret("put-here", SESSIONS_NAMESPACE),
            "create an Opaque Secret": lambda: core.create_namespaced_secret(
                SESSIONS_NAMESPACE, {"metadata": {"name": "anything"}, "stringData": {"k": "v"}}
            ),
            "create a session-named Secret without the labels": lambda: core.create_namespaced_secret(
                SESSIONS_NAMESPACE, {"metadata": {"name": session}, "type": SESSION_TYPE}
            ),
            "create a ServiceAccount token Secret": lambda: core.create_namespaced_secret(
                SESSIONS_NAMESPACE,
                {
                    "metadata": {"name": "a-token", "annotations": {"kubernetes.io/service-account.name": "default"}},
                    "type": "kubernetes.io/service-account-token",
                },
            ),
        }
        for what, attempt in {**by_rbac, **by_policy}.items():
            body = refusal(attempt)
            assert ("darkroom-api-secrets" in body) == (what in by_policy), (what, body)
            assert "hunter2" not in body, what
        created = core.create_namespaced_secret(SESSIONS_NAMESPACE, a_session(session))
        created.string_data = {"session": "{}"}
        core.replace_namespaced_secret(session, SESSIONS_NAMESPACE, created)
        core.delete_namespaced_secret(session, SESSIONS_NAMESPACE)

        # A mistake in RBAC: the API's account may now write the team's Secrets. The policy still refuses.
        binding = {
            "metadata": {"name": "api-edit-by-mistake"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "ServiceAccount", "name": API_SA, "namespace": NAMESPACE}],
        }
        rbac_api.create_namespaced_role_binding(TEAM, binding)
        try:
            wait_for(
                lambda: _may(rbac.admin, account(API_SA), "create", "", "secrets", TEAM), timeout_s=10, message="the binding in effect"
            )
            for what, attempt in by_rbac.items():
                if what != "read a person's Secret":  # a read is not an admission request: RBAC is its whole limit
                    body = refusal(attempt)
                    assert "darkroom-api-secrets" in body and "only in darkroom-sessions" in body, (what, body)
        finally:
            rbac_api.delete_namespaced_role_binding("api-edit-by-mistake", TEAM)
            wait_for(lambda: not _may(rbac.admin, account(API_SA), "create", "", "secrets", TEAM), timeout_s=10, message="the binding gone")
    finally:
        as_api.close()
    assert admin.read_namespaced_secret("payments-db", TEAM).data == {"password": "aHVudGVyMg=="}
    assert admin.read_namespaced_secret("put-here", SESSIONS_NAMESPACE).data == {"k": "dg=="}
    admin.delete_namespaced_secret("payments-db", TEAM)
    admin.delete_namespaced_secret("put-here", SESSIONS_NAMESPACE)


def test_edit_does_all_the_dashboard_offers_and_view_reads_without_writing_or_seeing_passwords(rbac: RbacCluster) -> None:
    """deploy/base/rbac-users.yaml: our kinds in the built-in roles. Through the API (every rule in place), EDITOR
    creates, edits, scales and deletes a Darkroom (S3 keys: a Secret), a Task (finished) and a Postgresql (given
    password), opens their pages (every child readable) and reveals the password; VIEWER sees all of it, children
    included, and is refused every write and the password — each refusal a 403 naming the verb and resource."""
    suffix = uuid.uuid4().hex[:6]
    process, base = start_api(rbac, render("base"), f"people-{suffix}")
    editor, viewer = rbac.tokens[EDITOR], rbac.tokens[VIEWER]
    darkroom, task, pg = f"dr-{suffix}", f"t-{suffix}", f"pg-{suffix}"
    try:
        wait_for(lambda: process.alive() and status_of(base + "/readyz") == 200, timeout_s=STEP_TIMEOUT_S, message="the API's /readyz")
        s3 = {"type": "S3", "bucket": "team-bucket", "region": "eu-west-1", "accessKey": "AKIDEXAMPLE", "secretKey": "wJalrEXAMPLEKEY"}
        writes = [
            ("POST", "/darkrooms", {"name": darkroom, "namespace": TEAM, "source": s3, "subDomains": [darkroom]}, 201),
            ("PATCH", f"/darkrooms/{TEAM}/{darkroom}", {"replicas": 2}, 200),
            ("PATCH", f"/darkrooms/{TEAM}/{darkroom}", {"subDomains": [darkroom, f"{darkroom}-www"]}, 200),
            ("POST", "/tasks", {"name": task, "namespace": TEAM, "priority": 2, "deadline": "2030-01-01T00:00:00Z"}, 201),
            ("PATCH", f"/tasks/{TEAM}/{task}", {"state": "Finished"}, 200),
            ("POST", "/postgresqls", {"name": pg, "namespace": TEAM, "password": "pw-edit-123"}, 201),
        ]
        for method, path, body, expected in writes:
            code, answer = http(method, base + path, editor, body, MERGE if method == "PATCH" else "application/json")
            assert code == expected, (method, path, code, answer)
        pages = (f"/ui/darkrooms/{TEAM}/{darkroom}", f"/ui/postgresqls/{TEAM}/{pg}", f"/ui/tasks/{TEAM}/{task}")
        password = (f"/ui/postgresqls/{TEAM}/{pg}", f"/ui/postgresqls/{TEAM}/{pg}/password")

        editing = Browser(base)
        assert editing.log_in(editor) == 204
        for path in pages:
            code, html = editing.page(path)
            assert code == 200 and UNREADABLE_CHILD not in html, (path, code, html[-1500:])
        code, html = editing.submit(*password)
        assert code == 200 and "pw-edit-123" in html, (code, html[-1500:])

        for path in (f"/darkrooms?namespace={TEAM}", f"/darkrooms/{TEAM}/{darkroom}", f"/tasks/{TEAM}/{task}", f"/postgresqls/{TEAM}/{pg}"):
            code, answer = http("GET", base + path, viewer)
            assert code == 200, (path, code, answer)
        viewing = Browser(base)
        assert viewing.log_in(viewer) == 204
        for path in pages:
            code, html = viewing.page(path)
            assert code == 200 and UNREADABLE_CHILD not in html, (path, code, html[-1500:])
        code, html = viewing.submit(*password)
        assert code == 403 and "pw-edit-123" not in html, (code, html[-1500:])
        refusals = [
            (
                "POST",
                "/darkrooms",
                {"name": f"v-{suffix}", "namespace": TEAM, "source": s3, "subDomains": [f"v-{suffix}"]},
                "create",
                "darkrooms",
            ),
            ("PATCH", f"/darkrooms/{TEAM}/{darkroom}", {"replicas": 1}, "update", "darkrooms"),
            ("DELETE", f"/tasks/{TEAM}/{task}", None, "delete", "tasks"),
            ("POST", "/postgresqls", {"name": f"v-{suffix}", "namespace": TEAM}, "create", "postgresqls"),
            ("DELETE", f"/postgresqls/{TEAM}/{pg}", None, "delete", "postgresqls"),
        ]
        for method, path, body, verb, resource in refusals:
            code, answer = http(method, base + path, viewer, body, MERGE if method == "PATCH" else "application/json")
            assert code == 403 and (answer["verb"], answer["resource"], answer["namespace"]) == (verb, resource, TEAM), (path, code, answer)

        for path in (f"/tasks/{TEAM}/{task}", f"/postgresqls/{TEAM}/{pg}", f"/darkrooms/{TEAM}/{darkroom}"):
            code, answer = http("DELETE", base + path, editor)
            assert code in (202, 204), (path, code, answer)
    finally:
        process.stop()
