"""deploy/components/aggregator (+ aggregator-cert-manager): the aggregated API server, deployable and locked down.

Behaviours covered (rendered as an overlay adds the components to the base):

- the component adds exactly its objects (ServiceAccount, RBAC, Deployment, Service, APIService,
  NetworkPolicies); the cert-manager component adds the Issuers and Certificates and nothing else;
  the default overlays do not include them (opt-in: deploy/components/aggregator/kustomization.yaml);
- every Kubernetes object validates against the 1.30 schemas (strict), the cert-manager objects
  have the fields cert-manager v1 requires; namespaced objects live in darkroom-system except the
  RoleBinding that must be in kube-system (and the base's login-sessions Role and RoleBinding, which keep
  darkroom-sessions with the components too); every object carries the part-of label; no Secret is rendered;
- the Deployment runs ``python -m aggregator`` as its own ServiceAccount with the serving certificate
  from the mounted Secret, probes /livez and /readyz over HTTPS on the port it serves, passes the
  restricted Pod Security profile with our hardening (read-only root, 10001, a writable /tmp);
- Service → pods and port, APIService → Service and port; no ``insecureSkipTLSVerify``, and the
  caBundle comes from cert-manager's cainjector, pointed at the Certificate whose Secret the pod mounts,
  for the Service's DNS name, issued by a CA (so renewals keep the caBundle valid);
- RBAC: the aggregator's ServiceAccount gets exactly list/watch of tasks and events, the delegation
  role (system:auth-delegator) cluster-wide and the requestheader reader Role in kube-system; readers
  of combinedtasks come through the aggregated ``view`` role; the base's components gain nothing;
- NetworkPolicies open 8443 to the aggregator and its egress to DNS and the API server ports only;
- the real control plane (``--cluster=real|both``) accepts every object of the component in a
  server-side dry run (the cert-manager kinds are not served there: checked by shape above).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clusters import RealclusterProcess
from tests.support import Kubectl, install_crds

from .manifests import (
    AGGREGATOR_SA,
    API_SA,
    CLUSTER_SCOPED,
    NAMESPACE,
    OPERATOR_SA,
    PART_OF,
    SESSIONS_NAMESPACE,
    SESSIONS_OBJECTS,
    containers,
    grants,
    ident,
    of_kind,
    one,
    pod_templates,
    render,
    render_with_components,
)
from .test_manifests import schema_errors
from .test_pod_security import restricted_violations

CERT_MANAGER_KINDS = {"Issuer", "Certificate"}
SERVING_SECRET = "darkroom-aggregator-serving-cert"
APISERVICE = "v1.search.task.example.example.com"
COMPONENT_OBJECTS = {
    "ServiceAccount darkroom-system/darkroom-aggregator",
    "ClusterRole darkroom-aggregator",
    "ClusterRoleBinding darkroom-aggregator",
    "ClusterRoleBinding darkroom-aggregator-auth-delegator",
    "RoleBinding kube-system/darkroom-aggregator-auth-reader",
    "ClusterRole darkroom-combinedtasks-view",
    "APIService v1.search.task.example.example.com",
    "Service darkroom-system/darkroom-aggregator",
    "Deployment darkroom-system/darkroom-aggregator",
    "NetworkPolicy darkroom-system/allow-aggregator-https",
    "NetworkPolicy darkroom-system/allow-aggregator-dns-and-kube-apiserver",
}
CERT_MANAGER_OBJECTS = {
    "Issuer darkroom-system/darkroom-aggregator-selfsigned",
    "Certificate darkroom-system/darkroom-aggregator-ca",
    "Issuer darkroom-system/darkroom-aggregator-ca",
    "Certificate darkroom-system/darkroom-aggregator-serving-cert",
}


@pytest.fixture(scope="module")
def with_aggregator(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return render_with_components(tmp_path_factory.mktemp("aggregator"), "aggregator")


@pytest.fixture(scope="module")
def with_cert_manager(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return render_with_components(tmp_path_factory.mktemp("cert-manager"), "aggregator", "aggregator-cert-manager")


def ids(docs: list[dict[str, Any]]) -> set[str]:
    return {ident(d) for d in docs}


@pytest.mark.kubectl
def test_the_components_add_exactly_their_objects_and_are_opt_in(
    with_aggregator: list[dict[str, Any]], with_cert_manager: list[dict[str, Any]]
) -> None:
    base = ids(render("base"))
    assert ids(with_aggregator) == base | COMPONENT_OBJECTS
    assert ids(with_cert_manager) == base | COMPONENT_OBJECTS | CERT_MANAGER_OBJECTS
    for overlay in ("base", "dev", "production"):
        assert not ids(render(overlay)) & (COMPONENT_OBJECTS | CERT_MANAGER_OBJECTS), overlay


@pytest.mark.kubectl
def test_objects_validate_live_in_their_namespace_and_carry_the_label(with_cert_manager: list[dict[str, Any]]) -> None:
    errors = [schema_errors(d) for d in with_cert_manager if d["kind"] not in CERT_MANAGER_KINDS]
    assert [e for e in errors if e] == []
    for doc in with_cert_manager:
        meta = doc["metadata"]
        if doc["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in meta, ident(doc)
        elif ident(doc) == "RoleBinding kube-system/darkroom-aggregator-auth-reader":
            assert one(with_cert_manager, "RoleBinding", "darkroom-aggregator-auth-reader")["subjects"][0]["namespace"] == NAMESPACE
        elif doc["kind"] in ("Role", "RoleBinding") and doc["metadata"]["name"] == "darkroom-api-sessions":
            assert ident(doc) in SESSIONS_OBJECTS and meta["namespace"] == SESSIONS_NAMESPACE, ident(doc)
        else:
            assert meta.get("namespace") == NAMESPACE, ident(doc)
        if doc["kind"] != "CustomResourceDefinition":
            assert (meta.get("labels") or {}).get(PART_OF[0]) == PART_OF[1], ident(doc)
    assert of_kind(with_cert_manager, "Secret") == []
    for doc in with_cert_manager:
        if doc["kind"] in CERT_MANAGER_KINDS:
            assert doc["apiVersion"] == "cert-manager.io/v1", ident(doc)
            spec = doc["spec"]
            if doc["kind"] == "Issuer":
                assert set(spec) in ({"selfSigned"}, {"ca"}), ident(doc)
            else:
                assert spec["secretName"] and spec["issuerRef"]["kind"] == "Issuer", ident(doc)


def aggregator_pod(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    found = [(meta, spec) for where, meta, spec in pod_templates(docs) if where == "Deployment darkroom-system/darkroom-aggregator"]
    assert len(found) == 1
    return found[0]


@pytest.mark.kubectl
def test_the_deployment_runs_the_server_with_its_certificate_probes_and_restricted_security(with_aggregator: list[dict[str, Any]]) -> None:
    meta, spec = aggregator_pod(with_aggregator)
    assert spec["serviceAccountName"] == AGGREGATOR_SA
    assert restricted_violations(meta, spec) == []
    assert spec["securityContext"]["runAsUser"] == 10001 and spec["securityContext"]["fsGroup"] == 10001
    (container,) = containers(spec)
    assert container["command"][:3] == ["python", "-m", "aggregator"]
    flags = dict(arg.removeprefix("--").split("=", 1) for arg in container["command"][3:])
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    cert_dir = str(Path(flags["tls-cert-file"]).parent)
    assert str(Path(flags["tls-private-key-file"]).parent) == cert_dir
    assert (Path(flags["tls-cert-file"]).name, Path(flags["tls-private-key-file"]).name) == ("tls.crt", "tls.key")  # kubernetes.io/tls keys
    assert mounts[cert_dir]["readOnly"] is True
    assert volumes[mounts[cert_dir]["name"]]["secret"]["secretName"] == SERVING_SECRET
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"] == {"drop": ["ALL"]}
    env = {e["name"]: e["value"] for e in container["env"]}
    (port,) = container["ports"]
    assert port["containerPort"] == int(env["AGGREGATOR_SECURE_PORT"]) == 8443
    probes = {kind: container[f"{kind}Probe"]["httpGet"] for kind in ("startup", "liveness", "readiness")}
    assert {k: p["path"] for k, p in probes.items()} == {"startup": "/livez", "liveness": "/livez", "readiness": "/readyz"}
    assert all(p["scheme"] == "HTTPS" and p["port"] == port["name"] for p in probes.values())
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]


@pytest.mark.kubectl
def test_the_apiservice_reaches_the_pods_through_the_service_with_a_verified_certificate(
    with_aggregator: list[dict[str, Any]], with_cert_manager: list[dict[str, Any]]
) -> None:
    meta, spec = aggregator_pod(with_aggregator)
    service = one(with_aggregator, "Service", "darkroom-aggregator")
    assert service["spec"]["selector"].items() <= meta["labels"].items()
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] == containers(spec)[0]["ports"][0]["containerPort"]
    apiservice = one(with_aggregator, "APIService", APISERVICE)
    assert apiservice["spec"]["service"] == {"name": "darkroom-aggregator", "namespace": NAMESPACE, "port": service_port["port"]}
    assert "insecureSkipTLSVerify" not in apiservice["spec"] and "caBundle" not in apiservice["spec"]
    assert "annotations" not in apiservice["metadata"]  # caBundle by hand (docs/operations/deploy.md), kept by server-side apply
    injected = one(with_cert_manager, "APIService", APISERVICE)["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    namespace, name = injected.split("/")
    serving = one(with_cert_manager, "Certificate", name)
    assert namespace == serving["metadata"]["namespace"] == NAMESPACE
    assert serving["spec"]["secretName"] == SERVING_SECRET
    assert f"darkroom-aggregator.{NAMESPACE}.svc" in serving["spec"]["dnsNames"]
    assert "server auth" in serving["spec"]["usages"]
    ca_issuer = one(with_cert_manager, "Issuer", serving["spec"]["issuerRef"]["name"])
    ca = [c for c in of_kind(with_cert_manager, "Certificate") if c["spec"]["secretName"] == ca_issuer["spec"]["ca"]["secretName"]]
    assert len(ca) == 1 and ca[0]["spec"]["isCA"] is True
    assert "selfSigned" in one(with_cert_manager, "Issuer", ca[0]["spec"]["issuerRef"]["name"])["spec"]


NONE: frozenset[str] = frozenset()


@pytest.mark.kubectl
def test_rbac_is_exactly_the_servers_requests_and_adds_nothing_to_the_others(with_aggregator: list[dict[str, Any]]) -> None:
    own = one(with_aggregator, "ClusterRole", "darkroom-aggregator")
    # system:auth-delegator and extension-apiserver-authentication-reader are kube's bootstrap roles (not
    # rendered): checked by reference; tests/aggregator runs the server with exactly these bindings.
    bindings = {
        (b["kind"], b["metadata"].get("namespace", ""), b["roleRef"]["kind"], b["roleRef"]["name"])
        for b in of_kind(with_aggregator, "ClusterRoleBinding") + of_kind(with_aggregator, "RoleBinding")
        if any(s.get("name") == AGGREGATOR_SA and s.get("namespace") == NAMESPACE for s in b.get("subjects", []))
    }
    assert bindings == {
        ("ClusterRoleBinding", "", "ClusterRole", "darkroom-aggregator"),
        ("ClusterRoleBinding", "", "ClusterRole", "system:auth-delegator"),
        ("RoleBinding", "kube-system", "Role", "extension-apiserver-authentication-reader"),
    }
    assert own["rules"] == [
        {"apiGroups": ["example.example.com"], "resources": ["tasks"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch"]},
    ]
    view = one(with_aggregator, "ClusterRole", "darkroom-combinedtasks-view")
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    combinedtasks = {"apiGroups": ["search.task.example.example.com"], "resources": ["combinedtasks"]}
    assert view["rules"] == [{**combinedtasks, "verbs": ["get", "list", "watch"]}]
    base = render("base")
    for account in (OPERATOR_SA, API_SA):
        assert grants(with_aggregator, account) == grants(base, account), account


@pytest.mark.kubectl
def test_network_policies_open_the_serving_port_and_the_api_server_only(with_aggregator: list[dict[str, Any]]) -> None:
    https = one(with_aggregator, "NetworkPolicy", "allow-aggregator-https")["spec"]
    assert https["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "darkroom-aggregator"}}
    assert https["policyTypes"] == ["Ingress"] and https["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8443}]}]
    egress = one(with_aggregator, "NetworkPolicy", "allow-aggregator-dns-and-kube-apiserver")["spec"]
    assert egress["podSelector"] == https["podSelector"] and egress["policyTypes"] == ["Egress"]
    dns, apiserver = egress["egress"]
    assert {p["port"] for p in dns["ports"]} == {53} and dns["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}
    assert "to" not in apiserver and {p["port"] for p in apiserver["ports"]} == {443, 6443}
    assert one(with_aggregator, "NetworkPolicy", "default-deny")["spec"]["podSelector"] == {}


@pytest.mark.kubectl
def test_the_component_passes_a_server_side_dry_run_on_the_real_control_plane(
    realcluster_required: None, realcluster: RealclusterProcess, with_aggregator: list[dict[str, Any]], tmp_path: Path
) -> None:
    """kube-apiserver (with its aggregation layer, RBAC and admission) accepts every object the component adds."""
    kubectl = Kubectl(realcluster.kubeconfig, tmp_path / "kubectl-cache")
    install_crds(realcluster.kubeconfig)
    kubectl.run("create", "namespace", NAMESPACE, check=False)
    docs = [d for d in with_aggregator if ident(d) in COMPONENT_OBJECTS]
    applied = kubectl.run("apply", "--server-side", "--dry-run=server", "-f", "-", input_text=yaml.safe_dump_all(docs))
    assert applied.stdout.count("(server dry run)") == len(COMPONENT_OBJECTS), applied.stdout
