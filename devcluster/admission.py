"""Per-kind defaulting and validation of built-in kinds (kube-apiserver's registry strategies).

kube-apiserver defaults and validates built-in objects from their Go types. devcluster has no Go
types, so this module encodes what the product, kubectl and the tests rely on: the defaults a
Deployment/Service/Namespace/Secret gets (so that server-side apply round-trips and "no change,
no write" holds), and the validation errors a client would meet. Custom resources are handled
by ``schemas.py`` instead. Called by ``writing.py`` with a fresh copy it may mutate.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import zlib
from collections.abc import Callable
from typing import Any

from devcluster.errors import Cause, forbidden, invalid_value, required
from devcluster.schemas import validate_crd

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
    if old is not None:
        if obj["type"] != old.get("type", "Opaque"):
            causes.append(invalid_value("type", obj["type"], "field is immutable"))
        if old.get("immutable") and (obj.get("data") or {}) != (old.get("data") or {}):
            causes.append(forbidden("data", "field is immutable when `immutable` is set"))
    return causes


def _namespace(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    if old is None:
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
    return []


_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")


def _allocate_cluster_ip(obj: dict[str, Any]) -> str:
    # Deterministic per namespace/name so a restart or re-create gives a stable address.
    key = f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}".encode()
    seed = zlib.crc32(key) % (_SERVICE_NET.num_addresses - 2) + 1
    return str(_SERVICE_NET.network_address + seed)


def _service(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
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
        if len(ports) > 1 and not port.get("name"):
            causes.append(required(f"spec.ports[{i}].name"))
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if old is not None and old.get("spec", {}).get("clusterIP"):
            if spec.get("clusterIP") not in (None, "", old["spec"]["clusterIP"]):
                causes.append(invalid_value("spec.clusterIPs[0]", spec["clusterIP"], "may not change once set"))
            spec["clusterIP"] = old["spec"]["clusterIP"]
        elif not spec.get("clusterIP"):
            spec["clusterIP"] = _allocate_cluster_ip(obj)
        spec["clusterIPs"] = [spec["clusterIP"]]
    obj.setdefault("status", {"loadBalancer": {}})
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
    replicas = spec["replicas"]
    if not isinstance(replicas, int) or replicas < 0:
        causes.append(invalid_value("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.setdefault("template", {})
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not selector:
        causes.append(required("spec.selector"))
    elif not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(invalid_value("spec.selector", selector, "empty selector is invalid for deployment"))
    elif not _selector_matches(selector, labels):
        causes.append(invalid_value("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    if old is not None and selector and old.get("spec", {}).get("selector") not in (None, selector):
        causes.append(invalid_value("spec.selector", selector, "field is immutable"))
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    causes += _pod_spec(template.setdefault("spec", {}), "spec.template.spec")
    return causes


def _pod(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes = _pod_spec(obj.setdefault("spec", {}), "spec")
    if old is None:
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    return causes


def _ingress(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    spec = obj.setdefault("spec", {})
    for i, rule in enumerate(spec.get("rules") or []):
        for j, path in enumerate((rule.get("http") or {}).get("paths") or []):
            where = f"spec.rules[{i}].http.paths[{j}]"
            if not path.get("pathType"):
                causes.append(required(f"{where}.pathType", "pathType must be specified"))
            elif path["pathType"] not in ("Exact", "Prefix", "ImplementationSpecific"):
                causes.append(
                    invalid_value(f"{where}.pathType", path["pathType"], 'supported values: "Exact", "ImplementationSpecific", "Prefix"')
                )
            if not path.get("backend"):
                causes.append(required(f"{where}.backend"))
    obj.setdefault("status", {"loadBalancer": {}})
    return causes


def _crd(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("conversion", {"strategy": "None"})
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):  # SetDefaults_CustomResourceDefinitionSpec
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind") and names["kind"]:
            names["listKind"] = names["kind"] + "List"
    for version in spec.get("versions") or []:
        version.setdefault("served", True)
    causes = validate_crd(obj)
    if old is not None and spec.get("scope") != old["spec"].get("scope"):
        causes.append(invalid_value("spec.scope", spec.get("scope"), "field is immutable"))
    return causes


def _event(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    involved = obj.get("involvedObject")
    if not isinstance(involved, dict):
        causes.append(required("involvedObject"))
    elif involved.get("namespace") and involved["namespace"] != obj["metadata"].get("namespace"):
        causes.append(invalid_value("involvedObject.namespace", involved["namespace"], "does not match event.namespace"))
    if obj.get("type") not in (None, "", "Normal", "Warning"):
        causes.append(invalid_value("type", obj["type"], 'has invalid value, supported values: "Normal", "Warning"'))
    return causes


_STRATEGIES: dict[tuple[str, str], Admit] = {
    ("", "configmaps"): _configmap,
    ("", "secrets"): _secret,
    ("", "namespaces"): _namespace,
    ("", "services"): _service,
    ("", "pods"): _pod,
    ("", "events"): _event,
    ("apps", "deployments"): _deployment,
    ("networking.k8s.io", "ingresses"): _ingress,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
}


def admit(group: str, plural: str, obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """Default ``obj`` in place and return its validation problems (``old`` is None on create)."""
    strategy = _STRATEGIES.get((group, plural))
    return strategy(obj, old) if strategy else []
