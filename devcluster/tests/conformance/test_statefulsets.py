"""StatefulSets and the PersistentVolumeClaims of their volumeClaimTemplates, on devcluster and the real control plane.

Driven through the official ``kubernetes`` client; the same bodies run on both servers (devcluster simulates the
StatefulSet controller, the binder and pvc-protection in ``devcluster/statefulsets.py``; kube runs them for real
with realcluster's simulated node). Covers:
- defaults and the first status: podManagementPolicy, updateStrategy, retention policy, the claim template's
  volumeMode; a new StatefulSet's status is ``replicas: 0, availableReplicas: 0``;
- readiness: a StatefulSet with a volumeClaimTemplate reaches observedGeneration 1 and replicas = ready = current =
  updated = available = 1, ``currentRevision == updateRevision`` named ``<name>-<hash>``, collisionCount 0; a new
  pod template gives a new updateRevision that becomes the currentRevision;
- the claim ``<template>-<statefulset>-<ordinal>``: the template's labels plus the selector's, its spec (the
  storage class the template names, else the cluster's default class if it has one), the pvc-protection finalizer,
  Bound with the requested capacity; ownerReferences: a controller reference to the StatefulSet for
  ``whenDeleted: Delete``, none for ``Retain``;
- deletion: with Delete the claim is garbage-collected with the StatefulSet; with Retain it stays, reported
  ``Unused`` once no pod uses it;
- the ``simulation.example.com/unready`` annotation keeps readyReplicas at 0 until it goes;
- scaling to 0 (status replicas 0, the claim kept) and back (the same claim), and the /scale subresource;
- claims that exist before the StatefulSet are never recreated: one controlled by another object is left alone,
  one without owner is adopted under ``whenDeleted: Delete`` (as kube's updateClaimOwnerRefForSetAndPod does);
- the immutable volumeClaimTemplates.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.support import GC_TIMEOUT_S, UNREADY_ANNOTATION, wait_for

LABELS = {"app.kubernetes.io/name": "postgresql"}
TIMEOUT_S = 30.0  # pods start after 0.3 s on both servers; a busy real control plane takes a few seconds more


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def plain(api_client: client.ApiClient, model: Any) -> Any:
    return api_client.sanitize_for_serialization(model)


def statefulset(
    name: str, *, when_deleted: str = "Delete", storage_class: str | None = "standard", annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """What the Postgresql reconciler creates, in small."""
    selector = {**LABELS, "app.kubernetes.io/instance": name}
    probe = {"exec": {"command": ["pg_isready", "--host", "127.0.0.1"]}, "periodSeconds": 5}
    claim_spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class:
        claim_spec["storageClassName"] = storage_class
    return {
        "metadata": {"name": name, **({"annotations": annotations} if annotations else {})},
        "spec": {
            "replicas": 1,
            "serviceName": f"{name}-headless",
            "selector": {"matchLabels": selector},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": when_deleted, "whenScaled": "Retain"},
            "template": {
                "metadata": {"labels": {**selector, "app.kubernetes.io/managed-by": "test"}},
                "spec": {
                    "securityContext": {"fsGroup": 999},
                    "containers": [{"name": "postgres", "image": "postgres:16", "readinessProbe": probe, "livenessProbe": probe}],
                },
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"tier": "storage"}}, "spec": claim_spec}],
        },
    }


def ready(apps: client.AppsV1Api, namespace: str, name: str) -> Any:
    sts = apps.read_namespaced_stateful_set(name, namespace)
    status, want = sts.status, sts.spec.replicas
    if status.observed_generation != sts.metadata.generation or status.current_revision != status.update_revision:
        return None
    counts = (status.replicas, status.ready_replicas or 0, status.current_replicas or 0, status.updated_replicas or 0)
    return sts if counts == (want, want, want, want) and status.available_replicas == want else None


def claim(core: client.CoreV1Api, namespace: str, name: str) -> Any:
    try:
        return core.read_namespaced_persistent_volume_claim(name, namespace)
    except client.ApiException as e:
        if e.status == 404:
            return None
        raise


def unused(core: client.CoreV1Api, namespace: str, name: str) -> str | None:
    conditions = (claim(core, namespace, name).status.conditions) or []
    status: str | None = next((c.status for c in conditions if c.type == "Unused"), None)
    return status


def default_storage_class(api_client: client.ApiClient) -> str | None:
    """The cluster's default StorageClass (none where StorageClasses are not served, as on devcluster)."""
    try:
        classes = client.StorageV1Api(api_client).list_storage_class().items
    except client.ApiException as e:
        if e.status == 404:
            return None
        raise
    default = "storageclass.kubernetes.io/is-default-class"
    return next((c.metadata.name for c in classes if (c.metadata.annotations or {}).get(default) == "true"), None)


def test_defaults_and_first_status(apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_stateful_set(namespace, statefulset("pg"))
    spec = created.spec
    assert created.metadata.generation == 1
    assert (created.status.replicas, created.status.available_replicas, created.status.observed_generation) == (0, 0, None)
    assert spec.pod_management_policy == "OrderedReady"
    assert (spec.update_strategy.type, spec.update_strategy.rolling_update.partition) == ("RollingUpdate", 0)
    assert spec.revision_history_limit == 10
    assert (spec.persistent_volume_claim_retention_policy.when_deleted, spec.persistent_volume_claim_retention_policy.when_scaled) == (
        "Delete",
        "Retain",
    )
    template = spec.volume_claim_templates[0]
    assert (template.api_version, template.kind, template.spec.volume_mode, template.status.phase) == (
        "v1",
        "PersistentVolumeClaim",
        "Filesystem",
        "Pending",
    )
    assert spec.template.spec.containers[0].readiness_probe.timeout_seconds == 1


def test_becomes_ready_with_a_bound_claim_owned_by_it(
    api_client: client.ApiClient, apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    created = apps.create_namespaced_stateful_set(namespace, statefulset("pg"))
    sts = wait_for(lambda: ready(apps, namespace, "pg"), timeout_s=TIMEOUT_S, message="StatefulSet ready")
    assert sts.status.collision_count == 0
    assert sts.status.update_revision.startswith("pg-") and len(sts.status.update_revision) > len("pg-")

    pvc = wait_for(lambda: claim(core, namespace, "data-pg-0"), message="claim data-pg-0")
    assert pvc.metadata.labels == {"tier": "storage", **LABELS, "app.kubernetes.io/instance": "pg"}
    assert pvc.spec.access_modes == ["ReadWriteOnce"]
    assert pvc.spec.resources.requests == {"storage": "1Gi"}
    assert (pvc.spec.storage_class_name, pvc.spec.volume_mode) == ("standard", "Filesystem")
    assert "kubernetes.io/pvc-protection" in pvc.metadata.finalizers
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "pg", "uid": created.metadata.uid}
    assert plain(api_client, pvc.metadata.owner_references) == [{**owner, "controller": True, "blockOwnerDeletion": True}]
    bound = wait_for(lambda: (c := claim(core, namespace, "data-pg-0")).status.phase == "Bound" and c, message="claim Bound")
    assert bound.spec.volume_name
    assert (bound.status.capacity, bound.status.access_modes) == ({"storage": "1Gi"}, ["ReadWriteOnce"])
    wait_for(lambda: unused(core, namespace, "data-pg-0") == "False", timeout_s=TIMEOUT_S, message="claim in use")


def test_claim_without_storage_class_gets_the_default_one(
    api_client: client.ApiClient, apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("plain", storage_class=None))
    pvc = wait_for(lambda: claim(core, namespace, "data-plain-0"), message="claim")
    assert pvc.spec.storage_class_name == default_storage_class(api_client)
    wait_for(lambda: ready(apps, namespace, "plain"), timeout_s=TIMEOUT_S, message="StatefulSet ready")


def test_delete_policy_claim_goes_with_the_statefulset(apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("gone"))
    wait_for(lambda: ready(apps, namespace, "gone"), timeout_s=TIMEOUT_S, message="StatefulSet ready")
    apps.delete_namespaced_stateful_set("gone", namespace)
    wait_for(lambda: claim(core, namespace, "data-gone-0") is None, timeout_s=GC_TIMEOUT_S, message="claim garbage-collected")


def test_retain_policy_claim_outlives_the_statefulset(apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("kept", when_deleted="Retain"))
    wait_for(lambda: ready(apps, namespace, "kept"), timeout_s=TIMEOUT_S, message="StatefulSet ready")
    pvc = claim(core, namespace, "data-kept-0")
    assert pvc.metadata.owner_references is None
    apps.delete_namespaced_stateful_set("kept", namespace)
    wait_for(lambda: not apps.list_namespaced_stateful_set(namespace).items, message="StatefulSet gone")
    # once its pod is gone the claim is reported unused: the deletion has been processed, and the claim stays
    wait_for(lambda: unused(core, namespace, "data-kept-0") == "True", timeout_s=GC_TIMEOUT_S, message="claim unused")
    after = claim(core, namespace, "data-kept-0")
    assert (after.metadata.uid, after.metadata.deletion_timestamp, after.status.phase) == (pvc.metadata.uid, None, "Bound")


def test_unready_annotation_keeps_it_unready(apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("sick", annotations={UNREADY_ANNOTATION: "true"}))

    def started() -> Any:
        sts = apps.read_namespaced_stateful_set("sick", namespace)
        bound = (claim(core, namespace, "data-sick-0") or client.V1PersistentVolumeClaim()).status
        return sts if sts.status.updated_replicas == 1 and bound and bound.phase == "Bound" else None

    sts = wait_for(started, timeout_s=TIMEOUT_S, message="pods started, claim bound")
    assert (sts.status.replicas, sts.status.ready_replicas, sts.status.available_replicas) == (1, None, 0)

    apps.patch_namespaced_stateful_set("sick", namespace, {"metadata": {"annotations": {UNREADY_ANNOTATION: None}}})
    sts = wait_for(lambda: ready(apps, namespace, "sick"), timeout_s=TIMEOUT_S, message="ready once the annotation is gone")
    assert sts.status.ready_replicas == 1


def test_scale_to_zero_and_back_keeps_the_claim(apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("zero"))
    wait_for(lambda: ready(apps, namespace, "zero"), timeout_s=TIMEOUT_S, message="StatefulSet ready")
    scale = apps.read_namespaced_stateful_set_scale("zero", namespace)
    assert (scale.spec.replicas, scale.status.replicas) == (1, 1)
    assert set(scale.status.selector.split(",")) == {"app.kubernetes.io/name=postgresql", "app.kubernetes.io/instance=zero"}
    uid = claim(core, namespace, "data-zero-0").metadata.uid

    apps.patch_namespaced_stateful_set_scale("zero", namespace, {"spec": {"replicas": 0}})
    sts = wait_for(lambda: ready(apps, namespace, "zero"), timeout_s=TIMEOUT_S, message="scaled to zero")
    assert (sts.metadata.generation, sts.status.replicas, sts.status.ready_replicas, sts.status.available_replicas) == (2, 0, None, 0)
    assert (sts.status.current_replicas, sts.status.updated_replicas) == (None, None)
    wait_for(lambda: unused(core, namespace, "data-zero-0") == "True", timeout_s=TIMEOUT_S, message="claim unused")

    apps.patch_namespaced_stateful_set("zero", namespace, {"spec": {"replicas": 1}})
    wait_for(lambda: ready(apps, namespace, "zero"), timeout_s=TIMEOUT_S, message="back to one")
    assert claim(core, namespace, "data-zero-0").metadata.uid == uid


def test_new_template_rolls_to_a_new_revision(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("roll"))
    first = wait_for(lambda: ready(apps, namespace, "roll"), timeout_s=TIMEOUT_S, message="StatefulSet ready").status.update_revision
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "postgres", "image": "postgres:17"}]}}}}
    assert apps.patch_namespaced_stateful_set("roll", namespace, patch).metadata.generation == 2
    sts = wait_for(lambda: ready(apps, namespace, "roll"), timeout_s=TIMEOUT_S, message="rolled to the new template")
    assert sts.status.current_revision == sts.status.update_revision != first
    assert sts.status.observed_generation == 2


def test_existing_claims_are_never_recreated(
    api_client: client.ApiClient, apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    holder = core.create_namespaced_config_map(namespace, {"metadata": {"name": "holder"}})
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "name": "holder", "uid": holder.metadata.uid, "controller": True}
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}
    taken = core.create_namespaced_persistent_volume_claim(
        namespace, {"metadata": {"name": "data-taken-0", "labels": {"mine": "yes"}, "ownerReferences": [foreign]}, "spec": spec}
    )
    loose = core.create_namespaced_persistent_volume_claim(namespace, {"metadata": {"name": "data-loose-0"}, "spec": spec})
    apps.create_namespaced_stateful_set(namespace, statefulset("taken"))
    created = apps.create_namespaced_stateful_set(namespace, statefulset("loose"))
    for name in ("taken", "loose"):
        wait_for(lambda name=name: ready(apps, namespace, name), timeout_s=TIMEOUT_S, message=f"{name} ready")  # type: ignore[misc]

    adopted = wait_for(lambda: (c := claim(core, namespace, "data-loose-0")).metadata.owner_references and c, message="adopted")
    assert (adopted.metadata.uid, adopted.metadata.labels) == (loose.metadata.uid, None)
    assert plain(api_client, adopted.metadata.owner_references) == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "loose",
            "uid": created.metadata.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    kept = claim(core, namespace, "data-taken-0")
    assert kept.metadata.uid == taken.metadata.uid
    assert (kept.metadata.labels, kept.spec.resources.requests) == ({"mine": "yes"}, {"storage": "2Gi"})
    assert plain(api_client, kept.metadata.owner_references) == [foreign]


def test_volume_claim_templates_are_immutable(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, statefulset("fixed"))
    body = statefulset("fixed")["spec"]["volumeClaimTemplates"]
    body[0]["spec"]["resources"]["requests"]["storage"] = "2Gi"
    with pytest.raises(client.ApiException) as failure:
        apps.patch_namespaced_stateful_set("fixed", namespace, {"spec": {"volumeClaimTemplates": body}})
    assert failure.value.status == 422
    assert "spec.volumeClaimTemplates: Invalid value" in failure.value.body
    assert "field is immutable" in failure.value.body
