"""The kustomize base and overlays render, validate against Kubernetes 1.30 and say what the product needs.

Behaviours covered:

- ``kubectl kustomize`` renders deploy/base, deploy/overlays/dev and deploy/overlays/production;
  the base holds exactly the expected objects, the CRDs come unchanged from crds/;
- every rendered object validates against the Kubernetes 1.30 schemas (``kubernetes-validate``,
  strict: unknown fields are errors), the CRD files against apiextensions.k8s.io/v1, and the
  samples under crds/samples against the CRDs' own openAPIV3Schema (jsonschema; a broken sample
  is caught);
- namespaced objects live in darkroom-system, but the login sessions' Role and RoleBinding in darkroom-sessions, which
  holds nothing else (both namespaces enforce Pod Security "restricted"; the RoleBinding binds darkroom-system's API
  ServiceAccount); every object but the CRDs carries the part-of label ``make undeploy`` deletes by; no Secret is
  rendered (the API's Secret is made at deploy time);
- the Deployments: entry points of the image, env the settings read (leader election with the pod
  name as identity and the Lease in the pod's namespace; the API in the login mode, passthrough, OIDC issuer and
  client id as plain settings, its signing key and OIDC client secret from the Secret, never literal, no shared
  token; sessions in darkroom-sessions), and the API's own startup checks accept them; probes on /healthz and
  /readyz at the ports the processes serve, requests and memory limits on every container;
- Services and the Ingress point at ports and pods that exist; NetworkPolicies deny by default and
  open exactly DNS, the API server ports, the API's HTTP port and the operator's metrics port;
- overlays: dev runs one replica each; production two reconciler replicas with leader election,
  two API replicas, PodDisruptionBudgets, larger resources, a registry image and TLS on the Ingress.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from .manifests import (
    API_SA,
    CLUSTER_SCOPED,
    NAMESPACE,
    OPERATOR_SA,
    OVERLAYS,
    PART_OF,
    ROOT,
    SESSIONS_NAMESPACE,
    SESSIONS_OBJECTS,
    containers,
    env_of,
    ident,
    of_kind,
    one,
    pod_templates,
)
from .running import resolve_env

K8S_VERSION = "1.30.0"
CRDS = sorted((ROOT / "crds").glob("*.yaml"))
SAMPLES = sorted((ROOT / "crds" / "samples").glob("*.yaml"))

BASE_OBJECTS = {
    "Namespace darkroom-system",
    "Namespace darkroom-sessions",
    "CustomResourceDefinition darkrooms.deployments.example.com",
    "CustomResourceDefinition tasks.example.example.com",
    "CustomResourceDefinition postgresqls.database.db.example.com",
    "ServiceAccount darkroom-system/darkroom-operator",
    "ServiceAccount darkroom-system/darkroom-api",
    "ClusterRole darkroom-operator",
    "ClusterRoleBinding darkroom-operator",
    "Role darkroom-system/darkroom-operator-leader-election",
    "RoleBinding darkroom-system/darkroom-operator-leader-election",
    "ClusterRole darkroom-api",
    "ClusterRoleBinding darkroom-api",
    *SESSIONS_OBJECTS,
    "ClusterRole darkroom-control-panel-view",
    "ClusterRole darkroom-control-panel-edit",
    "ValidatingAdmissionPolicy darkroom-api-secrets",
    "ValidatingAdmissionPolicyBinding darkroom-api-secrets",
    "Deployment darkroom-system/darkroom-operator",
    "Deployment darkroom-system/darkroom-api",
    "Service darkroom-system/darkroom-operator-metrics",
    "Service darkroom-system/darkroom-api",
    "Ingress darkroom-system/darkroom-api",
    "NetworkPolicy darkroom-system/default-deny",
    "NetworkPolicy darkroom-system/allow-dns-and-kube-apiserver",
    "NetworkPolicy darkroom-system/allow-api-http",
    "NetworkPolicy darkroom-system/allow-operator-metrics",
}


def load_all(path: Any) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def schema_errors(doc: dict[str, Any]) -> str | None:
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        where = ".".join(str(p) for p in e.path) or "(root)"
        return f"{ident(doc)}: {where}: {e.message}"
    except kubernetes_validate.SchemaNotFoundError as e:
        return f"{ident(doc)}: no Kubernetes {K8S_VERSION} schema: {e}"
    return None


# --- rendering and schemas ------------------------------------------------------------------


@pytest.mark.kubectl
def test_base_renders_exactly_the_expected_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    ids = [ident(d) for d in rendered["base"]]
    assert len(ids) == len(set(ids)), f"duplicates: {ids}"
    assert set(ids) == BASE_OBJECTS


@pytest.mark.kubectl
def test_overlays_render_the_base_plus_their_own_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    base = {ident(d) for d in rendered["base"]}
    assert {ident(d) for d in rendered["dev"]} == base
    assert {ident(d) for d in rendered["production"]} == base | {
        "PodDisruptionBudget darkroom-system/darkroom-operator",
        "PodDisruptionBudget darkroom-system/darkroom-api",
    }


@pytest.mark.kubectl
def test_crds_are_rendered_unchanged_from_crds_directory(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for overlay, docs in rendered.items():
        for path in CRDS:
            (source,) = load_all(path)
            assert one(docs, "CustomResourceDefinition", source["metadata"]["name"]) == source, f"{overlay}: {path.name} changed"


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_every_rendered_object_validates_against_kubernetes_1_30(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    errors = [e for e in map(schema_errors, rendered[overlay]) if e]
    assert not errors, "\n".join(errors)


def test_crd_files_validate_as_apiextensions_v1() -> None:
    for path in CRDS:
        for doc in load_all(path):
            assert doc["apiVersion"] == "apiextensions.k8s.io/v1"
            assert schema_errors(doc) is None, schema_errors(doc)


def test_the_validator_rejects_what_kubernetes_would() -> None:
    (crd,) = load_all(CRDS[0])
    broken = copy.deepcopy(crd)
    broken["spec"]["scope"] = 42
    assert schema_errors(broken) is not None
    extra = copy.deepcopy(crd)
    extra["spec"]["versionz"] = []
    assert schema_errors(extra) is not None


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) → openAPIV3Schema of every served CRD version."""
    schemas = {}
    for path in CRDS:
        for crd in load_all(path):
            spec = crd["spec"]
            for version in spec["versions"]:
                schemas[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    return schemas


def cr_errors(doc: dict[str, Any], schemas: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    schema = schemas[(doc["apiVersion"], doc["kind"])]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(doc)]


def test_samples_validate_against_their_crd_schemas() -> None:
    schemas = crd_schemas()
    checked = 0
    for path in SAMPLES:
        for doc in load_all(path):
            if (doc["apiVersion"], doc["kind"]) in schemas:
                assert cr_errors(doc, schemas) == [], path.name
                checked += 1
            else:
                assert schema_errors(doc) is None, schema_errors(doc)
    assert checked == 4


def test_a_broken_sample_is_caught() -> None:
    schemas = crd_schemas()
    (darkroom,) = load_all(ROOT / "crds" / "samples" / "darkroom-webfolder.yaml")
    darkroom["spec"]["source"]["type"] = "FTP"
    darkroom["spec"]["replicas"] = "two"
    errors = cr_errors(darkroom, schemas)
    assert any(e.startswith("spec.source.type") for e in errors), errors
    assert any(e.startswith("spec.replicas") for e in errors), errors


# --- what every overlay must say -------------------------------------------------------------


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_namespaces_labels_and_no_secrets(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for doc in rendered[overlay]:
        meta = doc["metadata"]
        if doc["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in meta, ident(doc)
        else:
            assert meta.get("namespace") == (SESSIONS_NAMESPACE if ident(doc) in SESSIONS_OBJECTS else NAMESPACE), ident(doc)
        labels = meta.get("labels") or {}
        if doc["kind"] == "CustomResourceDefinition":
            assert PART_OF[0] not in labels, f"{ident(doc)}: `make undeploy` deletes by {PART_OF[0]} and must keep the CRDs"
        else:
            assert labels.get(PART_OF[0]) == PART_OF[1], ident(doc)
    assert of_kind(rendered[overlay], "Secret") == []
    for name in (NAMESPACE, SESSIONS_NAMESPACE):
        namespace = one(rendered[overlay], "Namespace", name)
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted", name


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_the_sessions_namespace_holds_only_the_api_sessions_rights(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    """darkroom-sessions: the sessions Role (Secrets, nothing else) bound to the API's ServiceAccount of
    darkroom-system — not to any account of darkroom-sessions, which runs nothing."""
    docs = rendered[overlay]
    assert {ident(d) for d in docs if d["metadata"].get("namespace") == SESSIONS_NAMESPACE} == SESSIONS_OBJECTS
    role = one(docs, "Role", "darkroom-api-sessions")
    assert {resource for rule in role["rules"] for resource in rule["resources"]} == {"secrets"}
    binding = one(docs, "RoleBinding", "darkroom-api-sessions")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "darkroom-api-sessions"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": API_SA, "namespace": NAMESPACE}]
    # make undeploy deletes this namespace last, picked by this label
    labelled = [ident(d) for d in docs if (d["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "api-sessions"]
    assert labelled == [f"Namespace {SESSIONS_NAMESPACE}"]


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_operator_deployment(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    deployment = one(rendered[overlay], "Deployment", "darkroom-operator")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == OPERATOR_SA
    (container,) = spec["containers"]
    assert container["command"] == ["python", "-m", "darkroom_operator"]
    env = env_of(container)
    assert env["DARKROOM_OPERATOR_LEADER_ELECTION"]["value"] == "true"
    assert env["DARKROOM_OPERATOR_IDENTITY"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["DARKROOM_OPERATOR_LEASE_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["DARKROOM_OPERATOR_HEALTH_HOST"]["value"] == "0.0.0.0", "the kubelet probes the pod IP"
    port = int(env["DARKROOM_OPERATOR_HEALTH_PORT"]["value"])
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"health": port}
    assert_probes(container, "health")


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_api_deployment(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    deployment = one(rendered[overlay], "Deployment", "darkroom-api")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == API_SA
    (container,) = spec["containers"]
    assert container["command"] == ["gunicorn", "-c", "python:backend.server.gunicorn_conf", "backend.server.wsgi:app"]
    env = env_of(container)
    assert env["DARKROOM_API_HOST"]["value"] == "0.0.0.0"
    port = int(env["PORT"]["value"])
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"http": port}
    assert "DARKROOM_API_TOKEN" not in env, "the shared token is gone: it would stop the API"
    assert env["DARKROOM_API_AUTHENTICATION"]["value"] == "login"
    assert env["DARKROOM_API_IDENTITY"]["value"] == "passthrough"
    for name in ("DARKROOM_API_OIDC_ISSUER_URL", "DARKROOM_API_OIDC_CLIENT_ID"):
        assert "value" in env[name], f"{name} is a plain setting"
    secret_refs = {
        "DARKROOM_API_SECRET_KEY": {"name": "darkroom-api", "key": "secret-key"},
        "DARKROOM_API_OIDC_CLIENT_SECRET": {"name": "darkroom-api", "key": "oidc-client-secret", "optional": True},
    }
    for name, ref in secret_refs.items():
        assert "value" not in env[name], f"{name} must come from a Secret"
        assert env[name]["valueFrom"] == {"secretKeyRef": ref}
    assert env["DARKROOM_API_SESSION_NAMESPACE"] == {"name": "DARKROOM_API_SESSION_NAMESPACE", "value": SESSIONS_NAMESPACE}
    assert_probes(container, "http")


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_the_api_starts_with_what_its_deployment_says(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    """The API's settings, read from the container's env as the kubelet resolves it, pass the API's own startup
    checks: login off loopback (never the local mode), the sessions in darkroom-sessions; OIDC in production."""
    from backend.settings import ApiSettings

    (container,) = one(rendered[overlay], "Deployment", "darkroom-api")["spec"]["template"]["spec"]["containers"]
    environ = resolve_env(container, pod="darkroom-api-0", secret_values={"secret-key": "k" * 64})
    settings = ApiSettings.from_environ(environ).check()
    assert (settings.local, settings.on_loopback, settings.identity) == (False, False, "passthrough")
    assert settings.session_namespace == SESSIONS_NAMESPACE
    assert settings.token_login and settings.oidc == (overlay == "production")
    if settings.oidc:
        assert settings.oidc_issuer_url.startswith("https://") and settings.oidc_client_id


def assert_probes(container: dict[str, Any], port: str) -> None:
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": port}


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_every_container_has_requests_and_a_memory_limit(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for where, _, spec in pod_templates(rendered[overlay]):
        for container in containers(spec):
            resources = container.get("resources") or {}
            assert {"cpu", "memory"} <= set(resources.get("requests", {})), f"{where} {container['name']}"
            assert "memory" in resources.get("limits", {}), f"{where} {container['name']}"
            pinned = "@sha256:" in container["image"] if overlay == "production" else container["image"].split(":")[-1] == "0.1.0"
            assert pinned, f"{where}: pinned image (production: by digest)"


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_services_and_ingress_point_at_real_pods_and_ports(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = rendered[overlay]
    templates = {d["metadata"]["name"]: d["spec"]["template"] for d in of_kind(docs, "Deployment")}
    for service in of_kind(docs, "Service"):
        selector = service["spec"]["selector"]
        matches = [name for name, template in templates.items() if selector.items() <= (template["metadata"].get("labels") or {}).items()]
        assert len(matches) == 1, f"{ident(service)} selects {matches}"
        ports = {p["name"] for c in templates[matches[0]]["spec"]["containers"] for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, f"{ident(service)}: no container port {port['targetPort']}"
    (ingress,) = of_kind(docs, "Ingress")
    services = {s["metadata"]["name"]: {p["name"] for p in s["spec"]["ports"]} for s in of_kind(docs, "Service")}
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["port"]["name"] in services[backend["name"]]
            assert backend["name"] == "darkroom-api"


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_network_policies_deny_by_default_and_open_only_what_is_needed(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = rendered[overlay]
    policies = {p["metadata"]["name"]: p["spec"] for p in of_kind(docs, "NetworkPolicy")}
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}

    def selecting(labels: dict[str, str]) -> list[dict[str, Any]]:
        chosen = []
        for spec in policies.values():
            selector = spec["podSelector"]
            ok = selector.get("matchLabels", {}).items() <= labels.items()
            for expression in selector.get("matchExpressions", []):
                assert expression["operator"] == "In"
                ok = ok and labels.get(expression["key"]) in expression["values"]
            if ok:
                chosen.append(spec)
        return chosen

    def opened(labels: dict[str, str], direction: str) -> set[tuple[str, int]]:
        return {
            (port["protocol"], port["port"])
            for spec in selecting(labels)
            for rule in spec.get(direction, [])
            for port in rule.get("ports", [])
        }

    dns_and_apiserver = {("UDP", 53), ("TCP", 53), ("TCP", 443), ("TCP", 6443)}
    for name, ingress_ports in (("darkroom-api", {("TCP", 5000)}), ("darkroom-operator", {("TCP", 8081)})):
        labels = one(docs, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert opened(labels, "egress") == dns_and_apiserver, name
        assert opened(labels, "ingress") == ingress_ports, name
    # DNS only to kube-dns; every rule opens specific ports, never everything.
    for spec in policies.values():
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction, []):
                assert rule.get("ports"), f"a {direction} rule without ports opens every port: {spec}"
                if any(p["port"] == 53 for p in rule["ports"]):
                    assert rule["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}


# --- overlays -------------------------------------------------------------------------------


def replicas(docs: list[dict[str, Any]], name: str) -> int:
    return int(one(docs, "Deployment", name)["spec"]["replicas"])


def container_of(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    container: dict[str, Any]
    (container,) = one(docs, "Deployment", name)["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.kubectl
def test_dev_overlay_runs_one_replica_each(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = rendered["dev"]
    assert replicas(docs, "darkroom-operator") == 1
    assert replicas(docs, "darkroom-api") == 1
    assert container_of(docs, "darkroom-api")["image"] == "darkroom-control-panel:0.1.0"
    operator_env = env_of(container_of(docs, "darkroom-operator"))
    assert operator_env["DARKROOM_OPERATOR_LOG_JSON"]["value"] == "false"
    assert operator_env["DARKROOM_OPERATOR_DOMAIN"]["value"] == "localhost", "Darkrooms on <subDomain>.localhost"
    (ingress,) = of_kind(docs, "Ingress")
    assert ingress["spec"]["rules"][0]["host"] == "darkroom-panel.localhost"


@pytest.mark.kubectl
def test_production_overlay_runs_two_reconcilers_with_leader_election(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs, base = rendered["production"], rendered["base"]
    assert replicas(docs, "darkroom-operator") == 2
    assert replicas(docs, "darkroom-api") == 2
    operator = container_of(docs, "darkroom-operator")
    assert env_of(operator)["DARKROOM_OPERATOR_LEADER_ELECTION"]["value"] == "true"
    for name in ("darkroom-operator", "darkroom-api"):
        container = container_of(docs, name)
        name_part, _, digest = container["image"].partition("@")
        assert name_part == "registry.example.com/darkroom-control-panel", "production: the image from your registry"
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), "production: the image pinned by digest, never a movable tag"
        mem = container["resources"]["limits"]["memory"]
        assert mem != container_of(base, name)["resources"]["limits"]["memory"], f"{name}: production resources"
        pdb = one(docs, "PodDisruptionBudget", name)["spec"]
        assert pdb["minAvailable"] == 1
        assert pdb["selector"]["matchLabels"] == one(docs, "Deployment", name)["spec"]["selector"]["matchLabels"]
        spread = one(docs, "Deployment", name)["spec"]["template"]["spec"]["topologySpreadConstraints"]
        assert spread[0]["topologyKey"] == "kubernetes.io/hostname"
    (ingress,) = of_kind(docs, "Ingress")
    assert ingress["spec"]["tls"] == [{"hosts": [ingress["spec"]["rules"][0]["host"]], "secretName": "darkroom-panel-tls"}]
