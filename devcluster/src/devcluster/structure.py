"""How lists and maps of an object merge: the shared knowledge of strategic merge patch and apply.

kube-apiserver learns this from Go struct tags (``patchStrategy``/``patchMergeKey``,
``listType``/``listMapKeys``) for built-in kinds and from ``x-kubernetes-list-type`` /
``x-kubernetes-list-map-keys`` / ``x-kubernetes-map-type`` for custom resources. devcluster keeps
the built-in knowledge as a table (only the lists our kinds have) and derives the custom-resource
one from the CRD's structural schema. ``patching/`` (strategic merge patch) and
``fieldmanagement/`` (server-side apply, managedFields) both ask a :class:`Structure`.

Paths are tuples of field names; an element of a list is written ``"[]"`` and a value of a
string-keyed map (labels, ConfigMap data, ``additionalProperties``) by its key, e.g.
``("spec", "template", "spec", "containers", "[]", "env")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

Path = tuple[str, ...]


@dataclass(frozen=True)
class ListSemantics:
    """How the list at one path merges.

    ``atomic``: replaced whole (the default). ``set``: a set of scalars, merged by value.
    ``map``: items are objects identified by ``keys`` (strategic merge patch uses ``keys[0]``
    as its patchMergeKey).
    """

    kind: Literal["atomic", "set", "map"] = "atomic"
    keys: tuple[str, ...] = ()


ATOMIC = ListSemantics()


class Structure(Protocol):
    """What merge code needs to know about one kind."""

    def list_semantics(self, path: Path) -> ListSemantics:
        """Semantics of the list at ``path`` (``ATOMIC`` when unknown)."""
        ...

    def map_is_atomic(self, path: Path) -> bool:
        """True when the object/map at ``path`` is replaced whole rather than merged per key."""
        ...

    def is_string_map(self, path: Path) -> bool:
        """True when the object at ``path`` is a free-form map (its keys are data, not fields)."""
        ...


# Lists every object has, whatever its kind.
_METADATA_LISTS: dict[Path, ListSemantics] = {
    ("metadata", "ownerReferences"): ListSemantics("map", ("uid",)),
    ("metadata", "finalizers"): ListSemantics("set"),
}
_METADATA_MAPS: frozenset[Path] = frozenset({("metadata", "labels"), ("metadata", "annotations")})
# OwnerReference is a +structType=atomic: an owner reference is owned as a whole.
_METADATA_ATOMIC: frozenset[Path] = frozenset({("metadata", "ownerReferences", "[]")})

_POD_SPEC_LISTS: dict[Path, ListSemantics] = {
    ("containers",): ListSemantics("map", ("name",)),
    ("initContainers",): ListSemantics("map", ("name",)),
    ("containers", "[]", "env"): ListSemantics("map", ("name",)),
    ("initContainers", "[]", "env"): ListSemantics("map", ("name",)),
    ("containers", "[]", "ports"): ListSemantics("map", ("containerPort", "protocol")),
    ("initContainers", "[]", "ports"): ListSemantics("map", ("containerPort", "protocol")),
    ("containers", "[]", "volumeMounts"): ListSemantics("map", ("mountPath",)),
    ("initContainers", "[]", "volumeMounts"): ListSemantics("map", ("mountPath",)),
    ("volumes",): ListSemantics("map", ("name",)),
    ("imagePullSecrets",): ListSemantics("map", ("name",)),
    ("tolerations",): ATOMIC,
}
_POD_SPEC_MAPS: frozenset[Path] = frozenset({("nodeSelector",)})

_CONDITIONS = ListSemantics("map", ("type",))


def _prefixed(prefix: Path, lists: dict[Path, ListSemantics]) -> dict[Path, ListSemantics]:
    return {prefix + path: semantics for path, semantics in lists.items()}


# Built-in kinds keyed by (group, plural). Only lists/maps that are not atomic/granular-default matter.
_BUILTIN_LISTS: dict[tuple[str, str], dict[Path, ListSemantics]] = {
    ("", "pods"): {
        **_prefixed(("spec",), _POD_SPEC_LISTS),
        ("status", "conditions"): _CONDITIONS,
    },
    ("apps", "deployments"): {
        **_prefixed(("spec", "template", "spec"), _POD_SPEC_LISTS),
        ("status", "conditions"): _CONDITIONS,
    },
    ("apps", "replicasets"): {
        **_prefixed(("spec", "template", "spec"), _POD_SPEC_LISTS),
        ("status", "conditions"): _CONDITIONS,
    },
    ("apps", "statefulsets"): {  # spec.volumeClaimTemplates is a +listType=atomic
        **_prefixed(("spec", "template", "spec"), _POD_SPEC_LISTS),
        ("status", "conditions"): _CONDITIONS,
    },
    ("", "persistentvolumeclaims"): {
        ("status", "conditions"): _CONDITIONS,
    },
    ("", "services"): {
        ("spec", "ports"): ListSemantics("map", ("port", "protocol")),
    },
    ("", "namespaces"): {
        ("status", "conditions"): _CONDITIONS,
    },
    ("apiextensions.k8s.io", "customresourcedefinitions"): {
        ("status", "conditions"): _CONDITIONS,  # spec.versions is a +listType=atomic
    },
}
# Maps and structs replaced whole (+mapType=atomic, +structType=atomic: label selectors, object references).
_CONTAINER_ATOMIC = frozenset(("[]", "env", "[]", "valueFrom", ref) for ref in ("fieldRef", "configMapKeyRef", "secretKeyRef"))
_CONTAINER_POINTERS = frozenset(
    {("[]", probe) for probe in ("livenessProbe", "readinessProbe", "startupProbe")}
    | {("[]", probe, "httpGet") for probe in ("livenessProbe", "readinessProbe", "startupProbe")}
    | {("[]", probe, action) for probe in ("livenessProbe", "readinessProbe", "startupProbe") for action in ("exec", "tcpSocket", "grpc")}
    | {("[]", "env", "[]", "valueFrom"), ("[]", "securityContext"), ("[]", "securityContext", "capabilities")}
)
# Pointer structs of a pod template's PodSpec (beyond its containers') that the product's templates set.
_POD_POINTERS = frozenset(
    {("securityContext",), ("securityContext", "seccompProfile")}
    | {("volumes", "[]", source) for source in ("configMap", "secret", "emptyDir", "persistentVolumeClaim")}
)


def _under(prefix: Path, paths: frozenset[Path]) -> frozenset[Path]:
    return frozenset(prefix + path for path in paths)


_BUILTIN_ATOMIC: dict[tuple[str, str], frozenset[Path]] = {
    ("apps", "deployments"): frozenset({("spec", "selector")}) | _under(("spec", "template", "spec", "containers"), _CONTAINER_ATOMIC),
    ("apps", "replicasets"): frozenset({("spec", "selector")}) | _under(("spec", "template", "spec", "containers"), _CONTAINER_ATOMIC),
    ("apps", "statefulsets"): frozenset({("spec", "selector")}) | _under(("spec", "template", "spec", "containers"), _CONTAINER_ATOMIC),
    ("", "pods"): _under(("spec", "containers"), _CONTAINER_ATOMIC),
    ("", "persistentvolumeclaims"): frozenset({("spec", "selector"), ("spec", "dataSource"), ("spec", "dataSourceRef")}),
    ("", "services"): frozenset({("spec", "selector")}),
    ("", "events"): frozenset({("involvedObject",)}),
    ("policy", "poddisruptionbudgets"): frozenset({("spec", "selector")}),
    ("networking.k8s.io", "networkpolicies"): frozenset({("spec", "podSelector")}),
    ("networking.k8s.io", "ingresses"): frozenset({("spec", "defaultBackend", "service", "port")}),
    ("rbac.authorization.k8s.io", "rolebindings"): frozenset({("roleRef",)}),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): frozenset({("roleRef",)}),
}
# What kube's typed managedFields need from the Go types: struct fields that are pointers (absent from
# the type's zero value, so an update that sets them records the node itself, ".") and lists that are
# not omitempty (present, as null, in the zero value, so they never record ".").
_POINTER_STRUCTS: dict[tuple[str, str], frozenset[Path]] = {
    ("apps", "deployments"): frozenset({("spec", "strategy", "rollingUpdate")})
    | _under(("spec", "template", "spec", "containers"), _CONTAINER_POINTERS),
    ("apps", "replicasets"): _under(("spec", "template", "spec", "containers"), _CONTAINER_POINTERS),
    ("apps", "statefulsets"): frozenset(
        {("spec", "updateStrategy", "rollingUpdate"), ("spec", "persistentVolumeClaimRetentionPolicy"), ("spec", "ordinals")}
    )
    | _under(("spec", "template", "spec", "containers"), _CONTAINER_POINTERS)
    | _under(("spec", "template", "spec"), _POD_POINTERS),
    ("", "pods"): _under(("spec", "containers"), _CONTAINER_POINTERS),
    ("apiextensions.k8s.io", "customresourcedefinitions"): frozenset({("spec", "conversion")}),
    ("networking.k8s.io", "ingresses"): frozenset({("spec", "defaultBackend"), ("spec", "defaultBackend", "service")}),
    ("rbac.authorization.k8s.io", "clusterroles"): frozenset({("aggregationRule",)}),
}
# Non-pointer structs replaced whole: the zero value holds them as {}, so setting one to {} changes nothing.
_ZERO_STRUCTS: dict[tuple[str, str], frozenset[Path]] = {
    ("networking.k8s.io", "networkpolicies"): frozenset({("spec", "podSelector")}),
}
# Only granular lists matter here: an atomic list is a leaf, recorded when its value changes (null -> [...]).
_ZERO_LISTS: dict[tuple[str, str], frozenset[Path]] = {
    ("apps", "deployments"): frozenset({("spec", "template", "spec", "containers")}),
    ("apps", "replicasets"): frozenset({("spec", "template", "spec", "containers")}),
    ("apps", "statefulsets"): frozenset({("spec", "template", "spec", "containers")}),
    ("", "pods"): frozenset({("spec", "containers")}),
}
_BUILTIN_MAPS: dict[tuple[str, str], frozenset[Path]] = {
    ("", "configmaps"): frozenset({("data",), ("binaryData",)}),
    ("", "secrets"): frozenset({("data",), ("stringData",)}),
    ("", "pods"): frozenset(("spec", *p) for p in _POD_SPEC_MAPS),
    ("apps", "deployments"): frozenset(
        {("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels"), ("spec", "template", "metadata", "annotations")}
        | {("spec", "template", "spec", *p) for p in _POD_SPEC_MAPS}
    ),
    ("apps", "statefulsets"): frozenset(
        {("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels"), ("spec", "template", "metadata", "annotations")}
        | {("spec", "template", "spec", *p) for p in _POD_SPEC_MAPS}
    ),
    ("apps", "replicasets"): frozenset(
        {("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels"), ("spec", "template", "metadata", "annotations")}
        | {("spec", "template", "spec", *p) for p in _POD_SPEC_MAPS}
    ),
    ("", "services"): frozenset({("spec", "selector")}),
}


@dataclass(frozen=True)
class TableStructure:
    """Structure of a built-in kind, from the tables above."""

    lists: dict[Path, ListSemantics]
    string_maps: frozenset[Path]
    atomic_maps: frozenset[Path] = frozenset()
    pointer_structs: frozenset[Path] = frozenset()
    zero_lists: frozenset[Path] = frozenset()
    zero_structs: frozenset[Path] = frozenset()

    def list_semantics(self, path: Path) -> ListSemantics:
        return self.lists.get(path) or _METADATA_LISTS.get(path) or ATOMIC

    def map_is_atomic(self, path: Path) -> bool:
        return path in self.atomic_maps or path in _METADATA_ATOMIC

    def is_string_map(self, path: Path) -> bool:
        return path in self.string_maps or path in _METADATA_MAPS


def builtin_structure(group: str, plural: str) -> TableStructure:
    key = (group, plural)
    return TableStructure(
        _BUILTIN_LISTS.get(key, {}),
        _BUILTIN_MAPS.get(key, frozenset()),
        _BUILTIN_ATOMIC.get(key, frozenset()),
        _POINTER_STRUCTS.get(key, frozenset()),
        _ZERO_LISTS.get(key, frozenset()),
        _ZERO_STRUCTS.get(key, frozenset()),
    )


@dataclass(frozen=True)
class SchemaStructure:
    """Structure of a custom resource, read from its CRD version's ``openAPIV3Schema``."""

    schema: dict[str, Any]

    def _node(self, path: Path) -> dict[str, Any] | None:
        node: dict[str, Any] | None = self.schema
        for step in path:
            if node is None:
                return None
            if step == "[]":
                node = node.get("items")
            elif step in node.get("properties", {}):
                node = node["properties"][step]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return None
        return node

    def list_semantics(self, path: Path) -> ListSemantics:
        if path in _METADATA_LISTS:
            return _METADATA_LISTS[path]
        node = self._node(path)
        if not node:
            return ATOMIC
        list_type = node.get("x-kubernetes-list-type", "atomic")
        if list_type == "set":
            return ListSemantics("set")
        if list_type == "map":
            return ListSemantics("map", tuple(node.get("x-kubernetes-list-map-keys", ())))
        return ATOMIC

    def map_is_atomic(self, path: Path) -> bool:
        node = self._node(path)
        return node is not None and node.get("x-kubernetes-map-type") == "atomic"

    def is_string_map(self, path: Path) -> bool:
        if path in _METADATA_MAPS:
            return True
        node = self._node(path)
        return node is not None and "properties" not in node and isinstance(node.get("additionalProperties"), dict)
