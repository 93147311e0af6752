"""Per-kind defaulting and validation of built-in kinds (kube-apiserver's registry strategies).

kube-apiserver defaults and validates built-in objects from their Go types. devcluster has no Go
types, so this module encodes what the product, kubectl and the tests rely on: the defaults a
Deployment/Service/Namespace/Secret gets (``SetDefaults_*``: they run at decode time, before field
management, so they belong to the writer's managedFields), and the validation errors a client would
meet (the fidelity suite, ``tests/fidelity``, holds both against kube-apiserver). What the registry
allocates or admission plugins add after field management lives in ``preparing.py``. Custom
resources are handled by ``schemas/`` instead. Called by ``writing/`` with a fresh copy it may
mutate.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from typing import Any

import orjson

from devcluster.definitions import admit_crd, stored_versions_causes
from devcluster.errors import Cause, forbidden, invalid_value, not_supported, required
from devcluster.naming import qualified_name_errors

Admit = Callable[[dict[str, Any], dict[str, Any] | None], list[Cause]]

_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MESSAGE = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"  # noqa: E501


def _config_keys(obj: dict[str, Any], field: str) -> list[Cause]:
    causes = []
    for key in obj.get(field) or {}:
        if not _CONFIG_KEY.match(key) or len(key) > 253:
            causes.append(invalid_value(f"{field}[{key}]", key, _CONFIG_KEY_MESSAGE))
    return causes


def _configmap(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes = _config_keys(obj, "data") + _config_keys(obj, "binaryData")
    for key in obj.get("data") or {}:
        if key in (obj.get("binaryData") or {}):
            causes.append(invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
    if old is not None and old.get("immutable"):
        for field in ("data", "binaryData"):
            if (obj.get(field) or {}) != (old.get(field) or {}):
                causes.append(forbidden(field, "field is immutable when `immutable` is set"))
        if not obj.get("immutable"):
            causes.append(forbidden("immutable", "field is immutable when `immutable` is set"))
    return causes


def _secret(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None) or {}
    data = dict(obj.get("data") or {})
    causes = []
    for key, value in data.items():
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, TypeError, ValueError):
            causes.append(invalid_value(f"data[{key}]", "<value omitted>", "must be base64 encoded"))
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    if data:
        obj["data"] = data
    causes += _config_keys(obj, "data")
    for key in _SECRET_TYPE_KEYS.get(obj["type"], ()):
        if key not in (obj.get("data") or {}):
            causes.append(required(f"data[{key}]"))
    if old is not None:
        if obj["type"] != old.get("type", "Opaque"):
            causes.append(invalid_value("type", obj["type"], "field is immutable"))
        if old.get("immutable") and (obj.get("data") or {}) != (old.get("data") or {}):
            causes.append(forbidden("data", "field is immutable when `immutable` is set"))
        if old.get("immutable") and not obj.get("immutable"):
            causes.append(forbidden("immutable", "field is immutable when `immutable` is set"))
    return causes


# Keys each built-in Secret type requires (ValidateSecret).
_SECRET_TYPE_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/basic-auth": (),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _namespace(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    # SetDefaults_Namespace: the name label is a default (so it belongs to the writer's managed fields)...
    # unless the name is generated later (then PrepareForCreate sets it: preparing.py).
    spec = obj.get("spec")
    if isinstance(spec, dict) and "finalizers" in spec and not spec["finalizers"]:
        del spec["finalizers"]  # omitempty
    if not (old is None and obj["metadata"].get("generateName")):
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"].get("name", "")
    causes: list[Cause] = []
    for finalizer in (obj.get("spec") or {}).get("finalizers") or []:
        causes += [invalid_value("spec.finalizers", finalizer, msg) for msg in qualified_name_errors(str(finalizer))]
        if "/" not in str(finalizer) and finalizer != "kubernetes":
            causes.append(
                invalid_value("spec.finalizers", finalizer, "name is neither a standard finalizer name nor is it fully qualified")
            )
    phase = (obj.get("status") or {}).get("phase")
    if old is not None and phase == "Terminating" and not obj["metadata"].get("deletionTimestamp"):
        causes.append(invalid_value("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"))
    return causes


def _service(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """SetDefaults_Service and ValidateService; the ClusterIP and NodePort allocation happens in
    ``preparing.py`` (the registry does it after field management)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    causes: list[Cause] = []
    ports = spec.get("ports") or []
    if not ports and spec["type"] != "ExternalName" and spec.get("clusterIP") != "None":
        causes.append(required("spec.ports"))
    for i, port in enumerate(ports):
        port.setdefault("protocol", "TCP")
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            causes.append(invalid_value(f"spec.ports[{i}].port", number, "must be between 1 and 65535, inclusive"))
        port.setdefault("targetPort", number)
        target = port["targetPort"]
        if isinstance(target, int) and not 1 <= target <= 65535:
            causes.append(invalid_value(f"spec.ports[{i}].targetPort", target, "must be between 1 and 65535, inclusive"))
        if len(ports) > 1 and not port.get("name"):
            causes.append(required(f"spec.ports[{i}].name"))
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if old is not None and (old.get("spec") or {}).get("clusterIP") and spec["type"] != "ExternalName":
        previous = old["spec"]["clusterIP"]
        if spec.get("clusterIP") not in (None, "", previous):
            causes.append(invalid_value("spec.clusterIPs[0]", spec.get("clusterIPs") or [spec["clusterIP"]], "may not change once set"))
    for i, ingress in enumerate(((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []):
        if ingress.get("ip"):
            ingress.setdefault("ipMode", "VIP")
            try:
                ipaddress.ip_address(str(ingress["ip"]))
            except ValueError:
                message = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
                causes.append(invalid_value(f"status.loadBalancer.ingress[{i}].ip", ingress["ip"], message))
    return causes


def _container_defaults(container: dict[str, Any], path: str) -> list[Cause]:
    causes = []
    if not container.get("name"):
        causes.append(required(f"{path}.name"))
    image = container.get("image")
    if not image:
        causes.append(required(f"{path}.image"))
    else:
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for env in container.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(probe_name)
        if isinstance(probe, dict):
            for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
                probe.setdefault(key, value)
            if isinstance(probe.get("httpGet"), dict):
                probe["httpGet"].setdefault("scheme", "HTTP")
    return causes


def _pod_spec(spec: dict[str, Any], path: str) -> list[Cause]:
    causes = []
    containers = spec.get("containers") or []
    if not containers:
        causes.append(required(f"{path}.containers"))
    for i, container in enumerate(containers):
        causes += _container_defaults(container, f"{path}.containers[{i}]")
    for key, value in (
        ("restartPolicy", "Always"),
        ("terminationGracePeriodSeconds", 30),
        ("dnsPolicy", "ClusterFirst"),
        ("schedulerName", "default-scheduler"),
        ("securityContext", {}),
    ):
        spec.setdefault(key, value)
    for volume in spec.get("volumes") or []:  # SetDefaults_{ConfigMap,Secret,Projected,DownwardAPI}VolumeSource
        for source in ("configMap", "secret", "projected", "downwardAPI"):
            if isinstance(volume, dict) and isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", 420)
    return causes


def _selector_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        present = expression.get("key") in labels
        value = labels.get(expression.get("key", ""))
        operator = expression.get("operator")
        if (
            (operator == "In" and value not in (expression.get("values") or []))
            or (operator == "NotIn" and present and value in (expression.get("values") or []))
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def _replicaset(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """SetDefaults_ReplicaSet and the heart of ValidateReplicaSet: replicas, selector, template."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    return _replicas_selector_template(spec, "deployment")  # sic: kube's ReplicaSet message names a deployment


def _replicas_selector_template(spec: dict[str, Any], workload: str) -> list[Cause]:
    """What ValidateDeploymentSpec, ValidateReplicaSetSpec and ValidateStatefulSetSpec share: replicas >= 0, a
    non-empty selector that matches the template's labels, and the template's pod spec (defaulted)."""
    causes: list[Cause] = []
    replicas = spec["replicas"]
    if not isinstance(replicas, int) or replicas < 0:
        causes.append(invalid_value("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.setdefault("template", {})
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not selector:  # a nil selector matches nothing, so the template labels do not match it either
        causes.append(required("spec.selector"))
        causes.append(invalid_value("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    elif not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(invalid_value("spec.selector", selector, f"empty selector is invalid for {workload}"))
    elif not _selector_matches(selector, labels):
        causes.append(invalid_value("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    template.setdefault("metadata", {})
    return causes + _pod_spec(template.setdefault("spec", {}), "spec.template.spec")


def _deployment(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    spec = obj.setdefault("spec", {})
    causes: list[Cause] = []
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy["type"] = "RollingUpdate"
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    causes += _replicas_selector_template(spec, "deployment")
    selector = spec.get("selector")
    if old is not None and selector and old.get("spec", {}).get("selector") not in (None, selector):
        causes.append(invalid_value("spec.selector", selector, "field is immutable"))
    return causes


_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_RETENTION = ["Retain", "Delete"]


def _claim_spec(spec: dict[str, Any], path: str) -> list[Cause]:
    """SetDefaults_PersistentVolumeClaimSpec and the heart of ValidatePersistentVolumeClaimSpec."""
    spec.setdefault("volumeMode", "Filesystem")
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(required(f"{path}.accessModes", "at least 1 access mode is required"))
    causes += [not_supported(f"{path}.accessModes", mode, _ACCESS_MODES) for mode in modes if mode not in _ACCESS_MODES]
    if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
        causes.append(required(f"{path}.resources[storage]"))
    return causes


def _statefulset(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """SetDefaults_StatefulSet (with MaxUnavailableStatefulSet on, as in kube 1.37) and ValidateStatefulSet(Update)."""
    spec = obj.setdefault("spec", {})
    causes: list[Cause] = []
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        strategy["rollingUpdate"].setdefault("partition", 0)
        strategy["rollingUpdate"].setdefault("maxUnavailable", 1)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    for when in ("whenDeleted", "whenScaled"):
        retention[when] = retention.get(when) or "Retain"
        if retention[when] not in _RETENTION:
            causes.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{when}", retention[when], _RETENTION))
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        # the apps/v1 conversion writes apiVersion/kind into every template; the claim defaults apply
        claim.update({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
        claim.setdefault("metadata", {})
        claim.setdefault("status", {}).setdefault("phase", "Pending")
        causes += _claim_spec(claim.setdefault("spec", {}), f"spec.volumeClaimTemplates[{i}].spec")
    causes += _replicas_selector_template(spec, "statefulset")
    if old is not None:
        old_spec = old.get("spec") or {}
        for field in ("selector", "volumeClaimTemplates", "serviceName", "podManagementPolicy"):
            if spec.get(field) != old_spec.get(field):
                causes.append(invalid_value(f"spec.{field}", spec.get(field), "field is immutable"))
    return causes


def _pvc(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """SetDefaults_PersistentVolumeClaim(Spec) and ValidatePersistentVolumeClaim(Update): after creation only
    the storage request (of a bound claim) may change, and volumeName once, by the binder."""
    spec = obj.setdefault("spec", {})
    causes = _claim_spec(spec, "spec")
    if old is not None:
        old_view, new_view = orjson.loads(orjson.dumps(old.get("spec") or {})), orjson.loads(orjson.dumps(spec))
        # the binder sets volumeName once; a claim without a class may get one (retroactive default class)
        for key in ("volumeName", "storageClassName"):
            if not old_view.get(key):
                old_view.pop(key, None)
                new_view.pop(key, None)
        if (obj.get("status") or {}).get("phase") == "Bound":  # a bound claim may be resized
            old_storage = ((old_view.get("resources") or {}).get("requests") or {}).get("storage")
            new_view.setdefault("resources", {}).setdefault("requests", {})["storage"] = old_storage
            for view in (old_view, new_view):
                view.pop("volumeAttributesClassName", None)
        if new_view != old_view:
            detail = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
            causes.append(forbidden("spec", detail))
    return causes


def _pod(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("enableServiceLinks", True)  # SetDefaults_PodSpec, unlike the template's (a Deployment's has none)
    return _pod_spec(spec, "spec")


def _ingress(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    spec = obj.setdefault("spec", {})
    for i, rule in enumerate(spec.get("rules") or []):
        for j, path in enumerate((rule.get("http") or {}).get("paths") or []):
            where = f"spec.rules[{i}].http.paths[{j}]"
            if not path.get("pathType"):
                causes.append(required(f"{where}.pathType", "pathType must be specified"))
            elif path["pathType"] not in ("Exact", "Prefix", "ImplementationSpecific"):
                causes.append(not_supported(f"{where}.pathType", path["pathType"], ["Exact", "ImplementationSpecific", "Prefix"]))
            if not path.get("backend"):
                causes.append(required(f"{where}.backend"))
    return causes


def _network_policy(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    spec = obj.setdefault("spec", {})
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
    return []


def _event(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """core/v1 Events: any ``type`` (only events.k8s.io/v1 restricts it); the involved object's namespace
    must be the event's (or empty, for an event in default or cluster-wide)."""
    if obj.get("type") == "":
        del obj["type"]
    causes: list[Cause] = []
    involved = obj["involvedObject"] if isinstance(obj.get("involvedObject"), dict) else {}
    namespace = obj["metadata"].get("namespace") or ""
    involved_namespace = involved.get("namespace") or ""
    mismatch = namespace not in ("", "default") if not involved_namespace else involved_namespace != namespace
    if mismatch:
        causes.append(invalid_value("involvedObject.namespace", involved_namespace, "does not match event.namespace"))
    return causes


def _lease(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    duration = (obj.get("spec") or {}).get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        return [invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0")]
    return []


def _role(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    for i, rule in enumerate(obj.get("rules") or []):
        if not rule.get("verbs"):
            causes.append(required(f"rules[{i}].verbs"))
    return causes


def _role_binding(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    ref: dict[str, Any] = obj["roleRef"] if isinstance(obj.get("roleRef"), dict) else {}
    causes: list[Cause] = []
    kinds = ["Role", "ClusterRole"] if obj.get("kind") == "RoleBinding" else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        causes.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
    if not ref.get("name"):
        causes.append(required("roleRef.name"))
    if old is not None and ref != old.get("roleRef"):
        rendered = orjson.dumps({"APIGroup": ref.get("apiGroup", ""), "Kind": ref.get("kind", ""), "Name": ref.get("name", "")}).decode()
        causes.append(Cause("roleRef", "FieldValueInvalid", f"Invalid value: {rendered}: field is immutable"))
    return causes


def _pdb(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    spec = obj.get("spec") or {}
    if "minAvailable" in spec and "maxUnavailable" in spec:
        shown = orjson.dumps(
            {
                "MinAvailable": spec["minAvailable"],
                "Selector": spec.get("selector"),
                "MaxUnavailable": spec["maxUnavailable"],
                "UnhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy"),
            }
        ).decode()  # the internal Go struct, printed with %v of its JSON
        return [Cause("spec", "FieldValueInvalid", f"Invalid value: {shown}: minAvailable and maxUnavailable cannot be both set")]
    return []


_STRATEGIES: dict[tuple[str, str], Admit] = {
    ("", "configmaps"): _configmap,
    ("", "secrets"): _secret,
    ("", "namespaces"): _namespace,
    ("", "services"): _service,
    ("", "pods"): _pod,
    ("", "events"): _event,
    ("apps", "deployments"): _deployment,
    ("apps", "replicasets"): _replicaset,
    ("apps", "statefulsets"): _statefulset,
    ("", "persistentvolumeclaims"): _pvc,
    ("networking.k8s.io", "ingresses"): _ingress,
    ("networking.k8s.io", "networkpolicies"): _network_policy,
    ("coordination.k8s.io", "leases"): _lease,
    ("rbac.authorization.k8s.io", "roles"): _role,
    ("rbac.authorization.k8s.io", "clusterroles"): _role,
    ("rbac.authorization.k8s.io", "rolebindings"): _role_binding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): _role_binding,
    ("policy", "poddisruptionbudgets"): _pdb,
    ("apiextensions.k8s.io", "customresourcedefinitions"): admit_crd,
}


def admit(group: str, plural: str, obj: dict[str, Any], old: dict[str, Any] | None, *, subresource: str = "") -> list[Cause]:
    """Default ``obj`` in place and return its validation problems (``old`` is None on create, ``subresource`` names
    the one written: kube checks a CRD's ``status.storedVersions`` against its versions on updates of the CRD itself,
    never of its status)."""
    strategy = _STRATEGIES.get((group, plural))
    causes = strategy(obj, old) if strategy else []
    if (group, plural) == ("apiextensions.k8s.io", "customresourcedefinitions") and old is not None and subresource != "status":
        causes += stored_versions_causes(obj)
    return causes
