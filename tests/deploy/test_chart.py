"""deploy/chart/, the Helm chart generated from deploy/ (scripts/chart.py): current, and the same objects as kustomize.

Behaviours covered (Helm built by scripts/build_helm.sh, kubectl's kustomize):

- the checked-in chart is what ``make chart`` writes from deploy/ now, file for file, and two runs write the same bytes;
  docs/operations/install.md's table lists every value with its type and default;
- ``helm lint --strict`` passes;
- ``helm template`` renders, for the default values, exactly the objects ``kubectl kustomize`` renders from deploy/base
  (parsed objects compared, lists keyed by name — env, containers, volumes — by name), plus the one thing the chart
  adds: ``helm.sh/resource-policy: keep`` on every CRD; for every value set otherwise at once (image by digest,
  replicas, host, TLS, class, OIDC, impersonation, the aggregated API with cert-manager, the Darkrooms' domain) it
  renders what a kustomization written here by hand for the same choices renders — not one generated from the chart's
  table of values, so a wrong mapping in that table shows; each component alone and the toggles off render what
  :func:`chart.overlay` makes kustomize render;
- both renders pass ``kubectl apply --server-side --dry-run=server`` on the real control plane (the cert-manager kinds,
  which it does not serve, left out);
- a value of the wrong type, a value the chart does not know and a combination the API would refuse fail
  ``helm template``, naming the value; so does a release in darkroom-system or darkroom-sessions (the chart makes both
  namespaces itself: Helm could not keep its release record there before they exist, nor adopt them after).
"""

from __future__ import annotations

import filecmp
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clusters import RealclusterProcess
from tests.support import Kubectl

from .manifests import DEPLOY, NAMESPACE, ROOT, SESSIONS_NAMESPACE, ident, script

CHART_DIR = DEPLOY / "chart"
INSTALL_DOC = ROOT / "docs" / "operations" / "install.md"
DIGEST = "sha256:" + "ab" * 32
# Every value set otherwise than its default.
NON_DEFAULT: dict[str, Any] = {
    "image.repository": "registry.example.org/team/darkroom-control-panel",
    "image.tag": "1.2.3",
    "image.digest": DIGEST,
    "api.replicas": 3,
    "operator.replicas": 2,
    "operator.domain": "images.example.org",
    "identity.mode": "impersonate",
    "identity.oidc.issuerUrl": "https://login.example.org/realms/team",
    "identity.oidc.clientId": "panel",
    "ingress.host": "panel.example.org",
    "ingress.className": "nginx",
    "ingress.tls.secretName": "panel-tls",
    "aggregator.enabled": True,
    "aggregator.replicas": 2,
    "aggregator.certManager.enabled": True,
}
# The same choices as an overlay of deploy/ (paths relative to deploy/), written by hand.
BY_HAND = f"""
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [base]
components: [components/aggregator, components/aggregator-cert-manager, components/impersonation]
transformers: [transformers]
images:
  - name: darkroom-control-panel
    newName: registry.example.org/team/darkroom-control-panel
    newTag: 1.2.3
    digest: {DIGEST}
patches:
  - patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: darkroom-api}}
      spec:
        replicas: 3
        template:
          spec:
            containers:
              - name: api
                env:
                  - {{name: DARKROOM_API_OIDC_ISSUER_URL, value: "https://login.example.org/realms/team"}}
                  - {{name: DARKROOM_API_OIDC_CLIENT_ID, value: panel}}
  - patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: darkroom-operator}}
      spec:
        replicas: 2
        template:
          spec:
            containers:
              - name: operator
                env:
                  - {{name: DARKROOM_OPERATOR_DOMAIN, value: images.example.org}}
  - patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: darkroom-aggregator}}
      spec: {{replicas: 2}}
  - target: {{kind: Ingress, name: darkroom-api}}
    patch: |-
      - {{op: replace, path: /spec/rules/0/host, value: panel.example.org}}
      - {{op: add, path: /spec/ingressClassName, value: nginx}}
      - {{op: add, path: /spec/tls, value: [{{hosts: [panel.example.org], secretName: panel-tls}}]}}
"""


def chart() -> Any:
    return script("chart")


def helm_template(helm: str, values: dict[str, Any], tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    values_file = tmp / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    return subprocess.run(
        [helm, "template", "darkroom", str(CHART_DIR), "--namespace", "default", "-f", str(values_file), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def helm_objects(helm: str, values: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    result = helm_template(helm, values, tmp)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def normal(node: Any) -> Any:
    """``node`` with every list keyed by name (env, containers, volumes, ports: Kubernetes merges them by name) in
    name order: kustomize's strategic merge moves an item it patched, the template keeps deploy/base's order."""
    if isinstance(node, dict):
        return {key: normal(value) for key, value in node.items()}
    if isinstance(node, list):
        items = [normal(item) for item in node]
        return sorted(items, key=lambda item: item["name"]) if chart().named(items) else items
    return node


def without_keep(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chart's objects without the annotation it adds to the CRDs (checked to be on every CRD, and only there)."""
    for obj in objects:
        annotations = obj["metadata"].get("annotations", {})
        if obj["kind"] == "CustomResourceDefinition":
            assert annotations.pop("helm.sh/resource-policy") == "keep", ident(obj)
            if not annotations:
                del obj["metadata"]["annotations"]
        else:
            assert "helm.sh/resource-policy" not in annotations, ident(obj)
    return objects


def by_ident(objects: list[dict[str, Any]]) -> dict[str, Any]:
    found = {ident(obj): normal(obj) for obj in objects}
    assert len(found) == len(objects), "an object twice"
    return found


def assert_same(helm_render: list[dict[str, Any]], kustomize_render: list[dict[str, Any]]) -> None:
    ours, theirs = by_ident(without_keep(helm_render)), by_ident(kustomize_render)
    assert sorted(ours) == sorted(theirs)
    for name, obj in ours.items():
        assert obj == theirs[name], f"{name} differs:\nhelm:\n{yaml.safe_dump(obj)}\nkustomize:\n{yaml.safe_dump(theirs[name])}"


# --- the chart is generated ------------------------------------------------------------------------------------------


def test_the_checked_in_chart_is_current_and_generated_the_same_twice(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    chart().write(first)
    chart().write(second)
    files = sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(second)) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    checked_in = sorted(str(p.relative_to(CHART_DIR)) for p in CHART_DIR.rglob("*") if p.is_file())
    assert checked_in == files, "deploy/chart has other files than `make chart` writes: run `make chart`"
    _, mismatch, errors = filecmp.cmpfiles(CHART_DIR, first, files, shallow=False)
    assert (mismatch, errors) == ([], []), f"deploy/chart is not current with deploy/: run `make chart` ({mismatch})"


def test_the_documented_values_are_the_charts(tmp_path: Path) -> None:
    """docs/operations/install.md's table: every value of the chart, once, with its type and default."""
    rows = re.findall(r"^\| `([\w.]+)` \| (\w+) \| `([^`]*)` \|", INSTALL_DOC.read_text(), re.MULTILINE)
    documented = [(name, kind, default) for name, kind, default in rows]
    values = chart().defaults()
    expected = [
        (name, value_schema["type"], json.dumps(chart().get(values, name)).strip('"') or '""')
        for name, value_schema, _ in chart().value_docs()
    ]
    assert documented == expected


def test_helm_lint_passes(helm: str) -> None:
    result = subprocess.run([helm, "lint", "--strict", str(CHART_DIR)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the same objects as kustomize ------------------------------------------------------------------------------------


def test_default_values_render_what_the_kustomize_base_renders(
    helm: str, tmp_path: Path, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    assert_same(helm_objects(helm, {}, tmp_path), rendered["base"])


def test_every_value_set_otherwise_renders_what_a_kustomization_for_the_same_choices_renders(helm: str, tmp_path: Path) -> None:
    values = chart().with_values(NON_DEFAULT)
    ours = helm_objects(helm, values, tmp_path)
    assert_same(ours, chart().kustomize(yaml.safe_load(BY_HAND)))
    images = {c["image"] for obj in ours if obj["kind"] == "Deployment" for c in obj["spec"]["template"]["spec"]["containers"]}
    assert images == {f"registry.example.org/team/darkroom-control-panel:1.2.3@{DIGEST}"}


@pytest.mark.parametrize(
    "overrides",
    [
        {"identity.mode": "impersonate", "identity.oidc.issuerUrl": "https://login.example.org", "identity.oidc.clientId": "p"},
        {"aggregator.enabled": True},
        {"aggregator.enabled": True, "aggregator.certManager.enabled": True},
        {"ingress.enabled": False, "crds.install": False},
        {"image.tag": "2.0.0", "ingress.tls.secretName": "tls"},
    ],
    ids=["impersonation", "aggregator", "aggregator-cert-manager", "no-ingress-no-crds", "tag-and-tls"],
)
def test_each_choice_renders_what_kustomize_renders_for_it(helm: str, tmp_path: Path, overrides: dict[str, Any]) -> None:
    values = chart().with_values(overrides)
    ours = helm_objects(helm, values, tmp_path)
    theirs = chart().render(values)
    assert_same(ours, theirs)
    if not values["crds"]["install"]:
        assert not [o for o in ours if o["kind"] == "CustomResourceDefinition"]
        assert not [o for o in ours if o["kind"] == "Ingress"]


# --- values checked ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        (["--set", "api.replicas=two"], "/api/replicas"),
        (["--set-string", "aggregator.enabled=yes"], "/aggregator/enabled"),
        (["--set", "image.digest=latest"], "/image/digest"),
        (["--set", "identity.mode=trust-me"], "/identity/mode"),
        (["--set", "identity.oidc.issuerUrl=http://login.example.org"], "/identity/oidc/issuerUrl"),
        (["--set", "ingress.hots=panel.example.org"], "'hots'"),
    ],
    ids=["integer", "boolean", "digest", "enum", "https", "unknown-value"],
)
def test_a_value_of_the_wrong_type_or_unknown_fails_naming_it(helm: str, tmp_path: Path, setting: list[str], named: str) -> None:
    result = helm_template(helm, {}, tmp_path, *setting)
    assert result.returncode != 0 and "values don't meet the specifications of the schema" in result.stderr, result.stderr
    assert named in result.stderr, result.stderr
    assert "kind:" not in result.stdout


@pytest.mark.parametrize("namespace", [NAMESPACE, SESSIONS_NAMESPACE])
def test_a_release_in_a_namespace_the_chart_makes_fails_naming_it(helm: str, tmp_path: Path, namespace: str) -> None:
    result = helm_template(helm, {}, tmp_path, "--namespace", namespace)
    assert result.returncode != 0 and "install the release into another namespace" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"aggregator.certManager.enabled": True}, "aggregator.certManager.enabled needs aggregator.enabled"),
        ({"identity.mode": "impersonate"}, "identity.mode=impersonate needs identity.oidc.issuerUrl"),
        ({"identity.oidc.issuerUrl": "https://login.example.org"}, "identity.oidc.issuerUrl needs identity.oidc.clientId"),
    ],
)
def test_a_combination_the_api_would_refuse_fails_naming_the_values(
    helm: str, tmp_path: Path, overrides: dict[str, Any], message: str
) -> None:
    result = helm_template(helm, chart().with_values(overrides), tmp_path)
    assert result.returncode != 0 and message in result.stderr, result.stderr


# --- the real control plane accepts it --------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_both_renders_pass_a_server_side_dry_run_on_the_real_control_plane(
    realcluster_required: None, realcluster: RealclusterProcess, helm: str, tmp_path: Path
) -> None:
    kubectl = Kubectl(realcluster.kubeconfig, tmp_path / "kubectl-cache")
    for namespace in (NAMESPACE, SESSIONS_NAMESPACE):
        kubectl.run("create", "namespace", namespace, check=False)
    served = {line.split()[-1] for line in kubectl.run("api-resources", "--no-headers").stdout.splitlines() if line.strip()}
    for values in (chart().defaults(), chart().with_values(NON_DEFAULT)):
        objects = helm_objects(helm, values, tmp_path)
        unserved = {o["kind"] for o in objects} - served
        assert unserved <= {"Certificate", "Issuer"}, f"the real control plane does not serve {unserved}"
        kept = [o for o in objects if o["kind"] not in unserved]
        applied = kubectl.run("apply", "--server-side", "--dry-run=server", "-f", "-", input_text=yaml.safe_dump_all(kept))
        assert applied.stdout.count("(server dry run)") == len(kept), applied.stdout
