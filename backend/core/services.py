"""The application service: what the API does with a kind's objects, apart from HTTP — :class:`KindService`,
one per registered kind, and :class:`Services`, every service of one app.

:func:`backend.app.create_app` builds one :class:`Services` (settings, the cluster access, a
:class:`KindService` per kind of :data:`backend.core.kinds.registry.KINDS`, the :class:`CombinedTasks` reader)
and hands it explicitly to whatever needs it: the JSON blueprints (:mod:`backend.api.endpoints`,
:mod:`backend.api.combinedtasks`, :mod:`backend.api.namespaces`), the ``/watch`` stream (:mod:`backend.api.watch.watching`)
and the dashboard (:func:`backend.dashboard.create_blueprint`). Nothing here reads a request or makes a
response: failures are the domain errors of :mod:`backend.core.errors` (Invalid with field paths, NotFound,
Conflict, PreconditionFailed), which the HTTP views let :mod:`backend.api.problems` answer and the dashboard shows
inline. Each app has its own services (and memos), so
several apps live in one process (tests).

Names say what each step does, from the view down to the cluster:

- ``KindService.check_and_create``: the served-namespace rule, the kind's checks against nothing stored and
  clashes with other objects (:meth:`KindService.verify`: Invalid, or Conflict naming the clashing fields), then
  :func:`backend.core.writing.create_with_owned` — "create with owned objects, undo on failure" — which calls
  :meth:`cluster.CachedClient.create`.
- ``KindService.check_and_replace``: the precondition loop of PUT, PATCH and the dashboard's edits
  (``If-Match``: PreconditionFailed, a body's ``resourceVersion``: Conflict, otherwise rebuilt on the fresh object and
  retried on a conflict), the kind's checks against the stored object and the clashes the change adds (a
  sub-domain another Darkroom holds: Conflict, as on a create), then
  :func:`backend.core.writing.replace_with_owned`; it returns the written object. :meth:`KindService.replace`
  and :meth:`KindService.patch` are that loop with a whole body or a merge patch.
- ``KindService.delete``: exactly the object with that UID (and version, when given).
- Validation helpers: :meth:`KindService.problems` (every problem of a body at once), :meth:`KindService.checked`
  (Invalid unless valid), :meth:`KindService.patched` (the body a merge patch makes), :meth:`KindService.with_identity`.

Every successful write is reported to ``on_write`` (the app passes :func:`backend.api.consistency.wrote`:
the response then carries a read-your-writes token).

**Whom it acts for.** Every read and write goes through :attr:`KindService.client`, a
:class:`cluster.acting.ActingClient` for the person of the current request — reads of the shared cache
authorized for them, writes (owned Secrets included) sent with their credentials. The app builds its
:class:`Services` with ``actor_of`` (the request's :class:`cluster.acting.Actor`, set by authentication before
any view), so every view, the dashboard's included, acts as its request's person without passing it along;
outside a request (no actor) a read or write raises instead of acting as the API's own account.
:meth:`Services.acting_as` binds the services to one actor explicitly (tests, benchmarks). The memoized
renderings stay shared.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from marshmallow import Schema

from backend.core import errors, listing, ordering, validation, writing
from backend.core.access import ClusterAccess
from backend.core.kinds.base import Kind
from backend.core.kinds.registry import KINDS
from backend.settings import ApiSettings
from cluster import EVENTS, NAMESPACES, Conflict, FrozenDict, NotFound, Resource, fieldselectors, taskevents
from cluster.acting import ActingClient, Actor
from mergepatch import merge_patch

RETRIES = 3
EXTENSION = "darkroom_control_panel"  # app.extensions key of the app's Services, for shutting it down (backend.server.shutdown)


def version(obj: Mapping[str, Any]) -> str:
    """The resourceVersion of ``obj`` ("" when it has none): the ETag of its JSON."""
    return str(obj["metadata"].get("resourceVersion", ""))


def _nothing(_resource: Resource) -> None:
    return None


class KindService:
    """Reads, checks and writes of one kind, with its memoizing renderer (the friendly form per object version)."""

    def __init__(
        self,
        kind: Kind,
        settings: ApiSettings,
        *,
        on_write: Callable[[Resource], None] = _nothing,
        access: ClusterAccess | None = None,
        actor_of: Callable[[], Actor] | None = None,
        client: ActingClient | None = None,
        renderer: listing.Renderer | None = None,
    ) -> None:
        self.kind = kind
        self.access = access
        self.actor_of = actor_of
        self._client = client
        self.settings = settings
        self.on_write = on_write
        self.renderer = renderer or listing.Renderer(lambda obj, _extra: kind.to_friendly(obj, settings=settings))

    @property
    def client(self) -> ActingClient:
        """The client of the person this service acts for: the one it was bound to (:meth:`acting_as`), else the current
        request's (``actor_of``). Never the API's own account by default: without either, RuntimeError."""
        if self._client is not None:
            return self._client
        if self.access is None or self.actor_of is None:
            raise RuntimeError(f"the {self.kind.title} service acts for nobody (no request, not bound)")
        return self.access.acting_as(self.actor_of())

    def acting_as(self, client: ActingClient) -> KindService:
        """This service for one person (their client), sharing the memoized renderings."""
        return KindService(self.kind, self.settings, on_write=self.on_write, access=self.access, client=client, renderer=self.renderer)

    @property
    def title(self) -> str:
        return self.kind.title

    @property
    def plural(self) -> str:
        return self.kind.plural

    @property
    def resource(self) -> Resource:
        return self.kind.resource

    # -- reads ------------------------------------------------------------------------------

    def served(self, namespace: str) -> bool:
        """Whether this API serves ``namespace`` (all of them unless ``settings.namespace``)."""
        wanted = self.settings.namespace
        return wanted is None or namespace == wanted

    def list(self, query: listing.ListQuery) -> Sequence[FrozenDict]:
        """The objects a collection query selects, from the cache (a namespace this API does not serve: none): its
        namespace, label selector, name filter (names are lowercase: ``q`` matches whatever its case) and order as the
        cache answers them, then its field selector (on the name and namespace: by the cache too, from the keys)."""
        served_namespace = self.settings.namespace
        if served_namespace and query.namespace not in (None, served_namespace):
            return []
        namespace = query.namespace or served_namespace
        order = ordering.order_of(query.sort, self.kind.sorts)
        # the metadata's fields are read off the keys, the others' looked up in their indexes (cluster.fieldselectors)
        key_filter, fields = query.fields.on_keys(self._field_indexes(namespace))
        objects = self.client.list(
            self.resource,
            namespace=namespace,
            label_selector=query.label_selector,
            order=order,
            name_contains=query.q.lower(),
            key_filter=key_filter,
        )
        return objects if fields.empty else [obj for obj in objects if fields.matches(obj)]

    def _field_indexes(self, namespace: str | None) -> dict[str, fieldselectors.KeysHaving]:
        """By field label, the look-up of the keys filed under a value in the field's index, when the cache answers this
        list (else none: the objects are read from the API server and tested one by one)."""
        cached = self.client.client
        if not cached.served_from_cache(self.resource, namespace):
            return {}
        return {label: functools.partial(cached.filed_keys, self.resource, index) for label, index in self.kind.field_indexes.items()}

    def fetch(self, namespace: str, name: str, *, fresh: bool = False) -> Mapping[str, Any]:
        """The object from the cache (``fresh``: from the API server); :class:`~backend.core.errors.NotFound` when absent
        or not served."""
        try:
            if not self.served(namespace):
                raise NotFound("not served")
            return self.client.get(self.resource, name, namespace=namespace, fresh=fresh)
        except NotFound:
            raise errors.NotFound(f'{self.title} "{namespace}/{name}" not found') from None

    def stored(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The object, or None when there is none (a refused body is refused as Invalid either way: the body comes first)."""
        try:
            return self.fetch(namespace, name)
        except errors.NotFound:
            return None

    def friendly(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The friendly form of ``obj``, memoized per version (shared: do not mutate)."""
        return self.renderer.friendly(obj)

    def converted(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The friendly form of ``obj``, not memoized (a dry run's answer, a change on the stream)."""
        return self.kind.to_friendly(obj, settings=self.settings)

    # -- validation -------------------------------------------------------------------------

    def problems(
        self,
        schema: type[Schema],
        data: Any,
        *,
        existing: Mapping[str, Any] | None,
        earlier: Mapping[str, builtins.list[str]] | None = None,
    ) -> tuple[dict[str, Any], dict[str, builtins.list[str]]]:
        """``data`` loaded by ``schema``, and every problem of it at once (empty: valid): ``earlier`` errors (a patch's
        own), the schema's (all fields, the kind's table rules beside them) and, when those exist, the kind's own checks
        (:meth:`backend.core.kinds.base.Kind.check` against ``existing``) of the fields that did load — so a client fixes a body
        in one round, not one per layer — and the clashes with other objects (:meth:`backend.core.kinds.base.Kind.conflicts`:
        a taken sub-domain) beside them. On a valid body the kind's checks run where the write runs
        (:meth:`check_and_create`, :meth:`check_and_replace`: :meth:`verify`)."""
        friendly, found = validation.validate(schema, data)
        found = validation.merged(earlier or {}, found)
        if found:
            own = self.kind.check(friendly, existing=existing)
            found = validation.merged(found, own, self.kind.conflicts(self.client, friendly, existing=existing), beside=True)
        return friendly, found

    def checked(self, schema: type[Schema], data: Any, *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
        """``data`` loaded by ``schema``; else :class:`~backend.core.errors.Invalid` with every problem of it (:meth:`problems`)."""
        friendly, found = self.problems(schema, data, existing=existing)
        if found:
            raise errors.Invalid(found)
        return friendly

    def verify(self, friendly: Mapping[str, Any], *, existing: Mapping[str, Any] | None) -> None:
        """The kind's checks of a valid body and its clashes with other objects, all at once: Invalid (422) with every
        problem when the kind's checks fail (the clashes beside them), else Conflict (409) naming the clashing fields."""
        found = self.kind.check(friendly, existing=existing)
        clashes = self.kind.conflicts(self.client, friendly, existing=existing)
        if found:
            raise errors.Invalid(validation.merged(found, clashes, beside=True))
        if clashes:
            raise errors.Conflict("; ".join(m for messages in clashes.values() for m in messages), errors=clashes)

    def patched(self, current: Mapping[str, Any], patch: Any) -> dict[str, Any]:
        """The friendly body a JSON merge patch of friendly fields makes of ``current`` (to be validated as a PUT body)."""
        raw = self.kind.to_friendly(current, settings=None)
        raw.pop("resourceVersion", None)
        merged: dict[str, Any] = merge_patch(self.kind.patch_base(raw, patch), patch)
        return merged

    def with_identity(self, friendly: dict[str, Any], namespace: str, name: str) -> dict[str, Any]:
        """Check a body's name/namespace against the object's (Invalid on mismatch) and fill them in."""
        mismatched = {
            field: [f"must match the URL ({expected})"]
            for field, expected in (("name", name), ("namespace", namespace))
            if friendly.get(field) not in (None, expected)
        }
        if mismatched:
            raise errors.Invalid(mismatched, f"the body names another {self.title} than the URL")
        return {**friendly, "name": name, "namespace": namespace}

    # -- preconditions ----------------------------------------------------------------------

    def current_at(
        self, namespace: str, name: str, wanted: frozenset[str] | None, *, precondition: bool, verb: str = "get"
    ) -> Mapping[str, Any]:
        """The current object, at one of the ``wanted`` versions if given (else :meth:`stale`).

        ``verb``: what the caller is about to do with it. A missing object is NotFound only to someone who may do that
        to it; anyone else is refused that verb (Forbidden), as kube-apiserver decides a write before it looks."""
        try:
            current = self.fetch(namespace, name)
        except errors.NotFound:
            if verb != "get":
                self.client.require(verb, self.resource, namespace=namespace, name=name)
            raise
        if wanted is None or version(current) in wanted:
            return current
        current = self.fetch(namespace, name, fresh=True)  # the cache may lag behind a version the client saw
        if version(current) in wanted:
            return current
        raise self.stale(current, precondition=precondition)

    def stale(self, current: Mapping[str, Any], *, precondition: bool) -> errors.PreconditionFailed | errors.Conflict:
        """The error of a version check ``current`` fails, naming its version: the caller's precondition
        (``If-Match``: :class:`~backend.core.errors.PreconditionFailed`) or a body's resourceVersion
        (:class:`~backend.core.errors.Conflict`)."""
        meta = current["metadata"]
        what = "If-Match does not name" if precondition else "the resourceVersion in the body is not"
        detail = (
            f'{what} the current version of {self.title} "{meta["namespace"]}/{meta["name"]}" ({version(current)}): re-read it and retry'
        )
        if precondition:
            return errors.PreconditionFailed(detail, version=version(current))
        return errors.Conflict(detail, version=version(current))

    # -- writes -----------------------------------------------------------------------------

    def check_and_create(self, friendly: Mapping[str, Any], *, server: str, dry_run: bool = False) -> dict[str, Any]:
        """Check a validated friendly object (served namespace, the kind's checks, clashes) and create it; the server's answer.

        ``server`` names what refuses a namespace it does not serve ("API", "dashboard"); ``dry_run``: store nothing.
        """
        if not self.served(friendly["namespace"]):
            raise errors.Invalid({"namespace": [f"this {server} serves namespace {self.settings.namespace} only"]})
        self.verify(friendly, existing=None)
        created = writing.create_with_owned(self.kind, self.client, friendly, dry_run=dry_run)
        if not dry_run:
            self.on_write(self.resource)
        return created

    def check_and_replace(
        self,
        namespace: str,
        name: str,
        build: Callable[[Mapping[str, Any]], dict[str, Any]],
        *,
        body_version: str | None,
        wanted: frozenset[str] | None,
        dry_run: bool = False,
        verb: str = "update",
    ) -> dict[str, Any]:
        """Store ``build(current)`` — a validated friendly object — over the current object; what was written.

        ``wanted``: the versions ``If-Match`` accepts (None: no precondition but ``body_version``, a body's
        resourceVersion, a Conflict when stale). Without either, a conflict rebuilds on the fresh object and retries.
        ``dry_run``: store nothing, return what would be stored. ``verb``: what the caller asked for (``update``,
        ``patch``), which a missing object is refused as (:meth:`current_at`).
        """
        precondition = True
        if wanted is None and body_version:
            wanted, precondition = frozenset((body_version,)), False
        current = self.current_at(namespace, name, wanted, precondition=precondition, verb=verb)
        if body_version and body_version != version(current):
            raise self.stale(current, precondition=False)
        for _ in range(RETRIES):
            friendly = build(current)
            self.verify(friendly, existing=current)
            try:
                written = writing.replace_with_owned(
                    self.kind, self.client, friendly, existing=current, resource_version=version(current), dry_run=dry_run
                )
            except Conflict:
                current = self.fetch(namespace, name, fresh=True)
                if wanted is not None:
                    raise self.stale(current, precondition=precondition) from None
                continue
            if not dry_run:
                self.on_write(self.resource)
            return written
        raise errors.Conflict(f'{self.title} "{namespace}/{name}" kept changing during the update; retry')

    def replace(
        self, namespace: str, name: str, friendly: dict[str, Any], *, wanted: frozenset[str] | None, dry_run: bool = False
    ) -> dict[str, Any]:
        """Replace with a validated whole body (its ``resourceVersion``, if any, is a precondition); what was written."""
        body = self.with_identity(friendly, namespace, name)
        return self.check_and_replace(
            namespace, name, lambda _current: body, body_version=friendly.get("resourceVersion"), wanted=wanted, dry_run=dry_run
        )

    def patch(
        self,
        namespace: str,
        name: str,
        patch: Any,
        *,
        body_version: str | None,
        wanted: frozenset[str] | None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Apply a JSON merge patch of friendly fields (re-applied on the fresh object after a conflict); what was written."""

        def build(current: Mapping[str, Any]) -> dict[str, Any]:
            friendly = self.checked(self.kind.update_schema, self.patched(current, patch), existing=current)
            return self.with_identity(friendly, namespace, name)

        return self.check_and_replace(namespace, name, build, body_version=body_version, wanted=wanted, dry_run=dry_run, verb="patch")

    def delete(
        self, namespace: str, name: str, *, uid: str | None, resource_version: str | None = None, dry_run: bool = False
    ) -> tuple[dict[str, Any], bool]:
        """Delete exactly the object with ``uid`` (at ``resource_version`` when given): the server's answer, and
        whether finalizers still hold the object (terminating). Conflict and NotFound propagate. ``dry_run``: delete nothing."""
        result = self.client.delete(self.resource, name, namespace=namespace, uid=uid, resource_version=resource_version, dry_run=dry_run)
        if not dry_run:
            self.on_write(self.resource)
        meta = result.get("metadata") or {}
        return result, bool(result.get("kind") == self.resource.kind and meta.get("deletionTimestamp") and meta.get("finalizers"))


class CombinedTasks:
    """Each Task with its Events (the aggregated API's CombinedTask, :func:`cluster.taskevents.combined`), from the
    cache: the Events through the events informer's index, the rendering memoized per Task version and its Events'."""

    def __init__(self, tasks: KindService, *, renderer: listing.Renderer | None = None) -> None:
        self.tasks = tasks
        self.renderer = renderer or listing.Renderer(self._combined)

    def acting_as(self, tasks: KindService) -> CombinedTasks:
        return CombinedTasks(tasks, renderer=self.renderer)

    @staticmethod
    def _combined(task: Mapping[str, Any], events: list[FrozenDict]) -> FrozenDict:
        return taskevents.combined(task, events, resource_version=taskevents.latest_version(task, events))

    def events(self, task: Mapping[str, Any]) -> list[FrozenDict]:
        """The Events of ``task`` from the cache, oldest first."""
        client = self.tasks.client
        return taskevents.events_of_task(lambda index, value: client.by_index(EVENTS, index, value), task["metadata"].get("uid", ""))

    @staticmethod
    def _versions(events: list[FrozenDict]) -> tuple[tuple[str, str | None], ...]:
        return tuple(sorted((e["metadata"]["uid"], e["metadata"].get("resourceVersion")) for e in events))

    def combined(self, task: Mapping[str, Any]) -> Mapping[str, Any]:
        """The CombinedTask of ``task`` (memoized; shared: do not mutate)."""
        found = self.events(task)
        return self.renderer.friendly(task, found, self._versions(found))

    def encoded(self, task: Mapping[str, Any]) -> bytes:
        """The CombinedTask of ``task`` as JSON (memoized)."""
        found = self.events(task)
        return self.renderer.encoded(task, found, self._versions(found))


class Services:
    """Every application service of one app: settings, the cluster access, a :class:`KindService` per kind
    (``services["Darkroom"]`` or ``services["darkrooms"]``) and :attr:`combined_tasks` — acting for nobody until
    :meth:`acting_as` binds them to a request's person."""

    def __init__(
        self,
        settings: ApiSettings,
        access: ClusterAccess,
        *,
        kinds: Iterable[Kind] = KINDS,
        on_write: Callable[[Resource], None] = _nothing,
        actor_of: Callable[[], Actor] | None = None,
    ) -> None:
        self.settings = settings
        self.access = access
        self.actor_of = actor_of
        self._client: ActingClient | None = None
        self._bind(tuple(KindService(kind, settings, on_write=on_write, access=access, actor_of=actor_of) for kind in kinds), None)

    def _bind(self, kinds: tuple[KindService, ...], combined: CombinedTasks | None) -> None:
        self.kinds = kinds
        self._by_name = {name: service for service in self.kinds for name in (service.kind.title, service.kind.plural)}
        tasks = self["Task"]
        self.combined_tasks = combined.acting_as(tasks) if combined is not None else CombinedTasks(tasks)

    def acting_as(self, actor: Actor) -> Services:
        """These services for one person: every kind service bound to their :class:`cluster.acting.ActingClient`."""
        client = self.access.acting_as(actor)
        bound = object.__new__(Services)
        bound.settings, bound.access, bound.actor_of, bound._client = self.settings, self.access, None, client
        bound._bind(tuple(service.acting_as(client) for service in self.kinds), self.combined_tasks)
        return bound

    @property
    def client(self) -> ActingClient:
        """The client of the person these services act for (see :attr:`KindService.client`)."""
        if self._client is not None:
            return self._client
        if self.actor_of is None:
            raise RuntimeError("these services act for nobody (no request, not bound)")
        return self.access.acting_as(self.actor_of())

    def __getitem__(self, title_or_plural: str) -> KindService:
        return self._by_name[title_or_plural]

    def namespaces(self) -> list[FrozenDict]:
        """The Namespace objects this API serves that the person may see (:func:`visible_namespaces`)."""
        return visible_namespaces(self.client, self.settings, tuple(service.resource for service in self.kinds))


def served_namespaces(client: ActingClient, settings: ApiSettings) -> list[FrozenDict]:
    """The Namespace objects this API serves, from the shared cache (sorted by name), whoever asks."""
    served = settings.namespace
    return [ns for ns in client.client.list(NAMESPACES) if served is None or ns["metadata"]["name"] == served]


def sees_every_namespace(client: ActingClient, resources: tuple[Resource, ...]) -> bool:
    """May ``client``'s person list namespaces, or one of ``resources`` in every namespace (then each is theirs to see)?"""
    return client.may("list", NAMESPACES) or any(client.may("list", resource) for resource in resources)


def sees_namespace(client: ActingClient, resources: tuple[Resource, ...], namespace: str) -> bool:
    """May ``client``'s person get ``namespace``, or list one of ``resources`` in it?"""
    if client.may("get", NAMESPACES, name=namespace):
        return True
    return any(client.may("list", resource, namespace=namespace) for resource in resources)


def visible_namespaces(client: ActingClient, settings: ApiSettings, resources: tuple[Resource, ...]) -> list[FrozenDict]:
    """The Namespace objects this API serves that ``client``'s person may see, from the shared cache (sorted by name):
    all of them when they may list namespaces or one of ``resources`` everywhere; otherwise those they may get, or list
    one of ``resources`` in (an access review per namespace, cached)."""
    every = served_namespaces(client, settings)
    if sees_every_namespace(client, resources):
        return every
    return [ns for ns in every if sees_namespace(client, resources, ns["metadata"]["name"])]
