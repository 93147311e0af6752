"""The kinds devcluster serves: one :class:`ResourceType` per group/version/resource.

Built-in kinds are listed in :data:`BUILTINS`; each served version of an Established CRD becomes
a ResourceType too (:func:`from_crd`). Discovery, OpenAPI, routing, storage and printing all read
these records, so adding a built-in kind is one entry here (plus, if it merges lists, a line in
``structure.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from devcluster.structure import SchemaStructure, Structure, builtin_structure

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One REST resource, as discovery's APIResource describes it, plus what the server needs."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale_subresource: bool = False
    # generation counts changes outside metadata (and outside status when status is a subresource).
    tracks_generation: bool = False
    # PUT without metadata.resourceVersion is allowed (true for most built-ins, false for CRs).
    unconditional_update: bool = True
    # DELETE returns the deleted object (true) or a Success Status (false).
    returns_deleted_object: bool = False
    # name rule: "subdomain" (DNS-1123 subdomain) or "label" (DNS-1123 label).
    name_rule: str = "subdomain"
    # extra field-selector labels beyond metadata.name / metadata.namespace.
    field_labels: tuple[str, ...] = ()
    # the CRD version's openAPIV3Schema and printer columns (custom resources only).
    schema: dict[str, Any] | None = None
    printer_columns: tuple[dict[str, Any], ...] = ()
    # the scale subresource's JSON paths: spec replicas, status replicas, label selector (a string)
    scale_paths: tuple[str, str, str] = (".spec.replicas", ".status.replicas", "")
    crd_name: str = ""
    # the Warning every request to this version gets: a deprecated CRD version's deprecationWarning (or kube's default)
    deprecation_warning: str = ""
    structure: Structure = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.structure is None:
            structure = SchemaStructure(self.schema) if self.schema is not None else builtin_structure(self.group, self.plural)
            object.__setattr__(self, "structure", structure)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` as used in error messages (``configmaps``, ``darkrooms.deployments.example.com``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def is_custom(self) -> bool:
        return bool(self.crd_name)

    @property
    def storage_key(self) -> str:
        """Version-independent key the objects are stored under (``group/plural``)."""
        return f"{self.group}/{self.plural}"

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def path_prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


def _builtin(group: str, version: str, plural: str, kind: str, namespaced: bool = True, **extra: Any) -> ResourceType:
    singular = extra.pop("singular", kind.lower())
    return ResourceType(group=group, version=version, plural=plural, singular=singular, kind=kind, namespaced=namespaced, **extra)


BUILTINS: tuple[ResourceType, ...] = (
    _builtin(
        "",
        "v1",
        "namespaces",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        status_subresource=True,
        returns_deleted_object=True,
        name_rule="label",
        field_labels=("status.phase",),
    ),
    _builtin("", "v1", "configmaps", "ConfigMap", short_names=("cm",)),
    _builtin("", "v1", "secrets", "Secret", field_labels=("type",)),
    _builtin(
        "",
        "v1",
        "services",
        "Service",
        short_names=("svc",),
        categories=("all",),
        status_subresource=True,
        returns_deleted_object=True,
        name_rule="label",
        field_labels=("spec.clusterIP", "spec.type"),
    ),
    _builtin(
        "",
        "v1",
        "events",
        "Event",
        short_names=("ev",),
        field_labels=(
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ),
    ),
    _builtin(
        "",
        "v1",
        "pods",
        "Pod",
        short_names=("po",),
        categories=("all",),
        status_subresource=True,
        returns_deleted_object=True,
        tracks_generation=True,
        field_labels=(
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
        ),
    ),
    _builtin("", "v1", "serviceaccounts", "ServiceAccount", short_names=("sa",)),
    _builtin(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        short_names=("pvc",),
        status_subresource=True,
        returns_deleted_object=True,
    ),
    _builtin(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        short_names=("deploy",),
        categories=("all",),
        status_subresource=True,
        scale_subresource=True,
        tracks_generation=True,
    ),
    _builtin(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        short_names=("rs",),
        categories=("all",),
        status_subresource=True,
        scale_subresource=True,
        tracks_generation=True,
    ),
    _builtin(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        short_names=("sts",),
        categories=("all",),
        status_subresource=True,
        scale_subresource=True,
        tracks_generation=True,
    ),
    _builtin("networking.k8s.io", "v1", "ingresses", "Ingress", short_names=("ing",), status_subresource=True, tracks_generation=True),
    _builtin("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short_names=("netpol",), tracks_generation=True),
    _builtin("coordination.k8s.io", "v1", "leases", "Lease"),
    # The aggregation layer (devcluster/aggregation/): an APIService's Service resolves to its EndpointSlices.
    _builtin("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    _builtin(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        namespaced=False,
        categories=("api-extensions",),
        status_subresource=True,
    ),
    _builtin(
        "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short_names=("pdb",), status_subresource=True, tracks_generation=True
    ),
    # Stored and served so manifests that carry them apply (deploy/ restricts the API's Secret writes with
    # one); devcluster does not evaluate their CEL rules (DIFFERENCES.md).
    _builtin(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        namespaced=False,
        categories=("api-extensions",),
        status_subresource=True,
        tracks_generation=True,
    ),
    _builtin(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        namespaced=False,
        categories=("api-extensions",),
        tracks_generation=True,
    ),
    _builtin("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _builtin("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _builtin("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _builtin("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    _builtin(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status_subresource=True,
        tracks_generation=True,
        returns_deleted_object=True,
    ),
)


def from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """One ResourceType per served version of ``crd`` (caller checks it is Established)."""
    spec = crd["spec"]
    names = spec["names"]
    result = []
    for version in spec.get("versions", []):
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale") or {}
        result.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                kind=names["kind"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status_subresource="status" in subresources,
                scale_subresource="scale" in subresources,
                scale_paths=(
                    str(scale.get("specReplicasPath") or ""),
                    str(scale.get("statusReplicasPath") or ""),
                    str(scale.get("labelSelectorPath") or ""),
                ),
                tracks_generation=True,
                unconditional_update=False,
                # the custom resource registry keeps genericregistry's default: a Success Status once the object is gone
                returns_deleted_object=False,
                schema=(version.get("schema") or {}).get("openAPIV3Schema")
                or {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
                field_labels=tuple(str(f.get("jsonPath", "")).removeprefix(".") for f in version.get("selectableFields") or ()),
                crd_name=crd["metadata"]["name"],
                deprecation_warning=_deprecation_warning(version, spec) if version.get("deprecated") else "",
            )
        )
    return result


def _deprecation_warning(version: dict[str, Any], spec: dict[str, Any]) -> str:
    """A deprecated version's own ``deprecationWarning``, else kube's default: ``<group>/<version> <Kind> is
    deprecated``, naming the served, not deprecated version of highest priority above it (``defaultDeprecationWarning``)."""
    own = version.get("deprecationWarning")
    if own is not None:
        return str(own)
    name, group, kind = str(version["name"]), spec["group"], spec["names"]["kind"]
    message = f"{group}/{name} {kind} is deprecated"
    better = sorted(
        (
            str(v["name"])
            for v in spec.get("versions", [])
            if v.get("served", True) and not v.get("deprecated") and version_priority_key(str(v["name"])) < version_priority_key(name)
        ),
        key=version_priority_key,
    )
    return f"{message}; use {group}/{better[0]} {kind}" if better else message


def version_priority_key(version: str) -> tuple[int, int, int, int, str]:
    """Sort key putting versions in kube's priority order (highest priority first).

    GA before beta before alpha; within one stability level higher major, then higher minor, first;
    strings that are not kube-like versions last, alphabetically
    (``k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings``).
    """
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (1, 0, 0, 0, version)
    stability = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    return (0, stability, -int(match.group(1)), -int(match.group(3) or 0), "")


def storage_version(crd: dict[str, Any]) -> str:
    """The version a CRD stores objects at (the one with ``storage: true``)."""
    for version in crd["spec"].get("versions", []):
        if version.get("storage"):
            return str(version["name"])
    return str(crd["spec"]["versions"][0]["name"])
