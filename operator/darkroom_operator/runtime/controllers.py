"""The runtime that drives reconcilers: informers → event handlers → workqueues → worker threads.

Built by :mod:`darkroom_operator.__main__` from the reconcilers, the :class:`cluster.Cache` (not
started yet) and the settings; started when this replica leads (:mod:`darkroom_operator.runtime.leading`)
or at once without leader election. :class:`Controllers` declares the informers every reconciler
needs — its primary kind in ``settings.namespace``; each owned kind there, label-selected on
``app.kubernetes.io/managed-by=<settings.managed_by>`` and indexed by owner UID, and beside it the metadata of that
kind's other objects (``managed-by!=<settings.managed_by>``: the names someone else holds, which
:mod:`darkroom_operator.runtime.owning` must never take); each extra
:class:`~darkroom_operator.runtime.reconciling.Watch` — one informer per resource, shared when two
reconcilers ask for the same one (they must agree on its label selector).

Informers run on every replica (a standby keeps a warm cache, so a takeover starts at once);
handlers are attached only by :meth:`Controllers.start`: attaching replays the cache as adds, which
is the initial full reconcile. Events map to primary keys ``"<namespace>/<name>"``: a primary's
own key; for an owned object the name in its controller ownerReference of the primary's kind; for
a watched object whatever ``Watch.to_keys`` answers. An update that only reports the reconcilers' own write (a
status write's, an apply's event: the resourceVersion that write returned) enqueues nothing. Every
``settings.resync_s`` all cached primaries are enqueued again.

Workers: each controller has its own :class:`~darkroom_operator.runtime.workqueues.WorkQueue` and
``settings.workers`` threads (like controller-runtime's MaxConcurrentReconciles per controller), so
a slow kind never starves another. Outcomes: success → ``forget`` (and ``add_after`` for
``Result.requeue_after_s``); an exception → ``add_rate_limited`` and an error log with the error;
:class:`cluster.Conflict` (a stale read, normal under concurrency) → rate-limited retry logged at
debug; :class:`cluster.Unavailable` (the server away or overloaded) → the key is re-added with no
per-key failure and every worker pauses on one shared :class:`~darkroom_operator.runtime.ratelimiting.ConnectionBackoff`
until a request gets through again; :class:`cluster.NotFound` while the primary is no longer cached → the object is gone,
nothing to do. Shutdown stops taking work, lets in-flight reconciles finish for up to a timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from cluster import OWNER_UID, Cache, ClusterError, Conflict, Informer, NotFound, Resource, Unavailable, by_owner_uid
from cluster.indexers import IndexFunction
from darkroom_operator.runtime.metrics import Metrics
from darkroom_operator.runtime.owning import controller_uid
from darkroom_operator.runtime.ratelimiting import ConnectionBackoff
from darkroom_operator.runtime.reconciling import Reconciler, Result
from darkroom_operator.runtime.workqueues import HIGH, LOW, WorkQueue
from darkroom_operator.settings import OperatorSettings

log = logging.getLogger(__name__)

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


def primary_update_priority(old: Mapping[str, Any], new: Mapping[str, Any]) -> int:
    """HIGH when a primary's update changed its spec (``metadata.generation``) or its deletion; LOW otherwise."""
    before, after = old["metadata"], new["metadata"]
    changed = before.get("generation") != after.get("generation") or before.get("deletionTimestamp") != after.get("deletionTimestamp")
    return HIGH if changed else LOW


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def owner_key(obj: Mapping[str, Any], primary: Resource) -> str | None:
    """The primary key of ``obj``'s controller ownerReference of the primary's kind (None: not ours)."""
    meta = obj["metadata"]
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == primary.kind and _group(str(ref.get("apiVersion", ""))) == primary.group:
            namespace = meta.get("namespace")
            return f"{namespace}/{ref['name']}" if namespace else str(ref["name"])
    return None


# What the reconciler keeps of an object someone else holds a child's name with: its name, UID (the precondition of a
# delete, when it turns out to be our child without its label) and resourceVersion (a relist compares it), and the UID
# of its controller, as a controller reference of that UID alone. Not its labels or annotations (kubectl's
# last-applied-configuration is a copy of the whole object): every other object of the owned kinds in the watched
# namespaces is kept, so each byte counts (bench/foreign.py).
_HOLDER_FIELDS = ("name", "namespace", "uid", "resourceVersion")


def name_holder(obj: dict[str, Any]) -> dict[str, Any]:
    """The transform of the metadata-only informers: who holds a name, and who controls them; nothing else."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in _HOLDER_FIELDS if k in meta}
    controller = controller_uid(obj)
    if controller:
        kept["ownerReferences"] = [{"uid": controller, "controller": True}]
    return {"metadata": kept}


#: How the metadata-only informers are declared (:func:`declare_informers`; the tests' harness wires the same): each
#: object as :func:`name_holder`, kept as its JSON text (a store of many small objects read one at a time).
NAME_HOLDERS: dict[str, Any] = {"metadata_only": True, "transform": name_holder, "packed": True}


@dataclass
class _InformerSpec:
    namespace: str | None
    label_selector: str | None
    indexers: dict[str, IndexFunction] = field(default_factory=dict)
    wanted_by: list[str] = field(default_factory=list)


def _declare(specs: dict[Resource, _InformerSpec], resource: Resource, spec: _InformerSpec) -> None:
    existing = specs.get(resource)
    if existing is None:
        specs[resource] = spec
        return
    if existing.label_selector != spec.label_selector:
        raise ValueError(
            f"{resource} is wanted with label selector {spec.label_selector!r} by {spec.wanted_by} "
            f"and {existing.label_selector!r} by {existing.wanted_by}: one informer per resource needs one selector"
        )
    existing.indexers.update(spec.indexers)
    existing.wanted_by.extend(spec.wanted_by)


def declare_informers(cache: Cache, reconcilers: Sequence[Reconciler], settings: OperatorSettings) -> dict[Resource, Informer]:
    """Add the informers the reconcilers need to ``cache`` (reusing compatible ones already there)."""
    specs: dict[Resource, _InformerSpec] = {}
    owned_selector = f"{MANAGED_BY_LABEL}={settings.managed_by}"
    for r in reconcilers:
        _declare(specs, r.primary, _InformerSpec(settings.namespace, None, wanted_by=[f"{r.name} (primary)"]))
        for resource in r.owned:
            _declare(specs, resource, _InformerSpec(settings.namespace, owned_selector, {OWNER_UID: by_owner_uid}, [f"{r.name} (owned)"]))
        for watch in r.watches:
            indexers = cast(dict[str, IndexFunction], dict(watch.indexers))
            _declare(specs, watch.resource, _InformerSpec(settings.namespace, watch.label_selector, indexers, [f"{r.name} (watch)"]))
    others_selector = f"{MANAGED_BY_LABEL}!={settings.managed_by}"
    for resource in dict.fromkeys(resource for r in reconcilers for resource in r.owned):
        held = cache.metadata_informer(resource)
        if held is None:
            cache.add(resource, namespace=settings.namespace, label_selector=others_selector, **NAME_HOLDERS)
        elif (held.namespace, held.label_selector) != (settings.namespace, others_selector):
            raise ValueError(f"the cache already watches the metadata of {resource} differently from what the reconcilers need")
    informers: dict[Resource, Informer] = {}
    for resource, spec in specs.items():
        informer = cache.informer(resource)
        if informer is None:
            informer = cache.add(resource, namespace=spec.namespace, label_selector=spec.label_selector, indexers=spec.indexers)
        elif (informer.namespace, informer.label_selector) != (spec.namespace, spec.label_selector):
            raise ValueError(f"the cache already watches {resource} differently from what {spec.wanted_by} need")
        else:
            for index in spec.indexers:
                informer.store.index_values(index)  # KeyError if the existing informer lacks the index
        informers[resource] = informer
    return informers


class Controller:
    """One reconciler with its workqueue and worker threads."""

    def __init__(
        self,
        *,
        reconciler: Reconciler,
        primary_informer: Informer,
        settings: OperatorSettings,
        metrics: Metrics,
        backoff: ConnectionBackoff | None = None,
    ) -> None:
        self.reconciler = reconciler
        self.backoff = backoff or ConnectionBackoff()
        self.name = reconciler.name
        self.primary_informer = primary_informer
        self.settings = settings
        self.metrics = metrics
        self.queue = WorkQueue(name=reconciler.name)
        self._stopping = threading.Event()
        self._workers: list[threading.Thread] = []
        metrics.watch_queue(self.queue)
        metrics.declare_controller(self.name)

    def enqueue(self, keys: Iterable[str | None], priority: int = HIGH) -> None:
        for key in keys:
            if key:
                self.queue.add(key, priority)

    def start(self) -> None:
        for i in range(self.settings.workers):
            worker = threading.Thread(target=self._work, name=f"{self.name}-worker-{i}", daemon=True)
            worker.start()
            self._workers.append(worker)

    def request_stop(self) -> None:
        """Stop taking work (returns at once): queued keys are dropped, in-flight reconciles go on."""
        self._stopping.set()
        self.queue.shut_down()

    def join(self, deadline: float) -> bool:
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        return not any(worker.is_alive() for worker in self._workers)

    def _work(self) -> None:
        while True:
            key, priority, shutdown = self.queue.get_with_priority()
            if shutdown or key is None:
                return
            try:
                pause_s = self.backoff.pause_s()
                if pause_s:
                    self._stopping.wait(pause_s)  # the server is away: wait with it, not per key
                if not self._stopping.is_set():
                    self.process(key, priority)
            finally:
                self.queue.done(key)

    def process(self, key: str, priority: int = HIGH) -> str:
        """Reconcile ``key`` once and schedule what follows (at ``priority``, the one it was queued at); the outcome
        (a ``result`` label value)."""
        fields = {"controller": self.name, "key": key}
        started = time.monotonic()
        outcome = "success"
        try:
            result = self.reconciler.reconcile(key) or Result()
        except Unavailable as e:
            outcome = "unavailable"
            pause_s = self.backoff.failed()
            self.queue.add(key, priority)  # no per-key failure: the server, not the object, is the problem
            log.warning("server unavailable, pausing", extra={**fields, "error": e.message, "pause_s": round(pause_s, 3)})
        except Conflict as e:
            outcome = "conflict"
            delay_s = self.queue.add_rate_limited(key, priority)
            log.debug("conflict, retrying", extra={**fields, "error": e.message, "retry_in_s": round(delay_s, 3)})
        except NotFound as e:
            if self.primary_informer.store.get(key) is None:
                outcome = "gone"
                self.queue.forget(key)
                log.debug("object is gone", extra={**fields, "error": e.message})
            else:
                outcome = "error"
                self._retry(key, priority, e, fields)
        except Exception as e:
            outcome = "error"
            self._retry(key, priority, e, fields)
        else:
            self.backoff.succeeded()
            self.queue.forget(key)
            if result.requeue_after_s is not None:
                outcome = "requeue_after"
                self.queue.add_after(key, result.requeue_after_s, priority)
            log.debug("reconciled", extra={**fields, "requeue_after_s": result.requeue_after_s})
        finally:
            elapsed_s = time.monotonic() - started
            self.metrics.reconcile_duration.labels(self.name).observe(elapsed_s)
            self.metrics.reconcile_total.labels(self.name, outcome).inc()
        return outcome

    def _retry(self, key: str, priority: int, error: Exception, fields: dict[str, Any]) -> None:
        delay_s = self.queue.add_rate_limited(key, priority)
        details: dict[str, Any] = {
            **fields,
            "error": error.message if isinstance(error, ClusterError) else str(error),
            "error_type": type(error).__name__,
            "requeues": self.queue.num_requeues(key),
            "retry_in_s": round(delay_s, 3),
        }
        if isinstance(error, ClusterError):
            details.update(status=error.status, reason=error.reason)
            # API errors are expected (the server said no, or is away): no traceback, warn when it is transient.
            log.log(logging.WARNING if error.retryable else logging.ERROR, "reconcile failed", extra=details)
        else:
            log.error("reconcile failed", extra=details, exc_info=error)


class Controllers:
    """All controllers of the process, their informers, handlers and the resync timer."""

    def __init__(
        self,
        *,
        reconcilers: Sequence[Reconciler],
        cache: Cache,
        settings: OperatorSettings,
        metrics: Metrics,
        echo: Callable[[Resource, Mapping[str, Any]], bool] = lambda resource, obj: False,
    ) -> None:
        """``echo``: whether an event's object is exactly the answer to one of the reconcilers' own writes
        (:meth:`cluster.CachedClient.is_echo` of their client): such an update of a primary or a child enqueues nothing,
        since the reconcile that wrote it acted on what it wrote."""
        names = [r.name for r in reconcilers]
        if len(set(names)) != len(names):
            raise ValueError(f"reconciler names must be unique: {names}")
        self.echo = echo
        self.cache = cache
        self.settings = settings
        self.informers = declare_informers(cache, reconcilers, settings)
        self.backoff = ConnectionBackoff()  # one API server, one backoff for every controller
        self.controllers = [
            Controller(reconciler=r, primary_informer=self.informers[r.primary], settings=settings, metrics=metrics, backoff=self.backoff)
            for r in reconcilers
        ]
        metrics.watch_cache(cache)
        self._stop = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self._resync: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._started and not self._stop.is_set()

    def start(self) -> None:
        """Attach handlers (which enqueues every cached object), start workers and the resync timer. Once."""
        with self._lock:
            if self._started or self._stop.is_set():
                return
            self._started = True
            for controller in self.controllers:
                self._attach(controller)
                controller.start()
            self._resync = threading.Thread(target=self._resync_loop, name="resync", daemon=True)
            self._resync.start()
        log.info("controllers started", extra={"controllers": [c.name for c in self.controllers], "workers": self.settings.workers})

    def _attach(self, controller: Controller) -> None:
        r = controller.reconciler
        enqueue = controller.enqueue
        echo = self.echo
        primary = r.primary
        self.informers[primary].add_handler(
            on_add=lambda o: enqueue((object_key(o),)),
            on_initial_add=lambda o: enqueue((object_key(o),), LOW),
            on_update=lambda old, new: None if echo(primary, new) else enqueue((object_key(new),), primary_update_priority(old, new)),
            on_delete=lambda o: enqueue((object_key(o),)),
        )
        for resource in r.owned:
            changed = self._child_changed(resource, primary, enqueue)
            self.informers[resource].add_handler(
                on_add=lambda o, changed=changed: changed(None, o),  # type: ignore[misc]
                on_initial_add=lambda o: enqueue((owner_key(o, primary),), LOW),
                on_update=changed,
                on_delete=lambda o: enqueue((owner_key(o, primary),)),
            )
        for watch in r.watches:
            if watch.to_keys is None:
                continue
            to_keys: Callable[..., list[str]] = watch.to_keys
            self.informers[watch.resource].add_handler(
                on_add=lambda o, f=to_keys: enqueue(f(o)),  # type: ignore[misc]
                on_initial_add=lambda o, f=to_keys: enqueue(f(o), LOW),  # type: ignore[misc]
                on_update=lambda old, new, f=to_keys: enqueue({*f(old), *f(new)}),  # type: ignore[misc]
                on_delete=lambda o, f=to_keys: enqueue(f(o)),  # type: ignore[misc]
            )

    def _child_changed(
        self, resource: Resource, primary: Resource, enqueue: Callable[..., None]
    ) -> Callable[[Mapping[str, Any] | None, Mapping[str, Any]], None]:
        """The handler of a child's add or update: its owner (before and after) is enqueued, unless the change is the
        echo of our own write of a child of ``primary`` (asked only then: another kind's controller sharing the
        informer leaves the echo to the child's own controller)."""

        def changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> None:
            owner = owner_key(new, primary)
            if owner is not None and self.echo(resource, new):
                return
            enqueue({owner, owner_key(old, primary) if old is not None else owner})

        return changed

    def resync(self) -> int:
        """Enqueue every cached primary object, at low priority; how many keys."""
        count = 0
        for controller in self.controllers:
            keys = [object_key(o) for o in controller.primary_informer.store.list()]
            controller.enqueue(keys, LOW)
            count += len(keys)
        log.debug("resync", extra={"keys": count})
        return count

    def _resync_loop(self) -> None:
        while not self._stop.wait(self.settings.resync_s):
            self.resync()

    def request_stop(self) -> None:
        """Stop taking work now (non-blocking; safe from any thread)."""
        self._stop.set()
        for controller in self.controllers:
            controller.request_stop()

    def stop(self, timeout_s: float) -> bool:
        """Stop taking work and wait up to ``timeout_s`` for in-flight reconciles; False if some are still running."""
        self.request_stop()
        deadline = time.monotonic() + timeout_s
        finished = all([controller.join(deadline) for controller in self.controllers])
        if not finished:
            running = {c.name: c.queue.stats().longest_running_s for c in self.controllers}
            log.warning(
                "reconciles still running after the shutdown timeout; abandoning them", extra={"timeout_s": timeout_s, "running_s": running}
            )
        return finished
