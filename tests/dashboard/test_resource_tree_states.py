"""The resource tree of a detail page, and the states of the objects in it (no server).

Behaviours: a Pod is Running (good) when ready, Not ready (attention) when running unready, Pending (progress), and
its container's failing waiting reason (CrashLoopBackOff) wins and is bad; its restarts are summed over its
containers. A workload is "n of m ready": Ready, Starting, or Scaled to 0 (idle). A claim is Bound, Pending or
Lost; an EndpointSlice Ready when every endpoint is, and a Service's are its children.
:func:`backend.dashboard.tree.build` nests Deployment → ReplicaSets (newest first; those scaled to 0 with no Pods
folded apart) → Pods, and StatefulSet → Pods → the claims they mount (shown there, not again under the object), each
found by index lookups of the person's client — never a list; a kind the person may not list is one node saying so.
:func:`backend.dashboard.tree.descends_from` finds a Pod's, a ReplicaSet's and a claim's page by walking controller
references up (by key) and a claim's Pods through the claim index; a page's stream names ``children`` for them — to
a person who may list Pods there, never to one who may not — and ``events`` for an Event about one of them, whose
UIDs (:func:`backend.dashboard.tree.uids`) the page's timeline looks its Events up by. A Pod's node links to the
page's logs page with that pod chosen, for a person who may read Pods' logs there (asked once per tree, and only once
a Pod is shown); a person who may not, or whose question cannot be answered, gets no link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from backend.api.watch.broadcasting import Broadcaster
from backend.api.watch.streams import Subscription
from backend.core.access import CLAIM, CONTROLLER_UID, claims
from backend.dashboard import tree
from backend.dashboard.livedetail import DetailFilter
from cluster import FrozenDict, freeze
from kinds import workloads

pytestmark = pytest.mark.unit

NS = "team-a"
PAGE_UID = "uid-of-web"


def obj(kind: str, name: str, uid: str, *, controller: tuple[str, str, str] | None = None, **body: Any) -> FrozenDict:
    """A cached object; ``controller``: (kind, name, uid) of its controller reference."""
    meta: dict[str, Any] = {"name": name, "namespace": NS, "uid": uid, "creationTimestamp": body.pop("created", "2031-01-01T00:00:00Z")}
    if controller:
        kind_, name_, uid_ = controller
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind_, "name": name_, "uid": uid_, "controller": True}]
    return cast(FrozenDict, freeze({"kind": kind, "metadata": meta, **body}))


def pod(name: str, owner: FrozenDict, owner_kind: str, *, ready: bool = True, claim: str = "", **status: Any) -> FrozenDict:
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}] if claim else []
    conditions = [{"type": "Ready", "status": "True" if ready else "False", "reason": "" if ready else "ContainersNotReady"}]
    body = {"phase": "Running", "conditions": conditions, **status}
    return obj("Pod", name, f"uid-{name}", controller=(owner_kind, owner["metadata"]["name"], owner["metadata"]["uid"]),
               spec={"volumes": volumes}, status=body)  # fmt: skip


# -- states -------------------------------------------------------------------------------------------------------------


def test_a_pods_state_follows_kubectl_and_its_failing_container_wins() -> None:
    rs = obj("ReplicaSet", "web-1", "uid-rs")
    assert workloads.pod_state(pod("a", rs, "ReplicaSet")) == workloads.POD_READY
    assert workloads.pod_state(pod("a", rs, "ReplicaSet")).tone == "good"
    unready = workloads.pod_state(pod("a", rs, "ReplicaSet", ready=False))
    assert (unready.word, unready.tone, unready.detail) == ("Not ready", "attention", "ContainersNotReady")
    pending = obj("Pod", "p", "uid-p", status={"phase": "Pending"})
    assert (workloads.pod_state(pending).word, workloads.pod_state(pending).tone) == ("Pending", "progress")
    crashing = {"name": "c", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}}}
    sidecar = {"name": "s", "restartCount": 1, "state": {"running": {}}}
    looping = pod("a", rs, "ReplicaSet", containerStatuses=[crashing, sidecar])
    state = workloads.pod_state(looping)
    assert (state.key, state.word, state.tone) == ("crashloopbackoff", "CrashLoopBackOff", "bad")
    assert state.detail == "container c: back-off 40s"
    assert workloads.restarts(looping) == 5
    assert workloads.pod_state(obj("Pod", "p", "u", status={"phase": "Succeeded"})).word == "Completed"
    assert workloads.pod_state(obj("Pod", "p", "u", status={"phase": "Failed"})).tone == "bad"


def test_a_workload_is_n_of_m_ready_and_a_claim_its_phase() -> None:
    def workload(wanted: int, ready: int) -> FrozenDict:
        return obj("ReplicaSet", "r", "u", spec={"replicas": wanted}, status={"readyReplicas": ready})

    assert workloads.workload_state(workload(2, 2)) == workloads.WORKLOAD_READY.because("2 of 2 ready")
    assert workloads.workload_state(workload(2, 1)) == workloads.WORKLOAD_STARTING.because("1 of 2 ready")
    assert workloads.workload_state(workload(0, 0)).tone == "idle"
    bound = obj("PersistentVolumeClaim", "c", "u", spec={"resources": {"requests": {"storage": "1Gi"}}}, status={"phase": "Bound"})
    state = workloads.claim_state(bound)
    assert (state.word, state.tone, state.detail) == ("Bound", "good", "1Gi")
    assert workloads.claim_state(obj("PersistentVolumeClaim", "c", "u")).word == "Pending"
    states = {*workloads.POD_STATES, *workloads.WORKLOAD_STATES, *workloads.CLAIM_STATES}
    assert {s.tone for s in states} <= {"good", "progress", "idle", "attention", "bad"}


# -- the tree -------------------------------------------------------------------------------------------------------------


@dataclass
class Person:
    """The person's client as the tree reads it: index lookups and gets of the cache, and whether they may list."""

    objects: list[FrozenDict]
    refused: set[str] = field(default_factory=set)  # plurals they may not list (or "pods/log": may not read logs)
    calls: list[str] = field(default_factory=list)

    def may(self, verb: str, resource: Any, *, namespace: str | None = None, subresource: str = "") -> bool:
        asked = f"{resource.plural}/{subresource}" if subresource else resource.plural
        if subresource:
            self.calls.append(f"may {verb} {asked} {namespace}")
        if f"{asked}!" in self.refused:  # the question cannot be answered
            from cluster import ClusterError

            raise ClusterError("the review failed")
        return asked not in self.refused

    def by_index(self, resource: Any, index: str, value: str) -> list[FrozenDict]:
        assert index == CONTROLLER_UID
        self.calls.append(f"by_index {resource.plural} {value}")
        return [o for o in self.objects if o["kind"] == resource.kind and value in _controllers(o)]

    def get(self, resource: Any, name: str, *, namespace: str | None = None) -> FrozenDict:
        self.calls.append(f"get {resource.plural} {name}")
        from cluster import NotFound

        found = [o for o in self.objects if o["kind"] == resource.kind and o["metadata"]["name"] == name]
        if not found:
            raise NotFound("not found")
        return found[0]

    def list(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the tree never lists")


def _controllers(o: FrozenDict) -> list[str]:
    return [r["uid"] for r in o["metadata"].get("ownerReferences") or () if r.get("controller")]


DARKROOM = obj("Darkroom", "web", PAGE_UID)
DEPLOYMENT = obj(
    "Deployment", "web", "uid-deploy", controller=("Darkroom", "web", PAGE_UID), spec={"replicas": 2}, status={"readyReplicas": 1}
)
NEW_RS = obj("ReplicaSet", "web-2", "uid-rs2", controller=("Deployment", "web", "uid-deploy"), created="2031-01-02T00:00:00Z",
             spec={"replicas": 2}, status={"readyReplicas": 1})  # fmt: skip
OLD_RS = obj("ReplicaSet", "web-1", "uid-rs1", controller=("Deployment", "web", "uid-deploy"), spec={"replicas": 0})
PODS = [pod("web-2-a", NEW_RS, "ReplicaSet"), pod("web-2-b", NEW_RS, "ReplicaSet", ready=False)]


def entry(o: FrozenDict) -> dict[str, Any]:
    return {"kind": o["kind"], "name": o["metadata"]["name"], "exists": True, "detail": "", "object": o}


def test_a_deployment_nests_its_replicasets_newest_first_and_their_pods_by_index_lookups() -> None:
    person = Person([DEPLOYMENT, OLD_RS, NEW_RS, *PODS])
    missing = {"kind": "Ingress", "name": "web", "exists": False, "detail": "not created yet"}
    (deployment, ingress) = tree.build(cast(Any, person), [entry(DEPLOYMENT), missing])
    assert (deployment.kind, deployment.state and deployment.state.word, deployment.detail) == ("Deployment", "Starting", "1 of 2 ready")
    assert deployment.yaml == f"/ui/yaml/deployments/{NS}/web"
    assert [n.name for n in deployment.children] == ["web-2"]
    assert [n.name for n in deployment.idle] == ["web-1"]  # scaled to 0, no pods: folded apart
    (rs,) = deployment.children
    assert [(p.name, p.state and p.state.word) for p in rs.children] == [("web-2-a", "Running"), ("web-2-b", "Not ready")]
    assert rs.summary == "2 Pods: 1 Running, 1 Not ready" and not rs.folded
    assert rs.children[0].yaml == f"/ui/yaml/pods/{NS}/web-2-a" and rs.children[0].created == "2031-01-01T00:00:00Z"
    assert (ingress.exists, ingress.detail) == (False, "not created yet")
    assert all(call.startswith("by_index") for call in person.calls)


def test_a_statefulset_nests_its_pods_and_the_claims_they_mount_shown_once() -> None:
    sts = obj("StatefulSet", "db", "uid-sts", controller=("Postgresql", "db", PAGE_UID), spec={"replicas": 1}, status={"readyReplicas": 1})
    claim = obj("PersistentVolumeClaim", "data-db-0", "uid-claim", status={"phase": "Bound", "capacity": {"storage": "1Gi"}})
    person = Person([sts, pod("db-0", sts, "StatefulSet", claim="data-db-0"), claim])
    (node,) = tree.build(cast(Any, person), [entry(sts), entry(claim)])  # the claim under its Pod, not again at the top
    ((db0,),) = [node.children]
    assert db0.name == "db-0" and db0.group == "PersistentVolumeClaims"
    assert [(c.kind, c.name, c.state and c.state.word, c.detail) for c in db0.children] == [
        ("PersistentVolumeClaim", "data-db-0", "Bound", "1Gi")
    ]


def test_many_pods_are_folded_and_summarized() -> None:
    sts = obj("StatefulSet", "db", "uid-sts", controller=("Postgresql", "db", PAGE_UID), spec={"replicas": 5})
    pods = [pod(f"db-{i}", sts, "StatefulSet", ready=i < 3) for i in range(5)]
    (node,) = tree.build(cast(Any, Person([sts, *pods])), [entry(sts)])
    assert node.folded and node.summary == "5 Pods: 3 Running, 2 Not ready"


def test_a_kind_the_person_may_not_list_is_one_node_saying_so() -> None:
    person = Person([DEPLOYMENT, NEW_RS, *PODS], refused={"pods"})
    (deployment,) = tree.build(cast(Any, person), [entry(DEPLOYMENT)])
    (rs,) = deployment.children
    assert rs.children == () and rs.refused == f"you may not list pods in {NS}"
    assert not any("pods" in call for call in person.calls)
    (deployment,) = tree.build(cast(Any, Person([DEPLOYMENT, NEW_RS], refused={"replicasets"})), [entry(DEPLOYMENT)])
    assert deployment.children == () and deployment.refused == f"you may not list replicasets in {NS}"


# -- live ---------------------------------------------------------------------------------------------------------------------


@dataclass
class Store:
    objects: list[FrozenDict]

    def get(self, key: str) -> FrozenDict | None:
        return next((o for o in self.objects if f"{o['metadata']['namespace']}/{o['metadata']['name']}" == key), None)

    def by_index(self, index: str, value: str) -> list[FrozenDict]:
        assert index == CLAIM
        return [o for o in self.objects if value in claims(o)]

    def list(self) -> Any:
        raise AssertionError("never a listing")


@dataclass
class Informer:
    store: Store


class Cache:
    def __init__(self, *objects: FrozenDict) -> None:
        self.objects = objects

    def informer(self, resource: Any) -> Informer:
        return Informer(Store([o for o in self.objects if o["kind"] == resource.kind]))


def test_a_pod_replicaset_or_claim_under_the_page_is_found_by_walking_up_and_the_stream_names_children() -> None:
    sts = obj("StatefulSet", "db", "uid-sts", controller=("Darkroom", "web", PAGE_UID))
    db0 = pod("db-0", sts, "StatefulSet", claim="data-db-0")
    claim = obj("PersistentVolumeClaim", "data-db-0", "uid-claim")
    stranger = pod("x", obj("ReplicaSet", "x", "uid-x"), "ReplicaSet")
    cache = Cache(DEPLOYMENT, NEW_RS, sts, db0, claim, *PODS)
    assert tree.descends_from(cast(Any, cache), "Pod", PODS[0], PAGE_UID)
    assert tree.descends_from(cast(Any, cache), "ReplicaSet", NEW_RS, PAGE_UID)
    assert tree.descends_from(cast(Any, cache), "PersistentVolumeClaim", claim, PAGE_UID)
    assert not tree.descends_from(cast(Any, cache), "Pod", stranger, PAGE_UID)
    assert not tree.descends_from(cast(Any, cache), "Pod", PODS[0], "uid-of-another")

    hub = Broadcaster(history=100, first_id=0)
    filters = DetailFilter(kind="Darkroom", namespace=NS, name="web", uid=PAGE_UID, cache=cast(Any, cache))
    subscription = Subscription(hub, cursor=0, reset=None, filters=filters, heartbeat_s=60.0, encode=filters.encode, visibility=None)
    for kind, source in (("Pod", PODS[1]), ("Pod", stranger), ("PersistentVolumeClaim", claim), ("ReplicaSet", NEW_RS)):
        meta = source["metadata"]
        hub.publish(kind=kind, namespace=NS, data={}, name=meta["name"], change="MODIFIED", source=source)
    written = subscription.take(hub.poll(0)) or b""
    assert [line for line in written.splitlines() if line.startswith(b"event: ")] == [b"event: children"] * 3


def test_a_pods_change_reaches_only_a_person_who_may_list_pods_there() -> None:
    from backend.api.watch.streams import RESOURCES
    from backend.api.watch.visibility import Visibility
    from cluster.identities import OWN, User
    from tests.dashboard.test_live_detail_streams import Client, Reviewer

    cache = Cache(DEPLOYMENT, NEW_RS, *PODS)
    needed = {kind: (resource,) for kind, resource in RESOURCES.items()}

    def frames(grants: set[tuple[str, str]]) -> list[bytes]:
        hub = Broadcaster(history=100, first_id=0)
        filters = DetailFilter(kind="Darkroom", namespace=NS, name="web", uid=PAGE_UID, cache=cast(Any, cache))
        actor = type("Actor", (), {"user": User("ann"), "credentials": OWN})()
        visibility = Visibility(cast(Any, Client(actor)), cast(Any, Reviewer({"ann": grants})), needed)
        subscription = Subscription(
            hub, cursor=0, reset=None, filters=filters, heartbeat_s=60.0, encode=filters.encode, visibility=visibility
        )
        hub.publish(kind="Pod", namespace=NS, data={}, name="web-2-a", change="MODIFIED", source=PODS[0])
        written = subscription.take(hub.poll(0)) or b""
        return [line for line in written.splitlines() if line.startswith(b"event: ")]

    assert frames({("darkrooms", NS), ("deployments", NS), ("replicasets", NS)}) == []
    assert frames({("darkrooms", NS), ("pods", NS)}) == [b"event: children"]


def test_an_event_about_an_object_of_the_tree_is_the_pages() -> None:
    def about(o: FrozenDict) -> FrozenDict:
        meta = o["metadata"]
        involved = {"kind": o["kind"], "name": meta["name"], "namespace": NS, "uid": meta["uid"]}
        return cast(
            FrozenDict, freeze({"kind": "Event", "metadata": {"name": f"e-{meta['name']}", "namespace": NS}, "involvedObject": involved})
        )

    stranger = pod("x", obj("ReplicaSet", "x", "uid-x"), "ReplicaSet")
    cache = Cache(DEPLOYMENT, NEW_RS, *PODS, stranger)
    filters = DetailFilter(kind="Darkroom", namespace=NS, name="web", uid=PAGE_UID, cache=cast(Any, cache))
    hub = Broadcaster(history=100, first_id=0)
    subscription = Subscription(hub, cursor=0, reset=None, filters=filters, heartbeat_s=60.0, encode=filters.encode, visibility=None)
    for source in (about(PODS[0]), about(stranger), about(NEW_RS)):
        hub.publish(kind="Event", namespace=NS, data={}, name=source["metadata"]["name"], change="ADDED", source=source)
    written = subscription.take(hub.poll(0)) or b""
    assert [line for line in written.splitlines() if line.startswith(b"event: ")] == [b"event: events"] * 2
    deployment = tree.build(cast(Any, Person([DEPLOYMENT, NEW_RS, *PODS])), [entry(DEPLOYMENT)])
    assert tree.uids(deployment) == ["uid-deploy", "uid-rs2", "uid-web-2-a", "uid-web-2-b"]


def test_a_services_endpointslices_are_its_children_ready_when_every_endpoint_is() -> None:
    def endpoint(ready: bool) -> dict[str, Any]:
        return {"addresses": ["10.244.0.2"], "conditions": {"ready": ready}}

    service = obj("Service", "web", "uid-svc", controller=("Darkroom", "web", PAGE_UID))
    full = obj("EndpointSlice", "web-abcde", "uid-slice", controller=("Service", "web", "uid-svc"),
               endpoints=[endpoint(True), endpoint(True)], ports=[{"port": 3000}])  # fmt: skip
    assert workloads.endpointslice_state(full) == workloads.SLICE_READY.because("2 of 2 endpoints ready, port 3000")
    half = obj("EndpointSlice", "h", "u", endpoints=[endpoint(True), endpoint(False)])
    assert workloads.endpointslice_state(half).tone == "progress"
    assert workloads.endpointslice_state(obj("EndpointSlice", "e", "u")).word == "No ready endpoint"
    (node,) = tree.build(cast(Any, Person([service, full])), [{**entry(service), "detail": "ClusterIP 10.0.0.1 port 80"}])
    assert (node.detail, node.group, node.summary) == ("ClusterIP 10.0.0.1 port 80", "EndpointSlices", "1 EndpointSlice: 1 Ready")
    assert [(c.kind, c.name, c.yaml) for c in node.children] == [("EndpointSlice", "web-abcde", f"/ui/yaml/endpointslices/{NS}/web-abcde")]
    cache = Cache(service, full)
    assert tree.descends_from(cast(Any, cache), "EndpointSlice", full, PAGE_UID)
    (refused,) = tree.build(cast(Any, Person([service, full], refused={"endpointslices"})), [entry(service)])
    assert refused.children == () and refused.refused == f"you may not list endpointslices in {NS}"


def test_a_pods_node_links_to_its_logs_only_for_a_person_who_may_read_them() -> None:
    logs = f"/ui/darkrooms/{NS}/web/logs"
    person = Person([DEPLOYMENT, NEW_RS, *PODS])
    (deployment,) = tree.build(cast(Any, person), [entry(DEPLOYMENT)], logs=logs)
    ((a, b),) = [rs.children for rs in deployment.children]
    assert (a.logs, b.logs) == (f"{logs}?pod=web-2-a&follow=1", f"{logs}?pod=web-2-b&follow=1")
    assert [call for call in person.calls if call.startswith("may")] == [f"may get pods/log {NS}"]  # once per tree
    assert deployment.logs is None and deployment.children[0].logs is None  # Pods only
    sts = obj("StatefulSet", "db", "uid-sts", controller=("Postgresql", "db", PAGE_UID), spec={"replicas": 1})
    (db,) = tree.build(cast(Any, Person([sts, pod("db-0", sts, "StatefulSet")])), [entry(sts)], logs=f"/ui/postgresqls/{NS}/db/logs")
    assert [p.logs for p in db.children] == [f"/ui/postgresqls/{NS}/db/logs?pod=db-0&follow=1"]

    for refused in ({"pods/log"}, {"pods/log!"}):  # may not; the question cannot be answered
        (deployment,) = tree.build(cast(Any, Person([DEPLOYMENT, NEW_RS, *PODS], refused=refused)), [entry(DEPLOYMENT)], logs=logs)
        assert [p.logs for rs in deployment.children for p in rs.children] == [None, None]
    quiet = Person([DEPLOYMENT, OLD_RS])  # no Pods: nothing asked
    tree.build(cast(Any, quiet), [entry(DEPLOYMENT)], logs=logs)
    assert not [call for call in quiet.calls if call.startswith("may")]
    (unlinked,) = tree.build(cast(Any, Person([DEPLOYMENT, NEW_RS, *PODS])), [entry(DEPLOYMENT)])  # no logs page given
    assert [p.logs for rs in unlinked.children for p in rs.children] == [None, None]
