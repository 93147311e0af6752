"""List/watch query parsing of the aggregated server (aggregator.queries), without a cluster.

Behaviours: field selectors (=, ==, !=, escapes, commas) over metadata.name/namespace, spec.priority,
spec.taskState (defaulting to Pending), unknown fields and unparsable terms as kube's 400 messages;
ListOptions validation as k8s.io/apimachinery's (422 causes for resourceVersionMatch and
sendInitialEvents misuse); bad integers and booleans are 400; resourceVersions must be numbers.
"""

from __future__ import annotations

import pytest

from aggregator import queries
from aggregator.statuses import ApiError

TASK = {"metadata": {"name": "a,b", "namespace": "team"}, "spec": {"priority": 9}}


def test_field_selectors_match_like_kube() -> None:
    assert queries.parse_fields("spec.priority=9").matches(TASK)
    assert queries.parse_fields("spec.priority==9,metadata.namespace=team").matches(TASK)
    assert not queries.parse_fields("spec.priority!=9").matches(TASK)
    assert queries.parse_fields("spec.taskState=Pending").matches(TASK)  # the CRD's default
    assert queries.parse_fields(r"metadata.name=a\,b").matches(TASK)
    assert queries.parse_fields("").empty and queries.parse_fields(None).empty
    assert queries.parse_fields("metadata.name=x").exact("metadata.name") == "x"
    assert queries.parse_fields("metadata.name!=x").exact("metadata.name") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec.details=x", "field label not supported: spec.details"),
        ("status.phase!=x", "field label not supported: status.phase"),
        ("spec.priority", "invalid selector: 'spec.priority'; can't understand 'spec.priority'"),
        (r"metadata.name=a\q", r"invalid field selector: invalid escape sequence: '\q' in 'metadata.name=a\q'"),
    ],
)
def test_bad_field_selectors_are_400(text: str, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        queries.parse_fields(text)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (400, "BadRequest", message)


def causes(args: dict[str, str]) -> list[str]:
    with pytest.raises(ApiError) as caught:
        queries.parse(args)
    assert caught.value.code == 422 and caught.value.reason == "Invalid"
    assert caught.value.details is not None
    return [c["message"] for c in caught.value.details["causes"]]


def test_list_options_are_validated_as_kube_does() -> None:
    assert causes({"resourceVersionMatch": "NotOlderThan"}) == [
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    ]
    assert causes({"resourceVersion": "0", "resourceVersionMatch": "Exact"}) == [
        'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
    ]
    assert causes({"resourceVersion": "5", "resourceVersionMatch": "Newest"}) == [
        'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'
    ]
    assert causes({"sendInitialEvents": "true"}) == ["Forbidden: sendInitialEvents is forbidden for list"]
    assert causes({"watch": "true", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"}) == [
        "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    ]
    assert causes({"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}) == [
        "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true"
    ]
    ok = queries.parse({"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "allowWatchBookmarks": "true"})
    assert ok.watch and ok.send_initial_events and ok.allow_watch_bookmarks


def test_bad_numbers_and_booleans_are_400() -> None:
    for args in ({"limit": "ten"}, {"timeoutSeconds": "soon"}, {"watch": "maybe"}, {"labelSelector": "a in (b"}):
        with pytest.raises(ApiError) as caught:
            queries.parse(args)
        assert caught.value.code == 400, args
    assert queries.parse({"limit": "-3"}).limit == 0  # kube: a limit below 1 means no limit
    with pytest.raises(ApiError):
        queries.resource_version_number("abc")
    assert queries.resource_version_number("42") == 42
