"""kubectl's typed-client writes, which send ``application/vnd.kubernetes.protobuf`` bodies.

``kubectl create deployment|configmap|secret|namespace|serviceaccount|role|rolebinding|
clusterrole|clusterrolebinding|service|ingress`` and ``kubectl debug --copy-to`` build Go objects
and POST them as protobuf (``Accept: application/vnd.kubernetes.protobuf,application/json``).

Covers:
- the request really is protobuf (``-v=8`` headers), the answer is 201 with a JSON body (devcluster
  never answers protobuf) and kubectl accepts it;
- each created object, read back with ``get -o json``, carries what kubectl built: the same fields
  as kubectl's own JSON of the object (``--dry-run=client -o json``) plus server defaults:
  Deployment (replicas, selector, template, image; ``--replicas 0`` stays 0 rather than being
  defaulted to 1), ConfigMap data, Secret data (base64 of the literal values) and type, Namespace
  (phase Active), ServiceAccount, Role rules, RoleBinding subjects/roleRef, ClusterRole,
  ClusterRoleBinding, Service ports (int and named targetPort), Ingress rules/backends/TLS;
- follow-ups on a protobuf-created Deployment: ``scale`` and ``set image`` (patches) take effect;
- ``kubectl debug --copy-to``: a rich Pod (read as JSON, re-sent as protobuf) is copied with an
  identical spec apart from the added debug container;
- a protobuf ``autoscaling/v1`` Scale PUT to ``deployments/scale`` sets the replicas (JSON answer);
- a protobuf ``DeleteOptions`` body (as client-go typed clients send) is honoured: a UID
  precondition that does not match is a 409 Conflict, a matching one deletes;
- malformed protobuf bodies are 400 BadRequest Status answers in JSON.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.clusters import DevclusterProcess
from tests.support import Kubectl

# devcluster's own conformance suite; tests/fidelity holds it against kube
pytestmark = [pytest.mark.devcluster_only, pytest.mark.kubectl]

PROTOBUF = "application/vnd.kubernetes.protobuf"


def _exchanges(stderr: str) -> list[dict[str, Any]]:
    """(request headers, response status, response headers) per round trip in ``-v=8`` output."""
    exchanges: list[dict[str, Any]] = []
    section = ""
    for line in stderr.splitlines():
        text = line.split("] ", 1)[1] if "] " in line else line
        if text.startswith("Request Headers:"):
            exchanges.append({"request": {}, "status": 0, "response": {}})
            section = "request"
        elif text.startswith("Response Status:") and exchanges:
            exchanges[-1]["status"] = int(text.split()[2])
            section = "response"
        elif text.startswith("    ") and ": " in text and exchanges and section:
            name, value = text.strip().split(": ", 1)
            exchanges[-1][section][name.lower()] = value
        elif not text.startswith("Response Headers:"):
            section = ""
    return exchanges


def create_via_protobuf(kubectl: Kubectl, *args: str) -> None:
    """Run a kubectl create-like command; assert it POSTed protobuf and got 201 + JSON back."""
    result = kubectl.run("-v=8", *args)
    posts = [e for e in _exchanges(result.stderr) if e["request"].get("content-type") == PROTOBUF]
    assert posts, f"kubectl {' '.join(args)} sent no protobuf body:\n{result.stderr[-3000:]}"
    for exchange in posts:
        assert exchange["request"]["accept"].startswith(PROTOBUF)
        assert exchange["status"] == 201
        assert exchange["response"]["content-type"] == "application/json"


def get_json(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(kubectl.run("get", *args, "-o", "json").stdout)
    return got


def dry_run(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    printed: dict[str, Any] = json.loads(kubectl.run(*args, "--dry-run=client", "-o", "json").stdout)
    return printed


def test_create_deployment_then_scale_and_set_image(kubectl: Kubectl, namespace: str) -> None:
    create_via_protobuf(
        kubectl, "create", "deployment", "web", "--image", "nginx:1.25", "--replicas", "2", "--port", "8080", "-n", namespace
    )
    deployment = get_json(kubectl, "deployment", "web", "-n", namespace, "--show-managed-fields")
    assert deployment["metadata"]["labels"] == {"app": "web"}
    assert isinstance(deployment["metadata"]["creationTimestamp"], str)
    assert deployment["metadata"]["generation"] == 1
    # entries are sorted like kube's (operation, time, manager): the controller's status entry may come first
    assert ("kubectl-create", "Update", None) in [
        (m["manager"], m["operation"], m.get("subresource")) for m in deployment["metadata"]["managedFields"]
    ]
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    [container] = spec["template"]["spec"]["containers"]
    assert (container["name"], container["image"], container["ports"]) == (
        "nginx",
        "nginx:1.25",
        [{"containerPort": 8080, "protocol": "TCP"}],
    )
    assert spec["strategy"]["type"] == "RollingUpdate"  # defaulted server-side from the empty strategy sent

    kubectl.run("scale", "deployment", "web", "--replicas", "3", "-n", namespace)
    assert get_json(kubectl, "deployment", "web", "-n", namespace)["spec"]["replicas"] == 3
    kubectl.run("set", "image", "deployment/web", "nginx=nginx:1.26", "-n", namespace)
    after = get_json(kubectl, "deployment", "web", "-n", namespace)
    assert [c["image"] for c in after["spec"]["template"]["spec"]["containers"]] == ["nginx:1.26"]
    assert after["metadata"]["generation"] == 3


def test_create_deployment_with_zero_replicas_keeps_zero(kubectl: Kubectl, namespace: str) -> None:
    create_via_protobuf(
        kubectl, "create", "deployment", "idle", "--image", "busybox", "--replicas", "0", "-n", namespace, "--", "sleep", "3600"
    )
    spec = get_json(kubectl, "deployment", "idle", "-n", namespace)["spec"]
    assert spec["replicas"] == 0
    assert spec["template"]["spec"]["containers"][0]["command"] == ["sleep", "3600"]


def test_create_configmap_and_secrets(kubectl: Kubectl, namespace: str) -> None:
    create_via_protobuf(
        kubectl, "create", "configmap", "settings", "--from-literal", "a=1", "--from-literal", "greeting=héllo wörld", "-n", namespace
    )
    assert get_json(kubectl, "configmap", "settings", "-n", namespace)["data"] == {"a": "1", "greeting": "héllo wörld"}

    create_via_protobuf(
        kubectl, "create", "secret", "generic", "creds", "--from-literal", "user=admin", "--from-literal", "pass=s3cr3t!", "-n", namespace
    )
    secret = get_json(kubectl, "secret", "creds", "-n", namespace)
    assert secret["type"] == "Opaque"
    assert {k: base64.b64decode(v).decode() for k, v in secret["data"].items()} == {"user": "admin", "pass": "s3cr3t!"}

    create_via_protobuf(
        kubectl,
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server",
        "r.example.com",
        "--docker-username",
        "u",
        "--docker-password",
        "p",
        "-n",
        namespace,
    )
    pull = get_json(kubectl, "secret", "pull", "-n", namespace)
    assert pull["type"] == "kubernetes.io/dockerconfigjson"
    config = json.loads(base64.b64decode(pull["data"][".dockerconfigjson"]))
    assert config["auths"]["r.example.com"]["username"] == "u"


def test_create_namespace_and_serviceaccount(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}-extra"
    create_via_protobuf(kubectl, "create", "namespace", name)
    try:
        created = get_json(kubectl, "namespace", name)
        assert created["metadata"]["name"] == name
        assert created["status"]["phase"] == "Active"
    finally:
        kubectl.run("delete", "namespace", name, "--wait=false")
    create_via_protobuf(kubectl, "create", "serviceaccount", "bot", "-n", namespace)
    account = get_json(kubectl, "serviceaccount", "bot", "-n", namespace)
    assert (account["metadata"]["name"], account["metadata"]["namespace"]) == ("bot", namespace)


def test_create_role_and_rolebinding(kubectl: Kubectl, namespace: str) -> None:
    role_args = (
        "create",
        "role",
        "reader",
        "--verb",
        "get,list,watch",
        "--resource",
        "pods,deployments.apps",
        "--resource-name",
        "web",
        "-n",
        namespace,
    )
    create_via_protobuf(kubectl, *role_args)
    rules = get_json(kubectl, "role", "reader", "-n", namespace)["rules"]
    assert rules == dry_run(kubectl, *role_args)["rules"]
    assert {(tuple(r["apiGroups"]), tuple(r["resources"])) for r in rules} == {(("",), ("pods",)), (("apps",), ("deployments",))}
    assert all(r["verbs"] == ["get", "list", "watch"] and r["resourceNames"] == ["web"] for r in rules)

    binding_args = (
        "create",
        "rolebinding",
        "readers",
        "--role",
        "reader",
        "--user",
        "alice",
        "--group",
        "devs",
        "--serviceaccount",
        f"{namespace}:bot",
        "-n",
        namespace,
    )
    create_via_protobuf(kubectl, *binding_args)
    binding = get_json(kubectl, "rolebinding", "readers", "-n", namespace)
    expected = dry_run(kubectl, *binding_args)
    assert binding["roleRef"] == expected["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    assert binding["subjects"] == expected["subjects"]
    assert {(s["kind"], s["name"], s.get("namespace")) for s in binding["subjects"]} == {
        ("User", "alice", None),
        ("Group", "devs", None),
        ("ServiceAccount", "bot", namespace),
    }


def test_create_clusterrole_and_clusterrolebinding(kubectl: Kubectl, namespace: str) -> None:
    role, binding = f"{namespace}-viewer", f"{namespace}-viewers"
    try:
        create_via_protobuf(
            kubectl,
            "create",
            "clusterrole",
            role,
            "--verb",
            "get",
            "--non-resource-url",
            "/healthz",
            "--verb",
            "get",
            "--resource",
            "namespaces",
        )
        rules = get_json(kubectl, "clusterrole", role)["rules"]
        assert {"verbs": ["get"], "nonResourceURLs": ["/healthz"]} in rules
        assert {"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]} in rules
        create_via_protobuf(kubectl, "create", "clusterrolebinding", binding, "--clusterrole", role, "--user", "bob")
        created = get_json(kubectl, "clusterrolebinding", binding)
        assert created["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}
        assert created["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]
    finally:
        kubectl.run("delete", "clusterrolebinding", binding, "--ignore-not-found")
        kubectl.run("delete", "clusterrole", role, "--ignore-not-found")


def test_create_service_and_ingress(kubectl: Kubectl, namespace: str) -> None:
    create_via_protobuf(kubectl, "create", "service", "clusterip", "web", "--tcp", "80:8080", "--tcp", "443:https", "-n", namespace)
    service = get_json(kubectl, "service", "web", "-n", namespace)
    assert service["spec"]["selector"] == {"app": "web"}
    assert [(p["name"], p["port"], p["targetPort"], p["protocol"]) for p in service["spec"]["ports"]] == [
        ("80-8080", 80, 8080, "TCP"),
        ("443-https", 443, "https", "TCP"),
    ]
    assert service["spec"]["type"] == "ClusterIP"

    ingress_args = (
        "create",
        "ingress",
        "site",
        "--class",
        "nginx",
        "--rule",
        "a.example.com/api*=web:80,tls=site-tls",
        "--default-backend",
        "web:https",
        "-n",
        namespace,
    )
    create_via_protobuf(kubectl, *ingress_args)
    ingress = get_json(kubectl, "ingress", "site", "-n", namespace)["spec"]
    expected = dry_run(kubectl, *ingress_args)["spec"]
    assert ingress == expected
    assert ingress["rules"][0]["http"]["paths"][0] == {
        "path": "/api",
        "pathType": "Prefix",
        "backend": {"service": {"name": "web", "port": {"number": 80}}},
    }
    assert ingress["defaultBackend"] == {"service": {"name": "web", "port": {"name": "https"}}}
    assert ingress["tls"] == [{"hosts": ["a.example.com"], "secretName": "site-tls"}]


RICH_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: rich
  labels: {app: rich}
  annotations: {note: copied as protobuf}
spec:
  initContainers:
  - {name: init, image: busybox, command: [sh, -c, "true"], restartPolicy: Always, resources: {}}
  containers:
  - name: main
    image: nginx:1.25
    args: ["--a", "b"]
    ports:
    - {name: http, containerPort: 8080, protocol: TCP}
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
      limits: {cpu: "1", memory: 128Mi}
    livenessProbe:
      httpGet: {path: /healthz, port: http, scheme: HTTP, httpHeaders: [{name: X, value: "v"}]}
      initialDelaySeconds: 3
      terminationGracePeriodSeconds: 0
    readinessProbe:
      tcpSocket: {port: 8080}
    startupProbe:
      exec: {command: [cat, /tmp/ok]}
    lifecycle:
      preStop: {sleep: {seconds: 5}}
    securityContext:
      runAsUser: 0
      allowPrivilegeEscalation: false
      capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
      seccompProfile: {type: RuntimeDefault}
    volumeMounts:
    - {name: cfg, mountPath: /etc/cfg, readOnly: true}
    - {name: cache, mountPath: /cache}
  volumes:
  - name: cfg
    configMap: {name: cm, defaultMode: 420, items: [{key: a, path: a.txt, mode: 256}]}
  - name: cache
    emptyDir: {medium: Memory, sizeLimit: 1Gi}
  - name: proj
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken: {path: token, expirationSeconds: 3600, audience: api}
      - downwardAPI: {items: [{path: labels, fieldRef: {apiVersion: v1, fieldPath: metadata.labels}}]}
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchExpressions: [{key: app, operator: In, values: [rich]}]}
  tolerations:
  - {key: k, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}
  dnsPolicy: None
  dnsConfig: {nameservers: [1.1.1.1], options: [{name: ndots, value: "2"}, {name: edns0}]}
  hostAliases:
  - {ip: 10.0.0.1, hostnames: [foo]}
  securityContext: {fsGroup: 2000, supplementalGroups: [4000, 5000], sysctls: [{name: net.core.somaxconn, value: "1024"}]}
  nodeSelector: {disktype: ssd}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  priority: 0
  os: {name: linux}
  restartPolicy: OnFailure
"""


def test_debug_copy_resends_a_rich_pod_as_protobuf(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "-f", "-", "-n", namespace, input_text=RICH_POD)
    original = get_json(kubectl, "pod", "rich", "-n", namespace)
    create_via_protobuf(kubectl, "debug", "rich", "--copy-to", "rich-copy", "--image", "busybox", "--container", "dbg", "-n", namespace)
    copy = get_json(kubectl, "pod", "rich-copy", "-n", namespace)
    assert copy["metadata"]["annotations"] == {"note": "copied as protobuf"}  # the legacy debug profile drops labels
    *containers, debug = copy["spec"]["containers"]
    assert (debug["name"], debug["image"]) == ("dbg", "busybox")
    assert {**copy["spec"], "containers": containers} == original["spec"]


# -- raw protobuf requests -----------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes([*out, n])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + _field(1, _field(1, api_version.encode()) + _field(2, kind.encode())) + _field(2, raw)


def _request(cluster: DevclusterProcess, method: str, path: str, body: bytes) -> tuple[int, str, dict[str, Any]]:
    request = urllib.request.Request(
        cluster.url + path, data=body, method=method, headers={"Content-Type": PROTOBUF, "Accept": f"{PROTOBUF}, application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], json.loads(e.read())


def test_protobuf_scale_update(kubectl: Kubectl, namespace: str, devcluster: DevclusterProcess) -> None:
    kubectl.run("create", "deployment", "web", "--image", "nginx", "-n", namespace)
    scale = _field(1, _field(1, b"web") + _field(3, namespace.encode())) + _field(2, b"\x08\x04")  # metadata, spec.replicas=4
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    status, content_type, body = _request(devcluster, "PUT", path, _envelope("autoscaling/v1", "Scale", scale))
    assert (status, content_type, body["kind"], body["apiVersion"], body["spec"]) == (
        200,
        "application/json",
        "Scale",
        "autoscaling/v1",
        {"replicas": 4},
    )
    assert get_json(kubectl, "deployment", "web", "-n", namespace)["spec"]["replicas"] == 4


def test_protobuf_delete_options_preconditions(kubectl: Kubectl, namespace: str, devcluster: DevclusterProcess) -> None:
    kubectl.run("create", "configmap", "doomed", "-n", namespace)
    uid = get_json(kubectl, "configmap", "doomed", "-n", namespace)["metadata"]["uid"]
    path = f"/api/v1/namespaces/{namespace}/configmaps/doomed"

    wrong = _envelope("v1", "DeleteOptions", _field(2, _field(1, b"not-the-uid")))  # preconditions.uid
    status, content_type, body = _request(devcluster, "DELETE", path, wrong)
    assert (status, content_type, body["reason"]) == (409, "application/json", "Conflict")
    assert "the UID in the precondition (not-the-uid) does not match the UID in record" in body["message"]

    right = _envelope("v1", "DeleteOptions", _field(2, _field(1, uid.encode())) + _field(4, b"Background"))
    status, content_type, body = _request(devcluster, "DELETE", path, right)
    assert (status, content_type, body["status"]) == (200, "application/json", "Success")
    assert kubectl.run("get", "configmap", "doomed", "-n", namespace, check=False).returncode == 1


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"kind":"ConfigMap"}', "does not appear to be a protobuf message"),
        (_envelope("v1", "Widget", b""), 'no kind "Widget" is registered for version "v1"'),
        (_envelope("v1", "ConfigMap", b"\x0a\x09\x0a\x01"), "runs past the end"),
    ],
)
def test_malformed_protobuf_bodies_are_bad_requests(devcluster: DevclusterProcess, namespace: str, body: bytes, fragment: str) -> None:
    status, content_type, answer = _request(devcluster, "POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert (status, content_type, answer["kind"], answer["reason"]) == (400, "application/json", "Status", "BadRequest")
    assert fragment in answer["message"]
