"""When what the control panel asks is unavailable: the cluster's reviews, or the identity provider.

Behaviours:

- the panel's cluster unreachable (its connection goes through a TCP gate the test shuts): a request whose TokenReview
  or SubjectAccessReview is not cached is 503 — never allowed, never "not authenticated" — for an API client's bearer
  token already reviewed (its access review fails), a bearer token never seen (its TokenReview fails), a dashboard
  session and, when the panel impersonates, a provider's ID token it verified itself;
- the identity provider down (the session's provider is stopped, and started again afterwards on the same ports with
  its clients and keys): the login page says it cannot be reached and ``/login/oidc`` answers 503 instead of sending
  the browser to it; sessions and ID tokens from before keep working — through a passthrough panel and an
  impersonating one, bearer and session — and a session whose ID token lives 5 s keeps working while it is valid
  (its renewal fails quietly), then is 401.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import yaml

from tests.identityfixtures import TEAM_A, Panel, Teams
from tests.identityprovider import HydraProcess, KubeOIDCClients, jwt_claims

from .control_plane import ControlPlane
from .kinds_and_bodies import unique
from .panel_http import loopback, stored_login
from .people import Tokens, wait_until_epoch


class Gate:
    """A TCP forwarder on 127.0.0.1 to ``target_port`` that :meth:`shut` closes for good: every open connection and
    the listener, so new connections are refused at once."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._accept, daemon=True, name="gate")]
        self._threads[0].start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                return
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                thread = threading.Thread(target=self._pump, args=(source, sink), daemon=True, name="gate-pump")
                thread.start()
                self._threads.append(thread)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def shut(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
        for thread in self._threads:
            thread.join(5)


def _through(teams: Teams, gate: Gate, path: Path) -> Path:
    """A copy of the control plane's admin kubeconfig whose server is the gate."""
    config = yaml.safe_load(teams.cluster.kubeconfig.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{gate.port}"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def gated(teams: Teams, panel_factory: Callable[..., Panel], tmp_path: Path) -> Iterator[tuple[Gate, dict[str, Panel]]]:
    """A passthrough and an impersonating panel whose every connection to the cluster goes through one gate."""
    gate = Gate(teams.cluster.port)
    kubeconfig = _through(teams, gate, tmp_path / "kubeconfig")
    panels = {mode: panel_factory(mode, kubeconfig=kubeconfig) for mode in ("passthrough", "impersonate")}
    yield gate, panels
    gate.shut()
    for panel in panels.values():
        panel.stop()


def test_reviews_that_cannot_be_made_are_503_never_allowed(gated: tuple[Gate, dict[str, Panel]], tokens: Tokens) -> None:
    gate, panels = gated
    seen, unseen = tokens["alice"], panels["passthrough"].id_token("alice")
    browser = panels["passthrough"].browser_login("alice")
    http = loopback()
    for panel in panels.values():  # reviewed (and cached) while the cluster answers
        assert (
            http.get(f"{panel.url}/darkrooms", params={"namespace": TEAM_A}, headers={"Authorization": f"Bearer {seen}"}).status_code == 200
        )
    assert browser.get(f"{panels['passthrough'].url}/darkrooms", params={"namespace": TEAM_A}).status_code == 200

    gate.shut()
    missing = f"/darkrooms/{TEAM_A}/{unique('outage')}"  # a get never reviewed: its access review must be made now
    answers = {
        "bearer, access review": http.get(f"{panels['passthrough'].url}{missing}", headers={"Authorization": f"Bearer {seen}"}),
        "bearer, token review": http.get(f"{panels['passthrough'].url}/darkrooms", headers={"Authorization": f"Bearer {unseen}"}),
        "session, access review": browser.get(f"{panels['passthrough'].url}{missing}"),
        "impersonated bearer, access review": http.get(
            f"{panels['impersonate'].url}{missing}", headers={"Authorization": f"Bearer {unseen}"}
        ),
        "impersonated, every namespace": http.get(f"{panels['impersonate'].url}/tasks", headers={"Authorization": f"Bearer {unseen}"}),
    }
    assert {what: answer.status_code for what, answer in answers.items()} == dict.fromkeys(answers, 503)
    http.close()
    browser.close()


@pytest.fixture
def short_lived_panel(panel_factory: Callable[..., Panel], kube_oidc_clients: KubeOIDCClients) -> Panel:
    return panel_factory("passthrough", oauth_client=kube_oidc_clients.short_lived)


@pytest.mark.stops_identity_provider
def test_the_provider_down_the_login_page_says_so_and_sessions_keep_working_until_their_tokens_expire(
    panel: Panel,
    impersonating_panel: Panel,
    short_lived_panel: Panel,
    identity_provider: HydraProcess,
    control_plane: ControlPlane,
) -> None:
    sessions = {
        "passthrough session": (panel, panel.browser_login("bob")),
        "impersonated session": (impersonating_panel, impersonating_panel.browser_login("alice")),
    }
    bearers = {
        "passthrough bearer": (panel, panel.id_token("alice")),  # never seen by kube-apiserver before the outage
        "impersonated bearer": (impersonating_panel, impersonating_panel.id_token("alice")),
    }
    short = short_lived_panel.browser_login("alice")  # its ID token lives 5 s: the provider goes down right after

    identity_provider.stop()
    try:
        _while_the_provider_is_down(panel, short_lived_panel, control_plane, sessions, bearers, short)
    finally:
        identity_provider.start()  # the session's other tests (on this worker) need it: same ports, clients and keys


def _while_the_provider_is_down(
    panel: Panel,
    short_lived_panel: Panel,
    control_plane: ControlPlane,
    sessions: dict[str, tuple[Panel, requests.Session]],
    bearers: dict[str, tuple[Panel, str]],
    short: requests.Session,
) -> None:
    http = loopback()
    login = stored_login(short_lived_panel, short, control_plane)
    assert login is not None
    assert short.get(f"{short_lived_panel.url}/darkrooms", params={"namespace": TEAM_A}).status_code == 200  # renewal failed quietly

    page = http.get(f"{panel.url}/login", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "cannot be reached" in page.text, page.text[-1500:]
    started = http.get(f"{panel.url}/login/oidc", headers={"Accept": "text/html"}, allow_redirects=False)
    assert started.status_code == 503 and "cannot be reached" in started.text, (started.status_code, started.headers.get("Location"))

    for what, (target, browser) in sessions.items():
        assert browser.get(f"{target.url}/darkrooms", params={"namespace": TEAM_A}).status_code == 200, what
    for what, (target, token) in bearers.items():
        answer = http.get(f"{target.url}/darkrooms", params={"namespace": TEAM_A}, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, what

    wait_until_epoch(jwt_claims(login["token"])["exp"] + 1, message="the short-lived session's ID token to expire")
    assert short.get(f"{short_lived_panel.url}/darkrooms", params={"namespace": TEAM_A}).status_code == 401
    for _, browser in sessions.values():
        browser.close()
    short.close()
    http.close()
