"""Shared conversion pieces: API server field paths → friendly paths (and messages), marshmallow error
flattening, continue tokens and pagination, per-version memoized rendering.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.api.problems import problem_of
from backend.core import errors, listing
from backend.core.conversions import friendly_path, invalid_errors
from backend.core.kinds.darkrooms import RENAMES as DARKROOM_RENAMES
from backend.core.kinds.tasks import RENAMES as TASK_RENAMES
from backend.core.validation import flatten
from cluster import Invalid


@pytest.mark.parametrize(
    ("field", "renames", "path"),
    [
        ("spec.subDomains[1]", DARKROOM_RENAMES, "subDomains.1"),
        ("spec.source.baseUrl", DARKROOM_RENAMES, "source.baseUrl"),
        ("spec.source.credentialsSecretRef.name", DARKROOM_RENAMES, "source"),
        ("spec.taskState", TASK_RENAMES, "state"),
        ("metadata.name", {}, "name"),
        ("metadata.labels", {}, "$"),
        ("", {}, "$"),
    ],
)
def test_server_field_paths_become_friendly(field: str, renames: dict[str, str], path: str) -> None:
    assert friendly_path(field, renames=renames) == path


def test_invalid_causes_are_keyed_and_worded_with_friendly_paths() -> None:
    error = Invalid(
        "invalid",
        body={
            "details": {
                "causes": [
                    {
                        "field": "spec.replicas",
                        "reason": "FieldValueInvalid",
                        "message": "Invalid value: 500: spec.replicas in body should be <= 100",
                    },
                    {"field": "spec.subDomains[2]", "reason": "FieldValueDuplicate", "message": 'Duplicate value: "ok"'},
                ]
            }
        },
    )
    assert invalid_errors(error) == {
        "replicas": ["Invalid value: 500: replicas in body should be <= 100"],
        "subDomains.2": ['Duplicate value: "ok"'],
    }
    assert invalid_errors(Invalid("no causes")) == {"$": ["no causes"]}


def test_flatten_nested_marshmallow_errors() -> None:
    messages = {"source": {"baseUrl": ["bad"], "_schema": ["whole source"]}, "subDomains": {1: ["dup"]}, "_schema": ["root"]}
    assert flatten(messages) == {"source.baseUrl": ["bad"], "source": ["whole source"], "subDomains.1": ["dup"], "$": ["root"]}


def objects(*keys: str) -> list[dict[str, Any]]:
    return [{"metadata": {"namespace": k.split("/")[0], "name": k.split("/")[1], "uid": k, "resourceVersion": "1"}} for k in keys]


def test_pages_follow_the_key_order_and_survive_removals() -> None:
    items = objects("a/x", "a/y", "b/x", "b/z")
    first, token = listing.paginate(items, listing.ListQuery(None, None, 2, None))
    assert [o["metadata"]["uid"] for o in first] == ["a/x", "a/y"]
    assert token is not None
    after = listing.decode_token(token)
    rest, last = listing.paginate([items[0], *items[2:]], listing.ListQuery(None, None, 2, after))
    assert ([o["metadata"]["uid"] for o in rest], last) == (["b/x", "b/z"], None)


def test_a_sorted_list_pages_by_offset_and_refuses_a_token_of_another_order() -> None:
    items = objects("b/z", "a/y", "b/x")  # in some sort's order
    sorted_query = listing.ListQuery(None, None, 2, None, sort="-name")
    first, token = listing.paginate(items, sorted_query)
    assert [o["metadata"]["uid"] for o in first] == ["b/z", "a/y"] and token is not None
    after = listing.decode_token(token)
    rest, last = listing.paginate(items, listing.ListQuery(None, None, 2, after, sort="-name"))
    assert ([o["metadata"]["uid"] for o in rest], last) == (["b/x"], None)
    with pytest.raises(errors.BadRequest):
        listing.paginate(items, listing.ListQuery(None, None, 2, after))  # an offset in the cache's order
    with pytest.raises(errors.BadRequest):
        listing.paginate(items, listing.ListQuery(None, None, 2, "a/y", sort="-name"))  # a key in a sorted list


# not base64, not JSON, {"x":1}, {"after":1}, {"offset":"a"}, {"offset":-1}
@pytest.mark.parametrize("token", ["%%%", "bm90IGpzb24", "eyJ4IjoxfQ", "eyJhZnRlciI6MX0", "eyJvZmZzZXQiOiJhIn0", "eyJvZmZzZXQiOi0xfQ"])
def test_foreign_continue_tokens_are_bad_requests(token: str) -> None:
    with pytest.raises(errors.BadRequest) as caught:
        listing.decode_token(token)
    assert problem_of(caught.value).status == 400


def test_renderer_converts_each_version_once() -> None:
    calls: list[str] = []

    def convert(obj: Any, extra: Any) -> dict[str, Any]:
        calls.append(obj["metadata"]["uid"])
        return {"uid": obj["metadata"]["uid"], "extra": extra}

    renderer = listing.Renderer(convert)
    (obj,) = objects("a/x")
    assert renderer.encoded(obj) == b'{"uid":"a/x","extra":null}'
    renderer.encoded(obj)
    assert calls == ["a/x"]
    renderer.encoded({"metadata": {**obj["metadata"], "resourceVersion": "2"}})
    renderer.encoded(obj, ["event"], ("e1",))
    assert calls == ["a/x", "a/x", "a/x"]
