"""kinds/: each kind described once, held against its CRD, and the one state definition.

Behaviours covered:

- the Darkroom source table matches ``crds/darkrooms...yaml`` (the type enum, every variant and
  shared field is a property of ``spec.source``, descriptions say which type uses a field, keys
  never appear in the CRD), and the Task's states, default state and Overdue condition match
  ``crds/tasks...yaml`` (taskState enum and default, selectableFields);
- :func:`kinds.darkrooms.source_problems` for the API (required fields, other types' fields, key
  pairs, no keys for a public bucket) and for the reconciler (essential fields only), with precise field names;
- TLS: :func:`kinds.darkrooms.serves_tls` (every host of an Ingress covered by ``spec.tls``),
  :func:`kinds.darkrooms.domain_url` (https only with TLS), and ``status.tls`` in the CRD;
- :func:`kinds.darkrooms.state`: Terminating, Reconciling, Failed from Reconciled=False, Ready,
  Rolling out (rollout reasons, no Ready yet, a Ready condition of an older generation), Scaled
  to 0 and Failed from other Ready=False reasons; every state has a distinct key and a tone;
- condition meanings: Ready=False for a rollout step is progress, not failure; Overdue=False is good;
- :func:`kinds.tasks.state`: Terminating, Finished, Overdue, Pending;
- hosts: :func:`kinds.darkrooms.holder` gives a sub-domain to the oldest Darkroom asking for it (then
  namespace/name in the same second), never to one being deleted;
- the Postgresql status in the CRD holds ``passwordSecret`` and ``dataVolume`` as :mod:`kinds.postgresqls` types
  them, and :func:`kinds.postgresqls.data_volume_message` says whose password kept data has.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kinds import darkrooms, postgresqls, tasks
from kinds.states import TONES, ConditionMeaning

ROOT = Path(__file__).resolve().parents[2]


def _schema(crd_file: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((ROOT / "crds" / crd_file).read_text()) if d]
    (version,) = [v for v in doc["spec"]["versions"] if v["storage"]]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def test_darkroom_source_table_matches_the_crd() -> None:
    source = _schema("darkrooms.deployments.example.com.yaml")["properties"]["spec"]["properties"]["source"]
    properties = source["properties"]
    assert tuple(properties["type"]["enum"]) == darkrooms.SOURCE_TYPES
    assert set(darkrooms.SOURCE_SPEC_FIELDS) | {"type", "credentialsSecretRef"} == set(properties)
    for variant in darkrooms.SOURCES.values():
        for field in variant.fields:
            assert f"{variant.type} only" in properties[field]["description"], field
        assert not set(variant.keys) & set(properties), "keys never enter the CR"
        assert set(variant.essential) <= set(variant.required)
    for field in darkrooms.SHARED_SOURCE_FIELDS:
        assert "only" not in properties[field]["description"]
    cache_time = _schema("darkrooms.deployments.example.com.yaml")["properties"]["spec"]["properties"]["cacheTime"]
    assert cache_time["default"] == darkrooms.DEFAULT_CACHE_TIME_S
    assert f"Defaults to {darkrooms.DEFAULT_CACHE_TIME_WORDS}." in cache_time["description"]  # the default in words, as the API says it
    version = _schema("darkrooms.deployments.example.com.yaml")["properties"]["spec"]["properties"]["version"]
    assert version["default"] == darkrooms.DEFAULT_VERSION  # a CRD default: kubectl, the API and the dashboard agree


def _ingress(hosts: list[str], tls_hosts: list[list[str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"rules": [{"host": h} for h in hosts]}
    if tls_hosts is not None:
        spec["tls"] = [{"hosts": entry, "secretName": "wildcard"} for entry in tls_hosts]
    return {"spec": spec}


@pytest.mark.parametrize(
    ("ingress", "tls"),
    [
        (None, False),
        (_ingress(["a.example.com"]), False),
        (_ingress(["a.example.com", "b.example.com"], [["a.example.com", "b.example.com"]]), True),
        (_ingress(["a.example.com", "b.example.com"], [["a.example.com"], ["b.example.com"]]), True),
        (_ingress(["a.example.com", "b.example.com"], [["a.example.com"]]), False),  # one host left on plain http
        (_ingress([], [["a.example.com"]]), False),
    ],
)
def test_serves_tls(ingress: dict[str, Any] | None, tls: bool) -> None:
    assert darkrooms.serves_tls(ingress) is tls


def test_domain_url_and_status_tls_in_the_crd() -> None:
    assert darkrooms.domain_url("a.example.com", tls=True) == "https://a.example.com"
    assert darkrooms.domain_url("a.example.com", tls=False) == "http://a.example.com"
    status = _schema("darkrooms.deployments.example.com.yaml")["properties"]["status"]["properties"]
    assert status["tls"]["type"] == "boolean"
    assert set(status) == set(darkrooms.DarkroomStatus.__annotations__)


def test_task_states_match_the_crd() -> None:
    task_state = _schema("tasks.example.example.com.yaml")["properties"]["spec"]["properties"]["taskState"]
    assert tuple(task_state["enum"]) == tasks.TASK_STATES
    assert task_state["default"] == tasks.DEFAULT_TASK_STATE
    assert tasks.FINISHED in tasks.TASK_STATES


def test_task_selectable_fields_match_the_crd() -> None:
    (doc,) = [d for d in yaml.safe_load_all((ROOT / "crds" / "tasks.example.example.com.yaml").read_text()) if d]
    (version,) = doc["spec"]["versions"]
    assert tuple(f["jsonPath"] for f in version["selectableFields"]) == tuple(f".{f}" for f in tasks.SELECTABLE_FIELDS)
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    for field in tasks.SELECTABLE_FIELDS:  # kube accepts string, integer and boolean fields only
        assert spec[field.removeprefix("spec.")]["type"] in ("string", "integer", "boolean")


@pytest.mark.parametrize(
    ("source", "problems"),
    [
        ({"type": "WebFolder", "baseUrl": "https://x.example"}, {}),
        ({"type": "WebFolder"}, {"baseUrl": ["required for a WebFolder source"]}),
        (
            {"type": "WebFolder", "baseUrl": "https://x.example", "bucket": "b", "accessKey": "a"},
            {"bucket": ["only used by S3 sources"], "accessKey": ["only used by S3 sources"]},
        ),
        ({"type": "S3", "bucket": "b"}, {}),  # the region is optional (AWS S3 wants it, an S3-compatible service may not)
        ({"type": "S3", "bucket": "b", "region": "r", "baseUrl": "https://x"}, {"baseUrl": ["only used by WebFolder sources"]}),
        ({"type": "S3", "bucket": "b", "region": "r", "secretKey": "s"}, {"accessKey": ["required together with the secret key"]}),
        ({"type": "S3", "bucket": "b", "region": "r", "accessKey": "a", "secretKey": "s"}, {}),
        ({"type": "S3", "bucket": "b", "region": "r"}, {}),  # no keys: a public bucket
        ({"type": "FTP"}, {"type": ["must be one of WebFolder, S3, not 'FTP'"]}),
        ({}, {"type": ["must be one of WebFolder, S3, not None"]}),
    ],
)
def test_source_problems_for_the_api(source: dict[str, Any], problems: dict[str, list[str]]) -> None:
    assert darkrooms.source_problems(source) == problems


@pytest.mark.parametrize(
    ("source", "problems"),
    [
        ({"type": "S3", "bucket": "b"}, {}),  # a kubectl user may omit the region, as the CRD allows
        ({"type": "S3", "region": "r"}, {"bucket": ["required for an S3 source"]}),
        ({"type": "WebFolder", "baseUrl": "", "bucket": "ignored"}, {"baseUrl": ["required for a WebFolder source"]}),
    ],
)
def test_source_problems_for_the_reconciler(source: dict[str, Any], problems: dict[str, list[str]]) -> None:
    assert darkrooms.source_problems(source, essential_only=True) == problems


def darkroom(*conditions: dict[str, Any], generation: int = 2, observed: int | None = 2, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "d", "namespace": "n", "generation": generation}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-27T00:00:00Z"
    status: dict[str, Any] = {"conditions": list(conditions)}
    if observed is not None:
        status["observedGeneration"] = observed
    return {"metadata": meta, "spec": {}, "status": status}


def cond(type_: str, status: str, reason: str, message: str = "", generation: int = 2) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "observedGeneration": generation}


APPLIED = cond("Reconciled", "True", darkrooms.APPLIED)
CONFLICT = cond("Reconciled", "False", "ChildConflict", "Service n/d is not ours")


@pytest.mark.parametrize(
    ("obj", "key", "word", "tone"),
    [
        (darkroom(cond("Ready", "True", "DeploymentAvailable"), deleting=True), "Terminating", "Terminating", "idle"),
        (darkroom(generation=3), "Reconciling", "Reconciling", "progress"),
        (darkroom(observed=None), "Reconciling", "Reconciling", "progress"),
        (darkroom(APPLIED, cond("Ready", "True", "DeploymentAvailable", "1 of 1 pods")), "Ready", "Ready", "good"),
        (darkroom(APPLIED), "RollingOut", "Rolling out", "progress"),
        (darkroom(APPLIED, cond("Ready", "False", "RolloutInProgress", "0 of 1 pods")), "RollingOut", "Rolling out", "progress"),
        (darkroom(APPLIED, cond("Ready", "False", "PodsUnavailable")), "RollingOut", "Rolling out", "progress"),
        (darkroom(APPLIED, cond("Ready", "False", "DeploymentMissing")), "RollingOut", "Rolling out", "progress"),
        (darkroom(APPLIED, cond("Ready", "True", "DeploymentAvailable", generation=1)), "RollingOut", "Rolling out", "progress"),
        (darkroom(APPLIED, cond("Ready", "False", "ScaledToZero", "spec.replicas is 0")), "ScaledToZero", "Scaled to 0", "idle"),
        (darkroom(APPLIED, cond("Ready", "False", "HostConflict", "taken")), "Failed", "Failed", "bad"),
        (darkroom(APPLIED, cond("Ready", "False", "DeploymentUnavailable")), "Failed", "Failed", "bad"),
        (darkroom(CONFLICT, cond("Ready", "False", "RolloutInProgress")), "Failed", "Failed", "bad"),
    ],
)
def test_darkroom_state(obj: dict[str, Any], key: str, word: str, tone: str) -> None:
    state = darkrooms.state(obj)
    assert (state.key, state.word, state.tone) == (key, word, tone)
    assert state.key in {s.key for s in darkrooms.STATES}


def test_darkroom_state_says_why() -> None:
    conflict = darkroom(cond("Reconciled", "False", "ChildConflict", "Service n/d is not ours"))
    assert darkrooms.state(conflict).detail == "Service n/d is not ours"
    assert darkrooms.state(darkroom(APPLIED, cond("Ready", "False", "ScaledToZero", "zero"))).detail == "zero"
    assert darkrooms.state(darkroom(APPLIED)).detail == "waiting for the reconciler"


def test_states_are_distinct_and_toned() -> None:
    for states in (darkrooms.STATES, tasks.STATES):
        assert len({s.key for s in states}) == len(states)
        assert all(s.tone in TONES and s.word for s in states)


@pytest.mark.parametrize(
    ("meaning", "status", "reason", "tone"),
    [
        (darkrooms.CONDITIONS["Ready"], "True", "DeploymentAvailable", "good"),
        (darkrooms.CONDITIONS["Ready"], "False", "RolloutInProgress", "progress"),
        (darkrooms.CONDITIONS["Ready"], "False", "ScaledToZero", "idle"),
        (darkrooms.CONDITIONS["Ready"], "False", "HostConflict", "bad"),
        (darkrooms.CONDITIONS["Ready"], "Unknown", None, "idle"),
        (darkrooms.CONDITIONS["Reconciled"], "False", "ChildConflict", "bad"),
        (tasks.CONDITIONS["Overdue"], "False", "NotDue", "good"),
        (tasks.CONDITIONS["Overdue"], "True", "DeadlinePassed", "bad"),
        (ConditionMeaning("Custom", otherwise="attention"), "False", "Whatever", "attention"),
    ],
)
def test_condition_tones(meaning: ConditionMeaning, status: str, reason: str | None, tone: str) -> None:
    assert meaning.tone(status, reason) == tone


def task(spec_state: str | None = None, overdue: str | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "t", "generation": 1}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-27T00:00:00Z"
    spec = {"taskState": spec_state} if spec_state else {}
    conditions = [{"type": "Overdue", "status": overdue, "reason": "r", "message": "due yesterday"}] if overdue else []
    return {"metadata": meta, "spec": spec, "status": {"conditions": conditions}}


@pytest.mark.parametrize(
    ("obj", "key", "tone"),
    [
        (task(deleting=True), "Terminating", "idle"),
        (task("Finished", overdue="False"), "Finished", "good"),
        (task("Finished", overdue="True"), "Finished", "good"),  # the reconciler resets it; finished wins meanwhile
        (task(overdue="True"), "Overdue", "bad"),
        (task("Pending", overdue="False"), "Pending", "progress"),
        (task(), "Pending", "progress"),
    ],
)
def test_task_state(obj: dict[str, Any], key: str, tone: str) -> None:
    state = tasks.state(obj)
    assert (state.key, state.tone) == (key, tone)


def test_postgresql_rules_match_the_crd() -> None:
    schema = _schema("postgresqls.database.db.example.com.yaml")
    spec = schema["properties"]["spec"]["properties"]
    assert spec["version"]["pattern"] == postgresqls.VERSION_PATTERN
    assert spec["version"]["default"] == postgresqls.DEFAULT_VERSION
    assert spec["databaseName"]["pattern"] == spec["user"]["pattern"] == postgresqls.IDENTIFIER_PATTERN
    assert (spec["databaseName"]["default"], spec["user"]["default"]) == (postgresqls.DEFAULT_DATABASE, postgresqls.DEFAULT_USER)
    assert spec["storage"]["properties"]["size"]["default"] == postgresqls.DEFAULT_STORAGE
    assert tuple(spec["deletionPolicy"]["enum"]) == postgresqls.DELETION_POLICIES
    assert spec["deletionPolicy"]["default"] == postgresqls.DEFAULT_DELETION_POLICY
    assert spec["passwordSecretRef"]["properties"]["key"]["default"] == postgresqls.PASSWORD_KEY
    (allowlist,) = spec["parameters"]["x-kubernetes-validations"]
    assert sorted(re.findall(r"'([a-z_]+)'", allowlist["rule"])) == sorted(postgresqls.PARAMETERS)
    assert spec["parameters"]["maxProperties"] == len(postgresqls.PARAMETERS)
    status = schema["properties"]["status"]["properties"]
    assert tuple(status["phase"]["enum"]) == postgresqls.PHASES
    assert set(status) == set(postgresqls.PostgresqlStatus.__annotations__)
    assert set(status["passwordSecret"]["properties"]) == set(postgresqls.PasswordSecret.__annotations__)
    assert set(status["dataVolume"]["properties"]) == set(postgresqls.DataVolume.__annotations__)
    assert tuple(status["dataVolume"]["properties"]["password"]["enum"]) == postgresqls.PASSWORD_ORIGINS
    for version in postgresqls.VERSIONS:
        assert re.fullmatch(postgresqls.VERSION_PATTERN, version)


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("max_connections", "200", None),
        ("shared_buffers", "128MB", None),
        ("log_statement", "ddl", None),
        ("statement_timeout", "30s", None),
        ("fsync", "off", "not an allowed parameter"),
        ("max_connections", "many", "must be a whole number, e.g. 100"),
        ("log_statement", "everything", "must be one of none, ddl, mod, all"),
        ("work_mem", 64, "must be a string"),
    ],
)
def test_postgresql_parameters(name: str, value: Any, problem: str | None) -> None:
    found = postgresqls.parameter_problem(name, value)
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))


@pytest.mark.parametrize(
    ("conditions", "key"),
    [
        ([cond("Reconciled", "True", "Applied"), cond("Ready", "True", "DatabaseReady")], "Ready"),
        ([cond("Reconciled", "True", "Applied"), cond("Ready", "False", "PodNotReady")], "Starting"),
        ([cond("Reconciled", "True", "Applied"), cond("Ready", "False", "PasswordSecretMissing")], "Failed"),
        ([cond("Reconciled", "False", "InvalidSpec")], "Failed"),
        ([], "Starting"),
    ],
)
def test_postgresql_state_and_phase(conditions: list[dict[str, Any]], key: str) -> None:
    obj = darkroom(*conditions)
    assert postgresqls.state(obj).key == key
    assert postgresqls.phase(obj) == {"Ready": "Running", "Failed": "Failed"}.get(key, "Pending")


def claimant(name: str, created: str, *subs: str, namespace: str = "a", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "creationTimestamp": created}
    if deleting:
        meta["deletionTimestamp"] = "2027-01-01T00:00:09Z"
    return {"metadata": meta, "spec": {"subDomains": list(subs)}}


def test_the_oldest_claim_holds_a_host() -> None:
    old = claimant("old", "2027-01-01T00:00:01Z", "img", "own")
    young = claimant("young", "2027-01-01T00:00:05Z", "img")
    twin = claimant("twin", "2027-01-01T00:00:01Z", "img", namespace="0-first")  # the same second: namespace/name decide
    gone = claimant("gone", "2027-01-01T00:00:00Z", "img", deleting=True)
    assert darkrooms.holder("img", [young, old]) is old
    assert darkrooms.holder("img", [young, old, twin]) is twin
    assert darkrooms.holder("img", [gone, young]) is young
    assert darkrooms.holder("own", [young]) is None and darkrooms.claims(gone) == []


def test_what_kept_data_means_for_the_password() -> None:
    def say(**data: Any) -> str:
        return postgresqls.data_volume_message("shop", data, user="app", secret="shop-credentials")

    assert say(claim="data-shop-0", reused=False) == ""
    assert say(claim="data-shop-0", reused=True, password=postgresqls.KEPT).endswith(
        "its data and its password, which Secret shop-credentials (kept with the volume) holds"
    )
    unknown = say(claim="data-shop-0", reused=True, password=postgresqls.NEW)
    assert "is not the database's" in unknown and "ALTER ROLE app" in unknown
    assert "the password it was initialised with" in say(claim="data-shop-0", reused=True)
