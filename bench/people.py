"""The people, namespaces and Darkrooms of ``bench/identity.py``, on the real control plane.

:func:`prepare` lays out, with the admin token, what the identity benchmark measures on:

- the product's CRDs and the user roles of ``deploy/base/rbac-users.yaml`` (our kinds aggregated into the
  built-in ``view``/``edit``/``admin`` by kube-controller-manager), ``--namespaces`` namespaces ``team-NN``
  with ``--per-namespace`` Darkrooms each (a realistic status, as ``bench/api.py`` writes them);
- the API's ServiceAccount ``darkroom-system/darkroom-api`` with what the deployed API may do and nothing more —
  the rules of ``deploy/base/rbac-api.yaml``'s ClusterRole (list/watch for the shared cache, ``create`` of
  TokenReviews and SubjectAccessReviews), the session Secrets of its namespace — and a kubeconfig with a
  TokenRequest token of it (the API runs as in a pod: never as the admin);
- the people, ServiceAccounts of namespace ``bench-people`` with TokenRequest tokens: ``person-NNN`` (100) each
  allowed to list Darkrooms in a different half of the namespaces through a RoleBinding of the built-in
  ``view`` role per namespace (balanced: every namespace is in exactly half of the people's halves),
  ``reader`` with ``view`` in every namespace through those RoleBindings (the namespaced path: the API asks
  once per namespace), and ``cluster-reader`` with ``view`` through a ClusterRoleBinding (one question).

What each person may list is then read back from kube-apiserver itself (:func:`listable`: one list per person
and namespace, with the person's own token), not taken from the layout: it is the truth the streams' rows are
counted against. Called by ``bench/identity.py`` only.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from common import ROOT, Conn, Endpoint, install_crds, ready_status, wait_until

from kinds import darkrooms as darkroom_kind

GROUP_PATH = f"/apis/{darkroom_kind.GROUP_VERSION}"
SYSTEM = "darkroom-system"
PEOPLE_NAMESPACE = "bench-people"
API_ACCOUNT = "darkroom-api"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
TOKEN_SECONDS = 6 * 3600
WRITERS = 8

# What the API's ServiceAccount may do in the login mode: the shared cache (list/watch), who is calling
# (TokenReview) and what they may read of the cache (SubjectAccessReview). Writes are made as each person.


def deployed_api_rules() -> list[dict[str, Any]]:
    """The rules of the API's ClusterRole as deployed (deploy/base/rbac-api.yaml): the benchmark's API may do what the
    deployed one may, and no more (a list of its own here fell behind when the API's cache grew a kind)."""
    for doc in yaml.safe_load_all((ROOT / "deploy" / "base" / "rbac-api.yaml").read_text()):
        if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "darkroom-api":
            rules: list[dict[str, Any]] = doc["rules"]
            return rules
    raise LookupError("deploy/base/rbac-api.yaml has no ClusterRole darkroom-api")


SESSION_RULES = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "get", "list", "watch", "update", "delete"]}]


class AdminConn(Conn):
    USER_AGENT = "identity-bench/1"
    RECV_BYTES = 1 << 20


def darkrooms_path(namespace: str) -> str:
    return f"{GROUP_PATH}/namespaces/{namespace}/darkrooms"


@dataclass(frozen=True)
class Person:
    """A ServiceAccount standing for a person: its token, and the namespaces it was given ``view`` in."""

    name: str
    token: str
    granted: frozenset[str]  # what the layout gave (cluster-reader: every namespace, cluster-wide)

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{PEOPLE_NAMESPACE}:{self.name}"


@dataclass
class World:
    """What :func:`prepare` made."""

    namespaces: list[str]
    darkrooms: dict[str, list[str]]  # namespace -> names
    people: list[Person]  # person-000 ... (the 100 distinct people)
    reader: Person  # view in every namespace, namespace by namespace
    cluster_reader: Person  # view cluster-wide
    api_kubeconfig: Path
    may_list: dict[str, frozenset[str]] = field(default_factory=dict)  # person name -> namespaces kube-apiserver lets it list

    @property
    def total(self) -> int:
        return sum(len(names) for names in self.darkrooms.values())


def halves(namespaces: list[str], people: int, seed: int) -> list[frozenset[str]]:
    """``people`` distinct halves of ``namespaces``, two per random permutation: each namespace in exactly half of them."""
    rng = random.Random(seed)
    half = len(namespaces) // 2
    while True:
        found: list[frozenset[str]] = []
        for _ in range((people + 1) // 2):
            order = rng.sample(namespaces, len(namespaces))
            found += [frozenset(order[:half]), frozenset(order[half:])]
        found = found[:people]
        if len(set(found)) == len(found):
            return found


def post_all(conn: Conn, items: Iterable[tuple[str, dict[str, Any]]]) -> None:
    for path, body in items:
        conn.expect(201, "POST", path, body)


def rbac_users(conn: Conn) -> None:
    """``deploy/base/rbac-users.yaml``: the ClusterRoles the built-in view/edit/admin aggregate."""
    for doc in yaml.safe_load_all((ROOT / "deploy" / "base" / "rbac-users.yaml").read_text()):
        if doc and doc.get("kind") == "ClusterRole":
            conn.expect(201, "POST", f"{RBAC}/clusterroles", doc)


def token_of(conn: Conn, namespace: str, account: str) -> str:
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": TOKEN_SECONDS}}
    answer = conn.expect(201, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", request)
    return str(answer["status"]["token"])


def api_account(conn: Conn, endpoint: Endpoint, work: Path) -> Path:
    """The API's ServiceAccount, its RBAC, and a kubeconfig with its token (written to ``work``)."""
    sa = {"metadata": {"name": API_ACCOUNT, "namespace": SYSTEM}}
    subject = [{"kind": "ServiceAccount", "name": API_ACCOUNT, "namespace": SYSTEM}]
    post_all(
        conn,
        [
            (f"/api/v1/namespaces/{SYSTEM}/serviceaccounts", sa),
            (f"{RBAC}/clusterroles", {"metadata": {"name": "bench-darkroom-api"}, "rules": deployed_api_rules()}),
            (
                f"{RBAC}/clusterrolebindings",
                {
                    "metadata": {"name": "bench-darkroom-api"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-darkroom-api"},
                    "subjects": subject,
                },
            ),
            (f"{RBAC}/namespaces/{SYSTEM}/roles", {"metadata": {"name": "bench-darkroom-api-sessions"}, "rules": SESSION_RULES}),
            (
                f"{RBAC}/namespaces/{SYSTEM}/rolebindings",
                {
                    "metadata": {"name": "bench-darkroom-api-sessions"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "bench-darkroom-api-sessions"},
                    "subjects": subject,
                },
            ),
        ],
    )
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "bench", "cluster": {"server": f"https://{endpoint.host}:{endpoint.port}", "certificate-authority": endpoint.ca_file}}
        ],
        "users": [{"name": API_ACCOUNT, "user": {"token": token_of(conn, SYSTEM, API_ACCOUNT)}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": API_ACCOUNT}}],
        "current-context": "bench",
    }
    path = work / "api-kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    return path


def people_and_bindings(conn: Conn, namespaces: list[str], *, people: int, seed: int) -> tuple[list[Person], Person, Person]:
    """The people's ServiceAccounts, one ``view`` RoleBinding per namespace naming those allowed there, a
    ClusterRoleBinding for ``cluster-reader``; their tokens."""
    grants = halves(namespaces, people, seed)
    names = [f"person-{i:03}" for i in range(people)]
    for name in [*names, "reader", "cluster-reader"]:
        conn.expect(201, "POST", f"/api/v1/namespaces/{PEOPLE_NAMESPACE}/serviceaccounts", {"metadata": {"name": name}})
    view = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    for namespace in namespaces:
        allowed = [n for n, granted in zip(names, grants, strict=True) if namespace in granted] + ["reader"]
        subjects = [{"kind": "ServiceAccount", "name": n, "namespace": PEOPLE_NAMESPACE} for n in allowed]
        body = {"metadata": {"name": "bench-viewers"}, "roleRef": view, "subjects": subjects}
        conn.expect(201, "POST", f"{RBAC}/namespaces/{namespace}/rolebindings", body)
    subjects = [{"kind": "ServiceAccount", "name": "cluster-reader", "namespace": PEOPLE_NAMESPACE}]
    conn.expect(
        201, "POST", f"{RBAC}/clusterrolebindings", {"metadata": {"name": "bench-cluster-reader"}, "roleRef": view, "subjects": subjects}
    )
    every = frozenset(namespaces)
    found = [Person(n, token_of(conn, PEOPLE_NAMESPACE, n), g) for n, g in zip(names, grants, strict=True)]
    reader = Person("reader", token_of(conn, PEOPLE_NAMESPACE, "reader"), every)
    cluster_reader = Person("cluster-reader", token_of(conn, PEOPLE_NAMESPACE, "cluster-reader"), every)
    return found, reader, cluster_reader


def darkroom(namespace: str, name: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": darkroom_kind.GROUP_VERSION,
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": "darkroom", "team": f"team-{i % 7}"}},
        "spec": {
            "version": "v0.1.0",
            "replicas": 1 + i % 3,
            "source": {"type": "WebFolder", "baseUrl": f"https://example.com/images/{i}"},
            "subDomains": ["images", "cdn"],
        },
    }


def in_threads(endpoint: Endpoint, work: list[Any], do: Callable[[Conn, Any], None], threads: int = WRITERS) -> None:
    """``do(conn, item)`` for every item, by ``threads`` threads with a keep-alive connection each; the first error is raised."""
    failed: list[BaseException] = []

    def run(items: list[Any]) -> None:
        conn = AdminConn(endpoint)
        try:
            for item in items:
                do(conn, item)
        except BaseException as e:  # handed to the caller below
            failed.append(e)
        finally:
            conn.close()

    running = [threading.Thread(target=run, args=(work[t::threads],)) for t in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    if failed:
        raise failed[0]


def create_darkrooms(endpoint: Endpoint, namespaces: list[str], per_namespace: int) -> dict[str, list[str]]:
    names = {ns: [f"dr-{j:03}" for j in range(per_namespace)] for ns in namespaces}
    work = [(ns, name, i * per_namespace + j) for i, ns in enumerate(namespaces) for j, name in enumerate(names[ns])]

    def create(conn: Conn, item: tuple[str, str, int]) -> None:
        namespace, name, i = item
        created = conn.expect(201, "POST", darkrooms_path(namespace), darkroom(namespace, name, i))
        created["status"] = ready_status([f"images.{name}.example.com", f"cdn.{name}.example.com"], message="all replicas serve")
        conn.expect(200, "PUT", f"{darkrooms_path(namespace)}/{name}/status", created)

    in_threads(endpoint, work, create)
    return names


def listable(endpoint: Endpoint, people: list[Person], namespaces: list[str]) -> dict[str, frozenset[str]]:
    """person name -> the namespaces kube-apiserver lets the person list Darkrooms in (their own token, one list each)."""
    found: dict[str, set[str]] = {p.name: set() for p in people}
    lock = threading.Lock()

    def ask(_: Conn, person: Person) -> None:
        conn = AdminConn(Endpoint(endpoint.port, ca_file=endpoint.ca_file, token=person.token))
        try:
            for namespace in namespaces:
                code, data = conn.request("GET", f"{darkrooms_path(namespace)}?limit=1")
                if code not in (200, 403):
                    raise RuntimeError(f"{person.name} listing {namespace}: {code} {data[:300]!r}")
                if code == 200:
                    with lock:
                        found[person.name].add(namespace)
        finally:
            conn.close()

    in_threads(endpoint, list(people), ask, threads=4)
    return {name: frozenset(spaces) for name, spaces in found.items()}


def prepare(endpoint: Endpoint, work: Path, *, namespaces: int, per_namespace: int, people: int, seed: int = 22) -> World:
    """Everything of the module docstring, on a fresh control plane reached with the admin ``endpoint``."""
    conn = AdminConn(endpoint)
    try:
        teams = [f"team-{i:02}" for i in range(namespaces)]
        install_crds(conn, namespace=SYSTEM, probe_path=f"{GROUP_PATH}/darkrooms")
        post_all(conn, [("/api/v1/namespaces", {"metadata": {"name": ns}}) for ns in [*teams, PEOPLE_NAMESPACE]])
        rbac_users(conn)
        kubeconfig = api_account(conn, endpoint, work)
        found, reader, cluster_reader = people_and_bindings(conn, teams, people=people, seed=seed)

        def view_aggregated() -> bool:
            rules = conn.expect(200, "GET", f"{RBAC}/clusterroles/view").get("rules") or []
            return any("darkrooms" in (r.get("resources") or []) for r in rules)

        wait_until(view_aggregated, 60, "kube-controller-manager to aggregate our kinds into the view role", interval_s=0.2)
    finally:
        conn.close()
    names = create_darkrooms(endpoint, teams, per_namespace)
    world = World(teams, names, found, reader, cluster_reader, kubeconfig)
    everyone = [*found, reader, cluster_reader]

    def as_granted() -> bool:  # RBAC's informers see new bindings within moments
        world.may_list = listable(endpoint, everyone, teams)
        return all(world.may_list[p.name] == p.granted for p in everyone)

    wait_until(as_granted, 60, "kube-apiserver to allow each person what the RoleBindings grant", interval_s=0.5)
    return world
