"""The RBAC rules of deploy/base grant each component exactly its verbs: no wildcards, no Secret reads.

Behaviours covered:

- the reconciler's and the API's effective rules (bindings resolved to roles, per namespace) are
  exactly the tables below, identical in every overlay;
- no rule anywhere uses ``*`` (in apiGroups, resources, verbs or resourceNames);
- the reconciler has no rule on Secrets at all; the API may only write (patch) and delete the
  credentials Secrets it manages (server-side apply: patch, plus create for a new one) and delete
  them — no get/list/watch, so it can neither read nor enumerate them;
- leader election is confined to the darkroom-system namespace, with get/update limited to its
  own Lease by name; the startup check may read only the Lease's namespace;
- the model answers like the RBAC authorizer (a Role applies only in its namespace; resourceNames
  restrict; subresources are distinct resources).

Whether these rules cover what the processes really do is tests/deploy/test_rbac_audit.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .manifests import API_SA, NAMESPACE, OPERATOR_SA, OVERLAYS, Request, grants, of_kind, render_with_components, verb_table

NONE: frozenset[str] = frozenset()
READ = {"get", "list", "watch"}
WATCH = {"list", "watch"}  # informers: the reconciler reads only from its cache

OPERATOR_CLUSTER = {
    ("deployments.example.com", "darkrooms", NONE): WATCH,
    ("deployments.example.com", "darkrooms/status", NONE): {"patch"},
    ("deployments.example.com", "darkrooms/finalizers", NONE): {"update"},
    ("example.example.com", "tasks", NONE): WATCH | {"patch"},
    ("example.example.com", "tasks/status", NONE): {"patch"},
    ("", "configmaps", NONE): WATCH | {"create", "patch"},
    ("", "services", NONE): WATCH | {"create", "patch"},
    ("apps", "deployments", NONE): WATCH | {"create", "patch"},
    ("networking.k8s.io", "ingresses", NONE): WATCH | {"create", "patch", "delete"},
    ("", "events", NONE): {"create"},
    ("database.db.example.com", "postgresqls", NONE): WATCH | {"patch"},
    ("database.db.example.com", "postgresqls/status", NONE): {"patch"},
    ("database.db.example.com", "postgresqls/finalizers", NONE): {"update"},
    ("apps", "statefulsets", NONE): WATCH | {"create", "patch"},
    ("", "persistentvolumeclaims", NONE): WATCH,
    ("", "secrets", NONE): {"get", "create"},
}
OPERATOR_LEADER_ELECTION = {
    ("coordination.k8s.io", "leases", NONE): {"create"},
    ("coordination.k8s.io", "leases", frozenset({"darkroom-operator"})): {"get", "update"},
}
API_CLUSTER = {
    ("deployments.example.com", "darkrooms", NONE): READ | {"create", "update", "patch", "delete"},
    ("example.example.com", "tasks", NONE): READ | {"create", "update", "delete"},
    ("database.db.example.com", "postgresqls", NONE): READ | {"create", "update", "patch", "delete"},
    ("", "events", NONE): {"list", "watch"},
    ("", "namespaces", NONE): {"list", "watch"},
    ("", "secrets", NONE): {"create", "patch", "delete"},
    # The detail pages' children panels: read one by one by name.
    ("", "configmaps", NONE): {"get"},
    ("", "services", NONE): {"get"},
    ("", "persistentvolumeclaims", NONE): {"get"},
    ("apps", "deployments", NONE): {"get"},
    ("apps", "statefulsets", NONE): {"get"},
    ("networking.k8s.io", "ingresses", NONE): {"get"},
}
API_SESSIONS = {
    ("", "configmaps", NONE): {"list", "watch", "create"},
    ("", "configmaps", frozenset({"darkroom-api-sessions"})): {"patch"},
}


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
    assert set(granted.namespaced) == {NAMESPACE}, "the logged-out sessions list only in the API's own namespace"
    assert as_sets(verb_table(list(granted.namespaced[NAMESPACE]))) == API_SESSIONS


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_no_wildcards_anywhere(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for role in of_kind(rendered[overlay], "ClusterRole") + of_kind(rendered[overlay], "Role"):
        assert "aggregationRule" not in role
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
                assert not any("*" in value for value in rule.get(field, [])), f"{role['metadata']['name']}: {field} {rule}"


@pytest.mark.kubectl
def test_reconciler_cannot_list_or_change_secrets_and_api_cannot_read_secrets(rendered: dict[str, list[dict[str, Any]]]) -> None:
    operator = grants(rendered["base"], OPERATOR_SA)
    # It gets one Secret by name (a Postgresql's password) and creates a generated one; nothing else.
    for verb in ("list", "watch", "update", "patch", "delete", "deletecollection"):
        assert not operator.allows(Request(verb, "", "secrets", namespace="default", name="x")), verb
    assert not any(any(res.startswith("secrets/") for res in r.resources) for r in operator.all_rules())
    api = grants(rendered["base"], API_SA)
    for verb in ("get", "list", "watch"):
        assert not api.allows(Request(verb, "", "secrets", namespace="default", name="x")), verb
    assert api.allows(Request("patch", "", "secrets", namespace="default", name="d-s3-credentials"))
    assert api.allows(Request("delete", "", "secrets", namespace="default", name="d-s3-credentials"))


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
    assert not operator.allows(Request("delete", "apps", "deployments", namespace="team-a", name="d"))
    # Nobody else is bound to these roles.
    assert grants(rendered["base"], "default").all_rules() == []
    assert grants(rendered["base"], OPERATOR_SA, namespace="default").all_rules() == []


@pytest.mark.kubectl
def test_the_show_password_component_adds_only_get_secrets(tmp_path: Path) -> None:
    """deploy/components/show-password: opt-in read of Secrets for the dashboard's "Show password", nothing more."""
    docs = render_with_components(tmp_path, "show-password")
    with_component = as_sets(verb_table(list(grants(docs, API_SA).cluster)))
    assert with_component == {**API_CLUSTER, ("", "secrets", NONE): API_CLUSTER[("", "secrets", NONE)] | {"get"}}
    assert as_sets(verb_table(list(grants(docs, OPERATOR_SA).cluster))) == OPERATOR_CLUSTER
