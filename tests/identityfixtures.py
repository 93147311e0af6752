"""Fixtures of people with different rights, and control panels that act as them (a pytest plugin: ``-p tests.identityfixtures``).

On the ``oidc_realcluster`` (a real control plane whose kube-apiserver trusts the session's ORY Hydra, user
``oidc:<name>``, groups ``oidc:<group>``):

- ``teams`` (session): the product's CRDs, the user roles of ``deploy/base/rbac-users.yaml`` (aggregated into the
  built-in view/edit/admin), namespaces ``team-a`` and ``team-b`` and ``darkroom-system`` (sessions), and the
  bindings of the built-in roles to the provider's groups: **alice** (``team-a-editors``) edits team-a; **bob**
  (``team-a-viewers``, ``team-b-editors``) views team-a and edits team-b; **carol** has no rights at all. The
  ServiceAccount ``team-a/deployer`` (edit in team-a) gives a Kubernetes token to paste (:meth:`Teams.sa_token`).
- ``panel_factory`` (session): ``make(identity="passthrough"|"impersonate", oauth_client=None, **settings)`` starts a
  control panel in the login mode on its own port (werkzeug, in a thread), registered at the provider as the OIDC client
  ``darkroom-control-panel`` (which kube-apiserver trusts too, :data:`identityprovider.PANEL_CLIENT_ID`) with this port's
  callback added (the client is registered once: the tokens it issued stay valid) — or as ``oauth_client`` (e.g.
  ``kube_oidc_clients.short_lived``, whose tokens expire within seconds); ``settings`` override any of the panel's
  (``kubeconfig``, ``review_cache_ttl_s``, ...). ``panel`` is the passthrough one. :meth:`Panel.id_token` signs a
  person in (code flow with PKCE, no browser) and gives the panel client's ID token — what an API client sends as
  ``Authorization: Bearer``.
- Tests marked ``stops_identity_provider`` (they stop the session's provider, which keeps its clients only in memory)
  run after every other test of the session.

Everything here is test infrastructure: the API under test is ``backend.app.create_app`` itself, unchanged.
"""

from __future__ import annotations

import dataclasses
import secrets
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.clusters import ROOT, RealclusterProcess, free_port
from tests.identityprovider import PANEL_CLIENT_ID
from tests.support import install_crds

if TYPE_CHECKING:
    from flask import Flask

    from tests.identityprovider import HydraProcess, OAuthClient

TEAM_A, TEAM_B, SESSIONS = "team-a", "team-b", "darkroom-system"
# (namespace, built-in role, provider group): who may do what
BINDINGS = ((TEAM_A, "edit", "team-a-editors"), (TEAM_A, "view", "team-a-viewers"), (TEAM_B, "edit", "team-b-editors"))
USER_PREFIX = GROUP_PREFIX = "oidc:"


STOPS_PROVIDER = "stops_identity_provider"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{STOPS_PROVIDER}: stops the session's identity provider; runs after every other test")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that stop the session's identity provider go last (the sort is stable: the others keep their order)."""
    items.sort(key=lambda item: item.get_closest_marker(STOPS_PROVIDER) is not None)


@dataclass
class Teams:
    """The namespaces and people of the identity tests, on ``cluster``."""

    cluster: RealclusterProcess
    namespaces: tuple[str, str] = (TEAM_A, TEAM_B)

    def kubectl(self, *args: str, input_text: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """kubectl as the admin of the cluster."""
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.cluster.kubeconfig), *args], capture_output=True, text=True, input=input_text, timeout=60
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def sa_token(self, namespace: str = TEAM_A, name: str = "deployer", duration: str = "1h") -> str:
        """A token of a ServiceAccount (``kubectl create token``): what a person pastes to log in."""
        return self.kubectl("create", "token", name, "-n", namespace, f"--duration={duration}").stdout.strip()


def _apply_teams(teams: Teams) -> None:
    install_crds(teams.cluster.kubeconfig)
    teams.kubectl("apply", "-f", str(ROOT / "deploy" / "base" / "rbac-users.yaml"))
    for namespace in (TEAM_A, TEAM_B, SESSIONS):
        teams.kubectl("create", "namespace", namespace)
    for namespace, role, group in BINDINGS:
        teams.kubectl(
            "create", "rolebinding", f"{role}-{group}", "-n", namespace, f"--clusterrole={role}", f"--group={GROUP_PREFIX}{group}"
        )
    teams.kubectl("create", "serviceaccount", "deployer", "-n", TEAM_A)
    teams.kubectl("create", "rolebinding", "deployer-edit", "-n", TEAM_A, "--clusterrole=edit", f"--serviceaccount={TEAM_A}:deployer")
    # the aggregation controller fills view/edit/admin shortly after the roles appear
    teams.kubectl("wait", "--for=jsonpath={.rules[0]}", "clusterrole/edit", "--timeout=30s")


@pytest.fixture(scope="session")
def teams(oidc_realcluster: RealclusterProcess) -> Teams:
    found = Teams(cluster=oidc_realcluster)
    _apply_teams(found)
    return found


@dataclass
class Panel:
    """A running control panel (login mode) and what a test needs to talk to it."""

    url: str
    app: Flask
    settings: Any
    provider: HydraProcess
    client: OAuthClient
    stop: Callable[[], None] = field(repr=False)

    def id_token(self, user: str) -> str:
        """``user`` signed in at the provider for this panel's client: the ID token (kube trusts its audience too)."""
        person = self.provider.users[user]
        return self.provider.authorization_code_tokens(self.client, person.username, person.password).id_token

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.id_token(user)}"}

    def browser_login(self, user: str, next_path: str = "/darkrooms") -> requests.Session:
        """A browser (cookie jar) logged in to this panel through the provider as ``user`` (no JavaScript needed)."""
        person = self.provider.users[user]
        http = self.provider.browser()
        http.headers["Accept"] = "application/json"
        landed = self.provider.sign_in_through(http, f"{self.url}/login/oidc?next={next_path}", person.username, person.password)
        if not landed.url.startswith(self.url + next_path):
            raise AssertionError(f"{user}'s login ended at {landed.url} ({landed.status_code}): {landed.text[-2500:]}")
        return http


def _callbacks(port: int) -> tuple[list[str], list[str]]:
    """A panel's redirect URI and post-logout redirect URI at the provider."""
    base = f"http://127.0.0.1:{port}"
    return [f"{base}/login/oidc/callback"], [f"{base}/login?logged_out=1"]


def _register_panel_client(provider: HydraProcess, secret: str, port: int, registered: OAuthClient | None) -> OAuthClient:
    """Register :data:`PANEL_CLIENT_ID` with the first panel's callback and logout return (Hydra's admin API), or add a
    later panel's to it: the client is never registered again, so the tokens it issued (refresh tokens of open
    sessions) stay valid."""
    redirects, logged_out = _callbacks(port)
    if registered is not None:
        return provider.add_redirect_uris(registered, redirects, logged_out)
    with requests.Session() as http:
        http.verify = str(provider.ca_path)
        http.delete(f"{provider.admin_url}/admin/clients/{PANEL_CLIENT_ID}", timeout=10)
    return provider.register_client(PANEL_CLIENT_ID, secret, redirects, logged_out)


@pytest.fixture(scope="session")
def panel_factory(
    teams: Teams, identity_provider: HydraProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Panel]]:
    from werkzeug.serving import make_server

    from backend.api.watch import watching
    from backend.app import create_app
    from backend.server.logs import RequestHandler
    from backend.server.shutdown import shutdown
    from backend.settings import ApiSettings

    started: list[Panel] = []
    lock = threading.Lock()
    secret = secrets.token_urlsafe(24)
    registered: list[OAuthClient] = []  # the panel client, once registered

    def make(identity: str = "passthrough", *, oauth_client: OAuthClient | None = None, **overrides: Any) -> Panel:
        with lock:  # one client at the provider for every panel: each panel's callback is one of its redirect URIs
            port = free_port()
            if oauth_client is None:
                client = _register_panel_client(identity_provider, secret, port, registered[0] if registered else None)
                registered[:] = [client]
            else:  # another client (e.g. one whose tokens expire within seconds), sending browsers to this panel too
                client = identity_provider.add_redirect_uris(oauth_client, *_callbacks(port))
                client = dataclasses.replace(client, redirect_uris=tuple(_callbacks(port)[0]))
            defaults: dict[str, Any] = {
                "kubeconfig": teams.cluster.kubeconfig,
                "authentication": "login",
                "identity": identity,
                "secret_key": secrets.token_hex(32),
                "session_namespace": SESSIONS,
                "oidc_issuer_url": identity_provider.issuer,
                "oidc_client_id": client.client_id,
                "oidc_client_secret": client.client_secret,
                "oidc_ca_file": identity_provider.ca_path,
                "oidc_scopes": "openid profile email groups offline_access",
                "oidc_username_claim": "sub",
                "oidc_username_prefix": USER_PREFIX,
                "oidc_groups_prefix": GROUP_PREFIX,
                "sse_heartbeat_s": 1.0,
            }
            settings = ApiSettings(**{**defaults, **overrides})
            app = create_app(settings)
            server = make_server("127.0.0.1", port, app, threaded=True, request_handler=RequestHandler)
            thread = threading.Thread(target=server.serve_forever, name=f"panel-{port}-{uuid.uuid4().hex[:4]}", daemon=True)
            thread.start()

            def stop() -> None:
                watching.close(app)
                server.shutdown()
                server.server_close()
                thread.join(10)
                shutdown(app)

            panel = Panel(url=f"http://127.0.0.1:{port}", app=app, settings=settings, provider=identity_provider, client=client, stop=stop)
            started.append(panel)
            return panel

    yield make
    for panel in started:
        panel.stop()


@pytest.fixture(scope="session")
def panel(panel_factory: Callable[..., Panel]) -> Panel:
    """The passthrough control panel of the session (people's own tokens go to kube-apiserver)."""
    return panel_factory("passthrough")
