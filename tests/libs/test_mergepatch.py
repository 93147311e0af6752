"""The shared JSON merge patch (``mergepatch``) behaves as RFC 7386 says, and copies.

Behaviours covered:

- every example of RFC 7386 Appendix A, and section 3's example (a nested object merged, a key removed,
  a list replaced), give the RFC's result;
- a patch that is not an object replaces the target (arrays, strings, ``null``); an object patch applied
  to a target that is not an object starts from ``{}``;
- copying semantics: neither input is changed, and the result shares no dict or list with either (also
  for values taken unchanged from the target or the patch);
- ``copy_json`` deep-copies dicts and lists, and turns a read-only cached body's tuples and dict
  subclass into plain lists and dicts;
- the API's PATCH (``backend.core.services``) and devcluster's ``devcluster.patching.merge_patch`` are this
  one function.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mergepatch import copy_json, merge_patch

# RFC 7386 Appendix A, in the order listed there: (original, patch, result).
APPENDIX_A: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), APPENDIX_A)
def test_rfc7386_appendix_a(target: Any, patch: Any, expected: Any) -> None:
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert merge_patch(target, patch) == expected
    assert target == target_before
    assert patch == patch_before


def test_rfc7386_section_3_example() -> None:
    target = {
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged",
    }
    patch = {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": None}, "tags": ["example"]}
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890",
    }


def test_an_object_patch_of_a_scalar_starts_from_an_empty_object() -> None:
    assert merge_patch("text", {"a": {"b": None, "c": 1}}) == {"a": {"c": 1}}
    assert merge_patch(None, {"a": 1}) == {"a": 1}


def test_the_result_shares_nothing_with_the_inputs() -> None:
    target = {"keep": {"x": [1]}, "merged": {"y": [2]}}
    patch = {"add": {"z": [3]}, "merged": {"w": [4]}, "list": [{"v": 5}]}
    result = merge_patch(target, patch)
    assert result == {"keep": {"x": [1]}, "merged": {"y": [2], "w": [4]}, "add": {"z": [3]}, "list": [{"v": 5}]}
    result["keep"]["x"].append(9)
    result["merged"]["y"].append(9)
    result["merged"]["w"].append(9)
    result["add"]["z"].append(9)
    result["list"][0]["v"] = 9
    assert target == {"keep": {"x": [1]}, "merged": {"y": [2]}}
    assert patch == {"add": {"z": [3]}, "merged": {"w": [4]}, "list": [{"v": 5}]}
    replacing = [{"b": 2}]
    replaced = merge_patch({"a": 1}, replacing)
    replaced[0]["b"] = 3
    assert replacing == [{"b": 2}]


def test_copy_json_is_deep_and_plain() -> None:
    class ReadOnly(dict[str, Any]):
        """Stands in for cluster.bodies.FrozenDict (a dict subclass; lists frozen into tuples)."""

    value = ReadOnly(spec=ReadOnly(items=({"a": 1}, [2])), n=1)
    copied = copy_json(value)
    assert copied == {"spec": {"items": [{"a": 1}, [2]]}, "n": 1}
    assert type(copied) is dict and type(copied["spec"]) is dict and type(copied["spec"]["items"]) is list
    copied["spec"]["items"][1].append(3)
    assert value["spec"]["items"][1] == [2]
    assert merge_patch(value, {"spec": {"extra": True}}) == {"spec": {"items": [{"a": 1}, [2]], "extra": True}, "n": 1}


def test_the_api_and_devcluster_apply_this_one_implementation() -> None:
    from backend.core import services
    from devcluster import patching

    assert vars(services)["merge_patch"] is merge_patch  # the name services.py applies a PATCH with
    assert patching.merge_patch is merge_patch
