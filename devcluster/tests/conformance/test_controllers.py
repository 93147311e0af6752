"""The controllers devcluster runs in place of kube-controller-manager / apiextensions-apiserver.

Driven through the official ``kubernetes`` client. Covers:
- garbage collection, Background: a ConfigMap owned by a Darkroom, and one owned by a ConfigMap, are
  deleted after their owner is deleted; a dependent whose ownerReference names a uid that does not exist
  is collected; a dependent with two owners survives deletion of one and loses that reference;
- Foreground deletion: the owner gets a deletionTimestamp and the ``foregroundDeletion`` finalizer and
  stays while a blocking dependent (blockOwnerDeletion) exists; the dependent is deleted (background, no
  extra finalizer); once it is gone the owner disappears; non-blocking dependents do not hold the owner;
- Orphan deletion: the owner disappears, dependents survive without the ownerReference;
- finalizers: an object with a custom finalizer stays (deletionTimestamp set, spec unchanged) until an
  update removes the finalizer; no new finalizers may be added while deleting;
- namespace deletion: status.phase Terminating, new content refused, content deleted, objects with
  finalizers keep the namespace Terminating (with the content conditions kube's namespace controller
  reports) until their finalizers go, then the namespace disappears;
- Deployments: status converges to observedGeneration == generation and replicas/updated/ready/available
  == spec.replicas with Available True; after a new image the status first lags (seen on a watch) then
  converges; scaling to 0; the ``simulation.example.com/unready`` annotation keeps readyReplicas absent and
  Available False; the /scale subresource (read and patch);
- CRD lifecycle: a new CRD gets NamesAccepted/Established True and acceptedNames (with defaulted singular
  and listKind) and storedVersions; deleting a CRD with custom resources deletes the resources first
  (the CRD waits with the cleanup finalizer while one is held by a finalizer), then the CRD.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client, watch

from tests.support import as_dict, wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
HOLD = "example.com/hold"


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


def gone(read: Callable[[], object]) -> bool:
    try:
        read()
    except client.ApiException as e:
        if e.status == 404:
            return True
        raise
    return False


def owner_ref(obj: Any, *, block: bool | None = None) -> dict[str, Any]:
    """An ownerReference to ``obj`` (a client model or a dict)."""
    if isinstance(obj, dict):
        api_version, kind, meta = obj["apiVersion"], obj["kind"], obj["metadata"]
        name, uid = meta["name"], meta["uid"]
    else:
        api_version, kind, name, uid = obj.api_version, obj.kind, obj.metadata.name, obj.metadata.uid
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if block is not None:
        ref["blockOwnerDeletion"] = block
    return ref


def configmap(
    core: client.CoreV1Api, namespace: str, name: str, *, owners: list[dict[str, Any]] | None = None, finalizers: list[str] | None = None
) -> Any:
    meta: dict[str, Any] = {"name": name}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    cm = core.create_namespaced_config_map(namespace, {"metadata": meta, "data": {"k": "v"}})
    # the API answers with apiVersion/kind unset on typed models; fill them for owner_ref
    cm.api_version, cm.kind = "v1", "ConfigMap"
    return cm


def darkroom(custom: client.CustomObjectsApi, namespace: str, name: str) -> dict[str, Any]:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": name},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com"}, "subDomains": ["a"]},
    }
    return as_dict(custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body))


def remove_finalizers(core: client.CoreV1Api, namespace: str, name: str) -> None:
    core.patch_namespaced_config_map(name, namespace, [{"op": "remove", "path": "/metadata/finalizers"}])


# -- garbage collection ----------------------------------------------------------------------


def test_background_gc_of_darkroom_and_configmap_dependents(
    core: client.CoreV1Api, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    owner = darkroom(custom, namespace, "owner")
    configmap(core, namespace, "of-darkroom", owners=[owner_ref(owner)])
    cm_owner = configmap(core, namespace, "cm-owner")
    configmap(core, namespace, "of-configmap", owners=[owner_ref(cm_owner)])
    bystander = configmap(core, namespace, "bystander")

    custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "owner")
    core.delete_namespaced_config_map("cm-owner", namespace)
    assert gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "owner"))
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("of-darkroom", namespace)), message="Darkroom dependent collected")
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("of-configmap", namespace)), message="ConfigMap dependent collected")
    assert core.read_namespaced_config_map("bystander", namespace).metadata.uid == bystander.metadata.uid


def test_dependent_of_nonexistent_owner_is_collected(core: client.CoreV1Api, namespace: str) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": str(uuid.uuid4())}
    created = configmap(core, namespace, "orphaned", owners=[ghost])
    assert created.metadata.owner_references[0].uid == ghost["uid"]
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("orphaned", namespace)), message="dangling dependent collected")


def test_owner_with_same_name_but_other_uid_is_dangling(core: client.CoreV1Api, namespace: str) -> None:
    configmap(core, namespace, "twin")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "twin", "uid": str(uuid.uuid4())}
    configmap(core, namespace, "dep", owners=[ghost])
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("dep", namespace)), message="dependent of a uid mismatch collected")
    assert core.read_namespaced_config_map("twin", namespace).metadata.name == "twin"


def test_two_owners_dependent_survives_one(core: client.CoreV1Api, namespace: str) -> None:
    first = configmap(core, namespace, "first")
    second = configmap(core, namespace, "second")
    configmap(core, namespace, "shared", owners=[owner_ref(first), owner_ref(second)])
    core.delete_namespaced_config_map("first", namespace)

    def refs() -> list[str]:
        return [r.name for r in core.read_namespaced_config_map("shared", namespace).metadata.owner_references or []]

    wait_for(lambda: refs() == ["second"], message="reference to the deleted owner dropped")
    shared = core.read_namespaced_config_map("shared", namespace)
    assert shared.metadata.deletion_timestamp is None
    core.delete_namespaced_config_map("second", namespace)
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("shared", namespace)), message="dependent collected after its last owner")


def test_foreground_deletion_waits_for_blocking_dependents(core: client.CoreV1Api, namespace: str) -> None:
    owner = configmap(core, namespace, "fg-owner")
    configmap(core, namespace, "fg-held", owners=[owner_ref(owner, block=True)], finalizers=[HOLD])
    configmap(core, namespace, "fg-plain", owners=[owner_ref(owner, block=True)])

    core.delete_namespaced_config_map("fg-owner", namespace, propagation_policy="Foreground")
    deleting = core.read_namespaced_config_map("fg-owner", namespace)
    assert deleting.metadata.deletion_timestamp is not None
    assert deleting.metadata.finalizers == ["foregroundDeletion"]

    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("fg-plain", namespace)), message="plain dependent deleted")

    def held_deleting() -> bool:
        return core.read_namespaced_config_map("fg-held", namespace).metadata.deletion_timestamp is not None

    wait_for(held_deleting, message="held dependent marked for deletion")
    held = core.read_namespaced_config_map("fg-held", namespace)
    assert held.metadata.finalizers == [HOLD]  # dependents without dependents of their own are deleted in the background
    owner_now = core.read_namespaced_config_map("fg-owner", namespace)
    assert owner_now.metadata.finalizers == ["foregroundDeletion"]

    remove_finalizers(core, namespace, "fg-held")
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("fg-held", namespace)), message="held dependent gone")
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("fg-owner", namespace)), message="owner gone after its dependents")


def test_foreground_deletion_does_not_wait_for_non_blocking_dependents(core: client.CoreV1Api, namespace: str) -> None:
    owner = configmap(core, namespace, "nb-owner")
    configmap(core, namespace, "nb-held", owners=[owner_ref(owner)], finalizers=[HOLD])
    core.delete_namespaced_config_map("nb-owner", namespace, propagation_policy="Foreground")
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("nb-owner", namespace)), message="owner gone")
    # still deleted, just not waited for
    wait_for(
        lambda: core.read_namespaced_config_map("nb-held", namespace).metadata.deletion_timestamp is not None,
        message="dependent marked for deletion",
    )
    assert core.read_namespaced_config_map("nb-held", namespace).metadata.finalizers == [HOLD]
    remove_finalizers(core, namespace, "nb-held")
    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("nb-held", namespace)), message="dependent gone")


def test_orphan_deletion_releases_dependents(
    core: client.CoreV1Api, custom: client.CustomObjectsApi, crds_installed: None, namespace: str
) -> None:
    owner = darkroom(custom, namespace, "orphaner")
    other = configmap(core, namespace, "other-owner")
    configmap(core, namespace, "child-a", owners=[owner_ref(owner, block=True)])
    configmap(core, namespace, "child-b", owners=[owner_ref(owner), owner_ref(other)])

    custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orphaner", propagation_policy="Orphan")
    wait_for(lambda: gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orphaner")), message="owner gone")
    child_a = core.read_namespaced_config_map("child-a", namespace)
    assert child_a.metadata.owner_references is None
    assert child_a.metadata.deletion_timestamp is None
    child_b = core.read_namespaced_config_map("child-b", namespace)
    assert [r.name for r in child_b.metadata.owner_references] == ["other-owner"]
    assert child_b.metadata.deletion_timestamp is None


# -- finalizers ------------------------------------------------------------------------------


def test_custom_finalizer_holds_deletion_until_removed(core: client.CoreV1Api, namespace: str) -> None:
    configmap(core, namespace, "held", finalizers=[HOLD])
    core.delete_namespaced_config_map("held", namespace)
    held = core.read_namespaced_config_map("held", namespace)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.deletion_grace_period_seconds == 0
    assert held.metadata.finalizers == [HOLD]
    assert held.data == {"k": "v"}

    # a second delete changes nothing; new finalizers are refused while deleting
    core.delete_namespaced_config_map("held", namespace)
    assert core.read_namespaced_config_map("held", namespace).metadata.resource_version == held.metadata.resource_version
    with pytest.raises(client.ApiException) as info:
        core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": [HOLD, "example.com/more"]}})
    assert info.value.status == 422
    assert "no new finalizers can be added if the object is being deleted" in info.value.body

    # updates other than the finalizer removal are allowed and keep it around
    core.patch_namespaced_config_map("held", namespace, {"data": {"k": "changed"}})
    assert core.read_namespaced_config_map("held", namespace).data == {"k": "changed"}

    current = core.read_namespaced_config_map("held", namespace)
    current.metadata.finalizers = []
    core.replace_namespaced_config_map("held", namespace, current)
    assert gone(lambda: core.read_namespaced_config_map("held", namespace))


# -- namespaces ------------------------------------------------------------------------------


def test_namespace_deletion_lifecycle(core: client.CoreV1Api, custom: client.CustomObjectsApi, crds_installed: None) -> None:
    name = f"doomed-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    assert core.read_namespace(name).status.phase == "Active"
    configmap(core, name, "plain")
    configmap(core, name, "held", finalizers=[HOLD])
    darkroom(custom, name, "dr")

    core.delete_namespace(name)
    ns = core.read_namespace(name)
    assert ns.status.phase == "Terminating"
    assert ns.metadata.deletion_timestamp is not None
    assert ns.spec.finalizers == ["kubernetes"]

    with pytest.raises(client.ApiException) as info:
        configmap(core, name, "late")
    assert info.value.status == 403
    assert f"unable to create new content in namespace {name} because it is being terminated" in info.value.body

    wait_for(lambda: gone(lambda: core.read_namespaced_config_map("plain", name)), message="content deleted")
    wait_for(
        lambda: gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, name, PLURAL, "dr")), message="custom resources deleted"
    )
    held = core.read_namespaced_config_map("held", name)
    assert held.metadata.deletion_timestamp is not None

    def conditions() -> dict[str, Any]:
        return {c.type: c for c in core.read_namespace(name).status.conditions or []}

    wait_for(
        lambda: (
            conditions().get("NamespaceFinalizersRemaining") is not None and conditions()["NamespaceFinalizersRemaining"].status == "True"
        ),
        message="NamespaceFinalizersRemaining condition",
    )
    conds = conditions()
    assert conds["NamespaceFinalizersRemaining"].reason == "SomeFinalizersRemain"
    assert (
        conds["NamespaceFinalizersRemaining"].message
        == f"Some content in the namespace has finalizers remaining: {HOLD} in 1 resource instances"
    )
    assert conds["NamespaceContentRemaining"].status == "True"
    assert conds["NamespaceContentRemaining"].reason == "SomeResourcesRemain"
    assert conds["NamespaceContentRemaining"].message == "Some resources are remaining: configmaps. has 1 resource instances"
    assert conds["NamespaceDeletionDiscoveryFailure"].status == "False"
    ns = core.read_namespace(name)
    assert ns.status.phase == "Terminating"
    assert ns.spec.finalizers == ["kubernetes"]

    remove_finalizers(core, name, "held")
    wait_for(lambda: gone(lambda: core.read_namespace(name)), message="namespace gone")


# -- deployments -----------------------------------------------------------------------------


def deployment_body(name: str, *, replicas: int = 2, image: str = "nginx:1.0", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "main", "image": image}]}},
        },
    }


def rolled_out(apps: client.AppsV1Api, namespace: str, name: str) -> Any:
    dep = apps.read_namespaced_deployment(name, namespace)
    status, want = dep.status, dep.spec.replicas
    if status.observed_generation != dep.metadata.generation:
        return None
    if want == 0:
        ok = not status.replicas and not status.ready_replicas
    else:
        ok = status.replicas == status.updated_replicas == status.ready_replicas == status.available_replicas == want
    available = {c.type: c.status for c in status.conditions or []}.get("Available")
    return dep if ok and available == "True" else None


def test_deployment_status_converges(apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_deployment(namespace, deployment_body("web", replicas=3))
    assert created.metadata.generation == 1
    dep = wait_for(lambda: rolled_out(apps, namespace, "web"), message="rollout")
    assert dep.status.observed_generation == 1
    assert dep.status.unavailable_replicas is None
    conditions = {c.type: c for c in dep.status.conditions}
    assert conditions["Available"].reason == "MinimumReplicasAvailable"
    assert conditions["Progressing"].status == "True"
    assert conditions["Progressing"].reason == "NewReplicaSetAvailable"


def test_deployment_new_image_lags_then_converges(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment_body("roll"))
    wait_for(lambda: rolled_out(apps, namespace, "roll"), message="initial rollout")
    patched = apps.patch_namespaced_deployment(
        "roll", namespace, {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2.0"}]}}}}
    )
    assert patched.metadata.generation == 2

    seen: list[tuple[int | None, int | None, int | None]] = []
    stream = watch.Watch()
    for event in stream.stream(
        apps.list_namespaced_deployment,
        namespace,
        field_selector="metadata.name=roll",
        resource_version=patched.metadata.resource_version,
        timeout_seconds=10,
    ):
        status = event["object"].status
        seen.append((status.observed_generation, status.updated_replicas, status.ready_replicas))
        if status.observed_generation == 2 and status.updated_replicas == 2 and status.ready_replicas == 2:
            stream.stop()
    assert seen, "no status updates after the patch"
    assert seen[-1] == (2, 2, 2)
    # the first status written for the new generation shows it not yet rolled out
    first_generation, first_updated, _ = seen[0]
    assert first_generation != 2 or first_updated != 2
    dep = wait_for(lambda: rolled_out(apps, namespace, "roll"), message="rollout of the new image")
    assert dep.spec.template.spec.containers[0].image == "nginx:2.0"


def test_deployment_scale_to_zero(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment_body("zero"))
    wait_for(lambda: rolled_out(apps, namespace, "zero"), message="initial rollout")
    apps.patch_namespaced_deployment("zero", namespace, {"spec": {"replicas": 0}})
    dep = wait_for(lambda: rolled_out(apps, namespace, "zero"), message="scaled to zero")
    assert dep.metadata.generation == 2
    assert dep.status.replicas is None
    assert dep.status.ready_replicas is None
    assert dep.status.available_replicas is None


def test_unready_annotation_keeps_deployment_unavailable(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment_body("sick", annotations={"simulation.example.com/unready": "true"}))

    def settled() -> Any:
        dep = apps.read_namespaced_deployment("sick", namespace)
        return dep if dep.status.observed_generation == 1 and dep.status.updated_replicas == 2 else None

    dep = wait_for(settled, message="unready rollout settled")
    assert not dep.status.ready_replicas
    assert not dep.status.available_replicas
    assert dep.status.unavailable_replicas == 2
    available = {c.type: c for c in dep.status.conditions}["Available"]
    assert available.status == "False"
    assert available.reason == "MinimumReplicasUnavailable"

    apps.patch_namespaced_deployment("sick", namespace, {"metadata": {"annotations": {"simulation.example.com/unready": None}}})
    dep = wait_for(lambda: rolled_out(apps, namespace, "sick"), message="ready once the annotation is gone")
    assert dep.status.ready_replicas == 2


def test_deployment_scale_subresource(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment_body("scaled", replicas=2))
    wait_for(lambda: rolled_out(apps, namespace, "scaled"), message="initial rollout")
    scale = apps.read_namespaced_deployment_scale("scaled", namespace)
    assert scale.kind == "Scale"
    assert scale.api_version == "autoscaling/v1"
    assert scale.spec.replicas == 2
    assert scale.status.replicas == 2
    assert scale.status.selector == "app=scaled"

    patched = apps.patch_namespaced_deployment_scale("scaled", namespace, {"spec": {"replicas": 5}})
    assert patched.spec.replicas == 5
    dep = wait_for(lambda: rolled_out(apps, namespace, "scaled"), message="rollout after scaling")
    assert dep.spec.replicas == 5
    assert dep.metadata.generation == 2
    assert apps.read_namespaced_deployment_scale("scaled", namespace).status.replicas == 5


# -- CRDs ------------------------------------------------------------------------------------


def crd_body(group: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                        }
                    },
                }
            ],
        },
    }


def test_crd_lifecycle(api_client: client.ApiClient, custom: client.CustomObjectsApi, namespace: str) -> None:
    ext = client.ApiextensionsV1Api(api_client)
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    name = f"widgets.{group}"
    created = ext.create_custom_resource_definition(crd_body(group))
    assert created.spec.names.singular == "widget"
    assert created.spec.names.list_kind == "WidgetList"

    def established() -> Any:
        crd = ext.read_custom_resource_definition(name)
        conds = {c.type: c.status for c in (crd.status.conditions if crd.status else None) or []}
        return crd if conds.get("Established") == "True" and conds.get("NamesAccepted") == "True" else None

    crd = wait_for(established, message="CRD established")
    accepted = crd.status.accepted_names
    assert (accepted.plural, accepted.singular, accepted.kind, accepted.list_kind, accepted.short_names) == (
        "widgets",
        "widget",
        "Widget",
        "WidgetList",
        ["wd"],
    )
    assert crd.status.stored_versions == ["v1"]
    reasons = {c.type: c.reason for c in crd.status.conditions}
    assert reasons == {"NamesAccepted": "NoConflicts", "Established": "InitialNamesAccepted"}

    for i in range(3):
        custom.create_namespaced_custom_object(
            group,
            "v1",
            namespace,
            "widgets",
            {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": f"w{i}"}, "spec": {"n": i}},
        )
    custom.patch_namespaced_custom_object(group, "v1", namespace, "widgets", "w0", {"metadata": {"finalizers": [HOLD]}})

    ext.delete_custom_resource_definition(name)
    deleting = ext.read_custom_resource_definition(name)
    assert deleting.metadata.deletion_timestamp is not None
    assert "customresourcecleanup.apiextensions.k8s.io" in deleting.metadata.finalizers

    def remaining() -> list[str]:
        return sorted(
            w["metadata"]["name"] for w in as_dict(custom.list_namespaced_custom_object(group, "v1", namespace, "widgets"))["items"]
        )

    wait_for(lambda: remaining() == ["w0"], message="unheld custom resources deleted")
    held = as_dict(custom.get_namespaced_custom_object(group, "v1", namespace, "widgets", "w0"))
    assert held["metadata"]["deletionTimestamp"]
    assert ext.read_custom_resource_definition(name).metadata.deletion_timestamp is not None

    custom.patch_namespaced_custom_object(group, "v1", namespace, "widgets", "w0", {"metadata": {"finalizers": None}})
    wait_for(lambda: gone(lambda: ext.read_custom_resource_definition(name)), message="CRD gone after its resources")
    with pytest.raises(client.ApiException) as info:
        custom.list_namespaced_custom_object(group, "v1", namespace, "widgets")
    assert info.value.status == 404
