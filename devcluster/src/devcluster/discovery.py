"""The discovery documents kube-apiserver serves, as plain dicts.

``/version``, ``/api``, ``/apis``, ``/apis/{group}``, ``/api/v1`` and ``/apis/{group}/{version}``
(the "legacy", unaggregated discovery that kubectl and the ``kubernetes`` Python client's
DynamicClient read). Everything here is a pure function of the :class:`ResourceType` records;
the HTTP layer serialises the result.

Shapes follow kube-apiserver 1.37 (checked by ``tests/fidelity``): groups ordered by kube's group priority (built-ins first, custom
groups alphabetically after), versions within a group by kube-aware version priority
(``v2 > v1 > v1beta2 > v1beta1 > v1alpha1``), resources sorted by name with their subresources
(``pods/status``, ``deployments/scale``) next to them, ``storageVersionHash`` computed exactly as
``k8s.io/apiserver/pkg/endpoints/discovery.StorageVersionHash`` does.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from devcluster.resources import ALL_VERBS, ResourceType, version_priority_key

KUBE_MAJOR = "1"
KUBE_MINOR = "37"
GIT_VERSION = "v1.37.2-devcluster"
# The version kube-apiserver stores CustomResourceDefinitions at (which feeds their storageVersionHash).
_STORAGE_VERSIONS = {("apiextensions.k8s.io", "customresourcedefinitions"): "v1beta1"}
# A custom resource's verbs, in the order the apiextensions-apiserver lists them.
_CUSTOM_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]

SUBRESOURCE_VERBS = ["get", "patch", "update"]

# Order kube-apiserver lists its built-in groups in (/apis): the aggregator's group priorities.
# Groups not named here (custom resources) follow, alphabetically.
_GROUP_ORDER = (
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
)


def version_info() -> dict[str, Any]:
    """``/version``: a ``version.Info`` claiming Kubernetes 1.37 (the version the fidelity suite holds
    devcluster against), with the emulation/compatibility fields kube 1.37 reports."""
    return {
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "emulationMajor": KUBE_MAJOR,
        "emulationMinor": KUBE_MINOR,
        "minCompatibilityMajor": KUBE_MAJOR,
        "minCompatibilityMinor": str(int(KUBE_MINOR) - 1),
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-12-11T00:00:00Z",
        "goVersion": "go1.23.4",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the APIVersions of the legacy core group."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def sort_versions(versions: Iterable[str]) -> list[str]:
    """Distinct ``versions`` in kube's priority order (preferred first)."""
    return sorted(set(versions), key=version_priority_key)


def _group_sort_key(group: str, first_version: str) -> tuple[int, str]:
    """Built-in groups in the aggregator's priority order; the others (custom resources) after them,
    ordered as kube orders their APIServices: by name, ``<version>.<group>`` (so ``v1.example.com``
    comes before ``v1alpha1.deployments.example.com``)."""
    try:
        return (_GROUP_ORDER.index(group), "")
    except ValueError:
        return (len(_GROUP_ORDER), f"{first_version}.{group}")


def sort_groups(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """APIGroup documents (devcluster's and aggregated ones) in ``/apis`` order (:func:`_group_sort_key`)."""
    return sorted(groups, key=lambda g: _group_sort_key(g["name"], g["versions"][0]["version"]))


def _group_versions(group: str, resources: Iterable[ResourceType]) -> list[str]:
    return sort_versions(r.version for r in resources if r.group == group)


def _group_document(group: str, versions: list[str], preferred: str | None) -> dict[str, Any]:
    chosen = preferred if preferred in versions else versions[0]
    return {
        "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
        "preferredVersion": {"groupVersion": f"{group}/{chosen}", "version": chosen},
    }


def api_group_list(resources: Iterable[ResourceType], preferred: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``/apis``: an APIGroupList with one APIGroup per non-core group.

    ``preferred`` maps a group to the version to advertise as preferred; by default (and when the
    named version is not served) the first version in kube's priority order, which is also what
    kube-apiserver picks for CRD groups.
    """
    resources = list(resources)
    versions = {group: _group_versions(group, resources) for group in {r.group for r in resources if r.group}}
    groups = sorted(versions, key=lambda g: _group_sort_key(g, versions[g][0]))
    preferred = preferred or {}
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_document(g, versions[g], preferred.get(g)) for g in groups],
    }


def api_group(group: str, resources: Iterable[ResourceType], preferred: str | None = None) -> dict[str, Any]:
    """``/apis/{group}``: one APIGroup. Raises :class:`LookupError` when no resource is in ``group``."""
    versions = _group_versions(group, resources)
    if not group or not versions:
        raise LookupError(f"no API group {group!r}")
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_document(group, versions, preferred)}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube's ``StorageVersionHash``: base64 of the first 8 bytes of sha256("group/version/kind")."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def resource_verbs(resource: ResourceType) -> list[str]:
    """Verbs of the main resource, sorted as kube lists them.

    Namespaces lack ``deletecollection`` in kube-apiserver; everything else has all of
    :data:`ALL_VERBS`.
    """
    if resource.is_custom:
        return list(_CUSTOM_VERBS)
    verbs = sorted(ALL_VERBS)
    if resource.group == "" and resource.plural == "namespaces":
        verbs.remove("deletecollection")
    return verbs


def api_resources(resource: ResourceType, storage_version: str | None = None) -> list[dict[str, Any]]:
    """The APIResource entries of one resource: itself, then its subresources."""
    entry: dict[str, Any] = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": resource_verbs(resource),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    stored = storage_version or _STORAGE_VERSIONS.get((resource.group, resource.plural), resource.version)
    entry["storageVersionHash"] = storage_version_hash(resource.group, stored, resource.kind)
    entries = [entry]
    if resource.group == "" and resource.plural == "namespaces":
        entries.append(_subresource(resource, "finalize", verbs=["update"]))
    if resource.scale_subresource:
        entries.append(_subresource(resource, "scale", group="autoscaling", version="v1", kind="Scale"))
    if resource.status_subresource:
        entries.append(_subresource(resource, "status"))
    if resource.is_custom:  # the apiextensions-apiserver lists status before scale
        return sorted(entries, key=lambda e: (e["name"] != resource.plural, e["name"].endswith("/scale")))
    return sorted(entries, key=lambda e: e["name"])


def _subresource(
    resource: ResourceType,
    name: str,
    *,
    group: str | None = None,
    version: str | None = None,
    kind: str | None = None,
    verbs: list[str] | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": f"{resource.plural}/{name}", "singularName": "", "namespaced": resource.namespaced}
    if group is not None:
        entry["group"] = group
    if version is not None:
        entry["version"] = version
    entry["kind"] = kind or resource.kind
    entry["verbs"] = list(verbs or SUBRESOURCE_VERBS)
    return entry


def api_resource_list(
    group_version: str,
    resources: Iterable[ResourceType],
    storage_versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``/api/v1`` or ``/apis/{group}/{version}``: the APIResourceList of ``group_version``.

    ``resources`` may hold other group/versions too; only those in ``group_version`` are listed.
    ``storage_versions`` maps ``ResourceType.group_resource`` (``darkrooms.deployments.example.com``)
    to the version objects are stored at, which feeds ``storageVersionHash`` (as kube does for
    multi-version CRDs); by default each version hashes itself.
    """
    storage_versions = storage_versions or {}
    entries: list[dict[str, Any]] = []
    for resource in resources:
        if resource.group_version != group_version:
            continue
        entries.extend(api_resources(resource, storage_versions.get(resource.group_resource)))
    entries.sort(key=lambda e: e["name"].split("/")[0])  # stable: a resource's subresources keep their order
    document: dict[str, Any] = {"kind": "APIResourceList", "groupVersion": group_version, "resources": entries}
    if "/" in group_version:  # the legacy core group's list carries no apiVersion
        document = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": entries}
    return document
