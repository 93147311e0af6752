"""A create the API never finished is removed by the reconciler — a create either completes or leaves nothing.

The Darkroom reconciler in-process (the harness's settable clock): an S3 Darkroom left with the API's unfinished
mark is reconciled as usual during the grace period and requeued for its end; once it has passed on the
reconciler's own clock it is deleted, with one Warning Event ``UnfinishedCreateRemoved``. A retry that took the
object over (a new mark token, a new resourceVersion) is left alone: the removal decided on the old version is
refused by the server, and the new token has a grace period of its own. Objects without the mark are never
touched. End to end (the API through a proxy that takes the server down mid-create, the reconciler as a
process): a create cut short with no retry leaves nothing, the complete ones beside it stay. The Postgresql
reconciler as a process: a Postgresql left marked waits (nothing made, also when its
Secret exists) and goes after the grace period, leaving no StatefulSet, volume or Secret behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from darkroom_operator.settings import OperatorSettings
from darkroom_operator.unfinished import REMOVED_REASON

from cluster import DARKROOMS, DEPLOYMENTS, EVENTS, POSTGRESQLS, SECRETS, STATEFULSETS
from kinds.darkrooms import CREDENTIALS_PENDING_ANNOTATION as MARK
from kinds.postgresqls import PASSWORD_PENDING_ANNOTATION, password_secret_name
from tests.clusters import ClusterProcess
from tests.faultproxy import FaultProxy
from tests.support import GC_TIMEOUT_S, wait_for

from .harness import Harness, User
from .operator_process import RunOperator

GRACE_S = 120.0
T0 = datetime(2027, 1, 4, 9, 0, tzinfo=UTC)
S3 = {"type": "S3", "bucket": "photos", "region": "eu-west-1", "credentialsSecretRef": {"name": "half-s3-credentials"}}


@pytest.fixture
def harness(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[Harness]:
    h = Harness(kube.kubeconfig, namespace, settings=OperatorSettings(identity="harness", unfinished_create_grace_s=GRACE_S))
    h.clock.fixed = T0
    yield h
    h.close()


def half_made(h: Harness, name: str, token: str = "a1b2c3d4") -> dict[str, Any]:
    """What the API leaves when the server went away after the Darkroom and before its Secret."""
    body = {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": h.namespace, "annotations": {MARK: token}},
        "spec": {"version": "0.4.2", "source": {**S3, "credentialsSecretRef": {"name": f"{name}-s3-credentials"}}, "subDomains": [name]},
    }
    created = h.admin.create(DARKROOMS, body)
    h.settle(DARKROOMS, created)
    return created


def removals(h: Harness, name: str) -> list[Any]:
    return [e for e in h.events() if e["reason"] == REMOVED_REASON and e["involvedObject"]["name"] == name]


def test_an_unfinished_create_is_reconciled_until_its_grace_period_ends_then_removed(harness: Harness) -> None:
    h = harness
    made = half_made(h, "half")
    first = h.darkrooms.reconcile(h.key("half"))
    assert first.requeue_after_s == pytest.approx(GRACE_S)  # reconciled as usual meanwhile, and looked at again then
    assert h.exists(DEPLOYMENTS, "half")
    h.clock.fixed = T0 + timedelta(seconds=GRACE_S - 1)
    assert h.darkrooms.reconcile(h.key("half")).requeue_after_s == pytest.approx(1.0)
    assert h.exists(DARKROOMS, "half") and not removals(h, "half")

    h.clock.fixed = T0 + timedelta(seconds=GRACE_S)
    h.settle_all()
    assert h.darkrooms.reconcile(h.key("half")).requeue_after_s is None
    assert not h.exists(DARKROOMS, "half")
    (event,) = removals(h, "half")
    assert event["type"] == "Warning"
    assert event["involvedObject"]["uid"] == made["metadata"]["uid"]
    assert "cut short before the API wrote its S3 credentials Secret" in event["message"]
    assert "120 s" in event["message"]
    wait_for(lambda: not h.exists(DEPLOYMENTS, "half"), timeout_s=GC_TIMEOUT_S, message="garbage collection of the children")


def test_a_retry_that_took_the_object_over_is_left_alone(harness: Harness) -> None:
    h = harness
    half_made(h, "taken", token="first")
    h.darkrooms.reconcile(h.key("taken"))
    seen = h.get(DARKROOMS, "taken")  # with the status that reconcile wrote
    # The client's retry takes the object over: a new token, written at the version it read (a new resourceVersion).
    h.clock.fixed = T0 + timedelta(seconds=GRACE_S - 5)
    taken = dict(seen, metadata={**seen["metadata"], "annotations": {MARK: "second"}})
    taken = h.admin.update(DARKROOMS, taken)
    # Decided on the version before the retry (as a reconcile that read its cache just before would): the server
    # refuses the delete (resourceVersion precondition), nothing is removed, no Event claims otherwise.
    h.clock.fixed = T0 + timedelta(seconds=GRACE_S + 1)
    assert h.darkrooms.unfinished.check(seen) == 0
    assert h.exists(DARKROOMS, "taken") and not removals(h, "taken")
    # The next reconcile sees the retry's token: a grace period of its own, counted from now.
    h.settle(DARKROOMS, taken)
    assert h.darkrooms.reconcile(h.key("taken")).requeue_after_s == pytest.approx(GRACE_S)
    # The retry finishes: the mark goes, and the Darkroom stays however long it lives.
    done = h.admin.patch(DARKROOMS, "taken", {"metadata": {"annotations": {MARK: None}}}, namespace=h.namespace)
    h.settle(DARKROOMS, done)
    h.clock.fixed = T0 + timedelta(days=30)
    assert h.darkrooms.reconcile(h.key("taken")).requeue_after_s is None
    assert h.exists(DARKROOMS, "taken") and not removals(h, "taken")


def test_a_restart_starts_the_grace_period_again(harness: Harness) -> None:
    """Sightings live in the reconciler's memory: a new reconciler removes later, never earlier."""
    h = harness
    half_made(h, "restarted")
    h.darkrooms.reconcile(h.key("restarted"))
    h.clock.fixed = T0 + timedelta(seconds=GRACE_S)
    from darkroom_operator.darkrooms import DarkroomReconciler

    fresh = DarkroomReconciler(h.context)
    assert fresh.reconcile(h.key("restarted")).requeue_after_s == pytest.approx(GRACE_S)
    assert h.exists(DARKROOMS, "restarted")


@pytest.fixture
def user(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[User]:
    u = User(kube.kubeconfig, namespace)
    yield u
    u.close()


def test_a_postgresql_left_unfinished_waits_and_then_goes_leaving_nothing(run_operator: RunOperator, user: User) -> None:
    """Even with its password Secret written (the API went away before clearing the mark), nothing is started: a
    database initialised on a volume that outlives the removed Postgresql would keep a password nobody has."""
    body = {
        "apiVersion": POSTGRESQLS.api_version,
        "kind": "Postgresql",
        "metadata": {"name": "unfinished", "namespace": user.namespace, "annotations": {PASSWORD_PENDING_ANNOTATION: "0f0f"}},
        "spec": {},
    }
    made = user.client.create(POSTGRESQLS, body)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": password_secret_name("unfinished"),
            "namespace": user.namespace,
            "ownerReferences": [
                {
                    "apiVersion": POSTGRESQLS.api_version,
                    "kind": "Postgresql",
                    "name": "unfinished",
                    "uid": made["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "stringData": {"username": "app", "password": "written-by-the-api"},
    }
    user.client.create(SECRETS, secret)
    run_operator(namespace=user.namespace, env={"DARKROOM_OPERATOR_UNFINISHED_CREATE_GRACE_S": "3"})

    def reason() -> str | None:
        found = user.find(POSTGRESQLS, "unfinished")
        conditions = ((found or {}).get("status") or {}).get("conditions") or []
        return next((c["reason"] for c in conditions if c["type"] == "Reconciled"), None)

    wait_for(lambda: reason() == "PasswordPending" or user.find(POSTGRESQLS, "unfinished") is None, timeout_s=30, message="waiting status")
    wait_for(lambda: user.find(POSTGRESQLS, "unfinished") is None, timeout_s=30, message="the unfinished Postgresql removed")
    assert user.find(STATEFULSETS, "unfinished") is None  # nothing was started for it
    wait_for(lambda: user.find(SECRETS, password_secret_name("unfinished")) is None, timeout_s=GC_TIMEOUT_S, message="its Secret collected")
    events = [e for e in user.list(EVENTS) if e["involvedObject"].get("name") == "unfinished"]
    assert [(e["type"], e["reason"]) for e in events if e["reason"] == REMOVED_REASON] == [("Warning", REMOVED_REASON)]


@pytest.mark.devcluster_only  # the fault proxy reads the request lines: plain HTTP only
def test_a_create_cut_short_without_a_retry_leaves_nothing_and_complete_ones_stay(
    run_operator: RunOperator, user: User, kube: ClusterProcess, tmp_path: Path
) -> None:
    """The whole path: the API (through a proxy that takes the server down at the Secret's POST) answers 503 for a
    Darkroom it made but could not finish nor remove; the reconciler process removes it once the grace period has
    passed; the complete Darkrooms made before and after — through the same API — keep their Secrets."""
    from backend.app import create_app
    from backend.core.access import ClusterAccess
    from backend.settings import ApiSettings
    from tests.cluster.network import kubeconfig_for

    namespace = user.namespace
    proxy = FaultProxy(kube.port)
    settings = ApiSettings(kubeconfig=kubeconfig_for(kube, tmp_path / "kubeconfig", port=proxy.port), cache_sync_timeout_s=30.0)
    access = ClusterAccess.start(settings, environ={})
    try:
        http = create_app(settings, access=access).test_client()
        run_operator(namespace=namespace, env={"DARKROOM_OPERATOR_UNFINISHED_CREATE_GRACE_S": "2"})

        def s3(name: str) -> dict[str, Any]:
            source = {"type": "S3", "bucket": "photos", "region": "eu-west-1", "accessKey": "AKIAEXAMPLE", "secretKey": "s3cr3t-value"}
            return {"name": name, "namespace": namespace, "source": source, "subDomains": [name]}

        assert http.post("/darkrooms", json=s3("before")).status_code == 201
        proxy.arm(f"POST /api/v1/namespaces/{namespace}/secrets")
        cut = http.post("/darkrooms", json=s3("cut"))
        assert proxy.tripped.is_set() and cut.status_code == 503, cut.get_data(as_text=True)
        proxy.revive()
        assert http.post("/darkrooms", json=s3("after")).status_code == 201
        assert user.find(DARKROOMS, "cut") is not None  # made, unfinished: no retry comes

        wait_for(lambda: user.find(DARKROOMS, "cut") is None, timeout_s=60, message="the unfinished Darkroom removed")
        for name in ("before", "after"):
            kept = user.get(DARKROOMS, name)
            assert MARK not in (kept["metadata"].get("annotations") or {})
            assert user.find(SECRETS, f"{name}-s3-credentials") is not None
        assert user.find(SECRETS, "cut-s3-credentials") is None

        def removed() -> list[str]:  # recorded just after the delete
            return [e["type"] for e in user.list(EVENTS) if e["involvedObject"].get("name") == "cut" and e["reason"] == REMOVED_REASON]

        wait_for(removed, timeout_s=30, message="the UnfinishedCreateRemoved Event")
        assert removed() == ["Warning"]
        assert http.post("/darkrooms", json=s3("cut")).status_code == 201  # the name is free again
    finally:
        proxy.revive()
        access.stop()
        proxy.close()
