"""Built-in kinds' columns: ``k8s.io/kubernetes/pkg/printers/internalversion/printers.go`` for the kinds
devcluster serves (services, deployments, ingresses, events, ...), with their label/selector formats;
kinds without a printer there get the default table convertor's Name and Created At.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import labelselectors
from devcluster.printing.cells import Column, _created_at, _meta, _parse_time, _since
from devcluster.printing.columns import (
    _CONTAINERS_DOC,
    _CREATION_DOC,
    _IMAGES_DOC,
    _age_col,
    _col,
    _dict,
    _get,
    _int,
    _int_or_na,
    _list,
    _name_col,
    _str,
)

# ---------------------------------------------------------------------------------------------
# Label helpers (labels.FormatLabels, metav1.LabelSelectorAsSelector(...).String())
# ---------------------------------------------------------------------------------------------


def _format_labels(labels: Any) -> str:
    items = _dict(labels)
    text = ",".join(f"{k}={items[k]}" for k in sorted(items))
    return text or "<none>"


def _selector_string(selector: Any) -> str | None:
    """``LabelSelectorAsSelector(sel).String()``; None when the selector is invalid."""
    try:
        return str(labelselectors.from_dict(selector if isinstance(selector, dict) else {}))
    except labelselectors.InvalidSelector:
        return None


def _format_label_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``."""
    text = _selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def _containers(template_spec: Any) -> tuple[str, str]:
    containers = [c for c in _list(_get(template_spec, "containers")) if isinstance(c, dict)]
    return ",".join(_str(c.get("name")) for c in containers), ",".join(_str(c.get("image")) for c in containers)


def _lb_status(ingress: Any) -> str:
    found: set[str] = set()
    for entry in _list(ingress):
        if not isinstance(entry, dict):
            continue
        if entry.get("ip"):
            found.add(str(entry["ip"]))
        elif entry.get("hostname"):
            found.add(str(entry["hostname"]))
    return ",".join(sorted(found))


# ---------------------------------------------------------------------------------------------
# Built-in printers
# ---------------------------------------------------------------------------------------------


def _service_external_ip(svc: dict[str, Any]) -> str:
    spec = _dict(svc.get("spec"))
    external = [str(ip) for ip in _list(spec.get("externalIPs"))]
    svc_type = _str(spec.get("type")) or "ClusterIP"
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = _lb_status(_get(svc, "status", "loadBalancer", "ingress"))
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + external)
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return _str(spec.get("externalName"))
    return "<unknown>"


def _service_cluster_ip(svc: dict[str, Any]) -> str:
    spec = _dict(svc.get("spec"))
    ips = _list(spec.get("clusterIPs"))
    if not ips and spec.get("clusterIP"):
        ips = [spec["clusterIP"]]
    return str(ips[0]) if ips else "<none>"


def _service_ports(svc: dict[str, Any]) -> str:
    pieces = []
    for port in _list(_get(svc, "spec", "ports")):
        if not isinstance(port, dict):
            continue
        protocol = _str(port.get("protocol")) or "TCP"
        if _int(port.get("nodePort")) > 0:
            pieces.append(f"{_int(port.get('port'))}:{_int(port.get('nodePort'))}/{protocol}")
        else:
            pieces.append(f"{_int(port.get('port'))}/{protocol}")
    return ",".join(pieces) or "<none>"


def _deployment_selector(obj: dict[str, Any], now: datetime) -> str:
    text = _selector_string(_get(obj, "spec", "selector"))
    return "<invalid>" if text is None else text


def _deployment_desired(obj: dict[str, Any]) -> int:
    spec = _dict(obj.get("spec"))
    return _int(spec["replicas"]) if "replicas" in spec and spec["replicas"] is not None else 1


_ACCESS_MODE_ABBREVIATIONS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def _pod_ready(obj: dict[str, Any]) -> str:
    statuses = _get(obj, "status", "containerStatuses") or []
    total = len(_get(obj, "spec", "containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _pod_status(obj: dict[str, Any]) -> str:
    """printPod's reason, in short: the phase, a container's waiting or terminated reason, Terminating."""
    reason = _get(obj, "status", "reason") or _get(obj, "status", "phase") or ""
    for container in reversed(_get(obj, "status", "containerStatuses") or []):
        state = container.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return str(reason)


def _readiness_gates(obj: dict[str, Any]) -> str:
    gates = [g.get("conditionType", "") for g in _get(obj, "spec", "readinessGates") or []]
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in _get(obj, "status", "conditions") or []}
    return f"{sum(1 for g in gates if conditions.get(g) == 'True')}/{len(gates)}"


def _claim_cells(obj: dict[str, Any]) -> dict[str, str]:
    """printPersistentVolumeClaim: capacity and access modes come from the status once the claim names a volume."""
    meta, spec = _meta(obj), _dict(obj.get("spec"))
    bound = bool(_str(spec.get("volumeName")))
    modes = _list(_get(obj, "status", "accessModes"))
    class_annotation = _dict(meta.get("annotations")).get("volume.beta.kubernetes.io/storage-class")
    return {
        "phase": "Terminating" if meta.get("deletionTimestamp") else _str(_get(obj, "status", "phase")),
        "capacity": (_str(_get(obj, "status", "capacity", "storage")) or "0") if bound else "",
        "modes": ",".join(short for mode, short in _ACCESS_MODE_ABBREVIATIONS if mode in modes) if bound else "",
        "class": _str(class_annotation if class_annotation is not None else spec.get("storageClassName")),
        "attributes": _str(spec["volumeAttributesClassName"]) if spec.get("volumeAttributesClassName") is not None else "<unset>",
        "mode": _str(spec["volumeMode"]) if spec.get("volumeMode") is not None else "<unset>",
    }


def _ingress_hosts(obj: dict[str, Any], now: datetime) -> str:
    rules = [r for r in _list(_get(obj, "spec", "rules")) if isinstance(r, dict)]
    hosts: list[str] = []
    limit, more = 3, False
    for rule in rules:
        if len(hosts) == limit:
            more = True
        if not more and rule.get("host"):
            hosts.append(_str(rule.get("host")))
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - limit} more..." if more else text


def _event_times(obj: dict[str, Any], now: datetime) -> tuple[str, str, int]:
    first = _since(obj.get("firstTimestamp"), now)
    if _parse_time(obj.get("firstTimestamp")) is None:
        first = _since(obj.get("eventTime"), now)
    last = _since(obj.get("lastTimestamp"), now)
    if _parse_time(obj.get("lastTimestamp")) is None:
        last = first
    count = _int(obj.get("count"))
    series = obj.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1
    return last, first, count


def _event_object(obj: dict[str, Any], now: datetime) -> str:
    involved = _dict(obj.get("involvedObject"))
    kind = _str(involved.get("kind")).lower()
    name = _str(involved.get("name"))
    return f"{kind}/{name}" if name else kind


def _event_source(obj: dict[str, Any], now: datetime) -> str:
    source = _dict(obj.get("source"))
    component = _str(source.get("component")) or _str(obj.get("reportingComponent"))
    host = _str(source.get("host")) or _str(obj.get("reportingInstance"))
    return f"{component}, {host}" if host else component


def _subjects(obj: dict[str, Any], kind: str) -> str:
    names = []
    for subject in _list(obj.get("subjects")):
        if not isinstance(subject, dict) or subject.get("kind") != kind:
            continue
        if kind == "ServiceAccount":
            names.append(f"{_str(subject.get('namespace'))}/{_str(subject.get('name'))}")
        else:
            names.append(_str(subject.get("name")))
    return ", ".join(names)


def _role_ref(obj: dict[str, Any], now: datetime) -> str:
    ref = _dict(obj.get("roleRef"))
    return f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}"


_SERVICE_SPEC_DOCS = {
    "type": 'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',  # noqa: E501
    "clusterIP": 'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',  # noqa: E501
    "externalIPs": "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",  # noqa: E501
    "ports": "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
    "selector": "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",  # noqa: E501
}
_EVENT_DOCS = {
    "involvedObject": "The object that this event is about.",
    "reason": "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",  # noqa: E501
    "message": "A human-readable description of the status of this operation.",
    "source": "The component reporting this event. Should be a short machine understandable string.",
    "firstTimestamp": "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    "lastTimestamp": "The time at which the most recent occurrence of this event was recorded.",
    "count": "The number of times this event has occurred.",
    "type": "Type of this event (Normal, Warning), new types could be added in the future",
    "fieldPath": 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',  # noqa: E501
}
_SECRET_TYPE_DOC = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"
_SECRET_DATA_DOC = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"  # noqa: E501
_CONFIGMAP_DATA_DOC = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."  # noqa: E501
_SA_SECRETS_DOC = 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret'  # noqa: E501
_LEASE_HOLDER_DOC = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field."  # noqa: E501
_NETPOL_SELECTOR_DOC = "podSelector selects the pods to which this NetworkPolicy object applies. The array of rules is applied to any pods selected by this field. An empty selector matches all pods in the policy's namespace. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is optional. If it is not specified, it defaults to an empty selector."  # noqa: E501
_ROLEBINDING_REF_DOC = "roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."  # noqa: E501
_PVC_ACCESS_MODES_DOC = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"
_PVC_VOLUME_MODE_DOC = (
    "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."
)
_CLUSTERROLEBINDING_REF_DOC = "roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."  # noqa: E501


def _builtin_columns() -> dict[tuple[str, str], list[Column]]:
    services = [
        _name_col(),
        _col("Type", "string", _SERVICE_SPEC_DOCS["type"], lambda o, n: _str(_get(o, "spec", "type")) or "ClusterIP"),
        _col("Cluster-IP", "string", _SERVICE_SPEC_DOCS["clusterIP"], lambda o, n: _service_cluster_ip(o)),
        _col("External-IP", "string", _SERVICE_SPEC_DOCS["externalIPs"], lambda o, n: _service_external_ip(o)),
        _col("Port(s)", "string", _SERVICE_SPEC_DOCS["ports"], lambda o, n: _service_ports(o)),
        _age_col(),
        _col("Selector", "string", _SERVICE_SPEC_DOCS["selector"], lambda o, n: _format_labels(_get(o, "spec", "selector")), priority=1),
    ]
    ingresses = [
        _name_col(),
        _col(
            "Class",
            "string",
            "The name of the IngressClass resource that should be used for additional configuration",
            lambda o, n: _str(_get(o, "spec", "ingressClassName")) or "<none>",
        ),
        _col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule", _ingress_hosts),
        _col(
            "Address",
            "string",
            "Address is a list containing ingress points for the load-balancer",
            lambda o, n: _lb_status(_get(o, "status", "loadBalancer", "ingress")),
        ),
        _col("Ports", "string", "Ports of TLS configurations that open", lambda o, n: "80, 443" if _list(_get(o, "spec", "tls")) else "80"),
        _age_col(),
    ]
    events = [
        _col("Last Seen", "string", _EVENT_DOCS["lastTimestamp"], lambda o, n: _event_times(o, n)[0]),
        _col("Type", "string", _EVENT_DOCS["type"], lambda o, n: _str(o.get("type"))),
        _col("Reason", "string", _EVENT_DOCS["reason"], lambda o, n: _str(o.get("reason"))),
        _col("Object", "string", _EVENT_DOCS["involvedObject"], _event_object),
        _col("Subobject", "string", _EVENT_DOCS["fieldPath"], lambda o, n: _str(_get(o, "involvedObject", "fieldPath")), priority=1),
        _col("Source", "string", _EVENT_DOCS["source"], _event_source, priority=1),
        _col("Message", "string", _EVENT_DOCS["message"], lambda o, n: _str(o.get("message")).strip()),
        _col("First Seen", "string", _EVENT_DOCS["firstTimestamp"], lambda o, n: _event_times(o, n)[1], priority=1),
        _col("Count", "string", _EVENT_DOCS["count"], lambda o, n: _event_times(o, n)[2], priority=1),
        _name_col(priority=1),
    ]
    namespaces = [
        _name_col(),
        _col("Status", "string", "The status of the namespace", lambda o, n: _str(_get(o, "status", "phase")) or "Active"),
        _age_col(),
    ]
    secrets = [
        _name_col(),
        _col("Type", "string", _SECRET_TYPE_DOC, lambda o, n: _str(o.get("type")) or "Opaque"),
        _col("Data", "string", _SECRET_DATA_DOC, lambda o, n: len(_dict(o.get("data")))),
        _age_col(),
    ]
    service_accounts = [_name_col(), _age_col()]  # kube 1.34 dropped the SECRETS column
    disruption_budgets = [
        _name_col(),
        _col("Min Available", "string", "The minimum number of pods that must be available.", lambda o, n: _int_or_na(o, "minAvailable")),
        _col(
            "Max Unavailable", "string", "The maximum number of pods that may be unavailable.", lambda o, n: _int_or_na(o, "maxUnavailable")
        ),
        _col(
            "Allowed Disruptions",
            "integer",
            "Calculated number of pods that may be disrupted at this time.",
            lambda o, n: _int(_get(o, "status", "disruptionsAllowed")),
        ),
        _age_col(),
    ]
    deployments = [
        _name_col(),
        _col(
            "Ready",
            "string",
            "Number of the pod with ready state",
            lambda o, n: f"{_int(_get(o, 'status', 'readyReplicas'))}/{_deployment_desired(o)}",
        ),
        _col(
            "Up-to-date",
            "string",
            "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            lambda o, n: _int(_get(o, "status", "updatedReplicas")),
        ),
        _col(
            "Available",
            "string",
            "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            lambda o, n: _int(_get(o, "status", "availableReplicas")),
        ),
        _age_col(),
        _col("Containers", "string", _CONTAINERS_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[0], priority=1),
        _col("Images", "string", _IMAGES_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[1], priority=1),
        _col(
            "Selector",
            "string",
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
            _deployment_selector,
            priority=1,
        ),
    ]
    replicasets = [
        _name_col(),
        _col("Desired", "integer", "Number of desired pods", lambda o, n: _int(_get(o, "spec", "replicas"))),
        _col("Current", "integer", "Number of actual replicas", lambda o, n: _int(_get(o, "status", "replicas"))),
        _col("Ready", "integer", "Number of ready replicas", lambda o, n: _int(_get(o, "status", "readyReplicas"))),
        _age_col(),
        _col("Containers", "string", _CONTAINERS_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[0], priority=1),
        _col("Images", "string", _IMAGES_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[1], priority=1),
        _col("Selector", "string", "The label selector of the ReplicaSet", _deployment_selector, priority=1),
    ]
    pods = [
        _name_col(),
        _col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.", lambda o, n: _pod_ready(o)),
        _col("Status", "string", "The aggregate status of the containers in this pod.", lambda o, n: _pod_status(o)),
        _col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            lambda o, n: str(sum(int(c.get("restartCount") or 0) for c in _get(o, "status", "containerStatuses") or [])),
        ),
        _age_col(),
        _col("IP", "string", "IP address allocated to the pod.", lambda o, n: _get(o, "status", "podIP") or "<none>", priority=1),
        _col(
            "Node",
            "string",
            "NodeName indicates in which node this pod is scheduled.",
            lambda o, n: _get(o, "spec", "nodeName") or "<none>",
            priority=1,
        ),
        _col(
            "Nominated Node",
            "string",
            "nominatedNodeName is set only when this pod preempts other pods on the node.",
            lambda o, n: _get(o, "status", "nominatedNodeName") or "<none>",
            priority=1,
        ),
        _col(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness.",
            lambda o, n: _readiness_gates(o),
            priority=1,
        ),
    ]
    statefulsets = [
        _name_col(),
        _col(
            "Ready",
            "string",
            "Number of the pod with ready state",
            lambda o, n: f"{_int(_get(o, 'status', 'readyReplicas'))}/{_int(_get(o, 'spec', 'replicas'))}",
        ),
        _age_col(),
        _col("Containers", "string", _CONTAINERS_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[0], priority=1),
        _col("Images", "string", _IMAGES_DOC, lambda o, n: _containers(_get(o, "spec", "template", "spec"))[1], priority=1),
    ]
    claims = [
        _name_col(),
        _col("Status", "string", "phase represents the current phase of PersistentVolumeClaim.", lambda o, n: _claim_cells(o)["phase"]),
        _col(
            "Volume",
            "string",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
            lambda o, n: _str(_get(o, "spec", "volumeName")),
        ),
        _col(
            "Capacity",
            "string",
            "capacity represents the actual resources of the underlying volume.",
            lambda o, n: _claim_cells(o)["capacity"],
        ),
        _col("Access Modes", "string", _PVC_ACCESS_MODES_DOC, lambda o, n: _claim_cells(o)["modes"]),
        _col("StorageClass", "string", "StorageClass of the pvc", lambda o, n: _claim_cells(o)["class"]),
        _col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc", lambda o, n: _claim_cells(o)["attributes"]),
        _age_col(),
        _col("VolumeMode", "string", _PVC_VOLUME_MODE_DOC, lambda o, n: _claim_cells(o)["mode"], priority=1),
    ]
    configmaps = [
        _name_col(),
        _col("Data", "string", _CONFIGMAP_DATA_DOC, lambda o, n: len(_dict(o.get("data"))) + len(_dict(o.get("binaryData")))),
        _age_col(),
    ]
    network_policies = [
        _name_col(),
        _col("Pod-Selector", "string", _NETPOL_SELECTOR_DOC, lambda o, n: _format_label_selector(_get(o, "spec", "podSelector"))),
        _age_col(),
    ]

    def bindings(ref_doc: str, noun: str) -> list[Column]:
        return [
            _name_col(),
            _col("Role", "string", ref_doc, _role_ref),
            _age_col(),
            _col("Users", "string", f"Users in the {noun}", lambda o, n: _subjects(o, "User"), priority=1),
            _col("Groups", "string", f"Groups in the {noun}", lambda o, n: _subjects(o, "Group"), priority=1),
            _col("ServiceAccounts", "string", f"ServiceAccounts in the {noun}", lambda o, n: _subjects(o, "ServiceAccount"), priority=1),
        ]

    leases = [
        _name_col(),
        _col("Holder", "string", _LEASE_HOLDER_DOC, lambda o, n: _str(_get(o, "spec", "holderIdentity"))),
        _age_col(),
    ]
    return {
        ("", "services"): services,
        ("networking.k8s.io", "ingresses"): ingresses,
        ("", "events"): events,
        ("", "namespaces"): namespaces,
        ("", "secrets"): secrets,
        ("", "serviceaccounts"): service_accounts,
        ("apps", "deployments"): deployments,
        ("apps", "statefulsets"): statefulsets,
        ("apps", "replicasets"): replicasets,
        ("", "pods"): pods,
        ("", "persistentvolumeclaims"): claims,
        ("", "configmaps"): configmaps,
        ("networking.k8s.io", "networkpolicies"): network_policies,
        ("rbac.authorization.k8s.io", "rolebindings"): bindings(_ROLEBINDING_REF_DOC, "roleBinding"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"): bindings(_CLUSTERROLEBINDING_REF_DOC, "clusterRoleBinding"),
        ("coordination.k8s.io", "leases"): leases,
        ("policy", "poddisruptionbudgets"): disruption_budgets,
    }


_BUILTIN_COLUMNS = _builtin_columns()

# rest.defaultTableConvertor: everything served without a dedicated printer (roles, clusterroles, CRDs).
_DEFAULT_COLUMNS = [_name_col(), _col("Created At", "date", _CREATION_DOC, _created_at)]
