"""The Darkroom reconciler: make a Darkroom's ConfigMap, Deployment, Service and Ingress match its spec, then report status.

Built by the runtime as ``DarkroomReconciler(context)``; the runtime calls :meth:`reconcile` with
``"<namespace>/<name>"`` whenever the Darkroom or one of its children changes, and on resync.

Each reconcile is level-based: read the Darkroom from the cache (gone or being deleted → nothing to
do; garbage collection removes the children), check what the CRD schema cannot
(:func:`darkroom_operator.children.validate`), then for every child build the desired body and
server-side apply it (one field manager, ``force``) only when the cached child does not already
contain it (:mod:`darkroom_operator.comparing`) — so a converged resync writes nothing. When the
apply still leaves list entries another manager owns (a port edited with ``kubectl edit``), the
child is replaced with the desired fields written over it (PUT with its resourceVersion). Status goes
through the status subresource, again only when it differs: ``domains`` (the Ingress hosts),
``readyReplicas``, ``observedGeneration`` and the conditions ``Ready`` and ``Reconciled``
(:mod:`darkroom_operator.readiness` decides Ready). Events: a Warning when Reconciled turns False,
changes reason, or fails differently for a new generation — not on every retry — a Normal one
when it recovers, and Normal ``Ready``/``NotReady`` when Ready flips.

Failures: an invalid spec gives ``Reconciled=False/InvalidSpec`` and no retry (the next spec edit
triggers a reconcile); an apply the server rejects gives ``Reconciled=False/ApplyFailed`` and
re-raises so the runtime retries with backoff (Conflicts and an unavailable server are only
retried); an object of a child's name that this Darkroom does not control (another controller's, an
orphan, one made by hand) is never modified, adopted or deleted (``Reconciled=False/ChildConflict``
naming it, retried with backoff). The S3 credentials Secret is never read — RBAC
grants no Secret access — so a missing Secret shows up as pods that do not become available
(``Ready=False/PodsUnavailable``, with a hint naming the Secret), not as a spec error.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from cluster import CONFIGMAPS, DARKROOMS, DEPLOYMENTS, INGRESSES, SERVICES, AlreadyExists, ClusterError, Invalid, NotFound, Resource, thaw
from darkroom_operator import children, hosts
from darkroom_operator.comparing import differences, overlay, stamp, up_to_date
from darkroom_operator.conditions import FALSE, TRUE, condition, find, same, set_condition, transitioned
from darkroom_operator.readiness import readiness
from darkroom_operator.reconciling import Context, Result, Watch
from darkroom_operator.recording import NORMAL, WARNING
from darkroom_operator.settings import OperatorSettings
from kinds.darkrooms import APPLIED, APPLY_FAILED, CHILD_CONFLICT, HOST_CONFLICT, INVALID_SPEC, READY, RECONCILED

log = logging.getLogger(__name__)


Builder = Callable[[Mapping[str, Any], OperatorSettings], dict[str, Any]]
# Apply order: the ConfigMap before the Deployment whose pods read it; the Service before the Ingress routing to it.
CHILDREN: tuple[tuple[Resource, Builder], ...] = (
    (CONFIGMAPS, children.configmap),
    (DEPLOYMENTS, children.deployment),
    (SERVICES, children.service),
    (INGRESSES, children.ingress),
)


class ChildConflict(ClusterError):
    """A child's name is taken by an object another controller owns; we never take it over."""


class DarkroomReconciler:
    name = "darkroom"
    primary = DARKROOMS
    owned: tuple[Resource, ...] = tuple(resource for resource, _ in CHILDREN)
    watches: tuple[Watch, ...] = ()

    def __init__(self, context: Context) -> None:
        self.context = context
        self.client = context.client
        self.settings = context.settings
        # Darkrooms index their sub-domains; a change of one enqueues every Darkroom sharing one (old or new).
        self.watches = (Watch(DARKROOMS, indexers={hosts.SUBDOMAIN_INDEX: hosts.subdomains}, to_keys=self._sharing_keys),)

    def reconcile(self, key: str) -> Result:
        namespace, name = key.split("/", 1)
        try:
            darkroom = self.client.get(DARKROOMS, name, namespace=namespace)
        except NotFound:
            return Result()
        if darkroom["metadata"].get("deletionTimestamp"):
            return Result()
        generation = darkroom["metadata"].get("generation")
        problems = children.validate(darkroom)
        if problems:
            invalid = condition(RECONCILED, FALSE, INVALID_SPEC, "; ".join(problems), observed_generation=generation)
            self._publish(darkroom, invalid, self._children(darkroom))
            return Result()
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
                log.warning("could not record the failure in status", extra={"controller": self.name, "key": key, "reason": reason})
            raise
        applied = condition(
            RECONCILED, TRUE, APPLIED, "ConfigMap, Deployment, Service and Ingress match the spec", observed_generation=generation
        )
        self._publish(darkroom, applied, live, losses)
        return Result()

    # -- hosts ---------------------------------------------------------------------------------

    def _rivals(self, darkroom: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
        """The cached Darkrooms asking for each of ``darkroom``'s sub-domains (itself included)."""
        informer = self.client.cache.informer(DARKROOMS)
        if informer is None:  # outside the runtime: no informer, ask the server
            everyone = self.client.list(DARKROOMS)
            return {sub: [d for d in everyone if sub in hosts.subdomains(d)] for sub in hosts.subdomains(darkroom)}
        return {sub: list(informer.store.by_index(hosts.SUBDOMAIN_INDEX, sub)) for sub in hosts.subdomains(darkroom)}

    def _sharing_keys(self, darkroom: Mapping[str, Any]) -> list[str]:
        """``to_keys`` of the sub-domain watch: the other Darkrooms asking for a sub-domain ``darkroom`` asks for."""
        mine = hosts.key(darkroom)
        return sorted({hosts.key(d) for ds in self._rivals(darkroom).values() for d in ds} - {mine})

    # -- children ----------------------------------------------------------------------------

    def _cached_child(self, resource: Resource, darkroom: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The cached object named after the Darkroom (children carry our managed-by label, which the
        informers select on), whoever owns it, or None — never a server round trip."""
        meta = darkroom["metadata"]
        try:
            # Children are named after the Darkroom: one keyed cache read, settling only that key.
            return self.client.peek(resource, meta["name"], namespace=meta["namespace"])
        except KeyError:  # no informer for this kind (a caller outside the runtime): ask the server
            try:
                return self.client.get(resource, meta["name"], namespace=meta["namespace"])
            except NotFound:
                return None

    def _our_child(self, resource: Resource, darkroom: Mapping[str, Any], desired: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Our child (controller ownerReference to this Darkroom's UID), or None when the name is free.

        A name taken by anything else — another controller's object, an orphan, an object someone
        created by hand — is a :class:`ChildConflict`: never modified, adopted or deleted. Objects
        without our label are not in the cache; for a name missing there a dry-run create asks the
        server whether it is free (409 if not) with the ``create`` permission we have anyway: the
        reconciler is granted no ``get``.
        """
        live = self._cached_child(resource, darkroom)
        if live is None:
            try:
                self.client.create(resource, desired, dry_run=True)
            except AlreadyExists as e:
                raise _conflict(resource, darkroom, None) from e
            return None
        if _controller_uid(live) != darkroom["metadata"]["uid"]:
            raise _conflict(resource, darkroom, live)
        return live

    def _children(self, darkroom: Mapping[str, Any]) -> dict[Resource, Mapping[str, Any] | None]:
        """The live children we control (cache reads), for status when nothing was applied."""
        uid = darkroom["metadata"]["uid"]
        found = {resource: self._cached_child(resource, darkroom) for resource, _ in CHILDREN}
        return {resource: child if child is not None and _controller_uid(child) == uid else None for resource, child in found.items()}

    def _apply(self, darkroom: Mapping[str, Any], losses: Mapping[str, str]) -> dict[Resource, Mapping[str, Any] | None]:
        """Apply every child; the Ingress only for the hosts this Darkroom wins (none: ours is deleted)."""
        meta = darkroom["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        # Every name first: a conflict on the Service must not leave a Deployment running without it.
        ours = {resource: self._our_child(resource, darkroom, build(darkroom, self.settings)) for resource, build in CHILDREN}
        result: dict[Resource, Mapping[str, Any] | None] = {}
        for resource, build in CHILDREN:
            live = ours[resource]
            if resource is INGRESSES and losses:
                served = [sub for sub in hosts.subdomains(darkroom) if sub not in losses]
                if not served:
                    self._withdraw(resource, live)
                    result[resource] = None
                    continue
                view: dict[str, Any] = thaw(darkroom)
                view["spec"]["subDomains"] = served
                desired = stamp(build(view, self.settings))
            else:
                desired = stamp(build(darkroom, self.settings))
            if live is not None and up_to_date(live, desired):
                result[resource] = live
                continue
            changed = differences(live, desired) if live is not None else ["(not in cache)"]
            log.info("applying child", extra={"controller": self.name, "key": key, "kind": resource.kind, "changed": changed[:10]})
            try:
                applied = self.client.apply(resource, desired, field_manager=self.settings.field_manager, force=True)
            except Invalid as e:
                existing = self._diagnose(resource, darkroom, e)
                # Ours, but the merge of our fields with another manager's list entries is invalid (an edited
                # Service port keeps its name: two "http" ports). kube-apiserver rejects the whole apply, so
                # repair by replacing, as below.
                log.info("replacing child", extra={"controller": self.name, "key": key, "kind": resource.kind, "changed": changed[:10]})
                applied = self.client.update(resource, overlay(existing, desired), field_manager=self.settings.field_manager)
            if not up_to_date(applied, desired):
                # Entries another field manager owns in our lists (an edited port): apply cannot drop them; replace.
                replacing = differences(applied, desired)[:10]
                log.info("replacing child", extra={"controller": self.name, "key": key, "kind": resource.kind, "changed": replacing})
                applied = self.client.update(resource, overlay(applied, desired), field_manager=self.settings.field_manager)
            result[resource] = applied
        return result

    def _withdraw(self, resource: Resource, live: Mapping[str, Any] | None) -> None:
        """Delete our child (exactly that object: UID precondition) that must not exist any more."""
        if live is None:
            return
        meta = live["metadata"]
        log.info("deleting child", extra={"controller": self.name, "key": f"{meta['namespace']}/{meta['name']}", "kind": resource.kind})
        with contextlib.suppress(NotFound):
            self.client.delete(resource, meta["name"], namespace=meta["namespace"], uid=meta["uid"])

    def _diagnose(self, resource: Resource, darkroom: Mapping[str, Any], error: Invalid) -> Mapping[str, Any]:
        """After a rejected apply: our child (to be repaired by replacing it), else the original error."""
        live = self._cached_child(resource, darkroom)
        if live is None or _controller_uid(live) != darkroom["metadata"]["uid"]:
            raise error
        return live

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
        status = darkroom.get("status") or {}
        now = self.context.now()
        deployment, ingress = live.get(DEPLOYMENTS), live.get(INGRESSES)
        if losses:
            ready = condition(
                READY, FALSE, HOST_CONFLICT, hosts.message(losses, self.settings.domain), observed_generation=meta.get("generation")
            )
        else:
            ready = readiness(deployment, observed_generation=meta.get("generation"), secret=children.credentials_secret(darkroom))
        old = status.get("conditions") or ()
        ours = set_condition(set_condition(old, ready, now=now), reconciled, now=now)
        desired: dict[str, Any] = {
            "observedGeneration": meta.get("generation"),
            "domains": [rule.get("host", "") for rule in ((ingress or {}).get("spec") or {}).get("rules") or ()],
            "readyReplicas": int(((deployment or {}).get("status") or {}).get("readyReplicas") or 0),
            "conditions": [c for c in ours if c["type"] in (READY, RECONCILED)],
        }
        unchanged = (
            all(status.get(k) == desired[k] for k in ("observedGeneration", "readyReplicas"))
            and list(status.get("domains") or ()) == desired["domains"]
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
        events: list[tuple[str, str, str]] = []
        if reconciled["status"] == FALSE and _newly_failed(old_reconciled, reconciled):
            events.append((WARNING, reconciled["reason"], reconciled["message"]))
        elif reconciled["status"] == TRUE and old_reconciled is not None and old_reconciled.get("status") == FALSE:
            events.append((NORMAL, "Reconciled", reconciled["message"]))
        if ready["status"] == TRUE and transitioned(old_ready, ready):
            events.append((NORMAL, "Ready", ready["message"]))
        elif old_ready is not None and old_ready.get("status") == TRUE and ready["status"] != TRUE:
            events.append((NORMAL, "NotReady", ready["message"]))
        for type_, reason, message in events:
            try:
                self.context.recorder.event(darkroom, type_=type_, reason=reason, message=message)
            except ClusterError:
                log.warning(
                    "could not record event %s on darkroom %s/%s", reason, darkroom["metadata"]["namespace"], darkroom["metadata"]["name"]
                )


def _conflict(resource: Resource, darkroom: Mapping[str, Any], existing: Mapping[str, Any] | None) -> ChildConflict:
    """``existing``: the object, when the cache has it (a dry-run create only tells that the name is taken)."""
    name, owner = darkroom["metadata"]["name"], _controller_uid(existing) if existing is not None else None
    whose = f"controlled by another owner (uid {owner})" if owner else "not controlled by this Darkroom"
    return ChildConflict(
        f'{resource.kind} "{name}" already exists and is {whose}: it is left alone; delete or rename it, or rename the Darkroom',
        status=409,
        reason="Conflict",
    )


def _newly_failed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a failed Reconciled condition deserves a Warning event: a new failure, a different kind of
    failure, or a new spec generation that still fails differently. Retries of the same failure
    (whose API error text may vary) do not repeat it."""
    if old is None or transitioned(old, new) or old.get("reason") != new["reason"]:
        return True
    return old.get("observedGeneration") != new.get("observedGeneration") and old.get("message") != new["message"]


def _controller_uid(obj: Mapping[str, Any]) -> str | None:
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return next((ref.get("uid") for ref in refs if ref.get("controller")), None)
