"""Requests made for a person, on the real control plane (RBAC, TokenReview and SubjectAccessReview are real there).

Behaviours: a person's own bearer token goes out without the process's client certificate, so the API
server authenticates the person, not the process (kube-apiserver authenticates a certificate first);
impersonation sends the person's name, groups and extra values; the TokenReviewer tells a valid static
token's user, None for a wrong token, and raises (never "not authenticated") when the server cannot be
reached; :class:`cluster.acting.ActingClient` serves the shared cache's objects only where the person may
read them — a list over every namespace keeps the namespaces they may list, a list or get elsewhere is
refused with who and what — and sends writes with the person's credentials, so the server's refusal
comes back naming them; decisions are cached (a repeated read asks no second review).
"""

from __future__ import annotations

import datetime
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client as k8s

from cluster import CONFIGMAPS, Cache, ClusterError, ConnectionSettings, Forbidden, Transport, connect
from cluster.acting import SELF, ActingClient, Actor
from cluster.attributes import ResourceAttributes
from cluster.connecting import Connection
from cluster.identities import BearerToken, Credentials, Impersonation, User
from cluster.reviewing import AccessReviewer, SelfAccessReviewer, TokenReviewer
from tests.clusters import RealclusterProcess
from tests.support import wait_for

pytestmark = pytest.mark.usefixtures("realcluster_required")

SELFSUBJECTREVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
EDIT = ["get", "list", "watch", "create", "update", "patch", "delete"]


def whoami(transport: Transport, credentials: Credentials) -> dict[str, Any]:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    info: dict[str, Any] = transport.request("POST", SELFSUBJECTREVIEWS, body=body, credentials=credentials)["status"]["userInfo"]
    return info


@pytest.fixture(scope="module")
def admin(realcluster: RealclusterProcess) -> Iterator[Connection]:
    connection = connect(ConnectionSettings(kubeconfig=realcluster.kubeconfig), environ=os.environ)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def teams(realcluster: RealclusterProcess) -> Iterator[tuple[str, str]]:
    """Two namespaces: alice edits ConfigMaps in the first; bob reads them in the first and edits them in the second."""
    api = k8s.ApiClient(_configuration(realcluster))
    core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
    suffix = uuid.uuid4().hex[:6]
    team_a, team_b = f"team-a-{suffix}", f"team-b-{suffix}"
    grants = {team_a: {"alice": EDIT, "bob": ["get", "list", "watch"]}, team_b: {"bob": EDIT}}
    for ns, people in grants.items():
        core.create_namespace({"metadata": {"name": ns}})
        for person, verbs in people.items():
            role = {"metadata": {"name": person}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]}
            rbac.create_namespaced_role(ns, role)
            binding = {
                "metadata": {"name": person},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": person},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": person}],
            }
            rbac.create_namespaced_role_binding(ns, binding)
        core.create_namespaced_config_map(ns, {"metadata": {"name": "settings"}, "data": {"team": ns}})
    yield team_a, team_b
    for ns in grants:
        core.delete_namespace(ns)
    api.close()


def _configuration(realcluster: RealclusterProcess) -> k8s.Configuration:
    configuration = k8s.Configuration()
    configuration.host = realcluster.url
    configuration.ssl_ca_cert = str(realcluster.ca_path)
    configuration.api_key = {"authorization": f"Bearer {realcluster.token()}"}
    return configuration


def _certificate_kubeconfig(realcluster: RealclusterProcess, directory: Path) -> Path:
    """A kubeconfig that authenticates with a client certificate only (CN cert-admin, O system:masters)."""
    pki = realcluster.data_dir / "pki"
    ca = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"), x509.NameAttribute(NameOID.COMMON_NAME, "cert-admin")]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "client.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "client.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": realcluster.url, "certificate-authority": str(realcluster.ca_path)}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [
            {"name": "u", "user": {"client-certificate": str(directory / "client.crt"), "client-key": str(directory / "client.key")}}
        ],
    }
    path = directory / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_persons_token_goes_out_without_our_client_certificate(realcluster: RealclusterProcess, tmp_path: Path) -> None:
    connection = connect(ConnectionSettings(kubeconfig=_certificate_kubeconfig(realcluster, tmp_path)), environ=os.environ)
    try:
        assert whoami(connection.transport, SELF.credentials)["username"] == "cert-admin"
        alice = whoami(connection.transport, BearerToken(realcluster.token("alice")))
        assert alice["username"] == "alice"
        assert "system:masters" not in alice["groups"]
        assert whoami(connection.transport, SELF.credentials)["username"] == "cert-admin"  # the process's pool is unchanged
    finally:
        connection.close()


def test_impersonation_names_the_person_their_groups_and_extra(admin: Connection) -> None:
    carol = User(name="carol", groups=("designers", "oncall"), extra={"acme.com/project": ("atlas", "zeus")})
    info = whoami(admin.transport, Impersonation(carol))
    assert info["username"] == "carol"
    assert set(info["groups"]) == {"designers", "oncall", "system:authenticated"}
    assert info["extra"] == {"acme.com/project": ["atlas", "zeus"]}
    assert repr(BearerToken("secret-value")) == "BearerToken(<redacted>)"
    assert "secret-value" not in repr(Actor(user=carol, credentials=BearerToken("secret-value")))


def test_token_reviews(admin: Connection, realcluster: RealclusterProcess, tmp_path: Path) -> None:
    reviewer = TokenReviewer(transport=admin.transport, ttl_s=60)
    alice = reviewer.review(realcluster.token("alice"))
    assert alice is not None and alice.name == "alice" and "developers" in alice.groups and alice.how == "token"
    assert reviewer.review("not-a-token") is None
    assert reviewer.review(realcluster.token("alice")) == alice and reviewer.stats.sent == 2  # the repeat was cached
    closed = kubeconfig_on_closed_port(realcluster, tmp_path)
    unreachable = connect(ConnectionSettings(kubeconfig=closed, connect_timeout_s=1.0, probe=False), environ=os.environ)
    try:
        with pytest.raises(ClusterError):
            TokenReviewer(transport=unreachable.transport, ttl_s=60).review(realcluster.token("alice"))
        with pytest.raises(ClusterError):
            AccessReviewer(transport=unreachable.transport, allow_ttl_s=60, deny_ttl_s=60).allowed(
                User("alice"), ResourceAttributes("list", "configmaps", namespace="x")
            )
    finally:
        unreachable.close()


def kubeconfig_on_closed_port(realcluster: RealclusterProcess, tmp_path: Path) -> Path:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = yaml.safe_load(realcluster.kubeconfig.read_text())
    for entry in config["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{port}"
    path = tmp_path / "closed.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def acting(admin: Connection, teams: tuple[str, str], realcluster: RealclusterProcess) -> Iterator[Callable[[str], ActingClient]]:
    """``acting(person)``: an ActingClient for alice/bob (their static tokens) or carol (impersonated, no rights)
    over one shared cache of every namespace's ConfigMaps, filled with the admin's credentials."""
    from cluster import CachedClient, ClientSettings, InformerSettings

    cache = Cache(transport=admin.transport, settings=InformerSettings())
    cache.add(CONFIGMAPS)
    cache.start()
    cache.wait_for_sync(30)
    client = CachedClient(transport=admin.transport, cache=cache, settings=ClientSettings(field_manager="test-acting"))
    reviewer = AccessReviewer(transport=admin.transport, allow_ttl_s=60, deny_ttl_s=60)
    tokens = TokenReviewer(transport=admin.transport, ttl_s=60)
    wait_for(lambda: all(client.list(CONFIGMAPS, namespace=ns) for ns in teams), timeout_s=10)

    def make(person: str) -> ActingClient:
        if person == "carol":
            actor = Actor(user=User("carol"), credentials=Impersonation(User("carol")))
        else:
            token = realcluster.token(person)
            user = tokens.review(token)
            assert user is not None
            actor = Actor(user=user, credentials=BearerToken(token))
        return ActingClient(client, actor=actor, reviewer=reviewer)

    yield make
    cache.stop()


def _teams_seen(objects: list[Any], teams: tuple[str, str]) -> set[str]:
    return {o["metadata"]["namespace"] for o in objects} & set(teams)


def test_reads_from_the_shared_cache_are_authorized_per_person(acting: Callable[[str], ActingClient], teams: tuple[str, str]) -> None:
    team_a, team_b = teams
    alice, bob, carol = acting("alice"), acting("bob"), acting("carol")
    assert _teams_seen(alice.list(CONFIGMAPS), teams) == {team_a}
    assert _teams_seen(bob.list(CONFIGMAPS), teams) == {team_a, team_b}
    assert carol.list(CONFIGMAPS) == []
    assert [o["metadata"]["name"] for o in alice.list(CONFIGMAPS, namespace=team_a) if o["metadata"]["name"] == "settings"] == ["settings"]
    with pytest.raises(Forbidden) as refused:
        alice.list(CONFIGMAPS, namespace=team_b)
    assert refused.value.user == "alice"
    assert refused.value.attributes == ResourceAttributes("list", "configmaps", namespace=team_b)
    assert f'User "alice" cannot list resource "configmaps" in API group "" in the namespace "{team_b}"' in refused.value.message
    assert alice.get(CONFIGMAPS, "settings", namespace=team_a)["data"] == {"team": team_a}
    with pytest.raises(Forbidden) as refused:
        alice.get(CONFIGMAPS, "settings", namespace=team_b)
    assert refused.value.attributes == ResourceAttributes("get", "configmaps", namespace=team_b, name="settings")
    with pytest.raises(Forbidden):
        carol.get(CONFIGMAPS, "settings", namespace=team_a, fresh=True)  # from the server, as carol: refused there


def test_decisions_are_cached(admin: Connection, acting: Callable[[str], ActingClient], teams: tuple[str, str]) -> None:
    alice = acting("alice")
    reviewer = alice._reviewer
    assert reviewer is not None
    alice.list(CONFIGMAPS, namespace=teams[0])
    alice.list(CONFIGMAPS)  # asks about every namespace once (and whether alice may list cluster-wide)
    sent, cached = reviewer.stats.sent, reviewer.stats.cached
    for _ in range(5):
        alice.list(CONFIGMAPS, namespace=teams[0])
        alice.list(CONFIGMAPS)
    assert reviewer.stats.sent == sent
    assert reviewer.stats.cached > cached + 10
    assert not acting("carol").may("list", CONFIGMAPS, namespace=teams[0])
    masters = AccessReviewer(transport=admin.transport, allow_ttl_s=60, deny_ttl_s=60)
    assert masters.allowed(User("root", groups=("system:masters",)), ResourceAttributes("delete", "nodes")) and masters.stats.sent == 0


def test_writes_go_out_as_the_person(acting: Callable[[str], ActingClient], teams: tuple[str, str]) -> None:
    team_a, team_b = teams
    alice = acting("alice")
    created = alice.create(CONFIGMAPS, {"metadata": {"name": f"mine-{uuid.uuid4().hex[:6]}", "namespace": team_a}})
    assert created["metadata"]["namespace"] == team_a
    with pytest.raises(Forbidden) as refused:
        alice.create(CONFIGMAPS, {"metadata": {"name": "theirs", "namespace": team_b}})
    assert refused.value.user == "alice"
    assert refused.value.attributes == ResourceAttributes("create", "configmaps", namespace=team_b)
    assert 'User "alice" cannot create resource "configmaps"' in refused.value.message  # the server's own words
    with pytest.raises(Forbidden):
        acting("carol").delete(CONFIGMAPS, "settings", namespace=team_a)
    bob = acting("bob")
    with pytest.raises(Forbidden):
        bob.patch(CONFIGMAPS, "settings", {"data": {"x": "y"}}, namespace=team_a)  # bob only reads team-a
    assert bob.patch(CONFIGMAPS, "settings", {"data": {"x": "y"}}, namespace=team_b)["data"]["x"] == "y"


def test_self_access_reviews_answer_for_whoever_the_credentials_are(
    admin: Connection, realcluster: RealclusterProcess, teams: tuple[str, str]
) -> None:
    reviewer = SelfAccessReviewer(transport=admin.transport, ttl_s=60)
    alice = BearerToken(realcluster.token("alice"))
    create_a = ResourceAttributes("create", "configmaps", namespace=teams[0])
    create_b = ResourceAttributes("create", "configmaps", namespace=teams[1])
    assert reviewer.decide(alice, create_a).allowed
    assert not reviewer.decide(alice, create_b).allowed
    assert not reviewer.decide(Impersonation(User("carol")), create_a).allowed
    assert reviewer.decide(SELF.credentials, create_b).allowed  # the admin
    reviewer.decide(alice, create_a)
    assert reviewer.stats.sent == 4 and reviewer.stats.cached == 1
