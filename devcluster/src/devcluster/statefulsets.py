"""Simulated StatefulSets and their PersistentVolumeClaims: kube-controller-manager's StatefulSet
controller, the volume binder and the pvc-protection controller, in miniature.

Owned here, run by :class:`~devcluster.controllers.Controllers` (which routes store changes to
:meth:`StatefulSets.on_change` and runs the scheduled ``statefulset``/``claim`` work):

- **StatefulSet status**, as the real controller reports it while its pods start: after a change the
  status shows ``observedGeneration``, ``replicas``/``updatedReplicas`` = ``spec.replicas``, no ready
  pods (or those still ready when only ``replicas`` changed) and ``currentRevision`` still the old
  revision; ``ready_delay_s`` later (as if the pods became ready) ``readyReplicas``,
  ``availableReplicas`` and ``currentReplicas`` = ``spec.replicas`` and ``currentRevision`` =
  ``updateRevision``. Zero counts are omitted as kube omits them (``replicas`` and
  ``availableReplicas`` always show), ``collisionCount`` is 0. The annotation
  ``simulation.example.com/unready: "true"`` keeps the pods unready (and so the update incomplete).
  Revisions are named ``<name>-<hash>`` like kube's ControllerRevisions, the hash being FNV-1 32 of
  devcluster's canonical JSON of the pod template, encoded as kube encodes its hash: deterministic,
  changes exactly when the template does, but not the value kube computes (which hashes Go's JSON of
  the template). No ControllerRevisions are created.
- **Pods** ``<name>-<ordinal>`` for every ordinal in range (:meth:`StatefulSets.sync_statefulset_pods`), all at
  once: controlled by the StatefulSet, labelled ``controller-revision-hash``, ``statefulset.kubernetes.io/pod-name``
  and ``apps.kubernetes.io/pod-index``, with ``hostname``/``subdomain`` and one ``persistentVolumeClaim`` volume per
  claim template; a pod of another revision or out of range is deleted (and, in range, made again). The
  simulated kubelet (:mod:`devcluster.pods`) turns them Running and Ready.
- **Claims from volumeClaimTemplates**: ``<template>-<statefulset>-<ordinal>`` for every ordinal in
  range, created from the template (its labels plus the selector's ``matchLabels``) and never
  recreated while one of that name exists, whoever made it. Owner references follow
  ``persistentVolumeClaimRetentionPolicy.whenDeleted`` as kube's ``updateClaimOwnerRefForSetAndPod``
  does: ``Delete`` gives the claim a controller reference to the StatefulSet (so the garbage collector
  deletes it with it), ``Retain`` none; a claim controlled by someone else keeps its references.
  ``whenScaled`` is treated as ``Retain`` (claims of scaled-down ordinals stay).
- **Binding**: when the pods "start" (the ready delay), each Pending claim of an ordinal in range
  gets ``spec.volumeName: pvc-<uid>``, the binder's annotations and ``status`` Bound with the
  requested capacity. devcluster has no PersistentVolumes or StorageClasses, so nothing else is
  bound and no class is defaulted.
- **pvc-protection**: a deleted claim keeps its ``kubernetes.io/pvc-protection`` finalizer while a
  StatefulSet ordinal in range or a Pod still uses it; a bound claim carries the ``Unused``
  condition (``PodUsingPVC`` / ``NoPodsUsingPVC``).
"""

from __future__ import annotations

from typing import Any

import orjson

from devcluster.pods import UNREADY_ANNOTATION, Simulation, controller_of, new_pod
from devcluster.preparing import PVC_PROTECTION_FINALIZER
from devcluster.store import Change
from devcluster.writing import WriteOptions, copy

STATEFULSETS = "apps/statefulsets"
CLAIMS = "/persistentvolumeclaims"
PODS = "/pods"
_CONTROLLER = WriteOptions(manager="kube-controller-manager", field_validation="Ignore")
_CONTROLLER_STATUS = WriteOptions(manager="kube-controller-manager", field_validation="Ignore", subresource="status")
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand.SafeEncodeString's alphabet
_BOUND_ANNOTATIONS = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}


def template_hash(template: dict[str, Any]) -> str:
    """FNV-1 32 of devcluster's canonical JSON of a pod template, encoded as kube encodes its hashes."""
    data = orjson.dumps({"spec": {"template": {**template, "$patch": "replace"}}}, option=orjson.OPT_SORT_KEYS)
    fnv = 0x811C9DC5
    for byte in data:
        fnv = (fnv * 0x01000193) & 0xFFFFFFFF ^ byte
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(fnv))


def revision_name(sts: dict[str, Any]) -> str:
    """``<name>-<hash of the pod template>`` (see the module docstring)."""
    template = ((sts.get("spec") or {}).get("template")) or {}
    return f"{sts['metadata']['name'][:223]}-{template_hash(template)}"


def claim_names(sts: dict[str, Any], ordinals: range) -> list[tuple[dict[str, Any], str]]:
    """(template, claim name) of every volumeClaimTemplate for ``ordinals``."""
    name = sts["metadata"]["name"]
    templates = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
    return [(t, f"{(t.get('metadata') or {}).get('name', '')}-{name}-{i}") for i in ordinals for t in templates]


def _replicas(sts: dict[str, Any]) -> int:
    return int((sts.get("spec") or {}).get("replicas", 1))


def _is_ours(ref: dict[str, Any], sts: dict[str, Any]) -> bool:
    return ref.get("apiVersion") == "apps/v1" and ref.get("kind") == "StatefulSet" and ref.get("name") == sts["metadata"]["name"]


def wanted_owner_references(claim: dict[str, Any], sts: dict[str, Any]) -> list[dict[str, Any]]:
    """The claim's ownerReferences under the StatefulSet's retention policy (kube's isClaimOwnerUpToDate /
    updateClaimOwnerRefForSetAndPod, without pods: whenScaled counts as Retain)."""
    refs: list[dict[str, Any]] = list(claim["metadata"].get("ownerReferences") or [])
    uid = sts["metadata"]["uid"]
    if any(_is_ours(r, sts) and r.get("uid") != uid for r in refs):
        return refs  # a reference to an earlier StatefulSet of this name: left to the garbage collector
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    when_deleted, when_scaled = policy.get("whenDeleted", "Retain"), policy.get("whenScaled", "Retain")
    foreign_controller = any(not _is_ours(r, sts) and r.get("controller") for r in refs)
    kept = [r for r in refs if not _is_ours(r, sts)]
    if foreign_controller and (when_deleted, when_scaled) != ("Retain", "Retain"):
        return kept if any(_is_ours(r, sts) for r in refs) else refs
    if when_deleted == "Delete":
        name = sts["metadata"]["name"]
        kept.append(
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}
        )
    return kept


def _same_references(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    def key(refs: list[dict[str, Any]]) -> list[bytes]:
        return sorted(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in refs)

    return key(a) == key(b)


class StatefulSets(Simulation):
    """The StatefulSet, binder and pvc-protection simulation; its own timers, the caller's scheduling."""

    def on_change(self, change: Change) -> None:
        """Schedule what a committed change concerns (called for every change)."""
        if change.resource == STATEFULSETS:
            if change.type != "DELETED":
                self._schedule("statefulset", change.namespace, change.name)
                self._schedule("statefulset_pods", change.namespace, change.name)
            elif timer := self._timers.pop((change.namespace, change.name), None):
                timer.cancel()
            self._schedule_claims_of(change.obj, change.namespace)
        elif change.resource == CLAIMS and change.type != "DELETED":
            self._schedule("claim", change.namespace, change.name)
        elif change.resource == PODS:
            owner = controller_of(change.obj)
            if change.type == "DELETED" and owner is not None and owner.get("kind") == "StatefulSet":
                self._schedule("statefulset_pods", change.namespace, owner.get("name", ""))
            for pod in (change.obj, change.prev):
                for volume in ((pod or {}).get("spec") or {}).get("volumes") or []:
                    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                    if claim:
                        self._schedule("claim", change.namespace, claim)

    def _schedule_claims_of(self, sts: dict[str, Any], namespace: str) -> None:
        prefixes = tuple(f"{(t.get('metadata') or {}).get('name', '')}-{sts['metadata']['name']}-" for t, _ in claim_names(sts, range(1)))
        for claim in self.store.items(CLAIMS, namespace) if prefixes else ():
            if claim["metadata"]["name"].startswith(prefixes):
                self._schedule("claim", namespace, claim["metadata"]["name"])

    # -- StatefulSets ------------------------------------------------------------------------

    def sync_statefulset(self, namespace: str, name: str, ready_generation: int | None = None) -> None:
        sts = self.store.get(STATEFULSETS, namespace, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            timer = self._timers.pop((namespace, name), None)
            if timer:
                timer.cancel()
            return
        generation = int(sts["metadata"].get("generation") or 1)
        in_range = claim_names(sts, range(_replicas(sts)))
        for template, claim_name in in_range:
            self._ensure_claim(sts, template, claim_name)
        final = self._status(sts, generation, done=True)
        bound = all(((self.store.get(CLAIMS, namespace, c) or {}).get("status") or {}).get("phase") == "Bound" for _, c in in_range)
        if ready_generation == generation or (sts.get("status") == final and bound):
            for _, claim_name in in_range:
                self._bind(namespace, claim_name)
            self._write_status(sts, final)
            return
        self._write_status(sts, self._status(sts, generation, done=False))
        self._arm_timer(namespace, name, generation)

    def sync_statefulset_pods(self, namespace: str, name: str) -> None:
        """Pods ``<name>-<ordinal>`` of the current revision for every ordinal in range: a pod out of range or of
        another revision is deleted (and, in range, made again at once), a missing one created."""
        sts = self.store.get(STATEFULSETS, namespace, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        pods = self.catalog.builtin("", "pods")
        revision, replicas, uid = revision_name(sts), _replicas(sts), sts["metadata"]["uid"]
        for pod_name in (n for r, _, n in self.store.dependents(uid) if r == PODS):
            pod = self.store.get(PODS, namespace, pod_name)
            if pod is None or pod["metadata"].get("deletionTimestamp") or (controller_of(pod) or {}).get("uid") != uid:
                continue
            suffix = pod_name.rsplit("-", 1)[-1]
            labels = pod["metadata"].get("labels") or {}
            if not suffix.isdigit() or int(suffix) >= replicas or labels.get("controller-revision-hash") != revision:
                self.writer.delete(pods, namespace, pod_name, {}, _CONTROLLER)
        spec = sts.get("spec") or {}
        claims = claim_names(sts, range(replicas))
        for ordinal in range(replicas):
            pod_name = f"{name}-{ordinal}"
            if self.store.get(PODS, namespace, pod_name) is not None:
                continue
            labels = {
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": pod_name,
                "apps.kubernetes.io/pod-index": str(ordinal),
            }
            body = new_pod(spec.get("template") or {}, sts, "StatefulSet", labels=labels, name=pod_name)
            body["spec"].update({"hostname": pod_name, **({"subdomain": spec["serviceName"]} if spec.get("serviceName") else {})})
            mine = {(t.get("metadata") or {}).get("name", ""): c for t, c in claims if c.endswith(f"-{name}-{ordinal}")}
            volumes = [v for v in body["spec"].get("volumes") or [] if v.get("name") not in mine]
            body["spec"]["volumes"] = [{"name": t, "persistentVolumeClaim": {"claimName": c}} for t, c in mine.items()] + volumes
            if not body["spec"]["volumes"]:
                del body["spec"]["volumes"]
            self.writer.create(pods, namespace, body, _CONTROLLER)

    def _status(self, sts: dict[str, Any], generation: int, *, done: bool) -> dict[str, Any]:
        """What kube's controller reports: pods starting (``done=False``) or started."""
        previous = sts.get("status") or {}
        replicas = _replicas(sts)
        update = revision_name(sts)
        current = previous.get("currentRevision") or update
        unready = (sts["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION) == "true"
        if done:
            ready = 0 if unready else replicas
        else:  # pods of a new revision restart; a scale keeps the ready ones
            ready = 0 if unready or current != update else min(int(previous.get("readyReplicas") or 0), replicas)
        if ready == replicas:  # completeUpdate
            current = update
        counts = {"readyReplicas": ready, "currentReplicas": replicas if current == update else 0, "updatedReplicas": replicas}
        status: dict[str, Any] = {"observedGeneration": generation, "replicas": replicas}
        status.update({k: v for k, v in counts.items() if v})  # omitempty
        status.update({"currentRevision": current, "updateRevision": update, "collisionCount": 0, "availableReplicas": ready})
        return status

    def _write_status(self, sts: dict[str, Any], status: dict[str, Any]) -> None:
        if status != sts.get("status"):
            resource = self.catalog.builtin("apps", "statefulsets")
            meta = sts["metadata"]
            self.writer.update(resource, meta["namespace"], meta["name"], {**copy(sts), "status": status}, _CONTROLLER_STATUS)

    def _arm_timer(self, namespace: str, name: str, generation: int) -> None:
        if self.loop is None:
            return
        old = self._timers.pop((namespace, name), None)
        if old:
            old.cancel()
        self._timers[(namespace, name)] = self.loop.call_later(self.ready_delay_s, self._timer_fired, namespace, name, generation)

    def _timer_fired(self, namespace: str, name: str, generation: int) -> None:
        self._timers.pop((namespace, name), None)
        self._run(("statefulset", namespace, name, generation))

    # -- claims ------------------------------------------------------------------------------

    def _ensure_claim(self, sts: dict[str, Any], template: dict[str, Any], claim_name: str) -> None:
        """Create a missing claim (getPersistentVolumeClaims), then keep its owner references to the policy."""
        namespace = sts["metadata"]["namespace"]
        claims = self.catalog.builtin("", "persistentvolumeclaims")
        claim = self.store.get(CLAIMS, namespace, claim_name)
        if claim is None:
            body = copy({k: v for k, v in template.items() if k != "status"})
            meta = body.setdefault("metadata", {})
            selected = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            meta.update({"name": claim_name, "namespace": namespace, "labels": {**(meta.get("labels") or {}), **selected}})
            body.update({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
            claim = self.writer.create(claims, namespace, body, _CONTROLLER).obj
        if claim["metadata"].get("deletionTimestamp"):
            return
        refs = wanted_owner_references(claim, sts)
        if not _same_references(refs, claim["metadata"].get("ownerReferences") or []):
            new = copy(claim)
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self.writer.update(claims, namespace, claim_name, new, _CONTROLLER)

    def _bind(self, namespace: str, name: str) -> None:
        """The binder's two writes: the claim names its (simulated) volume, then its status says Bound."""
        claim = self.store.get(CLAIMS, namespace, name)
        if claim is None or claim["metadata"].get("deletionTimestamp") or (claim.get("status") or {}).get("phase") != "Pending":
            return
        claims = self.catalog.builtin("", "persistentvolumeclaims")
        if not (claim.get("spec") or {}).get("volumeName"):
            new = copy(claim)
            new["spec"]["volumeName"] = f"pvc-{claim['metadata']['uid']}"
            new["metadata"]["annotations"] = {**(new["metadata"].get("annotations") or {}), **_BOUND_ANNOTATIONS}
            claim = self.writer.update(claims, namespace, name, new, _CONTROLLER).obj
        spec = claim.get("spec") or {}
        status = {
            **(claim.get("status") or {}),
            "phase": "Bound",
            "accessModes": list(spec.get("accessModes") or []),
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage")},
        }
        self.writer.update(claims, namespace, name, {**copy(claim), "status": status}, _CONTROLLER_STATUS)

    def _used(self, claim: dict[str, Any]) -> bool:
        """A StatefulSet ordinal in range (its simulated pod) or a live Pod mounts the claim."""
        namespace, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
        for sts in self.store.items(STATEFULSETS, namespace):
            if not sts["metadata"].get("deletionTimestamp") and any(c == name for _, c in claim_names(sts, range(_replicas(sts)))):
                return True
        for pod in self.store.items(PODS, namespace):
            if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            if any((v.get("persistentVolumeClaim") or {}).get("claimName") == name for v in (pod.get("spec") or {}).get("volumes") or []):
                return True
        return False

    def sync_claim(self, namespace: str, name: str) -> None:
        """pvc-protection: release a deleted claim nothing uses; keep a bound claim's Unused condition true."""
        claim = self.store.get(CLAIMS, namespace, name)
        if claim is None:
            return
        claims = self.catalog.builtin("", "persistentvolumeclaims")
        used = self._used(claim)
        if claim["metadata"].get("deletionTimestamp"):
            finalizers = claim["metadata"].get("finalizers") or []
            if PVC_PROTECTION_FINALIZER in finalizers and not used:
                new = copy(claim)
                new["metadata"]["finalizers"] = [f for f in finalizers if f != PVC_PROTECTION_FINALIZER]
                self.writer.update(claims, namespace, name, new, _CONTROLLER)
            return
        status = claim.get("status") or {}
        if status.get("phase") != "Bound":
            return
        conditions = list(status.get("conditions") or [])
        old = next((c for c in conditions if c.get("type") == "Unused"), None)
        wanted = "False" if used else "True"
        if old is not None and old.get("status") == wanted:
            return
        reason, message = (
            ("PodUsingPVC", "A pod is currently referencing this PVC")
            if used
            else ("NoPodsUsingPVC", "No pods are currently referencing this PVC")
        )
        condition = {
            "type": "Unused",
            "status": wanted,
            "lastProbeTime": None,
            "lastTransitionTime": self.clock(),
            "reason": reason,
            "message": message,
        }
        conditions = [condition if c is old else c for c in conditions] if old is not None else [*conditions, condition]
        self.writer.update(claims, namespace, name, {**copy(claim), "status": {**status, "conditions": conditions}}, _CONTROLLER_STATUS)
