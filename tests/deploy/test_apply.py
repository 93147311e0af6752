"""The rendered manifests apply to a Kubernetes API server (devcluster), and ``scripts/deploy.sh`` deploys and undeploys.

Behaviours covered (each on a private devcluster, through the kubectl on PATH):

- ``scripts/deploy.sh deploy dev`` (what ``make deploy`` runs) creates the namespace, the Secret
  ``darkroom-api`` with a random 64-hex-digit ``secret-key`` and — given ``DARKROOM_API_OIDC_CLIENT_SECRET`` in its
  environment — the OIDC client secret as it is (any characters; without it, the signing key alone), and
  server-side applies the overlay: every rendered object exists afterwards; a second run keeps the Secret's
  values and changes no object (same resourceVersions);
- an upgrade from a release that kept the login sessions in darkroom-system: ``deploy`` removes that release's
  sessions Role and RoleBinding there (server-side apply does not prune; they would leave the API its rights on the
  namespace's Secrets) and the session Secrets, and keeps the Secret darkroom-api;
- the base and the production overlay pass ``kubectl apply --server-side --dry-run=server``; of
  production, only the kinds devcluster does not serve are left out (PodDisruptionBudget, policy/v1
  — it is checked against the Kubernetes 1.30 schema in test_manifests.py instead);
- ``scripts/deploy.sh undeploy dev`` (``make undeploy``) removes every object it applied (the
  namespace with its Secret included) and keeps the CRDs, and with them the Darkrooms; it ends every login session
  (their Secrets hold people's tokens) and removes the namespace darkroom-sessions — unless someone put a Secret
  there that is not a session: then the namespace stays with that Secret, and undeploy says so.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clusters import ROOT, DevclusterProcess
from tests.support import Kubectl, wait_for

from .manifests import NAMESPACE, SESSIONS_NAMESPACE, of_kind, render, rendered_yaml

DEPLOY_SH = ROOT / "scripts" / "deploy.sh"


# A client secret as a provider may issue it: quotes, a colon, a dollar, a hash — none may break the Secret's YAML.
CLIENT_SECRET = 's3cr\'et: "$HOME" #not-a-comment'


def deploy_sh(kubectl: Kubectl, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DARKROOM_")}
    env = {**clean, **(env or {}), "KUBECTL": f"kubectl --kubeconfig {kubectl.kubeconfig} --cache-dir {kubectl.cache_dir}"}
    result = subprocess.run([str(DEPLOY_SH), *args], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert result.returncode == 0, f"deploy.sh {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def resource_versions(kubectl: Kubectl, docs: list[dict[str, Any]]) -> dict[str, str]:
    """kind namespace/name → resourceVersion of every object in ``docs`` (one ``kubectl get -f -``)."""
    listed = json.loads(kubectl.run("get", "-f", "-", "-o", "json", input_text=yaml.safe_dump_all(docs)).stdout)
    items = listed["items"] if listed.get("kind") == "List" else [listed]
    return {f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in items}


def a_login_session(kubectl: Kubectl, name: str, namespace: str = SESSIONS_NAMESPACE) -> None:
    """A session's Secret as the API makes one (backend/identity/sessions.py), made here as the admin."""
    labels = {"app.kubernetes.io/managed-by": "darkroom-control-panel", "app.kubernetes.io/component": "api-session"}
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "type": "darkroom-control-panel.example.com/session",
        "stringData": {"session": "{}"},
    }
    kubectl.run("create", "-f", "-", input_text=yaml.safe_dump(secret))


def namespace_gone(kubectl: Kubectl, name: str) -> Callable[[], bool]:
    return lambda: kubectl.run("get", "namespace", name, check=False).returncode != 0


def secret_data(kubectl: Kubectl) -> dict[str, str]:
    secret = json.loads(kubectl.run("get", "secret", "darkroom-api", "-n", NAMESPACE, "-o", "json").stdout)
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


@pytest.mark.kubectl
def test_deploy_applies_the_dev_overlay_and_undeploy_removes_it(fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path) -> None:
    cluster = fresh_devcluster()
    kubectl = Kubectl(cluster.kubeconfig, tmp_path / "kubectl-cache")
    docs = render("dev")

    deploy_sh(kubectl, "deploy", "dev", env={"DARKROOM_API_OIDC_CLIENT_SECRET": CLIENT_SECRET})
    # devcluster simulates the rollouts (status writes); compare once they are done.
    kubectl.run("rollout", "status", "-n", NAMESPACE, "deployment/darkroom-operator", "deployment/darkroom-api", "--timeout=60s")
    first = resource_versions(kubectl, docs)
    assert len(first) == len(docs)
    keys = secret_data(kubectl)
    assert set(keys) == {"secret-key", "oidc-client-secret"}
    assert re.fullmatch(r"[0-9a-f]{64}", keys["secret-key"]) and keys["oidc-client-secret"] == CLIENT_SECRET

    deploy_sh(kubectl, "deploy", "dev", env={"DARKROOM_API_OIDC_CLIENT_SECRET": "another"})
    assert secret_data(kubectl) == keys, "an existing Secret is never replaced"
    assert resource_versions(kubectl, docs) == first, "applying again changes nothing"

    # A Darkroom created meanwhile survives undeploy: the CRDs stay. The login sessions do not.
    darkroom = yaml.safe_load((ROOT / "crds" / "samples" / "darkroom-webfolder.yaml").read_text())
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump(darkroom))
    a_login_session(kubectl, "darkroom-session-0123456789abcdef")
    result = deploy_sh(kubectl, "undeploy", "dev")
    assert f"ended 1 login session(s) in {SESSIONS_NAMESPACE}" in result.stdout, result.stdout

    for namespace in (NAMESPACE, SESSIONS_NAMESPACE):
        wait_for(namespace_gone(kubectl, namespace), timeout_s=60, message=f"namespace {namespace} deleted")
    for doc in of_kind(docs, "ClusterRole") + of_kind(docs, "ClusterRoleBinding"):
        assert kubectl.run("get", doc["kind"].lower(), doc["metadata"]["name"], check=False).returncode != 0
    for doc in of_kind(docs, "CustomResourceDefinition"):
        kubectl.run("get", "crd", doc["metadata"]["name"])
    kubectl.run("get", "darkroom", darkroom["metadata"]["name"], "-n", darkroom["metadata"]["namespace"])


@pytest.mark.kubectl
def test_undeploy_keeps_the_sessions_namespace_when_it_holds_a_secret_not_ours(
    fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path
) -> None:
    """Nothing but sessions belongs in darkroom-sessions; a Secret someone else put there is not undeploy's to delete:
    the sessions end, the namespace stays with that Secret, and undeploy says so (everything else is removed)."""
    kubectl = Kubectl(fresh_devcluster().kubeconfig, tmp_path / "kubectl-cache")
    deploy_sh(kubectl, "deploy", "dev")
    a_login_session(kubectl, "darkroom-session-0123456789abcdef")
    a_login_session(kubectl, "darkroom-session-fedcba9876543210")
    kubectl.run("create", "secret", "generic", "someone-elses", "-n", SESSIONS_NAMESPACE, "--from-literal=k=v")

    result = deploy_sh(kubectl, "undeploy", "dev")
    assert f"ended 2 login session(s) in {SESSIONS_NAMESPACE}" in result.stdout, result.stdout
    assert f"kept namespace {SESSIONS_NAMESPACE}" in result.stderr and "secret/someone-elses" in result.stderr, result.stderr
    wait_for(namespace_gone(kubectl, NAMESPACE), timeout_s=60, message=f"namespace {NAMESPACE} deleted")
    left = kubectl.run("get", "secrets", "-n", SESSIONS_NAMESPACE, "-o", "name").stdout.split()
    assert left == ["secret/someone-elses"]
    for kind in ("role", "rolebinding"):
        assert kubectl.run("get", kind, "darkroom-api-sessions", "-n", SESSIONS_NAMESPACE, check=False).returncode != 0, kind


@pytest.mark.kubectl
def test_an_upgrade_takes_the_sessions_and_their_role_out_of_darkroom_system(
    fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path
) -> None:
    kubectl = Kubectl(fresh_devcluster().kubeconfig, tmp_path / "kubectl-cache")
    kubectl.run("create", "namespace", NAMESPACE)
    kubectl.run("create", "secret", "generic", "darkroom-api", "-n", NAMESPACE, "--from-literal=secret-key=kept")
    kubectl.run(
        "create", "role", "darkroom-api-sessions", "-n", NAMESPACE, "--verb=create,get,list,watch,update,delete", "--resource=secrets"
    )
    kubectl.run(
        "create",
        "rolebinding",
        "darkroom-api-sessions",
        "-n",
        NAMESPACE,
        "--role=darkroom-api-sessions",
        f"--serviceaccount={NAMESPACE}:darkroom-api",
    )
    a_login_session(kubectl, "darkroom-session-0123456789abcdef", namespace=NAMESPACE)

    deploy_sh(kubectl, "deploy", "dev")
    for kind in ("role", "rolebinding"):
        assert kubectl.run("get", kind, "darkroom-api-sessions", "-n", NAMESPACE, check=False).returncode != 0, kind
        kubectl.run("get", kind, "darkroom-api-sessions", "-n", SESSIONS_NAMESPACE)
    assert kubectl.run("get", "secrets", "-n", NAMESPACE, "-o", "name").stdout.split() == ["secret/darkroom-api"]
    assert secret_data(kubectl) == {"secret-key": "kept"}


@pytest.mark.kubectl
def test_deploy_without_a_client_secret_makes_only_the_signing_key(
    fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path
) -> None:
    kubectl = Kubectl(fresh_devcluster().kubeconfig, tmp_path / "kubectl-cache")
    result = deploy_sh(kubectl, "deploy", "dev")
    assert "created Secret darkroom-system/darkroom-api (secret-key)" in result.stdout
    keys = secret_data(kubectl)
    assert set(keys) == {"secret-key"} and re.fullmatch(r"[0-9a-f]{64}", keys["secret-key"])


@pytest.mark.kubectl
def test_base_and_production_pass_a_server_side_dry_run(fresh_devcluster: Callable[..., DevclusterProcess], tmp_path: Path) -> None:
    cluster = fresh_devcluster()
    kubectl = Kubectl(cluster.kubeconfig, tmp_path / "kubectl-cache")
    # The namespaces and CRDs must exist for a dry run of what lives in them.
    for namespace in (NAMESPACE, SESSIONS_NAMESPACE):
        kubectl.run("create", "namespace", namespace)
    kubectl.run("apply", "--server-side", "-f", str(ROOT / "crds"))
    kubectl.run("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")
    served = {line.split()[-1] for line in kubectl.run("api-resources", "--no-headers").stdout.splitlines() if line.strip()}

    base = kubectl.run("apply", "--server-side", "--dry-run=server", "-f", "-", input_text=rendered_yaml("base"))
    assert "(server dry run)" in base.stdout

    production = render("production")
    unserved = {d["kind"] for d in production} - served
    assert unserved <= {"PodDisruptionBudget"}, f"devcluster does not serve {unserved}"
    kept = [d for d in production if d["kind"] not in unserved]
    result = kubectl.run("apply", "--server-side", "--dry-run=server", "-f", "-", input_text=yaml.safe_dump_all(kept))
    assert result.stdout.count("(server dry run)") == len(kept)
    assert kubectl.run("get", "deployments", "-n", NAMESPACE, "-o", "name").stdout.strip() == "", "a dry run creates nothing"
