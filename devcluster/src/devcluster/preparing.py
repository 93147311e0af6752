"""What kube-apiserver sets on an object after field management: registry allocations and initial
status (``PrepareForCreate``), and the mutating admission plugins of a default cluster.

kube-apiserver runs a write as decode + defaulting (``admission.py`` here) → managedFields →
mutating admission → the registry strategy → storage. What the last two set is therefore owned by
no field manager: a Service's ClusterIPs, IP families and NodePorts, a new object's status, a
Namespace's ``kubernetes`` finalizer, and for Pods the ServiceAccount plugin's service account and
token volume, DefaultTolerationSeconds' tolerations and Priority's priority; a PersistentVolumeClaim's
``kubernetes.io/pvc-protection`` finalizer (StorageObjectInUseProtection). Fields that a kind's Go
zero value always carries (an Event's ``source``, ``reportingComponent``...) are set here too, for
the same reason: no manager ever changed them. ``writing/`` calls
:func:`prepare` after :func:`~devcluster.fieldmanagement.record_update` with a ``lookup`` into the
store (the ServiceAccount plugin needs to see the account).
"""

from __future__ import annotations

import ipaddress
import random
import zlib
from collections.abc import Callable
from typing import Any

from devcluster import errors
from devcluster.definitions import with_storage_version

Lookup = Callable[[str, str, str], dict[str, Any] | None]  # (storage key, namespace, name) -> object

_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")
_NODE_PORTS = range(30000, 32768)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


def _stable(obj: dict[str, Any], salt: str, size: int) -> int:
    # Deterministic per namespace/name so a restart or re-create gives the same address or port.
    key = f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}/{salt}".encode()
    return zlib.crc32(key) % size


def _namespace(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    if old is None:
        spec = obj.setdefault("spec", {})
        finalizers = list(spec.get("finalizers") or [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        spec["finalizers"] = finalizers
        obj["status"] = {"phase": "Active"}


def _service(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    spec = obj.setdefault("spec", {})
    old_spec = (old or {}).get("spec") or {}
    if spec.get("type") != "ExternalName":
        # a headless Service without a selector may be served over both families whatever the cluster's
        headless = spec.get("clusterIP") == "None" and not spec.get("selector")
        spec.setdefault("ipFamilies", list(old_spec.get("ipFamilies") or (["IPv4", "IPv6"] if headless else ["IPv4"])))
        spec.setdefault("ipFamilyPolicy", old_spec.get("ipFamilyPolicy") or ("RequireDualStack" if headless else "SingleStack"))
        if old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        elif not spec.get("clusterIP"):
            spec["clusterIP"] = str(_SERVICE_NET.network_address + _stable(obj, "ip", _SERVICE_NET.num_addresses - 2) + 1)
        spec["clusterIPs"] = [spec["clusterIP"]]
    if spec.get("type") in ("NodePort", "LoadBalancer") and spec.get("allocateLoadBalancerNodePorts", True):
        old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_spec.get("ports") or []}
        for port in spec.get("ports") or []:
            if not port.get("nodePort"):
                previous = old_ports.get((port.get("port"), port.get("protocol")))
                port["nodePort"] = previous or _NODE_PORTS[_stable(obj, f"{port.get('port')}/{port.get('protocol')}", len(_NODE_PORTS))]
    obj.setdefault("status", {"loadBalancer": {}})


def _pod(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    if old is not None:
        return
    spec = obj.setdefault("spec", {})
    namespace = obj["metadata"].get("namespace", "")
    account_name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    account = lookup("/serviceaccounts", namespace, account_name)
    if account is None:  # the ServiceAccount admission plugin
        name = obj["metadata"].get("name", "")
        raise errors.forbidden_error(
            "pods", "", name, f'error looking up service account {namespace}/{account_name}: serviceaccount "{account_name}" not found'
        )
    spec["serviceAccountName"] = spec["serviceAccount"] = account_name
    automount = spec.get("automountServiceAccountToken", account.get("automountServiceAccountToken", True))
    if automount is not False:
        _mount_token(spec)
    tolerations = list(spec.get("tolerations") or [])
    for default in _DEFAULT_TOLERATIONS:  # DefaultTolerationSeconds
        if not any(t.get("key") == default["key"] and t.get("effect") in (None, "", "NoExecute") for t in tolerations):
            tolerations.append(dict(default))
    spec["tolerations"] = tolerations
    spec.setdefault("priority", 0)  # Priority, with no default PriorityClass
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _mount_token(spec: dict[str, Any]) -> None:
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    if any(m.get("mountPath") == TOKEN_MOUNT_PATH for c in containers for m in c.get("volumeMounts") or []):
        return
    name = "kube-api-access-" + "".join(random.choice(_NAME_CHARS) for _ in range(5))
    spec["volumes"] = [
        *(spec.get("volumes") or []),
        {
            "name": name,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {
                        "downwardAPI": {
                            "items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]
                        }
                    },
                ],
                "defaultMode": 420,
            },
        },
    ]
    for container in containers:
        container["volumeMounts"] = [
            *(container.get("volumeMounts") or []),
            {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH},
        ]


def _initial_status(status: Any) -> Callable[[dict[str, Any], dict[str, Any] | None, Lookup], None]:
    def prepare(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
        if old is None and not obj.get("status"):
            obj["status"] = status() if callable(status) else status

    return prepare


def _statefulset(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    # PrepareForCreate empties the status; replicas and availableReplicas are not omitempty, so they show as 0.
    if old is None:
        obj["status"] = {"replicas": 0, "availableReplicas": 0}


PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"


def _claim(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    """A new claim: the StorageObjectInUseProtection plugin's finalizer (the pvc-protection controller removes
    it once no pod uses the claim) and an empty status, which reads as ``Pending`` (SetDefaults_PersistentVolumeClaim)."""
    if old is None:
        finalizers = list(obj["metadata"].get("finalizers") or [])
        if PVC_PROTECTION_FINALIZER not in finalizers:
            obj["metadata"]["finalizers"] = [*finalizers, PVC_PROTECTION_FINALIZER]
        obj["status"] = {"phase": "Pending"}


def _event(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    """The Event type's fields that are not omitempty: its zero value carries them, so they are in every
    stored Event and owned by no manager."""
    for key, zero in (("involvedObject", {}), ("source", {}), ("firstTimestamp", None), ("lastTimestamp", None)):
        obj.setdefault(key, zero)
    obj.setdefault("eventTime", None)
    obj.setdefault("reportingComponent", "")
    obj.setdefault("reportingInstance", "")


def _role(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    obj.setdefault("rules", None)  # Rules has no omitempty: an aggregated ClusterRole shows "rules": null


def _crd_status(crd: dict[str, Any]) -> dict[str, Any]:
    versions = (crd.get("spec") or {}).get("versions") or []
    storage = [v.get("name") for v in versions if v.get("storage")]
    return {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": storage}


def _crd(obj: dict[str, Any], old: dict[str, Any] | None, lookup: Lookup) -> None:
    if old is None:
        obj["status"] = _crd_status(obj)
    elif isinstance(obj.get("status"), dict):  # an update of the CRD itself: a new storage version joins storedVersions
        stored = list(obj["status"].get("storedVersions") or [])
        obj["status"]["storedVersions"] = with_storage_version(stored, obj.get("spec") or {})


_PREPARE: dict[tuple[str, str], Callable[[dict[str, Any], dict[str, Any] | None, Lookup], None]] = {
    ("", "namespaces"): _namespace,
    ("", "services"): _service,
    ("", "pods"): _pod,
    ("", "events"): _event,
    ("rbac.authorization.k8s.io", "roles"): _role,
    ("rbac.authorization.k8s.io", "clusterroles"): _role,
    ("apps", "deployments"): _initial_status(dict),
    ("apps", "replicasets"): _initial_status(lambda: {"replicas": 0}),
    ("apps", "statefulsets"): _statefulset,
    ("", "persistentvolumeclaims"): _claim,
    ("networking.k8s.io", "ingresses"): _initial_status(lambda: {"loadBalancer": {}}),
    ("policy", "poddisruptionbudgets"): _initial_status(
        lambda: {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
}


def prepare(group: str, plural: str, obj: dict[str, Any], old: dict[str, Any] | None, *, lookup: Lookup, subresource: str = "") -> None:
    """Set what the registry and mutating admission set on ``obj`` (in place; ``old`` is None on create). A write of a
    CRD's status is its status strategy's, which adds nothing (no storage version to ``storedVersions``)."""
    step = _PREPARE.get((group, plural))
    if subresource == "status" and (group, plural) == ("apiextensions.k8s.io", "customresourcedefinitions"):
        return
    if step is not None:
        step(obj, old, lookup)
