"""A simulated Deployment's ReplicaSets and the ReplicaSet controller, in miniature (kube-controller-manager's
deployment and replicaset controllers); run by :class:`~devcluster.controllers.Controllers`, whose
``deployment`` work calls :meth:`ReplicaSets.sync_for_deployment` and which schedules ``replicaset`` work.

- **The Deployment's ReplicaSets**: the current one is ``<deployment>-<pod-template-hash>``, the hash of the
  Deployment's pod template (:func:`~devcluster.statefulsets.template_hash`: deterministic and new exactly when
  the template changes, not kube's value). It carries the ``pod-template-hash`` label (in its labels, selector
  and template), a controller reference to the Deployment and the annotations ``deployment.kubernetes.io/
  revision`` / ``desired-replicas`` / ``max-replicas``; the Deployment gets the revision annotation too (with its
  status write, as kube's controller does). It has
  ``spec.replicas`` of the Deployment; every other ReplicaSet the Deployment controls scales to 0 at once
  (kube's rolling update does it step by step). A template changed back finds its old ReplicaSet again, with a
  new revision.
- **The ReplicaSet controller**: creates the missing pods (``generateName: <replicaset>-``, so
  ``<replicaset>-<5 chars>``, bound to the simulated node, :func:`~devcluster.pods.new_pod`), deletes the
  surplus (unready ones first, then the newest) and reports ``replicas``, ``fullyLabeledReplicas``,
  ``readyReplicas``, ``availableReplicas`` (omitted when 0, as kube does) and ``observedGeneration``.
  The pods turn Running and Ready by :class:`~devcluster.pods.Kubelet`; the garbage collector deletes them
  (and the ReplicaSets) with their owner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devcluster.catalog import Catalog
from devcluster.pods import PODS, controller_of, is_ready, new_pod, owner_reference
from devcluster.statefulsets import template_hash
from devcluster.store import Change, Store
from devcluster.writing import WriteOptions, Writer, copy

REPLICASETS = "apps/replicasets"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
_CONTROLLER = WriteOptions(manager="kube-controller-manager", field_validation="Ignore")
_CONTROLLER_STATUS = WriteOptions(manager="kube-controller-manager", field_validation="Ignore", subresource="status")


def _max_surge(dep: dict[str, Any], replicas: int) -> int:
    strategy = (dep.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(surge, str) and surge.endswith("%"):
        return -(-replicas * int(surge[:-1]) // 100)  # rounded up, as kube's ResolveFenceposts
    return int(surge)


def replicaset_name(dep: dict[str, Any]) -> tuple[str, str]:
    """(name, hash) of the Deployment's current ReplicaSet."""
    template = copy((dep.get("spec") or {}).get("template") or {})
    (template.get("metadata") or {}).get("labels", {}).pop(HASH_LABEL, None)
    digest = template_hash(template)
    return f"{dep['metadata']['name'][:243]}-{digest}", digest


class ReplicaSets:
    """The Deployment → ReplicaSet → Pod simulation; the caller's scheduling."""

    def __init__(self, *, store: Store, catalog: Catalog, writer: Writer, schedule: Callable[..., None]) -> None:
        self.store, self.catalog, self.writer, self._schedule = store, catalog, writer, schedule

    def on_change(self, change: Change) -> None:
        """A ReplicaSet, or a pod a ReplicaSet controls, changed: sync that ReplicaSet."""
        if change.resource == REPLICASETS and change.type != "DELETED":
            self._schedule("replicaset", change.namespace, change.name)
        elif change.resource == PODS:
            ref = controller_of(change.obj)
            if ref is not None and ref.get("kind") == "ReplicaSet":
                self._schedule("replicaset", change.namespace, ref.get("name", ""))

    def _owned(self, owner: dict[str, Any], resource: str) -> list[dict[str, Any]]:
        uid, namespace = owner["metadata"]["uid"], owner["metadata"]["namespace"]
        found = (self.store.get(r, namespace, n) for r, _, n in self.store.dependents(uid) if r == resource)
        return [o for o in found if o is not None and (controller_of(o) or {}).get("uid") == uid]

    # -- the deployment controller's part ------------------------------------------------------

    def sync_for_deployment(self, dep: dict[str, Any]) -> tuple[str, str]:
        """Make the current ReplicaSet (scaled to the Deployment) and scale the others to 0; its name and revision
        (the Deployment's status write carries the revision annotation, as kube's does)."""
        name, digest = replicaset_name(dep)
        spec = dep.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        owned = self._owned(dep, REPLICASETS)
        current = next((rs for rs in owned if rs["metadata"]["name"] == name), None)
        top = max((_revision(rs) for rs in owned), default=0)
        revision = str(top if current is not None and _revision(current) == top else top + 1)
        annotations = {
            "deployment.kubernetes.io/desired-replicas": str(replicas),
            "deployment.kubernetes.io/max-replicas": str(replicas + _max_surge(dep, replicas)),
            REVISION: revision,
        }
        resource = self.catalog.builtin("apps", "replicasets")
        namespace = dep["metadata"]["namespace"]
        if current is None:
            if self.store.get(REPLICASETS, namespace, name) is not None:
                return name, revision  # someone else's ReplicaSet of that name: kube would bump collisionCount; left alone
            template = copy(spec.get("template") or {})
            template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = digest
            selector = copy(spec.get("selector") or {})
            selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
            body = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": dict(template["metadata"]["labels"]),
                    "annotations": annotations,
                    "ownerReferences": [owner_reference(dep, "Deployment")],
                },
                "spec": {
                    "replicas": replicas,
                    "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                    "selector": selector,
                    "template": template,
                },
            }
            self.writer.create(resource, namespace, body, _CONTROLLER)
        elif current["spec"].get("replicas") != replicas or any(
            (current["metadata"].get("annotations") or {}).get(k) != v for k, v in annotations.items()
        ):
            new = copy(current)
            new["spec"]["replicas"] = replicas
            new["metadata"]["annotations"] = {**(new["metadata"].get("annotations") or {}), **annotations}
            self.writer.update(resource, namespace, name, new, _CONTROLLER)
        for rs in owned:
            if rs["metadata"]["name"] != name and rs["spec"].get("replicas") != 0:
                self.writer.update(
                    resource, namespace, rs["metadata"]["name"], {**copy(rs), "spec": {**rs["spec"], "replicas": 0}}, _CONTROLLER
                )
        return name, revision

    # -- the replicaset controller -------------------------------------------------------------

    def sync_replicaset(self, namespace: str, name: str) -> None:
        rs = self.store.get(REPLICASETS, namespace, name)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        spec = rs.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
        pods = [p for p in self._owned(rs, PODS) if not p["metadata"].get("deletionTimestamp")]
        pod_resource = self.catalog.builtin("", "pods")
        if len(pods) < wanted:
            template = spec.get("template") or {}
            for _ in range(wanted - len(pods)):
                body = new_pod(template, rs, "ReplicaSet", labels={}, generateName=f"{name}-")
                pods.append(self.writer.create(pod_resource, namespace, body, _CONTROLLER).obj)
        elif len(pods) > wanted:
            # kube's ActivePods ranking, in short: unready before ready, then the newest first
            surplus = sorted(pods, key=lambda p: (is_ready(p), _negated(p["metadata"].get("creationTimestamp", ""))))
            for pod in surplus[: len(pods) - wanted]:
                self.writer.delete(pod_resource, namespace, pod["metadata"]["name"], {}, _CONTROLLER)
                pods.remove(pod)
        ready = sum(1 for p in pods if is_ready(p))
        counts = {"fullyLabeledReplicas": len(pods), "readyReplicas": ready, "availableReplicas": ready}
        status: dict[str, Any] = {"replicas": len(pods), **{k: v for k, v in counts.items() if v}}
        status["observedGeneration"] = int(rs["metadata"].get("generation") or 1)
        if status != {k: v for k, v in (rs.get("status") or {}).items() if k != "conditions"}:
            status = {**status, **({"conditions": rs["status"]["conditions"]} if (rs.get("status") or {}).get("conditions") else {})}
            self.writer.update(
                self.catalog.builtin("apps", "replicasets"), namespace, name, {**copy(rs), "status": status}, _CONTROLLER_STATUS
            )


def _revision(rs: dict[str, Any]) -> int:
    return int((rs["metadata"].get("annotations") or {}).get(REVISION) or 0)


def _negated(timestamp: str) -> tuple[int, ...]:
    """Sorts newer timestamps first."""
    return tuple(-ord(c) for c in timestamp)
