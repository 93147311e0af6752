"""Upgrading from release 0.1.0: its CRDs and objects, then this release's CRDs, processes and storage-version migration.

``tests/deploy/data/previous/`` holds release 0.1.0's ``crds/`` and ``crds/samples/`` as they were: the Darkroom at
``v1alpha1`` (its storage version then), the Postgresql and the Task at ``v1``. Each test runs on a private cluster of
the test's kind (``--cluster=both``: the real control plane referees devcluster), steps in the order
docs/operations/upgrading.md gives:

- the whole upgrade: 0.1.0's CRDs and its samples created at their versions (two Darkrooms as ``v1alpha1``, the S3
  one's Secret, a Postgresql, a Task); this release's CRDs applied over them (Darkroom ``storedVersions``
  ``[v1alpha1, v1]``); every object readable at every served version (same spec, same resourceVersion, only
  ``apiVersion`` differs); the reconciler (``python -m darkroom_operator``, as the reconciler tests start it) brings
  them all up (Darkrooms Ready with their children, the Postgresql Running, the Task observed);
  ``scripts/migrate_storage_versions.py`` (Darkroom ``storedVersions`` ``[v1]``); then the reconciler's resyncs send
  no write (the API server's audit log) and no object's resourceVersion or generation moves; the API (the app as its
  tests run it) lists and reads them all and edits them as the dashboard does — PUT and merge PATCH of a Darkroom made
  as ``v1alpha1`` with If-Match, a merge PATCH of the Task and of the Postgresql — and the edits are served at
  ``v1alpha1`` too; the dashboard's page of the other Darkroom shows it at ``v1`` with its children;
- the migration script alone: a Darkroom stored at ``v1alpha1`` is re-encoded (a new resourceVersion, once; spec,
  generation and managedFields as they were), ``storedVersions`` becomes ``[v1]``; a second run has nothing to do;
  ``--dry-run`` writes nothing;
- what a CRD change may not break: every object of 0.1.0's samples and of this release's validates against this
  release's CRDs (a server-side dry-run create at its own version: structural schema, defaults, CEL rules), and every
  version 0.1.0 stored objects at is still in this release's ``spec.versions`` (else kube-apiserver refuses the CRD
  while ``storedVersions`` lists it, which the last test shows — and that 0.1.0's CRD cannot come back once ``v1`` is
  in ``storedVersions``, so a rollback keeps the new CRDs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from darkroom_operator.runtime.conditions import find
from flask.testing import FlaskClient

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from kinds import darkrooms, postgresqls, tasks
from tests.auditlog import read_audit_log
from tests.clusters import ROOT, ClusterProcess
from tests.support import as_dict, install_crds, wait_for

from .harness import reconciles
from .operator_process import RunOperator

PREVIOUS = ROOT / "tests" / "deploy" / "data" / "previous"
NAMESPACE = "upgrade"
DARKROOM_CRD = "darkrooms.deployments.example.com"
PLURALS = {darkrooms.KIND: "darkrooms", tasks.KIND: "tasks", postgresqls.KIND: "postgresqls"}
MIGRATE = ROOT / "scripts" / "migrate_storage_versions.py"


def load_all(directory: Path) -> list[dict[str, Any]]:
    return [doc for path in sorted(directory.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]


class Cluster:
    """The official client on one cluster: custom objects at any version, CRDs, Secrets, namespaces."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client, config

        self.kubeconfig = kubeconfig
        self.api = config.new_client_from_config(config_file=str(kubeconfig))
        self.custom = client.CustomObjectsApi(self.api)
        self.core = client.CoreV1Api(self.api)
        self.extensions = client.ApiextensionsV1Api(self.api)

    def close(self) -> None:
        self.api.close()

    def create(self, doc: dict[str, Any], namespace: str = NAMESPACE, **query: Any) -> dict[str, Any]:
        body = {**doc, "metadata": {**doc["metadata"], "namespace": namespace}}
        if doc["kind"] == "Secret":
            return dict(self.api.sanitize_for_serialization(self.core.create_namespaced_secret(namespace, body, **query)))
        group, version = doc["apiVersion"].split("/")
        answer = self.custom.create_namespaced_custom_object(group, version, namespace, PLURALS[doc["kind"]], body, **query)
        assert isinstance(answer, dict)
        return answer

    def get(self, kind: str, group: str, version: str, name: str) -> dict[str, Any]:
        answer = self.custom.get_namespaced_custom_object(group, version, NAMESPACE, PLURALS[kind], name)
        assert isinstance(answer, dict)
        return answer

    def stored_versions(self, crd: str) -> list[str]:
        found = self.api.sanitize_for_serialization(self.extensions.read_custom_resource_definition(crd))
        return list(found["status"]["storedVersions"])

    def serves(self, group: str, version: str, plural: str) -> bool:
        from kubernetes import client

        try:
            self.custom.list_namespaced_custom_object(group, version, NAMESPACE, plural)
        except client.ApiException:
            return False
        return True


@pytest.fixture
def previous_release(fresh_kube: Callable[..., ClusterProcess], tmp_path: Path) -> Iterator[tuple[ClusterProcess, Cluster, Path]]:
    """A private cluster (with an audit log) where release 0.1.0 ran: its CRDs and its samples in ``upgrade``."""
    audit = tmp_path / "audit.jsonl"
    cluster = fresh_kube(audit_log=audit)
    install_crds(cluster.kubeconfig, directory=PREVIOUS / "crds")
    kube = Cluster(cluster.kubeconfig)
    try:
        kube.core.create_namespace({"metadata": {"name": NAMESPACE}})
        for doc in load_all(PREVIOUS / "samples"):
            kube.create(doc)
        yield cluster, kube, audit
    finally:
        kube.close()


def upgrade_crds(kube: Cluster) -> None:
    """This release's CRDs over 0.1.0's, and wait until v1 is served."""
    install_crds(kube.kubeconfig, replace=True)
    wait_for(lambda: kube.serves(darkrooms.GROUP, darkrooms.VERSION, "darkrooms"), timeout_s=30, message="Darkroom v1 served")


def migrate(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MIGRATE), "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def samples(kind: str) -> list[dict[str, Any]]:
    return [doc for doc in load_all(PREVIOUS / "samples") if doc["kind"] == kind]


def snapshot(kube: Cluster) -> dict[tuple[str, str], tuple[str, int]]:
    """(kind, name) -> (resourceVersion, generation) of every object of ours in the namespace."""
    found = {}
    for kind, module in ((darkrooms.KIND, darkrooms), (tasks.KIND, tasks), (postgresqls.KIND, postgresqls)):
        for obj in as_dict(kube.custom.list_namespaced_custom_object(module.GROUP, module.VERSION, NAMESPACE, PLURALS[kind]))["items"]:
            meta = obj["metadata"]
            found[(kind, meta["name"])] = (meta["resourceVersion"], meta["generation"])
    return found


def condition(obj: dict[str, Any], type_: str) -> str | None:
    return (find((obj.get("status") or {}).get("conditions"), type_) or {}).get("status")


def brought_up(kube: Cluster) -> bool:
    """Every Darkroom Ready at its generation, the Postgresql Running, the Task observed."""
    for doc in samples(darkrooms.KIND):
        dr = kube.get(darkrooms.KIND, darkrooms.GROUP, darkrooms.VERSION, doc["metadata"]["name"])
        status = dr.get("status") or {}
        if status.get("observedGeneration") != dr["metadata"]["generation"] or condition(dr, "Ready") != "True":
            return False
    for doc in samples(postgresqls.KIND):
        if (kube.get(postgresqls.KIND, postgresqls.GROUP, postgresqls.VERSION, doc["metadata"]["name"]).get("status") or {}).get(
            "phase"
        ) != "Running":
            return False
    for doc in samples(tasks.KIND):
        task = kube.get(tasks.KIND, tasks.GROUP, tasks.VERSION, doc["metadata"]["name"])
        if (task.get("status") or {}).get("observedGeneration") != task["metadata"]["generation"]:
            return False
    return True


def operator_writes(audit: Path, skip: int) -> list[Any]:
    return [
        r for r in read_audit_log(audit)[skip:] if r.user_agent.startswith("darkroom-operator/") and r.verb not in ("get", "list", "watch")
    ]


def test_upgrade_from_0_1_0_keeps_every_object(
    previous_release: tuple[ClusterProcess, Cluster, Path], run_operator: RunOperator, tmp_path: Path
) -> None:
    cluster, kube, audit = previous_release
    old_darkrooms = samples(darkrooms.KIND)
    assert {d["apiVersion"] for d in old_darkrooms} == {"deployments.example.com/v1alpha1"}, "0.1.0 wrote Darkrooms as v1alpha1"
    before = {d["metadata"]["name"]: kube.get(darkrooms.KIND, darkrooms.GROUP, "v1alpha1", d["metadata"]["name"]) for d in old_darkrooms}

    upgrade_crds(kube)
    assert kube.stored_versions(DARKROOM_CRD) == ["v1alpha1", "v1"]
    for name, old in before.items():
        for version in ("v1", *darkrooms.OLD_VERSIONS):
            now = kube.get(darkrooms.KIND, darkrooms.GROUP, version, name)
            assert now["apiVersion"] == f"{darkrooms.GROUP}/{version}"
            assert (now["spec"], now["metadata"]["resourceVersion"], now["metadata"]["uid"]) == (
                old["spec"],
                old["metadata"]["resourceVersion"],
                old["metadata"]["uid"],
            )

    op = run_operator(namespace=NAMESPACE, cluster=cluster, resync_s=0.5)
    wait_for(lambda: brought_up(kube), timeout_s=90, message="0.1.0's objects brought up by this release's reconciler")
    migrated = migrate(cluster.kubeconfig)
    assert migrated.returncode == 0, migrated.stderr
    assert kube.stored_versions(DARKROOM_CRD) == ["v1"]
    assert all(kube.stored_versions(crd) == ["v1"] for crd in ("tasks.example.example.com", "postgresqls.database.db.example.com"))

    # Converged and migrated: resyncs write nothing, and no object moves.
    for controller, count in (("darkroom", 2), ("task", 1), ("postgresql", 1)):
        target = reconciles(op, controller) + count
        wait_for(lambda c=controller, t=target: reconciles(op, c) >= t, timeout_s=30, message=f"a {controller} resync")  # type: ignore[misc]
    offset, settled = len(read_audit_log(audit)), snapshot(kube)
    for controller, count in (("darkroom", 2), ("task", 1), ("postgresql", 1)):
        target = reconciles(op, controller) + 3 * count
        wait_for(lambda c=controller, t=target: reconciles(op, c) >= t, timeout_s=30, message=f"three {controller} resyncs")  # type: ignore[misc]
    assert operator_writes(audit, offset) == []
    assert snapshot(kube) == settled and len(settled) == 4

    # The API reads and edits them as the dashboard does.
    settings = ApiSettings(kubeconfig=cluster.kubeconfig, cache_sync_timeout_s=30.0)
    access = ClusterAccess.start(settings, environ={})
    try:
        http: FlaskClient = create_app(settings, access=access).test_client()
        listed = http.get(f"/darkrooms?namespace={NAMESPACE}").get_json()["items"]
        assert sorted(d["name"] for d in listed) == sorted(before)
        url = f"/darkrooms/{NAMESPACE}/webfolder-demo"
        got = http.get(url)
        assert got.status_code == 200, got.get_json()
        assert got.get_json()["status"]["state"] == "Ready", got.get_json()
        patched = http.patch(url, json={"replicas": 3}, headers={"If-Match": got.headers["ETag"]})
        assert patched.status_code == 200, patched.get_data(as_text=True)
        wait_for(lambda: brought_up(kube), timeout_s=60, message="the patched Darkroom rolled out")  # its status settles
        replaced = http.put(
            url,
            json={
                "version": "v0.2.0",
                "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
                "subDomains": ["images", "cdn"],
            },
            headers={"If-Match": http.get(url).headers["ETag"]},
        )
        assert replaced.status_code == 200, replaced.get_data(as_text=True)
        old_view = kube.get(darkrooms.KIND, darkrooms.GROUP, "v1alpha1", "webfolder-demo")
        assert (old_view["spec"]["version"], old_view["spec"]["subDomains"]) == ("v0.2.0", ["images", "cdn"])
        task = samples(tasks.KIND)[0]["metadata"]["name"]
        assert http.patch(f"/tasks/{NAMESPACE}/{task}", json={"priority": 7}).get_json()["priority"] == 7
        database = samples(postgresqls.KIND)[0]["metadata"]["name"]
        edited = http.patch(f"/postgresqls/{NAMESPACE}/{database}", json={"parameters": {"work_mem": "8MB"}})
        assert edited.status_code == 200, edited.get_data(as_text=True)
        assert edited.get_json()["parameters"]["work_mem"] == "8MB"
        # The dashboard's page of the other Darkroom 0.1.0 made: read at v1, with the children the reconciler made.
        page = http.get(f"/ui/darkrooms/{NAMESPACE}/s3-demo?view=yaml", headers={"Accept": "text/html"})
        html = page.get_data(as_text=True)
        assert page.status_code == 200, html
        assert "apiVersion: deployments.example.com/v1" in html and "deployments.example.com/v1alpha1" not in html
        assert all(f'data-kind="{kind}"' in html for kind in ("ConfigMap", "Deployment", "Service", "Ingress"))
    finally:
        access.stop()


def test_migration_script_reencodes_at_the_storage_version(previous_release: tuple[ClusterProcess, Cluster, Path]) -> None:
    cluster, kube, _ = previous_release
    upgrade_crds(kube)
    before = {
        d["metadata"]["name"]: kube.get(darkrooms.KIND, darkrooms.GROUP, "v1", d["metadata"]["name"]) for d in samples(darkrooms.KIND)
    }

    dry = migrate(cluster.kubeconfig, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"{DARKROOM_CRD}: would rewrite 2 object(s) at v1 and set storedVersions ['v1alpha1', 'v1'] -> [v1]" in dry.stdout
    assert kube.stored_versions(DARKROOM_CRD) == ["v1alpha1", "v1"]
    assert all(
        kube.get(darkrooms.KIND, darkrooms.GROUP, "v1", n)["metadata"]["resourceVersion"] == o["metadata"]["resourceVersion"]
        for n, o in before.items()
    )

    done = migrate(cluster.kubeconfig)
    assert done.returncode == 0, done.stderr
    assert (
        f"{DARKROOM_CRD}: 2 object(s) read at v1, 2 re-encoded, 0 changed or deleted meanwhile; storedVersions ['v1alpha1', 'v1'] -> ['v1']"
        in done.stdout
    )
    assert "tasks.example.example.com: storedVersions already [v1], nothing to do" in done.stdout
    assert kube.stored_versions(DARKROOM_CRD) == ["v1"]
    for name, old in before.items():
        now = kube.get(darkrooms.KIND, darkrooms.GROUP, "v1", name)
        assert now["metadata"]["resourceVersion"] != old["metadata"]["resourceVersion"]  # written: re-encoded at v1
        keep = ("generation", "managedFields", "uid", "creationTimestamp")
        assert (now["spec"], {k: now["metadata"].get(k) for k in keep}) == (old["spec"], {k: old["metadata"].get(k) for k in keep})
    again = migrate(cluster.kubeconfig)
    assert again.returncode == 0 and f"{DARKROOM_CRD}: storedVersions already [v1], nothing to do" in again.stdout


def test_stored_objects_validate_against_this_releases_crds(previous_release: tuple[ClusterProcess, Cluster, Path]) -> None:
    _, kube, _ = previous_release
    upgrade_crds(kube)
    docs = [*load_all(PREVIOUS / "samples"), *load_all(ROOT / "crds" / "samples")]
    assert {d["kind"] for d in docs} >= set(PLURALS)
    for doc in docs:
        # A dry-run create of the object as stored (another name: the samples exist): schema, defaults and CEL rules.
        copy = {**doc, "metadata": {**doc["metadata"], "name": doc["metadata"]["name"] + "-check"}}
        kube.create(copy, dry_run="All")
        if doc["kind"] == darkrooms.KIND:  # and at the storage version, which the migration writes it at
            kube.create({**copy, "apiVersion": darkrooms.GROUP_VERSION}, dry_run="All")
    # Each version 0.1.0 stored objects at is still served: storedVersions may name it until the migration ran.
    for previous in load_all(PREVIOUS / "crds"):
        (stored,) = [v["name"] for v in previous["spec"]["versions"] if v["storage"]]
        (current,) = [d for d in load_all(ROOT / "crds") if d["metadata"]["name"] == previous["metadata"]["name"]]
        assert stored in [v["name"] for v in current["spec"]["versions"] if v["served"]], previous["metadata"]["name"]


def test_a_crd_dropping_a_stored_version_is_refused(previous_release: tuple[ClusterProcess, Cluster, Path]) -> None:
    from kubernetes import client

    _, kube, _ = previous_release
    upgrade_crds(kube)
    current = kube.api.sanitize_for_serialization(kube.extensions.read_custom_resource_definition(DARKROOM_CRD))
    current["spec"]["versions"] = [v for v in current["spec"]["versions"] if v["name"] == darkrooms.VERSION]
    with pytest.raises(client.ApiException) as refused:
        kube.extensions.replace_custom_resource_definition(DARKROOM_CRD, current)
    assert refused.value.status == 422
    causes = json.loads(refused.value.body or "{}")["details"]["causes"]
    assert [c["field"] for c in causes] == ["status.storedVersions[0]"]
    assert causes[0]["message"].startswith(
        'Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was previously a storage version'
    )
    assert kube.serves(darkrooms.GROUP, "v1alpha1", "darkrooms")
    # Nor can 0.1.0's CRD come back (a rollback keeps the new CRDs: docs/operations/upgrading.md).
    (previous,) = [d for d in load_all(PREVIOUS / "crds") if d["metadata"]["name"] == DARKROOM_CRD]
    previous["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    with pytest.raises(client.ApiException) as back:
        kube.extensions.replace_custom_resource_definition(DARKROOM_CRD, previous)
    assert back.value.status == 422
    assert [c["field"] for c in json.loads(back.value.body or "{}")["details"]["causes"]] == ["status.storedVersions[1]"]
