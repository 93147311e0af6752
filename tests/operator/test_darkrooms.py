"""The Darkroom reconciler in-process against the session devcluster (reconcile(key) called directly).

Behaviours: children exactly as specified (ConfigMap env, Deployment, Service, Ingress, labels,
controller ownerReferences); status (domains, readyReplicas, observedGeneration, Ready and
Reconciled with lastTransitionTime) and the Ready event; losing readiness is a Warning NotReady; a converged reconcile sends no write
request; edited children (image, port, ConfigMap data, host) are reverted and deleted ones
recreated; spec changes flow through (image, config hash, replicas without a restart, S3 →
WebFolder drops the credential env and bucket keys, a removed sub-domain); an S3 source without
credentials (a public bucket) runs without credential env; TLS/class removed when the settings drop
them, and ``status.tls`` says whether the Ingress has TLS; invalid specs give Reconciled=False/InvalidSpec with one Warning event;
apply failures give Reconciled=False/ApplyFailed, re-raise, and recover; a child controlled by
someone else is never taken over; the unready annotation turns Ready False and back; deleting the
Darkroom lets garbage collection remove the children; of two Darkrooms asking for one host the older serves it,
the newer one says so (Ready=False/HostConflict, one Warning Event in ``kubectl get events`` however often it is
reconciled, a Reconciled message that lists what exists), runs no Deployment while it holds no host, and takes the
host over when the older one lets it go.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from darkroom_operator.darkrooms import DarkroomReconciler
from darkroom_operator.runtime.conditions import find
from darkroom_operator.runtime.owning import ChildConflict
from darkroom_operator.settings import OperatorSettings

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, INGRESSES, SERVICES, Invalid, Resource
from tests.clusters import ClusterProcess
from tests.support import GC_TIMEOUT_S, UNREADY_ANNOTATION, Kubectl, wait_for

from .harness import CHILD_KINDS, Harness

WEBFOLDER = {"type": "WebFolder", "baseUrl": "https://example.com/images"}
LABELS = {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/managed-by": "darkroom-operator"}
UNREADY = UNREADY_ANNOTATION


@pytest.fixture
def harness(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[Harness]:
    h = Harness(kube.kubeconfig, namespace)
    yield h
    h.close()


def create(h: Harness, name: str, source: Mapping[str, Any] = WEBFOLDER, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": h.namespace},
        "spec": {"version": "0.4.2", "source": dict(source), "subDomains": [name], **spec},
    }
    created = h.admin.create(DARKROOMS, body)
    h.settle(DARKROOMS, created)
    return created


def update_spec(h: Harness, name: str, **spec: Any) -> dict[str, Any]:
    updated = h.admin.patch(DARKROOMS, name, {"spec": spec}, namespace=h.namespace)
    h.settle(DARKROOMS, updated)
    return updated


def condition(h: Harness, name: str, type_: str) -> Mapping[str, Any]:
    found = find((h.get(DARKROOMS, name).get("status") or {}).get("conditions"), type_)
    return found or {}


def reconcile_until(
    h: Harness, name: str, type_: str, status: str, reconciler: DarkroomReconciler | None = None, reason: str | None = None
) -> Mapping[str, Any]:
    """Reconcile (as the runtime would on each Deployment status event) until the condition has ``status`` (and ``reason``)."""

    def reached() -> Mapping[str, Any] | None:
        (reconciler or h.darkrooms).reconcile(h.key(name))
        found = condition(h, name, type_)
        return found if found.get("status") == status and reason in (None, found.get("reason")) else None

    result = wait_for(reached, timeout_s=15, interval_s=0.1, message=f"{type_}={status} on {name}")
    assert isinstance(result, Mapping)
    return result


def container(h: Harness, name: str) -> Mapping[str, Any]:
    found: Mapping[str, Any] = h.get(DEPLOYMENTS, name)["spec"]["template"]["spec"]["containers"][0]
    return found


def reasons(h: Harness, name: str) -> list[tuple[str, str]]:
    events = [e for e in h.events() if e["involvedObject"]["name"] == name and e["involvedObject"]["kind"] == "Darkroom"]
    return sorted((e["type"], e["reason"]) for e in events)


def test_children_exactly_as_specified_and_status(harness: Harness) -> None:
    h = harness
    dr = create(h, "photos", replicas=2, subDomains=["images", "cdn"], cacheTime=86400)
    assert h.darkrooms.reconcile(h.key("photos")).requeue_after_s is None
    owner = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "name": "photos",
        "uid": dr["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    for kind in CHILD_KINDS:
        meta = h.get(kind, "photos")["metadata"]
        assert meta["labels"] == {**LABELS, "app.kubernetes.io/instance": "photos"}, kind
        assert meta["ownerReferences"] == [owner], kind

    assert h.get(CONFIGMAPS, "photos")["data"] == {
        "APP_NAME": "photos",
        "APP_VERSION": "v0.4.2",
        "APP_DESCRIPTION": "A realtime image processing service",
        "PORT": "3000",
        "LOG_LEVEL": "info",
        "METRICS_SYSTEM": "prometheus",
        "CACHE_TIME": "86400",
        "SOURCE_KIND": "WebFolder",
        "SOURCE_BASEURL": "https://example.com/images",
        "SOURCE_HYSTRIX_COMMANDNAME": "WebFolder_ADAPTER",
        "SOURCE_HYSTRIX_TIMEOUT": "5000",
        "SOURCE_HYSTRIX_MAXCONCURRENTREQUESTS": "100",
        "SOURCE_HYSTRIX_REQUESTVOLUMETHRESHOLD": "10",
        "SOURCE_HYSTRIX_SLEEPWINDOW": "10",
        "SOURCE_HYSTRIX_ERRORPERCENTTHRESHOLD": "25",
    }

    deployment = h.get(DEPLOYMENTS, "photos")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["selector"] == {"matchLabels": {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": "photos"}}
    template = deployment["spec"]["template"]
    assert len(template["metadata"]["annotations"]["deployments.example.com/config-hash"]) == 16
    pod = template["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]
    c = pod["containers"][0]
    assert len(pod["containers"]) == 1
    assert (c["name"], c["image"]) == ("darkroom", "gojektech/darkroom:v0.4.2")
    assert c["ports"] == [{"name": "http", "containerPort": 3000, "protocol": "TCP"}]
    assert c["envFrom"] == [{"configMapRef": {"name": "photos"}}]
    assert "env" not in c
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["path"] == "/ping" and c[probe]["httpGet"]["port"] == "http"
    assert c["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}}
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert c["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]

    service = h.get(SERVICES, "photos")["spec"]
    assert service["type"] == "ClusterIP"
    assert service["selector"] == {"app.kubernetes.io/name": "darkroom", "app.kubernetes.io/instance": "photos"}
    assert service["ports"] == [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]

    backend = {"service": {"name": "photos", "port": {"name": "http"}}}
    assert h.get(INGRESSES, "photos")["spec"] == {
        "rules": [
            {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
            for host in ("images.darkroom.example.com", "cdn.darkroom.example.com")
        ]
    }

    ready = reconcile_until(h, "photos", "Ready", "True")
    status = h.get(DARKROOMS, "photos")["status"]
    assert status["domains"] == ["images.darkroom.example.com", "cdn.darkroom.example.com"]
    assert (status["readyReplicas"], status["observedGeneration"]) == (2, 1)
    assert (ready["reason"], ready["message"], ready["observedGeneration"]) == (
        "DeploymentAvailable",
        "2 of 2 pods are available and up to date",
        1,
    )
    reconciled = condition(h, "photos", "Reconciled")
    assert (reconciled["status"], reconciled["reason"]) == ("True", "Applied")
    assert reconciled["lastTransitionTime"] <= ready["lastTransitionTime"]
    assert reasons(h, "photos") == [("Normal", "Ready")]
    assert h.get(DARKROOMS, "photos")["spec"]["version"] == "0.4.2"  # never written back


def test_converged_reconcile_sends_no_write_request(harness: Harness) -> None:
    h = harness
    create(h, "quiet", source={"type": "S3", "bucket": "b", "credentialsSecretRef": {"name": "creds"}})
    reconcile_until(h, "quiet", "Ready", "True")
    h.settle_all()
    h.writes.clear()
    for _ in range(3):
        h.darkrooms.reconcile(h.key("quiet"))
    assert h.writes == []


def test_edited_children_are_reverted(harness: Harness) -> None:
    h = harness
    create(h, "drift")
    h.darkrooms.reconcile(h.key("drift"))
    want = {kind: h.get(kind, "drift") for kind in CHILD_KINDS}
    edits = [
        (CONFIGMAPS, {"data": {"SOURCE_BASEURL": "https://evil.example", "LOG_LEVEL": "debug"}}, "merge"),
        (DEPLOYMENTS, {"spec": {"template": {"spec": {"containers": [{"name": "darkroom", "image": "evil:1"}]}}}}, "strategic"),
        (SERVICES, {"spec": {"ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]}}, "merge"),
        (INGRESSES, {"spec": {"rules": [{"host": "evil.example.com"}]}}, "merge"),
    ]
    for kind, patch, patch_type in edits:
        edited = h.admin.patch(kind, "drift", patch, namespace=h.namespace, patch_type=patch_type)  # type: ignore[arg-type]
        h.settle(kind, edited)
    assert container(h, "drift")["image"] == "evil:1"
    h.darkrooms.reconcile(h.key("drift"))
    assert h.get(CONFIGMAPS, "drift")["data"] == want[CONFIGMAPS]["data"]
    assert container(h, "drift")["image"] == "gojektech/darkroom:v0.4.2"
    assert h.get(SERVICES, "drift")["spec"]["ports"] == want[SERVICES]["spec"]["ports"]
    assert h.get(INGRESSES, "drift")["spec"] == want[INGRESSES]["spec"]
    reconcile_until(h, "drift", "Ready", "True")
    h.settle_all()
    h.writes.clear()
    h.darkrooms.reconcile(h.key("drift"))
    assert h.writes == []  # repaired for good: no apply loop


def test_deleted_children_are_recreated(harness: Harness) -> None:
    h = harness
    create(h, "phoenix")
    h.darkrooms.reconcile(h.key("phoenix"))
    before = {kind: h.get(kind, "phoenix") for kind in CHILD_KINDS}
    for kind in CHILD_KINDS:
        h.admin.delete(kind, "phoenix", namespace=h.namespace)
        h.settle(kind, name="phoenix", gone=True)
    h.darkrooms.reconcile(h.key("phoenix"))
    for kind in CHILD_KINDS:
        after = h.get(kind, "phoenix")
        assert after["metadata"]["uid"] != before[kind]["metadata"]["uid"], kind
        assert after["metadata"]["labels"] == before[kind]["metadata"]["labels"], kind
    assert h.get(CONFIGMAPS, "phoenix")["data"] == before[CONFIGMAPS]["data"]
    assert container(h, "phoenix") == before[DEPLOYMENTS]["spec"]["template"]["spec"]["containers"][0]


def test_spec_changes_flow_to_the_children(harness: Harness) -> None:
    h = harness
    s3 = {"type": "S3", "bucket": "originals", "region": "eu-west-1", "pathPrefix": "raw/", "credentialsSecretRef": {"name": "creds"}}
    create(h, "flow", source=s3, subDomains=["a", "b"])
    h.darkrooms.reconcile(h.key("flow"))
    hash_annotation = "deployments.example.com/config-hash"

    def config_hash() -> str:
        return str(h.get(DEPLOYMENTS, "flow")["spec"]["template"]["metadata"]["annotations"][hash_annotation])

    first_hash = config_hash()
    assert [e["name"] for e in container(h, "flow")["env"]] == ["SOURCE_BUCKET_ACCESSKEY", "SOURCE_BUCKET_SECRETKEY"]
    assert h.get(CONFIGMAPS, "flow")["data"]["SOURCE_BUCKET_NAME"] == "originals"

    update_spec(h, "flow", version="v0.5.0", replicas=3)
    h.darkrooms.reconcile(h.key("flow"))
    assert container(h, "flow")["image"] == "gojektech/darkroom:v0.5.0"
    assert h.get(DEPLOYMENTS, "flow")["spec"]["replicas"] == 3
    version_hash = config_hash()
    assert version_hash != first_hash  # APP_VERSION is part of the configuration

    update_spec(h, "flow", replicas=1)
    h.darkrooms.reconcile(h.key("flow"))
    assert config_hash() == version_hash  # scaling does not roll the pods

    updated = h.admin.patch(
        DARKROOMS,
        "flow",
        {"spec": {"source": {"type": "WebFolder", "baseUrl": "https://x.example", "pathPrefix": "raw/"}, "subDomains": ["a"]}},
        namespace=h.namespace,
    )
    h.settle(DARKROOMS, updated)
    h.darkrooms.reconcile(h.key("flow"))
    data = h.get(CONFIGMAPS, "flow")["data"]
    assert data["SOURCE_KIND"] == "WebFolder" and data["SOURCE_BASEURL"] == "https://x.example"
    assert not [k for k in data if k.startswith("SOURCE_BUCKET")]
    assert "env" not in container(h, "flow")
    assert config_hash() != version_hash
    assert [r["host"] for r in h.get(INGRESSES, "flow")["spec"]["rules"]] == ["a.darkroom.example.com"]
    assert h.get(DARKROOMS, "flow")["status"]["domains"] == ["a.darkroom.example.com"]
    assert h.get(DARKROOMS, "flow")["status"]["observedGeneration"] == updated["metadata"]["generation"]


def test_tls_and_ingress_class_are_removed_when_the_settings_drop_them(harness: Harness) -> None:
    h = harness
    create(h, "secure", subDomains=["a", "b"])
    tls = OperatorSettings(identity="harness", tls_secret="wildcard", ingress_class="nginx")
    DarkroomReconciler(h.make_context(tls)).reconcile(h.key("secure"))
    spec = h.get(INGRESSES, "secure")["spec"]
    assert spec["ingressClassName"] == "nginx"
    assert spec["tls"] == [{"hosts": ["a.darkroom.example.com", "b.darkroom.example.com"], "secretName": "wildcard"}]
    assert h.get(DARKROOMS, "secure")["status"]["tls"] is True  # published for the API and the dashboard's links
    h.settle_all()
    h.darkrooms.reconcile(h.key("secure"))
    spec = h.get(INGRESSES, "secure")["spec"]
    assert "tls" not in spec and "ingressClassName" not in spec
    assert h.get(DARKROOMS, "secure")["status"]["tls"] is False


def test_an_s3_source_without_credentials_runs_without_credential_env(harness: Harness) -> None:
    """A public bucket: no credentialsSecretRef, so no SOURCE_BUCKET_*KEY env and no Secret hint; it reconciles."""
    h = harness
    create(h, "public", source={"type": "S3", "bucket": "open-data", "region": "eu-west-1"})
    reconcile_until(h, "public", "Reconciled", "True")
    assert "env" not in container(h, "public")
    data = h.get(CONFIGMAPS, "public")["data"]
    assert (data["SOURCE_KIND"], data["SOURCE_BUCKET_NAME"], data["SOURCE_BUCKET_REGION"]) == ("S3", "open-data", "eu-west-1")
    assert not [k for k in data if "KEY" in k]
    status = h.get(DARKROOMS, "public")["status"]
    assert (status["domains"], status["tls"]) == (["public.darkroom.example.com"], False)


def test_invalid_spec_is_reported_once_and_recovers(harness: Harness) -> None:
    h = harness
    create(h, "broken", source={"type": "WebFolder"})
    for _ in range(3):
        assert h.darkrooms.reconcile(h.key("broken")).requeue_after_s is None
        h.settle_all()
    reconciled = condition(h, "broken", "Reconciled")
    assert (reconciled["status"], reconciled["reason"], reconciled["message"]) == (
        "False",
        "InvalidSpec",
        "spec.source.baseUrl: required for a WebFolder source",
    )
    assert condition(h, "broken", "Ready")["reason"] == "DeploymentMissing"
    assert not any(h.exists(kind, "broken") for kind in CHILD_KINDS)
    assert reasons(h, "broken") == [("Warning", "InvalidSpec")]

    update_spec(h, "broken", source={"type": "S3"})
    h.darkrooms.reconcile(h.key("broken"))
    assert condition(h, "broken", "Reconciled")["message"] == "spec.source.bucket: required for an S3 source"
    assert reasons(h, "broken") == [("Warning", "InvalidSpec"), ("Warning", "InvalidSpec")]  # a new generation, a new problem
    h.settle_all()
    h.darkrooms.reconcile(h.key("broken"))
    assert len(reasons(h, "broken")) == 2

    update_spec(h, "broken", source={"type": "S3", "bucket": "b"})
    reconcile_until(h, "broken", "Reconciled", "True")
    assert all(h.exists(kind, "broken") for kind in CHILD_KINDS)
    assert ("Normal", "Reconciled") in reasons(h, "broken")


def test_apply_failure_is_recorded_retried_and_recovers(harness: Harness) -> None:
    h = harness
    dr = create(h, "stuck")
    owner = {"apiVersion": dr["apiVersion"], "kind": "Darkroom", "name": "stuck", "uid": dr["metadata"]["uid"], "controller": True}
    immutable = h.admin.create(
        CONFIGMAPS,
        {
            "metadata": {"name": "stuck", "namespace": h.namespace, "labels": LABELS, "ownerReferences": [owner]},
            "immutable": True,
            "data": {"old": "x"},
        },
    )
    h.settle(CONFIGMAPS, immutable)  # ours (labelled, controlled): in the reconciler's cache, not a foreign name
    for _ in range(2):
        with pytest.raises(Invalid):
            h.darkrooms.reconcile(h.key("stuck"))
        h.settle_all()
    reconciled = condition(h, "stuck", "Reconciled")
    assert (reconciled["status"], reconciled["reason"]) == ("False", "ApplyFailed")
    assert "immutable" in reconciled["message"]
    assert reasons(h, "stuck") == [("Warning", "ApplyFailed")]  # not one per retry

    h.admin.delete(CONFIGMAPS, "stuck", namespace=h.namespace)
    reconcile_until(h, "stuck", "Reconciled", "True")
    assert h.get(CONFIGMAPS, "stuck")["data"]["SOURCE_KIND"] == "WebFolder"
    assert reasons(h, "stuck") == [("Normal", "Reconciled"), ("Warning", "ApplyFailed")]


def test_child_controlled_by_another_owner_is_not_taken_over(harness: Harness) -> None:
    h = harness
    other = h.admin.create(CONFIGMAPS, {"metadata": {"name": "someone-else", "namespace": h.namespace}, "data": {}})
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "name": "someone-else", "uid": other["metadata"]["uid"], "controller": True}
    taken = h.admin.create(
        SERVICES,
        {"metadata": {"name": "taken", "namespace": h.namespace, "ownerReferences": [foreign]}, "spec": {"ports": [{"port": 9999}]}},
    )
    h.settle(SERVICES, taken)
    create(h, "taken")
    with pytest.raises(ChildConflict):
        h.darkrooms.reconcile(h.key("taken"))
    reconciled = condition(h, "taken", "Reconciled")
    assert (reconciled["status"], reconciled["reason"]) == ("False", "ChildConflict")
    # The metadata of everyone else's Services says who controls it: the message names the other owner.
    assert f'Service "taken" already exists and is controlled by another owner (uid {other["metadata"]["uid"]})' in reconciled["message"]
    service = h.get(SERVICES, "taken")
    assert service["metadata"]["resourceVersion"] == taken["metadata"]["resourceVersion"]


def test_objects_someone_else_created_are_never_adopted_changed_or_deleted(harness: Harness, kubectl: Kubectl) -> None:
    """Never take over: a Service made with kubectl, a ConfigMap made by hand, an orphan left by a
    ``--cascade=orphan`` delete (our labels, no owner) — none is taken over by a Darkroom of that name."""
    h = harness
    kubectl.run("create", "service", "clusterip", "billing", "--tcp=8080:8080", "-n", h.namespace)
    before = h.get(SERVICES, "billing")
    h.admin.create(CONFIGMAPS, {"metadata": {"name": "coredns", "namespace": h.namespace}, "data": {"Corefile": ".:53 {}"}})
    orphan_labels = {**LABELS, "app.kubernetes.io/instance": "orphan"}
    h.admin.create(CONFIGMAPS, {"metadata": {"name": "orphan", "namespace": h.namespace, "labels": orphan_labels}, "data": {"x": "1"}})
    h.settle_all()
    for name, kind in (("billing", "Service"), ("coredns", "ConfigMap"), ("orphan", "ConfigMap")):
        create(h, name)
        with pytest.raises(ChildConflict):
            h.darkrooms.reconcile(h.key(name))
        reconciled = condition(h, name, "Reconciled")
        assert (reconciled["status"], reconciled["reason"]) == ("False", "ChildConflict")
        assert f'{kind} "{name}" already exists and is not controlled by this Darkroom' in reconciled["message"]
    after = h.get(SERVICES, "billing")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["spec"]["selector"] == {"app": "billing"} and after["spec"]["ports"][0]["port"] == 8080
    assert not after["metadata"].get("ownerReferences")
    assert h.get(CONFIGMAPS, "coredns")["data"] == {"Corefile": ".:53 {}"} and not h.get(CONFIGMAPS, "coredns")["metadata"].get(
        "ownerReferences"
    )
    assert h.get(CONFIGMAPS, "orphan")["data"] == {"x": "1"} and not h.get(CONFIGMAPS, "orphan")["metadata"].get("ownerReferences")
    assert not h.exists(DEPLOYMENTS, "billing")  # children after the conflicting one are not applied either
    for name in ("billing", "coredns", "orphan"):
        h.admin.delete(DARKROOMS, name, namespace=h.namespace)
        h.settle(DARKROOMS, name=name, gone=True)
    time.sleep(2)  # garbage collection would have acted by now (nothing points at them)
    assert h.exists(SERVICES, "billing") and h.exists(CONFIGMAPS, "coredns") and h.exists(CONFIGMAPS, "orphan")


def test_a_new_darkroom_costs_no_request_to_check_its_childrens_names(harness: Harness) -> None:
    """The names someone else holds are in the cache (their metadata): a new Darkroom's first reconcile sends its four
    applies and one status write, and no dry-run create per child."""
    h = harness
    create(h, "fresh")
    h.writes.clear()
    h.darkrooms.reconcile(h.key("fresh"))
    plurals = ("configmaps", "deployments", "services", "ingresses", "darkrooms", "events")
    sent = sorted((method, next(p for p in plurals if f"/{p}/" in f"{path}/")) for method, path in h.writes)
    assert sent == [("PATCH", plural) for plural in ("configmaps", "darkrooms", "deployments", "ingresses", "services")]
    assert all(h.exists(kind, "fresh") for kind in (CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES))


def test_a_child_whose_label_was_taken_off_is_still_ours(harness: Harness) -> None:
    """Our child without our managed-by label drops out of the child informer and into the others' names: still ours
    (controlled by the Darkroom), so the next reconcile puts the label back instead of calling it a conflict."""
    h = harness
    create(h, "relabelled")
    h.darkrooms.reconcile(h.key("relabelled"))
    unlabelled = h.admin.patch(
        CONFIGMAPS,
        "relabelled",
        {"metadata": {"labels": {"app.kubernetes.io/managed-by": None}}},
        namespace=h.namespace,
        patch_type="merge",
    )
    h.settle(CONFIGMAPS, unlabelled)
    h.settle(CONFIGMAPS, name="relabelled", gone=True)
    h.darkrooms.reconcile(h.key("relabelled"))
    assert h.get(CONFIGMAPS, "relabelled")["metadata"]["labels"]["app.kubernetes.io/managed-by"] == h.settings.managed_by
    assert condition(h, "relabelled", "Reconciled")["status"] == "True"


def test_a_child_whose_label_was_taken_off_is_still_withdrawn_when_its_darkroom_serves_no_host(harness: Harness) -> None:
    """The others' names keep a holder's UID: our unlabelled Deployment, found there, is deleted (UID precondition) when
    its Darkroom loses every host to an older one, as a labelled one would be."""
    h = harness
    create(h, "older", subDomains=["taken"])
    reconcile_until(h, "older", "Ready", "True")
    time.sleep(1.1)  # creationTimestamp has one-second resolution: make the order unambiguous
    create(h, "newer", subDomains=["own"])
    h.darkrooms.reconcile(h.key("newer"))
    unlabelled = h.admin.patch(
        DEPLOYMENTS, "newer", {"metadata": {"labels": {"app.kubernetes.io/managed-by": None}}}, namespace=h.namespace, patch_type="merge"
    )
    h.settle(DEPLOYMENTS, unlabelled)
    h.settle(DEPLOYMENTS, name="newer", gone=True)
    update_spec(h, "newer", subDomains=["taken"])
    h.darkrooms.reconcile(h.key("newer"))
    assert not h.exists(DEPLOYMENTS, "newer") and not h.exists(INGRESSES, "newer")
    assert condition(h, "newer", "Ready")["reason"] == "HostConflict"


@pytest.mark.parametrize("names_of_others", [True, False], ids=["cached-names", "server-asked"])
def test_a_name_someone_else_holds_is_a_conflict_whether_the_cache_or_the_server_says_so(
    kube: ClusterProcess, crds_installed: None, namespace: str, names_of_others: bool
) -> None:
    """Without the metadata-only informers (a caller outside the runtime) a dry-run create asks the server about each
    name; with them the cache answers. Either way a name someone else holds is a conflict and nothing is written."""
    h = Harness(kube.kubeconfig, namespace, names_of_others=names_of_others)
    try:
        ingress = h.admin.create(
            INGRESSES,
            {
                "metadata": {"name": "held", "namespace": h.namespace},
                "spec": {"defaultBackend": {"service": {"name": "x", "port": {"number": 80}}}},
            },
        )
        h.settle(INGRESSES, ingress)
        create(h, "held")
        h.writes.clear()
        with pytest.raises(ChildConflict):
            h.darkrooms.reconcile(h.key("held"))
        dry_runs = [path for method, path in h.writes if method == "POST" and not path.endswith("/events")]
        assert len(dry_runs) == (0 if names_of_others else 4)  # the server asked about every name first
        assert not any(method == "PATCH" and "/darkrooms/" not in path for method, path in h.writes)  # no child written
        assert not h.exists(DEPLOYMENTS, "held")
        assert 'Ingress "held" already exists and is not controlled by this Darkroom' in condition(h, "held", "Reconciled")["message"]
        h.admin.delete(INGRESSES, "held", namespace=h.namespace)
        if names_of_others:
            wait_for_gone(h, INGRESSES, "held")
        h.darkrooms.reconcile(h.key("held"))
        assert condition(h, "held", "Reconciled")["status"] == "True"
        assert h.get(INGRESSES, "held")["metadata"]["ownerReferences"][0]["name"] == "held"
    finally:
        h.close()


def wait_for_gone(h: Harness, resource: Resource, name: str) -> None:
    """Until the metadata-only informer of ``resource`` no longer holds ``name``."""
    informer = h.cache.metadata_informer(resource)
    assert informer is not None
    wait_for(lambda: informer.store.get(h.key(name)) is None, timeout_s=10, message=f"the others' names to drop {name}")


def test_unready_annotation_turns_ready_false_and_back(harness: Harness) -> None:
    h = harness
    create(h, "flaky")
    reconcile_until(h, "flaky", "Ready", "True")
    patched = h.admin.patch(DEPLOYMENTS, "flaky", {"metadata": {"annotations": {UNREADY: "true"}}}, namespace=h.namespace)
    h.settle(DEPLOYMENTS, patched)
    # kube bumps a Deployment's generation when its annotations change: RolloutInProgress may come first.
    not_ready = reconcile_until(h, "flaky", "Ready", "False", reason="PodsUnavailable")
    assert not_ready["message"] == "0 of 1 pods are available"
    assert h.get(DEPLOYMENTS, "flaky")["metadata"]["annotations"][UNREADY] == "true"  # not ours: left alone
    h.admin.patch(DEPLOYMENTS, "flaky", {"metadata": {"annotations": {UNREADY: None}}}, namespace=h.namespace)
    reconcile_until(h, "flaky", "Ready", "True")
    # One Event per transition: Ready, NotReady, Ready. The real control plane's Deployment may pass through Ready once
    # more while its rollout of the annotation change settles (True, False, True, False, True): still one per transition.
    seen = reasons(h, "flaky")
    ready, not_ready_events = seen.count(("Normal", "Ready")), seen.count(("Warning", "NotReady"))
    assert not_ready_events >= 1 and ready == not_ready_events + 1 and len(seen) == ready + not_ready_events, seen


def test_deleting_the_darkroom_removes_its_children(harness: Harness) -> None:
    h = harness
    create(h, "doomed")
    h.darkrooms.reconcile(h.key("doomed"))
    assert all(h.exists(kind, "doomed") for kind in CHILD_KINDS)
    h.admin.delete(DARKROOMS, "doomed", namespace=h.namespace)
    wait_for(
        lambda: not any(h.exists(kind, "doomed") for kind in CHILD_KINDS),
        timeout_s=GC_TIMEOUT_S,
        message="garbage collection of the children",
    )
    h.settle(DARKROOMS, name="doomed", gone=True)
    assert h.darkrooms.reconcile(h.key("doomed")).requeue_after_s is None  # gone: nothing to do
    assert not any(h.exists(kind, "doomed") for kind in CHILD_KINDS)


def warnings(kubectl: Kubectl, namespace: str, name: str) -> list[tuple[str, str]]:
    """(reason, message) of the Warning Events about Darkroom ``name``, as ``kubectl get events`` lists them."""
    selector = f"involvedObject.kind=Darkroom,involvedObject.name={name},type=Warning"
    listed = json.loads(kubectl.run("get", "events", "-n", namespace, "--field-selector", selector, "-o", "json").stdout)
    return sorted((e["reason"], e["message"]) for e in listed["items"])


def test_the_older_claim_on_a_host_wins(harness: Harness, kubectl: Kubectl) -> None:
    """Two Darkrooms with the same sub-domain never both serve its host; the one that loses says so truthfully
    (Reconciled lists what exists) with one Warning per transition, and runs no pods while it serves no host."""
    h = harness
    create(h, "first", subDomains=["shared", "mine"])
    reconcile_until(h, "first", "Ready", "True")
    time.sleep(1.1)  # creationTimestamp has one-second resolution: make the order unambiguous
    create(h, "second", subDomains=["shared"])
    conflict = reconcile_until(h, "second", "Ready", "False")
    lost = f'host "shared.darkroom.example.com" is served by the older Darkroom {h.namespace}/first'
    assert conflict["reason"] == "HostConflict"
    assert conflict["message"] == f"{lost}; no pods run until one of its hosts is free"
    assert condition(h, "second", "Reconciled")["message"] == (
        f"ConfigMap and Service match the spec; no Deployment and no Ingress while every host is held by an older Darkroom ({lost})"
    )
    assert not h.exists(INGRESSES, "second") and not h.exists(DEPLOYMENTS, "second")  # it wins no host: no Ingress, no pods
    assert h.exists(CONFIGMAPS, "second") and h.exists(SERVICES, "second")
    assert h.get(DARKROOMS, "second")["status"]["domains"] == [] and h.get(DARKROOMS, "second")["status"]["readyReplicas"] == 0
    assert [r["host"] for r in h.get(INGRESSES, "first")["spec"]["rules"]] == ["shared.darkroom.example.com", "mine.darkroom.example.com"]
    for _ in range(3):  # resyncs: the failure is reported once, not per reconcile
        h.darkrooms.reconcile(h.key("second"))
    assert warnings(kubectl, h.namespace, "second") == [("HostConflict", conflict["message"])]
    # The older one lets the host go: the newer one takes it over (the change of "first" enqueues it).
    before = h.admin.get(DARKROOMS, "first", namespace=h.namespace)
    update_spec(h, "first", subDomains=["mine"])
    assert h.darkrooms._sharing_keys(before) == [f"{h.namespace}/second"]
    reconcile_until(h, "first", "Ready", "True")
    reconcile_until(h, "second", "Ready", "True")
    assert [r["host"] for r in h.get(INGRESSES, "second")["spec"]["rules"]] == ["shared.darkroom.example.com"]
    assert condition(h, "second", "Reconciled")["message"] == "ConfigMap, Deployment, Service and Ingress match the spec"
    # A newer claim on a host someone already serves takes the host away from no one.
    create(h, "third", subDomains=["mine", "own"])
    partial = reconcile_until(h, "third", "Ready", "False")
    assert partial["reason"] == "HostConflict" and "mine.darkroom.example.com" in partial["message"]
    assert condition(h, "third", "Reconciled")["message"] == (
        "ConfigMap, Deployment and Service match the spec; the Ingress serves only own.darkroom.example.com "
        f'(host "mine.darkroom.example.com" is served by the older Darkroom {h.namespace}/first)'
    )
    assert [r["host"] for r in h.get(INGRESSES, "third")["spec"]["rules"]] == ["own.darkroom.example.com"]
    assert [r["host"] for r in h.get(INGRESSES, "first")["spec"]["rules"]] == ["mine.darkroom.example.com"]
    assert [reason for reason, _ in warnings(kubectl, h.namespace, "third")] == ["HostConflict"]
