"""A detail page's live stream carries, per person, only the changes of its object, children and Events they may list.

Behaviours (:mod:`backend.dashboard.livedetail` over :class:`backend.api.watch.streams.Subscription` and
:class:`backend.api.watch.visibility.Visibility`): the stream of one Darkroom's page names ``object`` for a change of
that Darkroom, ``children`` for a change of an object it controls (by the controller ownerReference's UID — an object
that merely names it as a non-controlling owner, or another Darkroom's child, is no child), ``events`` for an Event
about it or about one of its children (the child looked up in the cache by name) and for a Task's Event by its label;
nothing for anything else. A person who may list Darkrooms but not Deployments or Events in the namespace gets the
``object`` frames only — never a child's or an Event's; one who may list Events only cluster-wide gets them too; a
person who may list nothing there gets nothing. ``/watch``'s filters never carry the related objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from backend.api.watch.broadcasting import Broadcaster
from backend.api.watch.streams import RESOURCES, Subscription
from backend.api.watch.visibility import Visibility
from backend.dashboard.livedetail import DetailFilter
from cluster import FrozenDict, freeze
from cluster.identities import OWN, User
from cluster.reviewing import Decision
from kinds.tasks import TASK_UID_LABEL

NS = "team-a"
UID = "uid-of-web"


@dataclass
class Reviewer:
    """Answers whether a person may list a resource (plural) in a namespace ("" : cluster-wide), from a table."""

    grants: dict[str, set[tuple[str, str]]]  # person -> {(resource, namespace)}

    def known(self, user: User, attributes: Any, *, for_stream: bool = False) -> Decision:
        assert attributes.verb == "list" and for_stream
        return Decision((attributes.resource, attributes.namespace or "") in self.grants.get(user.name, set()))


@dataclass
class Client:
    actor: Any


@dataclass
class Store:
    objects: dict[str, FrozenDict] = field(default_factory=dict)

    def get(self, key: str) -> FrozenDict | None:
        return self.objects.get(key)


@dataclass
class Informer:
    store: Store


class Cache:
    """The API's cache as the filter reads it: one informer per child kind, by kind."""

    def __init__(self, *objects: FrozenDict) -> None:
        self.stores: dict[str, Store] = {}
        for obj in objects:
            meta = obj["metadata"]
            self.stores.setdefault(obj["kind"], Store()).objects[f"{meta['namespace']}/{meta['name']}"] = obj

    def informer(self, resource: Any) -> Informer | None:
        store = self.stores.get(resource.kind)
        return Informer(store) if store is not None else None


def obj(kind: str, name: str, uid: str, namespace: str = NS, *, controller: str | None = None, owner: str | None = None) -> FrozenDict:
    refs = []
    if controller:
        refs.append(
            {"apiVersion": "deployments.example.com/v1alpha1", "kind": "Darkroom", "name": "web", "uid": controller, "controller": True}
        )
    if owner:
        refs.append({"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": owner})
    return cast(FrozenDict, freeze({"kind": kind, "metadata": {"name": name, "namespace": namespace, "uid": uid, "ownerReferences": refs}}))


def event(
    name: str, about_kind: str, about_name: str, about_uid: str, namespace: str = NS, labels: dict[str, str] | None = None
) -> FrozenDict:
    involved = {"kind": about_kind, "name": about_name, "namespace": namespace, "uid": about_uid}
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    return cast(FrozenDict, freeze({"kind": "Event", "metadata": meta, "involvedObject": involved, "message": name}))


DEPLOYMENT = obj("Deployment", "web", "uid-of-deployment", controller=UID)


def publish_everything(hub: Broadcaster) -> None:
    def publish(kind: str, source: FrozenDict, change: str = "MODIFIED") -> None:
        meta = source["metadata"]
        hub.publish(kind=kind, namespace=meta["namespace"], data={}, name=meta["name"], change=change, source=source)

    publish("Darkroom", obj("Darkroom", "web", UID))  # the page's object: object
    publish("Darkroom", obj("Darkroom", "other", "uid-of-other"))  # another Darkroom: nothing
    publish("Deployment", DEPLOYMENT)  # its child: children
    publish("Service", obj("Service", "web", "uid-of-service", controller=UID), "DELETED")  # its child gone: children
    publish("Deployment", obj("Deployment", "other", "uid-2", controller="uid-of-other"))  # another's child: nothing
    publish("ConfigMap", obj("ConfigMap", "web", "uid-3", owner=UID))  # owned but not controlled: nothing
    publish("Event", event("about-web", "Darkroom", "web", UID))  # about it: events
    publish("Event", event("about-deployment", "Deployment", "web", "uid-of-deployment"))  # about its child: events
    publish("Event", event("about-other", "Deployment", "other", "uid-2"))  # about another's child: nothing
    publish("Event", event("labelled", "Pod", "p", "uid-4", labels={TASK_UID_LABEL: UID}))  # labelled with its UID: events
    publish("Darkroom", obj("Darkroom", "web", UID, namespace="team-b"))  # its name in another namespace: nothing


def frames_for(person: str | None, grants: dict[str, set[tuple[str, str]]]) -> list[str]:
    hub = Broadcaster(history=100, first_id=0)
    filters = DetailFilter(kind="Darkroom", namespace=NS, name="web", uid=UID, cache=cast(Any, Cache(DEPLOYMENT)))
    visibility = None
    if person is not None:
        actor = type("Actor", (), {"user": User(person), "credentials": OWN})()
        visibility = Visibility(cast(Any, Client(actor)), cast(Any, Reviewer(grants)), RESOURCES_NEEDED)
    subscription = Subscription(hub, cursor=0, reset=None, filters=filters, heartbeat_s=60.0, encode=filters.encode, visibility=visibility)
    publish_everything(hub)
    written = subscription.take(hub.poll(0)) or b""
    assert subscription.blocked is None and subscription.cursor == hub.last_id  # every decision was at hand
    return [line.removeprefix(b"event: ").decode() for line in written.splitlines() if line.startswith(b"event: ")]


RESOURCES_NEEDED = {kind: (resource,) for kind, resource in RESOURCES.items()}
EVERYTHING = ["object", "children", "children", "events", "events", "events"]


def test_the_api_itself_gets_every_change_of_the_page_and_nothing_else() -> None:
    assert frames_for(None, {}) == EVERYTHING


def test_a_person_who_may_list_everything_in_the_namespace_gets_the_same() -> None:
    grants = {"ann": {("darkrooms", NS), ("deployments", NS), ("services", NS), ("events", NS)}}
    assert frames_for("ann", grants) == EVERYTHING


def test_children_and_events_a_person_may_not_list_are_never_pushed() -> None:
    assert frames_for("ben", {"ben": {("darkrooms", NS)}}) == ["object"]
    # Deployments but not Services: the Deployment's change only; Events cluster-wide: all of them
    grants = {"cal": {("darkrooms", NS), ("deployments", NS), ("events", "")}}
    assert frames_for("cal", grants) == ["object", "children", "events", "events", "events"]
    assert frames_for("dan", {"dan": {("darkrooms", "team-b"), ("events", "team-b")}}) == []


def test_watch_never_carries_the_related_objects() -> None:
    from backend.api.watch.watching import KIND_NAMES

    assert set(KIND_NAMES.values()) == {"Darkroom", "Task", "Postgresql"}
    assert {"Deployment", "Service", "Ingress", "StatefulSet", "Event"} <= set(RESOURCES)
    assert "ConfigMap" not in RESOURCES  # the API's account may not read ConfigMaps: a page reads its child's as the person
