"""The controller runtime in-process with a scripted reconciler, against the session devcluster.

Covers: informer events map to primary keys (the primary itself; an owned object through its
controller ownerReference of the primary's kind, label-selected on managed-by; a watched object
through ``to_keys``) and nothing else; outcomes — success forgets, ``requeue_after_s`` reconciles
again with no event, Conflict retries quietly (debug), an exception retries with an error log
carrying the key and the error, NotFound of a deleted primary is dropped while NotFound with the
primary present is retried; periodic resync; priorities — a spec edit made while the initial list or a
resync of many Darkrooms waits is reconciled before the rest of that storm (order, not time), and which
primary updates are low (status, metadata) or high (spec, deletion); graceful stop lets an in-flight reconcile finish and
takes no new work, and reports a reconcile that outlives the timeout; conflicting informer
declarations are refused.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from darkroom_operator.runtime.controllers import Controllers, owner_key, primary_update_priority
from darkroom_operator.runtime.metrics import Metrics
from darkroom_operator.runtime.reconciling import Result, Watch
from darkroom_operator.runtime.workqueues import HIGH, LOW
from darkroom_operator.settings import OperatorSettings

from cluster import (
    CONFIGMAPS,
    DARKROOMS,
    SECRETS,
    Cache,
    CachedClient,
    ClientSettings,
    Conflict,
    ConnectionSettings,
    InformerSettings,
    NotFound,
    Resource,
    connect,
)
from tests.clusters import ClusterProcess
from tests.support import wait_for

FOR_LABEL = "test.example.com/for"
MANAGED = {"app.kubernetes.io/managed-by": "darkroom-operator"}


class Scripted:
    """A reconciler that records keys and follows a per-key script (exceptions to raise, results to return)."""

    name = "scripted"
    primary: Resource = DARKROOMS
    owned: tuple[Resource, ...] = (CONFIGMAPS,)

    def __init__(self, namespace: str) -> None:
        self.watches: tuple[Watch, ...] = (
            Watch(SECRETS, label_selector=FOR_LABEL, to_keys=lambda o: [f"{namespace}/{o['metadata']['labels'][FOR_LABEL]}"]),
        )
        self.calls: list[str] = []
        self.script: dict[str, list[Exception | Result | Callable[[], Result]]] = {}
        self.lock = threading.Lock()

    def reconcile(self, key: str) -> Result:
        with self.lock:
            self.calls.append(key)
            steps = self.script.get(key)
            step = steps.pop(0) if steps else Result()
        if isinstance(step, Exception):
            raise step
        return step() if callable(step) else step

    def count(self, key: str) -> int:
        with self.lock:
            return self.calls.count(key)


class Runtime:
    def __init__(self, controllers: Controllers, metrics: Metrics, reconciler: Scripted, writer: CachedClient) -> None:
        self.writer = writer
        self.controllers = controllers
        self.metrics = metrics
        self.reconciler = reconciler
        self.controller = controllers.controllers[0]

    def outcomes(self, result: str) -> float:
        value = self.metrics.registry.get_sample_value("darkroom_operator_reconcile_total", {"controller": "scripted", "result": result})
        return value or 0.0


@pytest.fixture
def make_runtime(kube: ClusterProcess, crds_installed: None, namespace: str) -> Iterator[Callable[..., Runtime]]:
    connection = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ=os.environ)
    caches: list[Cache] = []
    runtimes: list[Runtime] = []

    def make(script: dict[str, list[Any]] | None = None, **settings: Any) -> Runtime:
        cache = Cache(transport=connection.transport, settings=InformerSettings())
        caches.append(cache)
        operator_settings = OperatorSettings(namespace=namespace, leader_election=False, health_port=-1, **settings)
        reconciler = Scripted(namespace)
        reconciler.script.update(script or {})
        metrics = Metrics()
        # The reconciler's own client (field manager "scripted"), on the runtime's cache: its writes' events are echoes.
        writer = CachedClient(transport=connection.transport, cache=cache, settings=ClientSettings(field_manager="scripted"), echoes=True)
        controllers = Controllers(reconcilers=[reconciler], cache=cache, settings=operator_settings, metrics=metrics, echo=writer.is_echo)
        assert cache.start().wait_for_sync(30)
        controllers.start()
        runtime = Runtime(controllers, metrics, reconciler, writer)
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        runtime.controllers.stop(5)
    for cache in caches:
        cache.stop()
    connection.close()


@pytest.fixture
def client(kube: ClusterProcess) -> Iterator[CachedClient]:
    connection = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ=os.environ)
    yield CachedClient(
        transport=connection.transport, cache=Cache(transport=connection.transport, settings=InformerSettings()), settings=ClientSettings()
    )
    connection.close()


def create_darkroom(client: CachedClient, namespace: str, name: str) -> dict[str, Any]:
    body = {
        "apiVersion": DARKROOMS.api_version,
        "kind": "Darkroom",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/"}, "subDomains": ["img"]},
    }
    return client.create(DARKROOMS, body)


def owned_configmap(
    namespace: str, name: str, owner: dict[str, Any], *, kind: str = "Darkroom", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    ref = {
        "apiVersion": DARKROOMS.api_version,
        "kind": kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    return {"metadata": {"name": name, "namespace": namespace, "labels": MANAGED if labels is None else labels, "ownerReferences": [ref]}}


# -- events → keys ---------------------------------------------------------------------------


def test_events_are_mapped_to_primary_keys(make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str) -> None:
    rt = make_runtime()
    owner = create_darkroom(client, namespace, "owner")
    wait_for(lambda: rt.reconciler.count(f"{namespace}/owner") >= 1, message="the primary's own event")

    # Not ours: an owner of another kind, or no managed-by label (then not even in the informer).
    client.create(CONFIGMAPS, owned_configmap(namespace, "other-kind", owner, kind="Elsewhere"))
    client.create(CONFIGMAPS, owned_configmap(namespace, "unlabelled", owner, labels={}))
    other = create_darkroom(client, namespace, "other")
    wait_for(lambda: rt.reconciler.count(f"{namespace}/other") >= 1)
    before = rt.reconciler.count(f"{namespace}/owner")
    client.create(CONFIGMAPS, owned_configmap(namespace, "child", other))
    wait_for(lambda: rt.reconciler.count(f"{namespace}/other") >= 2, message="the owned child's event enqueues its owner")
    # Handlers run in event order: the two foreign ConfigMaps came first and enqueued nothing.
    assert rt.reconciler.count(f"{namespace}/owner") == before

    client.create(SECRETS, {"metadata": {"name": "s", "namespace": namespace, "labels": {FOR_LABEL: "watched"}}})
    wait_for(lambda: rt.reconciler.count(f"{namespace}/watched") >= 1, message="a Watch's to_keys")


def test_the_names_others_hold_are_kept_as_who_holds_them(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    """Beside each owned kind's informer, one of the metadata of that kind's other objects (not labelled managed-by us):
    it keeps each object's name, UID, resourceVersion and controller's UID, as text, not its data, labels or annotations
    (kubectl's last-applied-configuration can be a copy of the whole object); its events enqueue nothing."""
    rt = make_runtime()
    owner = create_darkroom(client, namespace, "owner")
    wait_for(lambda: rt.reconciler.count(f"{namespace}/owner") >= 1)
    before = rt.reconciler.count(f"{namespace}/owner")
    big = "x" * 50_000
    theirs = {
        "name": "theirs",
        "namespace": namespace,
        "labels": {"app": "a"},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": big},
    }
    client.create(CONFIGMAPS, {"metadata": theirs, "data": {"k": big}})
    client.create(CONFIGMAPS, owned_configmap(namespace, "unlabelled", owner, labels={}))
    others = rt.controllers.cache.metadata_informer(CONFIGMAPS)
    assert others is not None and others.label_selector == "app.kubernetes.io/managed-by!=darkroom-operator"
    wait_for(lambda: others.store.get(f"{namespace}/unlabelled") is not None, message="the others' names")
    assert others.store.packed  # kept as text: many small objects, read one at a time
    held = others.store.get(f"{namespace}/theirs")
    assert held is not None and set(held) == {"metadata"}
    assert set(held["metadata"]) == {"name", "namespace", "uid", "resourceVersion"}
    unlabelled = others.store.get(f"{namespace}/unlabelled")
    assert unlabelled is not None
    assert list(unlabelled["metadata"]["ownerReferences"]) == [{"uid": owner["metadata"]["uid"], "controller": True}]
    assert rt.controllers.cache.informer(CONFIGMAPS).store.get(f"{namespace}/theirs") is None  # type: ignore[union-attr]
    assert rt.reconciler.count(f"{namespace}/owner") == before  # the unlabelled child is not the owned informer's


def test_the_events_of_the_reconcilers_own_writes_enqueue_nothing(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    """A status write and a child's create made by the reconciler's own client come back as events that report only what
    it wrote: they enqueue nothing. The same writes by someone else enqueue the Darkroom."""
    rt = make_runtime()
    echoed, marker = create_darkroom(client, namespace, "echoed"), create_darkroom(client, namespace, "marker")
    wait_for(lambda: rt.reconciler.count(f"{namespace}/echoed") >= 1 and rt.reconciler.count(f"{namespace}/marker") >= 1)
    before = rt.reconciler.count(f"{namespace}/echoed")

    def status(name: str, generation: int) -> dict[str, Any]:
        meta = {"name": name, "namespace": namespace}
        return {"apiVersion": DARKROOMS.api_version, "kind": "Darkroom", "metadata": meta, "status": {"observedGeneration": generation}}

    rt.writer.apply_status(DARKROOMS, status("echoed", 1), field_manager="scripted", force=True)
    rt.writer.create(CONFIGMAPS, owned_configmap(namespace, "echoed-child", echoed))
    # Handlers run in event order, one informer at a time: once someone else's writes of the same kinds (for the
    # marker) have enqueued, the echoes' handlers have run.
    marked = rt.reconciler.count(f"{namespace}/marker")
    client.create(CONFIGMAPS, owned_configmap(namespace, "marker-child", marker))
    wait_for(lambda: rt.reconciler.count(f"{namespace}/marker") > marked, message="someone else's child enqueues its owner")
    marked = rt.reconciler.count(f"{namespace}/marker")
    client.apply_status(DARKROOMS, status("marker", 1), field_manager="someone", force=True)
    wait_for(lambda: rt.reconciler.count(f"{namespace}/marker") > marked, message="someone else's status write enqueues")
    assert rt.reconciler.count(f"{namespace}/echoed") == before

    client.apply_status(DARKROOMS, status("echoed", 2), field_manager="someone", force=True)
    wait_for(lambda: rt.reconciler.count(f"{namespace}/echoed") == before + 1, message="a status write not ours enqueues")


def test_owner_key_needs_a_controller_reference_of_the_primary_kind_and_group() -> None:
    def obj(**ref: Any) -> dict[str, Any]:
        return {"metadata": {"namespace": "ns", "ownerReferences": [{"name": "o", "uid": "u", **ref}]}}

    assert owner_key(obj(apiVersion=DARKROOMS.api_version, kind="Darkroom", controller=True), DARKROOMS) == "ns/o"
    assert owner_key(obj(apiVersion="deployments.example.com/v2", kind="Darkroom", controller=True), DARKROOMS) == "ns/o"
    assert owner_key(obj(apiVersion=DARKROOMS.api_version, kind="Darkroom"), DARKROOMS) is None
    assert owner_key(obj(apiVersion="other.example.com/v1", kind="Darkroom", controller=True), DARKROOMS) is None
    assert owner_key(obj(apiVersion=DARKROOMS.api_version, kind="Task", controller=True), DARKROOMS) is None


# -- outcomes --------------------------------------------------------------------------------


def test_conflicts_and_errors_are_retried_then_forgotten(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="darkroom_operator")
    rt = make_runtime()
    key = f"{namespace}/flaky"
    rt.reconciler.script[key] = [Conflict("the object has been modified", status=409), RuntimeError("boom"), Result()]
    create_darkroom(client, namespace, "flaky")
    wait_for(lambda: rt.outcomes("success") >= 1, message="success after two failures")
    assert rt.reconciler.count(key) == 3
    assert (rt.outcomes("conflict"), rt.outcomes("error")) == (1.0, 1.0)
    assert rt.controller.queue.num_requeues(key) == 0, "success forgets the failures"
    assert rt.controller.queue.stats().retries_total == 2

    failures = [r for r in caplog.records if r.getMessage() == "reconcile failed"]
    assert len(failures) == 1
    assert failures[0].levelno == logging.ERROR
    assert (failures[0].key, failures[0].error, failures[0].error_type, failures[0].controller) == (key, "boom", "RuntimeError", "scripted")  # type: ignore[attr-defined]
    assert failures[0].exc_info is not None, "an unexpected exception is logged with its traceback"
    conflicts = [r for r in caplog.records if r.getMessage() == "conflict, retrying"]
    assert [r.levelno for r in conflicts] == [logging.DEBUG]


def test_not_found_of_a_deleted_primary_is_dropped_but_retried_while_it_exists(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    rt = make_runtime()
    ghost = f"{namespace}/ghost"  # enqueued through the Watch; no Darkroom of that name
    rt.reconciler.script[ghost] = [NotFound("darkrooms ghost not found", status=404)]
    client.create(SECRETS, {"metadata": {"name": "s", "namespace": namespace, "labels": {FOR_LABEL: "ghost"}}})
    wait_for(lambda: rt.outcomes("gone") == 1)
    assert rt.controller.queue.stats().waiting == 0, "no retry scheduled"
    assert rt.controller.queue.num_requeues(ghost) == 0

    present = f"{namespace}/present"
    rt.reconciler.script[present] = [NotFound('configmaps "present" not found', status=404), Result()]
    create_darkroom(client, namespace, "present")
    wait_for(lambda: rt.reconciler.count(present) == 2, message="NotFound of a child is retried")
    assert rt.outcomes("error") == 1


def test_requeue_after_reconciles_again_without_an_event(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    rt = make_runtime()
    key = f"{namespace}/timer"
    rt.reconciler.script[key] = [Result(requeue_after_s=0.05), Result()]
    create_darkroom(client, namespace, "timer")
    wait_for(lambda: rt.reconciler.count(key) == 2)
    assert rt.outcomes("requeue_after") == 1


def test_resync_reconciles_every_cached_primary_again(make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str) -> None:
    rt = make_runtime(resync_s=0.2)
    create_darkroom(client, namespace, "a")
    create_darkroom(client, namespace, "b")
    wait_for(lambda: rt.reconciler.count(f"{namespace}/a") >= 3 and rt.reconciler.count(f"{namespace}/b") >= 3, message="resyncs")


# -- priorities ------------------------------------------------------------------------------

STORM = 30


class Gate:
    """A reconcile step that holds the single worker until released, so the test can act while a storm waits."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self) -> Result:
        self.entered.set()
        assert self.release.wait(60), "the gate was never released"
        return Result()


def storm_names() -> list[str]:
    return [f"storm-{i:03}" for i in range(STORM)]


def edit_spec(client: CachedClient, namespace: str, name: str) -> None:
    client.patch(DARKROOMS, name, {"spec": {"replicas": 3}}, namespace=namespace)


def assert_edit_goes_first(rt: Runtime, client: CachedClient, namespace: str, gate: Gate, *, already: int) -> None:
    """With the worker held by ``gate`` and the rest of the storm waiting low, edit the storm's last Darkroom (the
    last in the queue): its reconcile is the very next one, before the 28 others."""
    queue = rt.controller.queue
    edited = storm_names()[-1]
    edit_spec(client, namespace, edited)
    wait_for(lambda: queue.stats().depth_by_priority.get(HIGH) == 1, message="the edit queued at high priority")
    assert queue.stats().depth_by_priority.get(LOW) == STORM - 2  # the held key and the edited one are not waiting low
    gate.release.set()
    wait_for(lambda: len(rt.reconciler.calls) >= already + STORM, message="the storm drained")
    storm = rt.reconciler.calls[already:]
    assert storm[:2] == [f"{namespace}/storm-000", f"{namespace}/{edited}"], storm[:5]
    assert sorted(storm) == sorted(f"{namespace}/{n}" for n in storm_names())  # each once: the edit collapsed into its low add


def test_a_spec_edit_during_the_initial_list_storm_is_reconciled_before_the_storm(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    for name in storm_names():
        create_darkroom(client, namespace, name)
    gate = Gate()
    rt = make_runtime(script={f"{namespace}/storm-000": [gate]}, workers=1)  # the initial list: storm-000 first (key order)
    assert gate.entered.wait(30)
    assert_edit_goes_first(rt, client, namespace, gate, already=0)


def test_a_spec_edit_during_a_resync_storm_is_reconciled_before_the_storm(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    rt = make_runtime(workers=1)
    for name in storm_names():
        create_darkroom(client, namespace, name)
    wait_for(lambda: all(rt.reconciler.count(f"{namespace}/{n}") >= 1 for n in storm_names()), message="the Darkrooms reconciled once")
    wait_for(lambda: len(rt.controller.queue) == 0, message="the queue drained")
    already = len(rt.reconciler.calls)
    gate = Gate()
    rt.reconciler.script[f"{namespace}/storm-000"] = [gate]
    assert rt.controllers.resync() == STORM
    assert gate.entered.wait(30)
    assert_edit_goes_first(rt, client, namespace, gate, already=already)


def test_a_primary_update_is_high_only_when_its_spec_or_its_deletion_changed() -> None:
    def darkroom(generation: int, **meta: Any) -> dict[str, Any]:
        return {"metadata": {"name": "d", "generation": generation, **meta}, "status": {"readyReplicas": generation}}

    assert primary_update_priority(darkroom(1), darkroom(2)) == HIGH
    assert primary_update_priority(darkroom(1), darkroom(1, deletionTimestamp="2026-01-01T00:00:00Z")) == HIGH
    assert primary_update_priority(darkroom(1), darkroom(1, labels={"a": "b"}, finalizers=["f"])) == LOW
    assert primary_update_priority(darkroom(1), {**darkroom(1), "status": {"readyReplicas": 9}}) == LOW


# -- shutdown --------------------------------------------------------------------------------


def test_stop_lets_the_reconcile_in_flight_finish_and_takes_no_new_work(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str
) -> None:
    rt = make_runtime(workers=1)
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> Result:
        entered.set()
        release.wait(30)
        finished.set()
        return Result()

    rt.reconciler.script[f"{namespace}/slow"] = [slow]
    create_darkroom(client, namespace, "slow")
    assert entered.wait(30)
    stopped: list[bool] = []
    stopper = threading.Thread(target=lambda: stopped.append(rt.controllers.stop(30)))
    stopper.start()
    wait_for(lambda: rt.controller.queue.shutting_down)
    rt.controller.enqueue([f"{namespace}/late"])
    release.set()
    stopper.join(30)
    assert stopped == [True]
    assert finished.is_set()
    assert rt.reconciler.count(f"{namespace}/late") == 0


def test_stop_reports_a_reconcile_that_outlives_the_timeout(
    make_runtime: Callable[..., Runtime], client: CachedClient, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    rt = make_runtime(workers=1)
    entered, release = threading.Event(), threading.Event()

    def stuck() -> Result:
        entered.set()
        release.wait(30)
        return Result()

    rt.reconciler.script[f"{namespace}/stuck"] = [stuck]
    create_darkroom(client, namespace, "stuck")
    assert entered.wait(30)
    try:
        assert rt.controllers.stop(0.1) is False
        assert any(r.getMessage().startswith("reconciles still running") for r in caplog.records)
    finally:
        release.set()


def test_two_reconcilers_must_agree_on_a_shared_informer(kube: ClusterProcess) -> None:
    connection = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ=os.environ)
    try:
        one, two = Scripted("ns"), Scripted("ns")
        two.name = "other"
        two.primary = SECRETS  # Scripted watches Secrets with a label selector; a primary informer has none
        cache = Cache(transport=connection.transport, settings=InformerSettings())
        with pytest.raises(ValueError, match="one informer per resource needs one selector"):
            Controllers(reconcilers=[one, two], cache=cache, settings=OperatorSettings(health_port=-1), metrics=Metrics())
    finally:
        connection.close()
