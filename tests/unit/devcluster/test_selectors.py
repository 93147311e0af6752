"""Label and field selectors behave as kube-apiserver's (apimachinery's) do.

Behaviours covered:

- label selectors: ``=``, ``==``, ``!=``, ``in``, ``notin``, bare key (exists), ``!key``,
  ``>`` and ``<`` (integer comparison, non-integers never match), comma = AND, whitespace
  tolerance, ``in``/``notin`` usable as keys and values, empty value sets ``()`` meaning ``""``;
- empty/None selector matches everything, ``matches(None)`` treats labels as empty;
- parse errors are 400 BadRequest with apimachinery's exact wording (lexer/parser messages,
  ``unable to parse requirement: ...`` wrapping, key and value validation messages, Gt/Lt integer
  check);
- ``label_selector_from_dict`` (metav1.LabelSelector): matchLabels + matchExpressions, None matches
  nothing, ``{}`` matches everything, bad operator / missing values / bad keys rejected;
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

QUALIFIED_NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
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


# --- label selectors: matching -------------------------------------------------------------


def test_equality_operators() -> None:
    for text in ("app=web", "app==web", " app = web "):
        selector = parse_label_selector(text)
        assert selector.matches({"app": "web"})
        assert not selector.matches({"app": "db"})
        assert not selector.matches({})
    not_equal = parse_label_selector("app!=web")
    assert not_equal.matches({"app": "db"})
    assert not_equal.matches({})  # a missing key is "not equal"
    assert not not_equal.matches({"app": "web"})


def test_set_operators() -> None:
    in_set = parse_label_selector("tier in (front, back)")
    assert in_set.matches({"tier": "front"})
    assert in_set.matches({"tier": "back"})
    assert not in_set.matches({"tier": "cache"})
    assert not in_set.matches({})
    not_in = parse_label_selector("tier notin (front)")
    assert not_in.matches({"tier": "back"})
    assert not_in.matches({})
    assert not not_in.matches({"tier": "front"})


def test_exists_and_does_not_exist() -> None:
    exists = parse_label_selector("app")
    assert exists.matches({"app": ""})
    assert not exists.matches({"other": "x"})
    missing = parse_label_selector("!app")
    assert missing.matches({"other": "x"})
    assert not missing.matches({"app": "web"})
    assert parse_label_selector(" ! app ").matches({})


def test_greater_and_less_than_compare_integers() -> None:
    gt = parse_label_selector("replicas>2")
    assert gt.matches({"replicas": "3"})
    assert gt.matches({"replicas": "10"})  # numerically, not lexically
    assert not gt.matches({"replicas": "2"})
    assert not gt.matches({"replicas": "many"})
    assert not gt.matches({})
    lt = parse_label_selector("replicas < 2")
    assert lt.matches({"replicas": "1"})
    assert not lt.matches({"replicas": "2"})


def test_comma_is_and_and_whitespace_is_tolerated() -> None:
    selector = parse_label_selector(" app = web ,\ttier in ( front ,back ) , !legacy ")
    assert selector.matches({"app": "web", "tier": "back"})
    assert not selector.matches({"app": "web", "tier": "back", "legacy": "true"})
    assert not selector.matches({"app": "web"})


def test_empty_values_and_keywords_as_identifiers() -> None:
    assert parse_label_selector("a=").matches({"a": ""})
    assert parse_label_selector("a in ()").matches({"a": ""})
    assert parse_label_selector("x in (foo,,baz)").matches({"x": ""})
    assert parse_label_selector("in in (in, notin)").matches({"in": "notin"})
    assert parse_label_selector("a=in").matches({"a": "in"})


def test_empty_selector_matches_everything() -> None:
    for text in (None, ""):
        selector = parse_label_selector(text)
        assert selector.empty
        assert selector.matches(None)
        assert selector.matches({"a": "b"})
    assert not parse_label_selector("a").empty
    assert not parse_label_selector("a").matches(None)
    assert parse_label_selector("!a").matches(None)


def test_qualified_keys_and_string_form() -> None:
    selector = parse_label_selector("example.com/app=web,app.kubernetes.io/name in (b,a)")
    assert selector.matches({"example.com/app": "web", "app.kubernetes.io/name": "a"})
    assert str(selector) == "app.kubernetes.io/name in (a,b),example.com/app=web"
    assert parse_label_selector("a=b") == parse_label_selector("a=b")
    assert hash(parse_label_selector("a=b")) == hash(parse_label_selector(" a = b "))


# --- label selectors: errors ---------------------------------------------------------------


def test_parser_errors_use_apimachinery_wording() -> None:
    expected_operators = "in, notin, =, ==, !=, gt, lt"
    assert label_error("a b") == f"unable to parse requirement: found 'b', expected: {expected_operators}"
    assert label_error("a!") == f"unable to parse requirement: found '!', expected: {expected_operators}"
    assert label_error("a=b c") == "found 'c', expected: ',' or 'end of string'"
    assert label_error("a,") == "found '', expected: identifier after ','"
    assert label_error("a=b,)") == "found ')', expected: identifier after ','"
    assert label_error(",a") == "found ',', expected: !, identifier, or 'end of string'"
    assert label_error("!") == "unable to parse requirement: found '', expected: identifier"
    assert label_error("a in b") == "unable to parse requirement: found 'b' expected: '('"
    assert label_error("a notin") == "unable to parse requirement: found '' expected: '('"
    assert label_error("a in (b c)") == "unable to parse requirement: found 'c', expected: ',' or ')'"
    assert label_error("a in (b") == "unable to parse requirement: found '', expected: ',' or ')'"
    assert label_error("a in (=)") == "unable to parse requirement: found '=', expected: ',', ')' or identifier"
    assert label_error("a in (b,=)") == "unable to parse requirement: found '=', expected: ',', or identifier"
    assert label_error("a=(") == "unable to parse requirement: found '(', expected: identifier"
    assert label_error("a===b") == "unable to parse requirement: found '=', expected: identifier"


def test_key_validation_errors() -> None:
    assert label_error("-a=b") == f'unable to parse requirement: <nil>: Invalid value: "-a": name part {QUALIFIED_NAME_RULE}'
    assert label_error("/a") == 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'
    assert label_error("Example.com/a").startswith(
        'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain'
    )
    too_long = "k" * 64
    assert (
        label_error(too_long)
        == f'unable to parse requirement: <nil>: Invalid value: "{too_long}": name part must be no more than 63 characters'
    )
    assert label_error("a/b/c") == (
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name '
        + QUALIFIED_NAME_RULE
        + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )


def test_value_validation_errors() -> None:
    long_value = "v" * 64
    assert label_error(f"a={long_value}") == (
        f'unable to parse requirement: values[0][a]: Invalid value: "{long_value}": must be no more than 63 characters'
    )
    assert label_error("a in (b,-c)") == f'unable to parse requirement: values[0][a]: Invalid value: "-c": {LABEL_VALUE_RULE}'
    assert label_error("a=b_") == f'unable to parse requirement: values[0][a]: Invalid value: "b_": {LABEL_VALUE_RULE}'


def test_gt_lt_need_an_integer() -> None:
    assert (
        label_error("a>x")
        == "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
    )
    assert (
        label_error("a<")
        == "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"
    )
    # "-1" is an integer but not a valid label value.
    assert label_error("a>-1") == f'unable to parse requirement: values[0][a]: Invalid value: "-1": {LABEL_VALUE_RULE}'


# --- metav1.LabelSelector ------------------------------------------------------------------


def test_dict_selector_match_labels_and_expressions() -> None:
    selector = label_selector_from_dict(
        {
            "matchLabels": {"app": "darkroom"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "canary", "operator": "NotIn", "values": ["true"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector.matches({"app": "darkroom", "tier": "edge", "team": "imaging"})
    assert not selector.matches({"app": "darkroom", "tier": "edge", "team": "imaging", "canary": "true"})
    assert not selector.matches({"app": "darkroom", "tier": "edge"})
    assert not selector.matches({"app": "darkroom", "tier": "edge", "team": "x", "legacy": ""})
    assert not selector.matches({"app": "other", "tier": "edge", "team": "imaging"})
    assert selector.requires_exact_match("app") == "darkroom"


def test_dict_selector_none_and_empty() -> None:
    nothing = label_selector_from_dict(None)
    assert not nothing.matches({})
    assert not nothing.matches({"a": "b"})
    assert not nothing.empty
    everything = label_selector_from_dict({})
    assert everything.empty
    assert everything.matches({"a": "b"})
    assert label_selector_from_dict({"matchLabels": {}, "matchExpressions": []}).matches(None)


def test_dict_selector_errors() -> None:
    assert (
        dict_error({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]})
        == '"Equals" is not a valid label selector operator'
    )
    assert dict_error({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}) == (
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    )
    assert dict_error({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]}) == (
        'values: Invalid value: []string{"b"}: values set must be empty for exists and does not exist'
    )
    assert dict_error({"matchLabels": {"-bad": "x"}}) == f'key: Invalid value: "-bad": name part {QUALIFIED_NAME_RULE}'
    assert dict_error({"matchLabels": {"a": "-x"}}) == f'values[0][a]: Invalid value: "-x": {LABEL_VALUE_RULE}'


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
