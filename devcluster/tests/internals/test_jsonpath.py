"""The Kubernetes JSONPath dialect behaves like k8s.io/client-go/util/jsonpath (AllowMissingKeys).

Behaviours covered:

- bare paths and ``{...}`` templates are equivalent; ``$``/``@`` and spaces are ignored;
- fields, ``['key']`` brackets (split on unescaped dots, like kube), escaped dots in field names;
- indexes (negative too), slices with steps, ``[*]``, ``.*``, unions ``[0,2]``;
- recursive descent ``..name`` finds every ``name`` key at any depth;
- filters: ``==``/``!=`` on strings (double or single quotes), ``< > <= >=`` on numbers,
  boolean literals, existence ``[?(@.x)]``; comparing incompatible kinds is an evaluation error;
- missing keys give ``[]``; evaluation errors (index out of range, indexing a map, comparing an
  element that lacks the key) make ``evaluate`` return ``[]`` and ``find_results`` raise;
- top-level text nodes, one result list per node from ``find_results``;
- syntax errors raise JSONPathError (a ValueError) with client-go's wording;
- ``parse`` is cached and accepts a Compiled in ``evaluate``.
"""

from __future__ import annotations

from typing import Any

import pytest

from devcluster.jsonpath import Compiled, JSONPathError, evaluate, parse

OBJ: dict[str, Any] = {
    "metadata": {
        "name": "web",
        "labels": {"app.kubernetes.io/name": "darkroom", "tier": "edge"},
        "creationTimestamp": "2024-01-01T00:00:00Z",
    },
    "spec": {"version": "v1.2.3", "replicas": 3, "source": {"type": "S3", "name": "bucket"}, "enabled": True},
    "status": {
        "conditions": [
            {"type": "Available", "status": "False", "weight": 1},
            {"type": "Ready", "status": "True", "weight": 5},
            {"type": "Progressing", "status": "True", "weight": 2.5},
        ],
        "domains": ["a.example.com", "b.example.com", "c.example.com", "d.example.com"],
        "empty": None,
    },
}


def test_bare_path_and_template_are_equivalent() -> None:
    assert evaluate(".spec.version", OBJ) == ["v1.2.3"]
    assert evaluate("{.spec.version}", OBJ) == ["v1.2.3"]
    assert evaluate("$.spec.version", OBJ) == ["v1.2.3"]
    assert evaluate("{ .spec.replicas }", OBJ) == [3]


def test_missing_paths_give_empty_list() -> None:
    assert evaluate(".spec.nope", OBJ) == []
    assert evaluate(".nope.deeper.still", OBJ) == []
    assert evaluate('.status.conditions[?(@.type=="Missing")].status', OBJ) == []


def test_null_values_are_matches() -> None:
    assert evaluate(".status.empty", OBJ) == [None]


def test_bracket_keys_and_escaped_dots() -> None:
    assert evaluate("['spec']['source']['type']", OBJ) == ["S3"]
    assert evaluate(r".metadata.labels.app\.kubernetes\.io/name", OBJ) == ["darkroom"]
    assert evaluate(r"['metadata']['labels']['app\.kubernetes\.io/name']", OBJ) == ["darkroom"]
    # like client-go, an unescaped dot inside ['...'] still separates fields
    assert evaluate("['spec.source.type']", OBJ) == ["S3"]
    assert evaluate("['metadata.labels.app.kubernetes.io/name']", OBJ) == []


def test_indexes_slices_wildcards_and_unions() -> None:
    domains = OBJ["status"]["domains"]
    assert evaluate(".status.domains[0]", OBJ) == [domains[0]]
    assert evaluate(".status.domains[-1]", OBJ) == [domains[-1]]
    assert evaluate(".status.domains[1:3]", OBJ) == domains[1:3]
    assert evaluate(".status.domains[::2]", OBJ) == domains[::2]
    assert evaluate(".status.domains[*]", OBJ) == domains
    assert evaluate(".status.domains[0,2]", OBJ) == [domains[0], domains[2]]
    assert evaluate(".status.conditions[*].type", OBJ) == ["Available", "Ready", "Progressing"]
    assert evaluate(".spec.source.*", OBJ) == ["S3", "bucket"]


def test_recursive_descent() -> None:
    assert evaluate("..name", OBJ) == ["web", "bucket"]
    assert sorted(evaluate("..type", OBJ)) == ["Available", "Progressing", "Ready", "S3"]


def test_filters() -> None:
    assert evaluate('.status.conditions[?(@.type=="Ready")].status', OBJ) == ["True"]
    assert evaluate(".status.conditions[?(@.type=='Ready')].status", OBJ) == ["True"]
    assert evaluate('.status.conditions[?(@.type!="Ready")].type', OBJ) == ["Available", "Progressing"]
    # weights mix int64 and float64: Go's template comparison refuses, so the whole path errors
    assert evaluate(".status.conditions[?(@.weight>1)].type", OBJ) == []
    assert evaluate(".status.conditions[?(@.status)].type", OBJ) == ["Available", "Ready", "Progressing"]
    assert evaluate(".status.conditions[?(@.reason)].type", OBJ) == []


def test_numeric_filter_operators_on_integers() -> None:
    obj = {"items": [{"n": 1}, {"n": 2}, {"n": 3}]}
    assert evaluate(".items[?(@.n<2)].n", obj) == [1]
    assert evaluate(".items[?(@.n<=2)].n", obj) == [1, 2]
    assert evaluate(".items[?(@.n>2)].n", obj) == [3]
    assert evaluate(".items[?(@.n>=2)].n", obj) == [2, 3]
    assert evaluate(".items[?(@.n==2)].n", obj) == [2]
    assert evaluate(".items[?(@.n!=2)].n", obj) == [1, 3]
    floats = {"items": [{"n": 1.5}, {"n": 2.5}]}
    assert evaluate(".items[?(@.n>2.0)].n", floats) == [2.5]


def test_boolean_literals_in_filters() -> None:
    obj = {"items": [{"on": True, "id": "a"}, {"on": False, "id": "b"}]}
    assert evaluate(".items[?(@.on==true)].id", obj) == ["a"]
    assert evaluate(".items[?(@.on==false)].id", obj) == ["b"]


def test_evaluation_errors_are_empty_in_evaluate_but_raise_in_find_results() -> None:
    for expression in (
        ".status.domains[10]",  # index out of range
        ".spec[0]",  # indexing a map
        ".spec.source[?(@.x)]",  # filtering a map
        '.items[?(@.n=="1")]',  # int compared with string
        ".items[?(@.n==1.0)]",  # int64 compared with float64 (Go's template.Equal refuses)
        ".items[?(@.other==1)]",  # an element without the key: "can only compare one element at a time"
        "{range .items[*]}{.n}{end}",
    ):
        obj = OBJ | {"items": [{"n": 1}, {"m": 2}]}
        assert evaluate(expression, obj) == [], expression
        with pytest.raises(JSONPathError):
            parse(expression).find_results(obj)


def test_template_text_and_results_per_node() -> None:
    compiled = parse("version={.spec.version} replicas={.spec.replicas}")
    assert compiled.find_results(OBJ) == [["version="], ["v1.2.3"], [" replicas="], [3]]
    assert evaluate(compiled, OBJ) == ["version=", "v1.2.3", " replicas=", 3]
    assert parse("{.spec.nope}").find_results(OBJ) == [[]]


def test_quoted_literals_with_escapes() -> None:
    obj = {"items": [{"k": 'say "hi"'}, {"k": "tab\tbed"}]}
    assert evaluate('.items[?(@.k=="say \\"hi\\"")].k', obj) == ['say "hi"']
    assert evaluate('.items[?(@.k=="tab\\tbed")].k', obj) == ["tab\tbed"]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("{.spec", "unclosed action"),
        (".status.domains[0", "unterminated array"),
        (".status.domains[a]", "invalid array index a"),
        (".items[?(@.a==1]", "unterminated filter"),
        ("{.a ..}{.b....c}", "invalid multiple recursive descent"),
        ("{.a}{#}", "unrecognized character in action"),
        ('{"abc}', "unterminated quoted string"),
    ],
)
def test_syntax_errors(expression: str, message: str) -> None:
    with pytest.raises(JSONPathError, match=message.replace("[", r"\[")):
        parse(expression)
    assert issubclass(JSONPathError, ValueError)


def test_parse_is_cached_and_compiled_is_reusable() -> None:
    first = parse(".spec.version")
    assert isinstance(first, Compiled)
    assert parse(".spec.version") is first
    assert evaluate(first, OBJ) == ["v1.2.3"]
