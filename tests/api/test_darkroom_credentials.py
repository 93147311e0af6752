"""S3 credentials through ``/darkrooms``: keys land only in the owned, labelled Secret; responses, the CR,
lists and log lines never carry them; a failed Secret write leaves no Darkroom behind; replacing keys,
keeping them (keys optional on update), switching S3 → WebFolder (Secret removed) and WebFolder → S3
(with keys, or without: a public bucket); an S3 Darkroom without keys (a public bucket) on create,
replace and patch: no Secret, no credentialsSecretRef; keys still come in pairs; ``?dryRun=All`` checks the
Secret write too (a taken name is 409) and stores nothing.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import orjson
import pytest
from flask.testing import FlaskClient

from tests.support import GC_TIMEOUT_S, wait_for

from .payloads import SENTINEL_ACCESS, SENTINEL_SECRET, s3, webfolder

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
SENTINELS = (SENTINEL_ACCESS, SENTINEL_SECRET, base64.b64encode(SENTINEL_SECRET.encode()).decode())


def secret_data(core: Any, namespace: str, name: str) -> dict[str, str]:
    secret = core.read_namespaced_secret(name, namespace)
    return {k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()}


def assert_no_sentinel(*texts: str | bytes) -> None:
    for text in texts:
        shown = text.decode() if isinstance(text, bytes) else text
        for sentinel in SENTINELS:
            assert sentinel not in shown


def secret_exists(core: Any, namespace: str, name: str) -> bool:
    from kubernetes.client import ApiException

    try:
        core.read_namespaced_secret(name, namespace)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    return True


def test_keys_go_only_into_the_owned_secret(
    http: FlaskClient, namespace: str, core: Any, custom: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    response = http.post("/darkrooms", json=s3("s3-demo", namespace))
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert body["source"]["credentialsSet"] is True
    assert body["source"]["credentialsSecret"] == {"name": "s3-demo-s3-credentials", "owned": True}  # deleted with the Darkroom
    assert secret_data(core, namespace, "s3-demo-s3-credentials") == {"accessKey": SENTINEL_ACCESS, "secretKey": SENTINEL_SECRET}
    secret = core.read_namespaced_secret("s3-demo-s3-credentials", namespace)
    assert secret.metadata.labels["app.kubernetes.io/managed-by"] == "darkroom-control-panel"
    (owner,) = secret.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid) == ("Darkroom", "s3-demo", body["uid"])
    cr = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "s3-demo")
    assert cr["spec"]["source"]["credentialsSecretRef"] == {"name": "s3-demo-s3-credentials"}
    configmaps = core.list_namespaced_config_map(namespace).items
    assert_no_sentinel(
        response.data,
        orjson.dumps(cr),
        http.get(f"/darkrooms/{namespace}/s3-demo").data,
        http.get("/darkrooms").data,
        repr([c.data for c in configmaps]),
        caplog.text,
    )


def test_a_failed_secret_write_leaves_no_darkroom(http: FlaskClient, namespace: str, core: Any, caplog: pytest.LogCaptureFixture) -> None:
    # An immutable Secret of the same name cannot take new keys: the create must be undone.
    core.create_namespaced_secret(
        namespace,
        {"metadata": {"name": "blocked-s3-credentials"}, "immutable": True, "stringData": {"accessKey": "old", "secretKey": "old"}},
    )
    response = http.post("/darkrooms", json=s3("blocked", namespace))
    assert response.status_code == 409, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert "nothing was created" in response.get_json()["detail"]
    assert http.get(f"/darkrooms/{namespace}/blocked").status_code == 404
    assert http.get(f"/darkrooms?namespace={namespace}").get_json()["total"] == 0
    assert secret_data(core, namespace, "blocked-s3-credentials") == {"accessKey": "old", "secretKey": "old"}
    assert_no_sentinel(response.data, caplog.text)


def test_s3_without_keys_is_a_public_bucket(http: FlaskClient, namespace: str, core: Any, custom: Any) -> None:
    """Keys were once required on create; now none means a public bucket, on create, replace and patch."""
    response = http.post("/darkrooms", json=s3("public", namespace, keys=None))
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["source"]["credentialsSet"] is False

    def stored_source() -> dict[str, Any]:
        source: dict[str, Any] = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "public")["spec"]["source"]
        return source

    assert stored_source() == {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "pathPrefix": "originals/"}
    assert not secret_exists(core, namespace, "public-s3-credentials")
    url = f"/darkrooms/{namespace}/public"
    replaced = http.put(url, json=s3("public", namespace, keys=None, replicas=2))
    assert replaced.status_code == 200, replaced.get_data(as_text=True)
    patched = http.patch(url, json={"source": {"bucket": "other-images"}})
    assert patched.status_code == 200, patched.get_data(as_text=True)
    assert patched.get_json()["source"]["credentialsSet"] is False
    assert "credentialsSecretRef" not in stored_source() and stored_source()["bucket"] == "other-images"
    assert not secret_exists(core, namespace, "public-s3-credentials")
    for half in ({"accessKey": "only-one"}, {"secretKey": "only-one"}):
        refused = http.patch(url, json={"source": half})
        assert refused.status_code == 422
        assert set(refused.get_json()["errors"]) == {f"source.{k}" for k in ("accessKey", "secretKey") if k not in half}
    created_half = http.post("/darkrooms", json=s3("half", namespace, keys=None, source={"type": "S3", "bucket": "b-1", "accessKey": "a"}))
    assert created_half.status_code == 422
    assert set(created_half.get_json()["errors"]) == {"source.secretKey"}  # the region is optional


def test_updating_keys_replaces_the_secret_and_omitting_them_keeps_it(http: FlaskClient, namespace: str, core: Any) -> None:
    url = f"/darkrooms/{namespace}/rotate"
    assert http.post("/darkrooms", json=s3("rotate", namespace)).status_code == 201
    rotated = http.put(url, json=s3("rotate", namespace, keys=("AKIA-NEW", "new-secret")))
    assert rotated.status_code == 200
    assert secret_data(core, namespace, "rotate-s3-credentials") == {"accessKey": "AKIA-NEW", "secretKey": "new-secret"}
    kept = http.put(url, json=s3("rotate", namespace, keys=None, replicas=2))
    assert kept.status_code == 200, kept.get_data(as_text=True)
    assert kept.get_json()["source"]["credentialsSet"] is True
    assert secret_data(core, namespace, "rotate-s3-credentials") == {"accessKey": "AKIA-NEW", "secretKey": "new-secret"}
    half = http.patch(url, json={"source": {"accessKey": "only-one"}})
    assert half.status_code == 422
    assert set(half.get_json()["errors"]) == {"source.secretKey"}


def test_to_webfolder_removes_the_secret_and_back_with_or_without_keys(http: FlaskClient, namespace: str, core: Any, custom: Any) -> None:
    url = f"/darkrooms/{namespace}/switch"
    assert http.post("/darkrooms", json=s3("switch", namespace)).status_code == 201
    to_web = http.patch(url, json={"source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}})
    assert to_web.status_code == 200, to_web.get_data(as_text=True)
    assert to_web.get_json()["source"] == {
        "type": "WebFolder",
        "baseUrl": "https://example.com/images",
        "bucket": None,
        "region": None,
        "endpoint": None,
        "pathPrefix": "originals/",
        "credentialsSet": False,
        "credentialsSecret": None,
    }
    assert not secret_exists(core, namespace, "switch-s3-credentials")
    cr = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "switch")
    assert "credentialsSecretRef" not in cr["spec"]["source"]
    # Back to S3 without keys: a public bucket (keys were once required here); the old Secret stays gone.
    back = http.patch(url, json={"source": {"type": "S3", "bucket": "b-1", "region": "eu-west-1"}})
    assert back.status_code == 200, back.get_data(as_text=True)
    assert back.get_json()["source"]["credentialsSet"] is False
    assert "credentialsSecretRef" not in custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "switch")["spec"]["source"]
    assert not secret_exists(core, namespace, "switch-s3-credentials")
    with_keys = http.patch(url, json={"source": {"type": "S3", "bucket": "b-1", "region": "eu-west-1", "accessKey": "a", "secretKey": "s"}})
    assert with_keys.status_code == 200
    assert secret_data(core, namespace, "switch-s3-credentials") == {"accessKey": "a", "secretKey": "s"}


def test_deleting_the_darkroom_takes_its_secret_along(http: FlaskClient, namespace: str, core: Any) -> None:
    assert http.post("/darkrooms", json=s3("doomed", namespace)).status_code == 201
    assert http.post("/darkrooms", json=webfolder("bystander", namespace)).status_code == 201
    assert http.delete(f"/darkrooms/{namespace}/doomed").status_code == 204
    wait_for(
        lambda: not secret_exists(core, namespace, "doomed-s3-credentials"), timeout_s=GC_TIMEOUT_S, message="GC removes the owned Secret"
    )


def test_a_failed_secret_write_on_update_restores_the_darkroom(http: FlaskClient, namespace: str, core: Any, custom: Any) -> None:
    url = f"/darkrooms/{namespace}/stuck"
    before = http.post("/darkrooms", json=webfolder("stuck", namespace)).get_json()
    core.create_namespaced_secret(
        namespace, {"metadata": {"name": "stuck-s3-credentials"}, "immutable": True, "stringData": {"accessKey": "old", "secretKey": "old"}}
    )
    response = http.patch(url, json={"source": {"type": "S3", "bucket": "b-1", "region": "eu-west-1", "accessKey": "a", "secretKey": "s"}})
    assert response.status_code == 409, response.get_data(as_text=True)
    assert "left as it was" in response.get_json()["detail"]
    after = http.get(url).get_json()
    assert after["source"] == before["source"]
    assert custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "stuck")["spec"]["source"] == {
        "type": "WebFolder",
        "baseUrl": "https://ajatprabha.in/assets",
    }


def test_a_secret_someone_else_made_is_never_overwritten_or_deleted(http: FlaskClient, namespace: str, core: Any) -> None:
    """Never take over: ``payments-s3-credentials`` made by someone else (keys of theirs and one more key) is
    reported (409), not overwritten, not adopted, and survives both a WebFolder switch and deletes."""
    theirs = {"accessKey": "THEIRS", "secretKey": "their-secret", "extra": "never-ours"}
    core.create_namespaced_secret(namespace, {"metadata": {"name": "payments-s3-credentials"}, "stringData": theirs})
    before = core.read_namespaced_secret("payments-s3-credentials", namespace).metadata.resource_version
    response = http.post("/darkrooms", json=s3("payments", namespace))
    assert response.status_code == 409, response.get_data(as_text=True)
    detail = response.get_json()["detail"]
    assert "payments-s3-credentials already exists and does not belong to this Darkroom" in detail and "nothing was created" in detail
    assert http.get(f"/darkrooms/{namespace}/payments").status_code == 404
    # An existing WebFolder Darkroom switched to S3 with keys: the same answer, the Darkroom left as it was.
    assert http.post("/darkrooms", json=webfolder("payments", namespace)).status_code == 201
    switch = {"source": {"type": "S3", "bucket": "b-1", "region": "eu-west-1", "accessKey": "a", "secretKey": "s"}}
    response = http.patch(f"/darkrooms/{namespace}/payments", json=switch)
    assert response.status_code == 409 and "does not belong to this Darkroom" in response.get_json()["detail"]
    secret = core.read_namespaced_secret("payments-s3-credentials", namespace)
    assert secret.metadata.resource_version == before and not secret.metadata.owner_references
    assert secret_data(core, namespace, "payments-s3-credentials") == theirs
    assert http.delete(f"/darkrooms/{namespace}/payments").status_code == 204
    assert secret_data(core, namespace, "payments-s3-credentials") == theirs


def test_switching_to_webfolder_never_deletes_a_secret_that_replaced_ours(http: FlaskClient, namespace: str, core: Any) -> None:
    assert http.post("/darkrooms", json=s3("swapped", namespace)).status_code == 201
    core.delete_namespaced_secret("swapped-s3-credentials", namespace)
    core.create_namespaced_secret(namespace, {"metadata": {"name": "swapped-s3-credentials"}, "stringData": {"k": "someone else's"}})
    response = http.patch(f"/darkrooms/{namespace}/swapped", json={"source": {"type": "WebFolder", "baseUrl": "https://example.com/x"}})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert secret_data(core, namespace, "swapped-s3-credentials") == {"k": "someone else's"}


def test_dry_runs_check_the_secret_write_too_and_store_nothing(http: FlaskClient, namespace: str, core: Any, custom: Any) -> None:
    """``?dryRun=All`` asks the API server about the Secret write as well: a create that would be refused
    because the Secret name is someone else's is refused the same way (409), and nothing is stored."""
    dry = http.post("/darkrooms?dryRun=All", json=s3("trial", namespace))
    assert dry.status_code == 201, dry.get_data(as_text=True)
    assert_no_sentinel(dry.get_data())
    assert not secret_exists(core, namespace, "trial-s3-credentials")
    assert http.get(f"/darkrooms/{namespace}/trial").status_code == 404
    core.create_namespaced_secret(namespace, {"metadata": {"name": "taken-s3-credentials"}, "stringData": {"k": "theirs"}})
    refused = http.post("/darkrooms?dryRun=All", json=s3("taken", namespace))
    assert refused.status_code == 409 and "does not belong to this Darkroom" in refused.get_json()["detail"]
    # An S3 Darkroom of ours: a dry-run key change and a dry-run switch to a WebFolder leave the Secret alone.
    assert http.post("/darkrooms", json=s3("kept", namespace)).status_code == 201
    before = core.read_namespaced_secret("kept-s3-credentials", namespace).metadata.resource_version
    new_keys = {"source": {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "accessKey": "A2", "secretKey": "S2"}}
    assert http.patch(f"/darkrooms/{namespace}/kept?dryRun=All", json=new_keys).status_code == 200
    to_webfolder = {"source": {"type": "WebFolder", "baseUrl": "https://example.com/x"}}
    switched = http.patch(f"/darkrooms/{namespace}/kept?dryRun=All", json=to_webfolder)
    assert switched.status_code == 200 and switched.get_json()["source"]["type"] == "WebFolder"
    assert core.read_namespaced_secret("kept-s3-credentials", namespace).metadata.resource_version == before
    assert secret_data(core, namespace, "kept-s3-credentials") == {"accessKey": SENTINEL_ACCESS, "secretKey": SENTINEL_SECRET}
    assert http.get(f"/darkrooms/{namespace}/kept").get_json()["source"]["type"] == "S3"
