"""The Darkroom reconciler: make a Darkroom's ConfigMap, Deployment, Service and Ingress match its spec, then report status.

Built by the runtime as ``DarkroomReconciler(context)``; the runtime calls :meth:`reconcile` with
``"<namespace>/<name>"`` whenever the Darkroom or one of its children changes, and on resync.

Each reconcile is level-based: read the Darkroom from the cache (gone or being deleted → nothing to
do; garbage collection removes the children), check what the CRD schema cannot
(:func:`darkroom_operator.darkroomchildren.validate`), then for every child build the desired body and
server-side apply it (one field manager, ``force``) only when the cached child does not already
contain it (:mod:`darkroom_operator.runtime.comparing`) — so a converged resync writes nothing. When the
apply still leaves list entries another manager owns (a port edited with ``kubectl edit``), the
child is replaced with the desired fields written over it (PUT with its resourceVersion). Status goes
through the status subresource, again only when it differs: ``domains`` (the Ingress hosts),
``tls`` (whether that Ingress serves them all over TLS — it does when the setting ``tls_secret`` is
set — so the API and the dashboard, which can read neither the settings nor Ingresses, link the
domains with the right scheme: :func:`kinds.darkrooms.serves_tls`), ``readyReplicas``,
``observedGeneration`` and the conditions ``Ready`` and ``Reconciled``
(:mod:`darkroom_operator.readiness` decides Ready). Events, one per transition and never per resync
(:func:`darkroom_operator.runtime.conditions.transition_events`): a Warning when Reconciled turns False,
changes reason, or fails differently for a new generation — not on every retry — and a Normal one when it
recovers; a Warning named by its reason when Ready turns False for something someone must act on
(``HostConflict``, ``DeploymentUnavailable``), a Warning ``NotReady`` when pods stop being available, a
Normal ``Updating`` when a spec change starts a rollout, a Normal ``ScaledToZero``, a Normal ``Ready``.

Hosts: a sub-domain several Darkrooms ask for goes to the older claim (:mod:`darkroom_operator.hosts`, the
rule of :mod:`kinds.darkrooms`). A Darkroom that loses some of its hosts serves the others; one that loses
every host has no Ingress and no Deployment (pods that serve no host would only cost), keeps its ConfigMap
and Service, and says so: ``Ready=False/HostConflict`` naming the older Darkrooms, and ``Reconciled=True``
with a message that lists what exists (never "Ingress match the spec" while the Ingress is withheld). When
the older claim lets a host go, the change of that Darkroom enqueues this one, which takes the host over.

Failures: an invalid spec gives ``Reconciled=False/InvalidSpec`` and no retry (the next spec edit
triggers a reconcile); an apply the server rejects gives ``Reconciled=False/ApplyFailed`` and
re-raises so the runtime retries with backoff (Conflicts and an unavailable server are only
retried); an object of a child's name that this Darkroom does not control (another controller's, an
orphan, one made by hand) is never modified, adopted or deleted (``Reconciled=False/ChildConflict``
naming it, retried with backoff). Telling ours from others' and applying is :mod:`darkroom_operator.runtime.owning`,
shared with the Postgresql reconciler. The S3 credentials Secret is never read — RBAC
grants no Secret access — so a missing Secret shows up as pods that do not become available
(``Ready=False/PodsUnavailable``, with a hint naming the Secret), not as a spec error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, INGRESSES, SERVICES, ClusterError, NotFound, Resource, thaw
from darkroom_operator import darkroomchildren, hosts
from darkroom_operator.readiness import readiness
from darkroom_operator.runtime.comparing import stamp
from darkroom_operator.runtime.conditions import (
    FALSE,
    TRUE,
    ReadyReasons,
    condition,
    find,
    same,
    set_condition,
    transition_events,
)
from darkroom_operator.runtime.owning import ChildConflict, Children
from darkroom_operator.runtime.reconciling import Context, Result, Watch
from darkroom_operator.settings import OperatorSettings
from darkroom_operator.unfinished import Unfinished
from kinds.darkrooms import (
    APPLIED,
    APPLY_FAILED,
    CHILD_CONFLICT,
    CREDENTIALS_PENDING_ANNOTATION,
    HOST_CONFLICT,
    INVALID_SPEC,
    LIFECYCLE,
    READY,
    RECONCILED,
    DarkroomStatus,
    serves_tls,
)

log = logging.getLogger(__name__)


Builder = Callable[[Mapping[str, Any], OperatorSettings], dict[str, Any]]
# Apply order: the ConfigMap before the Deployment whose pods read it; the Service before the Ingress routing to it.
CHILDREN: tuple[tuple[Resource, Builder], ...] = (
    (CONFIGMAPS, darkroomchildren.configmap),
    (DEPLOYMENTS, darkroomchildren.deployment),
    (SERVICES, darkroomchildren.service),
    (INGRESSES, darkroomchildren.ingress),
)
WITHHELD = (DEPLOYMENTS, INGRESSES)  # the children a Darkroom that holds none of its hosts goes without
READY_REASONS = ReadyReasons(steps=LIFECYCLE.starting_reasons, on_purpose=frozenset(LIFECYCLE.by_reason))


class DarkroomReconciler:
    name = "darkroom"
    primary = DARKROOMS
    owned: tuple[Resource, ...] = tuple(resource for resource, _ in CHILDREN)
    watches: tuple[Watch, ...] = ()

    def __init__(self, context: Context) -> None:
        self.context = context
        self.client = context.client
        self.settings = context.settings
        self.owned_children = Children(self.client, controller=self.name, owner_kind="Darkroom", field_manager=self.settings.field_manager)
        self.unfinished = Unfinished(context, resource=DARKROOMS, mark=CREDENTIALS_PENDING_ANNOTATION, what="its S3 credentials Secret")
        # Darkrooms index their sub-domains; a change of one enqueues every Darkroom sharing one (old or new).
        self.watches = (Watch(DARKROOMS, indexers={hosts.SUBDOMAIN_INDEX: hosts.subdomains}, to_keys=self._sharing_keys),)

    def reconcile(self, key: str) -> Result:
        namespace, name = key.split("/", 1)
        try:
            darkroom = self.client.get(DARKROOMS, name, namespace=namespace)
        except NotFound:
            return Result()
        if darkroom["metadata"].get("deletionTimestamp"):
            self.unfinished.forget(darkroom)
            return Result()
        left = self.unfinished.check(darkroom)
        if left == 0:
            return Result()  # removed: its create was never finished
        self._reconcile(darkroom)
        return Result(requeue_after_s=left)  # None unless a create is unfinished: then again when its time is up

    def _reconcile(self, darkroom: Mapping[str, Any]) -> None:
        generation = darkroom["metadata"].get("generation")
        problems = darkroomchildren.validate(darkroom)
        if problems:
            invalid = condition(RECONCILED, FALSE, INVALID_SPEC, "; ".join(problems), observed_generation=generation)
            self._publish(darkroom, invalid, self._children(darkroom))
            return
        losses = hosts.lost(darkroom, self._rivals(darkroom))
        try:
            live = self._apply(darkroom, losses)
        except ClusterError as e:
            if e.retryable:  # a Conflict or an unavailable server: retried soon, not a state worth reporting
                raise
            reason = CHILD_CONFLICT if isinstance(e, ChildConflict) else APPLY_FAILED
            failed = condition(RECONCILED, FALSE, reason, e.message, observed_generation=generation)
            try:
                self._publish(darkroom, failed, self._children(darkroom))
            except ClusterError:
                extra = {"controller": self.name, "key": hosts.key(darkroom), "reason": reason}
                log.warning("could not record the failure in status", extra=extra)
            raise
        applied = condition(RECONCILED, TRUE, APPLIED, self._applied(darkroom, losses), observed_generation=generation)
        self._publish(darkroom, applied, live, losses)

    # -- hosts ---------------------------------------------------------------------------------

    def _rivals(self, darkroom: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
        """The cached Darkrooms asking for each of ``darkroom``'s sub-domains (itself included)."""
        informer = self.client.cache.informer(DARKROOMS)
        if informer is None:  # outside the runtime: no informer, ask the server
            everyone = self.client.list(DARKROOMS)
            return {sub: [d for d in everyone if sub in hosts.subdomains(d)] for sub in hosts.subdomains(darkroom)}
        return {sub: list(informer.store.by_index(hosts.SUBDOMAIN_INDEX, sub)) for sub in hosts.subdomains(darkroom)}

    def _applied(self, darkroom: Mapping[str, Any], losses: Mapping[str, str]) -> str:
        """What the reconcile made true, as Reconciled's message: every child, or what a host conflict leaves of them."""
        if not losses:
            return "ConfigMap, Deployment, Service and Ingress match the spec"
        why = hosts.message(losses, self.settings.domain)
        served = [f"{sub}.{self.settings.domain}" for sub in hosts.subdomains(darkroom) if sub not in losses]
        if served:
            return f"ConfigMap, Deployment and Service match the spec; the Ingress serves only {', '.join(served)} ({why})"
        return f"ConfigMap and Service match the spec; no Deployment and no Ingress while every host is held by an older Darkroom ({why})"

    def _sharing_keys(self, darkroom: Mapping[str, Any]) -> list[str]:
        """``to_keys`` of the sub-domain watch: the other Darkrooms asking for a sub-domain ``darkroom`` asks for."""
        mine = hosts.key(darkroom)
        return sorted({hosts.key(d) for ds in self._rivals(darkroom).values() for d in ds} - {mine})

    # -- children ----------------------------------------------------------------------------

    def _children(self, darkroom: Mapping[str, Any]) -> dict[Resource, Mapping[str, Any] | None]:
        """The live children we control (cache reads), for status when nothing was applied."""
        name = darkroom["metadata"]["name"]
        return {resource: self.owned_children.controlled(resource, darkroom, name) for resource, _ in CHILDREN}

    def _apply(self, darkroom: Mapping[str, Any], losses: Mapping[str, str]) -> dict[Resource, Mapping[str, Any] | None]:
        """Apply every child; the Ingress only for the hosts this Darkroom wins. Winning none, it has no Ingress and no
        Deployment (ours are deleted): pods that serve no host would only cost; ConfigMap and Service stay, so the
        Darkroom takes a host over with one Deployment once the older claim lets it go."""
        # Every name first: a conflict on the Service must not leave a Deployment running without it.
        # Each body is built once (the builders are pure) and serves both the name check and the apply.
        bodies = {resource: build(darkroom, self.settings) for resource, build in CHILDREN}
        ours = {resource: self.owned_children.ours(resource, darkroom, bodies[resource]) for resource, _ in CHILDREN}
        served = [sub for sub in hosts.subdomains(darkroom) if sub not in losses]
        result: dict[Resource, Mapping[str, Any] | None] = {}
        for resource, build in CHILDREN:
            live = ours[resource]
            if resource in WITHHELD and losses and not served:
                self.owned_children.withdraw(resource, live)
                result[resource] = None
                continue
            if resource is INGRESSES and losses:
                view: dict[str, Any] = thaw(darkroom)
                view["spec"]["subDomains"] = served
                desired = stamp(build(view, self.settings))
            else:
                desired = stamp(bodies[resource])
            result[resource] = self.owned_children.apply(resource, darkroom, desired, live)
        return result

    # -- status and events -------------------------------------------------------------------

    def _publish(
        self,
        darkroom: Mapping[str, Any],
        reconciled: dict[str, Any],
        live: Mapping[Resource, Mapping[str, Any] | None],
        losses: Mapping[str, str] | None = None,
    ) -> None:
        """Write status (only when it differs), then record Events for the transitions it made."""
        meta = darkroom["metadata"]
        status = cast(DarkroomStatus, darkroom.get("status") or {})
        now = self.context.now()
        deployment, ingress = live.get(DEPLOYMENTS), live.get(INGRESSES)
        if losses:
            message = hosts.message(losses, self.settings.domain)
            if deployment is None and not set(hosts.subdomains(darkroom)) - set(losses):
                message += "; no pods run until one of its hosts is free"
            ready = condition(READY, FALSE, HOST_CONFLICT, message, observed_generation=meta.get("generation"))
        else:
            ready = readiness(deployment, observed_generation=meta.get("generation"), secret=darkroomchildren.credentials_secret(darkroom))
        old = status.get("conditions") or ()
        ours = set_condition(set_condition(old, ready, now=now), reconciled, now=now)
        desired: DarkroomStatus = {
            "observedGeneration": meta.get("generation"),
            "domains": [rule.get("host", "") for rule in ((ingress or {}).get("spec") or {}).get("rules") or ()],
            "tls": serves_tls(ingress),
            "readyReplicas": int(((deployment or {}).get("status") or {}).get("readyReplicas") or 0),
            "conditions": [c for c in ours if c["type"] in (READY, RECONCILED)],
        }
        unchanged = (
            status.get("observedGeneration") == desired["observedGeneration"]
            and status.get("readyReplicas") == desired["readyReplicas"]
            and list(status.get("domains") or ()) == desired["domains"]
            and status.get("tls") is desired["tls"]
            and all(same(find(old, c["type"]), c) for c in desired["conditions"])
        )
        if unchanged:
            return
        body = {
            "apiVersion": DARKROOMS.api_version,
            "kind": DARKROOMS.kind,
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        }
        try:
            self.client.apply_status(DARKROOMS, {**body, "status": desired}, field_manager=self.settings.field_manager, force=True)
        except NotFound:
            return  # deleted meanwhile: nothing left to report on
        self._record(darkroom, find(old, READY), ready, find(old, RECONCILED), reconciled)

    def _record(
        self,
        darkroom: Mapping[str, Any],
        old_ready: Mapping[str, Any] | None,
        ready: Mapping[str, Any],
        old_reconciled: Mapping[str, Any] | None,
        reconciled: Mapping[str, Any],
    ) -> None:
        events = transition_events(old_ready, ready, old_reconciled, reconciled, reasons=READY_REASONS)
        for type_, reason, message in events:
            try:
                self.context.recorder.event(darkroom, type_=type_, reason=reason, message=message)
            except ClusterError:
                log.warning(
                    "could not record event %s on darkroom %s/%s", reason, darkroom["metadata"]["namespace"], darkroom["metadata"]["name"]
                )
