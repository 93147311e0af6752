"""The RBAC rules of deploy/ grant each component exactly its verbs: no wildcards, and the API almost nothing of its own.

Behaviours covered:

- the reconciler's and the API's effective rules (bindings resolved to roles, per namespace) are
  exactly the tables below, identical in every overlay;
- no rule anywhere uses ``*`` (in apiGroups, resources, verbs or resourceNames);
- the reconciler has no rule on Secrets but get, create, patch and delete (a Postgresql's password Secret: its
  ownerReferences, which needs delete too — never requested); the API, acting for people with their own credentials,
  may itself only fill its cache (list/watch), review tokens and access, and keep its login sessions in
  darkroom-sessions: no get, create, update, patch or delete of any object of ours or of their children, no Secret outside
  darkroom-sessions — none of its own namespace darkroom-system (the Secret darkroom-api, TLS keys) —, no
  impersonation in the base;
- deploy/components/impersonation adds impersonating users and groups — not ServiceAccounts, UIDs or user extras —
  to the API's ServiceAccount only, and switches the API to ``DARKROOM_API_IDENTITY=impersonate``; nothing else;
- deploy/base/rbac-users.yaml puts our kinds into the built-in roles: read into view (so edit and admin), write into
  edit and admin, and no Secret anywhere (reading a password is the built-in edit's Secret rights);
- leader election is confined to the darkroom-system namespace, with get/update limited to its
  own Lease by name; the startup check may read only the Lease's namespace;
- the model answers like the RBAC authorizer (a Role applies only in its namespace; resourceNames
  restrict; subresources are distinct resources).

Whether these rules cover what the processes really do is tests/deploy/test_rbac_audit.py; that each is needed,
tests/deploy/test_rbac_real.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .manifests import (
    API_SA,
    NAMESPACE,
    OPERATOR_SA,
    OVERLAYS,
    SESSIONS_NAMESPACE,
    Request,
    Rule,
    env_of,
    grants,
    ident,
    of_kind,
    one,
    render,
    render_with_components,
    verb_table,
)

NONE: frozenset[str] = frozenset()
READ = {"get", "list", "watch"}
WATCH = {"list", "watch"}  # informers: the reconciler reads only from its cache

OPERATOR_CLUSTER = {
    ("deployments.example.com", "darkrooms", NONE): WATCH | {"delete"},
    ("deployments.example.com", "darkrooms/status", NONE): {"patch"},
    ("deployments.example.com", "darkrooms/finalizers", NONE): {"update"},
    ("example.example.com", "tasks", NONE): WATCH | {"patch"},
    ("example.example.com", "tasks/status", NONE): {"patch"},
    ("", "configmaps", NONE): WATCH | {"create", "patch"},
    ("", "services", NONE): WATCH | {"create", "patch"},
    ("apps", "deployments", NONE): WATCH | {"create", "patch", "delete"},
    ("networking.k8s.io", "ingresses", NONE): WATCH | {"create", "patch", "delete"},
    ("", "events", NONE): {"create"},
    ("database.db.example.com", "postgresqls", NONE): WATCH | {"patch", "delete"},
    ("database.db.example.com", "postgresqls/status", NONE): {"patch"},
    ("database.db.example.com", "postgresqls/finalizers", NONE): {"update"},
    ("apps", "statefulsets", NONE): WATCH | {"create", "patch"},
    ("", "persistentvolumeclaims", NONE): WATCH,
    ("", "secrets", NONE): {"get", "create", "patch", "delete"},
}
OPERATOR_LEADER_ELECTION = {
    ("coordination.k8s.io", "leases", NONE): {"create"},
    ("coordination.k8s.io", "leases", frozenset({"darkroom-operator"})): {"get", "update"},
}
API_CLUSTER = {
    # the shared cache
    ("deployments.example.com", "darkrooms", NONE): WATCH,
    ("example.example.com", "tasks", NONE): WATCH,
    ("database.db.example.com", "postgresqls", NONE): WATCH,
    ("", "events", NONE): WATCH,
    ("", "namespaces", NONE): WATCH,
    # the reconciler's labelled children, for the detail pages (found by controller UID, pushed live)
    ("", "services", NONE): WATCH,
    ("apps", "deployments", NONE): WATCH,
    ("apps", "statefulsets", NONE): WATCH,
    ("networking.k8s.io", "ingresses", NONE): WATCH,
    # what the cluster's controllers make of them, for the resource tree (labelled too: found by controller UID, pushed live)
    ("apps", "replicasets", NONE): WATCH,
    ("", "pods", NONE): WATCH,
    ("", "persistentvolumeclaims", NONE): WATCH,
    ("discovery.k8s.io", "endpointslices", NONE): WATCH,
    # who is calling, and may they read what the cache holds
    ("authentication.k8s.io", "tokenreviews", NONE): {"create"},
    ("authorization.k8s.io", "subjectaccessreviews", NONE): {"create"},
}
API_SESSIONS = {
    ("", "secrets", NONE): {"create", "get", "list", "watch", "update", "delete"},
}
IMPERSONATION = {
    ("", "users", NONE): {"impersonate"},
    ("", "groups", NONE): {"impersonate"},
}
OUR_KINDS = (("deployments.example.com", "darkrooms"), ("example.example.com", "tasks"), ("database.db.example.com", "postgresqls"))
CHILDREN = (
    ("", "configmaps"),
    ("", "services"),
    ("", "persistentvolumeclaims"),
    ("", "pods"),
    ("apps", "replicasets"),
    ("discovery.k8s.io", "endpointslices"),
    ("", "secrets"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("networking.k8s.io", "ingresses"),
)
CACHED_CHILDREN = (
    ("", "configmaps"),
    ("", "services"),
    ("", "persistentvolumeclaims"),
    ("", "pods"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "replicasets"),
    ("discovery.k8s.io", "endpointslices"),
    ("networking.k8s.io", "ingresses"),
)
EVERY_VERB = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "impersonate")


def as_sets(table: dict[Any, frozenset[str]]) -> dict[Any, set[str]]:
    return {key: set(verbs) for key, verbs in table.items()}


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_operator_verbs_are_exactly_these(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    granted = grants(rendered[overlay], OPERATOR_SA)
    assert as_sets(verb_table(list(granted.cluster))) == OPERATOR_CLUSTER
    assert set(granted.namespaced) == {NAMESPACE}, "leader election only in the operator's own namespace"
    assert as_sets(verb_table(list(granted.namespaced[NAMESPACE]))) == OPERATOR_LEADER_ELECTION


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_api_verbs_are_exactly_these(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    granted = grants(rendered[overlay], API_SA)
    assert as_sets(verb_table(list(granted.cluster))) == API_CLUSTER
    assert set(granted.namespaced) == {SESSIONS_NAMESPACE}, "login sessions only in their own namespace"
    assert as_sets(verb_table(list(granted.namespaced[SESSIONS_NAMESPACE]))) == API_SESSIONS


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_the_api_has_no_right_on_the_secrets_of_its_own_namespace(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    """darkroom-system holds the Secret darkroom-api (signing key, OIDC client secret) and may hold TLS keys: the
    API's own account may neither read nor write any Secret there — its sessions are in darkroom-sessions."""
    api = grants(rendered[overlay], API_SA)
    for name in ("darkroom-api", "darkroom-panel-tls", "darkroom-aggregator-serving-cert", ""):
        for verb in EVERY_VERB:
            assert not api.allows(Request(verb, "", "secrets", namespace=NAMESPACE, name=name)), (verb, name)
    assert api.allows(Request("list", "", "secrets", namespace=SESSIONS_NAMESPACE))


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_no_wildcards_anywhere(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for role in of_kind(rendered[overlay], "ClusterRole") + of_kind(rendered[overlay], "Role"):
        assert "aggregationRule" not in role
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
                assert not any("*" in value for value in rule.get(field, [])), f"{role['metadata']['name']}: {field} {rule}"


@pytest.mark.kubectl
def test_reconciler_cannot_list_or_change_secrets(rendered: dict[str, list[dict[str, Any]]]) -> None:
    operator = grants(rendered["base"], OPERATOR_SA)
    # It gets one Secret by name (a Postgresql's password), creates a generated one and patches its owners; nothing else
    # (delete only because changing ownerReferences needs it: test_rbac_audit shows it is never requested).
    for verb in ("list", "watch", "update", "deletecollection"):
        assert not operator.allows(Request(verb, "", "secrets", namespace="default", name="x")), verb
    assert not any(any(res.startswith("secrets/") for res in r.resources) for r in operator.all_rules())


@pytest.mark.kubectl
def test_the_api_itself_may_write_nothing_of_people_and_read_no_secret_of_theirs(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """Every write and every read beyond the cache is made with the person's credentials: the API's own account
    gets none of that, in a team's namespace or cluster-wide (it lists and watches our kinds and the children it caches)."""
    api = grants(rendered["base"], API_SA)
    for namespace in ("team-a", ""):
        for group, resource in OUR_KINDS + CHILDREN:
            for verb in EVERY_VERB:
                if verb in ("list", "watch") and (group, resource) in OUR_KINDS + CACHED_CHILDREN:
                    continue  # the cache
                assert not api.allows(Request(verb, group, resource, namespace=namespace, name="x")), (verb, resource, namespace)
    for verb in EVERY_VERB:
        assert not api.allows(Request(verb, "", "secrets", namespace="team-a", name="x-credentials")), verb
    assert not any(verb == "impersonate" for rule in api.all_rules() for verb in rule.verbs), "impersonation only in its component"


@pytest.mark.kubectl
def test_the_impersonation_component_adds_users_and_groups_only(tmp_path: Path) -> None:
    """deploy/components/impersonation: the API's ServiceAccount may impersonate users and groups (nothing else, and
    nobody else may), and the API is told to."""
    docs = render_with_components(tmp_path, "impersonation")
    api = grants(docs, API_SA)
    assert as_sets(verb_table(list(api.cluster))) == {**API_CLUSTER, **IMPERSONATION}
    assert as_sets(verb_table(list(api.namespaced[SESSIONS_NAMESPACE]))) == API_SESSIONS
    for resource in ("serviceaccounts", "uids", "userextras/scopes", "userextras"):
        assert not api.allows(Request("impersonate", "", resource, namespace=NAMESPACE, name="x")), resource
        assert not api.allows(Request("impersonate", "authentication.k8s.io", resource, name="x")), resource
    assert as_sets(verb_table(list(grants(docs, OPERATOR_SA).cluster))) == OPERATOR_CLUSTER
    assert grants(docs, "default").all_rules() == []
    (container,) = one(docs, "Deployment", API_SA)["spec"]["template"]["spec"]["containers"]
    assert env_of(container)["DARKROOM_API_IDENTITY"] == {"name": "DARKROOM_API_IDENTITY", "value": "impersonate"}
    without = {ident(d) for d in render("base")}
    assert {ident(d) for d in docs} - without == {"ClusterRole darkroom-api-impersonate", "ClusterRoleBinding darkroom-api-impersonate"}


@pytest.mark.kubectl
def test_our_kinds_are_in_the_built_in_roles(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """deploy/base/rbac-users.yaml: view reads our kinds, edit (and admin) also write them; no Secret rule."""
    roles = {
        r["metadata"]["name"]: r
        for r in of_kind(rendered["base"], "ClusterRole")
        if r["metadata"]["name"].startswith("darkroom-control-panel-")
    }
    aggregated = {
        name: {
            k.rsplit("/", 1)[1] for k, v in r["metadata"]["labels"].items() if k.startswith("rbac.authorization.k8s.io/") and v == "true"
        }
        for name, r in roles.items()
    }
    assert aggregated == {
        "darkroom-control-panel-view": {"aggregate-to-view"},
        "darkroom-control-panel-edit": {"aggregate-to-edit", "aggregate-to-admin"},
    }
    view = verb_table([Rule.parse(r) for r in roles["darkroom-control-panel-view"]["rules"]])
    edit = verb_table([Rule.parse(r) for r in roles["darkroom-control-panel-edit"]["rules"]])
    for group, resource in OUR_KINDS:
        assert view[(group, resource, NONE)] == READ
        assert edit[(group, resource, NONE)] == {"create", "update", "patch", "delete", "deletecollection"}
    assert {resource for _, resource, _ in [*view, *edit]} == {"darkrooms", "tasks", "postgresqls"}


@pytest.mark.kubectl
def test_the_model_answers_like_the_rbac_authorizer(rendered: dict[str, list[dict[str, Any]]]) -> None:
    operator = grants(rendered["base"], OPERATOR_SA)
    lease = Request("update", "coordination.k8s.io", "leases", namespace=NAMESPACE, name="darkroom-operator")
    assert operator.allows(lease)
    assert not operator.allows(Request("update", "coordination.k8s.io", "leases", namespace="default", name="darkroom-operator"))
    assert not operator.allows(Request("update", "coordination.k8s.io", "leases", namespace=NAMESPACE, name="someone-else"))
    assert operator.allows(Request("create", "coordination.k8s.io", "leases", namespace=NAMESPACE))
    assert not operator.allows(Request("get", "", "namespaces", name=NAMESPACE))  # a dry-run Lease create checks the namespace
    assert operator.allows(Request("patch", "deployments.example.com", "darkrooms", "status", namespace="team-a", name="d"))
    assert not operator.allows(Request("update", "deployments.example.com", "darkrooms", "status", namespace="team-a", name="d"))
    assert not operator.allows(Request("patch", "deployments.example.com", "darkrooms", namespace="team-a", name="d"))
    assert not operator.allows(Request("delete", "apps", "statefulsets", namespace="team-a", name="d"))
    # Nobody else is bound to these roles.
    assert grants(rendered["base"], "default").all_rules() == []
    assert grants(rendered["base"], OPERATOR_SA, namespace="default").all_rules() == []
