"""cluster/'s pure parts: resource paths and lookup, error mapping, label selectors, frozen bodies.

Behaviours: resource URL paths for core / grouped, namespaced / cluster-scoped collections, objects
and subresources, with quoting, and the errors for impossible paths; lookup by plural, group-qualified
plural, kind and short name; HTTP status + Status body → our error classes (AlreadyExists vs
Conflict on 409, Invalid causes, 429/5xx → Unavailable, non-JSON bodies); label selector parsing
and matching (``!=`` / ``notin`` match absent labels) and parse errors; freeze/thaw round trips,
interning-independent equality, pickling, and resourceVersion ordering; equal label maps shared by the cache, in a
bounded table that starts again when full.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from cluster import bodies, errors, fieldselectors
from cluster.bodies import FrozenDict, freeze, freeze_over, object_key, share_labels, thaw, version_at_least
from cluster.resources import CONFIGMAPS, DARKROOMS, NAMESPACES, PODS, REPLICASETS, lookup
from cluster.selectors import parse


def test_resource_paths() -> None:
    assert CONFIGMAPS.path() == "/api/v1/configmaps"
    assert CONFIGMAPS.path(namespace="ns") == "/api/v1/namespaces/ns/configmaps"
    assert (
        DARKROOMS.path(namespace="ns", name="a b", subresource="status")
        == "/apis/deployments.example.com/v1/namespaces/ns/darkrooms/a%20b/status"
    )
    assert NAMESPACES.path(name="default") == "/api/v1/namespaces/default"
    assert NAMESPACES.path(namespace="ignored") == "/api/v1/namespaces"
    with pytest.raises(ValueError):
        CONFIGMAPS.path(name="x")
    with pytest.raises(ValueError):
        CONFIGMAPS.path(namespace="ns", subresource="status")
    assert DARKROOMS.api_version == "deployments.example.com/v1" and CONFIGMAPS.api_version == "v1"


def test_lookup() -> None:
    assert lookup("dr") is DARKROOMS and lookup("Darkroom") is DARKROOMS and lookup("darkrooms.deployments.example.com") is DARKROOMS
    assert lookup("cm") is CONFIGMAPS
    assert lookup("po") is PODS and lookup("rs") is REPLICASETS
    with pytest.raises(KeyError):
        lookup("nodes")


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        (404, "NotFound", errors.NotFound),
        (409, "AlreadyExists", errors.AlreadyExists),
        (409, "Conflict", errors.Conflict),
        (422, "Invalid", errors.Invalid),
        (403, "Forbidden", errors.Forbidden),
        (401, "Unauthorized", errors.Unauthorized),
        (410, "Expired", errors.Gone),
        (400, "BadRequest", errors.BadRequest),
        (429, "TooManyRequests", errors.Unavailable),
        (503, "ServiceUnavailable", errors.Unavailable),
        (504, "Timeout", errors.Unavailable),
        (418, "Teapot", errors.ClusterError),
    ],
)
def test_status_mapping(status: int, reason: str, expected: type[errors.ClusterError]) -> None:
    error = errors.from_status(status, b'{"kind":"Status","reason":"%s","message":"m"}' % reason.encode(), what="GET /x")
    assert type(error) is expected and error.status == status and error.reason == reason and error.message == "m"


def test_invalid_causes_and_odd_bodies() -> None:
    body = {
        "reason": "Invalid",
        "message": "bad",
        "details": {"causes": [{"field": "spec.replicas", "reason": "FieldValueInvalid", "message": "must be >= 0"}]},
    }
    error = errors.from_status(422, body, what="POST /x")
    assert isinstance(error, errors.Invalid)
    assert error.causes == [errors.Cause("spec.replicas", "FieldValueInvalid", "must be >= 0")]
    plain = errors.from_status(502, b"<html>bad gateway</html>", what="GET /x")
    assert isinstance(plain, errors.Unavailable) and "bad gateway" in plain.message


def test_label_selectors() -> None:
    labels = {"app": "web", "tier": "front"}
    assert parse("app=web,tier==front").matches(labels)
    assert parse("app in (web,db)").matches(labels) and not parse("app notin (web)").matches(labels)
    assert parse("missing!=x").matches(labels) and parse("missing notin (x)").matches(labels)
    assert parse("app").matches(labels) and parse("!missing").matches(labels) and not parse("!app").matches(labels)
    assert parse(None).matches(None) and parse("").empty
    assert parse({"app": "web"}).matches(labels) and not parse({"app": "db"}).matches(labels)
    assert parse("example.example.com/task-uid=abc").matches({"example.example.com/task-uid": "abc"})
    for bad in ("app=(", "app in web", "=x", "a b", "app in (x"):
        with pytest.raises(errors.BadRequest):
            parse(bad)


def test_freeze_thaw_roundtrip() -> None:
    raw = {"metadata": {"name": "n", "namespace": "ns", "labels": {"a": "b"}}, "spec": {"list": [1, {"x": [2]}]}}
    frozen = freeze(raw)
    assert isinstance(frozen, FrozenDict) and isinstance(frozen["spec"]["list"], tuple)
    assert thaw(frozen) == raw and type(thaw(frozen)["spec"]["list"]) is list
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    assert object_key(frozen) == "ns/n" and object_key({"metadata": {"name": "cluster-wide"}}) == "cluster-wide"
    with pytest.raises(TypeError):
        hash(frozen)


def test_a_new_version_keeps_the_frozen_parts_that_did_not_change() -> None:
    """freeze_over: equal to freeze; each top-level part and each metadata value equal to the old version's is the old
    version's own frozen object; changed ones (a list's order, a number's type or value, a key gone) are frozen anew."""

    def deployment(ready: int, version: str, replicas: Any = 1, annotations: dict[str, str] | None = None) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns", "resourceVersion": version, "annotations": annotations or {"a": "1"}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "args": ["x", "y"]}]}}},
            "status": {"readyReplicas": ready, "conditions": [{"type": "Available", "status": "True"}]},
        }

    old = freeze(deployment(0, "1"))
    new = freeze_over(deployment(1, "2"), old)
    assert new == freeze(deployment(1, "2")) and type(new) is FrozenDict
    assert new["spec"] is old["spec"] and new["metadata"]["annotations"] is old["metadata"]["annotations"]
    assert new["status"] is not old["status"] and new["status"]["readyReplicas"] == 1
    assert new["metadata"]["resourceVersion"] == "2" and type(new["metadata"]) is FrozenDict
    for changed in (deployment(0, "3", replicas=2), deployment(0, "3", replicas=1.0), deployment(0, "3", annotations={"a": "2"})):
        again = freeze_over(changed, old)
        assert again == freeze(changed) and thaw(again) == changed
    swapped = deployment(0, "3")
    swapped["spec"]["template"]["spec"]["containers"][0]["args"] = ["y", "x"]
    assert freeze_over(swapped, old)["spec"] is not old["spec"]
    gone = deployment(0, "3")
    del gone["status"]
    assert "status" not in freeze_over(gone, old) and freeze_over(deployment(0, "4"), None) == freeze(deployment(0, "4"))
    assert type(new["spec"]["template"]["spec"]["containers"][0]["args"]) is tuple
    with pytest.raises(TypeError):
        new["status"]["conditions"][0]["status"] = "False"


def stored(labels: object) -> FrozenDict:
    frozen: FrozenDict = freeze(share_labels({"metadata": {"name": "x", "labels": labels}}))
    return frozen


def test_equal_label_maps_are_one_frozen_map_and_others_are_left_to_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "_LABEL_SETS", {})
    first, second = stored({"app": "web", "tier": "front"}), stored({"tier": "front", "app": "web"})
    assert first["metadata"]["labels"] is second["metadata"]["labels"]  # equal, whatever the order: one map
    assert isinstance(first["metadata"]["labels"], FrozenDict) and first["metadata"]["labels"] == {"app": "web", "tier": "front"}
    with pytest.raises(TypeError):
        first["metadata"]["labels"]["app"] = "db"
    assert stored({"app": "db"})["metadata"]["labels"] is not first["metadata"]["labels"]
    odd = stored({"app": ["not", "a", "label"]})  # not a label map the server would serve: frozen as any value
    assert odd["metadata"]["labels"] == {"app": ("not", "a", "label")}
    assert stored({})["metadata"]["labels"] == {} and stored(None)["metadata"]["labels"] is None


def test_the_shared_label_maps_are_bounded_and_start_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "_LABEL_SETS", {})
    monkeypatch.setattr(bodies, "LABEL_SETS_MAX", 2)
    kept = [stored({"n": str(n)})["metadata"]["labels"] for n in range(2)]
    assert stored({"n": "0"})["metadata"]["labels"] is kept[0]
    third = stored({"n": "2"})["metadata"]["labels"]  # the table was full: it starts again with this set
    assert len(bodies._LABEL_SETS) == 1 and stored({"n": "2"})["metadata"]["labels"] is third
    again = stored({"n": "0"})["metadata"]["labels"]
    assert again == kept[0] and again is not kept[0]  # equal; shared from now on
    assert stored({"n": "0"})["metadata"]["labels"] is again and len(bodies._LABEL_SETS) == 2


def test_version_ordering() -> None:
    assert version_at_least("10", "9") and version_at_least("9", "9") and not version_at_least("9", "10")
    assert version_at_least("opaque", "opaque") and not version_at_least("opaque-2", "opaque-1")


@pytest.mark.parametrize(
    "text",
    [
        "metadata.name=a",
        "metadata.name!=a",
        "metadata.namespace=ns-1",
        "metadata.namespace==ns-1,metadata.name!=b",
        "metadata.namespace=",
        "metadata.name=a,spec.priority=3",
        "spec.priority!=3",
    ],
)
def test_a_field_selector_on_the_metadata_is_answered_from_keys_as_from_objects(text: str) -> None:
    """:meth:`FieldSelector.on_keys` keeps the keys of the objects :meth:`FieldSelector.matches` keeps: its key test for
    the name and namespace, the rest (a CRD's selectable field) left to the objects, or answered from an index of it."""
    fields: dict[str, fieldselectors.Value] = {**fieldselectors.METADATA, "spec.priority": lambda obj: str(obj["spec"]["priority"])}
    selector = fieldselectors.parse(text, fields)
    objects = [
        freeze({"metadata": {"name": name, **({"namespace": ns} if ns else {})}, "spec": {"priority": n % 4}})
        for n, (ns, name) in enumerate((ns, name) for ns in ("", "ns-1", "ns-2") for name in ("a", "b", "ns-1"))
    ]
    key_filter, rest = selector.on_keys()
    assert (key_filter is None) == all(not r.field.startswith("metadata.") for r in selector.requirements)
    kept = [o for o in objects if (key_filter is None or key_filter(object_key(o))) and rest.matches(o)]
    assert kept == [o for o in objects if selector.matches(o)]
    assert rest.requirements == tuple(r for r in selector.requirements if not r.field.startswith("metadata."))
    # with an index of spec.priority (value -> keys), the whole selector is a test of keys
    asked: list[str] = []

    def having(value: str) -> list[str]:
        asked.append(value)
        return [object_key(o) for o in objects if fields["spec.priority"](o) == value]

    key_filter, rest = selector.on_keys({"spec.priority": having})
    assert rest.empty and key_filter is not None
    assert [o for o in objects if key_filter(object_key(o))] == [o for o in objects if selector.matches(o)]
    assert asked == [r.value for r in selector.requirements if r.field == "spec.priority"]  # once per requirement
