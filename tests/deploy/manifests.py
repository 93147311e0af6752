"""Helpers of the deploy tests: render the kustomizations, pick objects, model RBAC rules.

Used by every module in tests/deploy/. Rendering runs the kubectl on PATH (``kubectl kustomize``,
kustomize built in) and is cached per overlay for the session. The RBAC model answers "may this
ServiceAccount make this request?" the way the RBAC authorizer does: a ClusterRole bound by a
ClusterRoleBinding applies everywhere, a Role (or ClusterRole) bound by a RoleBinding only in that
binding's namespace; a rule matches when its apiGroups, resources (``resource`` or
``resource/subresource``), verbs and — if it has any — resourceNames match.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OVERLAYS = {"base": DEPLOY / "base", "dev": DEPLOY / "overlays" / "dev", "production": DEPLOY / "overlays" / "production"}
NAMESPACE = "darkroom-system"
SESSIONS_NAMESPACE = "darkroom-sessions"  # the API's login sessions, and nothing else (deploy/base/namespace.yaml)
# What the manifests put into SESSIONS_NAMESPACE (every other namespaced object of the base is in NAMESPACE).
SESSIONS_OBJECTS = frozenset({"Role darkroom-sessions/darkroom-api-sessions", "RoleBinding darkroom-sessions/darkroom-api-sessions"})
PART_OF = ("app.kubernetes.io/part-of", "darkroom-control-panel")
OPERATOR_SA, API_SA = "darkroom-operator", "darkroom-api"
AGGREGATOR_SA = "darkroom-aggregator"
CLUSTER_SCOPED = {
    "Namespace",
    "APIService",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod", "ReplicaSet"}


def script(name: str) -> ModuleType:
    """scripts/<name>.py as a module (registered under its name, as scripts/release.py imports scripts/chart.py)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        raise AssertionError("kubectl is not on PATH: the deploy tests render the manifests with `kubectl kustomize`")
    return path


@functools.cache
def _rendered_text(overlay: str) -> str:
    result = subprocess.run([kubectl(), "kustomize", str(OVERLAYS[overlay])], capture_output=True, text=True, timeout=60, cwd=ROOT)
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {OVERLAYS[overlay].relative_to(ROOT)} failed:\n{result.stderr}")
    return result.stdout


def render(overlay: str) -> list[dict[str, Any]]:
    """The objects ``kubectl kustomize deploy/<overlay>`` renders (fresh copies: callers may mutate)."""
    return [doc for doc in yaml.safe_load_all(_rendered_text(overlay)) if doc]


def render_with_components(tmp: Path, *components: str) -> list[dict[str, Any]]:
    """What the base renders with ``deploy/components/<name>`` added, the way an overlay adds them
    (the shared transformers, which put into darkroom-system what names no namespace; no ``namespace:`` field)."""
    overlay = tmp / "overlay"
    overlay.mkdir()
    rel = {part: os.path.relpath(DEPLOY / part, overlay) for part in ("base", "transformers", *(f"components/{c}" for c in components))}
    listed = "".join(f"  - {rel[f'components/{c}']}\n" for c in components)
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {rel['base']}\ncomponents:\n{listed}transformers:\n  - {rel['transformers']}\n"
    )
    result = subprocess.run(
        [kubectl(), "kustomize", "--load-restrictor=LoadRestrictionsNone", str(overlay)], capture_output=True, text=True, timeout=60
    )
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize with components {components} failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def rendered_yaml(overlay: str) -> str:
    return _rendered_text(overlay)


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def ident(doc: dict[str, Any]) -> str:
    meta = doc["metadata"]
    return f"{doc['kind']} {meta.get('namespace', '')}/{meta['name']}".replace(" /", " ")


def pod_templates(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(object id, pod metadata, pod spec) of every workload."""
    for doc in docs:
        if doc["kind"] not in WORKLOAD_KINDS:
            continue
        if doc["kind"] == "Pod":
            yield ident(doc), doc["metadata"], doc["spec"]
        elif doc["kind"] == "CronJob":
            template = doc["spec"]["jobTemplate"]["spec"]["template"]
            yield ident(doc), template.get("metadata") or {}, template["spec"]
        else:
            template = doc["spec"]["template"]
            yield ident(doc), template.get("metadata") or {}, template["spec"]


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec.get("containers", []), *spec.get("ephemeralContainers", [])]


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


# --- RBAC ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One API request as RBAC sees it (what devcluster's audit log records)."""

    verb: str
    api_group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        target = self.resource + (f"/{self.subresource}" if self.subresource else "")
        group = self.api_group or "core"
        where = f" in {self.namespace}" if self.namespace else " (cluster)"
        return f"{self.verb} {group} {target}{f' {self.name!r}' if self.name else ''}{where}"


@dataclass(frozen=True)
class Rule:
    api_groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    resource_names: frozenset[str]

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Rule:
        assert not raw.get("nonResourceURLs"), f"unexpected nonResourceURLs rule: {raw}"
        return cls(
            api_groups=frozenset(raw.get("apiGroups", [])),
            resources=frozenset(raw.get("resources", [])),
            verbs=frozenset(raw.get("verbs", [])),
            resource_names=frozenset(raw.get("resourceNames", [])),
        )

    def allows(self, request: Request) -> bool:
        target = request.resource + (f"/{request.subresource}" if request.subresource else "")
        return (
            request.api_group in self.api_groups
            and target in self.resources
            and request.verb in self.verbs
            and (not self.resource_names or request.name in self.resource_names)
        )


@dataclass(frozen=True)
class Grants:
    """What one ServiceAccount may do: cluster-wide rules and rules per namespace."""

    cluster: tuple[Rule, ...]
    namespaced: dict[str, tuple[Rule, ...]]

    def allows(self, request: Request) -> bool:
        rules = [*self.cluster, *(self.namespaced.get(request.namespace, ()) if request.namespace else ())]
        return any(rule.allows(request) for rule in rules)

    def all_rules(self) -> list[Rule]:
        return [*self.cluster, *(r for rules in self.namespaced.values() for r in rules)]


def _binds(binding: dict[str, Any], service_account: str, namespace: str) -> bool:
    return any(
        s.get("kind") == "ServiceAccount" and s.get("name") == service_account and s.get("namespace") == namespace
        for s in binding.get("subjects", [])
    )


def grants(docs: list[dict[str, Any]], service_account: str, namespace: str = NAMESPACE) -> Grants:
    """The rules the rendered bindings give ``namespace/service_account``."""
    roles = {("ClusterRole", d["metadata"]["name"], ""): d for d in of_kind(docs, "ClusterRole")}
    roles.update({("Role", d["metadata"]["name"], d["metadata"]["namespace"]): d for d in of_kind(docs, "Role")})
    cluster: list[Rule] = []
    namespaced: dict[str, list[Rule]] = {}
    for binding in of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding"):
        if not _binds(binding, service_account, namespace):
            continue
        ref = binding["roleRef"]
        role_ns = binding["metadata"].get("namespace", "") if ref["kind"] == "Role" else ""
        role = roles.get((ref["kind"], ref["name"], role_ns))
        assert role is not None, f"{ident(binding)} refers to {ref['kind']} {ref['name']}, which is not rendered"
        rules = [Rule.parse(r) for r in role.get("rules", [])]
        if binding["kind"] == "ClusterRoleBinding":
            cluster.extend(rules)
        else:
            namespaced.setdefault(binding["metadata"]["namespace"], []).extend(rules)
    return Grants(cluster=tuple(cluster), namespaced={ns: tuple(rules) for ns, rules in namespaced.items()})


def verb_table(rules: list[Rule]) -> dict[tuple[str, str, frozenset[str]], frozenset[str]]:
    """(apiGroup, resource, resourceNames) → verbs, merged over rules (for exact-set assertions)."""
    table: dict[tuple[str, str, frozenset[str]], set[str]] = {}
    for rule in rules:
        for group in rule.api_groups:
            for resource in rule.resources:
                table.setdefault((group, resource, rule.resource_names), set()).update(rule.verbs)
    return {key: frozenset(verbs) for key, verbs in table.items()}
