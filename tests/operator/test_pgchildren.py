"""The Postgresql's desired children (darkroom_operator.pgchildren): pure bodies.

Behaviours: names and labels come from kinds.postgresqls and every child has a controller
ownerReference; CRD defaults are filled in for a raw spec; postgresql.conf lists the parameters
sorted with quotes escaped; the password is read from the referenced Secret/key or the generated
one; requests and limits are canonical quantities and bad ones are reported by path; the retention
policy follows deletionPolicy; the StatefulSet keeps the live volumeClaimTemplate size (immutable
once created); a parameter change changes the template digest, other changes do not.
"""

from __future__ import annotations

from typing import Any

from darkroom_operator import pgchildren
from darkroom_operator.settings import OperatorSettings

from kinds import postgresqls as kind

SETTINGS = OperatorSettings(identity="t")


def pg(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "database.db.example.com/v1",
        "kind": "Postgresql",
        "metadata": {"name": "db", "namespace": "ns", "uid": "u-1", "generation": 1},
        "spec": spec,
    }


def test_names_labels_and_owner() -> None:
    obj = pg()
    bodies = [
        pgchildren.configmap(obj, SETTINGS),
        pgchildren.headless_service(obj, SETTINGS),
        pgchildren.client_service(obj, SETTINGS),
        pgchildren.statefulset(obj, SETTINGS),
        pgchildren.password_secret(obj, SETTINGS, "x" * 32),
    ]
    assert [b["metadata"]["name"] for b in bodies] == ["db-config", "db-headless", "db", "db", "db-credentials"]
    for body in bodies:
        assert body["metadata"]["namespace"] == "ns"
        assert body["metadata"]["labels"]["app.kubernetes.io/instance"] == "db"
        (owner,) = body["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("Postgresql", "u-1", True)


def test_crd_defaults_for_a_raw_spec() -> None:
    spec = pgchildren.spec_of(pg())
    assert (spec["version"], spec["databaseName"], spec["user"], spec["deletionPolicy"]) == ("17", "app", "app", "Retain")
    assert spec["storage"]["size"] == kind.DEFAULT_STORAGE
    assert pgchildren.statefulset(pg(), SETTINGS)["spec"]["template"]["spec"]["containers"][0]["image"] == "postgres:17"


def test_config_text() -> None:
    text = pgchildren.config_text(pg(parameters={"work_mem": "4MB", "timezone": "Europe/It's"}))
    assert text.splitlines()[1:] == ["listen_addresses = '*'", "timezone = 'Europe/It''s'", "work_mem = '4MB'"]


def test_password_reference() -> None:
    assert pgchildren.password_secret_ref(pg()) == ("db-credentials", "password")
    assert pgchildren.password_secret_ref(pg(passwordSecretRef={"name": "mine"})) == ("mine", "password")
    assert pgchildren.password_secret_ref(pg(passwordSecretRef={"name": "mine", "key": "pw"})) == ("mine", "pw")
    secret = pgchildren.password_secret(pg(user="shop"), SETTINGS, "p" * 32)
    assert secret["stringData"] == {"password": "p" * 32, "username": "shop"}


def test_resources_are_canonical_and_bad_ones_reported() -> None:
    obj = pg(resources={"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"memory": "0.5Gi"}})
    assert pgchildren.resources(obj) == {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "512Mi"}}
    assert pgchildren.resource_problems(pg(resources={"limits": {"cpu": "lots"}}))[0].startswith("spec.resources.limits.cpu: ")


def test_retention_follows_the_deletion_policy() -> None:
    for policy, when_deleted in (("Retain", "Retain"), ("Delete", "Delete"), (None, "Retain")):
        spec = {"deletionPolicy": policy} if policy else {}
        sts = pgchildren.statefulset(pg(**spec), SETTINGS)
        assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": when_deleted, "whenScaled": "Retain"}


def test_the_claim_template_keeps_its_created_size() -> None:
    grown = pg(storage={"size": "10Gi", "storageClassName": "fast"})
    fresh = pgchildren.statefulset(grown, SETTINGS)["spec"]["volumeClaimTemplates"][0]["spec"]
    assert fresh["resources"]["requests"]["storage"] == "10Gi" and fresh["storageClassName"] == "fast"
    kept = pgchildren.statefulset(grown, SETTINGS, storage_size="5Gi")["spec"]["volumeClaimTemplates"][0]["spec"]
    assert kept["resources"]["requests"]["storage"] == "5Gi"


def test_only_the_config_rolls_the_pod() -> None:
    def digest(obj: dict[str, Any]) -> str:
        return str(pgchildren.statefulset(obj, SETTINGS)["spec"]["template"]["metadata"]["annotations"][kind.CONFIG_HASH_ANNOTATION])

    base = digest(pg(parameters={"work_mem": "4MB"}))
    assert digest(pg(parameters={"work_mem": "8MB"})) != base
    assert digest(pg(parameters={"work_mem": "4MB"}, deletionPolicy="Delete")) == base
