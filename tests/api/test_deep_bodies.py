"""Bodies nesting objects and arrays too deep: every endpoint that takes a JSON body answers 400 problem+json
naming the limit (:data:`backend.api.bodies.MAX_DEPTH`) before anything recursive sees the body — a 1,000-deep
body used to reach the parser's and validator's recursion (a 500) — and a body at the limit is read as usual.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.bodies import MAX_DEPTH

from .payloads import s3, task, webfolder

TOO_DEEP = f"the request body nests deeper than {MAX_DEPTH} levels of objects and arrays"


def nested(levels: int) -> str:
    """``levels`` arrays, one inside the other, opened and closed."""
    return "[" * levels + "]" * levels


def with_extra(body: dict[str, Any], levels: int) -> str:
    """``body`` (one level) with a field holding ``levels - 1`` nested arrays: ``levels`` deep in all."""
    text = json.dumps(body)
    return text[:-1] + f', "extra": {nested(levels - 1)}}}'


def payloads(namespace: str) -> dict[str, dict[str, Any]]:
    return {
        "darkrooms": webfolder("deep", namespace),
        "tasks": task("deep", namespace),
        "postgresqls": {"name": "deep", "namespace": namespace},
    }


def writes(plural: str, namespace: str) -> list[tuple[str, str, str]]:
    """``(method, url, content type)`` of every write of ``plural`` that takes a body."""
    item = f"/{plural}/{namespace}/deep"
    return [
        ("POST", f"/{plural}", "application/json"),
        ("PUT", item, "application/json"),
        ("PATCH", item, "application/merge-patch+json"),
        ("PATCH", item, "application/json"),
    ]


@pytest.mark.parametrize("plural", ["darkrooms", "tasks", "postgresqls"])
@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1_000, 100_000])
def test_every_write_refuses_a_body_nested_too_deep(http: FlaskClient, namespace: str, plural: str, levels: int) -> None:
    for body in (nested(levels), with_extra(payloads(namespace)[plural], levels)):
        for method, url, content_type in writes(plural, namespace):
            response = http.open(url, method=method, data=body, content_type=content_type)
            assert response.status_code == 400, (method, url, response.get_data(as_text=True)[:300])
            assert response.mimetype == "application/problem+json"
            assert response.get_json()["detail"] == TOO_DEEP
    assert http.get(f"/{plural}?namespace={namespace}").get_json()["total"] == 0  # nothing was written


@pytest.mark.parametrize("plural", ["darkrooms", "tasks", "postgresqls"])
def test_a_body_at_the_limit_is_read_as_usual(http: FlaskClient, namespace: str, plural: str) -> None:
    """No field of ours takes free-form JSON, so a body of the limit's depth is an unknown field — named in a 422."""
    for method, url, content_type in writes(plural, namespace):
        response = http.open(url, method=method, data=with_extra(payloads(namespace)[plural], MAX_DEPTH), content_type=content_type)
        assert response.status_code == 422, (method, url, response.get_data(as_text=True)[:300])
        assert "extra" in response.get_json()["errors"]


def test_brackets_inside_strings_do_not_count(http: FlaskClient, namespace: str) -> None:
    deep_text = nested(1_000) + '\\"{['
    body = s3("strings", namespace, keys=("AKIA" + deep_text, "secret"))
    response = http.post("/darkrooms", data=json.dumps(body), content_type="application/json")
    assert response.status_code != 400, response.get_data(as_text=True)[:300]


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1_000, 100_000])
def test_the_login_refuses_a_json_body_nested_too_deep(http: FlaskClient, levels: int) -> None:
    for body in (nested(levels), with_extra({"token": "anything"}, levels)):
        response = http.post("/login", data=body, content_type="application/json")
        assert response.status_code == 400, response.get_data(as_text=True)[:300]
        assert response.get_json()["detail"] == TOO_DEEP


def test_the_login_takes_a_json_body_at_the_limit(http: FlaskClient) -> None:
    """The local mode's login (nothing to log in to) still wants a token; unknown fields are ignored there."""
    response = http.post("/login", data=with_extra({"token": "anything"}, MAX_DEPTH), content_type="application/json")
    assert response.status_code == 204, response.get_data(as_text=True)[:300]
