"""Unit tests for ``devcluster.fieldmanagement`` (server-side apply and managedFields).

Behaviours covered:

* FieldsV1 <-> path-set round trip (``"."`` on owned inner nodes, ``k:``/``v:`` elements).
* Create via apply: entry shape, labels as ``f:``, containers as ``k:{"name":..}``, finalizers as
  ``v:``, map-list keys defaulted (ports ``protocol: TCP``), server-owned paths never recorded.
* Re-applying an identical config returns an object equal to the live one (time unchanged).
* Conflicts with another applier and with an Update manager: kube's message/causes text, the
  grouped multi-conflict message, no conflict when the value is unchanged (shared ownership).
* ``force`` transfers ownership; co-owned fields survive when one owner drops them.
* Dropping a field / list item from the applied config removes it from the object, unless another
  manager owns it; map-lists merge by key, sets by value, atomic lists replace whole.
* ``reset_fields``: status ignored on the main resource, spec/metadata ignored on status.
* ``record_update``: create records everything, changes move ownership, removals leave every set,
  struct nodes are not recorded, time only moves when the manager changed something,
  subresource entries are distinct, client-supplied managedFields replace (``[]`` clears).
* Inputs are never mutated.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from devcluster.fieldmanagement import (
    ApplyConflict,
    FieldConflict,
    apply,
    field_path_string,
    fields_to_set,
    record_update,
    set_to_fields,
)
from devcluster.structure import builtin_structure

DEPLOYMENTS = builtin_structure("apps", "deployments")
CONFIGMAPS = builtin_structure("", "configmaps")
T1, T2, T3 = "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", "2024-01-01T00:00:03Z"


def deployment(replicas: int = 1, image: str = "nginx", **extra_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
            **extra_spec,
        },
    }


def configmap(data: dict[str, str] | None = None, **metadata: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default", **metadata}}
    if data is not None:
        obj["data"] = data
    return obj


def with_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """What storage adds: uid/resourceVersion/creationTimestamp."""
    out = copy.deepcopy(obj)
    out["metadata"].update({"uid": "u-1", "resourceVersion": "1", "creationTimestamp": T1, "generation": 1})
    return out


def deploy_apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str = "mgr", **kw: Any) -> dict[str, Any]:
    kw.setdefault("force", False)
    kw.setdefault("now", T2)
    return apply(live, config, manager=manager, structure=DEPLOYMENTS, api_version="apps/v1", **kw)


def cm_apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str = "mgr", **kw: Any) -> dict[str, Any]:
    kw.setdefault("force", False)
    kw.setdefault("now", T2)
    return apply(live, config, manager=manager, structure=CONFIGMAPS, api_version="v1", **kw)


def cm_update(old: dict[str, Any] | None, new: dict[str, Any], manager: str = "editor", **kw: Any) -> dict[str, Any]:
    kw.setdefault("now", T2)
    return record_update(old, new, manager=manager, structure=CONFIGMAPS, api_version="v1", **kw)


def entries(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"].get("managedFields", [])}


def owned(obj: dict[str, Any], manager: str, operation: str = "Apply") -> set[tuple[str, ...]]:
    return fields_to_set(entries(obj)[(manager, operation)]["fieldsV1"])


# --------------------------------------------------------------------------------------------


def test_fields_round_trip() -> None:
    fields = {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:finalizers": {'v:"a/b"': {}}},
        "f:spec": {
            "f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}}},
            "f:replicas": {},
        },
    }
    paths = fields_to_set(fields)
    assert ("f:metadata", "f:labels") in paths
    assert ("f:metadata",) not in paths
    assert ("f:spec", "f:containers", 'k:{"name":"app"}') in paths
    assert set_to_fields(paths) == fields
    assert fields_to_set(set_to_fields(paths)) == paths
    assert set_to_fields(set()) == {}


def test_field_path_strings() -> None:
    assert field_path_string(("f:spec", "f:replicas")) == ".spec.replicas"
    assert field_path_string(("f:spec", "f:containers", 'k:{"name":"app"}', "f:image")) == '.spec.containers[name="app"].image'
    assert field_path_string(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert field_path_string(("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')) == '.ports[containerPort=80,protocol="TCP"]'


def test_create_via_apply_records_entry() -> None:
    config = deployment()
    config["metadata"]["finalizers"] = ["example.com/f"]
    config["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    obj = deploy_apply(None, config, now=T1)

    (entry,) = obj["metadata"]["managedFields"]
    assert list(entry) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
    assert entry["manager"] == "mgr" and entry["operation"] == "Apply" and entry["apiVersion"] == "apps/v1"
    assert entry["time"] == T1 and entry["fieldsType"] == "FieldsV1"
    f = entry["fieldsV1"]
    assert f["f:metadata"] == {"f:labels": {"f:app": {}}, "f:finalizers": {'v:"example.com/f"': {}}}
    container = f["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert container == {
        ".": {},
        "f:image": {},
        "f:name": {},
        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}},
    }
    assert f["f:spec"]["f:replicas"] == {}
    assert "f:apiVersion" not in f and "f:kind" not in f and "f:name" not in f["f:metadata"]
    assert obj["spec"] == config["spec"]
    assert obj["metadata"]["name"] == "web"


def test_reapply_identical_returns_equal_object() -> None:
    live = with_server_fields(deploy_apply(None, deployment(), now=T1))
    again = deploy_apply(live, deployment(), now=T3)
    assert again == live
    assert entries(again)[("mgr", "Apply")]["time"] == T1


def test_apply_keeps_server_owned_fields_from_live() -> None:
    live = with_server_fields(deploy_apply(None, deployment(), now=T1))
    config = deployment(replicas=3)
    config["metadata"].update({"uid": "other", "resourceVersion": "99", "managedFields": [{"manager": "x"}]})
    obj = deploy_apply(live, config)
    assert obj["metadata"]["uid"] == "u-1" and obj["metadata"]["resourceVersion"] == "1"
    assert obj["spec"]["replicas"] == 3
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["mgr"]
    assert entries(obj)[("mgr", "Apply")]["time"] == T2


def test_conflict_with_other_applier() -> None:
    live = deploy_apply(None, deployment(replicas=1), manager="alice", now=T1)
    with pytest.raises(ApplyConflict) as caught:
        deploy_apply(live, deployment(replicas=2), manager="bob")
    err = caught.value
    assert err.conflicts == [FieldConflict("alice", "apps/v1", ".spec.replicas", "Apply")]
    assert err.message() == 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas'
    (cause,) = err.causes()
    assert (cause.reason, cause.message, cause.field) == ("FieldManagerConflict", 'conflict with "alice"', ".spec.replicas")


def test_conflict_with_update_manager() -> None:
    created = record_update(None, deployment(), manager="kubectl-create", structure=DEPLOYMENTS, api_version="apps/v1", now=T1)
    with pytest.raises(ApplyConflict) as caught:
        deploy_apply(created, deployment(replicas=5))
    assert caught.value.message() == 'Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas'
    assert caught.value.causes()[0].message == 'conflict with "kubectl-create" using apps/v1'

    with pytest.raises(ApplyConflict) as caught:
        deploy_apply(created, deployment(replicas=5, image="redis"))
    assert caught.value.message() == (
        'Apply failed with 2 conflicts: conflicts with "kubectl-create" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="app"].image'
    )
    assert [c.field for c in caught.value.causes()] == [".spec.replicas", '.spec.template.spec.containers[name="app"].image']


def test_force_transfers_ownership() -> None:
    live = deploy_apply(None, deployment(replicas=1), manager="alice", now=T1)
    obj = deploy_apply(live, deployment(replicas=2), manager="bob", force=True)
    assert obj["spec"]["replicas"] == 2
    assert ("f:spec", "f:replicas") not in owned(obj, "alice")
    assert ("f:spec", "f:replicas") in owned(obj, "bob")
    assert ("f:spec", "f:selector") in owned(obj, "alice")  # shared, unchanged (a LabelSelector is atomic)
    assert entries(obj)[("alice", "Apply")]["time"] == T1  # losing fields does not bump time


def test_equal_values_are_shared_without_conflict() -> None:
    live = deploy_apply(None, deployment(), manager="alice", now=T1)
    obj = deploy_apply(live, deployment(), manager="bob")
    assert obj["spec"] == live["spec"]
    assert owned(obj, "alice") == owned(obj, "bob")
    # kube sorts entries by operation, time, manager; bob's apply changed nothing, so it has no time
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["bob", "alice"]
    assert "time" not in obj["metadata"]["managedFields"][0]


def test_dropping_a_field_removes_it_unless_co_owned() -> None:
    live = cm_apply(None, configmap({"a": "1", "b": "2"}), manager="alice", now=T1)
    obj = cm_apply(live, configmap({"a": "1"}), manager="alice")
    assert obj["data"] == {"a": "1"}
    assert owned(obj, "alice") == {("f:data",), ("f:data", "f:a")} - {("f:data",)} | {("f:data", "f:a")}

    shared = cm_apply(live, configmap({"b": "2"}), manager="bob")
    obj = cm_apply(shared, configmap({"a": "1"}), manager="alice")
    assert obj["data"] == {"a": "1", "b": "2"}
    assert owned(obj, "bob") == {("f:data", "f:b")}
    assert owned(obj, "alice") == {("f:data", "f:a")}


def test_dropping_field_owned_by_update_manager_is_kept() -> None:
    live = cm_apply(None, configmap({"a": "1"}), manager="alice", now=T1)
    edited = cm_update(live, configmap({"a": "1", "b": "2"}) | {"metadata": live["metadata"]})
    obj = cm_apply(edited, configmap({"c": "3"}), manager="alice")
    assert obj["data"] == {"b": "2", "c": "3"}


def test_removing_list_items() -> None:
    two = deployment()
    two["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    two["metadata"]["finalizers"] = ["a", "b"]
    live = deploy_apply(None, two, now=T1)
    one = deployment()
    one["metadata"]["finalizers"] = ["a"]
    obj = deploy_apply(live, one)
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "nginx"}]
    assert obj["metadata"]["finalizers"] == ["a"]
    assert ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"sidecar"}') not in owned(obj, "mgr")


def test_list_semantics_on_merge() -> None:
    live = deploy_apply(None, deployment(), manager="alice", now=T1)
    extra: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["x"]},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy", "args": ["-v"]}]}}},
    }
    obj = deploy_apply(live, extra, manager="bob")
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["app", "sidecar"]
    assert obj["spec"]["replicas"] == 1

    extra["spec"]["template"]["spec"]["containers"][0]["args"] = ["-q"]  # atomic list: replaced whole
    again = deploy_apply(obj, extra, manager="bob")
    assert again["spec"]["template"]["spec"]["containers"][1]["args"] == ["-q"]
    assert ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"sidecar"}', "f:args") in owned(again, "bob")


def test_reset_fields_status_and_spec() -> None:
    live = with_server_fields(deploy_apply(None, deployment(), now=T1))
    live["status"] = {"replicas": 1}
    config = deployment(replicas=2) | {"status": {"replicas": 7}}
    obj = deploy_apply(live, config, reset_fields=frozenset({"status"}))
    assert obj["status"] == {"replicas": 1}
    assert obj["spec"]["replicas"] == 2
    assert not any(p[0] == "f:status" for p in owned(obj, "mgr"))

    status = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 9},
        "status": {"replicas": 3},
    }
    obj2 = deploy_apply(obj, status, manager="ctrl", reset_fields=frozenset({"spec", "metadata"}), subresource="status", now=T3)
    assert obj2["spec"]["replicas"] == 2 and obj2["status"] == {"replicas": 3}
    ctrl = next(e for e in obj2["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert ctrl["subresource"] == "status" and list(ctrl)[-1] == "subresource"
    assert fields_to_set(ctrl["fieldsV1"]) == {("f:status", "f:replicas")}


def test_record_update_create_change_and_removal() -> None:
    created = cm_update(None, configmap({"a": "1", "b": "2"}, labels={"x": "y"}), manager="creator", now=T1)
    (entry,) = created["metadata"]["managedFields"]
    assert entry["operation"] == "Update" and entry["time"] == T1
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}}

    new = copy.deepcopy(created)
    new["data"] = {"a": "changed"}
    del new["metadata"]["managedFields"]
    edited = cm_update(created, new, manager="editor")
    assert owned(edited, "creator", "Update") == {("f:data",), ("f:metadata", "f:labels"), ("f:metadata", "f:labels", "f:x")}
    assert owned(edited, "editor", "Update") == {("f:data", "f:a")}
    assert entries(edited)[("creator", "Update")]["time"] == T1
    assert edited["data"] == {"a": "changed"}


def test_record_update_noop_keeps_entries_and_time() -> None:
    created = cm_update(None, configmap({"a": "1"}), manager="creator", now=T1)
    again = cm_update(created, copy.deepcopy(created), manager="creator", now=T3)
    assert again == created
    other = cm_update(created, copy.deepcopy(created), manager="someone", now=T3)
    assert other == created


def test_record_update_removal_leaves_every_set() -> None:
    live = cm_apply(None, configmap({"a": "1", "b": "2"}), manager="alice", now=T1)
    new = copy.deepcopy(live)
    new["data"] = {"a": "1"}
    obj = cm_update(live, new)
    assert owned(obj, "alice") == {("f:data", "f:a")}
    assert ("editor", "Update") not in entries(obj)  # nothing added or changed: no entry


def test_record_update_struct_nodes_not_recorded() -> None:
    created = record_update(None, deployment(), manager="c", structure=DEPLOYMENTS, api_version="apps/v1", now=T1)
    f = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert "." not in f["f:spec"] and "." not in f["f:metadata"]
    assert f["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert f["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}'] == {".": {}, "f:image": {}, "f:name": {}}


def test_subresource_update_is_separate_entry() -> None:
    created = record_update(None, deployment(), manager="c", structure=DEPLOYMENTS, api_version="apps/v1", now=T1)
    new = copy.deepcopy(created)
    new["status"] = {"replicas": 1}
    obj = record_update(created, new, manager="c", structure=DEPLOYMENTS, api_version="apps/v1", now=T2, subresource="status")
    assert [(e["manager"], e.get("subresource", "")) for e in obj["metadata"]["managedFields"]] == [("c", ""), ("c", "status")]
    assert obj["metadata"]["managedFields"][0]["time"] == T1


def test_client_supplied_managed_fields() -> None:
    live = cm_apply(None, configmap({"a": "1"}), manager="alice", now=T1)
    custom = [
        {
            "manager": "bob",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = custom
    obj = cm_update(live, new)
    assert obj["metadata"]["managedFields"] == custom

    cleared = copy.deepcopy(live)
    cleared["metadata"]["managedFields"] = []
    assert "managedFields" not in cm_update(live, cleared)["metadata"]
    cleared["metadata"]["managedFields"] = [{}]
    assert "managedFields" not in cm_update(live, cleared)["metadata"]

    absent = copy.deepcopy(live)
    del absent["metadata"]["managedFields"]
    assert cm_update(live, absent) == live

    invalid = copy.deepcopy(live)
    invalid["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]
    assert cm_update(live, invalid) == live


def test_inputs_not_mutated() -> None:
    live = deploy_apply(None, deployment(), manager="alice", now=T1)
    config = deployment(replicas=4)
    live_copy, config_copy = copy.deepcopy(live), copy.deepcopy(config)
    result = deploy_apply(live, config, manager="bob", force=True)
    result["spec"]["template"]["spec"]["containers"][0]["image"] = "mutated"
    assert live == live_copy and config == config_copy

    new = copy.deepcopy(result)
    new_copy = copy.deepcopy(new)
    record_update(live, new, manager="x", structure=DEPLOYMENTS, api_version="apps/v1", now=T3)
    assert new == new_copy and live == live_copy


def test_empty_apply_removes_entry_and_fields() -> None:
    live = cm_apply(None, configmap({"a": "1"}), manager="alice", now=T1)
    obj = cm_apply(live, configmap(), manager="alice")
    assert "data" not in obj
    assert "managedFields" not in obj["metadata"]


def test_emptied_list_in_config_is_kept_and_reapply_is_noop() -> None:
    live = deploy_apply(None, deployment(), now=T1)
    config = deployment()
    config["spec"]["template"]["spec"]["containers"] = []
    obj = deploy_apply(live, config)
    assert obj["spec"]["template"]["spec"]["containers"] == []
    assert deploy_apply(obj, config, now=T3) == obj
