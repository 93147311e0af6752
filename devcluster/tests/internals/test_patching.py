"""Unit tests for devcluster.patching (the PATCH body formats kube-apiserver accepts).

Behaviours covered:

* ``merge_patch`` (the shared ``mergepatch`` leaf; RFC 7386's examples and its copying are tested in
  the repository's ``tests/libs/test_mergepatch.py``) on a Deployment: untouched fields kept, labels merged, lists replaced.
* ``json_patch``: RFC 6902 add/remove/replace/move/copy/test, ``-`` append, the whole-document
  path, a failing ``test`` / missing path / bad index / unknown op -> 422 (but ``replace`` of a
  missing object key adds it, as kube's json-patch v4 does), a body that is not a
  list of operation objects -> 400, ``null`` body is a no-op, inputs not mutated.
* ``strategic_merge_patch`` on a Deployment (``builtin_structure("apps", "deployments")``):
  containers and env merged by name, new items placed as apimachinery places them, nested
  null deletion, atomic lists (tolerations, args) replaced, ``metadata.finalizers`` set union
  and ``$deleteFromPrimitiveList``, labels merged per key, ``$patch: replace`` / ``delete`` in maps
  (top level and nested), list item ``$patch: delete`` and ``$patch: replace``, ``$setElementOrder``
  (containers, env, finalizers), ``$retainKeys``, unknown / ``merge`` directives -> 500 (a plain
  error in kube, not one of mergepatch's sentinels),
  non-object patch -> 400, ``null`` patch no-op, directive keys never left in the result, inputs
  not mutated.
* Conformance cases ported from apimachinery's ``strategicpatch/patch_test.go`` (ordering of
  merged lists, duplicate handling, ``$setElementOrder`` validation, missing merge key, delete
  lists on merging and non-merging lists, three-way style patches applied to a live object).
* ``PatchError`` carries ``code`` and ``message``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from devcluster.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from devcluster.structure import ATOMIC, ListSemantics, Path, builtin_structure

DEPLOYMENTS = builtin_structure("apps", "deployments")


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "tier": "frontend"},
            "finalizers": ["a.example.com/one", "b.example.com/two"],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.25",
                            "args": ["--port", "80"],
                            "env": [
                                {"name": "A", "value": "1"},
                                {"name": "B", "value": "2"},
                            ],
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        },
                        {"name": "sidecar", "image": "busybox", "command": ["sleep", "inf"]},
                    ],
                    "tolerations": [{"key": "k1", "operator": "Exists"}],
                    "nodeSelector": {"disk": "ssd"},
                },
            },
        },
    }


def _smp(target: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a strategic merge patch on a Deployment, checking that neither input is mutated."""
    target_before = copy.deepcopy(target)
    patch_before = copy.deepcopy(patch)
    result = strategic_merge_patch(target, patch, DEPLOYMENTS)
    assert target == target_before
    assert patch == patch_before
    return result


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return containers


def _pod_spec_patch(spec: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": spec}}}


def _walk_keys(value: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            keys.append(key)
            keys.extend(_walk_keys(item))
    elif isinstance(value, list):
        for item in value:
            keys.extend(_walk_keys(item))
    return keys


# ---------------------------------------------------------------------------------------------
# PatchError
# ---------------------------------------------------------------------------------------------


def test_patch_error_carries_code_and_message() -> None:
    error = PatchError(422, "boom")
    assert error.code == 422
    assert error.message == "boom"
    assert str(error) == "boom"
    assert isinstance(error, Exception)


# ---------------------------------------------------------------------------------------------
# RFC 7386 merge patch
# ---------------------------------------------------------------------------------------------


def test_merge_patch_on_object_keeps_untouched_fields_and_replaces_lists() -> None:
    target = _deployment()
    result = merge_patch(target, {"metadata": {"labels": {"tier": None, "new": "x"}}, "spec": {"template": {"spec": {"tolerations": []}}}})
    assert result["metadata"]["labels"] == {"app": "web", "new": "x"}
    assert result["spec"]["template"]["spec"]["tolerations"] == []
    assert _containers(result) == _containers(target)
    assert target == _deployment()


# ---------------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# ---------------------------------------------------------------------------------------------


def test_json_patch_add_remove_replace() -> None:
    target = {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1, 2, 3]}}
    ops = [
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "remove", "path": "/metadata/labels/a"},
        {"op": "replace", "path": "/spec/list/1", "value": 20},
        {"op": "add", "path": "/spec/list/-", "value": 4},
        {"op": "add", "path": "/spec/list/0", "value": 0},
    ]
    before = copy.deepcopy(target)
    ops_before = copy.deepcopy(ops)
    assert json_patch(target, ops) == {"metadata": {"labels": {"b": "2"}}, "spec": {"list": [0, 1, 20, 3, 4]}}
    assert target == before
    assert ops == ops_before


def test_json_patch_move_and_copy() -> None:
    target = {"a": {"x": 1}, "b": {}}
    assert json_patch(target, [{"op": "move", "from": "/a/x", "path": "/b/y"}]) == {"a": {}, "b": {"y": 1}}
    assert json_patch(target, [{"op": "copy", "from": "/a", "path": "/c"}]) == {"a": {"x": 1}, "b": {}, "c": {"x": 1}}
    assert target == {"a": {"x": 1}, "b": {}}


def test_json_patch_test_op_passes() -> None:
    target = {"spec": {"replicas": 2}}
    ops = [{"op": "test", "path": "/spec/replicas", "value": 2}, {"op": "replace", "path": "/spec/replicas", "value": 3}]
    assert json_patch(target, ops) == {"spec": {"replicas": 3}}


def test_json_patch_replace_whole_document() -> None:
    assert json_patch({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}]) == {"b": 2}


def test_json_patch_result_does_not_alias_operation_values() -> None:
    ops = [{"op": "add", "path": "/x", "value": {"nested": [1]}}]
    result = json_patch({}, ops)
    result["x"]["nested"].append(2)
    assert ops[0]["value"] == {"nested": [1]}


def test_json_patch_replace_of_a_missing_object_key_adds_it() -> None:
    # evanphx/json-patch v4 (kube's): replace checks only that the parent exists
    assert json_patch({"spec": {"a": 1}}, [{"op": "replace", "path": "/spec/missing", "value": 2}]) == {"spec": {"a": 1, "missing": 2}}


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/spec/replicas", "value": 5}],
        [{"op": "remove", "path": "/spec/missing"}],
        [{"op": "replace", "path": "/spec/list/5", "value": 1}],
        [{"op": "add", "path": "/nope/deeper", "value": 1}],
        [{"op": "add", "path": "/spec/list/7", "value": 1}],
        [{"op": "remove", "path": "/spec/list/3"}],
        [{"op": "move", "from": "/spec/missing", "path": "/spec/x"}],
        [{"op": "frobnicate", "path": "/spec"}],
        [{"path": "/spec"}],
    ],
)
def test_json_patch_failing_operation_is_422(ops: list[dict[str, Any]]) -> None:
    target = {"spec": {"replicas": 2, "list": [1, 2]}}
    with pytest.raises(PatchError) as info:
        json_patch(target, ops)
    assert info.value.code == 422
    assert info.value.message
    assert target == {"spec": {"replicas": 2, "list": [1, 2]}}


def test_json_patch_failed_test_stops_whole_patch() -> None:
    target = {"a": 1}
    with pytest.raises(PatchError) as info:
        json_patch(target, [{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 1}])
    assert info.value.code == 422
    assert target == {"a": 1}


@pytest.mark.parametrize(
    ("ops", "fragment"),
    [
        (
            {"op": "add", "path": "/a", "value": 1},
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        ),
        ("nonsense", "cannot unmarshal string"),
        (5, "cannot unmarshal number"),
        ([1, 2], "cannot unmarshal number into Go value of type jsonpatch.Operation"),
        (["op"], "cannot unmarshal string into Go value of type jsonpatch.Operation"),
        ([[{"op": "add"}]], "cannot unmarshal array"),
    ],
)
def test_json_patch_malformed_body_is_400(ops: Any, fragment: str) -> None:
    with pytest.raises(PatchError) as info:
        json_patch({"a": 1}, ops)
    assert info.value.code == 400
    assert fragment in info.value.message


def test_json_patch_null_and_empty_body_are_no_ops() -> None:
    target = {"a": {"b": 1}}
    assert json_patch(target, None) == target
    assert json_patch(target, []) == target
    assert json_patch(target, []) is not target


# ---------------------------------------------------------------------------------------------
# Strategic merge patch on a Deployment
# ---------------------------------------------------------------------------------------------


def test_smp_scalar_and_nested_map_merge() -> None:
    result = _smp(_deployment(), {"spec": {"replicas": 5, "strategy": {"rollingUpdate": {"maxSurge": 3}}}})
    assert result["spec"]["replicas"] == 5
    assert result["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 0}}
    assert _containers(result) == _containers(_deployment())


def test_smp_null_deletes_keys_at_any_depth() -> None:
    result = _smp(
        _deployment(),
        {
            "metadata": {"labels": {"tier": None}},
            "spec": {"strategy": {"rollingUpdate": None}, "template": {"spec": {"nodeSelector": None}}},
        },
    )
    assert result["metadata"]["labels"] == {"app": "web"}
    assert result["spec"]["strategy"] == {"type": "RollingUpdate"}
    assert "nodeSelector" not in result["spec"]["template"]["spec"]


def test_smp_null_for_missing_key_is_ignored_and_nulls_in_new_values_dropped() -> None:
    result = _smp(_deployment(), {"spec": {"paused": None, "minReadySeconds": 5, "newBlock": {"a": 1, "b": None}}})
    assert "paused" not in result["spec"]
    assert result["spec"]["minReadySeconds"] == 5
    assert result["spec"]["newBlock"] == {"a": 1}


def test_smp_labels_merge_per_key() -> None:
    result = _smp(_deployment(), {"metadata": {"labels": {"version": "v2", "app": "web2"}}})
    assert result["metadata"]["labels"] == {"app": "web2", "tier": "frontend", "version": "v2"}


def test_smp_updates_container_by_name_keeping_others() -> None:
    result = _smp(_deployment(), _pod_spec_patch({"containers": [{"name": "app", "image": "nginx:1.27"}]}))
    containers = _containers(result)
    assert [c["name"] for c in containers] == ["app", "sidecar"]
    assert containers[0]["image"] == "nginx:1.27"
    assert containers[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert containers[0]["args"] == ["--port", "80"]
    assert containers[1] == {"name": "sidecar", "image": "busybox", "command": ["sleep", "inf"]}


def test_smp_new_container_is_placed_as_apimachinery_places_it() -> None:
    # Without $setElementOrder, apimachinery's normalizeElementOrder puts patch items that are not
    # in the live list before the live-only items.
    result = _smp(_deployment(), _pod_spec_patch({"containers": [{"name": "logger", "image": "fluentbit"}]}))
    assert [c["name"] for c in _containers(result)] == ["logger", "app", "sidecar"]
    assert _containers(result)[0] == {"name": "logger", "image": "fluentbit"}


def test_smp_patch_order_wins_for_items_named_in_patch() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "sidecar", "image": "busybox:2"}, {"name": "app", "image": "nginx:2"}]})
    result = _smp(_deployment(), patch)
    assert [(c["name"], c["image"]) for c in _containers(result)] == [("sidecar", "busybox:2"), ("app", "nginx:2")]


def test_smp_env_merged_by_name_in_nested_list() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "app", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]}]})
    result = _smp(_deployment(), patch)
    env = _containers(result)[0]["env"]
    # B is updated in place; C (new) comes with the patch items, A (live only) keeps its place first.
    assert env == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]


def test_smp_env_value_from_replaced_by_null_deletion() -> None:
    target = _deployment()
    _containers(target)[0]["env"][0] = {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    patch = _pod_spec_patch({"containers": [{"name": "app", "env": [{"name": "A", "value": "x", "valueFrom": None}]}]})
    result = _smp(target, patch)
    assert _containers(result)[0]["env"][0] == {"name": "A", "value": "x"}


def test_smp_ports_merged_by_container_port() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "app", "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443}]}]})
    result = _smp(_deployment(), patch)
    assert _containers(result)[0]["ports"] == [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 443}]


def test_smp_atomic_lists_are_replaced() -> None:
    patch = _pod_spec_patch(
        {"tolerations": [{"key": "k2", "operator": "Exists"}], "containers": [{"name": "app", "args": ["--port", "8080"]}]}
    )
    result = _smp(_deployment(), patch)
    assert result["spec"]["template"]["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    assert _containers(result)[0]["args"] == ["--port", "8080"]


def test_smp_finalizers_set_union() -> None:
    result = _smp(_deployment(), {"metadata": {"finalizers": ["b.example.com/two", "c.example.com/three"]}})
    finalizers = result["metadata"]["finalizers"]
    assert sorted(finalizers) == ["a.example.com/one", "b.example.com/two", "c.example.com/three"]
    # apimachinery keeps live-only values in front of the patch values that follow them in live order.
    assert finalizers == ["a.example.com/one", "b.example.com/two", "c.example.com/three"]


def test_smp_finalizers_new_value_order_matches_apimachinery() -> None:
    result = _smp(_deployment(), {"metadata": {"finalizers": ["c.example.com/three"]}})
    assert result["metadata"]["finalizers"] == ["c.example.com/three", "a.example.com/one", "b.example.com/two"]


def test_smp_finalizers_duplicates_collapse() -> None:
    result = _smp(_deployment(), {"metadata": {"finalizers": ["a.example.com/one", "a.example.com/one"]}})
    assert result["metadata"]["finalizers"] == ["a.example.com/one", "b.example.com/two"]


def test_smp_delete_from_primitive_list() -> None:
    result = _smp(_deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/one", "not-there"]}})
    assert result["metadata"]["finalizers"] == ["b.example.com/two"]
    assert not any(k.startswith("$") for k in _walk_keys(result))


def test_smp_delete_from_primitive_list_with_additions_and_order() -> None:
    patch = {
        "metadata": {
            "$setElementOrder/finalizers": ["b.example.com/two", "c.example.com/three"],
            "$deleteFromPrimitiveList/finalizers": ["a.example.com/one"],
            "finalizers": ["c.example.com/three"],
        }
    }
    result = _smp(_deployment(), patch)
    assert result["metadata"]["finalizers"] == ["b.example.com/two", "c.example.com/three"]


def test_smp_delete_from_primitive_list_of_missing_list_adds_nothing() -> None:
    target = _deployment()
    del target["metadata"]["finalizers"]
    result = _smp(target, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}})
    assert "finalizers" not in result["metadata"]


def test_smp_delete_from_primitive_list_bad_key_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"metadata": {"$deleteFromPrimitiveList": ["x"]}})
    assert info.value.code == 400
    assert info.value.message == "invalid patch format of primitive list"


def test_smp_list_item_delete_directive() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "sidecar", "$patch": "delete"}]})
    result = _smp(_deployment(), patch)
    assert [c["name"] for c in _containers(result)] == ["app"]


def test_smp_list_item_delete_of_missing_item_is_noop() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "app", "env": [{"name": "Z", "$patch": "delete"}]}]})
    result = _smp(_deployment(), patch)
    assert _containers(result)[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]


def test_smp_list_item_delete_without_merge_key_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), _pod_spec_patch({"containers": [{"image": "x", "$patch": "delete"}]}))
    assert info.value.code == 400
    assert "does not contain declared merge key: name" in info.value.message


def test_smp_list_replace_directive() -> None:
    patch = _pod_spec_patch({"containers": [{"$patch": "replace"}, {"name": "only", "image": "alpine"}]})
    result = _smp(_deployment(), patch)
    assert _containers(result) == [{"name": "only", "image": "alpine"}]


def test_smp_list_replace_directive_alone_empties_list() -> None:
    patch = _pod_spec_patch({"containers": [{"name": "app", "env": [{"$patch": "replace"}]}]})
    result = _smp(_deployment(), patch)
    assert _containers(result)[0]["env"] == []


def test_smp_list_item_merge_directive_is_rejected_like_apimachinery() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), _pod_spec_patch({"containers": [{"$patch": "merge"}, {"name": "x"}]}))
    assert info.value.code == 400
    assert info.value.message == "merging lists cannot yet be specified in the patch"


def test_smp_list_item_unknown_directive_is_500() -> None:
    # mergepatch.ErrBadPatchType is not one of the sentinel errors kube maps to 4xx: a plain 500
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), _pod_spec_patch({"containers": [{"name": "app", "$patch": "explode"}]}))
    assert info.value.code == 500
    assert info.value.message == "unknown patch type: explode in map: map[$patch:explode name:app]"


def test_smp_map_replace_directive() -> None:
    patch = {"spec": {"strategy": {"$patch": "replace", "type": "Recreate"}}}
    result = _smp(_deployment(), patch)
    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_smp_map_replace_directive_on_labels() -> None:
    result = _smp(_deployment(), {"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert result["metadata"]["labels"] == {"only": "this"}


def test_smp_map_delete_directive_removes_field() -> None:
    result = _smp(_deployment(), {"spec": {"strategy": {"$patch": "delete"}}, "metadata": {"labels": {"$patch": "delete"}}})
    assert "strategy" not in result["spec"]
    assert "labels" not in result["metadata"]


def test_smp_map_delete_directive_for_missing_field_adds_nothing() -> None:
    result = _smp(_deployment(), {"metadata": {"annotations": {"$patch": "delete"}}})
    assert "annotations" not in result["metadata"]


def test_smp_map_replace_directive_for_missing_field_adds_rest() -> None:
    result = _smp(_deployment(), {"metadata": {"annotations": {"$patch": "replace", "a": "b"}}})
    assert result["metadata"]["annotations"] == {"a": "b"}


def test_smp_top_level_replace_and_delete() -> None:
    assert _smp(_deployment(), {"$patch": "replace", "kind": "Deployment"}) == {"kind": "Deployment"}
    assert _smp(_deployment(), {"$patch": "delete"}) == {}


@pytest.mark.parametrize("directive", ["merge", "explode", 3])
def test_smp_map_unknown_directive_is_500(directive: Any) -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"spec": {"strategy": {"$patch": directive, "type": "Recreate"}}})
    assert info.value.code == 500
    assert info.value.message.startswith("unknown patch type: ")
    assert "in map: map[$patch:" in info.value.message


def test_smp_unknown_directive_message_renders_like_go() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"spec": {"$patch": "bogus", "replicas": 3, "paused": False}})
    assert info.value.message == "unknown patch type: bogus in map: map[$patch:bogus paused:false replicas:3]"


def test_smp_set_element_order_for_containers() -> None:
    patch = _pod_spec_patch(
        {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "logger"}, {"name": "app"}],
            "containers": [{"name": "logger", "image": "fluentbit"}],
        }
    )
    result = _smp(_deployment(), patch)
    assert [c["name"] for c in _containers(result)] == ["sidecar", "logger", "app"]
    assert _containers(result)[1] == {"name": "logger", "image": "fluentbit"}


def test_smp_set_element_order_without_list_in_patch_only_reorders() -> None:
    patch = _pod_spec_patch({"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]})
    result = _smp(_deployment(), patch)
    assert [c["name"] for c in _containers(result)] == ["sidecar", "app"]
    assert _containers(result)[1] == _containers(_deployment())[0]


def test_smp_set_element_order_nested_env_with_deletion() -> None:
    patch = _pod_spec_patch(
        {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [
                {
                    "name": "app",
                    "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
                    "env": [{"name": "C", "value": "3"}, {"name": "B", "$patch": "delete"}],
                }
            ],
        }
    )
    result = _smp(_deployment(), patch)
    assert _containers(result)[0]["env"] == [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]
    assert not any(k.startswith("$") for k in _walk_keys(result))


def test_smp_set_element_order_mismatch_is_400() -> None:
    patch = _pod_spec_patch(
        {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "sidecar", "image": "x"}, {"name": "app", "image": "y"}],
        }
    )
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), patch)
    assert info.value.code == 400
    assert "doesn't match $setElementOrder list" in info.value.message


def test_smp_set_element_order_bad_key_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"metadata": {"$setElementOrder": ["x"]}})
    assert info.value.code == 400
    assert info.value.message == "invalid patch format of setElementOrder list"


def test_smp_set_element_order_for_new_list() -> None:
    target = _deployment()
    del _containers(target)[0]["env"]
    patch = _pod_spec_patch(
        {"containers": [{"name": "app", "$setElementOrder/env": [{"name": "X"}, {"name": "Y"}], "env": [{"name": "X"}, {"name": "Y"}]}]}
    )
    result = _smp(target, patch)
    assert _containers(result)[0]["env"] == [{"name": "X"}, {"name": "Y"}]


def test_smp_retain_keys_drops_unlisted_target_keys() -> None:
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = _smp(_deployment(), patch)
    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_smp_retain_keys_keeps_listed_keys_and_merges() -> None:
    patch = {"spec": {"strategy": {"$retainKeys": ["type", "rollingUpdate"], "rollingUpdate": {"maxSurge": 2}}}}
    result = _smp(_deployment(), patch)
    assert result["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}}


def test_smp_retain_keys_with_patch_key_not_listed_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}})
    assert info.value.code == 400
    assert info.value.message == "invalid patch format of retainKeys"


def test_smp_retain_keys_not_a_list_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"spec": {"strategy": {"$retainKeys": "type"}}})
    assert info.value.code == 400


def test_smp_directives_inside_new_values_are_resolved() -> None:
    patch = _pod_spec_patch(
        {
            "containers": [
                {
                    "name": "logger",
                    "image": "fluentbit",
                    "$setElementOrder/env": [{"name": "X"}],
                    "env": [{"name": "X", "value": "1"}, {"name": "GONE", "$patch": "delete"}],
                    "resources": {"$patch": "replace", "limits": {"cpu": "1"}},
                    "securityContext": {"$patch": "delete"},
                    "livenessProbe": None,
                }
            ],
            "affinity": {"$retainKeys": ["nodeAffinity"], "nodeAffinity": {"x": {"$patch": "delete"}, "y": 1}},
        }
    )
    result = _smp(_deployment(), patch)
    logger = _containers(result)[0]
    assert logger == {"name": "logger", "image": "fluentbit", "env": [{"name": "X", "value": "1"}], "resources": {"limits": {"cpu": "1"}}}
    assert result["spec"]["template"]["spec"]["affinity"] == {"nodeAffinity": {"y": 1}}
    assert not any(k.startswith("$") for k in _walk_keys(result))


def test_smp_type_change_replaces_value() -> None:
    result = _smp(_deployment(), {"spec": {"replicas": {"weird": True}, "strategy": "Recreate"}})
    assert result["spec"]["replicas"] == {"weird": True}
    assert result["spec"]["strategy"] == "Recreate"


def test_smp_list_of_maps_in_merging_list_without_merge_key_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), _pod_spec_patch({"containers": [{"image": "nginx"}]}))
    assert info.value.code == 400
    assert info.value.message == "map: map[image:nginx] does not contain declared merge key: name"


def test_smp_mixed_element_types_is_400() -> None:
    with pytest.raises(PatchError) as info:
        _smp(_deployment(), {"metadata": {"finalizers": [1]}})
    assert info.value.code == 400
    assert "list element types are not identical" in info.value.message


def test_smp_lists_of_lists_is_422() -> None:
    target = _deployment()
    target["metadata"]["finalizers"] = []
    with pytest.raises(PatchError) as info:
        _smp(target, {"metadata": {"finalizers": [["x"]]}})
    assert info.value.code == 422
    assert info.value.message == "lists of lists are not supported"


@pytest.mark.parametrize(
    ("patch", "kind"),
    [([{"spec": {}}], "array"), ("spec", "string"), (3, "number"), (True, "bool")],
)
def test_smp_non_object_patch_is_400(patch: Any, kind: str) -> None:
    with pytest.raises(PatchError) as info:
        strategic_merge_patch(_deployment(), patch, DEPLOYMENTS)
    assert info.value.code == 400
    assert info.value.message == f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def test_smp_null_and_empty_patch_are_no_ops() -> None:
    target = _deployment()
    assert strategic_merge_patch(target, None, DEPLOYMENTS) == target  # type: ignore[arg-type]
    result = _smp(target, {})
    assert result == target
    assert result is not target


def test_smp_result_shares_nothing_with_inputs() -> None:
    target = _deployment()
    patch = _pod_spec_patch({"containers": [{"name": "logger", "image": "x", "args": ["a"]}]})
    result = strategic_merge_patch(target, patch, DEPLOYMENTS)
    _containers(result)[0]["args"].append("b")
    for container in _containers(result):
        container["image"] = "mutated"
    result["metadata"]["labels"]["mutated"] = "yes"
    assert target == _deployment()
    assert patch == _pod_spec_patch({"containers": [{"name": "logger", "image": "x", "args": ["a"]}]})


def test_smp_services_ports_merge_by_port() -> None:
    services = builtin_structure("", "services")
    target = {"spec": {"ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}], "selector": {"app": "web"}}}
    result = strategic_merge_patch(target, {"spec": {"ports": [{"port": 80, "targetPort": 9090}], "selector": {"tier": "x"}}}, services)
    assert result["spec"]["ports"] == [{"port": 80, "targetPort": 9090, "protocol": "TCP"}]
    assert result["spec"]["selector"] == {"app": "web", "tier": "x"}


def test_smp_atomic_map_is_replaced() -> None:
    class AtomicSelector:
        def list_semantics(self, path: Path) -> ListSemantics:
            return ATOMIC

        def map_is_atomic(self, path: Path) -> bool:
            return path == ("spec", "selector")

        def is_string_map(self, path: Path) -> bool:
            return False

    target = {"spec": {"selector": {"a": "1", "b": "2"}, "other": {"a": "1"}}}
    result = strategic_merge_patch(target, {"spec": {"selector": {"c": "3", "d": None}, "other": {"c": "3"}}}, AtomicSelector())
    assert result == {"spec": {"selector": {"c": "3"}, "other": {"a": "1", "c": "3"}}}


# ---------------------------------------------------------------------------------------------
# Conformance with apimachinery's strategicpatch tests (MergeItem test type)
# ---------------------------------------------------------------------------------------------


class MergeItemStructure:
    """The patch metadata of apimachinery's ``MergeItem`` test struct."""

    def list_semantics(self, path: Path) -> ListSemantics:
        field = path[-1] if path else ""
        if field in ("mergingList", "retainKeysMergingList", "mergeItemPtr"):
            return ListSemantics("map", ("name",))
        if field == "mergingIntList":
            return ListSemantics("set")
        return ATOMIC

    def map_is_atomic(self, path: Path) -> bool:
        return bool(path) and path[-1] == "replacingItem"

    def is_string_map(self, path: Path) -> bool:
        return bool(path) and path[-1] == "simpleMap"


MERGE_ITEM = MergeItemStructure()

# (description, original, patch, expected) -- expected None means an error containing `error`.
CONFORMANCE: list[tuple[str, str, str, str]] = [
    ("unique scalars when merging lists", "mergingIntList: [1, 2]", "mergingIntList: [2, 3]", "mergingIntList: [1, 2, 3]"),
    (
        "delete all items from merging list",
        "mergingList: [{name: 1}, {name: 2}]",
        "mergingList: [{$patch: replace}]",
        "mergingList: []",
    ),
    ("merge empty merging lists", "mergingList: []", "mergingList: []", "mergingList: []"),
    ("delete all keys from map", "{name: 1, value: 1}", "{$patch: replace}", "{}"),
    ("add key and delete all keys from map", "{name: 1, value: 1}", "{other: a, $patch: replace}", "{other: a}"),
    (
        "delete all duplicate entries in a merging list",
        "mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3}, {name: 3}]",
        "mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]",
        "mergingList: [{name: 2, value: a}]",
    ),
    (
        "preserve the order from the patch in a merging list",
        "mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
        "mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, other: x}]",
        "mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, value: b, other: x}]",
    ),
    (
        "preserve the order from the patch in a merging list 2",
        "mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
        "mergingList: [{name: 3, value: c}, {name: 1, value: a}]",
        "mergingList: [{name: 2, value: b}, {name: 3, value: c}, {name: 1, value: a}]",
    ),
    ("preserve the order in a merging int list", "mergingIntList: [1, 2, 3]", "mergingIntList: [3, 1, 2]", "mergingIntList: [3, 1, 2]"),
    ("preserve the order in a merging int list 2", "mergingIntList: [1, 2, 3]", "mergingIntList: [3, 1]", "mergingIntList: [2, 3, 1]"),
    (
        "$setElementOrder contains item that is not present in the list to be merged",
        "mergingList: [{name: 1}, {name: 3}]",
        "{$setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}], mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
        "mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]",
    ),
    (
        "$setElementOrder contains item that is not present in the int list to be merged",
        "mergingIntList: [1, 3]",
        "$setElementOrder/mergingIntList: [3, 2, 1]",
        "mergingIntList: [3, 1]",
    ),
    (
        "$deleteFromPrimitiveList of nonexistent item",
        "mergingIntList: [1, 2]",
        "$deleteFromPrimitiveList/mergingIntList: [3]",
        "mergingIntList: [1, 2]",
    ),
    (
        "$deleteFromPrimitiveList on empty primitive list",
        "mergingIntList: null",
        "$deleteFromPrimitiveList/mergingIntList: [3]",
        "mergingIntList: null",
    ),
    (
        "$deleteFromPrimitiveList on nonexistent primitive list",
        "foo: [bar]",
        "$deleteFromPrimitiveList/mergingIntList: [3]",
        "foo: [bar]",
    ),
    (
        "$deleteFromPrimitiveList on a merging list",
        "mergingIntList: [1, 2, 3]",
        "$deleteFromPrimitiveList/mergingIntList: [2]",
        "mergingIntList: [1, 3]",
    ),
    (
        "$deleteFromPrimitiveList on a non merging list",
        "nonMergingIntList: [1, 2, 3]",
        "$deleteFromPrimitiveList/nonMergingIntList: [2]",
        "nonMergingIntList: [1, 3]",
    ),
    (
        "nested patch merge with empty list",
        "name: hi",
        "mergingList: [{name: hello}, {$patch: delete, name: doesntexist}]",
        "{name: hi, mergingList: [{name: hello}]}",
    ),
    (
        "nested patch merge with empty list, three-way",
        "{name: hi, mergingList: [{name: hello2}]}",
        "{$setElementOrder/mergingList: [{name: hello}, {name: doesntexist}], "
        "mergingList: [{name: hello}, {$patch: delete, name: doesntexist}]}",
        "{name: hi, mergingList: [{name: hello}, {name: hello2}]}",
    ),
    (
        "delete items in lists of scalars, three-way",
        "mergingIntList: [1, 2, 3, 4]",
        "{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
        "mergingIntList: [1, 2, 4]",
    ),
    (
        "delete all duplicate items in lists of scalars, three-way",
        "mergingIntList: [1, 2, 3, 3, 4]",
        "{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
        "mergingIntList: [1, 2, 4]",
    ),
    (
        "add and delete items in lists of scalars",
        "mergingIntList: [1, 2, 3]",
        "{$setElementOrder/mergingIntList: [1, 2, 4], $deleteFromPrimitiveList/mergingIntList: [3], mergingIntList: [4]}",
        "mergingIntList: [1, 2, 4]",
    ),
    (
        "merge lists of maps, three-way",
        "mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
        "{$setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}], "
        "mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]}",
        "mergingList: [{name: 4, value: 4}, {name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
    ),
    (
        "add field to map in merging list with conflict, three-way",
        "mergingList: [{name: 1, other: a}, {name: 3, value: 2, other: b}]",
        "{$setElementOrder/mergingList: [{name: 1}, {name: 2}], mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}",
        "mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2}, {name: 3, value: 2, other: b}]",
    ),
    (
        "add map and delete map from merging list, three-way",
        "mergingList: [{name: 1}, {name: 2, other: b}, {name: 4, other: c}]",
        "{$setElementOrder/mergingList: [{name: 2}, {name: 3}], mergingList: [{name: 3}, {name: 1, $patch: delete}]}",
        "mergingList: [{name: 2, other: b}, {name: 4, other: c}, {name: 3}]",
    ),
    (
        "add map and delete map from merging list with conflict, three-way",
        "mergingList: [{name: 1, other: a}, {name: 4, other: c}]",
        "{$setElementOrder/mergingList: [{name: 2}, {name: 3}], mergingList: [{name: 2}, {name: 3}, {name: 1, $patch: delete}]}",
        "mergingList: [{name: 4, other: c}, {name: 2}, {name: 3}]",
    ),
    (
        "delete missing map from merging list with conflict, three-way",
        "mergingList: [{name: 3, other: a}]",
        "{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 2}, {name: 1, $patch: delete}]}",
        "mergingList: [{name: 2}, {name: 3, other: a}]",
    ),
    (
        "replace non merging list nested in merging list",
        "mergingList: [{name: 1, other: a, nonMergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2, other: b}]",
        "{$setElementOrder/mergingList: [{name: 1}, {name: 2}], mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}]}",
        "mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}, {name: 2, other: b}]",
    ),
    ("delete map from nested map (devcluster removes the field)", "simpleMap: {key1: 1, key2: 1}", "simpleMap: {$patch: delete}", "{}"),
    ("replacing item is atomic", "replacingItem: {a: 1, b: 2}", "replacingItem: {c: 3}", "replacingItem: {c: 3}"),
    (
        "retainKeys map can delete a field when no retainKeys directive present",
        "retainKeysMap: {name: foo, value: a}",
        "retainKeysMap: {value: null}",
        "retainKeysMap: {name: foo}",
    ),
    (
        "retainKeys list can add a field",
        "retainKeysMergingList: [{name: bar}, {name: foo}]",
        "retainKeysMergingList: [{name: foo, value: a}]",
        "retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
    ),
    (
        "retainKeys in merging list item with null value, three-way",
        "retainKeysMergingList: [{name: bar}, {name: foo, value: a, other: x}]",
        "{$setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}], "
        "retainKeysMergingList: [{$retainKeys: [name], name: foo, value: null}]}",
        "retainKeysMergingList: [{name: bar}, {name: foo}]",
    ),
    (
        "delete and reorder in one list, reorder in another",
        "{mergingList: [{name: a, value: a}, {name: b, value: b}], mergeItemPtr: [{name: c, value: c}, {name: d, value: d}]}",
        "{$setElementOrder/mergingList: [{name: b}], $setElementOrder/mergeItemPtr: [{name: d}, {name: c}], "
        "mergingList: [{$patch: delete, name: a}]}",
        "{mergingList: [{name: b, value: b}], mergeItemPtr: [{name: d, value: d}, {name: c, value: c}]}",
    ),
    (
        "retainKeys directive in merging list item",
        "retainKeysMergingList: [{name: foo, value: a, other: b}]",
        "retainKeysMergingList: [{name: foo, $retainKeys: [name, value], value: c}]",
        "retainKeysMergingList: [{name: foo, value: c}]",
    ),
]


@pytest.mark.parametrize(("description", "original", "patch", "expected"), CONFORMANCE, ids=[c[0] for c in CONFORMANCE])
def test_smp_apimachinery_conformance(description: str, original: str, patch: str, expected: str) -> None:
    original_obj = yaml.safe_load(original)
    patch_obj = yaml.safe_load(patch)
    before = copy.deepcopy(original_obj)
    patch_before = copy.deepcopy(patch_obj)
    assert strategic_merge_patch(original_obj, patch_obj, MERGE_ITEM) == yaml.safe_load(expected), description
    assert original_obj == before
    assert patch_obj == patch_before


CONFORMANCE_ERRORS: list[tuple[str, str, str, str]] = [
    (
        "should check if order in $setElementOrder and patch list match",
        "mergingList: [{name: 1}, {name: 3}, {name: 2}]",
        "{$setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}], mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
        "doesn't match",
    ),
    (
        "should check if order in $setElementOrder and patch int list match",
        "mergingIntList: [1, 3, 2]",
        "{$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3, 1]}",
        "doesn't match",
    ),
    (
        "missing merge key should error out",
        "mergingList: [{name: 1, value: a}]",
        "mergingList: [{value: b}]",
        "does not contain declared merge key",
    ),
]


@pytest.mark.parametrize(("description", "original", "patch", "error"), CONFORMANCE_ERRORS, ids=[c[0] for c in CONFORMANCE_ERRORS])
def test_smp_apimachinery_conformance_errors(description: str, original: str, patch: str, error: str) -> None:
    with pytest.raises(PatchError) as info:
        strategic_merge_patch(yaml.safe_load(original), yaml.safe_load(patch), MERGE_ITEM)
    assert info.value.code == 400, description
    assert error in info.value.message


def test_smp_go_stable_sort_handles_long_lists() -> None:
    # More than 20 items exercises the SymMerge phase of Go's stable sort.
    original = {"mergingList": [{"name": f"n{i:02d}"} for i in range(45)]}
    order = [{"name": f"n{i:02d}"} for i in reversed(range(45))]
    patch = {"$setElementOrder/mergingList": order, "mergingList": [{"name": "n03", "value": "x"}]}
    result = strategic_merge_patch(original, patch, MERGE_ITEM)
    assert [item["name"] for item in result["mergingList"]] == [f"n{i:02d}" for i in reversed(range(45))]
    assert result["mergingList"][41] == {"name": "n03", "value": "x"}
