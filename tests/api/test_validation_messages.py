"""How a 422 reads, for every kind, against devcluster: one message style and every problem at once.

Behaviours: no message of ours is marshmallow's own wording ("Missing data for required field.",
"Not a valid integer.", "Unknown field.", "Must be one of: ..."): every one is lower case without a final
full stop ("required", "must be a whole number", "unknown field", "must be one of WebFolder, S3"), on POST,
PUT and PATCH of Darkrooms, Tasks and Postgresqls. A body with problems in several layers gets them all in
one answer: fields that fail beside the source table's rules (an S3 source's bad bucket and a
WebFolder field), sub-domain duplicates beside an invalid sub-domain (indices as sent); a PATCH's own errors beside
what its merged result lacks (switching a WebFolder to S3 without a bucket); the kind's own checks
(a Postgresql's storage that must not shrink) beside the schema's, on PUT and PATCH — and nothing written.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from backend.core.schemas import messages
from tests.core import conformance

from .payloads import webfolder

MERGE = "application/merge-patch+json"
MARSHMALLOW = re.compile(r"^[A-Z].*\.$|Missing data|Not a valid|Unknown field|Must be|Length must|may not be null|Invalid (input )?type")


def errors_of(response: TestResponse) -> dict[str, list[str]]:
    assert response.status_code == 422, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    conformance.validate(body, "Problem")
    errors: dict[str, list[str]] = body["errors"]
    return errors


def in_our_style(errors: dict[str, list[str]]) -> None:
    for path, found in errors.items():
        for message in found:
            assert not MARSHMALLOW.search(message), f"{path}: {message!r} is marshmallow's wording"


def patch(http: FlaskClient, url: str, body: Any) -> TestResponse:
    return http.patch(url, data=orjson.dumps(body), content_type=MERGE)


def test_the_table_rewords_marshmallows_messages() -> None:
    assert messages.reworded("Missing data for required field.") == "required"
    assert messages.reworded("Must be greater than or equal to 0 and less than or equal to 100.") == "must be between 0 and 100"
    assert messages.reworded("Must be one of: WebFolder, S3.") == "must be one of WebFolder, S3"
    assert messages.reworded("Longer than maximum length 1024.") == "must have a length of at most 1024"
    assert messages.reworded("required for an S3 source") == "required for an S3 source"  # ours: unchanged
    assert messages.restyle({"a": {0: ["Not a valid integer."]}, "b": ["Unknown field."]}) == {
        "a": {0: ["must be a whole number"]},
        "b": ["unknown field"],
    }


def test_every_kind_answers_in_one_style(http: FlaskClient, namespace: str) -> None:
    missing = errors_of(http.post("/darkrooms", json={"namespace": namespace}))
    assert missing == {"name": ["required"], "source": ["required"], "subDomains": ["required"]}
    bad = errors_of(http.post("/darkrooms", json=webfolder("x", namespace, replicas="two", cacheTime=-1, colour=1, source={"type": "FTP"})))
    assert bad["replicas"] == ["must be a whole number"] and bad["colour"] == ["unknown field"]
    assert bad["source.type"] == ["must be one of WebFolder, S3"] and bad["cacheTime"] == ["must be 0 or more"]
    in_our_style(missing | bad)

    task = errors_of(http.post("/tasks", json={"name": "t", "namespace": namespace, "priority": 11, "details": 3}))
    assert task["deadline"] == ["required"] and task["details"] == ["must be a string"]
    in_our_style(task)

    database = errors_of(http.post("/postgresqls", json={"name": "d", "namespace": namespace, "storage": [], "user": None}))
    in_our_style(database)
    assert database["storage"] == ["must be a JSON object"]

    http.post("/tasks", json={"name": "t", "namespace": namespace, "priority": 1, "deadline": "2031-01-01T00:00:00Z"})
    url = f"/tasks/{namespace}/t"
    in_our_style(errors_of(http.put(url, json={"priority": "high", "colour": 1})))
    in_our_style(errors_of(patch(http, url, {"priority": True, "deadline": "soon"})))


# A JSON name (camelCase, or a dotted path) or a bound nobody means (int64's) inside a message.
INTERNAL = re.compile(r"\b[a-z]+[A-Z]\w*\b|\b[a-zA-Z]+\.[a-zA-Z]+\.?[a-zA-Z]*\b(?<!e\.g)|\d{10,}")


def in_plain_words(errors: dict[str, list[str]]) -> None:
    for path, found in errors.items():
        for message in found:
            assert not INTERNAL.search(message), f"{path}: {message!r} names an internal"


def test_messages_people_read_use_plain_words(http: FlaskClient, namespace: str) -> None:
    """The dashboard shows these under the field's label ("Secret key", "Cache time"): no JSON names, no int64 bounds."""
    source = {"type": "S3", "bucket": "pics", "region": "eu-west-1", "accessKey": "AKIAEXAMPLE"}
    darkroom = errors_of(
        http.post("/darkrooms", json=webfolder("p", namespace, source=source, replicas="two", cacheTime=-1, subDomains=["a", "b", "a"]))
    )
    assert darkroom == {
        "source.secretKey": ["required together with the access key"],
        "replicas": ["must be a whole number"],
        "cacheTime": ["must be 0 or more"],
        "subDomains.2": ["the same as sub-domain 1"],
    }
    huge = errors_of(http.post("/darkrooms", json=webfolder("h", namespace, cacheTime=2**63)))
    assert huge == {"cacheTime": ["must be a smaller number"]}
    database = errors_of(
        http.post(
            "/postgresqls",
            json={
                "name": "p",
                "namespace": namespace,
                "password": "long-enough-password",
                "passwordSecretRef": {"name": "mine"},
                "parameters": {"max_connections": "many", "statement_timeout": "soon"},
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            },
        )
    )
    assert database == {
        "password": ["not together with an existing Secret: the password is read from that Secret"],
        "parameters.max_connections": ["must be a whole number, e.g. 100"],
        "parameters.statement_timeout": ["must be a duration (a whole number, optionally with us, ms, s, min, h or d), e.g. 30s"],
        "resources.requests.cpu": ["must not exceed the cpu limit (1)"],
    }
    task = errors_of(http.post("/tasks", json={"name": "t", "namespace": namespace, "priority": -1, "deadline": "2031-01-01T00:00:00Z"}))
    assert task == {"priority": ["must be between 0 and 10"]}
    in_plain_words(darkroom | huge | database | task)
    in_our_style(darkroom | huge | database | task)


def test_a_body_gets_every_problem_at_once(http: FlaskClient, namespace: str) -> None:
    source = {"type": "S3", "bucket": "B!", "baseUrl": "https://x.example"}  # a bad bucket and a WebFolder field
    body = webfolder("all", namespace, source=source, subDomains=["Bad!", "ok", "ok"], replicas=500)
    errors = errors_of(http.post("/darkrooms", json=body))
    assert errors == {
        "source.bucket": ["must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-'"],
        "source.baseUrl": ["only used by WebFolder sources"],
        "subDomains.0": ["must be a DNS label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit"],
        "subDomains.2": ["the same as sub-domain 2"],  # judged on the list as sent
        "replicas": ["must be between 0 and 100"],
    }
    assert http.get(f"/darkrooms/{namespace}/all").status_code == 404


def test_a_patch_gets_its_own_problems_and_its_results_at_once(http: FlaskClient, namespace: str, custom: Any) -> None:
    assert http.post("/darkrooms", json=webfolder("web", namespace)).status_code == 201
    url = f"/darkrooms/{namespace}/web"
    errors = errors_of(patch(http, url, {"replicas": "two", "source": {"type": "S3"}}))
    assert errors == {
        "replicas": ["must be a whole number"],  # the patch's own
        "source.bucket": ["required for an S3 source"],  # what the merged result lacks
    }
    assert errors_of(patch(http, f"/darkrooms/{namespace}/missing", {"replicas": "two"})) == {"replicas": ["must be a whole number"]}
    stored = custom.get_namespaced_custom_object("deployments.example.com", "v1", namespace, "darkrooms", "web")
    assert stored["spec"]["source"]["type"] == "WebFolder" and stored["metadata"]["generation"] == 1


def test_the_kinds_own_checks_come_with_the_schemas(http: FlaskClient, namespace: str) -> None:
    body = {"name": "db", "namespace": namespace, "storage": {"size": "5Gi"}}
    assert http.post("/postgresqls", json=body).status_code == 201
    url = f"/postgresqls/{namespace}/db"
    shrink = "cannot shrink from 5Gi to 1Gi"
    put = errors_of(http.put(url, json={**body, "storage": {"size": "1Gi"}, "version": "9", "deletionPolicy": "Keep"}))
    assert put["storage.size"] == [shrink] and set(put) == {"storage.size", "version", "deletionPolicy"}
    patched = errors_of(patch(http, url, {"storage": {"size": "1Gi"}, "user": "postgres"}))
    assert patched["storage.size"] == [shrink] and set(patched) == {"storage.size", "user"}
    bad_size = errors_of(patch(http, url, {"storage": {"size": "lots"}, "user": "postgres"}))
    assert set(bad_size) == {"storage.size", "user"} and shrink not in bad_size["storage.size"]  # a size that failed is not judged again
    in_our_style(put | patched | bad_size)
