"""The Postgresql reconciler through a running operator process, on devcluster and the real control plane.

Behaviours: a Postgresql gets a generated 32-character password in an owned Secret (and nowhere
else: not the CR, the ConfigMap, the StatefulSet, Events or the operator's logs), a ConfigMap with
its allowlisted parameters, a headless and a client Service, a StatefulSet (official image by
version, PGDATA on the data volume, pg_isready probes, restricted security context, requests and
limits, retention policy from deletionPolicy) and a data PVC; it turns Running/Ready with its
endpoint in status, our finalizer on it and a Ready Event. A parameter change rewrites the
ConfigMap and rolls the pod (new template digest). A referenced password Secret that does not
exist is Ready=False naming it (``status.passwordSecret`` not present, one Warning Event in ``kubectl get
events`` however often it is rechecked), and the database comes up once the Secret appears (no crash loop,
no generated Secret). The reserved user is an InvalidSpec. A foreign Secret holding the generated
Secret's name is a ChildConflict and is left untouched. Deleting with deletionPolicy Retain keeps
the PVC and says so in an Event, and the password Secret stays with it (owned by the PVC); with Delete the PVC
goes with the StatefulSet and the Secret with them. A re-created Postgresql of the same name runs on the kept
data, takes the kept Secret back (the password is unchanged: the data's), says so in ``status.dataVolume`` and a
Normal Event; deleting the volume then releases the Secret. A volume kept without its Secret gives a generated
password that is not the data's: ``status.dataVolume`` says New and one Warning Event says what to do.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from darkroom_operator.runtime.conditions import find

from cluster import CONFIGMAPS, EVENTS, PERSISTENTVOLUMECLAIMS, POSTGRESQLS, SECRETS, SERVICES, STATEFULSETS, Invalid, NotFound
from kinds import postgresqls as kind
from tests.clusters import ClusterProcess
from tests.support import GC_TIMEOUT_S, Kubectl, wait_for

from .harness import User, reconciles
from .operator_process import RunOperator

TIMEOUT_S = 60


@pytest.fixture
def user(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[User]:
    u = User(kube.kubeconfig, namespace)
    yield u
    u.close()


def postgresql(as_user: User, name: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": POSTGRESQLS.api_version, "kind": "Postgresql", "metadata": {"name": name, "namespace": as_user.namespace}}
    return as_user.client.create(POSTGRESQLS, {**body, "spec": spec})


def status(user: User, name: str) -> Mapping[str, Any]:
    return (user.find(POSTGRESQLS, name) or {}).get("status") or {}


def wait_condition(user: User, name: str, type_: str, state: str, *, reason: str | None = None) -> Mapping[str, Any]:
    def reached() -> Mapping[str, Any] | None:
        found = find(status(user, name).get("conditions"), type_) or {}
        return found if found.get("status") == state and (reason is None or found.get("reason") == reason) else None

    result = wait_for(reached, timeout_s=TIMEOUT_S, interval_s=0.2, message=f"{type_}={state} ({reason}) on Postgresql {name}")
    assert isinstance(result, Mapping)
    return result


def events(user: User, name: str) -> list[Mapping[str, Any]]:
    return [e for e in user.list(EVENTS) if e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == "Postgresql"]


def test_a_postgresql_runs_with_a_generated_password_kept_secret(run_operator: RunOperator, user: User) -> None:
    op = run_operator(namespace=user.namespace)
    created = postgresql(
        user,
        "shop",
        version="16",
        databaseName="shop",
        user="shopper",
        storage={"size": "2Gi"},
        parameters={"max_connections": "200", "shared_buffers": "128MB"},
        resources={"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "0.5Gi"}},
    )
    ready = wait_condition(user, "shop", "Ready", "True")
    assert ready["reason"] == kind.DATABASE_READY
    shown = status(user, "shop")
    assert shown["phase"] == "Running" and shown["readyReplicas"] == 1
    assert shown["endpoint"] == {"host": f"shop.{user.namespace}.svc", "port": 5432}
    assert kind.FINALIZER in user.get(POSTGRESQLS, "shop")["metadata"]["finalizers"]

    secret = user.get(SECRETS, "shop-credentials")
    owner = secret["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Postgresql", created["metadata"]["uid"], True)
    password = base64.b64decode(secret["data"]["password"]).decode()
    assert re.fullmatch(r"[A-Za-z0-9]{32}", password)
    assert base64.b64decode(secret["data"]["username"]).decode() == "shopper"

    config = user.get(CONFIGMAPS, "shop-config")["data"]["postgresql.conf"]
    assert "max_connections = '200'" in config and "shared_buffers = '128MB'" in config and "listen_addresses = '*'" in config
    client_service, headless = user.get(SERVICES, "shop"), user.get(SERVICES, "shop-headless")
    assert client_service["spec"]["ports"][0]["port"] == 5432 and client_service["spec"]["type"] == "ClusterIP"
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"] is True

    sts = user.get(STATEFULSETS, "shop")["spec"]
    assert sts["serviceName"] == "shop-headless" and sts["replicas"] == 1
    assert sts["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert sts["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "2Gi"
    pod = sts["template"]["spec"]
    assert pod["securityContext"]["fsGroup"] == 999 and pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == "postgres:16"
    env = {e["name"]: e for e in container["env"]}
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "shop-credentials", "key": "password"}
    assert env["PGDATA"]["value"] == "/var/lib/postgresql/data/pgdata"
    assert (env["POSTGRES_USER"]["value"], env["POSTGRES_DB"]["value"]) == ("shopper", "shop")
    assert container["readinessProbe"]["exec"]["command"][0] == "pg_isready"
    assert container["resources"] == {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False

    claim = wait_for(lambda: user.find(PERSISTENTVOLUMECLAIMS, "data-shop-0"), timeout_s=TIMEOUT_S, message="the data PVC")
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
    wait_for(lambda: any(e["reason"] == "Ready" for e in events(user, "shop")), timeout_s=TIMEOUT_S, message="a Ready Event")

    everywhere = json.dumps(
        [user.get(POSTGRESQLS, "shop"), user.list(CONFIGMAPS), user.get(STATEFULSETS, "shop"), user.list(EVENTS), status(user, "shop")]
    )
    assert password not in everywhere
    assert password not in op.log_text()


def test_a_parameter_change_rewrites_the_config_and_rolls_the_pod(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    postgresql(user, "tuned", parameters={"work_mem": "4MB"})
    wait_condition(user, "tuned", "Ready", "True")
    before = user.get(STATEFULSETS, "tuned")["spec"]["template"]["metadata"]["annotations"][kind.CONFIG_HASH_ANNOTATION]
    user.client.patch(POSTGRESQLS, "tuned", {"spec": {"parameters": {"work_mem": "16MB"}}}, namespace=user.namespace, patch_type="merge")

    def rolled() -> bool:
        template = user.get(STATEFULSETS, "tuned")["spec"]["template"]
        return bool(template["metadata"]["annotations"][kind.CONFIG_HASH_ANNOTATION] != before)

    wait_for(rolled, timeout_s=TIMEOUT_S, message="a new template digest")
    assert "work_mem = '16MB'" in user.get(CONFIGMAPS, "tuned-config")["data"]["postgresql.conf"]
    wait_for(lambda: status(user, "tuned").get("observedGeneration") == 2, timeout_s=TIMEOUT_S, message="generation 2 observed")
    wait_condition(user, "tuned", "Ready", "True")


def warnings(kubectl: Kubectl, namespace: str, name: str) -> list[tuple[str, str]]:
    """(reason, message) of the Warning Events about Postgresql ``name``, as ``kubectl get events`` lists them."""
    selector = f"involvedObject.kind=Postgresql,involvedObject.name={name},type=Warning"
    listed = json.loads(kubectl.run("get", "events", "-n", namespace, "--field-selector", selector, "-o", "json").stdout)
    return sorted((e["reason"], e["message"]) for e in listed["items"])


def test_a_missing_password_secret_is_reported_then_healed(run_operator: RunOperator, user: User, kubectl: Kubectl) -> None:
    """Ready=False naming the Secret, status.passwordSecret not present, and one Warning Event — not one per recheck."""
    op = run_operator(namespace=user.namespace, resync_s=1)
    postgresql(user, "byo", passwordSecretRef={"name": "byo-password"})
    missing = wait_condition(user, "byo", "Ready", "False", reason=kind.PASSWORD_SECRET_MISSING)
    assert '"byo-password" does not exist' in missing["message"]
    assert status(user, "byo")["phase"] == "Failed"
    assert status(user, "byo")["passwordSecret"] == {"name": "byo-password", "key": "password", "present": False}
    assert find(status(user, "byo")["conditions"], "Reconciled")["message"] == (  # type: ignore[index]
        "ConfigMap, Services and StatefulSet match the spec; the password comes from Secret byo-password"
    )
    assert user.find(SECRETS, "byo-credentials") is None  # nothing generated when the user brings a Secret
    wait_for(lambda: warnings(kubectl, user.namespace, "byo"), timeout_s=TIMEOUT_S, message="a Warning Event")
    deadline = reconciles(op, "postgresql") + 3
    wait_for(lambda: reconciles(op, "postgresql") >= deadline, timeout_s=TIMEOUT_S, message="three more reconciles (resyncs)")
    assert warnings(kubectl, user.namespace, "byo") == [(kind.PASSWORD_SECRET_MISSING, missing["message"])]
    user.client.create(
        SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "byo-password", "namespace": user.namespace}, "data": {}}
    )
    wait_condition(user, "byo", "Ready", "False", reason=kind.PASSWORD_SECRET_MISSING)
    wait_for(lambda: 'no key "password"' in (find(status(user, "byo").get("conditions"), "Ready") or {}).get("message", ""), timeout_s=30)
    user.client.patch(SECRETS, "byo-password", {"stringData": {"password": "s3cret-from-the-user"}}, namespace=user.namespace)
    wait_condition(user, "byo", "Ready", "True")
    assert status(user, "byo")["passwordSecret"]["present"] is True
    env = {e["name"]: e for e in user.get(STATEFULSETS, "byo")["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "byo-password", "key": "password"}


def test_the_reserved_user_is_an_invalid_spec(run_operator: RunOperator, user: User) -> None:
    run_operator(namespace=user.namespace)
    postgresql(user, "root", user="postgres")
    invalid = wait_condition(user, "root", "Reconciled", "False", reason=kind.INVALID_SPEC)
    assert invalid["message"].startswith("spec.user: 'postgres' is the image's superuser")
    assert user.find(STATEFULSETS, "root") is None and user.find(SECRETS, "root-credentials") is None


def test_a_foreign_secret_is_a_conflict_and_left_alone(run_operator: RunOperator, user: User) -> None:
    foreign = user.client.create(
        SECRETS,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "taken-credentials", "namespace": user.namespace},
            "stringData": {"password": "not-yours"},
        },
    )
    run_operator(namespace=user.namespace)
    postgresql(user, "taken")
    conflict = wait_condition(user, "taken", "Reconciled", "False", reason=kind.CHILD_CONFLICT)
    assert 'Secret "taken-credentials" already exists' in conflict["message"]
    after = user.get(SECRETS, "taken-credentials")
    assert after["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
    assert not after["metadata"].get("ownerReferences")
    assert user.find(STATEFULSETS, "taken") is None
    user.client.delete(POSTGRESQLS, "taken", namespace=user.namespace)
    wait_for(lambda: user.find(POSTGRESQLS, "taken") is None, timeout_s=TIMEOUT_S, message="the Postgresql gone")
    assert user.find(SECRETS, "taken-credentials") is not None


@pytest.mark.parametrize("policy", ["Retain", "Delete"])
def test_deletion_follows_the_deletion_policy(run_operator: RunOperator, user: User, policy: str) -> None:
    run_operator(namespace=user.namespace)
    name = f"gone-{policy.lower()}"
    postgresql(user, name, deletionPolicy=policy)
    wait_condition(user, name, "Ready", "True")
    claim = f"data-{name}-0"
    wait_for(lambda: user.find(PERSISTENTVOLUMECLAIMS, claim), timeout_s=TIMEOUT_S, message="the data PVC")
    user.client.delete(POSTGRESQLS, name, namespace=user.namespace)
    wait_for(lambda: user.find(POSTGRESQLS, name) is None, timeout_s=TIMEOUT_S, message="the finalizer removed")
    wait_for(lambda: user.find(STATEFULSETS, name) is None, timeout_s=GC_TIMEOUT_S, message="the StatefulSet collected")
    reason = "VolumesRetained" if policy == "Retain" else "VolumesDeleted"
    recorded = [e for e in events(user, name) if e["reason"] == reason]
    assert recorded and claim in recorded[0]["message"]
    if policy == "Retain":
        kept = user.find(PERSISTENTVOLUMECLAIMS, claim)
        assert kept is not None
        # The password the data was initialised with stays with the data: its Secret is owned by the kept volume.
        only_the_volume = {("PersistentVolumeClaim", kept["metadata"]["uid"])}
        wait_for(lambda: owners(user, f"{name}-credentials") == only_the_volume, timeout_s=GC_TIMEOUT_S, message="the Secret kept")
    else:
        wait_for(lambda: user.find(SECRETS, f"{name}-credentials") is None, timeout_s=GC_TIMEOUT_S, message="the Secret collected")

        def claim_gone() -> bool:
            try:
                found = user.get(PERSISTENTVOLUMECLAIMS, claim)
            except NotFound:
                return True
            return bool(found["metadata"].get("deletionTimestamp"))  # pvc-protection may hold it until the pod is gone

        wait_for(claim_gone, timeout_s=GC_TIMEOUT_S, message="the data PVC deleted")


def owners(user: User, name: str) -> set[tuple[str, str]]:
    """(kind, uid) of the ownerReferences of Secret ``name`` (empty when it is gone)."""
    found = user.find(SECRETS, name) or {"metadata": {}}
    return {(r["kind"], r["uid"]) for r in found["metadata"].get("ownerReferences") or ()}


def password_of(user: User, name: str) -> str:
    return base64.b64decode(user.get(SECRETS, f"{name}-credentials")["data"]["password"]).decode()


def delete_and_wait(user: User, name: str) -> None:
    user.client.delete(POSTGRESQLS, name, namespace=user.namespace)
    wait_for(lambda: user.find(POSTGRESQLS, name) is None, timeout_s=TIMEOUT_S, message="the finalizer removed")
    wait_for(lambda: user.find(STATEFULSETS, name) is None, timeout_s=GC_TIMEOUT_S, message="the StatefulSet collected")


def test_a_re_created_postgresql_runs_on_the_kept_data_with_its_kept_password(run_operator: RunOperator, user: User) -> None:
    """deletionPolicy Retain keeps the data volume and the Secret holding its password; a new Postgresql of the same
    name takes that Secret back (its password is the data's), says so in status and a Normal Event; deleting the
    volume then releases the Secret."""
    run_operator(namespace=user.namespace)
    first = postgresql(user, "keep")
    wait_condition(user, "keep", "Ready", "True")
    claim = wait_for(lambda: user.find(PERSISTENTVOLUMECLAIMS, "data-keep-0"), timeout_s=TIMEOUT_S, message="the data PVC")
    assert status(user, "keep")["dataVolume"] == {"claim": "data-keep-0", "reused": False}
    password, secret_uid = password_of(user, "keep"), user.get(SECRETS, "keep-credentials")["metadata"]["uid"]
    wait_for(lambda: ("PersistentVolumeClaim", claim["metadata"]["uid"]) in owners(user, "keep-credentials"), timeout_s=TIMEOUT_S)
    delete_and_wait(user, "keep")
    assert user.get(SECRETS, "keep-credentials")["metadata"]["uid"] == secret_uid  # kept with the data

    second = postgresql(user, "keep")
    wait_condition(user, "keep", "Ready", "True")
    assert status(user, "keep")["dataVolume"] == {"claim": "data-keep-0", "reused": True, "password": kind.KEPT}
    kept = user.get(SECRETS, "keep-credentials")
    assert kept["metadata"]["uid"] == secret_uid and password_of(user, "keep") == password
    expected = {("Postgresql", second["metadata"]["uid"]), ("PersistentVolumeClaim", claim["metadata"]["uid"])}
    assert owners(user, "keep-credentials") == expected
    assert kept["metadata"]["ownerReferences"][0]["controller"] is True and first["metadata"]["uid"] != second["metadata"]["uid"]
    reused = wait_for(lambda: [e for e in events(user, "keep") if e["reason"] == kind.DATA_REUSED], timeout_s=TIMEOUT_S)
    assert reused[0]["type"] == "Normal" and "its data and its password, which Secret keep-credentials" in reused[0]["message"]

    delete_and_wait(user, "keep")
    user.client.delete(PERSISTENTVOLUMECLAIMS, "data-keep-0", namespace=user.namespace)
    wait_for(lambda: user.find(SECRETS, "keep-credentials") is None, timeout_s=GC_TIMEOUT_S, message="the Secret released with the volume")


def test_data_kept_without_its_password_is_a_warning(run_operator: RunOperator, user: User, kubectl: Kubectl) -> None:
    """A volume kept without its Secret (by an earlier release, or the Secret deleted): the new Postgresql's generated
    password is not the data's — status says so and one Warning Event names what to do."""
    op = run_operator(namespace=user.namespace, resync_s=1)
    postgresql(user, "lost")
    wait_condition(user, "lost", "Ready", "True")
    wait_for(lambda: user.find(PERSISTENTVOLUMECLAIMS, "data-lost-0"), timeout_s=TIMEOUT_S, message="the data PVC")
    delete_and_wait(user, "lost")
    user.client.delete(SECRETS, "lost-credentials", namespace=user.namespace)
    wait_for(lambda: user.find(SECRETS, "lost-credentials") is None, timeout_s=TIMEOUT_S)

    postgresql(user, "lost")
    wait_condition(user, "lost", "Ready", "True")
    assert status(user, "lost")["dataVolume"] == {"claim": "data-lost-0", "reused": True, "password": kind.NEW}
    deadline = reconciles(op, "postgresql") + 3
    wait_for(lambda: reconciles(op, "postgresql") >= deadline, timeout_s=TIMEOUT_S, message="three more reconciles (resyncs)")
    ((reason, message),) = warnings(kubectl, user.namespace, "lost")
    assert reason == kind.DATA_PASSWORD_UNKNOWN
    assert "whose password was not kept with it: the password in Secret lost-credentials is not the database's" in message


def test_a_storage_size_change_is_refused_or_reported(run_operator: RunOperator, user: User) -> None:
    """kube-apiserver refuses it (the CRD's CEL rule); devcluster evaluates no CEL (DIFFERENCES K03), so the
    reconciler says it did not apply it — never a size that silently differs from the data volume's."""
    run_operator(namespace=user.namespace)
    postgresql(user, "sized", storage={"size": "1Gi"})
    wait_condition(user, "sized", "Ready", "True")
    try:
        user.client.patch(POSTGRESQLS, "sized", {"spec": {"storage": {"size": "5Gi"}}}, namespace=user.namespace, patch_type="merge")
    except Invalid as e:
        assert "storage.size cannot change after creation" in e.message
        assert user.get(POSTGRESQLS, "sized")["spec"]["storage"]["size"] == "1Gi"
        return
    reported = wait_condition(user, "sized", "Reconciled", "False", reason=kind.STORAGE_SIZE_FIXED)
    assert reported["message"] == "spec.storage.size 5Gi is not the data volume's 1Gi: resizing is not supported yet; set it back to 1Gi"
    assert user.get(STATEFULSETS, "sized")["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "1Gi"
