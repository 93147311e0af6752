"""Unit tests for devcluster.protobuf (decoding ``application/vnd.kubernetes.protobuf`` bodies).

Behaviours covered:

* Golden bodies captured from kubectl v1.32 (``create deployment|secret generic|service
  clusterip|rolebinding``) decode to exactly the JSON kubectl prints for the same object with
  ``--dry-run=client -o json`` (Go's JSON of the Go object).
* Round trips through a test-only encoder built from the same schema table: every message
  reachable from the served kinds, with every field set, decodes back to the same JSON; rich
  Deployment / Pod (with status) / Service / Secret / ConfigMap / Event / Lease / Ingress /
  NetworkPolicy / RBAC / Namespace / ServiceAccount / Scale / DeleteOptions objects too.
* JSON shapes: ``metav1.Time`` -> RFC 3339 seconds (nanos dropped), zero Time -> null,
  ``MicroTime`` -> microseconds, ``IntOrString`` -> int or string, ``Quantity`` -> string,
  ``FieldsV1`` -> its JSON, ``ExtraValue`` -> a list of strings, ``map<string,bytes>`` -> base64, inline structs merged (VolumeSource,
  ProbeHandler, LocalObjectReference, EphemeralContainerCommon).
* Omitted vs empty: absent fields and empty repeated fields stay absent; zero values of
  non-pointer ``omitempty`` scalars (which gogo protobuf always writes) are dropped; pointer
  scalars keep zero values (``replicas: 0``, ``automountServiceAccountToken: false``);
  non-``omitempty`` scalars keep them (``containerPort: 0``); ``apiVersion``/``kind`` come from the
  envelope.
* Wire format: negative int32/int64, packed repeated varints, unknown field numbers skipped,
  repeated non-repeated fields (last wins), invalid UTF-8 replaced like Go's JSON encoder.
* Malformed input -> 400 BadRequest StatusError: no ``k8s\\x00`` magic, truncated varint, length
  past the end, wrong wire type, group wire types, field number 0, unknown kind / group version,
  missing kind, content encoding, foreign inner content type, bad FieldsV1 JSON, impossible
  IntOrString type, kind other than the expected one (DeleteOptions bodies).
* The schema table is closed: every referenced message exists, JSON names are unique per
  message (inline members included), and every served built-in kind except CRDs has a root.
"""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
import yaml

from devcluster import protobuf
from devcluster.errors import StatusError
from devcluster.protobuf_schema import MESSAGES, ROOTS, SPECIAL
from devcluster.resources import BUILTINS

# -- a test-only encoder, built from the same schema table ------------------------------------


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _len(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _scalar(number: int, kind: str, value: Any) -> bytes:
    if kind == "string":
        return _len(number, value.encode())
    if kind == "bytes":
        return _len(number, base64.b64decode(value))
    if kind == "bool":
        return _key(number, 0) + _varint(int(value))
    return _key(number, 0) + _varint(value)


def _parse_time(text: str) -> tuple[int, int]:
    moment = datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z" if "." in text else "%Y-%m-%dT%H:%M:%S%z")
    return int(moment.timestamp() // 1), moment.microsecond * 1000


def _special(type_name: str, value: Any) -> bytes:
    if type_name in ("meta.v1.Time", "meta.v1.MicroTime"):
        if value is None:
            return b""
        seconds, nanos = _parse_time(value)
        return _key(1, 0) + _varint(seconds) + _key(2, 0) + _varint(nanos)
    if type_name == "intstr.IntOrString":
        if isinstance(value, int):
            return _key(1, 0) + _varint(0) + _key(2, 0) + _varint(value) + _len(3, b"")
        return _key(1, 0) + _varint(1) + _key(2, 0) + _varint(0) + _len(3, value.encode())
    if type_name.endswith(".ExtraValue"):
        return b"".join(_len(1, item.encode()) for item in value)
    if type_name == "resource.Quantity":
        return _len(1, value.encode())
    assert type_name == "meta.v1.FieldsV1"
    return _len(1, orjson.dumps(value))


def _encode_value(type_name: str, value: Any, gogo: bool) -> bytes:
    return _special(type_name, value) if type_name in SPECIAL else encode(type_name, value, gogo=gogo)


def encode(type_name: str, obj: dict[str, Any], *, gogo: bool = True) -> bytes:
    """Encode ``obj`` as ``type_name``; ``gogo`` also writes the zero values gogo protobuf writes."""
    out = b""
    for number, (name, kind, target, repeated, omit_zero) in sorted(MESSAGES[type_name].items()):
        if kind == "inline":
            out += _len(number, encode(target, obj, gogo=gogo))
            continue
        if name not in obj:
            if gogo and omit_zero:
                out += _scalar(number, target, {"string": "", "bool": False}.get(target, 0))
            continue
        value = obj[name]
        if kind == "scalar":
            for item in value if repeated else [value]:
                out += _scalar(number, target, item)
        elif kind == "map":
            for k, v in value.items():
                entry = _len(1, k.encode())
                entry += _len(2, _encode_value(target, v, gogo)) if target in MESSAGES or target in SPECIAL else _scalar(2, target, v)
                out += _len(number, entry)
        else:
            for item in value if repeated else [value]:
                out += _len(number, _encode_value(target, item, gogo))
    return out


def envelope(api_version: str, kind: str, raw: bytes, *, encoding: str = "", content_type: str = "") -> bytes:
    type_meta = _len(1, api_version.encode()) + _len(2, kind.encode())
    return protobuf.MAGIC + _len(1, type_meta) + _len(2, raw) + _len(3, encoding.encode()) + _len(4, content_type.encode())


def round_trip(api_version: str, kind: str, obj: dict[str, Any], *, gogo: bool = True) -> dict[str, Any]:
    raw = encode(ROOTS.get((api_version, kind)) or ROOTS[("*", kind)], obj, gogo=gogo)
    return protobuf.decode(envelope(api_version, kind, raw))


# -- golden bodies from kubectl v1.32 ----------------------------------------------------------

GOLDEN = {
    "deployment": (
        "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412c2010a230a0377656212001a0464656d6f22002a003200380042005a0a0a0361707012037765621"
        "28c010802120c0a0a0a0361707012037765621a720a1c0a0012001a0022002a003200380042005a0a0a036170701203776562125212340a056e67696e78120a6e67696e"
        "783a312e32352a00320b0a00100018903f22002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022"
        "020a00280038001a0c0800100018002000280038001a002200",
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "namespace": "demo", "creationTimestamp": None, "labels": {"app": "web"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 8080}], "resources": {}}]},
                },
                "strategy": {},
            },
            "status": {},
        },
    ),
    "secret": (
        "6b3873000a0c0a0276311206536563726574123d0a190a05637265647312001a0464656d6f22002a00320038004200120f0a0470617373120773336372337421120d0a"
        "0475736572120561646d696e1a001a002200",
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "creds", "namespace": "demo", "creationTimestamp": None},
            "data": {"pass": "czNjcjN0IQ==", "user": "YWRtaW4="},
        },
    ),
    "service": (
        "6b3873000a0d0a0276311207536572766963651291010a230a0377656212001a0464656d6f22002a003200380042005a0a0a03617070120377656212660a1b0a073830"
        "2d38303830120354435018502207080010903f1a0028000a220a093434332d6874747073120354435018bb03220b080110001a0568747470732800120a0a0361707012"
        "037765621a002209436c757374657249503a00420052005a00600068001a020a001a002200",
        {
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": {"name": "web", "namespace": "demo", "creationTimestamp": None, "labels": {"app": "web"}},
            "spec": {
                "ports": [
                    {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080},
                    {"name": "443-https", "protocol": "TCP", "port": 443, "targetPort": "https"},
                ],
                "selector": {"app": "web"},
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        },
    ),
    "rolebinding": (
        "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e67128e010a160a02726212001a0464656d6f"
        "22002a00320038004200122a0a04557365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a05616c6963652200121d0a0e5365727669636541"
        "63636f756e7412001a03626f74220464656d6f1a290a19726261632e617574686f72697a6174696f6e2e6b38732e696f1204526f6c651a067265616465721a002200",
        {
            "kind": "RoleBinding",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "rb", "namespace": "demo", "creationTimestamp": None},
            "subjects": [
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                {"kind": "ServiceAccount", "name": "bot", "namespace": "demo"},
            ],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        },
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_kubectl_bodies_decode_to_kubectls_own_json(name: str) -> None:
    hex_body, expected = GOLDEN[name]
    assert protobuf.decode(bytes.fromhex(hex_body)) == expected


def test_golden_deployment_drops_gogo_zero_values_and_keeps_envelope_type() -> None:
    decoded = protobuf.decode(bytes.fromhex(GOLDEN["deployment"][0]))
    assert list(decoded)[:2] == ["apiVersion", "kind"]
    # gogo wrote generateName "", generation 0, restartPolicy "", dnsPolicy "", hostNetwork false...
    assert "generateName" not in decoded["metadata"] and "generation" not in decoded["metadata"]
    pod_spec = decoded["spec"]["template"]["spec"]
    assert set(pod_spec) == {"containers"}
    assert set(pod_spec["containers"][0]) == {"name", "image", "ports", "resources"}


# -- every reachable message, every field ------------------------------------------------------

SAMPLE_SPECIAL = {
    "meta.v1.Time": "2024-05-06T07:08:09Z",
    "meta.v1.MicroTime": "2024-05-06T07:08:09.123456Z",
    "resource.Quantity": "250m",
    "meta.v1.FieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
    "authentication.v1.ExtraValue": ["atlas", "zeus"],
    "authorization.v1.ExtraValue": ["atlas"],
}


def _sample_scalar(kind: str, name: str) -> Any:
    if kind == "string":
        return f"{name}-value"
    if kind == "bytes":
        return base64.b64encode(name.encode()).decode()
    if kind == "bool":
        return True
    return len(name) + 1


def _sample(type_name: str, flip: list[bool]) -> Any:
    if type_name == "intstr.IntOrString":
        flip[0] = not flip[0]
        return 8080 if flip[0] else "http"
    if type_name in SPECIAL:
        return SAMPLE_SPECIAL[type_name]
    out: dict[str, Any] = {}
    for name, kind, target, repeated, _ in MESSAGES[type_name].values():
        if kind == "inline":
            out.update(_sample(target, flip))
            continue
        if kind == "map":
            value: Any = {"a": _sample(target, flip) if target in MESSAGES or target in SPECIAL else _sample_scalar(target, name)}
        elif kind == "scalar":
            value = _sample_scalar(target, name)
        else:
            value = _sample(target, flip)
        out[name] = [value, copy.deepcopy(value)] if repeated else value
    return out


def _reachable() -> set[str]:
    seen: set[str] = set()
    todo = list(ROOTS.values())
    while todo:
        name = todo.pop()
        if name in seen or name in SPECIAL:
            continue
        seen.add(name)
        todo.extend(target for _, kind, target, _, _ in MESSAGES[name].values() if target in MESSAGES)
    return seen


@pytest.mark.parametrize("type_name", sorted(_reachable()))
def test_every_message_round_trips_with_every_field_set(type_name: str) -> None:
    sample = _sample(type_name, [False])
    assert protobuf._message(type_name, encode(type_name, sample), 0, len(encode(type_name, sample))) == sample


@pytest.mark.parametrize(("api_version", "kind"), sorted(ROOTS))
def test_every_root_kind_round_trips_through_the_envelope(api_version: str, kind: str) -> None:
    sample = _sample(ROOTS[(api_version, kind)], [False])
    version = "v1" if api_version == "*" else api_version
    assert protobuf.decode(envelope(version, kind, encode(ROOTS[(api_version, kind)], sample))) == {
        "apiVersion": version,
        "kind": kind,
        **sample,
    }


def test_schema_is_closed_and_json_names_are_unique() -> None:
    for type_name, table in MESSAGES.items():
        names: list[str] = []
        for name, kind, target, _, _ in table.values():
            assert kind in ("scalar", "message", "map", "inline"), type_name
            if kind in ("message", "inline"):
                assert target in MESSAGES or target in SPECIAL, f"{type_name} -> {target}"
            if kind == "inline":
                names.extend(n for n, *_ in MESSAGES[target].values())
            else:
                names.append(name)
        assert len(names) == len(set(names)), type_name
    for root in ROOTS.values():
        assert root in MESSAGES


def test_every_served_builtin_kind_has_a_root() -> None:
    served = {(f"{r.group}/{r.version}" if r.group else r.version, r.kind) for r in BUILTINS}
    missing = {gvk for gvk in served if gvk not in ROOTS}
    # No typed kubectl command creates these (kubectl applies them as JSON), so no protobuf root.
    assert missing == {
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "ReplicaSet"),
        ("v1", "PersistentVolumeClaim"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("apiregistration.k8s.io/v1", "APIService"),
    }


# -- representative objects --------------------------------------------------------------------

POD = yaml.safe_load(
    """
metadata:
  name: rich
  namespace: demo
  generateName: rich-
  uid: 0b6c1f7e-1111-2222-3333-444455556666
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2024-01-02T03:04:05Z"
  deletionTimestamp: "2024-01-02T03:05:05Z"
  deletionGracePeriodSeconds: 30
  labels: {app: rich, tier: web}
  annotations: {note: "hello \\u00e9"}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: rich-abc, uid: 9f9f, controller: true, blockOwnerDeletion: true}
  finalizers: [example.com/hold]
  managedFields:
  - manager: kubectl-create
    operation: Update
    apiVersion: v1
    time: "2024-01-02T03:04:05Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
spec:
  initContainers:
  - {name: init, image: busybox, command: [sh, -c, "true"], restartPolicy: Always, resources: {}}
  containers:
  - name: main
    image: nginx:1.25
    args: [--a, b]
    ports:
    - {name: http, containerPort: 8080, protocol: TCP}
    - {containerPort: 0}
    env:
    - {name: A, value: "1"}
    - name: FROMCM
      valueFrom: {configMapKeyRef: {name: cm, key: k, optional: true}}
    - name: MEM
      valueFrom: {resourceFieldRef: {containerName: main, resource: limits.memory, divisor: 1Mi}}
    envFrom:
    - {prefix: CM_, configMapRef: {name: cm}}
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: "1"}
    livenessProbe:
      httpGet: {path: /healthz, port: http, scheme: HTTP, httpHeaders: [{name: X, value: ""}]}
      initialDelaySeconds: 3
      terminationGracePeriodSeconds: 0
    readinessProbe:
      tcpSocket: {port: 8080}
    lifecycle:
      preStop: {sleep: {seconds: 5}}
    securityContext:
      runAsUser: 0
      privileged: false
      capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
      seccompProfile: {type: RuntimeDefault}
    volumeMounts:
    - {name: cfg, mountPath: /etc/cfg, readOnly: true}
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
  ephemeralContainers:
  - {name: dbg, image: busybox, targetContainerName: main, stdin: true, resources: {}}
  volumes:
  - name: cfg
    configMap: {name: cm, defaultMode: 420, items: [{key: a, path: a.txt, mode: 256}]}
  - name: cache
    emptyDir: {medium: Memory, sizeLimit: 1Gi}
  - name: proj
    projected:
      sources:
      - serviceAccountToken: {path: token, expirationSeconds: 3600}
      - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchExpressions: [{key: app, operator: In, values: [rich]}]}
  tolerations:
  - {key: k, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}
  securityContext: {fsGroup: 2000, supplementalGroups: [4000, 5000], sysctls: [{name: net.core.somaxconn, value: "1024"}]}
  dnsConfig: {options: [{name: ndots, value: "2"}, {name: edns0}]}
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 0
  automountServiceAccountToken: false
  priority: -5
  nodeSelector: {disktype: ssd}
  os: {name: linux}
status:
  phase: Running
  conditions:
  - {type: Ready, status: "True", lastProbeTime: null, lastTransitionTime: "2024-01-02T03:04:06Z"}
  podIPs: [{ip: 10.0.0.7}]
  startTime: "2024-01-02T03:04:05Z"
  containerStatuses:
  - name: main
    ready: true
    restartCount: 0
    image: nginx:1.25
    imageID: ""
    started: true
    state: {running: {startedAt: "2024-01-02T03:04:06Z"}}
    lastState: {}
"""
)


def test_pod_with_status_round_trips() -> None:
    assert round_trip("v1", "Pod", POD) == {"apiVersion": "v1", "kind": "Pod", **POD}


@pytest.mark.parametrize(
    ("api_version", "kind", "obj"),
    [
        (
            "apps/v1",
            "Deployment",
            {
                "metadata": {"name": "web", "creationTimestamp": None},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]},
                    },
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
                    "paused": True,
                    "progressDeadlineSeconds": 600,
                },
                "status": {
                    "conditions": [
                        {"type": "Available", "status": "True", "lastUpdateTime": "2024-01-02T03:04:05Z", "lastTransitionTime": None}
                    ]
                },
            },
        ),
        (
            "v1",
            "ConfigMap",
            {
                "metadata": {"name": "c"},
                "data": {"a": "1", "empty": ""},
                "binaryData": {"bin": base64.b64encode(b"\x00\xff\x10").decode()},
                "immutable": False,
            },
        ),
        (
            "v1",
            "Secret",
            {
                "metadata": {"name": "s"},
                "type": "Opaque",
                "data": {"k": base64.b64encode(b"\x00secret").decode(), "e": ""},
                "stringData": {"x": "y"},
            },
        ),
        (
            "v1",
            "Service",
            {
                "metadata": {"name": "svc"},
                "spec": {
                    "type": "NodePort",
                    "ports": [{"port": 80, "targetPort": 0, "nodePort": 30080, "protocol": "TCP", "appProtocol": "http"}],
                    "clusterIPs": ["None"],
                    "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
                    "internalTrafficPolicy": "Local",
                },
                "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ports": [{"port": 80, "protocol": "TCP"}]}]}},
            },
        ),
        (
            "v1",
            "Event",
            {
                "metadata": {"name": "e", "namespace": "demo"},
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "demo", "uid": "u", "fieldPath": "spec.containers{main}"},
                "reason": "Pulled",
                "message": "pulled",
                "source": {"component": "kubelet"},
                "firstTimestamp": "2024-01-02T03:04:05Z",
                "lastTimestamp": None,
                "count": 2,
                "type": "Normal",
                "eventTime": "2024-01-02T03:04:05.000123Z",
                "series": {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.500000Z"},
                "reportingComponent": "kubelet",
            },
        ),
        (
            "coordination.k8s.io/v1",
            "Lease",
            {
                "metadata": {"name": "l"},
                "spec": {
                    "holderIdentity": "me",
                    "leaseDurationSeconds": 15,
                    "renewTime": "2024-01-02T03:04:05.999999Z",
                    "leaseTransitions": 0,
                },
            },
        ),
        (
            "networking.k8s.io/v1",
            "Ingress",
            {
                "metadata": {"name": "ing"},
                "spec": {
                    "ingressClassName": "nginx",
                    "defaultBackend": {"resource": {"apiGroup": "example.com", "kind": "Bucket", "name": "b"}},
                    "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
                    "rules": [
                        {
                            "host": "a.example.com",
                            "http": {
                                "paths": [
                                    {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}
                                ]
                            },
                        }
                    ],
                },
                "status": {"loadBalancer": {}},
            },
        ),
        (
            "networking.k8s.io/v1",
            "NetworkPolicy",
            {
                "metadata": {"name": "np"},
                "spec": {
                    "podSelector": {},
                    "policyTypes": ["Ingress", "Egress"],
                    "ingress": [
                        {
                            "from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                            "ports": [{"protocol": "TCP", "port": "http", "endPort": 90}],
                        }
                    ],
                    "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"team": "a"}}}]}],
                },
            },
        ),
        (
            "rbac.authorization.k8s.io/v1",
            "Role",
            {"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"]}]},
        ),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            {"metadata": {"name": "cr"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}},
        ),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            {
                "metadata": {"name": "crb"},
                "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g"}],
                "roleRef": {"apiGroup": "", "kind": "ClusterRole", "name": "cr"},
            },
        ),
        ("v1", "Namespace", {"metadata": {"name": "ns"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        (
            "v1",
            "ServiceAccount",
            {"metadata": {"name": "sa"}, "secrets": [{"name": "tok"}], "imagePullSecrets": [{}], "automountServiceAccountToken": False},
        ),
        ("autoscaling/v1", "Scale", {"metadata": {"name": "web"}, "spec": {"replicas": 3}, "status": {"replicas": 0}}),
        (
            "v1",
            "DeleteOptions",
            {"gracePeriodSeconds": 0, "preconditions": {"uid": "u"}, "propagationPolicy": "Foreground", "dryRun": ["All"]},
        ),
        ("apps/v1", "DeleteOptions", {"orphanDependents": False}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_objects_round_trip(api_version: str, kind: str, obj: dict[str, Any]) -> None:
    assert round_trip(api_version, kind, obj) == {"apiVersion": api_version, "kind": kind, **obj}


# -- JSON shapes and omitted-vs-empty ----------------------------------------------------------


def _pod(raw_spec: bytes) -> dict[str, Any]:
    return protobuf.decode(envelope("v1", "Pod", _len(2, raw_spec)))


def test_time_drops_nanos_micro_time_keeps_microseconds_zero_time_is_null() -> None:
    seconds = int(datetime(2024, 2, 29, 23, 59, 58, tzinfo=UTC).timestamp())
    stamp = _key(1, 0) + _varint(seconds) + _key(2, 0) + _varint(987654321)
    meta = _len(8, stamp) + _len(9, b"")
    assert protobuf.decode(envelope("v1", "ConfigMap", _len(1, meta)))["metadata"] == {
        "creationTimestamp": "2024-02-29T23:59:58Z",
        "deletionTimestamp": None,
    }
    lease = protobuf.decode(envelope("coordination.k8s.io/v1", "Lease", _len(2, _len(4, stamp) + _len(3, _key(1, 0) + _varint(0)))))
    assert lease["spec"] == {"renewTime": "2024-02-29T23:59:58.987654Z", "acquireTime": "1970-01-01T00:00:00.000000Z"}
    before_epoch = _key(1, 0) + _varint(-86400)
    assert protobuf.decode(envelope("v1", "ConfigMap", _len(1, _len(8, before_epoch))))["metadata"] == {
        "creationTimestamp": "1969-12-31T00:00:00Z"
    }


def test_int_or_string_quantity_and_inline_members() -> None:
    port_int = _key(1, 0) + _varint(0) + _key(2, 0) + _varint(8080)
    port_str = _key(1, 0) + _varint(1) + _len(3, b"http")
    liveness = _len(1, _len(2, _len(1, b"/") + _len(2, port_str)))  # Probe.handler (inline ProbeHandler).httpGet
    readiness = _len(1, _len(3, _len(1, port_int)))  # Probe.handler.tcpSocket.port
    limits = _len(1, _len(1, b"cpu") + _len(2, _len(1, b"500m")))  # ResourceRequirements.limits entry
    container = _len(1, b"c") + _len(10, liveness) + _len(11, readiness) + _len(8, limits)
    volume = _len(1, b"v") + _len(2, _len(2, _len(1, b"Memory")))  # Volume.volumeSource (inline).emptyDir.medium
    env = _len(1, b"E") + _len(3, _len(3, _len(1, _len(1, b"cm")) + _len(2, b"k")))  # valueFrom.configMapKeyRef{inline name, key}
    decoded = _pod(_len(2, container + _len(7, env)) + _len(1, volume))["spec"]
    assert decoded["containers"] == [
        {
            "name": "c",
            "livenessProbe": {"httpGet": {"path": "/", "port": "http"}},
            "readinessProbe": {"tcpSocket": {"port": 8080}},
            "resources": {"limits": {"cpu": "500m"}},
            "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}],
        }
    ]
    assert decoded["volumes"] == [{"name": "v", "emptyDir": {"medium": "Memory"}}]


def test_gogo_zero_values_of_non_pointer_omitempty_scalars_are_dropped() -> None:
    # hostNetwork false (non-pointer, omitempty), restartPolicy "" (omitempty), priority 0 (pointer),
    # automountServiceAccountToken false (pointer), activeDeadlineSeconds 0 (pointer).
    spec = _key(11, 0) + _varint(0) + _len(3, b"") + _key(25, 0) + _varint(0) + _key(21, 0) + _varint(0) + _key(5, 0) + _varint(0)
    assert _pod(spec)["spec"] == {"priority": 0, "automountServiceAccountToken": False, "activeDeadlineSeconds": 0}


def test_non_omitempty_zero_scalars_are_kept_absent_fields_stay_absent() -> None:
    container = _len(1, b"") + _len(6, _key(3, 0) + _varint(0))  # name "" (json:"name"), ports[0].containerPort 0
    assert _pod(_len(2, container))["spec"] == {"containers": [{"name": "", "ports": [{"containerPort": 0}]}]}
    assert protobuf.decode(envelope("v1", "Pod", b"")) == {"apiVersion": "v1", "kind": "Pod"}
    assert round_trip("v1", "ConfigMap", {"metadata": {}}, gogo=False) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}


def test_empty_message_values_stay_objects() -> None:
    assert _pod(_len(2, _len(1, b"c") + _len(8, b"")) + _len(14, b""))["spec"] == {
        "containers": [{"name": "c", "resources": {}}],
        "securityContext": {},
    }


def test_negative_and_packed_integers() -> None:
    packed = _varint(1) + _varint(4000) + _varint(-2)
    security = _len(4, packed) + _key(2, 0) + _varint(-7)  # supplementalGroups packed, runAsUser -7
    spec = _len(14, security) + _key(25, 0) + _varint(-5)  # priority -5 (int32 as 10-byte varint)
    assert _pod(spec)["spec"] == {"securityContext": {"supplementalGroups": [1, 4000, -2], "runAsUser": -7}, "priority": -5}


def test_unknown_fields_are_skipped_and_last_value_wins() -> None:
    unknown = _key(999, 0) + _varint(5) + _len(998, b"xyz") + _key(997, 1) + b"\x00" * 8 + _key(996, 5) + b"\x00" * 4
    meta = unknown + _len(1, b"first") + _len(1, b"second")
    assert protobuf.decode(envelope("v1", "ConfigMap", _len(1, meta) + unknown)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "second"},
    }


def test_invalid_utf8_is_replaced_like_gos_json_encoder() -> None:
    decoded = protobuf.decode(envelope("v1", "ConfigMap", _len(2, _len(1, b"k") + _len(2, b"a\xffb"))))
    assert decoded["data"] == {"k": "a\ufffdb"}


def test_protobuf_content_type_inside_the_envelope_is_accepted() -> None:
    body = envelope("v1", "Namespace", _len(1, _len(1, b"ns")), content_type=protobuf.MEDIA_TYPE)
    assert protobuf.decode(body) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}


# -- malformed input ---------------------------------------------------------------------------

CONFIGMAP = _len(1, _len(1, b"c"))


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"kind": "ConfigMap"}', "does not appear to be a protobuf message"),
        (b"", "does not appear to be a protobuf message"),
        (protobuf.MAGIC + b"\x0a", "unexpected end of varint"),
        (protobuf.MAGIC + b"\x0a\x80", "unexpected end of varint"),
        (protobuf.MAGIC + b"\x0a\x05\x0a\x02v1", "runs past the end"),
        (protobuf.MAGIC + b"\x0b", "unsupported wire type 3"),
        (protobuf.MAGIC + b"\x02\x00", "illegal field number 0"),
        (protobuf.MAGIC + b"\x08\x01", "expected a length-delimited field"),
        (protobuf.MAGIC + b"\x0a" + b"\xff" * 11, "varint overflow"),
        (envelope("v1", "Widget", CONFIGMAP), 'no kind "Widget" is registered for version "v1"'),
        (envelope("apps/v1beta1", "Deployment", CONFIGMAP), 'no kind "Deployment" is registered for version "apps/v1beta1"'),
        (envelope("v1", "", CONFIGMAP), "Object 'Kind' is missing"),
        (envelope("v1", "ConfigMap", CONFIGMAP, encoding="gzip"), "unsupported content encoding 'gzip'"),
        (envelope("v1", "ConfigMap", CONFIGMAP, content_type="application/json"), "unsupported content type 'application/json'"),
        (envelope("v1", "ConfigMap", _len(1, _key(1, 0) + _varint(3))), "expected a string, got wire type 0"),
        (envelope("v1", "ConfigMap", _key(1, 0) + _varint(3)), "expected a message, got wire type 0"),
        (envelope("apps/v1", "Deployment", _len(2, _len(1, b"\x01"))), "expected a varint (int32), got wire type 2"),
        (envelope("v1", "ConfigMap", _len(1, _len(17, _len(7, _len(1, b"{not json"))))), "FieldsV1 does not hold JSON"),
        (envelope("v1", "Service", _len(2, _len(1, _len(4, _key(1, 0) + _varint(2))))), "impossible IntOrString.Type 2"),
        (envelope("v1", "ConfigMap", _len(2, _len(1, b"k") + _key(2, 0) + _varint(1))), "expected a string, got wire type 0"),
        (envelope("v1", "ConfigMap", _len(1, _len(8, _key(1, 0) + _varint(1 << 62)))), "timestamp out of range"),
        (envelope("v1", "ConfigMap", _len(1, _key(5, 6))), "unsupported wire type 6"),
    ],
)
def test_malformed_bodies_are_bad_requests(body: bytes, fragment: str) -> None:
    with pytest.raises(StatusError) as caught:
        protobuf.decode(body)
    assert caught.value.code == 400
    assert caught.value.reason == "BadRequest"
    assert fragment in caught.value.message


def test_expect_kind_rejects_other_kinds() -> None:
    options = envelope("v1", "DeleteOptions", _len(4, b"Orphan"))
    assert protobuf.decode(options, expect_kind="DeleteOptions") == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Orphan",
    }
    with pytest.raises(StatusError) as caught:
        protobuf.decode(envelope("v1", "ConfigMap", CONFIGMAP), expect_kind="DeleteOptions")
    assert caught.value.code == 400
    assert 'expected a DeleteOptions, got kind "ConfigMap"' in caught.value.message
