"""kubectl v1.32 (the binary on PATH) as an independent client of devcluster.

Covers:
- ``apply -f crds/`` on a fresh cluster: both CRDs "created", Established; a second apply says "unchanged";
- ``apply -f`` of the sample manifests (namespace rewritten): Secret, Darkrooms and Task created; a second
  apply reports the custom resources "unchanged" (and the stringData Secret "configured", as kubectl does
  against kube-apiserver);
- ``get dr`` prints the CRD's printer columns (NAME VERSION TYPE READY AGE) and a row per object; ``-o wide``
  adds the priority-1 DOMAINS column; status fields show up in READY/DOMAINS; ``-o jsonpath``; ``-l``;
- ``get dr -w`` streams a new row when a Darkroom is patched;
- ``patch`` with ``--type merge`` and ``--type json`` on a Darkroom, the default strategic patch on a
  Deployment (containers merge by name) and a ConfigMap; a strategic patch on a custom resource is refused
  with 415 and the accepted media types;
- ``apply --server-side``: a second manager changing an owned field gets a conflict naming the field and
  its manager; ``--force-conflicts`` takes the field over;
- client-side ``apply`` of a modified file: "configured", the change is visible, a label dropped from the
  file is removed (three-way merge via last-applied-configuration);
- ``delete`` waits until the object is gone (blocked by a finalizer until it is removed); ``get`` of a
  missing object exits 1 with ``Error from server (NotFound)``;
- ``create -f`` with an unknown field fails with ``unknown field "spec.bogus"`` (kubectl sends
  fieldValidation=Strict) and creates nothing; ``--validate=false`` creates it with the field pruned;
- ``explain dr.spec`` shows the schema's fields; ``api-resources`` lists darkrooms with SHORTNAMES dr;
- ``get ns``, ``get deploy``, ``get events``; ``wait --for=condition=Available`` on a Deployment;
- ``label`` / ``annotate``.
"""

from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from tests.clusters import ROOT
from tests.support import Kubectl, wait_for

# devcluster's own conformance suite; tests/fidelity holds it against kube
pytestmark = [pytest.mark.devcluster_only, pytest.mark.kubectl]

DR = "darkroom.deployments.example.com"


def darkroom_yaml(name: str, *, version: str = "v0.1.0", replicas: int = 1, extra_spec: str = "", metadata: str = "") -> str:
    return f"""apiVersion: deployments.example.com/v1
kind: Darkroom
metadata:
  name: {name}
{metadata}spec:
  version: {version}
  replicas: {replicas}
  source:
    type: WebFolder
    baseUrl: https://example.com/images
  subDomains: [images]
{extra_spec}"""


DEPLOYMENT_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.0
      - name: side
        image: busybox:1
"""


def table(stdout: str) -> tuple[list[str], list[list[str]]]:
    """Split kubectl's column output into header and rows (columns are separated by 2+ spaces)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    split = [re.split(r"\s{2,}", line.strip()) for line in lines]
    return split[0], split[1:]


def column_cells(stdout: str, name: str) -> dict[str, str]:
    """{row NAME: text under column ``name``}, by the column's character offset in the header (cells may be empty)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = lines[0]
    start = header.index(name)
    following = [m.start() for m in re.finditer(r"\S+", header) if m.start() > start]
    end = following[0] if following else None
    return {line.split()[0]: line[start:end].strip() for line in lines[1:]}


class LineReader:
    """Reads a process's stdout on a thread, so the test can wait for lines with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def read_until(self, predicate: Callable[[str], bool], timeout_s: float = 10.0) -> list[str]:
        """Lines read until one satisfies ``predicate`` (included); fails at the deadline or EOF."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching line within {timeout_s}s; got {seen}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"stream ended before a matching line; got {seen}; stderr: {stderr}")
            seen.append(line)
            if predicate(line):
                return seen

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.thread.join(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def apply_samples(kubectl: Kubectl, namespace: str, tmp_path: Path) -> Path:
    """The sample manifests with their namespace rewritten, applied client-side."""
    folder = tmp_path / "samples"
    folder.mkdir()
    for path in sorted((ROOT / "crds" / "samples").glob("*.yaml")):
        text = path.read_text()
        assert "namespace: default" in text
        (folder / path.name).write_text(text.replace("namespace: default", f"namespace: {namespace}"))
    return folder


# -- CRDs and samples ------------------------------------------------------------------------


def test_apply_crds_creates_then_unchanged(fresh_devcluster: object, tmp_path: Path) -> None:
    cluster = fresh_devcluster()  # type: ignore[operator]
    kubectl = Kubectl(cluster.kubeconfig, tmp_path / "cache")
    first = kubectl.run("apply", "-f", "crds/")
    assert sorted(first.stdout.splitlines()) == [
        "customresourcedefinition.apiextensions.k8s.io/darkrooms.deployments.example.com created",
        "customresourcedefinition.apiextensions.k8s.io/postgresqls.database.db.example.com created",
        "customresourcedefinition.apiextensions.k8s.io/tasks.example.example.com created",
    ]
    kubectl.run(
        "wait",
        "--for=condition=Established",
        "crd/darkrooms.deployments.example.com",
        "crd/tasks.example.example.com",
        "crd/postgresqls.database.db.example.com",
        "--timeout=20s",
    )
    second = kubectl.run("apply", "-f", "crds/")
    assert sorted(second.stdout.splitlines()) == [
        "customresourcedefinition.apiextensions.k8s.io/darkrooms.deployments.example.com unchanged",
        "customresourcedefinition.apiextensions.k8s.io/postgresqls.database.db.example.com unchanged",
        "customresourcedefinition.apiextensions.k8s.io/tasks.example.example.com unchanged",
    ]
    header, rows = table(kubectl.run("get", "crd").stdout)
    assert header == ["NAME", "CREATED AT"]
    assert [r[0] for r in rows] == [
        "darkrooms.deployments.example.com",
        "postgresqls.database.db.example.com",
        "tasks.example.example.com",
    ]


def test_apply_samples_and_get_tables(kubectl: Kubectl, crds_installed: None, namespace: str, tmp_path: Path) -> None:
    folder = apply_samples(kubectl, namespace, tmp_path)
    first = kubectl.run("apply", "-f", str(folder))
    assert sorted(first.stdout.splitlines()) == sorted(
        [
            "secret/s3-demo-credentials created",
            f"{DR}/s3-demo created",
            f"{DR}/webfolder-demo created",
            "postgresql.database.db.example.com/shop-db created",
            "task.example.example.com/write-release-notes created",
        ]
    )
    second = kubectl.run("apply", "-f", str(folder))
    # stringData is write-only (the server stores data), so kubectl's three-way patch is never empty for
    # that Secret and it says "configured" against kube-apiserver too (kubernetes/kubernetes#87736).
    assert sorted(second.stdout.splitlines()) == sorted(
        [
            "secret/s3-demo-credentials configured",
            f"{DR}/s3-demo unchanged",
            f"{DR}/webfolder-demo unchanged",
            "postgresql.database.db.example.com/shop-db unchanged",
            "task.example.example.com/write-release-notes unchanged",
        ]
    )
    header, rows = table(kubectl.run("get", "pg", "-n", namespace).stdout)
    assert header == ["NAME", "VERSION", "PHASE", "READY", "AGE"]
    assert [r[:2] for r in rows] == [["shop-db", "17"]]
    secret = kubectl.run("get", "secret", "s3-demo-credentials", "-n", namespace, "-o", "jsonpath={.data.accessKey}").stdout
    assert secret == "UkVQTEFDRS1NRQ=="  # base64("REPLACE-ME")

    out = kubectl.run("get", "dr", "-n", namespace).stdout
    header, rows = table(out)
    assert header == ["NAME", "VERSION", "TYPE", "READY", "AGE"]
    assert [r[:3] for r in rows] == [["s3-demo", "v0.1.0", "S3"], ["webfolder-demo", "v0.1.0", "WebFolder"]]
    assert column_cells(out, "READY") == {"s3-demo": "", "webfolder-demo": ""}

    wide = kubectl.run("get", "dr", "-n", namespace, "-o", "wide").stdout
    header, rows = table(wide)
    assert header == ["NAME", "VERSION", "TYPE", "READY", "DOMAINS", "AGE"]
    assert len(rows) == 2

    status = (
        '{"status":{"domains":["images.example.com","cdn.example.com"],"conditions":[{"type":"Ready","status":"True",'
        '"reason":"Serving","message":"all replicas serve","lastTransitionTime":"2024-01-01T00:00:00Z"}]}}'
    )
    kubectl.run("patch", "dr", "webfolder-demo", "-n", namespace, "--subresource=status", "--type", "merge", "-p", status)
    wide = kubectl.run("get", "dr", "-n", namespace, "-o", "wide").stdout
    assert column_cells(wide, "READY") == {"s3-demo": "", "webfolder-demo": "True"}
    # a string column shows a non-string JSONPath result as its JSON (as kube 1.37's apiextensions does)
    assert column_cells(wide, "DOMAINS") == {"s3-demo": "", "webfolder-demo": '["images.example.com","cdn.example.com"]'}

    names = kubectl.run("get", "dr", "-n", namespace, "-o", "jsonpath={.items[*].metadata.name}").stdout
    assert names == "s3-demo webfolder-demo"
    tasks = kubectl.run("get", "tasks", "-n", namespace, "-o", "name").stdout.split()
    assert tasks == ["task.example.example.com/write-release-notes"]


# -- watch -----------------------------------------------------------------------------------


def test_get_watch_streams_changes(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("watched"))
    reader = LineReader(kubectl.popen("get", "dr", "-w", "-n", namespace))
    try:
        initial = reader.read_until(lambda line: line.startswith("watched"))
        assert initial[0].split() == ["NAME", "VERSION", "TYPE", "READY", "AGE"]
        assert initial[-1].split()[:3] == ["watched", "v0.1.0", "WebFolder"]
        kubectl.run("patch", "dr", "watched", "-n", namespace, "--type", "merge", "-p", '{"spec":{"version":"v0.2.0"}}')
        changed = reader.read_until(lambda line: "v0.2.0" in line)
        assert changed[-1].split()[:3] == ["watched", "v0.2.0", "WebFolder"]
        assert not any(line.startswith("NAME") for line in changed)  # headers only once
        kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("second", version="v9"))
        added = reader.read_until(lambda line: line.startswith("second"))
        assert added[-1].split()[:3] == ["second", "v9", "WebFolder"]
    finally:
        reader.close()


# -- patch -----------------------------------------------------------------------------------


def test_patch_merge_and_json_on_custom_resource(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("p"))
    out = kubectl.run("patch", "dr", "p", "-n", namespace, "--type", "merge", "-p", '{"spec":{"replicas":3,"subDomains":["a","b"]}}')
    assert out.stdout.strip() == f"{DR}/p patched"
    out = kubectl.run(
        "patch",
        "dr",
        "p",
        "-n",
        namespace,
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/version","value":"v2"},{"op":"add","path":"/spec/subDomains/-","value":"c"}]',
    )
    assert out.stdout.strip() == f"{DR}/p patched"
    got = kubectl.run(
        "get", "dr", "p", "-n", namespace, "-o", "jsonpath={.spec.version} {.spec.replicas} {.spec.subDomains} {.metadata.generation}"
    )
    assert got.stdout == 'v2 3 ["a","b","c"] 3'
    # a patch that changes nothing: kubectl reports "(no change)"
    same = kubectl.run("patch", "dr", "p", "-n", namespace, "--type", "merge", "-p", '{"spec":{"replicas":3}}')
    assert same.stdout.strip() == f"{DR}/p patched (no change)"
    # invalid JSON patch test op → 422 from the server
    failed = kubectl.run(
        "patch", "dr", "p", "-n", namespace, "--type", "json", "-p", '[{"op":"test","path":"/spec/version","value":"nope"}]', check=False
    )
    assert failed.returncode == 1
    # kube-apiserver answers a generic 422 Invalid that does not carry the patch library's text
    assert failed.stderr.strip() == "The request is invalid: the server rejected our request due to an error in our request"
    # strategic merge patch is not accepted for custom resources
    strategic = kubectl.run("patch", "dr", "p", "-n", namespace, "-p", '{"spec":{"replicas":1}}', check=False)
    assert strategic.returncode == 1
    assert "application/strategic-merge-patch+json is not supported by deployments.example.com/v1, Kind=Darkroom" in strategic.stderr
    assert (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml" in strategic.stderr
    )


def test_strategic_patch_on_builtins(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=DEPLOYMENT_YAML)
    out = kubectl.run(
        "patch",
        "deploy",
        "web",
        "-n",
        namespace,
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2.0"}]}}}}',
    )
    assert out.stdout.strip() == "deployment.apps/web patched"
    images = kubectl.run(
        "get",
        "deploy",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.containers[*].name}={.spec.template.spec.containers[*].image}",
    )
    assert images.stdout == "web side=nginx:2.0 busybox:1"  # merged by name, the sidecar kept
    # $patch: delete removes one container by its merge key
    kubectl.run(
        "patch",
        "deploy",
        "web",
        "-n",
        namespace,
        "--type",
        "strategic",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}',
    )
    names = kubectl.run("get", "deploy", "web", "-n", namespace, "-o", "jsonpath={.spec.template.spec.containers[*].name}")
    assert names.stdout == "web"

    kubectl.run(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input_text="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n  b: '2'\n",
    )
    kubectl.run("patch", "configmap", "cfg", "-n", namespace, "-p", '{"data":{"b":null,"c":"3"}}')
    data = kubectl.run("get", "configmap", "cfg", "-n", namespace, "-o", "jsonpath={.data}")
    assert data.stdout == '{"a":"1","c":"3"}'


# -- apply -----------------------------------------------------------------------------------


def test_server_side_apply_conflicts_and_force(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    out = kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", input_text=darkroom_yaml("ssa"))
    assert out.stdout.strip() == f"{DR}/ssa serverside-applied"
    again = kubectl.run("apply", "--server-side", "-n", namespace, "-f", "-", input_text=darkroom_yaml("ssa"))
    assert again.stdout.strip() == f"{DR}/ssa serverside-applied"

    conflicting = darkroom_yaml("ssa", version="v0.9.9")
    failed = kubectl.run(
        "apply", "--server-side", "--field-manager", "other", "-n", namespace, "-f", "-", input_text=conflicting, check=False
    )
    assert failed.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.version' in failed.stderr
    assert "--force-conflicts" in failed.stderr
    assert kubectl.run("get", "dr", "ssa", "-n", namespace, "-o", "jsonpath={.spec.version}").stdout == "v0.1.0"

    # the same value is no conflict: both managers co-own it
    kubectl.run("apply", "--server-side", "--field-manager", "sharer", "-n", namespace, "-f", "-", input_text=darkroom_yaml("ssa"))

    forced = kubectl.run(
        "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-n", namespace, "-f", "-", input_text=conflicting
    )
    assert forced.stdout.strip() == f"{DR}/ssa serverside-applied"
    assert kubectl.run("get", "dr", "ssa", "-n", namespace, "-o", "jsonpath={.spec.version}").stdout == "v0.9.9"
    managers = kubectl.run(
        "get",
        "dr",
        "ssa",
        "-n",
        namespace,
        "--show-managed-fields",
        "-o",
        "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation};{end}",
    ).stdout
    assert set(filter(None, managers.split(";"))) == {"kubectl/Apply", "other/Apply", "sharer/Apply"}


def test_client_side_apply_configured(kubectl: Kubectl, crds_installed: None, namespace: str, tmp_path: Path) -> None:
    manifest = tmp_path / "dr.yaml"
    manifest.write_text(darkroom_yaml("csa", metadata="  labels:\n    keep: 'yes'\n    drop: 'yes'\n"))
    assert kubectl.run("apply", "-n", namespace, "-f", str(manifest)).stdout.strip() == f"{DR}/csa created"
    assert kubectl.run("apply", "-n", namespace, "-f", str(manifest)).stdout.strip() == f"{DR}/csa unchanged"
    manifest.write_text(darkroom_yaml("csa", replicas=4, metadata="  labels:\n    keep: 'yes'\n"))
    assert kubectl.run("apply", "-n", namespace, "-f", str(manifest)).stdout.strip() == f"{DR}/csa configured"
    got = kubectl.run("get", "dr", "csa", "-n", namespace, "-o", "jsonpath={.spec.replicas} {.metadata.labels}").stdout
    assert got == '4 {"keep":"yes"}'
    last = kubectl.run("apply", "view-last-applied", "dr/csa", "-n", namespace, "-o", "json").stdout
    assert '"replicas": 4' in last


# -- delete, get, create errors --------------------------------------------------------------


def test_delete_waits_until_gone(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("plain"))
    out = kubectl.run("delete", "dr", "plain", "-n", namespace)
    assert out.stdout.strip() == f'{DR} "plain" deleted'
    missing = kubectl.run("get", "dr", "plain", "-n", namespace, check=False)
    assert missing.returncode == 1

    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("held", metadata="  finalizers: [example.com/hold]\n"))
    proc = kubectl.popen("delete", "dr", "held", "-n", namespace)
    try:
        wait_for(
            lambda: kubectl.run("get", "dr", "held", "-n", namespace, "-o", "jsonpath={.metadata.deletionTimestamp}").stdout,
            message="deletionTimestamp on held",
        )
        time.sleep(0.3)
        assert proc.poll() is None, "kubectl delete returned while the object still exists"
        kubectl.run("patch", "dr", "held", "-n", namespace, "--type", "json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert stdout.strip() == f'{DR} "held" deleted'
    assert kubectl.run("get", "dr", "held", "-n", namespace, check=False).returncode == 1


def test_get_missing_is_not_found(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    result = kubectl.run("get", "dr", "nope", "-n", namespace, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == 'Error from server (NotFound): darkrooms.deployments.example.com "nope" not found'
    result = kubectl.run("get", "configmap", "nope", "-n", namespace, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == 'Error from server (NotFound): configmaps "nope" not found'
    # --ignore-not-found turns it into success with no output
    quiet = kubectl.run("get", "dr", "nope", "-n", namespace, "--ignore-not-found")
    assert quiet.stdout == ""


def test_create_with_unknown_field_is_rejected(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    bogus = darkroom_yaml("bogus", extra_spec="  bogus: 1\n")
    result = kubectl.run("create", "-n", namespace, "-f", "-", input_text=bogus, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (BadRequest): error when creating "STDIN": Darkroom in version "v1" cannot be handled as a Darkroom: '
        'strict decoding error: unknown field "spec.bogus"'
    )
    assert kubectl.run("get", "dr", "bogus", "-n", namespace, check=False).returncode == 1
    # --validate=false sends fieldValidation=Ignore: created, the unknown field pruned
    created = kubectl.run("create", "--validate=false", "-n", namespace, "-f", "-", input_text=bogus)
    assert created.stdout.strip() == f"{DR}/bogus created"
    spec = kubectl.run("get", "dr", "bogus", "-n", namespace, "-o", "jsonpath={.spec}").stdout
    assert "bogus" not in spec
    assert '"cacheTime":31536000' in spec  # schema default applied
    # update (PUT) decodes the body too, so it gets the same prefix
    replaced = kubectl.run("replace", "-n", namespace, "-f", "-", input_text=bogus, check=False)
    assert replaced.returncode == 1
    assert replaced.stderr.strip() == (
        'Error from server (BadRequest): error when replacing "STDIN": Darkroom in version "v1" cannot be handled as a Darkroom: '
        'strict decoding error: unknown field "spec.bogus"'
    )
    # kubectl patch sends no fieldValidation, so the server's default (Warn) applies: a warning, field dropped
    patched = kubectl.run("patch", "dr", "bogus", "-n", namespace, "--type", "merge", "-p", '{"spec":{"bogus":2}}')
    assert patched.stderr.strip() == 'Warning: unknown field "spec.bogus"'
    assert patched.stdout.strip() == f"{DR}/bogus patched (no change)"
    # schema validation errors come back as 422 Invalid
    invalid = kubectl.run("create", "-n", namespace, "-f", "-", input_text=darkroom_yaml("bad", replicas=1000), check=False)
    assert invalid.returncode == 1
    assert (
        'The Darkroom "bad" is invalid: spec.replicas: Invalid value: 1000: spec.replicas in body should be less than or equal to 100'
        in invalid.stderr
    )


# -- discovery-driven commands ---------------------------------------------------------------


def test_explain_and_api_resources(kubectl: Kubectl, crds_installed: None) -> None:
    explain = kubectl.run("explain", "dr.spec").stdout
    assert "KIND:       Darkroom" in explain
    assert "VERSION:    v1" in explain
    assert "subDomains\t<[]string> -required-" in explain
    assert "source\t<Object> -required-" in explain
    nested = kubectl.run("explain", "darkrooms.spec.source.type").stdout
    assert "ENUM:" in nested and "WebFolder" in nested and "S3" in nested

    out = kubectl.run("api-resources").stdout
    header, rows = table(out)
    assert header == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert ["darkrooms", "dr", "deployments.example.com/v1", "true", "Darkroom"] in rows
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in rows
    grouped = kubectl.run("api-resources", "--api-group=deployments.example.com", "-o", "name").stdout.split()
    assert grouped == ["darkrooms.deployments.example.com"]


def test_get_builtins_and_wait_for_deployment(kubectl: Kubectl, api_client: client.ApiClient, namespace: str) -> None:
    header, rows = table(kubectl.run("get", "ns").stdout)
    assert header == ["NAME", "STATUS", "AGE"]
    assert [namespace, "Active"] == next(r[:2] for r in rows if r[0] == namespace)
    assert {"default", "kube-system"} <= {r[0] for r in rows}

    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=DEPLOYMENT_YAML)
    waited = kubectl.run("wait", "--for=condition=Available", "deploy/web", "-n", namespace, "--timeout=30s")
    assert waited.stdout.strip() == "deployment.apps/web condition met"
    header, rows = table(kubectl.run("get", "deploy", "-n", namespace).stdout)
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert rows[0][:4] == ["web", "2/2", "2", "2"]
    rollout = kubectl.run("rollout", "status", "deploy/web", "-n", namespace, "--timeout=30s")
    assert 'deployment "web" successfully rolled out' in rollout.stdout

    core = client.CoreV1Api(api_client)
    core.create_namespaced_event(
        namespace,
        {
            "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Deployment", "name": "web", "namespace": namespace, "apiVersion": "apps/v1"},
            "reason": "ScalingReplicaSet",
            "message": "Scaled up replica set web-1 to 2",
            "type": "Normal",
            "count": 1,
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:00:00Z",
            "source": {"component": "deployment-controller"},
        },
    )
    header, rows = table(kubectl.run("get", "events", "-n", namespace).stdout)
    assert header == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert rows[0][1:] == ["Normal", "ScalingReplicaSet", "deployment/web", "Scaled up replica set web-1 to 2"]


def test_label_and_annotate(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("la"))
    kubectl.run("apply", "-n", namespace, "-f", "-", input_text=darkroom_yaml("other"))
    assert kubectl.run("label", "dr", "la", "-n", namespace, "tier=gold").stdout.strip() == f"{DR}/la labeled"
    assert kubectl.run("annotate", "dr", "la", "-n", namespace, "note=hello world").stdout.strip() == f"{DR}/la annotated"
    selected = kubectl.run("get", "dr", "-n", namespace, "-l", "tier=gold", "-o", "name").stdout.split()
    assert selected == [f"{DR}/la"]
    not_selected = kubectl.run("get", "dr", "-n", namespace, "-l", "tier!=gold", "-o", "name").stdout.split()
    assert not_selected == [f"{DR}/other"]
    got = kubectl.run("get", "dr", "la", "-n", namespace, "-o", "jsonpath={.metadata.labels.tier}|{.metadata.annotations.note}").stdout
    assert got == "gold|hello world"
    # changing an existing label needs --overwrite
    refused = kubectl.run("label", "dr", "la", "-n", namespace, "tier=silver", check=False)
    assert refused.returncode == 1
    assert "'tier' already has a value (gold), and --overwrite is false" in refused.stderr
    kubectl.run("label", "dr", "la", "-n", namespace, "tier=silver", "--overwrite")
    kubectl.run("label", "dr", "la", "-n", namespace, "tier-")
    kubectl.run("annotate", "dr", "la", "-n", namespace, "note-")
    got = kubectl.run("get", "dr", "la", "-n", namespace, "-o", "jsonpath={.metadata.labels}|{.metadata.annotations}").stdout
    assert "tier" not in got and "note" not in got
