"""In-process reconciler harness for the integration tests: real cache, real client, direct ``reconcile(key)`` calls.

Used by ``test_darkrooms.py`` and ``test_tasks.py`` for deterministic tests (no runtime, no
threads of ours): :class:`Harness` wires a :class:`cluster.Cache` and :class:`cluster.CachedClient`
like the operator's entry point does (primary kinds in one namespace, children selected by the
managed-by label and indexed by owner UID), an :class:`EventRecorder`, a settable clock and both
reconcilers. ``admin`` is a second client on its own connection (field manager ``test-user``, no
cache: every read hits the server) that plays the user; ``writes`` lists every non-GET request
the operator side sent. :meth:`Harness.settle` waits until the operator's cache has seen
a write made by ``admin`` — the operator's reads are cached, so a test must not reconcile on a
cache that has not caught up yet.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from darkroom_operator import hosts
from darkroom_operator.darkrooms import DarkroomReconciler
from darkroom_operator.runtime.controllers import NAME_HOLDERS
from darkroom_operator.runtime.reconciling import Context
from darkroom_operator.runtime.recording import EventRecorder
from darkroom_operator.settings import OperatorSettings
from darkroom_operator.tasks import TaskReconciler

from cluster import (
    CONFIGMAPS,
    DARKROOMS,
    DEPLOYMENTS,
    EVENTS,
    INGRESSES,
    OWNER_UID,
    SERVICES,
    TASKS,
    Cache,
    CachedClient,
    ClientSettings,
    ConnectionSettings,
    InformerSettings,
    NotFound,
    Resource,
    by_owner_uid,
    connect,
    thaw,
)
from cluster.bodies import version_at_least
from cluster.connecting import Connection
from tests.support import wait_for

FAST = InformerSettings(page_size=100, watch_timeout_s=60, read_timeout_s=5.0, backoff_initial_s=0.05, backoff_max_s=0.5)
CHILD_KINDS = (CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES)


@dataclass
class Clock:
    """A settable UTC clock (None: the real time)."""

    fixed: datetime | None = None

    def __call__(self) -> datetime:
        return self.fixed or datetime.now(UTC)


@dataclass
class Harness:
    kubeconfig: Path
    namespace: str
    settings: OperatorSettings = field(default_factory=lambda: OperatorSettings(identity="harness"))
    clock: Clock = field(default_factory=Clock)
    names_of_others: bool = True  # the runtime's metadata-only informers of the child kinds (False: the server is asked)

    def __post_init__(self) -> None:
        self.connection: Connection = connect(ConnectionSettings(kubeconfig=self.kubeconfig), environ=os.environ)
        self.connection.api_client.user_agent = "darkroom-operator/harness"
        self.writes: list[tuple[str, str]] = []  # (method, path) of every non-GET request the operator side sends
        operator_transport = self.connection.transport
        send = operator_transport.request

        def recording(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            if method != "GET":
                self.writes.append((method, path))
            return send(method, path, *args, **kwargs)

        operator_transport.request = recording  # type: ignore[method-assign]
        self.user_connection: Connection = connect(ConnectionSettings(kubeconfig=self.kubeconfig), environ=os.environ)
        self.cache = Cache(transport=self.connection.transport, settings=FAST)
        self.cache.add(DARKROOMS, namespace=self.namespace, indexers={hosts.SUBDOMAIN_INDEX: hosts.subdomains})
        self.cache.add(TASKS, namespace=self.namespace)
        selector = f"app.kubernetes.io/managed-by={self.settings.managed_by}"
        others = f"app.kubernetes.io/managed-by!={self.settings.managed_by}"
        for kind in CHILD_KINDS:
            self.cache.add(kind, namespace=self.namespace, label_selector=selector, indexers={OWNER_UID: by_owner_uid})
            if self.names_of_others:
                self.cache.add(kind, namespace=self.namespace, label_selector=others, **NAME_HOLDERS)
        self.cache.start()
        assert self.cache.wait_for_sync(30), "the harness cache did not sync"
        self.client = CachedClient(
            transport=self.connection.transport, cache=self.cache, settings=ClientSettings(field_manager="darkroom-operator")
        )
        self.admin = CachedClient(
            transport=self.user_connection.transport,
            cache=Cache(transport=self.user_connection.transport, settings=FAST),
            settings=ClientSettings(field_manager="test-user"),
        )
        self.context = self.make_context(self.settings)
        self.darkrooms = DarkroomReconciler(self.context)
        self.tasks = TaskReconciler(self.context)

    def make_context(self, settings: OperatorSettings) -> Context:
        return Context(
            client=self.client,
            recorder=EventRecorder(client=self.client, settings=settings, now=self.clock),
            settings=settings,
            now=self.clock,
        )

    def close(self) -> None:
        self.cache.stop()
        self.connection.close()
        self.user_connection.close()

    # -- the user's side ---------------------------------------------------------------------

    def key(self, name: str) -> str:
        return f"{self.namespace}/{name}"

    def get(self, resource: Resource, name: str) -> dict[str, Any]:
        return dict(thaw(self.admin.get(resource, name, namespace=self.namespace)))

    def exists(self, resource: Resource, name: str) -> bool:
        try:
            self.admin.get(resource, name, namespace=self.namespace)
        except NotFound:
            return False
        return True

    def events(self, **labels: str) -> list[Mapping[str, Any]]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
        return [thaw(e) for e in self.admin.list(EVENTS, namespace=self.namespace, label_selector=selector)]

    def settle(self, resource: Resource, written: Mapping[str, Any] | None = None, *, name: str | None = None, gone: bool = False) -> None:
        """Wait until the harness cache holds ``written`` (a write response) at least, or no longer holds ``name``.
        An object of a child kind without our managed-by label is waited for in the metadata-only informer."""
        informer = self.cache.informer(resource)
        assert informer is not None
        if written is not None and informer.label_selector and not self._ours(written):
            informer = self.cache.metadata_informer(resource)
            if informer is None:
                return  # the server is asked about names: nothing to wait for
        if gone:
            wait_for(lambda: informer.store.get(self.key(name or "")) is None, timeout_s=10, message=f"cache to drop {resource} {name}")
            return
        assert written is not None
        key = self.key(written["metadata"]["name"])
        version = str(written["metadata"]["resourceVersion"])

        def caught_up() -> bool:
            cached = informer.store.get(key)
            return cached is not None and version_at_least(str(cached["metadata"]["resourceVersion"]), version)

        wait_for(caught_up, timeout_s=10, message=f"cache to reach {resource} {key}@{version}")

    def settle_all(self) -> None:
        """Wait until every informer of the harness has caught up with the server's current state of the namespace."""
        for resource in (DARKROOMS, TASKS, *CHILD_KINDS):
            for obj in self.admin.list(resource, namespace=self.namespace):
                self.settle(resource, obj)

    def _ours(self, obj: Mapping[str, Any]) -> bool:
        return (obj["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") == self.settings.managed_by


@dataclass
class User:
    """The user's side for tests that run the real operator: a client with no informers (every read hits the server)."""

    kubeconfig: Path
    namespace: str

    def __post_init__(self) -> None:
        self.connection: Connection = connect(ConnectionSettings(kubeconfig=self.kubeconfig), environ=os.environ)
        self.client = CachedClient(
            transport=self.connection.transport,
            cache=Cache(transport=self.connection.transport, settings=FAST),
            settings=ClientSettings(field_manager="test-user"),
        )

    def close(self) -> None:
        self.connection.close()

    def get(self, resource: Resource, name: str) -> dict[str, Any]:
        return dict(thaw(self.client.get(resource, name, namespace=self.namespace)))

    def find(self, resource: Resource, name: str) -> dict[str, Any] | None:
        try:
            return self.get(resource, name)
        except NotFound:
            return None

    def list(self, resource: Resource, **labels: str) -> list[dict[str, Any]]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
        return [thaw(o) for o in self.client.list(resource, namespace=self.namespace, label_selector=selector)]


def reconciles(op: Any, controller: str) -> float:
    """Reconciles the operator process ``op`` has finished for ``controller``, whatever their outcome (from /metrics)."""
    from prometheus_client.parser import text_string_to_metric_families

    code, text = op.get("/metrics")
    assert code == 200, f"/metrics answered {code}"
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "darkroom_operator_reconcile_total" and sample.labels.get("controller") == controller
    )
