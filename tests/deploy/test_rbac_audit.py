"""The reconciler's and the API's real requests stay within their RBAC rules — and use every verb granted.

On a private real control plane with its audit log (kube-apiserver, real RBAC; it also trusts a real OpenID
provider, ORY Hydra, for OIDC passthrough), the rendered base is applied with kubectl (namespace, CRDs,
ServiceAccounts, RBAC, the admission policy, Deployments, ...); then the two real entry points run with the
environment their Deployments give them (fieldRefs and secretKeyRefs resolved the way the kubelet would; only the
bind address is loopback instead of the pod IP, and the Lease is renewed every second), each authenticating as its
ServiceAccount with a TokenRequest token: ``python -m darkroom_operator`` with leader election on, and gunicorn
with ``backend/server/gunicorn_conf.py`` (login mode, passthrough).

The work is done by *people*: a ServiceAccount of the team's namespace with the built-in ``edit`` (its token as
the JSON API's bearer token, and pasted at ``POST /login``), and alice, who logs in through the provider (code flow,
her ID token passed through; her client's ID tokens live under a minute, so her session renews them). Through the
HTTP API the test creates a WebFolder and an S3 Darkroom (credentials Secret), scales one, lets a newer Darkroom
lose its host (the API refuses the edit with 409; made with the cluster's own API, the newer one's Ingress and
Deployment are withdrawn), switches the S3 one to a WebFolder (Secret removed), creates, finishes and
deletes a Task (finalizer added and removed by the reconciler, lifecycle Events), creates two Postgresqls (one with
a password written to its Secret, one whose password the reconciler generates and the person then replaces),
answers 412 to stale If-Matches, opens detail pages (every child shown, from the API's cache), logs sessions in and out (an ended
session's cookie is refused), reads every list endpoint, deletes everything, and stops both processes (the Lease
is released).

Every audit record is attributed by its user: the reconciler's and the API's *own* requests (the ServiceAccounts)
are checked against the rules the rendered bindings give them (:func:`tests.deploy.manifests.grants`; a
server-side apply that created its object (201) needs ``create`` as well as ``patch``, as kube-apiserver
authorizes it), none refused; then the converse — every (group, resource, verb) granted was used, except
:data:`GRANTED_BUT_NOT_REQUESTED` with the reason. The API's own Secret requests (its login sessions) are all in
darkroom-sessions. And the people's: every write of a Darkroom, Task, Postgresql
or Secret of the team was made as the person who asked — never as the API.

The impersonation component on its own: the API in ``impersonate`` mode (base + deploy/components/impersonation)
serves alice's bearer ID token and her browser session; its own requests — the impersonations included, as the
``impersonate`` checks they needed — stay within base + component, and it used both of the component's rules.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from kubernetes import client

from tests.clusters import ROOT, RealclusterProcess, free_port, free_ports
from tests.support import Kubectl, as_dict, wait_for

from .audit import AUTHENTICATED, Entry, account, entries, impersonations, log_size
from .manifests import API_SA, NAMESPACE, OPERATOR_SA, SESSIONS_NAMESPACE, Grants, Request, grants, one, render, render_with_components
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

TEAM = "team-a"
EDITOR = "editor"  # a ServiceAccount of TEAM with the built-in edit: a person who pastes a token
ALICE, ALICE_GROUP = "oidc:alice", "oidc:team-a-editors"  # how kube-apiserver (and the impersonating API) names her
OIDC_CLIENT_ID = "darkroom-rbac-audit"
ID_TOKEN_LIFESPAN = "30s"  # under the API's renewal margin (60 s): every use of a session renews its ID token
# Renewed every second (the Lease's get and update are used within seconds), each request allowed 3 s (duration -
# deadline - retry): a loaded machine's slow API server must not cost the reconciler its Lease mid-scenario (it then
# stops, and nothing is reconciled). The Lease is free at the start: it is taken at once.
SHORT_LEASE = {
    "DARKROOM_OPERATOR_LEASE_DURATION_S": "12",
    "DARKROOM_OPERATOR_RENEW_DEADLINE_S": "8",
    "DARKROOM_OPERATOR_RETRY_PERIOD_S": "1",
}
MERGE = "application/merge-patch+json"
OUR_KINDS = {"darkrooms", "tasks", "postgresqls", "secrets"}
WRITES = {"create", "update", "patch", "delete", "deletecollection"}
# Kubernetes' garbage collector deletes what its owner took with it (a deleted Darkroom's credentials Secret), as the
# controller manager or, with --use-service-account-credentials, as its own ServiceAccount: whether its delete lands
# in the audit log before the test reads it is a matter of timing, and it is nobody's request.
GARBAGE_COLLECTOR = ("system:kube-controller-manager", "system:serviceaccount:kube-system:generic-garbage-collector")
# (component, apiGroup, resource, verb): granted on purpose although no request in the scenario uses it.
GRANTED_BUT_NOT_REQUESTED = {
    # Not a request: the OwnerReferencesPermissionEnforcement admission plugin checks it when the
    # reconciler sets blockOwnerDeletion on a child's ownerReference to a Darkroom.
    ("operator", "deployments.example.com", "darkrooms/finalizers", "update"),
    ("operator", "database.db.example.com", "postgresqls/finalizers", "update"),
    # Not a request either: the same plugin lets only those who may delete an object change its ownerReferences
    # (the reconciler patches a Postgresql's password Secret's owners, keeping it with its data volume).
    ("operator", "", "secrets", "delete"),
    # Requested only when the API server went away in the middle of a create and no retry finished it: the removal
    # of such unfinished creates is tested where the cut can be made (tests/operator/test_unfinished_creates.py).
    ("operator", "deployments.example.com", "darkrooms", "delete"),
    ("operator", "database.db.example.com", "postgresqls", "delete"),
}


def required(entry: Entry) -> list[Request]:
    """What RBAC checked for this request *of its user's own*: a server-side apply that created its object also
    needs create; an impersonated request, the impersonation (the rest was the person's to be allowed)."""
    if not entry.own:
        return impersonations(entry)
    request = entry.request
    if request.verb == "patch" and entry.code == 201:
        return [request, Request("create", request.api_group, request.resource, request.subresource, request.namespace, request.name)]
    return [request]


def denied(found: list[Entry], granted: Grants) -> list[str]:
    return sorted({str(need) for entry in found for need in required(entry) if not granted.allows(need)})


def used(found: list[Entry]) -> set[tuple[str, str, str]]:
    return {
        (need.api_group, need.resource + (f"/{need.subresource}" if need.subresource else ""), need.verb)
        for entry in found
        for need in required(entry)
    }


def unused(component: str, found: list[Entry], granted: Grants) -> list[str]:
    done = used(found)
    missing = []
    for rule in granted.all_rules():
        for group in rule.api_groups:
            for resource in rule.resources:
                for verb in rule.verbs:
                    if (group, resource, verb) not in done and (component, group, resource, verb) not in GRANTED_BUT_NOT_REQUESTED:
                        missing.append(f"{verb} {group or 'core'} {resource}")
    return sorted(missing)


def by(found: list[Entry], user: str) -> list[Entry]:
    return [e for e in found if e.user == user]


# -- the cluster, the people, the provider -------------------------------------------------------------


@dataclass
class Audited:
    cluster: RealclusterProcess
    audit: Path
    kubeconfigs: dict[str, Path]
    editor_token: str
    provider: HydraProcess
    client: OAuthClient
    api_ports: tuple[int, int]  # the passthrough API's, the impersonating API's (the client's callbacks)
    tmp: Path

    def alice_id_token(self) -> str:
        alice = self.provider.users["alice"]
        return self.provider.authorization_code_tokens(self.client, alice.username, alice.password).id_token

    def oidc_settings(self) -> dict[str, str]:
        return {
            "DARKROOM_API_OIDC_ISSUER_URL": self.provider.issuer,
            "DARKROOM_API_OIDC_CLIENT_ID": self.client.client_id,
            "DARKROOM_API_OIDC_CLIENT_SECRET": self.client.client_secret,
            "DARKROOM_API_OIDC_CA_FILE": str(self.provider.ca_path),
            "DARKROOM_API_OIDC_SCOPES": "openid profile email groups offline_access",
        }


@pytest.fixture(scope="module")
def audited(realcluster_required: None, identity_provider: HydraProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audited]:
    from tests.identityprovider import authentication_configuration, whoami

    tmp = tmp_path_factory.mktemp("rbac-audit")
    first, second = free_ports(2)
    ports = (first, second)
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    oauth = identity_provider.register_client(
        OIDC_CLIENT_ID,
        secrets.token_urlsafe(24),
        [f"{b}/login/oidc/callback" for b in bases],
        [f"{b}/login?logged_out=1" for b in bases],
        id_token_lifespan=ID_TOKEN_LIFESPAN,
    )
    config = authentication_configuration(
        tmp / "authentication-config.yaml", issuer=identity_provider.issuer, ca_pem=identity_provider.ca_pem, audiences=[OIDC_CLIENT_ID]
    )
    audit = tmp / "audit.jsonl"
    args = ["--pod-ready-delay", "300ms", "--audit-log", str(audit), "--authentication-config", str(config)]
    cluster = RealclusterProcess(tmp / "cluster", extra_args=args).start()
    try:
        kubectl = Kubectl(cluster.kubeconfig, tmp / "kubectl-cache")
        kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-k", str(ROOT / "deploy" / "base"))
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=30s", "crd/darkrooms.deployments.example.com", "crd/tasks.example.example.com"
        )
        kubectl.run("create", "namespace", TEAM)
        kubectl.run("create", "serviceaccount", EDITOR, "-n", TEAM)
        kubectl.run("create", "rolebinding", "editor-edit", "-n", TEAM, "--clusterrole=edit", f"--serviceaccount={TEAM}:{EDITOR}")
        kubectl.run("create", "rolebinding", "alice-group-edit", "-n", TEAM, "--clusterrole=edit", f"--group={ALICE_GROUP}")
        # kube-controller-manager aggregates our kinds into edit shortly after they appear
        wait_for(
            lambda: (
                kubectl.run(
                    "auth",
                    "can-i",
                    "create",
                    "darkrooms.deployments.example.com",
                    "-n",
                    TEAM,
                    f"--as={ALICE}",
                    f"--as-group={ALICE_GROUP}",
                    check=False,
                ).stdout.strip()
                == "yes"
            ),
            timeout_s=30,
            message="edit to include Darkrooms",
        )
        audited = Audited(
            cluster=cluster,
            audit=audit,
            kubeconfigs={sa: service_account_kubeconfig(cluster, NAMESPACE, sa, tmp / f"{sa}.kubeconfig") for sa in (OPERATOR_SA, API_SA)},
            editor_token=service_account_token(cluster, TEAM, EDITOR, tmp / "kubectl-cache"),
            provider=identity_provider,
            client=oauth,
            api_ports=ports,
            tmp=tmp,
        )
        # kube-apiserver reads the provider's keys in the background; until then it refuses ID tokens
        token = audited.alice_id_token()
        wait_for(
            lambda: whoami(cluster.url, cluster.ca_path, token), timeout_s=60, interval_s=0.2, message="kube-apiserver to accept ID tokens"
        )
        yield audited
    finally:
        cluster.stop()


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in reversed(started):
        process.stop()


def start_api(audited: Audited, docs: list[dict[str, Any]], port: int, name: str, processes: list[Process]) -> tuple[Process, str]:
    secret_values = {"secret-key": secrets.token_hex(32), "oidc-client-secret": audited.client.client_secret}
    env = deployment_env(docs, API_SA, kubeconfig=audited.kubeconfigs[API_SA], secret_values=secret_values)
    env.update({"DARKROOM_API_HOST": "127.0.0.1", "PORT": str(port), **audited.oidc_settings()})
    process = Process(
        name, api_argv(one(docs, "Deployment", API_SA)["spec"]["template"]["spec"]["containers"][0]), env, audited.tmp / f"{name}.log"
    )
    processes.append(process)
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: process.alive() and status_of(base + "/readyz") == 200, timeout_s=60, message=f"{name}'s /readyz")
    return process, base


def oidc_browser(audited: Audited, base: str) -> Browser:
    """alice logged in to the API at ``base`` through the provider (code flow with PKCE), as a browser would."""
    alice = audited.provider.users["alice"]
    http_session = audited.provider.browser()
    http_session.headers["Accept"] = "application/json"
    landed = audited.provider.sign_in_through(http_session, f"{base}/login/oidc?next=/darkrooms", alice.username, alice.password)
    assert landed.status_code == 200 and landed.url.startswith(base + "/darkrooms"), (landed.url, landed.status_code, landed.text[-2000:])
    return Browser(base, http_session)


def _custom_object(custom: client.CustomObjectsApi, kind: tuple[str, str, str], name: str) -> dict[str, Any] | None:
    """One of TEAM's custom objects of ``kind`` (group, version, plural); None while the server answers an error."""
    group, version, plural = kind
    try:
        return as_dict(custom.get_namespaced_custom_object(group, version, TEAM, plural, name))
    except client.ApiException:
        return None


def assert_within_rbac_and_made_by_people(found: list[Entry], docs: list[dict[str, Any]]) -> None:
    """The ServiceAccounts' own requests: within their rules, none refused, every verb used; the people's: every
    write of the team's objects theirs."""
    operator_requests, api_requests = by(found, account(OPERATOR_SA)), by(found, account(API_SA))
    assert len(operator_requests) > 20 and len(api_requests) > 10, "the audit log names each ServiceAccount"
    for component, requests, granted in (
        ("operator", operator_requests, grants(docs, OPERATOR_SA)),
        ("api", api_requests, grants(docs, API_SA)),
    ):
        refused = sorted({str(e.request) for e in requests if e.code == 403})
        assert not refused, f"the API server refused the {component}'s requests: {refused}"
        forbidden = denied(requests, granted)
        assert not forbidden, f"the {component} made requests its RBAC forbids: {forbidden}"
        extra = unused(component, requests, granted)
        assert not extra, f"granted to the {component} but never used (least privilege): {extra}"
    # The reconciler gets a Postgresql's password Secret (never lists or watches Secrets), creates a generated one and
    # patches its ownerReferences (kept with the data volume).
    assert {e.request.verb for e in operator_requests if e.request.resource == "secrets"} == {"get", "create", "patch"}
    # The API's own Secrets are its login sessions, all in darkroom-sessions (none of its own namespace's); it
    # impersonates nobody in this mode.
    assert {e.request.namespace for e in api_requests if e.request.resource == "secrets"} == {SESSIONS_NAMESPACE}
    assert all(e.own for e in api_requests)
    # Who did what: every write of the team's objects and Secrets was made as the person who asked.
    people = {account(EDITOR, TEAM), ALICE}
    writers = {
        e.user
        for e in found
        if e.request.namespace == TEAM
        and e.request.resource in OUR_KINDS
        and e.request.verb in WRITES
        and e.user not in (account(OPERATOR_SA), *GARBAGE_COLLECTOR)
    }
    assert writers == {account(EDITOR, TEAM)}, writers
    assert {e.request.verb for e in by(found, account(EDITOR, TEAM)) if e.request.resource == "secrets"} >= {"create", "patch", "delete"}
    # A detail page's children come from the API's cache (its own list and watch; a person's right to list them is
    # reviewed), found by their controller's UID, and their changes are pushed live.
    watched = {e.request.resource for e in api_requests if e.request.verb == "watch"}
    assert {
        "deployments",
        "statefulsets",
        "services",
        "ingresses",
        "replicasets",
        "pods",
        "persistentvolumeclaims",
        "endpointslices",
    } <= watched
    assert "configmaps" not in watched  # read by name as the person: the API's account may not read ConfigMaps
    assert not [str(e.request) for e in found if e.user in people and e.code == 403]


def editor_client(kubeconfig: Path, token: str) -> client.ApiClient:
    """A client of the cluster's own API as the person with ``token`` (kubectl's way around our API)."""
    from kubernetes import config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    # Neither the admin's client certificate nor its token: the kubeconfig's token would come back before every
    # request through the loader's refresh hook.
    configuration.cert_file = configuration.key_file = None
    configuration.refresh_api_key_hook = None
    configuration.api_key = {"authorization": f"Bearer {token}"}
    return client.ApiClient(configuration)


# -- the tests -----------------------------------------------------------------------------------------


@pytest.mark.kubectl
@pytest.mark.slow
def test_real_requests_stay_within_the_rendered_rbac(audited: Audited, processes: list[Process]) -> None:
    from kubernetes import config

    since = log_size(audited.audit)
    docs = render("base")
    operator_container = one(docs, "Deployment", OPERATOR_SA)["spec"]["template"]["spec"]["containers"][0]
    assert operator_container["command"][0] == "python"
    operator_env = deployment_env(docs, OPERATOR_SA, kubeconfig=audited.kubeconfigs[OPERATOR_SA], secret_values={})
    health_port = free_port()
    operator_env.update({"DARKROOM_OPERATOR_HEALTH_HOST": "127.0.0.1", "DARKROOM_OPERATOR_HEALTH_PORT": str(health_port), **SHORT_LEASE})
    reconciler = Process("reconciler", [sys.executable, *operator_container["command"][1:]], operator_env, audited.tmp / "operator.log")
    processes.append(reconciler)
    api_process, base = start_api(audited, docs, audited.api_ports[0], "api", processes)
    wait_for(lambda: reconciler.alive() and status_of(f"http://127.0.0.1:{health_port}/readyz") == 200, timeout_s=60, message="/readyz")
    token = audited.editor_token

    kube = config.new_client_from_config(config_file=str(audited.cluster.kubeconfig))
    try:
        coordination, custom = client.CoordinationV1Api(kube), client.CustomObjectsApi(kube)
        apps, core = client.AppsV1Api(kube), client.CoreV1Api(kube)

        def holder() -> str:
            try:
                return str(coordination.read_namespaced_lease("darkroom-operator", NAMESPACE).spec.holder_identity or "")
            except client.ApiException:
                return ""

        wait_for(lambda: holder() == POD_NAMES[OPERATOR_SA], timeout_s=30, message="the reconciler to lead")

        def darkroom(name: str) -> dict[str, Any] | None:
            return _custom_object(custom, ("deployments.example.com", "v1", "darkrooms"), name)

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

        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"replicas": 2}, MERGE)
        assert code == 200, body
        wait_for(lambda: apps.read_namespaced_deployment("web", TEAM).spec.replicas == 2, timeout_s=30, message="web scaled")
        # A newer Darkroom loses its only host to the older "web": its Ingress and its Deployment are withdrawn.
        # (The claim's age is creationTimestamp, in whole seconds: wait one so that "late" is unambiguously newer.)
        # The API refuses to give "web" a sub-domain "late" asks for; the person does it with the cluster's own API.
        time.sleep(1.1)
        code, body = http("POST", base + "/darkrooms", token, {"name": "late", "namespace": TEAM, **webfolder, "subDomains": ["late"]})
        assert code == 201, body
        wait_for(lambda: ready("late"), timeout_s=60, message="late Ready")
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"subDomains": ["web", "late"]}, MERGE)
        assert code == 409, body
        with editor_client(audited.cluster.kubeconfig, token) as editor:
            client.CustomObjectsApi(editor).patch_namespaced_custom_object(
                "deployments.example.com", "v1", TEAM, "darkrooms", "web", {"spec": {"subDomains": ["web", "late"]}}
            )
        networking = client.NetworkingV1Api(kube)
        wait_for(lambda: "late" not in {i.metadata.name for i in networking.list_namespaced_ingress(TEAM).items}, timeout_s=30)
        wait_for(lambda: "late" not in {d.metadata.name for d in apps.list_namespaced_deployment(TEAM).items}, timeout_s=30)
        switch = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/s3-copy"}}
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/s3", token, switch, MERGE)
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
        code, body = http("PATCH", base + f"/tasks/{TEAM}/notes", token, {"state": "Finished"}, MERGE)
        assert code == 200, body
        wait_for(lambda: "TaskUpdated" in reasons(), timeout_s=30, message="TaskUpdated")
        code, body = http("PATCH", base + f"/tasks/{TEAM}/notes", token, {"priority": 4}, MERGE, if_match='"1"')
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
        # The dashboard's detail pages show each child (the children panels, from the API's cache).
        editor = Browser(base)
        assert editor.log_in(token) == 204
        for path in (f"/ui/darkrooms/{TEAM}/web", f"/ui/postgresqls/{TEAM}/made"):
            code, html = editor.page(path)
            assert code == 200 and UNREADABLE_CHILD not in html and "not created yet" not in html, (path, code, html[-2000:])
        assert {"given-credentials", "made-credentials"} <= secret_names()
        code, body = http("GET", base + f"/postgresqls/{TEAM}/made", token)
        assert code == 200, body
        code, body = http("PUT", base + f"/postgresqls/{TEAM}/made", token, {**body, "password": "pw-replaced-456"})
        assert code == 200, body
        code, body = http("PATCH", base + f"/postgresqls/{TEAM}/made", token, {"storage": {"size": "2Gi"}}, MERGE, if_match='"1"')
        assert code == 412, body
        for name in ("given", "made"):
            code, body = http("DELETE", base + f"/postgresqls/{TEAM}/{name}", token)
            assert code in (202, 204), body
        wait_for(lambda: postgresql("given") is None and postgresql("made") is None, timeout_s=60, message="Postgresqls gone")

        # A write with an If-Match the cache does not know makes the API re-read the object from the server first.
        code, body = http("PATCH", base + f"/darkrooms/{TEAM}/web", token, {"replicas": 1}, MERGE, if_match='"1"')
        assert code == 412, body
        # Sessions: alice through the provider (her ID token passed through, renewed at each use), the editor with a
        # pasted token; logging out deletes the session, and a copy of the cookie is then refused.
        alice = oidc_browser(audited, base)
        for path in (f"/ui/darkrooms/{TEAM}/web", f"/ui/tasks?namespace={TEAM}"):
            code, html = alice.page(path)
            assert code == 200 and UNREADABLE_CHILD not in html, (path, code, html[-2000:])
        assert alice.log_out() == 204
        pasted = Browser(base)
        assert pasted.log_in(token) == 204
        copy = Browser(base)
        copy.http.cookies.update(pasted.http.cookies)
        assert pasted.log_out() == 204
        assert copy.json("/darkrooms")[0] == 401
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

    assert_within_rbac_and_made_by_people(entries(audited.audit, since), docs)


@pytest.mark.kubectl
@pytest.mark.slow
def test_impersonation_needs_only_its_component(audited: Audited, processes: list[Process], tmp_path: Path) -> None:
    docs = render_with_components(tmp_path, "impersonation")
    kubectl = Kubectl(audited.cluster.kubeconfig, tmp_path / "kubectl-cache")
    component = [one(docs, kind, "darkroom-api-impersonate") for kind in ("ClusterRole", "ClusterRoleBinding")]
    kubectl.run("apply", "--server-side", "--field-manager=darkroom-deploy", "-f", "-", input_text=yaml.safe_dump_all(component))
    since = log_size(audited.audit)
    api_process, base = start_api(audited, docs, audited.api_ports[1], "api-impersonating", processes)
    token = audited.alice_id_token()
    body = {"name": "as-alice", "namespace": TEAM, "source": {"type": "WebFolder", "baseUrl": "https://example.com/a"}, "subDomains": ["a"]}
    code, answer = http("POST", base + "/darkrooms", token, body)
    assert code == 201, answer
    alice = oidc_browser(audited, base)
    code, listed = alice.json(f"/darkrooms?namespace={TEAM}")
    assert code == 200 and "as-alice" in {i["name"] for i in listed["items"]}, listed
    assert alice.log_out() == 204
    code, answer = http("DELETE", base + f"/darkrooms/{TEAM}/as-alice", token)
    assert code in (202, 204), answer
    assert api_process.stop() == 0

    requests = by(entries(audited.audit, since), account(API_SA))
    impersonated = [e for e in requests if not e.own]
    assert impersonated, "the API impersonated alice"
    assert {(e.impersonated_user, tuple(g for g in e.impersonated_groups if g != AUTHENTICATED)) for e in impersonated} == {
        (ALICE, (ALICE_GROUP,))
    }
    assert not sorted({str(e.request) for e in requests if e.own and e.code == 403})
    assert denied(requests, grants(docs, API_SA)) == []
    assert {("", "users", "impersonate"), ("", "groups", "impersonate")} <= used(requests)
    assert denied([e for e in requests if e.own], grants(render("base"), API_SA)) == [], "its own requests need nothing new"
