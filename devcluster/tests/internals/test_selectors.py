"""Label and field selectors behave as kube-apiserver's (apimachinery's) do.

Behaviours covered:

- label selectors (the grammar itself is tested with the leaf, in the repository's ``tests/libs/test_labelselectors.py``): an invalid
  ``labelSelector`` or ``metav1.LabelSelector`` is a 400 BadRequest carrying the package's message;
- field selectors: ``=``, ``==``, ``!=``, comma AND, backslash escaping, missing fields compare as
  ``""``, parse errors with apimachinery's wording, ``exact_name``;
- field-label conversion per kind: metadata.name everywhere, metadata.namespace for namespaced and
  default-conversion kinds, kind-specific labels (events ``involvedObject.*``, ``source``,
  ``reportingComponent``; secrets ``type``; pods ``status.phase``/``spec.nodeName``/``spec.host``),
  unsupported labels rejected with the message that kind's conversion function returns.
"""

from __future__ import annotations

from typing import Any

import pytest

from devcluster.errors import StatusError
from devcluster.resources import BUILTINS, ResourceType
from devcluster.selectors import label_selector_from_dict, parse_field_selector, parse_label_selector

KINDS = {r.kind: r for r in BUILTINS}
DARKROOMS = ResourceType(
    group="deployments.example.com",
    version="v1alpha1",
    plural="darkrooms",
    singular="darkroom",
    kind="Darkroom",
    namespaced=True,
    crd_name="darkrooms.deployments.example.com",
    schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
)
CLUSTER_WIDGETS = ResourceType(
    group="example.com",
    version="v1",
    plural="widgets",
    singular="widget",
    kind="Widget",
    namespaced=False,
    crd_name="widgets.example.com",
    schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
)


def label_error(text: str) -> str:
    with pytest.raises(StatusError) as info:
        parse_label_selector(text)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


def field_error(text: str, resource: ResourceType) -> str:
    with pytest.raises(StatusError) as info:
        parse_field_selector(text, resource)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


def dict_error(selector: dict[str, Any]) -> str:
    with pytest.raises(StatusError) as info:
        label_selector_from_dict(selector)
    assert info.value.code == 400
    return info.value.message


# --- label selectors -----------------------------------------------------------------------


def test_invalid_label_selectors_are_bad_requests() -> None:
    assert label_error("a in (b") == "unable to parse requirement: found '', expected: ',' or ')'"
    assert dict_error({"matchExpressions": [{"key": "a", "operator": "Equals"}]}) == '"Equals" is not a valid label selector operator'
    assert parse_label_selector("a>1").matches({"a": "2"})
    assert not label_selector_from_dict(None).matches({})


# --- field selectors -----------------------------------------------------------------------


def pod(name: str, namespace: str = "default", **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": "node-1"}, "status": status}


def test_field_operators_and_and() -> None:
    pods = KINDS["Pod"]
    assert parse_field_selector("metadata.name=a", pods).matches(pod("a"))
    assert parse_field_selector("metadata.name==a", pods).matches(pod("a"))
    assert not parse_field_selector("metadata.name=a", pods).matches(pod("b"))
    assert parse_field_selector("metadata.name!=a", pods).matches(pod("b"))
    both = parse_field_selector("metadata.name=a,status.phase=Running", pods)
    assert both.matches(pod("a", phase="Running"))
    assert not both.matches(pod("a", phase="Pending"))
    assert parse_field_selector("spec.nodeName=node-1,metadata.namespace!=kube-system", pods).matches(pod("x"))


def test_missing_fields_compare_as_empty_string() -> None:
    pods = KINDS["Pod"]
    assert parse_field_selector("status.phase=", pods).matches(pod("a"))
    assert not parse_field_selector("status.phase!=", pods).matches(pod("a"))
    assert parse_field_selector("status.phase!=Running", pods).matches(pod("a"))


def test_empty_field_selector() -> None:
    for text in (None, "", ","):
        selector = parse_field_selector(text, KINDS["ConfigMap"])
        assert selector.empty
        assert selector.matches({"metadata": {"name": "x"}})
        assert selector.exact_name() is None


def test_field_value_escaping() -> None:
    cms = KINDS["ConfigMap"]
    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d", cms)
    assert selector.matches({"metadata": {"name": "a,b=c\\d"}})
    assert selector.exact_name() == "a,b=c\\d"
    assert str(selector) == r"metadata.name=a\,b\=c\\d"


def test_field_parse_errors() -> None:
    cms = KINDS["ConfigMap"]
    assert field_error("metadata.name", cms) == "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    assert field_error("metadata.name=a,oops", cms) == "invalid selector: 'metadata.name=a,oops'; can't understand 'oops'"
    assert field_error("metadata.name=a=b", cms) == "invalid field selector: unescaped character in value: 61"
    assert field_error("metadata.name!==b", cms) == "invalid field selector: unescaped character in value: 61"
    assert field_error(r"metadata.name=a\x", cms) == "invalid field selector: invalid escape sequence: \\x"
    assert field_error("metadata.name=a\\", cms) == "invalid field selector: invalid escape sequence: \\"


def test_exact_name() -> None:
    cms = KINDS["ConfigMap"]
    assert parse_field_selector("metadata.name=web", cms).exact_name() == "web"
    assert parse_field_selector("metadata.namespace=default,metadata.name==web", cms).exact_name() == "web"
    assert parse_field_selector("metadata.name!=web", cms).exact_name() is None
    assert parse_field_selector("metadata.namespace=default", cms).exact_name() is None


def test_event_field_labels() -> None:
    events = KINDS["Event"]
    event = {
        "metadata": {"name": "dr.1", "namespace": "default"},
        "involvedObject": {
            "kind": "Darkroom",
            "namespace": "default",
            "name": "webfolder-demo",
            "uid": "u-1",
            "apiVersion": "deployments.example.com/v1alpha1",
            "resourceVersion": "42",
        },
        "reason": "Reconciled",
        "type": "Normal",
        "source": {"component": "darkroom-operator"},
        "reportingComponent": "darkroom-operator-rc",
    }
    for text in (
        "involvedObject.kind=Darkroom,involvedObject.name=webfolder-demo",
        "involvedObject.namespace=default,involvedObject.uid=u-1",
        "involvedObject.apiVersion=deployments.example.com/v1alpha1,involvedObject.resourceVersion=42",
        "involvedObject.fieldPath=",
        "reason=Reconciled,type=Normal",
        "source=darkroom-operator",
        "reportingComponent=darkroom-operator-rc",
        "metadata.name=dr.1,metadata.namespace=default",
    ):
        assert parse_field_selector(text, events).matches(event), text
    assert not parse_field_selector("type=Warning", events).matches(event)
    # "source" falls back to reportingComponent when source.component is empty.
    no_source = {**event, "source": {}}
    assert parse_field_selector("source=darkroom-operator-rc", events).matches(no_source)
    assert field_error("message=x", events) == "field label not supported: message"


def test_kind_specific_labels() -> None:
    secret = {"metadata": {"name": "s", "namespace": "default"}, "type": "Opaque"}
    assert parse_field_selector("type=Opaque", KINDS["Secret"]).matches(secret)
    namespace = {"metadata": {"name": "default"}, "status": {"phase": "Active"}}
    assert parse_field_selector("status.phase=Active", KINDS["Namespace"]).matches(namespace)
    # old clients' spec.host means spec.nodeName
    assert parse_field_selector("spec.host=node-1", KINDS["Pod"]).matches(pod("a"))
    assert parse_field_selector("status.podIP=10.0.0.1", KINDS["Pod"]).matches(pod("a", podIPs=[{"ip": "10.0.0.1"}]))


def test_unsupported_field_labels() -> None:
    # Kinds with their own conversion function, and custom resources.
    assert field_error("spec.foo=1", KINDS["Pod"]) == "field label not supported: spec.foo"
    assert field_error("data=x", KINDS["Secret"]) == "field label not supported: data"
    assert field_error("spec.version=v1", DARKROOMS) == "field label not supported: spec.version"
    # Cluster-scoped kinds with a conversion function refuse metadata.namespace.
    assert field_error("metadata.namespace=default", KINDS["Namespace"]) == "field label not supported: metadata.namespace"
    assert field_error("metadata.namespace=default", CLUSTER_WIDGETS) == "field label not supported: metadata.namespace"
    # Kinds without one fall back to runtime.DefaultMetaV1FieldSelectorConversion.
    default_message = '"data.key" is not a known field selector: only "metadata.name", "metadata.namespace"'
    assert field_error("data.key=x", KINDS["ConfigMap"]) == default_message
    assert field_error("spec.replicas=1", KINDS["Deployment"]).startswith('"spec.replicas" is not a known field selector')
    assert parse_field_selector("metadata.namespace=", KINDS["ClusterRole"]).matches({"metadata": {"name": "admin"}})
    # The label is taken literally: whitespace is part of it.
    assert field_error("metadata.name = a", DARKROOMS) == "field label not supported: metadata.name "
    # Terms are checked in sorted order, so the first unsupported one in that order is reported.
    assert field_error("zeta=1,alpha=2", DARKROOMS) == "field label not supported: alpha"


def test_custom_resource_field_selectors() -> None:
    darkroom = {"metadata": {"name": "webfolder-demo", "namespace": "default"}, "spec": {"replicas": 2}}
    assert parse_field_selector("metadata.name=webfolder-demo,metadata.namespace=default", DARKROOMS).matches(darkroom)
    assert not parse_field_selector("metadata.namespace=other", DARKROOMS).matches(darkroom)
    assert parse_field_selector("metadata.name=w", CLUSTER_WIDGETS).matches({"metadata": {"name": "w"}})
