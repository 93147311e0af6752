"""The "does the live object already hold what we would apply?" rule (darkroom_operator.runtime.comparing).

Behaviours: containment of dicts (extra live keys such as server defaults are fine, missing or
different desired keys are not), lists (same length, element-wise containment, order matters),
scalars (bool is not int); the applied-digest annotation makes a *removed* desired field count as
a difference (TLS turned off, a sub-domain removed, S3 → WebFolder dropping the secretKeyRef env
and bucket keys) while a live object carrying server defaults stays up to date; the digest is
deterministic and independent of key order; differences() names the paths for logs; overlay()
(the repair when apply cannot drop foreign list entries) merges dicts and takes our lists wholesale.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from darkroom_operator import darkroomchildren
from darkroom_operator.runtime.comparing import APPLIED_DIGEST, contains, differences, digest, overlay, stamp, up_to_date
from darkroom_operator.settings import OperatorSettings

from cluster.bodies import freeze


def darkroom_body(source: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "d", "namespace": "n", "uid": "uid-1", "generation": 1},
        "spec": {"source": source or {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": ["a"], **spec},
    }


def test_dicts_tolerate_extra_live_keys_only() -> None:
    assert contains({"a": 1, "b": {"c": 2, "server": "default"}}, {"b": {"c": 2}})
    assert not contains({"a": 1}, {"a": 1, "b": 2})
    assert not contains({"a": {"c": 3}}, {"a": {"c": 2}})
    assert not contains("scalar", {"a": 1})


def test_lists_need_same_length_and_elementwise_containment() -> None:
    assert contains([{"name": "a", "protocol": "TCP"}, {"name": "b"}], [{"name": "a"}, {"name": "b"}])
    assert not contains([{"name": "a"}], [{"name": "a"}, {"name": "b"}])  # someone deleted an entry
    assert not contains([{"name": "a"}, {"name": "b"}, {"name": "x"}], [{"name": "a"}, {"name": "b"}])  # someone added one
    assert not contains([{"name": "b"}, {"name": "a"}], [{"name": "a"}, {"name": "b"}])  # order matters
    assert contains((1, 2), [1, 2])  # cached objects hold tuples
    assert not contains({"a": 1}, [1])


def test_scalars() -> None:
    assert contains(1, 1.0)
    assert not contains(1, True)
    assert not contains(True, 1)
    assert contains(False, False)
    assert not contains(None, "x")
    assert contains("3000", "3000") and not contains(3000, "3000")


def test_the_cache_s_frozen_objects_and_other_mappings_follow_the_same_rule() -> None:
    live = freeze({"a": {"b": [1, {"c": True}], "d": None}, "e": "x"})
    assert contains(live, {"a": {"b": [1, {"c": True}], "d": None}})
    assert not contains(live, {"a": {"b": [1, {"c": 1}]}})  # True is not 1
    assert not contains(live, {"a": {"b": [True, {"c": True}]}})  # nor 1 True
    assert not contains(live, {"a": {"d": 0}})
    assert contains(MappingProxyType({"a": 1, "b": 2}), {"a": 1})  # a mapping that is no dict, either side
    assert contains({"a": {"b": 1}}, MappingProxyType({"a": MappingProxyType({"b": 1})}))
    assert not contains(MappingProxyType({"a": 1}), {"a": 2})
    assert not contains(["a"], {"a": 1}) and not contains({"a": 1}, "a") and not contains(None, {"a": 1})


def test_digest_is_stable_and_order_independent() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
    assert len(digest({})) == 16


def test_stamp_adds_a_digest_of_the_body_and_keeps_other_annotations() -> None:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "annotations": {"keep": "me"}},
        "data": {"k": "v"},
    }
    stamped = stamp(body)
    assert stamped["metadata"]["annotations"]["keep"] == "me"
    assert stamped["metadata"]["annotations"][APPLIED_DIGEST] == digest(body)
    assert body["metadata"]["annotations"] == {"keep": "me"}  # not modified
    assert stamp(stamped) == stamped  # re-stamping is idempotent
    plain = stamp({"metadata": {"name": "x"}, "data": {}})
    assert plain["metadata"]["annotations"] == {APPLIED_DIGEST: digest({"metadata": {"name": "x"}, "data": {}})}


def _as_live(desired: dict[str, Any], **server: Any) -> dict[str, Any]:
    """What the server would hand back: the applied body plus defaults and bookkeeping."""
    live = {**desired, "metadata": {**desired["metadata"], "uid": "u", "resourceVersion": "9", "managedFields": []}}
    live.update(server)
    return live


def test_live_object_with_server_defaults_is_up_to_date() -> None:
    desired = stamp(darkroomchildren.service(darkroom_body(), OperatorSettings(identity="t")))
    spec = {**desired["spec"], "clusterIP": "10.96.0.7", "clusterIPs": ["10.96.0.7"], "sessionAffinity": "None"}
    assert up_to_date(_as_live(desired, spec=spec, status={"loadBalancer": {}}), desired)
    assert not up_to_date(None, desired)


def test_removed_fields_are_differences_through_the_digest() -> None:
    tls = OperatorSettings(identity="t", tls_secret="tls", ingress_class="nginx")
    plain = OperatorSettings(identity="t")
    live = _as_live(stamp(darkroomchildren.ingress(darkroom_body(), tls)))
    desired = stamp(darkroomchildren.ingress(darkroom_body(), plain))
    assert contains({k: v for k, v in live.items() if k != "metadata"}, {k: v for k, v in desired.items() if k != "metadata"})
    assert not up_to_date(live, desired)  # only the digest tells TLS/class were dropped
    assert differences(live, desired) == [f"metadata.annotations.{APPLIED_DIGEST}"]


def test_removed_subdomain_and_s3_to_webfolder() -> None:
    settings = OperatorSettings(identity="t")
    live = _as_live(stamp(darkroomchildren.ingress(darkroom_body(subDomains=["a", "b"]), settings)))
    assert not up_to_date(live, stamp(darkroomchildren.ingress(darkroom_body(subDomains=["a"]), settings)))
    s3 = {"type": "S3", "bucket": "b", "pathPrefix": "p/", "credentialsSecretRef": {"name": "creds"}}
    webfolder = {"type": "WebFolder", "baseUrl": "https://x.example", "pathPrefix": "p/"}
    live_cm = _as_live(stamp(darkroomchildren.configmap(darkroom_body(source=s3), settings)))
    assert not up_to_date(live_cm, stamp(darkroomchildren.configmap(darkroom_body(source=webfolder), settings)))
    live_deploy = _as_live(stamp(darkroomchildren.deployment(darkroom_body(source=s3), settings)))
    assert not up_to_date(live_deploy, stamp(darkroomchildren.deployment(darkroom_body(source=webfolder), settings)))


def test_edited_fields_are_differences() -> None:
    settings = OperatorSettings(identity="t")
    desired = stamp(darkroomchildren.deployment(darkroom_body(), settings))
    live = _as_live(desired)
    assert up_to_date(live, desired)
    edited = _as_live(desired)
    container = {**desired["spec"]["template"]["spec"]["containers"][0], "image": "evil:1"}
    edited["spec"] = {
        **desired["spec"],
        "template": {**desired["spec"]["template"], "spec": {**desired["spec"]["template"]["spec"], "containers": [container]}},
    }
    assert not up_to_date(edited, desired)
    assert differences(edited, desired) == ["spec.template.spec.containers[0].image"]


def test_differences_names_missing_and_changed_paths() -> None:
    assert differences({"a": {"b": 1}, "l": [1, 2]}, {"a": {"b": 2, "c": 3}, "l": [1, 2], "m": 1}) == ["a.b", "a.c", "m"]
    assert differences({"l": [1]}, {"l": [1, 2]}) == ["l"]
    assert differences({"a": 1}, {"a": 1}) == []


def test_overlay_merges_dicts_and_replaces_lists() -> None:
    live: dict[str, Any] = {
        "metadata": {"uid": "u", "labels": {"theirs": "1"}},
        "spec": {"ports": [{"port": 80}, {"port": 8080}], "clusterIP": "10.0.0.1"},
    }
    desired = {"metadata": {"labels": {"ours": "2"}}, "spec": {"ports": [{"port": 80, "name": "http"}], "type": "ClusterIP"}}
    assert overlay(live, desired) == {
        "metadata": {"uid": "u", "labels": {"theirs": "1", "ours": "2"}},
        "spec": {"ports": [{"port": 80, "name": "http"}], "clusterIP": "10.0.0.1", "type": "ClusterIP"},
    }
    assert contains(overlay(live, desired), desired)
    assert live["spec"]["ports"] == [{"port": 80}, {"port": 8080}]  # not modified
