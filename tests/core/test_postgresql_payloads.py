"""Postgresql payloads: a minimal payload leaves every default to the CRD, friendly → CR → friendly
round-trips (responses conform to the published schema), the password never reaches a CR or a
response, display defaults vs the raw PATCH base, the status (state, phase, ready only for the
current generation, endpoint, where the password is and what the data volume holds), every validation
rule on its friendly field path with the messages of
:mod:`kinds.postgresqls`, a merge patch's own shape, the rules on the stored object (storage never
shrinks, its class never changes), the password Secret's body and scrubbing, and the kinds
constants the schemas read against the CRD.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from marshmallow import ValidationError

from backend.core.kinds import postgresqls
from backend.core.kinds import postgresqls as conversion
from backend.core.schemas.postgresqls import PostgresqlCreateSchema, PostgresqlPatchSchema, PostgresqlUpdateSchema
from backend.core.validation import flatten
from kinds import postgresqls as kind
from tests.core import conformance

CRD = Path(__file__).resolve().parents[2] / "crds" / "postgresqls.database.db.example.com.yaml"
SENTINEL = "unit-sentinel-password-4242"
FULL: dict[str, Any] = {
    "name": "orders",
    "namespace": "shop",
    "version": "16.4",
    "storage": {"size": "10Gi", "storageClassName": "fast-ssd"},
    "databaseName": "orders",
    "user": "orders_owner",
    "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
    "parameters": {"max_connections": "200", "work_mem": "8MB", "log_statement": "ddl", "timezone": "Europe/Berlin"},
    "deletionPolicy": "Delete",
}
# What the API server stores for a spec without them (the CRD's defaults).
SERVER_DEFAULTS: dict[str, Any] = {
    "version": "17",
    "storage": {"size": "1Gi"},
    "databaseName": "app",
    "user": "app",
    "deletionPolicy": "Retain",
}


def errors_of(payload: Any, schema: type = PostgresqlCreateSchema) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        schema().load(payload)
    return flatten(caught.value.messages)


def as_cr(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "database.db.example.com/v1",
        "kind": "Postgresql",
        "metadata": {"name": "orders", "namespace": "shop", "uid": "u-1", "resourceVersion": "7", "generation": 1, **meta},
        "spec": spec,
    }


def test_a_minimal_payload_leaves_every_default_to_the_crd() -> None:
    friendly = PostgresqlCreateSchema().load({"name": "orders"})
    assert friendly == {"name": "orders", "namespace": "default"}
    assert conversion.to_spec(friendly) == {}
    shown = conversion.to_friendly(as_cr(SERVER_DEFAULTS))
    assert (shown["version"], shown["storage"], shown["databaseName"], shown["user"], shown["deletionPolicy"]) == (
        "17",
        {"size": "1Gi", "storageClassName": None},
        "app",
        "app",
        "Retain",
    )
    assert (shown["passwordSecretRef"], shown["parameters"]) == (None, {})
    assert shown["resources"] == {"requests": {"cpu": None, "memory": None}, "limits": {"cpu": None, "memory": None}}
    conformance.validate(shown, "Postgresql")


def test_friendly_to_cr_to_friendly_round_trips() -> None:
    payload = {**FULL, "passwordSecretRef": {"name": "orders-db", "key": "pw"}}
    friendly = PostgresqlCreateSchema().load(copy.deepcopy(payload))
    spec = conversion.to_spec(friendly)
    assert spec == {k: v for k, v in payload.items() if k not in ("name", "namespace")}
    back = conversion.to_friendly(as_cr(spec))
    assert {k: back[k] for k in payload} == payload
    conformance.validate(back, "Postgresql")
    again = PostgresqlUpdateSchema().load(copy.deepcopy(back))  # a response is a valid PUT body
    assert conversion.to_spec(again) == spec


def test_the_password_never_reaches_the_cr_or_a_response() -> None:
    friendly = PostgresqlCreateSchema().load({"name": "orders", "password": SENTINEL})
    assert conversion.password_of(friendly) == SENTINEL
    spec = conversion.to_spec(friendly)
    response = conversion.to_friendly(as_cr(spec))
    for text in (repr(spec), repr(response)):
        assert SENTINEL not in text
    assert "password" not in response
    assert conversion.password_of(PostgresqlCreateSchema().load({"name": "orders"})) is None


def test_a_password_marks_the_new_object_pending_until_its_secret_is_written() -> None:
    with_password = postgresqls.KIND.new_object({"name": "orders", "namespace": "shop", "password": SENTINEL})
    assert list(with_password["metadata"]["annotations"]) == [kind.PASSWORD_PENDING_ANNOTATION]
    assert len(with_password["metadata"]["annotations"][kind.PASSWORD_PENDING_ANNOTATION]) == 16  # the attempt's token
    assert SENTINEL not in repr(with_password)
    assert postgresqls.KIND.resumable(with_password)
    without = postgresqls.KIND.new_object({"name": "orders", "namespace": "shop"})
    assert "annotations" not in without["metadata"] and not postgresqls.KIND.resumable(without)


def test_display_defaults_only_outside_the_raw_patch_base() -> None:
    cr = as_cr({"passwordSecretRef": {"name": "mine"}})  # as written around the API server's defaulting
    shown, raw = conversion.to_friendly(cr), conversion.to_friendly(cr, raw=True)
    assert (shown["version"], shown["storage"]["size"], shown["passwordSecretRef"]) == ("17", "1Gi", {"name": "mine", "key": "password"})
    assert (raw["version"], raw["storage"]["size"], raw["passwordSecretRef"]) == (None, None, {"name": "mine", "key": None})


def test_status_state_phase_and_endpoint() -> None:
    ready = {"type": "Ready", "status": "True", "reason": "DatabaseReady", "message": "accepting connections"}
    cr = as_cr(SERVER_DEFAULTS, generation=2)
    cr["status"] = {
        "phase": "Running",
        "observedGeneration": 1,
        "readyReplicas": 1,
        "endpoint": {"host": "orders.shop.svc", "port": 5432},
        "conditions": [{**ready, "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }
    stale = conversion.to_friendly(cr)["status"]
    assert (stale["state"], stale["ready"], stale["phase"]) == ("Reconciling", False, "Running")
    cr["status"] = {
        **cr["status"],
        "observedGeneration": 2,
        "conditions": [{**ready, "observedGeneration": 2, "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }
    current = conversion.to_friendly(cr)
    assert current["status"] == {
        "state": "Ready",
        "stateMessage": "accepting connections",
        "phase": "Running",
        "ready": True,
        "readyReplicas": 1,
        "endpoint": {"host": "orders.shop.svc", "port": 5432},
        "passwordSecret": None,
        "dataVolume": None,
        "conditions": [{**ready, "observedGeneration": 2, "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "observedGeneration": 2,
    }
    conformance.validate(current, "Postgresql")
    cr["status"]["endpoint"] = {"host": "orders.shop.svc"}  # half written: not an endpoint yet
    assert conversion.to_friendly(cr)["status"]["endpoint"] is None


def test_where_the_password_is_and_what_the_data_volume_holds() -> None:
    """``status.passwordSecret`` and ``status.dataVolume`` as the reconciler wrote them; before it has looked, the
    kept data volume the API found on the create (its annotation)."""
    cr = as_cr(SERVER_DEFAULTS)
    cr["metadata"]["annotations"] = {kind.RETAINED_DATA_ANNOTATION: "data-orders-0"}
    noted = conversion.to_friendly(cr)["status"]
    assert noted["passwordSecret"] is None
    assert noted["dataVolume"]["claim"] == "data-orders-0" and noted["dataVolume"]["reused"] is True
    assert noted["dataVolume"]["password"] is None and "the password it was initialised with" in noted["dataVolume"]["message"]
    cr["status"] = {
        "passwordSecret": {"name": "orders-credentials", "key": "password", "present": True},
        "dataVolume": {"claim": "data-orders-0", "reused": True, "password": kind.NEW},
    }
    shown = conversion.to_friendly(cr)
    assert shown["status"]["passwordSecret"] == {"name": "orders-credentials", "key": "password", "present": True}
    assert shown["status"]["dataVolume"]["password"] == kind.NEW
    assert "the password in Secret orders-credentials is not the database's" in shown["status"]["dataVolume"]["message"]
    conformance.validate(shown, "Postgresql")
    cr["status"]["dataVolume"] = {"claim": "data-orders-0", "reused": False}
    fresh = {"claim": "data-orders-0", "reused": False, "password": None, "message": ""}
    assert conversion.to_friendly(cr)["status"]["dataVolume"] == fresh


def test_terminating_objects_say_so() -> None:
    friendly = conversion.to_friendly(as_cr(SERVER_DEFAULTS, deletionTimestamp="2026-01-01T00:00:00Z", finalizers=[kind.FINALIZER]))
    assert (friendly["terminating"], friendly["status"]["state"]) == (True, "Terminating")


BAD: list[tuple[dict[str, Any], str, str | None]] = [
    ({"name": "Orders"}, "name", None),
    ({"name": "1st"}, "name", None),
    ({"name": "a" * 53}, "name", "must be at most 52 characters"),
    ({"namespace": "Bad_NS"}, "namespace", None),
    ({"version": "12"}, "version", "must be a PostgreSQL major version (13, 14, 15, 16, 17, 18)"),
    ({"version": "17\n"}, "version", None),
    ({"databaseName": "Orders"}, "databaseName", "must be an unquoted PostgreSQL identifier"),
    ({"user": "b" * 64}, "user", None),
    ({"user": "postgres"}, "user", "'postgres' is the image's superuser; choose an application user"),
    ({"storage": {"size": "ten"}}, "storage.size", "must be a quantity"),
    ({"storage": {"size": "+1Gi"}}, "storage.size", None),
    ({"storage": {"size": "1Gi\n"}}, "storage.size", None),
    ({"storage": {"size": "0Gi"}}, "storage.size", "must be more than 0"),
    ({"storage": {"storageClassName": "-fast"}}, "storage.storageClassName", None),
    ({"storage": {"extra": 1}}, "storage.extra", "unknown field"),
    ({"parameters": {"fsync": "off"}}, "parameters.fsync", "not an allowed parameter"),
    ({"parameters": {"max_connections": 100}}, "parameters.max_connections", "must be a string, as in postgresql.conf"),
    ({"parameters": {"work_mem": "4 MB"}}, "parameters.work_mem", "must be an amount of memory (a whole number"),
    ({"parameters": {"log_statement": "some"}}, "parameters.log_statement", "must be one of none, ddl, mod, all"),
    ({"parameters": "max_connections=100"}, "parameters", None),
    ({"deletionPolicy": "Keep"}, "deletionPolicy", "must be Retain or Delete"),
    ({"resources": {"requests": {"cpu": "lots"}}}, "resources.requests.cpu", "must be a quantity"),
    ({"resources": {"limits": {"nvidia.com/gpu": "1"}}}, "resources.limits.nvidia.com/gpu", "unknown field"),
    ({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}}}, "resources.requests.cpu", "must not exceed the cpu limit"),
    ({"passwordSecretRef": {}}, "passwordSecretRef.name", None),
    ({"passwordSecretRef": {"name": "mine", "key": "a b"}}, "passwordSecretRef.key", None),
    ({"password": SENTINEL, "passwordSecretRef": {"name": "mine"}}, "password", "not together with an existing Secret"),
    ({"password": "tab\there"}, "password", "must be 8 to 1024 characters without control characters"),
    ({"password": "x" * 1025}, "password", None),
    ({"password": 42}, "password", None),
    ({"colour": "blue"}, "colour", "unknown field"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "path", "message"), BAD, ids=[f"{p}:{next(iter(c.values()))!r}"[:50] for c, p, _ in BAD])
def test_each_rule_reports_on_its_friendly_path(change: dict[str, Any], path: str, message: str | None) -> None:
    errors = errors_of({"name": "orders", **change})
    assert set(errors) == {path}, errors
    if message:
        assert any(m.startswith(message) for m in errors[path]), errors[path]
    assert not any(SENTINEL in m for m in errors[path])


def test_errors_of_several_fields_are_reported_together() -> None:
    errors = errors_of({"name": "orders", "user": "postgres", "version": "9", "password": "p", "passwordSecretRef": {"name": "s"}})
    assert set(errors) == {"user", "version", "password"}


def test_null_counts_as_absent() -> None:
    payload = {"name": "orders", "version": None, "storage": None, "parameters": {"work_mem": None}, "resources": {"limits": None}}
    assert conversion.to_spec(PostgresqlCreateSchema().load(payload)) == {}


def test_a_merge_patch_may_name_part_of_a_nested_object() -> None:
    patch = PostgresqlPatchSchema().load({"passwordSecretRef": {"key": "pw"}, "storage": {"size": "2Gi"}, "parameters": {"work_mem": None}})
    assert patch["passwordSecretRef"] == {"key": "pw"}
    assert set(errors_of({"parameters": {"fsync": "off"}, "extra": 1}, PostgresqlPatchSchema)) == {"parameters.fsync", "extra"}


def _stored(storage: dict[str, Any]) -> dict[str, Any]:
    return as_cr({**SERVER_DEFAULTS, "storage": storage})


NO_RESIZE = "resizing the data volume is not supported yet"


@pytest.mark.parametrize(
    ("existing", "wanted", "errors"),
    [
        ({"size": "5Gi"}, {"size": "1Gi"}, {"storage.size": ["cannot shrink from 5Gi to 1Gi"]}),
        ({"size": "5Gi"}, None, {"storage.size": ["cannot shrink from 5Gi to 1Gi"]}),
        ({"size": "1Gi"}, {"size": "1024Mi"}, {}),
        (
            {"size": "1Gi"},
            {"size": "1.5Gi"},
            {"storage.size": ["cannot grow from 1Gi to 1.5Gi: resizing the data volume is not supported yet"]},
        ),
        ({"size": "2G"}, {"size": "2000M"}, {}),
        ({"size": "1Gi", "storageClassName": "fast"}, {"size": "1Gi", "storageClassName": "fast"}, {}),
    ],
)
def test_storage_size_stays(existing: dict[str, Any], wanted: dict[str, Any] | None, errors: dict[str, list[str]]) -> None:
    friendly = {"name": "orders", "namespace": "shop", "storage": wanted}
    found = postgresqls.KIND.check(friendly, existing=_stored(existing))
    assert {k: v for k, v in found.items() if k == "storage.size"} == errors
    assert postgresqls.KIND.check(friendly, existing=None) == {}


@pytest.mark.parametrize(("before", "after"), [("fast", "slow"), ("fast", None), (None, "fast")])
def test_the_storage_class_never_changes(before: str | None, after: str | None) -> None:
    existing = _stored({"size": "1Gi", **({"storageClassName": before} if before else {})})
    friendly = {"name": "orders", "namespace": "shop", "storage": {"size": "1Gi", "storageClassName": after}}
    (message,) = postgresqls.KIND.check(friendly, existing=existing)["storage.storageClassName"]
    assert message.startswith("cannot change after creation (")


def test_the_password_secret_is_owned_labelled_and_scrubbed() -> None:
    owner = as_cr(SERVER_DEFAULTS)
    body = postgresqls.secret_body(owner=owner, user="app", password=SENTINEL)
    assert body["metadata"]["name"] == kind.password_secret_name("orders") == "orders-credentials"
    assert set(body["data"]) == {kind.PASSWORD_KEY, kind.USERNAME_KEY}
    (reference,) = body["metadata"]["ownerReferences"]
    assert (reference["kind"], reference["uid"], reference["controller"]) == ("Postgresql", "u-1", True)
    assert body["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "darkroom-control-panel"
    leaked = f"field data[password]: {body['data'][kind.PASSWORD_KEY]} or {SENTINEL}"
    assert SENTINEL not in postgresqls.scrub(leaked, SENTINEL)
    assert body["data"][kind.PASSWORD_KEY] not in postgresqls.scrub(leaked, SENTINEL)


def test_the_patterns_the_schemas_read_are_the_crds() -> None:
    spec = yaml.safe_load(CRD.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert spec["storage"]["properties"]["size"]["pattern"] == kind.QUANTITY_PATTERN
    for group in ("requests", "limits"):
        assert spec["resources"]["properties"][group]["additionalProperties"]["pattern"] == kind.QUANTITY_PATTERN
    assert spec["passwordSecretRef"]["properties"]["key"]["pattern"] == kind.SECRET_KEY_PATTERN
    assert spec["passwordSecretRef"]["properties"]["key"]["default"] == kind.PASSWORD_KEY
