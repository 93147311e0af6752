"""devcluster.statefulsets: the pure parts of the StatefulSet simulation, and the claims' table row.

Behaviours covered:
- revision names: ``<name>-<hash>`` in kube's safe alphabet, the same for the same template, another for
  another template, unchanged by replicas or annotations;
- claim names ``<template>-<statefulset>-<ordinal>``, ordinal-major as kube creates them;
- owner references under the retention policy (kube's updateClaimOwnerRefForSetAndPod without pods):
  ``whenDeleted: Delete`` adds one controller reference to the StatefulSet (kept, not duplicated),
  ``Retain`` drops ours and keeps the others; a claim controlled by another object is never adopted (and
  loses a reference to us under a Delete policy); a reference to an earlier StatefulSet of the same name
  leaves the claim alone;
- ``kubectl get pvc`` cells: Pending without volume (no capacity or access modes), Bound with them, and
  Terminating once deleted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from devcluster.catalog import Catalog
from devcluster.printing import columns_for
from devcluster.statefulsets import claim_names, revision_name, wanted_owner_references

UID = "11111111-2222-3333-4444-555555555555"
OURS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": UID, "controller": True, "blockOwnerDeletion": True}
OTHER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "holder", "uid": "cm-uid", "controller": True}


def sts(
    *, when_deleted: str = "Delete", image: str = "postgres:16", replicas: int = 1, templates: tuple[str, ...] = ("data",)
) -> dict[str, Any]:
    return {
        "metadata": {"name": "db", "namespace": "ns", "uid": UID, "annotations": {"a": image}},
        "spec": {
            "replicas": replicas,
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": when_deleted, "whenScaled": "Retain"},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "pg", "image": image}]}},
            "volumeClaimTemplates": [{"metadata": {"name": t}} for t in templates],
        },
    }


def claim(*refs: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "data-db-0", "namespace": "ns"}
    if refs:
        meta["ownerReferences"] = list(refs)
    return {"metadata": meta}


def test_revision_names_follow_the_template() -> None:
    first = revision_name(sts())
    name, _, suffix = first.partition("-")
    assert name == "db" and len(suffix) == 10 and set(suffix) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert revision_name(sts()) == first
    assert revision_name(sts(replicas=3)) == first
    other = sts(image="postgres:17")
    other["metadata"]["annotations"] = sts()["metadata"]["annotations"]
    assert revision_name(other) != first


def test_claim_names() -> None:
    assert [name for _, name in claim_names(sts(templates=("data", "wal")), range(2))] == ["data-db-0", "wal-db-0", "data-db-1", "wal-db-1"]
    assert claim_names(sts(templates=()), range(3)) == []


def test_delete_policy_adds_one_controller_reference() -> None:
    assert wanted_owner_references(claim(), sts()) == [OURS]
    assert wanted_owner_references(claim(OURS), sts()) == [OURS]
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "note", "uid": "n"}
    assert wanted_owner_references(claim(plain), sts()) == [plain, OURS]
    not_controller = {**OURS, "controller": False}
    assert wanted_owner_references(claim(not_controller), sts()) == [OURS]


def test_retain_policy_drops_our_reference_only() -> None:
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "note", "uid": "n"}
    assert wanted_owner_references(claim(), sts(when_deleted="Retain")) == []
    assert wanted_owner_references(claim(OURS, plain), sts(when_deleted="Retain")) == [plain]
    assert wanted_owner_references(claim(OTHER), sts(when_deleted="Retain")) == [OTHER]


def test_claims_of_other_controllers_are_not_adopted() -> None:
    assert wanted_owner_references(claim(OTHER), sts()) == [OTHER]
    assert wanted_owner_references(claim(OTHER, OURS), sts()) == [OTHER]


def test_reference_to_an_earlier_statefulset_is_left_alone() -> None:
    stale = {**OURS, "uid": "older"}
    assert wanted_owner_references(claim(stale), sts()) == [stale]
    assert wanted_owner_references(claim(stale), sts(when_deleted="Retain")) == [stale]


def test_claim_table_cells() -> None:
    columns = columns_for(Catalog().builtin("", "persistentvolumeclaims"))
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def row(obj: dict[str, Any]) -> dict[str, Any]:
        obj["metadata"].setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
        return {c.name: c.cell(obj, now) for c in columns}

    spec = {"accessModes": ["ReadWriteOnce", "ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"}
    pending = row({"metadata": {"name": "c"}, "spec": dict(spec), "status": {"phase": "Pending"}})
    assert [
        pending[k] for k in ("Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "VolumeMode")
    ] == [
        "Pending",
        "",
        "",
        "",
        "",
        "<unset>",
        "Filesystem",
    ]
    status = {"phase": "Bound", "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    bound = row({"metadata": {"name": "c"}, "spec": {**spec, "volumeName": "pv", "storageClassName": "standard"}, "status": status})
    assert [bound[k] for k in ("Status", "Volume", "Capacity", "Access Modes", "StorageClass")] == [
        "Bound",
        "pv",
        "2Gi",
        "RWO,RWX",
        "standard",
    ]
    deleting = row({"metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": {"phase": "Bound"}})
    assert deleting["Status"] == "Terminating"
