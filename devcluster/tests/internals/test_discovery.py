"""Discovery documents (devcluster.discovery).

Behaviours covered:
- /version claims Kubernetes 1.37 (the version tests/fidelity holds devcluster against) with every
  version.Info field kubectl and the Python client read, and 1.37's emulation/compatibility fields.
- /api lists v1 and the server address for 0.0.0.0/0.
- /apis lists every non-core group once (core excluded), built-in groups in kube's priority order and
  custom groups after them alphabetically; versions of a group in kube-aware priority order and the
  preferred version defaulting to the first of them, overridable per group, ignored when not served.
- /apis/{group} is an APIGroup; an unknown group raises LookupError.
- /api/v1 and /apis/{g}/{v} list only their group/version's resources, sorted by name, with
  singularName, namespaced, kind, kube-sorted verbs (a custom resource's in the apiextensions-apiserver's
  order), shortNames/categories only when non-empty and kube's storageVersionHash (checked against values
  real clusters serve); the core list carries no apiVersion.
- Subresources: <plural>/status (same kind, get/patch/update), deployments/scale (autoscaling/v1 Scale),
  namespaces/finalize (update only); namespaces lack deletecollection as in kube.
- A CRD built with from_crd: status subresource, short name, categories, one entry per served version,
  storageVersionHash following the storage version when given.
"""

from __future__ import annotations

from typing import Any

from devcluster import discovery
from devcluster.resources import ALL_VERBS, BUILTINS, ResourceType, from_crd

SORTED_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def darkroom_crd(versions: tuple[str, ...] = ("v1alpha1",), storage: str = "v1alpha1") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "darkrooms.deployments.example.com"},
        "spec": {
            "group": "deployments.example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "darkrooms",
                "singular": "darkroom",
                "kind": "Darkroom",
                "listKind": "DarkroomList",
                "shortNames": ["dr"],
                "categories": ["all", "darkroom"],
            },
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": name == storage,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "Darkroom is an image proxy deployment.",
                            "properties": {
                                "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
                for name in versions
            ],
        },
    }


def all_resources(*crds: dict[str, Any]) -> list[ResourceType]:
    resources = list(BUILTINS)
    for crd in crds:
        resources.extend(from_crd(crd))
    return resources


def by_name(resource_list: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in resource_list["resources"]}


def test_version_info_claims_kubernetes_1_37() -> None:
    info = discovery.version_info()
    assert info["major"] == "1"
    assert info["minor"] == "37"
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "37")
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == ("1", "36")
    assert info["gitVersion"] == "v1.37.2-devcluster"
    assert info["gitTreeState"] == "clean"
    assert info["compiler"] == "gc"
    assert info["platform"] == "linux/amd64"
    for key in ("gitCommit", "buildDate", "goVersion"):
        assert isinstance(info[key], str) and info[key]


def test_core_versions() -> None:
    assert discovery.core_versions("127.0.0.1:6443") == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    }


def test_api_group_list_has_every_non_core_group_once_in_kube_order() -> None:
    doc = discovery.api_group_list(all_resources(darkroom_crd()))
    assert doc["kind"] == "APIGroupList"
    assert doc["apiVersion"] == "v1"
    names = [group["name"] for group in doc["groups"]]
    assert "" not in names
    assert len(names) == len(set(names))
    assert names == [
        "apiregistration.k8s.io",
        "apps",
        "networking.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "deployments.example.com",
    ]
    apps = doc["groups"][1]
    assert apps == {
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
    }


def test_custom_groups_follow_builtins_alphabetically() -> None:
    other = darkroom_crd()
    other["metadata"]["name"] = "widgets.aaa.example.com"
    other["spec"]["group"] = "aaa.example.com"
    other["spec"]["names"] = {"plural": "widgets", "kind": "Widget"}
    names = [g["name"] for g in discovery.api_group_list(all_resources(darkroom_crd(), other))["groups"]]
    assert names[-2:] == ["aaa.example.com", "deployments.example.com"]


def test_versions_sorted_by_kube_priority_and_preferred_defaults_to_first() -> None:
    crd = darkroom_crd(versions=("v1alpha1", "v1beta1", "v1", "v2beta1"), storage="v1beta1")
    doc = discovery.api_group_list(all_resources(crd))
    group = next(g for g in doc["groups"] if g["name"] == "deployments.example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v2beta1", "v1beta1", "v1alpha1"]
    assert group["versions"][0] == {"groupVersion": "deployments.example.com/v1", "version": "v1"}
    assert group["preferredVersion"] == {"groupVersion": "deployments.example.com/v1", "version": "v1"}


def test_preferred_version_override() -> None:
    crd = darkroom_crd(versions=("v1alpha1", "v1"), storage="v1alpha1")
    doc = discovery.api_group_list(all_resources(crd), preferred={"deployments.example.com": "v1alpha1"})
    group = next(g for g in doc["groups"] if g["name"] == "deployments.example.com")
    assert group["preferredVersion"] == {"groupVersion": "deployments.example.com/v1alpha1", "version": "v1alpha1"}
    # a preferred version that is not served is ignored
    doc = discovery.api_group_list(all_resources(crd), preferred={"deployments.example.com": "v9"})
    group = next(g for g in doc["groups"] if g["name"] == "deployments.example.com")
    assert group["preferredVersion"]["version"] == "v1"


def test_sort_versions() -> None:
    assert discovery.sort_versions(["v1alpha1", "v1", "v2beta1", "v1beta2", "v1beta1", "foo", "v2", "v10", "v1"]) == [
        "v10",
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "foo",
    ]


def test_api_group() -> None:
    doc = discovery.api_group("apps", BUILTINS)
    assert doc == {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
    }
    crd = darkroom_crd(versions=("v1alpha1", "v1beta1"), storage="v1alpha1")
    doc = discovery.api_group("deployments.example.com", all_resources(crd), preferred="v1alpha1")
    assert [v["version"] for v in doc["versions"]] == ["v1beta1", "v1alpha1"]
    assert doc["preferredVersion"]["version"] == "v1alpha1"


def test_api_group_unknown_raises_lookup_error() -> None:
    for group in ("nope.example.com", ""):
        try:
            discovery.api_group(group, BUILTINS)
        except LookupError:
            pass
        else:
            raise AssertionError(f"expected LookupError for {group!r}")


def test_core_v1_resource_list() -> None:
    doc = discovery.api_resource_list("v1", all_resources(darkroom_crd()))
    assert doc["kind"] == "APIResourceList"
    assert "apiVersion" not in doc  # the legacy core group's list has none
    assert doc["groupVersion"] == "v1"
    names = [entry["name"] for entry in doc["resources"]]
    assert names == sorted(names)
    assert names == [
        "configmaps",
        "events",
        "namespaces",
        "namespaces/finalize",
        "namespaces/status",
        "persistentvolumeclaims",
        "persistentvolumeclaims/status",
        "pods",
        "pods/status",
        "secrets",
        "serviceaccounts",
        "services",
        "services/status",
    ]
    entries = by_name(doc)
    assert entries["configmaps"] == {
        "name": "configmaps",
        "singularName": "configmap",
        "namespaced": True,
        "kind": "ConfigMap",
        "verbs": SORTED_VERBS,
        "shortNames": ["cm"],
        "storageVersionHash": "qFsyl6wFWjQ=",
    }
    # empty shortNames / categories are omitted
    assert "shortNames" not in entries["secrets"]
    assert "categories" not in entries["secrets"]
    assert entries["pods"]["categories"] == ["all"]
    assert entries["pods"]["shortNames"] == ["po"]
    assert entries["pods"]["storageVersionHash"] == "xPOwRZ+Yhw8="


def test_verbs_sorted_like_kube() -> None:
    assert sorted(ALL_VERBS) == SORTED_VERBS
    entries = by_name(discovery.api_resource_list("v1", BUILTINS))
    for name in ("configmaps", "secrets", "pods", "services", "events", "serviceaccounts"):
        assert entries[name]["verbs"] == SORTED_VERBS
    # kube-apiserver does not offer deletecollection on namespaces
    assert entries["namespaces"]["verbs"] == ["create", "delete", "get", "list", "patch", "update", "watch"]
    assert entries["namespaces"]["namespaced"] is False


def test_subresource_entries() -> None:
    core = by_name(discovery.api_resource_list("v1", BUILTINS))
    assert core["pods/status"] == {
        "name": "pods/status",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get", "patch", "update"],
    }
    assert core["namespaces/status"]["namespaced"] is False
    assert core["namespaces/finalize"] == {
        "name": "namespaces/finalize",
        "singularName": "",
        "namespaced": False,
        "kind": "Namespace",
        "verbs": ["update"],
    }
    apps = discovery.api_resource_list("apps/v1", BUILTINS)
    assert [e["name"] for e in apps["resources"]] == [
        "deployments",
        "deployments/scale",
        "deployments/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
    ]
    entries = by_name(apps)
    assert entries["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert entries["deployments/status"]["kind"] == "Deployment"
    assert entries["deployments"]["storageVersionHash"] == "8aSe+NMegvE="
    # as realcluster's kube-apiserver v1.37.2 lists them
    assert entries["statefulsets"] == {
        "name": "statefulsets",
        "singularName": "statefulset",
        "namespaced": True,
        "kind": "StatefulSet",
        "verbs": SORTED_VERBS,
        "shortNames": ["sts"],
        "categories": ["all"],
        "storageVersionHash": "H+vl74LkKdo=",
    }
    assert core["persistentvolumeclaims"] == {
        "name": "persistentvolumeclaims",
        "singularName": "persistentvolumeclaim",
        "namespaced": True,
        "kind": "PersistentVolumeClaim",
        "verbs": SORTED_VERBS,
        "shortNames": ["pvc"],
        "storageVersionHash": "QWTyNDq0dC4=",
    }
    assert entries["deployments"]["categories"] == ["all"]


def test_resource_list_only_lists_its_group_version() -> None:
    doc = discovery.api_resource_list("rbac.authorization.k8s.io/v1", all_resources(darkroom_crd()))
    assert [e["name"] for e in doc["resources"]] == ["clusterrolebindings", "clusterroles", "rolebindings", "roles"]
    assert by_name(doc)["clusterroles"]["namespaced"] is False
    assert by_name(doc)["roles"]["namespaced"] is True
    assert discovery.api_resource_list("nothing.example.com/v1", BUILTINS)["resources"] == []


def test_crd_resource_list() -> None:
    doc = discovery.api_resource_list("deployments.example.com/v1alpha1", all_resources(darkroom_crd()))
    assert doc["groupVersion"] == "deployments.example.com/v1alpha1"
    entries = by_name(doc)
    assert list(entries) == ["darkrooms", "darkrooms/status"]
    assert entries["darkrooms"] == {
        "name": "darkrooms",
        "singularName": "darkroom",
        "namespaced": True,
        "kind": "Darkroom",
        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],  # apiextensions' order
        "shortNames": ["dr"],
        "categories": ["all", "darkroom"],
        "storageVersionHash": discovery.storage_version_hash("deployments.example.com", "v1alpha1", "Darkroom"),
    }
    assert entries["darkrooms/status"] == {
        "name": "darkrooms/status",
        "singularName": "",
        "namespaced": True,
        "kind": "Darkroom",
        "verbs": ["get", "patch", "update"],
    }


def test_storage_version_hash_follows_storage_version() -> None:
    crd = darkroom_crd(versions=("v1alpha1", "v1"), storage="v1alpha1")
    resources = all_resources(crd)
    storage = {"darkrooms.deployments.example.com": "v1alpha1"}
    v1 = by_name(discovery.api_resource_list("deployments.example.com/v1", resources, storage_versions=storage))
    v1alpha1 = by_name(discovery.api_resource_list("deployments.example.com/v1alpha1", resources, storage_versions=storage))
    assert v1["darkrooms"]["storageVersionHash"] == v1alpha1["darkrooms"]["storageVersionHash"]
    unpinned = by_name(discovery.api_resource_list("deployments.example.com/v1", resources))
    assert unpinned["darkrooms"]["storageVersionHash"] != v1alpha1["darkrooms"]["storageVersionHash"]


def test_storage_version_hash_matches_kube() -> None:
    # values served by real kube-apiservers
    assert discovery.storage_version_hash("", "v1", "ConfigMap") == "qFsyl6wFWjQ="
    assert discovery.storage_version_hash("apps", "v1", "Deployment") == "8aSe+NMegvE="
    digest = discovery.storage_version_hash("deployments.example.com", "v1alpha1", "Darkroom")
    assert len(digest) == 12 and digest.endswith("=")
    assert digest == discovery.storage_version_hash("deployments.example.com", "v1alpha1", "Darkroom")
