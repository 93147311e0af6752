"""Darkroom payloads: the seed's JSON is accepted, friendly → CR → friendly round-trips, every validation
rule reports on its friendly field path, unknown fields are named, S3 keys are optional (a public bucket) but
come in pairs and never reach a CR or a response, and ``status.tls`` (false when the reconciler has not said).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from marshmallow import ValidationError

from backend.core.kinds import darkrooms as conversion
from backend.core.schemas.darkrooms import DarkroomCreateSchema, DarkroomUpdateSchema
from backend.core.validation import flatten
from kinds import darkrooms as darkroom_kind
from tests.core import conformance

# The seed's create payload and list item (002_*: `curl localhost:5000/darkrooms`), field names as there.
SEED_CREATE: dict[str, Any] = {
    "name": "darkroom-sample",
    "version": "0.1.0",
    "source": {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"},
    "subDomains": ["ajatprabha"],
}
SEED_ITEM = {**SEED_CREATE, "status": {"domains": []}}
S3: dict[str, Any] = {
    "name": "s3-demo",
    "namespace": "media",
    "version": "v0.1.0",
    "replicas": 2,
    "source": {
        "type": "S3",
        "bucket": "demo-images",
        "region": "eu-west-1",
        "endpoint": "https://s3.eu-west-1.amazonaws.com",
        "pathPrefix": "originals/",
        "accessKey": "AKIA-SENTINEL-ACCESS",
        "secretKey": "SENTINEL-SECRET-KEY-VALUE",
    },
    "subDomains": ["s3-images", "cdn"],
    "cacheTime": 86400,
}


def errors_of(payload: Any, schema: type = DarkroomCreateSchema) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        schema().load(payload)
    return flatten(caught.value.messages)


def as_cr(friendly: dict[str, Any], *, secret_name: str | None = None, **meta: Any) -> dict[str, Any]:
    """What the API server would store and return for a friendly payload."""
    return {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {
            "name": friendly["name"],
            "namespace": friendly["namespace"],
            "uid": "u-1",
            "resourceVersion": "7",
            "generation": 1,
            **meta,
        },
        "spec": conversion.to_spec(friendly, secret_name=secret_name),
    }


def test_the_seed_payload_is_accepted_and_becomes_the_seed_cr() -> None:
    friendly = DarkroomCreateSchema().load(SEED_CREATE)
    assert friendly["namespace"] == "default"
    assert conversion.to_spec(friendly, secret_name=None) == {
        "version": "0.1.0",
        "source": {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"},
        "subDomains": ["ajatprabha"],
    }


def test_a_seed_list_item_can_be_sent_back_its_read_only_fields_are_ignored() -> None:
    friendly = DarkroomCreateSchema().load(SEED_ITEM)
    assert "status" not in conversion.to_spec(friendly, secret_name=None)


def test_a_response_can_be_sent_back_as_a_put_body() -> None:
    response = conversion.to_friendly(as_cr(DarkroomCreateSchema().load(SEED_CREATE)))
    friendly = DarkroomUpdateSchema().load(copy.deepcopy(response))
    assert conversion.to_spec(friendly, secret_name=None)["source"] == {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"}


@pytest.mark.parametrize("payload", [SEED_CREATE, S3], ids=["webfolder", "s3"])
def test_friendly_to_cr_to_friendly_round_trips(payload: dict[str, Any]) -> None:
    friendly = DarkroomCreateSchema().load(payload)
    secret = darkroom_kind.credentials_secret_name(friendly["name"]) if conversion.keys_of(friendly) else None
    back = conversion.to_friendly(as_cr(friendly, secret_name=secret))
    sent = {"namespace": "default", **{k: v for k, v in payload.items() if k != "source"}}
    assert {k: back[k] for k in sent} == sent
    keys = ("accessKey", "secretKey")
    shown = ("credentialsSet", "credentialsSecret")
    assert {k: v for k, v in back["source"].items() if v is not None and k not in shown} == {
        k: v for k, v in payload["source"].items() if k not in keys
    }
    assert back["source"]["credentialsSet"] is (secret is not None)
    assert back["source"]["credentialsSecret"] == ({"name": secret, "owned": True} if secret else None)
    conformance.validate(back, "Darkroom")


def test_a_secret_of_the_users_is_not_the_darkrooms_own() -> None:
    """The delete dialog's truth: only the Secret the API stores keys in goes with the Darkroom; one of the user's never."""
    friendly = DarkroomCreateSchema().load(S3)
    own = conversion.to_friendly(as_cr(friendly, secret_name="s3-demo-s3-credentials"))
    theirs = conversion.to_friendly(as_cr(friendly, secret_name="team-s3-keys"))
    assert own["source"]["credentialsSecret"] == {"name": "s3-demo-s3-credentials", "owned": True}
    assert theirs["source"]["credentialsSecret"] == {"name": "team-s3-keys", "owned": False}
    assert conversion.to_friendly(as_cr(DarkroomCreateSchema().load(SEED_CREATE)))["source"]["credentialsSecret"] is None
    DarkroomUpdateSchema().load(copy.deepcopy(theirs))  # a response can be sent back


def test_s3_keys_go_to_the_secret_name_never_into_the_cr_or_the_response() -> None:
    friendly = DarkroomCreateSchema().load(S3)
    assert conversion.keys_of(friendly) == ("AKIA-SENTINEL-ACCESS", "SENTINEL-SECRET-KEY-VALUE")
    cr = as_cr(friendly, secret_name="s3-demo-s3-credentials")
    assert cr["spec"]["source"]["credentialsSecretRef"] == {"name": "s3-demo-s3-credentials"}
    response = conversion.to_friendly(cr)
    for text in (repr(cr), repr(response)):
        assert "SENTINEL" not in text
    assert response["source"]["credentialsSet"] is True


def test_no_version_is_left_to_the_crd_default() -> None:
    friendly = DarkroomCreateSchema().load({**SEED_CREATE, "version": None})
    cr = as_cr(friendly)
    assert "version" not in cr["spec"]  # the API server fills in the CRD default; the API never rewrites the spec
    assert conversion.to_friendly(cr)["version"] == darkroom_kind.DEFAULT_VERSION


def test_status_shape_and_ready_only_for_the_current_generation() -> None:
    cr = as_cr(DarkroomCreateSchema().load(SEED_CREATE), generation=2)
    ready = {"type": "Ready", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    cr["status"] = {
        "domains": ["ajatprabha.darkroom.example.com"],
        "tls": True,
        "readyReplicas": 1,
        "observedGeneration": 1,
        "conditions": [{**ready, "observedGeneration": 1}],
    }
    stale = conversion.to_friendly(cr)
    assert stale["status"]["ready"] is False
    assert stale["status"]["state"] == "Reconciling"
    cr["status"] = {**cr["status"], "observedGeneration": 2, "conditions": [{**ready, "observedGeneration": 2}]}
    current = conversion.to_friendly(cr)
    assert current["status"] == {
        "state": "Ready",
        "stateMessage": "Available",
        "ready": True,
        "domains": ["ajatprabha.darkroom.example.com"],
        "tls": True,
        "readyReplicas": 1,
        "conditions": [{**ready, "observedGeneration": 2}],
        "observedGeneration": 2,
    }
    conformance.validate(current, "Darkroom")


def test_terminating_objects_say_so() -> None:
    cr = as_cr(DarkroomCreateSchema().load(SEED_CREATE), deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["x/y"])
    friendly = conversion.to_friendly(cr)
    assert (friendly["terminating"], friendly["deletionTimestamp"]) == (True, "2026-01-01T00:00:00Z")


S3_OK: dict[str, Any] = {"type": "S3", "bucket": "bkt", "region": "eu-west-1", "accessKey": "a", "secretKey": "s"}
BAD: list[tuple[dict[str, Any], str]] = [
    ({"name": "Darkroom"}, "name"),
    ({"name": "1st"}, "name"),
    ({"name": "a" * 64}, "name"),
    ({"namespace": "Bad_NS"}, "namespace"),
    ({"version": "not a tag!"}, "version"),
    ({"replicas": 101}, "replicas"),
    ({"replicas": -1}, "replicas"),
    ({"replicas": 1.5}, "replicas"),
    ({"replicas": "2"}, "replicas"),
    ({"replicas": True}, "replicas"),
    ({"cacheTime": -5}, "cacheTime"),
    ({"subDomains": []}, "subDomains"),
    ({"subDomains": ["ok", "Not_OK"]}, "subDomains.1"),
    ({"subDomains": ["a", "b", "a"]}, "subDomains.2"),
    ({"subDomains": [f"s{i}" for i in range(51)]}, "subDomains"),
    ({"subDomains": "images"}, "subDomains"),
    ({"source": {"type": "FTP", "baseUrl": "https://x.example"}}, "source.type"),
    ({"source": {"type": "WebFolder"}}, "source.baseUrl"),
    ({"source": {"type": "WebFolder", "baseUrl": ""}}, "source.baseUrl"),
    ({"source": {"type": "WebFolder", "baseUrl": "ftp://example.com"}}, "source.baseUrl"),
    ({"source": {"type": "WebFolder", "baseUrl": "https://"}}, "source.baseUrl"),
    ({"source": {"type": "WebFolder", "baseUrl": "https://x.example", "bucket": "b-1"}}, "source.bucket"),
    ({"source": {"type": "S3", "region": "eu-west-1", "accessKey": "a", "secretKey": "s"}}, "source.bucket"),
    ({"source": {"type": "S3", "bucket": "bkt", "region": "eu west 1"}}, "source.region"),
    ({"source": {**S3_OK, "bucket": "Bad_Bucket"}}, "source.bucket"),
    ({"source": {"type": "S3", "bucket": "bkt", "region": "eu-west-1", "accessKey": "a"}}, "source.secretKey"),
    ({"source": {**S3_OK, "baseUrl": "https://x.example"}}, "source.baseUrl"),
    ({"source": {**S3_OK, "endpoint": "minio:9000"}}, "source.endpoint"),
    ({"colour": "blue"}, "colour"),
    ({"source": {**S3_OK, "credentialsSecretRef": {"name": "x"}}}, "source.credentialsSecretRef"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "path"), BAD, ids=[f"{p}:{next(iter(c.values()))!r}"[:60] for c, p in BAD])
def test_each_rule_reports_on_its_friendly_path(change: dict[str, Any], path: str) -> None:
    errors = errors_of({**SEED_CREATE, **change})
    assert path in errors, errors
    assert all(errors[path]), errors


@pytest.mark.parametrize("missing", ["name", "source", "subDomains"])
def test_required_fields(missing: str) -> None:
    assert missing in errors_of({k: v for k, v in SEED_CREATE.items() if k != missing})


def test_s3_keys_are_optional_but_still_come_in_pairs() -> None:
    """Create and update alike: no keys is a public bucket (it was once required on create)."""
    s3 = {**SEED_CREATE, "source": {"type": "S3", "bucket": "bkt", "region": "eu-west-1"}}
    for schema in (DarkroomCreateSchema, DarkroomUpdateSchema):
        friendly = schema().load(s3)
        assert friendly["source"]["type"] == "S3"
        assert conversion.keys_of(friendly) is None
        assert "source.secretKey" in errors_of({**s3, "source": {**s3["source"], "accessKey": "a"}}, schema)
        assert "source.accessKey" in errors_of({**s3, "source": {**s3["source"], "secretKey": "s"}}, schema)
    public = conversion.to_spec(DarkroomCreateSchema().load(s3), secret_name=None)
    assert public["source"] == {"type": "S3", "bucket": "bkt", "region": "eu-west-1"}


def test_status_tls_defaults_to_false() -> None:
    """A status an older reconciler wrote has no ``tls``: the domains are linked with http://."""
    cr = as_cr(DarkroomCreateSchema().load(SEED_CREATE))
    cr["status"] = {"domains": ["ajatprabha.darkroom.example.com"]}
    assert conversion.to_friendly(cr)["status"]["tls"] is False


def test_error_messages_never_quote_the_keys() -> None:
    payload = {**S3, "source": {**S3["source"], "secretKey": "", "baseUrl": "https://x.example", "accessKey": "SENTINEL" * 200}}
    assert "SENTINEL" not in repr(errors_of(payload))


def test_null_counts_as_absent_but_empty_strings_are_checked() -> None:
    friendly = DarkroomCreateSchema().load(
        {**SEED_CREATE, "version": None, "source": {**SEED_CREATE["source"], "bucket": None, "region": None, "accessKey": None}}
    )
    assert conversion.to_spec(friendly, secret_name=None) == {
        "source": {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"},
        "subDomains": ["ajatprabha"],
    }
    errors = errors_of({**SEED_CREATE, "version": "", "source": {**SEED_CREATE["source"], "bucket": "", "endpoint": ""}})
    assert set(errors) == {"version", "source.bucket", "source.endpoint"}


def test_source_type_defaults_to_webfolder() -> None:
    assert DarkroomCreateSchema().load({**SEED_CREATE, "source": {"baseUrl": "https://x.example"}})["source"]["type"] == "WebFolder"


def test_a_patch_switching_the_source_type_drops_the_old_type_fields_from_its_base() -> None:
    base = conversion.to_friendly(as_cr(DarkroomCreateSchema().load(SEED_CREATE)))
    rebased = conversion.rebase_for_type_change(base, {"source": {"type": "S3"}})
    assert "baseUrl" not in rebased["source"]
    assert conversion.rebase_for_type_change(base, {"replicas": 3}) is base
