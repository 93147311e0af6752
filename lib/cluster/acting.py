"""The cached client as one caller sees it: :class:`ActingClient`, and who the caller is: :class:`Actor`.

The informer cache is shared — one watch per kind, filled with the process's own credentials — so a read
served from it must first be authorized for the person it is served to, as k8s.io/apiserver's delegating
authorizer would authorize it (:class:`cluster.reviewing.AccessReviewer`, cached briefly):

- ``list`` in one namespace needs ``list`` there (else :class:`cluster.errors.Forbidden`); ``list`` in every
  namespace returns everything when the person may list cluster-wide, otherwise only the objects of the
  namespaces they may list there (what a person with namespaced rights expects of "all namespaces");
- ``get`` needs ``get`` on that object; ``by_index`` (a Task's Events) keeps the namespaces they may list.

Reads the cache cannot serve (``fresh``, a resource without an informer) and every write go to the API
server *with the person's credentials*, so kube-apiserver decides, audits them under their name, and
refuses what they may not do; such a refusal comes back as :class:`cluster.errors.Forbidden` naming the
person and what was refused. There is no fallback to the process's own credentials.

A pod's log (``pods/log``) is read with the official client's ``CoreV1Api.read_namespaced_pod_log`` as the person
(:meth:`ActingClient.pod_log`): kube-apiserver authorizes ``get`` on ``pods/log``, and a refusal names it.

The process's own identity (:data:`SELF`: the reconciler, or the API serving itself in the local one-person
mode) reads its own cache without reviews — what it filled, it may read — and writes as itself.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import OpenApiException
from urllib3.exceptions import HTTPError

from cluster import errors
from cluster.attributes import ResourceAttributes
from cluster.bodies import FrozenDict
from cluster.clients import CachedClient, PatchType
from cluster.identities import OWN, Credentials, Impersonation, User
from cluster.orders import KeyFilter, Order
from cluster.resources import PODS, Resource
from cluster.reviewing import AccessReviewer


@dataclass(frozen=True)
class Actor:
    """Whom requests are made for: a person (``user`` as authenticated, with the credentials their requests
    carry) or, with ``user`` None, the process itself."""

    user: User | None
    credentials: Credentials

    @property
    def name(self) -> str:
        return self.user.name if self.user is not None else ""


SELF = Actor(user=None, credentials=OWN)
#: A followed log's wait for its next line: a container quiet for a day ends its follow (a reader says so).
FOLLOW_READ_TIMEOUT_S = 24 * 3600.0
T = TypeVar("T")


class ActingClient:
    """Reads from the shared cache, authorized for ``actor``; everything else sent to the server as ``actor``."""

    def __init__(self, client: CachedClient, *, actor: Actor, reviewer: AccessReviewer | None) -> None:
        if actor.user is not None and reviewer is None:
            raise ValueError("a person's reads from the shared cache need an access reviewer")
        self.client = client
        self.actor = actor
        self._reviewer = reviewer

    # -- authorization --------------------------------------------------------------------------

    def may(
        self,
        verb: str,
        resource: Resource,
        *,
        namespace: str | None = None,
        name: str = "",
        subresource: str = "",
        for_stream: bool = False,
    ) -> bool:
        """Whether the actor may ``verb`` ``resource`` there (namespace None: in every namespace). ClusterError
        when that cannot be reviewed (never a guess). ``for_stream``: a live stream's question, which may be answered
        by an older decision (:class:`cluster.reviewing.AccessReviewer`)."""
        user = self.actor.user
        if user is None:
            return True
        assert self._reviewer is not None
        attributes = ResourceAttributes.of(verb, resource, namespace=namespace, name=name, subresource=subresource)
        return self._reviewer.allowed(user, attributes, for_stream=for_stream)

    def require(self, verb: str, resource: Resource, *, namespace: str | None = None, name: str = "", subresource: str = "") -> None:
        """:meth:`may`, or :class:`cluster.errors.Forbidden` naming the actor and what they may not do."""
        if not self.may(verb, resource, namespace=namespace, name=name, subresource=subresource):
            attributes = ResourceAttributes.of(verb, resource, namespace=namespace, name=name, subresource=subresource)
            raise errors.Forbidden(attributes.kube_message(self.actor.name), reason="Forbidden").made_for(self.actor.name, attributes)

    def namespaces_allowing(self, verb: str, resource: Resource, candidates: Iterable[str]) -> set[str] | None:
        """The namespaces among ``candidates`` where the actor may ``verb`` ``resource``; None when they may
        everywhere (a cluster-wide grant)."""
        if self.may(verb, resource):
            return None
        return {ns for ns in set(candidates) if self.may(verb, resource, namespace=ns)}

    def _visible(self, resource: Resource, objects: Sequence[FrozenDict]) -> builtins.list[FrozenDict]:
        """The objects of the namespaces the actor may list (of an index's entry: a list of the whole cache asks the
        store to leave the other namespaces out by key instead). The objects are looked at once at most, and not at all
        for a cluster-wide grant."""
        if self.may("list", resource):
            return list(objects)
        namespaces = {o["metadata"].get("namespace", "") for o in objects}
        allowed = {ns for ns in namespaces if self.may("list", resource, namespace=ns)}
        if allowed == namespaces:  # every namespace that has objects here
            return list(objects)
        return [o for o in objects if o["metadata"].get("namespace", "") in allowed]

    # -- reads ----------------------------------------------------------------------------------

    def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        order: Order | None = None,
        name_contains: str = "",
        key_filter: KeyFilter | None = None,
    ) -> Sequence[FrozenDict]:
        """The objects the actor may list (see the module docstring; ``name_contains``: only those whose name contains
        it; ``key_filter``: whose key it keeps), sorted by namespace/name or in ``order``."""
        chosen: dict[str, Any] = {
            "label_selector": label_selector,
            "order": order,
            "name_contains": name_contains,
            "key_filter": key_filter,
        }
        if not self.client.served_from_cache(resource, namespace):
            return self._sent(lambda: self.client.list(resource, namespace=namespace, credentials=self._creds, **chosen))
        if namespace or not resource.namespaced:
            self.require("list", resource, namespace=namespace)
            return self.client.list(resource, namespace=namespace, **chosen)
        holding = self.client.namespaces_holding(resource)
        allowed = self.namespaces_allowing("list", resource, holding)
        if allowed is not None and len(allowed) == len(holding):
            allowed = None  # every namespace that has objects here: nothing to leave out
        return self.client.list(resource, namespaces=allowed, **chosen)

    def get(self, resource: Resource, name: str, *, namespace: str | None = None, fresh: bool = False) -> FrozenDict:
        if fresh or not self.client.served_from_cache(resource, namespace):
            return self._sent(lambda: self.client.get(resource, name, namespace=namespace, fresh=True, credentials=self._creds))
        self.require("get", resource, namespace=namespace, name=name)
        return self.client.get(resource, name, namespace=namespace, credentials=self._creds)

    def lookup(self, resource: Resource, name: str, *, namespace: str | None = None) -> FrozenDict | None:
        return self._sent(lambda: self.client.lookup(resource, name, namespace=namespace, credentials=self._creds))

    def by_index(self, resource: Resource, index: str, value: str) -> builtins.list[FrozenDict]:
        """Cached objects under ``value`` in an index, of the namespaces the actor may list."""
        return self._visible(resource, self.client.by_index(resource, index, value))

    def pod_log(
        self,
        namespace: str,
        pod: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        previous: bool = False,
        timestamps: bool = False,
        limit_bytes: int | None = None,
    ) -> Any:
        """The log of a pod's container as a streaming ``urllib3`` response (unread; the caller closes it), read as the
        actor through ``CoreV1Api.read_namespaced_pod_log(..., _preload_content=False)``. A follow waits up to
        :data:`FOLLOW_READ_TIMEOUT_S` for each line (the caller ends it sooner by closing the response). Raises
        ClusterError (a refusal naming ``get`` ``pods/log``; the kubelet's complaints, a previous container not found,
        as BadRequest)."""
        attributes = ResourceAttributes.of("get", PODS, namespace=namespace, name=pod, subresource="log")
        transport = self.client.transport
        read_s = FOLLOW_READ_TIMEOUT_S if follow else transport.request_timeout_s
        what = f"GET {PODS.path(namespace=namespace, name=pod, subresource='log')}"

        def send() -> Any:
            api = CoreV1Api(transport.official(self._creds))
            try:
                return api.read_namespaced_pod_log(
                    pod,
                    namespace,
                    container=container or None,
                    follow=follow or None,
                    tail_lines=tail_lines,
                    since_seconds=since_seconds,
                    previous=previous or None,
                    timestamps=timestamps or None,
                    limit_bytes=limit_bytes,
                    _preload_content=False,
                    _request_timeout=(transport.connect_timeout_s, read_s),
                )
            except OpenApiException as e:
                raise errors.from_api_exception(e, what=what) from e
            except HTTPError as e:
                raise errors.from_transport(e, what=what) from e

        return self._sent(send, attributes)

    def written_version(self, resource: Resource) -> str | None:
        return self.client.written_version(resource)

    def wait_for_version(self, resource: Resource, version: str, *, timeout_s: float) -> None:
        self.client.wait_for_version(resource, version, timeout_s=timeout_s)

    # -- writes (always the server's decision, as the actor) -------------------------------------

    def create(self, resource: Resource, body: Mapping[str, Any], *, namespace: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        ns = namespace or (body.get("metadata") or {}).get("namespace")
        attributes = ResourceAttributes.of("create", resource, namespace=ns)
        return self._sent(
            lambda: self.client.create(resource, body, namespace=namespace, dry_run=dry_run, credentials=self._creds), attributes
        )

    def update(self, resource: Resource, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        meta = body.get("metadata") or {}
        attributes = ResourceAttributes.of("update", resource, namespace=meta.get("namespace"), name=str(meta.get("name", "")))
        return self._sent(lambda: self.client.update(resource, body, dry_run=dry_run, credentials=self._creds), attributes)

    def patch(
        self,
        resource: Resource,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        attributes = ResourceAttributes.of("patch", resource, namespace=namespace, name=name)
        return self._sent(
            lambda: self.client.patch(
                resource, name, patch, namespace=namespace, patch_type=patch_type, dry_run=dry_run, credentials=self._creds
            ),
            attributes,
        )

    def apply(self, resource: Resource, body: Mapping[str, Any], *, force: bool = False, dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply of ``body`` with the client's field manager (kube-apiserver decides it as a ``patch``)."""
        meta = body.get("metadata") or {}
        attributes = ResourceAttributes.of("patch", resource, namespace=meta.get("namespace"), name=str(meta.get("name", "")))
        return self._sent(lambda: self.client.apply(resource, body, force=force, dry_run=dry_run, credentials=self._creds), attributes)

    def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: Literal["Foreground", "Background", "Orphan"] | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        attributes = ResourceAttributes.of("delete", resource, namespace=namespace, name=name)
        return self._sent(
            lambda: self.client.delete(
                resource,
                name,
                namespace=namespace,
                propagation_policy=propagation_policy,
                uid=uid,
                resource_version=resource_version,
                dry_run=dry_run,
                credentials=self._creds,
            ),
            attributes,
        )

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def _creds(self) -> Credentials:
        return self.actor.credentials

    def _sent(self, send: Callable[[], T], attributes: ResourceAttributes | None = None) -> T:
        """Run a request made with the actor's credentials; a refusal is marked as the actor's — unless it refuses the
        process itself: impersonating the person is not allowed to it (a misconfigured panel, not the person's doing)."""
        try:
            return send()
        except errors.Forbidden as e:  # Unauthorized too: the person's token was refused (expired, revoked)
            if self.actor.user is not None and not refuses_impersonation(e, self.actor.credentials):
                e.made_for(self.actor.name, attributes)
            raise


def refuses_impersonation(error: errors.Forbidden, credentials: Credentials) -> bool:
    """Whether ``error`` is kube-apiserver refusing the process the right to impersonate (``... cannot impersonate
    resource "users" ...``), as opposed to refusing the impersonated person what they asked."""
    return isinstance(credentials, Impersonation) and error.status == 403 and "cannot impersonate" in error.message
