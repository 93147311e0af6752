"""The built-in controllers of a cluster, in miniature: garbage collector, namespace lifecycle,
the service account controller (a ``default`` ServiceAccount in every namespace), CRD
establishing/cleanup (written as kube-apiserver, where those controllers run), and simulated
Deployment rollouts; a Deployment's ReplicaSets and their pods live in ``replicasets.py``, simulated
StatefulSets, their pods and PersistentVolumeClaims in ``statefulsets.py``, the simulated kubelet that
turns pods Running and Ready in ``pods.py``, a Service's EndpointSlices in ``endpointslices.py``; all are scheduled
from here.

kube-controller-manager and apiextensions-apiserver do this work in a real cluster; devcluster
runs it on its event loop. Each controller reacts to committed changes (a store listener that
only *schedules* work — writing from inside a commit would re-enter the store) and writes
through the same :class:`~devcluster.writing.Writer` as clients, so its writes show up in watches
with resourceVersions like any other. Deployments "become ready" ``deployment_ready_delay_s``
after each change, as if their pods started; the annotation :data:`UNREADY_ANNOTATION` set to
``"true"`` keeps one unready (for tests of not-ready paths).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from devcluster.catalog import Catalog
from devcluster.endpointslices import EndpointSlices
from devcluster.errors import StatusError
from devcluster.pods import UNREADY_ANNOTATION, Kubelet
from devcluster.replicasets import REVISION, ReplicaSets
from devcluster.resources import ResourceType
from devcluster.statefulsets import StatefulSets
from devcluster.store import Change, Store
from devcluster.writing import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, WriteOptions, Writer, copy

log = logging.getLogger("devcluster.controllers")

CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_CONTROLLER = WriteOptions(manager="kube-controller-manager", field_validation="Ignore")
_CONTROLLER_STATUS = WriteOptions(manager="kube-controller-manager", field_validation="Ignore", subresource="status")
# The CRD controllers (naming, establishing, finalizing) run inside kube-apiserver, and write as it.
_APISERVER = WriteOptions(manager="kube-apiserver", field_validation="Ignore")
_APISERVER_STATUS = WriteOptions(manager="kube-apiserver", field_validation="Ignore", subresource="status")
_CRDS = "apiextensions.k8s.io/customresourcedefinitions"
_NAMESPACES = "/namespaces"
_DEPLOYMENTS = "apps/deployments"
_SERVICE_ACCOUNTS = "/serviceaccounts"


def _condition(
    ctype: str, status: str, reason: str, message: str, now: str, previous: list[dict[str, Any]], *, update_time: bool = False
) -> dict[str, Any]:
    old = next((c for c in previous if c.get("type") == ctype), None)
    transition = old["lastTransitionTime"] if old and old.get("status") == status and old.get("lastTransitionTime") else now
    condition = {"type": ctype, "status": status}
    if update_time:
        keep = old and old.get("status") == status and old.get("reason") == reason and old.get("lastUpdateTime")
        condition["lastUpdateTime"] = old["lastUpdateTime"] if keep else now  # type: ignore[index]
    condition.update({"lastTransitionTime": transition, "reason": reason, "message": message})
    return condition


class Controllers:
    """Schedules and runs the controllers; :meth:`start` after the store is loaded."""

    def __init__(self, *, store: Store, catalog: Catalog, writer: Writer, clock: Callable[[], str], ready_delay_s: float) -> None:
        self.store, self.catalog, self.writer, self.clock = store, catalog, writer, clock
        self.ready_delay_s = ready_delay_s
        self._scheduled: set[tuple[Any, ...]] = set()
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.statefulsets = StatefulSets(
            store=store, catalog=catalog, writer=writer, clock=clock, ready_delay_s=ready_delay_s, schedule=self._schedule, run=self._run
        )
        self.replicasets = ReplicaSets(store=store, catalog=catalog, writer=writer, schedule=self._schedule)
        self.kubelet = Kubelet(
            store=store, catalog=catalog, writer=writer, clock=clock, ready_delay_s=ready_delay_s, schedule=self._schedule, run=self._run
        )
        self.endpointslices = EndpointSlices(store=store, catalog=catalog, writer=writer, schedule=self._schedule)
        # where each kind of scheduled work is done: "<name>" runs _sync_<name> here, or sync_<name> of one of these
        self._workers: tuple[object, ...] = (self.statefulsets, self.replicasets, self.kubelet, self.endpointslices)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = self.statefulsets.loop = self.kubelet.loop = loop
        for name in SYSTEM_NAMESPACES:
            if self.store.get(_NAMESPACES, "", name) is None:
                self.writer.create(self.catalog.builtin("", "namespaces"), "", {"metadata": {"name": name}}, _CONTROLLER)
        for crd in self.store.items(_CRDS):
            if not crd["metadata"].get("deletionTimestamp") or crd["metadata"].get("finalizers"):
                self.catalog.install(crd)
        self.store.add_listener(self._on_change)
        # Level-triggered start: look at everything once, as controllers do after a restart.
        for resource in self.store.resources():
            for obj in self.store.items(resource):
                meta = obj["metadata"]
                self._on_change(Change(int(meta["resourceVersion"]), "ADDED", resource, meta.get("namespace", ""), meta["name"], obj, None))

    def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self.statefulsets.stop()
        self.kubelet.stop()

    # -- scheduling --------------------------------------------------------------------------

    def _schedule(self, *work: Any) -> None:
        if work in self._scheduled or self._loop is None:
            return
        self._scheduled.add(work)
        self._loop.call_soon(self._run, work)

    def _run(self, work: tuple[Any, ...]) -> None:
        self._scheduled.discard(work)
        handler = getattr(self, f"_sync_{work[0]}", None) or next(
            getattr(w, f"sync_{work[0]}") for w in self._workers if hasattr(w, f"sync_{work[0]}")
        )
        try:
            handler(*work[1:])
        except StatusError as e:
            # Someone else changed the object meanwhile (409) or it is gone (404): the change that
            # caused that will schedule us again.
            if e.code not in (404, 409):
                log.warning("controller %s failed: %s", work[0], e.message)
        except Exception:  # a controller bug must not take the API server down
            log.exception("controller %s crashed", work[0])

    def _on_change(self, change: Change) -> None:
        self._schedule_kind_controllers(change)
        self._schedule_garbage_collector(change)

    def _schedule_kind_controllers(self, change: Change) -> None:
        """The per-kind controllers a change concerns: CRDs, namespaces, service accounts, Deployments, StatefulSets."""
        obj, meta = change.obj, change.obj["metadata"]
        if change.resource == _CRDS:
            if change.type == "DELETED":
                self.catalog.remove(change.name)
            else:
                self.catalog.install(obj)
                self._schedule("crd", change.name)
        elif change.resource == _NAMESPACES and change.type != "DELETED" and meta.get("deletionTimestamp"):
            self._schedule("namespace", change.name)
        elif change.resource == _NAMESPACES and change.type == "ADDED":
            self._schedule("service_account", change.name)
        if change.resource == _SERVICE_ACCOUNTS and change.type == "DELETED" and change.name == "default":
            self._schedule("service_account", change.namespace)
        elif change.resource == _DEPLOYMENTS and change.type != "DELETED":
            self._schedule("deployment", change.namespace, change.name)
        self.statefulsets.on_change(change)
        self.replicasets.on_change(change)
        self.kubelet.on_change(change)
        self.endpointslices.on_change(change)
        if change.namespace and change.type == "DELETED":
            ns = self.store.get(_NAMESPACES, "", change.namespace)
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                self._schedule("namespace", change.namespace)

    def _schedule_garbage_collector(self, change: Change) -> None:
        """The garbage collector's work a change makes: dependents of a deleted owner, owners waiting on it, new references."""
        meta = change.obj["metadata"]
        uid = meta.get("uid", "")
        if change.type == "DELETED":
            for ref in self.store.dependents(uid):
                self._schedule("dependent", *ref)
            for owner in meta.get("ownerReferences") or ():
                self._schedule("owner", owner.get("uid", ""))
            if change.resource in self._crd_storage_keys():
                crd = self._crd_for(change.resource)
                if crd is not None:
                    self._schedule("crd", crd)
            return
        finalizers = meta.get("finalizers") or ()
        if meta.get("deletionTimestamp") and (FOREGROUND_FINALIZER in finalizers or ORPHAN_FINALIZER in finalizers):
            self._schedule("owner", uid)
        if meta.get("ownerReferences") and (
            change.prev is None or change.prev["metadata"].get("ownerReferences") != meta.get("ownerReferences")
        ):
            self._schedule("dependent", change.resource, change.namespace, change.name)

    def _crd_storage_keys(self) -> set[str]:
        return {f"{r.group}/{r.plural}" for r in self.catalog.all() if r.is_custom}

    def _crd_for(self, storage_key: str) -> str | None:
        for resource in self.catalog.all():
            if resource.is_custom and resource.storage_key == storage_key:
                return resource.crd_name
        return None

    def _resource(self, storage_key: str) -> ResourceType | None:
        for resource in self.catalog.all():
            if resource.storage_key == storage_key:
                return resource
        return None

    # -- garbage collector -------------------------------------------------------------------

    def _sync_dependent(self, storage_key: str, namespace: str, name: str) -> None:
        """Delete a dependent whose owners are all gone; drop references to gone owners otherwise."""
        obj = self.store.get(storage_key, namespace, name)
        resource = self._resource(storage_key)
        if obj is None or resource is None:
            return
        refs = obj["metadata"].get("ownerReferences") or []
        solid, dangling, waiting = [], [], []
        for ref in refs:
            found = self.store.by_uid(ref.get("uid", ""))
            owner = self.store.get(*found) if found else None
            if owner is None:
                dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and FOREGROUND_FINALIZER in (owner["metadata"].get("finalizers") or ()):
                waiting.append(ref)
            else:
                solid.append(ref)
        if not refs or (not dangling and not waiting):
            return
        if solid:
            if dangling:
                new = copy(obj)
                new["metadata"]["ownerReferences"] = [r for r in refs if r not in dangling]
                self.writer._update(resource, obj, new, _CONTROLLER)
            return
        # As attemptToDeleteItem: an object already being deleted is left alone unless it is deleting
        # its own dependents; the policy follows its finalizers, Foreground when a waiting owner's
        # dependent has dependents itself.
        own_finalizers = obj["metadata"].get("finalizers") or ()
        if obj["metadata"].get("deletionTimestamp") and FOREGROUND_FINALIZER not in own_finalizers:
            return
        if FOREGROUND_FINALIZER in own_finalizers or (waiting and self.store.dependents(obj["metadata"].get("uid", ""))):
            policy = "Foreground"
        else:
            policy = "Orphan" if ORPHAN_FINALIZER in own_finalizers else "Background"
        self.writer.delete(resource, namespace, name, {"propagationPolicy": policy}, _CONTROLLER)

    def _sync_owner(self, uid: str) -> None:
        """Progress an owner deleted with Foreground (dependents first) or Orphan (release dependents)."""
        found = self.store.by_uid(uid)
        owner = self.store.get(*found) if found else None
        if owner is None or not found or not owner["metadata"].get("deletionTimestamp"):
            return
        resource = self._resource(found[0])
        if resource is None:
            return
        finalizers = list(owner["metadata"].get("finalizers") or [])
        dependents = self.store.dependents(uid)
        if ORPHAN_FINALIZER in finalizers:
            for ref in dependents:
                dependent = self.store.get(*ref)
                dep_resource = self._resource(ref[0])
                if dependent is None or dep_resource is None:
                    continue
                new = copy(dependent)
                new["metadata"]["ownerReferences"] = [
                    r for r in new["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
                ] or None
                if new["metadata"]["ownerReferences"] is None:
                    del new["metadata"]["ownerReferences"]
                self.writer._update(dep_resource, dependent, new, _CONTROLLER)
            finalizers.remove(ORPHAN_FINALIZER)
        elif FOREGROUND_FINALIZER in finalizers:
            # Only dependents whose reference sets blockOwnerDeletion hold the owner (the GC's
            # blockingDependents); all are deleted, in the foreground only if they own objects too.
            blocking = False
            for ref in dependents:
                dependent = self.store.get(*ref)
                dep_resource = self._resource(ref[0])
                if dependent is None or dep_resource is None:
                    continue
                owner_refs = dependent["metadata"].get("ownerReferences") or []
                if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in owner_refs):
                    blocking = True
                if not dependent["metadata"].get("deletionTimestamp"):
                    policy = "Foreground" if self.store.dependents(dependent["metadata"].get("uid", "")) else "Background"
                    self.writer.delete(dep_resource, ref[1], ref[2], {"propagationPolicy": policy}, _CONTROLLER)
            if blocking:
                return
            finalizers.remove(FOREGROUND_FINALIZER)
        else:
            return
        new = copy(owner)
        new["metadata"]["finalizers"] = finalizers
        self.writer._update(resource, owner, new, _CONTROLLER)

    # -- service accounts --------------------------------------------------------------------

    def _sync_service_account(self, namespace: str) -> None:
        """The service account controller: every active namespace has a ``default`` ServiceAccount."""
        ns = self.store.get(_NAMESPACES, "", namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp") or self.store.get(_SERVICE_ACCOUNTS, namespace, "default"):
            return
        accounts = self.catalog.builtin("", "serviceaccounts")
        self.writer.create(accounts, namespace, {"metadata": {"name": "default"}}, _CONTROLLER)

    # -- namespaces --------------------------------------------------------------------------

    def _sync_namespace(self, name: str) -> None:
        ns = self.store.get(_NAMESPACES, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining: dict[str, int] = {}  # "<plural>.<group>" -> objects left after this pass
        held_by: dict[str, int] = {}  # finalizer -> objects carrying it
        for resource in self.catalog.all():
            if not resource.namespaced:
                continue
            if resource.is_custom and resource.version != self.catalog.storage_version_of(resource):
                continue
            for obj in self.store.items(resource.storage_key, name):
                if not obj["metadata"].get("deletionTimestamp"):
                    self.writer.delete(resource, name, obj["metadata"]["name"], {"propagationPolicy": "Background"}, _CONTROLLER)
            for obj in self.store.items(resource.storage_key, name):
                key = f"{resource.plural}.{resource.group}"
                remaining[key] = remaining.get(key, 0) + 1
                for finalizer in obj["metadata"].get("finalizers") or ():
                    held_by[finalizer] = held_by.get(finalizer, 0) + 1
        ns = self._write_namespace_conditions(ns, remaining, held_by)
        if remaining:
            return
        spec_finalizers = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != "kubernetes"]
        new = copy(ns)
        new.setdefault("spec", {})["finalizers"] = spec_finalizers
        self.writer._update(self.catalog.builtin("", "namespaces"), ns, new, _CONTROLLER)

    def _write_namespace_conditions(self, ns: dict[str, Any], remaining: dict[str, int], held_by: dict[str, int]) -> dict[str, Any]:
        """The deletion conditions kube's namespace controller keeps on a Terminating namespace."""
        now = self.clock()
        previous = (ns.get("status") or {}).get("conditions") or []
        content = ", ".join(sorted(f"{key} has {n} resource instances" for key, n in remaining.items()))
        finalizers = ", ".join(sorted(f"{f} in {n} resource instances" for f, n in held_by.items()))
        content_remaining = (
            ("True", "SomeResourcesRemain", f"Some resources are remaining: {content}")
            if remaining
            else ("False", "ContentRemoved", "All content successfully removed")
        )
        finalizers_remaining = (
            ("True", "SomeFinalizersRemain", f"Some content in the namespace has finalizers remaining: {finalizers}")
            if held_by
            else ("False", "ContentHasNoFinalizers", "All content-preserving finalizers finished")
        )
        wanted = [
            ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
            ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            ),
            ("NamespaceContentRemaining", *content_remaining),
            ("NamespaceFinalizersRemaining", *finalizers_remaining),
        ]
        conditions = [_condition(ctype, status, reason, message, now, previous) for ctype, status, reason, message in wanted]
        others = [c for c in previous if c.get("type") not in {w[0] for w in wanted}]
        status = {**(ns.get("status") or {}), "conditions": others + conditions}
        if status == ns.get("status"):
            return ns
        namespaces = self.catalog.builtin("", "namespaces")
        return self.writer.update(namespaces, "", ns["metadata"]["name"], {**copy(ns), "status": status}, _CONTROLLER_STATUS).obj

    # -- CRDs --------------------------------------------------------------------------------

    def _sync_crd(self, name: str) -> None:
        crd = self.store.get(_CRDS, "", name)
        if crd is None:
            return
        crd_resource = self.catalog.builtin("apiextensions.k8s.io", "customresourcedefinitions")
        now = self.clock()
        previous = (crd.get("status") or {}).get("conditions") or []
        spec = crd["spec"]
        if crd["metadata"].get("deletionTimestamp"):
            resources = self.catalog.crd_resources(name)
            remaining = False
            if resources:
                storage = next((r for r in resources if r.version == self.catalog.storage_version_of(r)), resources[0])
                for obj in self.store.items(storage.storage_key):
                    remaining = True
                    if not obj["metadata"].get("deletionTimestamp"):
                        self.writer.delete(storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"], {}, _CONTROLLER)
            if remaining:
                terminating = _condition(
                    "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now, previous
                )
                if terminating not in previous:
                    conditions = [c for c in previous if c.get("type") != "Terminating"] + [terminating]
                    status = {**(crd.get("status") or {}), "conditions": conditions}
                    self.writer.update(crd_resource, "", name, {**copy(crd), "status": status}, _APISERVER_STATUS)
                return
            new = copy(crd)
            new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or [] if f != CRD_FINALIZER]
            self.writer._update(crd_resource, crd, new, _APISERVER)
            return
        # storedVersions as the CRD's writes left it: its updates add a new storage version (preparing.py), and only a
        # client that migrated the objects takes an old one out (kube's controllers never touch it)
        stored = list((crd.get("status") or {}).get("storedVersions") or [])
        status = {
            "conditions": [
                _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now, previous),
                _condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now, previous),
            ],
            "acceptedNames": {k: v for k, v in spec["names"].items()},
            "storedVersions": stored,
        }
        if status != crd.get("status"):
            self.writer.update(crd_resource, "", name, {**copy(crd), "status": status}, _APISERVER_STATUS)

    # -- deployments -------------------------------------------------------------------------

    def _sync_deployment(self, namespace: str, name: str, ready_generation: int | None = None) -> None:
        dep = self.store.get(_DEPLOYMENTS, namespace, name)
        if dep is None or dep["metadata"].get("deletionTimestamp"):
            timer = self._timers.pop((namespace, name), None)
            if timer:
                timer.cancel()
            return
        replica_set, revision = self.replicasets.sync_for_deployment(dep)
        generation = int(dep["metadata"].get("generation") or 1)
        replicas = int((dep.get("spec") or {}).get("replicas", 1))
        status = dep.get("status") or {}
        unready = (dep["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION) == "true"
        rolled_out = (
            status.get("observedGeneration") == generation
            and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas
        )
        if ready_generation is not None and ready_generation == generation:
            rolled_out = True
        if not rolled_out:
            ready = 0 if unready else min(int(status.get("readyReplicas") or 0), replicas)
            self._write_deployment_status(dep, (replica_set, revision), generation, replicas, updated=0, ready=ready, done=False)
            self._arm_timer(namespace, name, generation)
            return
        ready = 0 if unready else replicas
        self._write_deployment_status(dep, (replica_set, revision), generation, replicas, updated=replicas, ready=ready, done=not unready)

    def _arm_timer(self, namespace: str, name: str, generation: int) -> None:
        if self._loop is None:
            return
        old = self._timers.pop((namespace, name), None)
        if old:
            old.cancel()
        self._timers[(namespace, name)] = self._loop.call_later(self.ready_delay_s, self._timer_fired, namespace, name, generation)

    def _timer_fired(self, namespace: str, name: str, generation: int) -> None:
        self._timers.pop((namespace, name), None)
        self._run(("deployment", namespace, name, generation))

    def _write_deployment_status(
        self, dep: dict[str, Any], current: tuple[str, str], generation: int, replicas: int, *, updated: int, ready: int, done: bool
    ) -> None:
        replica_set, revision = current
        now = self.clock()
        previous = (dep.get("status") or {}).get("conditions") or []
        available = ready >= replicas
        conditions = [
            _condition(
                "Available",
                "True" if available else "False",
                "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                "Deployment has minimum availability." if available else "Deployment does not have minimum availability.",
                now,
                previous,
                update_time=True,
            ),
            _condition(
                "Progressing",
                "True",
                "NewReplicaSetAvailable" if done else "ReplicaSetUpdated",
                f'ReplicaSet "{replica_set}" has successfully progressed.' if done else f'ReplicaSet "{replica_set}" is progressing.',
                now,
                previous,
                update_time=True,
            ),
        ]
        status: dict[str, Any] = {"observedGeneration": generation, "conditions": conditions}
        if replicas:  # DeploymentStatus counts are omitempty: zeros are not serialised
            status["replicas"] = replicas
            if updated:
                status["updatedReplicas"] = updated
            if ready:
                status.update({"readyReplicas": ready, "availableReplicas": ready})
            if replicas - ready:
                status["unavailableReplicas"] = replicas - ready
        annotations = dep["metadata"].get("annotations") or {}
        if status != dep.get("status") or annotations.get(REVISION) != revision:
            resource = self.catalog.builtin("apps", "deployments")
            body = {**copy(dep), "status": status}
            body["metadata"]["annotations"] = {**annotations, REVISION: revision}
            self.writer.update(resource, dep["metadata"]["namespace"], dep["metadata"]["name"], body, _CONTROLLER_STATUS)
