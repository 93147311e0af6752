"""Who is calling, where only the real control plane can tell: RBAC decides, TokenReviews are real, and the panel's own
account can be denied something. Not parametrized by ``kube`` (devcluster allows everything).

Covers:

- a person with no rights, sending their ServiceAccount token, lists no Darkroom of a namespace they may not read, is
  refused listing, reading and creating there with 403 problems naming them, the verb, resource and namespace — and
  exactly the same with ``Impersonate-User``/``Impersonate-Group``/``X-Remote-User``/``X-Remote-Group`` headers (also
  named in ``Connection``), over a bearer token or a login session alike;
- the local mode acts as the kubeconfig's identity (the admin here) for whoever sends no credentials, while a bearer
  token sent to it still acts as that token's person;
- a logout whose session Secret cannot be deleted (the panel's own account, a ServiceAccount, may create Secrets in
  the session namespace but not delete them) answers 503 — JSON and HTML — and the session keeps working; once the
  panel may delete, the same logout ends it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask

from backend.app import create_app
from backend.identity.cookies import SESSION_COOKIE
from backend.server.shutdown import shutdown
from backend.settings import ApiSettings
from tests.clusters import RealclusterProcess
from tests.identity.logins import Person, login_settings, service_account_token
from tests.support import install_crds, wait_for

pytestmark = pytest.mark.usefixtures("realcluster_required")

DARKROOMS = ("deployments.example.com", "v1")
RBAC = "rbac.authorization.k8s.io"
SMUGGLED = {
    "Impersonate-User": "admin",
    "Impersonate-Group": "system:masters",
    "X-Remote-User": "admin",
    "X-Remote-Group": "system:masters",
    "Connection": "keep-alive, Impersonate-User, Impersonate-Group, X-Remote-User",
}


@dataclass
class Cluster:
    """The session's real control plane: an admin client, a namespace with one Darkroom in it, a session namespace."""

    realcluster: RealclusterProcess
    admin: Any  # kubernetes.client.ApiClient (system:masters)
    namespace: str
    sessions: str
    apps: list[Flask] = field(default_factory=list)
    cleanups: list[Callable[[], object]] = field(default_factory=list)

    def panel(self, settings: ApiSettings | None = None) -> Flask:
        """A control panel with its own cluster access (default: the local mode, as the admin's kubeconfig)."""
        app = create_app(settings or ApiSettings(kubeconfig=self.realcluster.kubeconfig))
        app.config["TESTING"] = True
        self.apps.append(app)
        return app

    def login_panel(self, kubeconfig: Path | None = None) -> Flask:
        return self.panel(login_settings(kubeconfig or self.realcluster.kubeconfig, self.sessions))

    def person(self) -> Person:
        name = f"nobody-{uuid.uuid4().hex[:6]}"
        return Person(name=f"system:serviceaccount:{self.namespace}:{name}", token=service_account_token(self.admin, self.namespace, name))


@pytest.fixture
def cluster(realcluster: RealclusterProcess) -> Iterator[Cluster]:
    from kubernetes import client, config

    install_crds(realcluster.kubeconfig)
    admin = config.new_client_from_config(config_file=str(realcluster.kubeconfig))
    core: Any = client.CoreV1Api(admin)  # plain dict bodies here: the client sends them as they are
    suffix = uuid.uuid4().hex[:6]
    namespace, sessions = f"theirs-{suffix}", f"sessions-{suffix}"
    for name in (namespace, sessions):
        core.create_namespace({"metadata": {"name": name}})
    body = {"apiVersion": "/".join(DARKROOMS), "kind": "Darkroom", "metadata": {"name": "theirs"},
            "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/i"}, "subDomains": [f"theirs-{suffix}"]}}  # fmt: skip
    client.CustomObjectsApi(admin).create_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", body)
    found = Cluster(realcluster=realcluster, admin=admin, namespace=namespace, sessions=sessions)
    yield found
    for app in found.apps:
        shutdown(app)
    for cleanup in found.cleanups:
        cleanup()
    for name in (namespace, sessions):
        core.delete_namespace(name)
    admin.close()


def _refused(response: Any, person: Person, verb: str, namespace: str) -> None:
    assert response.status_code == 403, response.get_data(as_text=True)
    problem = response.get_json()
    assert (problem["user"], problem["verb"], problem["resource"], problem["namespace"]) == (person.name, verb, "darkrooms", namespace)
    assert problem["group"] == DARKROOMS[0]


def _as_nobody(client: Any, person: Person, namespace: str, headers: dict[str, str]) -> None:
    listed = client.get("/darkrooms", headers=headers)
    assert listed.status_code == 200 and [i for i in listed.get_json()["items"] if i["namespace"] == namespace] == []
    _refused(client.get(f"/darkrooms?namespace={namespace}", headers=headers), person, "list", namespace)
    _refused(client.get(f"/darkrooms/{namespace}/theirs", headers=headers), person, "get", namespace)
    body = {"name": "mine", "namespace": namespace, "source": {"type": "WebFolder", "baseUrl": "https://example.com/i"},
            "subDomains": [f"mine-{namespace}"]}  # fmt: skip
    _refused(client.post("/darkrooms", json=body, headers=headers), person, "create", namespace)


def test_a_person_gets_their_own_rights_whatever_headers_they_add(cluster: Cluster) -> None:
    nobody = cluster.person()
    client = cluster.login_panel().test_client()
    for extra in ({}, SMUGGLED):
        _as_nobody(client, nobody, cluster.namespace, {**nobody.bearer, **extra})
    assert client.post("/login", json={"token": nobody.token}).status_code == 204
    for extra in ({}, SMUGGLED):
        _as_nobody(client, nobody, cluster.namespace, extra)


def test_the_local_mode_acts_as_the_kubeconfig_identity(cluster: Cluster) -> None:
    client = cluster.panel().test_client()  # loopback, nothing set: the local mode, as the admin's kubeconfig
    path = f"/darkrooms/{cluster.namespace}/theirs"
    wait_for(lambda: client.get(path).status_code == 200, message="the Darkroom in the panel's cache")
    assert client.get(path, headers=SMUGGLED).status_code == 200
    nobody = cluster.person()
    _as_nobody(client, nobody, cluster.namespace, nobody.bearer)  # a bearer token still acts as its person


def _panel_account(cluster: Cluster, tmp_path: Path) -> Path:
    """A kubeconfig of a ServiceAccount that may do what a panel needs, but delete no session Secret."""
    from kubernetes import client

    rbac: Any = client.RbacAuthorizationV1Api(cluster.admin)
    name = f"panel-{cluster.sessions}"
    token = service_account_token(cluster.admin, cluster.sessions, "panel")
    reads = ["get", "list", "watch"]
    rules = [
        {"apiGroups": ["deployments.example.com", "example.example.com", "database.db.example.com"], "resources": ["*"], "verbs": reads},
        {"apiGroups": [""], "resources": ["events", "namespaces"], "verbs": reads},
        # the children the detail pages show and what is made of them (their resource tree), cached as deploy/base's
        # API role allows (without them the cache waits out its sync timeout at the panel's start)
        {"apiGroups": [""], "resources": ["services", "pods", "persistentvolumeclaims"], "verbs": ["list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "replicasets"], "verbs": ["list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ]
    subjects = [{"kind": "ServiceAccount", "name": "panel", "namespace": cluster.sessions}]
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    cluster.cleanups.append(lambda: rbac.delete_cluster_role(name))
    rbac.create_cluster_role_binding(
        {"metadata": {"name": name}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name}, "subjects": subjects}
    )
    cluster.cleanups.append(lambda: rbac.delete_cluster_role_binding(name))
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": [*reads, "create", "update"]}
    rbac.create_namespaced_role(cluster.sessions, {"metadata": {"name": "sessions"}, "rules": [secrets]})
    rbac.create_namespaced_role_binding(
        cluster.sessions,
        {"metadata": {"name": "sessions"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "sessions"}, "subjects": subjects},
    )
    kubeconfig = yaml.safe_load(cluster.realcluster.kubeconfig.read_text())
    for user in kubeconfig["users"]:
        user["user"] = {"token": token}
    path = tmp_path / "panel.kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    return path


def test_a_logout_that_cannot_end_the_session_says_so(cluster: Cluster, tmp_path: Path) -> None:
    from kubernetes import client

    app = cluster.login_panel(_panel_account(cluster, tmp_path))
    http = app.test_client()
    person = cluster.person()
    assert http.post("/login", json={"token": person.token}).status_code == 204  # creating the session's Secret is allowed
    assert http.get("/darkrooms").status_code == 200

    refused = http.post("/logout")
    assert refused.status_code == 503 and refused.mimetype == "application/problem+json" and refused.headers["Retry-After"]
    assert "You are still logged in" in refused.get_json()["detail"] and "Set-Cookie" not in refused.headers
    page = http.post("/logout", headers={"Accept": "text/html", "Sec-Fetch-Site": "same-origin"})
    assert page.status_code == 503 and "You are still logged in" in page.get_data(as_text=True)
    assert http.get("/darkrooms").status_code == 200  # and so it is
    assert http.get_cookie(SESSION_COOKIE) is not None

    rbac: Any = client.RbacAuthorizationV1Api(cluster.admin)
    may_delete = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch", "create", "update", "delete"]}
    rbac.patch_namespaced_role("sessions", cluster.sessions, {"rules": [may_delete]})
    wait_for(lambda: http.post("/logout").status_code == 204, timeout_s=15, message="the logout once the panel may delete")
    assert http.get("/darkrooms").status_code == 401
