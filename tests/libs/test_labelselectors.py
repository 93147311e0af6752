"""The shared label-selector package behaves as apimachinery's ``labels`` package does.

Behaviours covered:

- ``parse`` (``labels.Parse``): ``=``, ``==``, ``!=``, ``in``, ``notin``, bare key (exists), ``!key``,
  ``>`` and ``<`` (integer comparison, non-integers never match), comma = AND, whitespace
  tolerance, ``in``/``notin`` usable as keys and values, empty value sets ``()`` meaning ``""``;
- empty/None selector matches everything, ``matches(None)`` treats labels as empty;
- parse errors are :class:`InvalidSelector` with apimachinery's exact wording (lexer/parser
  messages, ``unable to parse requirement: ...`` wrapping, key and value validation messages,
  Gt/Lt integer check);
- ``from_dict`` (metav1.LabelSelectorAsSelector): matchLabels + matchExpressions, None matches
  nothing, ``{}`` matches everything, bad operator / missing values / bad keys rejected;
- ``from_set`` (labels.SelectorFromSet): required equalities, in key order;
- ``quoting.quote`` is Go's ``strconv.Quote`` (what the messages quote values with).
"""

from __future__ import annotations

from typing import Any

import pytest

from labelselectors import InvalidSelector, from_dict, from_set, parse
from labelselectors.quoting import quote, string_slice

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
    with pytest.raises(InvalidSelector) as info:
        parse(text)
    return str(info.value)


def dict_error(selector: dict[str, Any]) -> str:
    with pytest.raises(InvalidSelector) as info:
        from_dict(selector)
    return str(info.value)


# --- label selectors: matching -------------------------------------------------------------


def test_equality_operators() -> None:
    for text in ("app=web", "app==web", " app = web "):
        selector = parse(text)
        assert selector.matches({"app": "web"})
        assert not selector.matches({"app": "db"})
        assert not selector.matches({})
    not_equal = parse("app!=web")
    assert not_equal.matches({"app": "db"})
    assert not_equal.matches({})  # a missing key is "not equal"
    assert not not_equal.matches({"app": "web"})


def test_set_operators() -> None:
    in_set = parse("tier in (front, back)")
    assert in_set.matches({"tier": "front"})
    assert in_set.matches({"tier": "back"})
    assert not in_set.matches({"tier": "cache"})
    assert not in_set.matches({})
    not_in = parse("tier notin (front)")
    assert not_in.matches({"tier": "back"})
    assert not_in.matches({})
    assert not not_in.matches({"tier": "front"})


def test_exists_and_does_not_exist() -> None:
    exists = parse("app")
    assert exists.matches({"app": ""})
    assert not exists.matches({"other": "x"})
    missing = parse("!app")
    assert missing.matches({"other": "x"})
    assert not missing.matches({"app": "web"})
    assert parse(" ! app ").matches({})


def test_greater_and_less_than_compare_integers() -> None:
    gt = parse("replicas>2")
    assert gt.matches({"replicas": "3"})
    assert gt.matches({"replicas": "10"})  # numerically, not lexically
    assert not gt.matches({"replicas": "2"})
    assert not gt.matches({"replicas": "many"})
    assert not gt.matches({})
    lt = parse("replicas < 2")
    assert lt.matches({"replicas": "1"})
    assert not lt.matches({"replicas": "2"})


def test_comma_is_and_and_whitespace_is_tolerated() -> None:
    selector = parse(" app = web ,\ttier in ( front ,back ) , !legacy ")
    assert selector.matches({"app": "web", "tier": "back"})
    assert not selector.matches({"app": "web", "tier": "back", "legacy": "true"})
    assert not selector.matches({"app": "web"})


def test_empty_values_and_keywords_as_identifiers() -> None:
    assert parse("a=").matches({"a": ""})
    assert parse("a in ()").matches({"a": ""})
    assert parse("x in (foo,,baz)").matches({"x": ""})
    assert parse("in in (in, notin)").matches({"in": "notin"})
    assert parse("a=in").matches({"a": "in"})


def test_empty_selector_matches_everything() -> None:
    for text in (None, ""):
        selector = parse(text)
        assert selector.empty
        assert selector.matches(None)
        assert selector.matches({"a": "b"})
    assert not parse("a").empty
    assert not parse("a").matches(None)
    assert parse("!a").matches(None)


def test_qualified_keys_and_string_form() -> None:
    selector = parse("example.com/app=web,app.kubernetes.io/name in (b,a)")
    assert selector.matches({"example.com/app": "web", "app.kubernetes.io/name": "a"})
    assert str(selector) == "app.kubernetes.io/name in (a,b),example.com/app=web"
    assert parse("a=b") == parse("a=b")
    assert hash(parse("a=b")) == hash(parse(" a = b "))


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
    selector = from_dict(
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
    nothing = from_dict(None)
    assert not nothing.matches({})
    assert not nothing.matches({"a": "b"})
    assert not nothing.empty
    everything = from_dict({})
    assert everything.empty
    assert everything.matches({"a": "b"})
    assert from_dict({"matchLabels": {}, "matchExpressions": []}).matches(None)


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


# --- labels.SelectorFromSet ----------------------------------------------------------------


def test_from_set_requires_each_pair() -> None:
    selector = from_set({"tier": "gold", "app": "web"})
    assert str(selector) == "app=web,tier=gold"
    assert selector.matches({"app": "web", "tier": "gold", "x": "y"})
    assert not selector.matches({"app": "web"})
    assert from_set({}).empty


# --- strconv.Quote -------------------------------------------------------------------------


def test_quote_is_go_strconv_quote() -> None:
    # Expected values printed by Go 1.26: fmt.Println(strconv.Quote(s)) and fmt.Printf("%#v", []string{...}).
    assert quote("plain") == '"plain"'
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    assert quote("\a\b\f\n\r\t\v") == '"\\a\\b\\f\\n\\r\\t\\v"'
    assert quote("\x00\x1b\x7f") == '"\\x00\\x1b\\x7f"'
    assert quote("\u0085\u00a0\u00ad\u2028") == '"\\u0085\\u00a0\\u00ad\\u2028"'
    assert quote("é☺ 日本") == '"é☺ 日本"'
    assert quote("\U000e0001") == '"\\U000e0001"'
    assert quote("\u3000\u200b\ufeff") == '"\\u3000\\u200b\\ufeff"'
    assert quote("\ud800") == '"\ufffd"'
    assert string_slice([]) == "[]string(nil)"
    assert string_slice(["a", "b\n"]) == '[]string{"a", "b\\n"}'
