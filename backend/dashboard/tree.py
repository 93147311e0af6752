"""The resource tree of a detail page: the object's children, theirs, and theirs — built from the API's cache by
index lookups, as the person sees it — and the read-only YAML page of one of its nodes.

Owns: :func:`build` (the nodes the children region of :mod:`.darkroompages` and :mod:`.pgpages` renders with
``_tree.html``), :func:`descends_from` (whether a changed object belongs to a page's tree: :mod:`.livedetail` asks it
for every ReplicaSet, Pod and PersistentVolumeClaim the cache sees change) and ``GET /ui/yaml/<plural>/<ns>/<name>``
(:func:`install`: a node's YAML).

The tree: a Deployment → its ReplicaSets (newest first) → their Pods; a StatefulSet → its Pods → the
PersistentVolumeClaims they mount; a Service → its EndpointSlices; an Ingress → its hosts; ConfigMaps and the password
Secret are leaves.
Each node: kind, name, state word and tone (:mod:`kinds.workloads`: the one definition, rendered by the badge the
lists use), what else to know (restarts, size, address), age, and a link to its YAML; a Pod also a link to its logs.

Decisions:

- **Found by owner references through the cache's indexes**, never by listing: a child's ReplicaSets and Pods are
  the objects filed under its UID in the index :data:`backend.core.access.CONTROLLER_UID` (a Service's EndpointSlices
  too: the EndpointSlice controller's slices are controlled by their Service); a Pod's claims are looked up
  by the names its volumes give (the cache's key). A StatefulSet's claim has a controller reference only under
  ``whenDeleted: Delete``, so the claim hangs under the Pod that mounts it, whoever owns it; a claim no Pod mounts
  (the database scaled down, the Pod not made yet) stays a child of the object, as it was.
- **As the person**: each lookup is the person's read of the shared cache (:class:`cluster.acting.ActingClient`). A
  kind they may not list in the namespace is one node saying so (never silently empty, never its objects).
- **Events**: the page's timeline holds the Events about every object of the tree (:func:`uids`: one index lookup
  each), so a Pod's BackOff or a claim's provisioning is read beside the object's own.
- **Live**: the region is fetched again on the page's ``children`` event; :func:`descends_from` walks a changed
  object's controller references up (at most three steps, each a lookup by key in the cache) to decide whether it
  is the page's. A claim's change finds its Pods through the index :data:`backend.core.access.CLAIM`.
- **Markup** (``_tree.html``): nested lists, each node's children in a native ``<details>`` whose summary counts them
  ("3 Pods: 2 Running, 1 Pending"), rather than ``role="tree"``: a tree widget needs arrow-key navigation in script
  and its expanded state re-announced after every live swap; nested lists and disclosures work without script, with
  the keyboard (Tab, Enter) and screen readers (list levels, expanded/collapsed) as they are. Folded by default:
  ReplicaSets with nothing to run (old revisions of a rollout) and — at every width, so a phone gets a short tree —
  the Pods of a workload once there are more than :data:`OPEN_PODS`; the summary says what is inside.
- **A Pod's logs**: a link to the page's logs page with that pod chosen (``<page>/logs?pod=<name>&follow=1``,
  :mod:`.podlogs`), shown only to a person who may ``get`` ``pods/log`` in the namespace — asked once per tree (one
  review, cached as every review; not at all when there are no Pods), as the tree asks whether they may list each
  kind — so a link that would answer 403 is not offered. (A grant of ``pods/log`` for named pods only, rare, is not
  seen by that namespace-wide question: the link is left out; the logs page still answers them.)
- **YAML**: a page of its own per node (``/ui/yaml/...``, read as the person), not the detail page's YAML panel: the
  panel is a snapshot of the page's load, and a tree's Pods come and go after it. Kinds of the tree only; a Secret
  never (:mod:`.yamlview` refuses to dump one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response

from backend.api.problems import Problem
from backend.api.watch import watching
from backend.core.access import CHILDREN, CLAIM, CONTROLLER_UID, GRANDCHILDREN
from backend.core.services import Services
from backend.dashboard import browsing, rendering, yamlview
from cluster import (
    CONFIGMAPS,
    ENDPOINTSLICES,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    REPLICASETS,
    SERVICES,
    Cache,
    ClusterError,
    FrozenDict,
    NotFound,
)
from cluster.acting import ActingClient
from cluster.resources import Resource
from kinds import workloads
from kinds.states import State

OPEN_PODS = 3  # a workload's Pods are shown unfolded up to this many
MAX_DEPTH = 3  # Pod → ReplicaSet → Deployment → the page's object: the longest walk up
#: The kinds a node's YAML page serves, by plural (the URL's): the tree's, never a Secret.
YAML_KINDS: Mapping[str, Resource] = {r.plural: r for r in (*CHILDREN, *GRANDCHILDREN, CONFIGMAPS)}
OWNERS: Mapping[str, Resource] = {r.kind: r for r in (*CHILDREN, REPLICASETS)}  # who may be a controller in the tree
TEMPLATE = "resource_yaml.html"


@dataclass(frozen=True)
class Node:
    """One node of the tree. ``group``: the noun of its children ("Pods"), ``summary`` what they are at a glance,
    ``folded``: shown closed; ``refused``: the person may not list the children's kind here (why)."""

    kind: str
    name: str
    uid: str = ""  # the object's (its Events are on the page's timeline: :func:`uids`)
    exists: bool = True
    state: State | None = None
    detail: str = ""
    created: str | None = None
    yaml: str | None = None
    children: tuple[Node, ...] = ()
    group: str = ""
    summary: str = ""
    folded: bool = False
    refused: str = ""
    hosts: tuple[str, ...] = ()
    tls: bool = False
    restarts: int | None = None
    logs: str | None = None  # a Pod's logs page (only when the person may read them)
    idle: tuple[Node, ...] = ()  # a Deployment's ReplicaSets scaled to 0 without Pods (earlier revisions), folded apart


class LogLinks:
    """The links to the Pods' logs of one tree: ``base`` the page's logs page ("": none), asked once whether the
    person may read Pods' logs in the namespace (not before a Pod is shown; a review that fails: no links)."""

    def __init__(self, client: ActingClient, base: str) -> None:
        self._client, self._base = client, base
        self._allowed: dict[str, bool] = {}

    def of(self, pod: Mapping[str, Any]) -> str | None:
        meta = pod.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if not self._base or not name:
            return None
        if namespace not in self._allowed:
            try:
                self._allowed[namespace] = self._client.may("get", PODS, namespace=namespace, subresource="log")
            except ClusterError:
                self._allowed[namespace] = False
        return f"{self._base}?{urlencode({'pod': name, 'follow': '1'})}" if self._allowed[namespace] else None


def yaml_path(resource: Resource, obj: Mapping[str, Any]) -> str | None:
    meta = obj.get("metadata") or {}
    if resource.plural not in YAML_KINDS or not meta.get("name"):
        return None
    return f"/ui/yaml/{resource.plural}/{meta.get('namespace')}/{meta['name']}"


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _created(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "")


def _newest_first(objs: Iterable[FrozenDict]) -> list[FrozenDict]:
    return sorted(objs, key=lambda o: (_created(o), o["metadata"]["name"]), reverse=True)


def _refusal(client: ActingClient, resource: Resource, namespace: str) -> str:
    """Why the person may not see the ``resource`` of ``namespace`` (empty: they may list them)."""
    try:
        if client.may("list", resource, namespace=namespace):
            return ""
    except ClusterError as e:
        return f"could not ask whether you may list {resource.plural}: {e.message}"
    return f"you may not list {resource.plural} in {namespace}"


def _owned(client: ActingClient, resource: Resource, namespace: str, uid: str) -> list[FrozenDict]:
    return [o for o in client.by_index(resource, CONTROLLER_UID, uid) if o["metadata"].get("namespace") == namespace]


def _summary(noun: str, nodes: Iterable[Node]) -> str:
    nodes = list(nodes)
    words = Counter(n.state.word for n in nodes if n.state is not None)
    counted = f"{len(nodes)} {noun if len(nodes) != 1 else noun.removesuffix('s')}"
    return counted + (": " + ", ".join(f"{n} {word}" for word, n in words.items()) if words else "")


def _claim_node(client: ActingClient, namespace: str, name: str) -> Node:
    try:
        claim = client.get(PERSISTENTVOLUMECLAIMS, name, namespace=namespace)
    except NotFound:
        return Node(kind=PERSISTENTVOLUMECLAIMS.kind, name=name, exists=False, detail="not created yet")
    except ClusterError as e:
        return Node(kind=PERSISTENTVOLUMECLAIMS.kind, name=name, exists=False, detail=f"could not read it: {e.message}")
    state = workloads.claim_state(claim)
    return Node(
        kind=PERSISTENTVOLUMECLAIMS.kind,
        name=name,
        uid=_uid(claim),
        state=state,
        detail=state.detail,
        created=_created(claim),
        yaml=yaml_path(PERSISTENTVOLUMECLAIMS, claim),
    )


def _pod_node(client: ActingClient, pod: FrozenDict, *, claims_refused: str, logs: LogLinks) -> Node:
    namespace = pod["metadata"]["namespace"]
    claims = workloads.mounted_claims(pod)
    children = () if claims_refused else tuple(_claim_node(client, namespace, name) for name in claims)
    state = workloads.pod_state(pod)
    count = workloads.restarts(pod)
    return Node(
        kind=PODS.kind,
        name=pod["metadata"]["name"],
        uid=_uid(pod),
        state=state,
        detail=state.detail,
        restarts=count,
        created=_created(pod),
        yaml=yaml_path(PODS, pod),
        logs=logs.of(pod),
        children=children,
        group="PersistentVolumeClaims" if claims else "",
        summary=_summary("PersistentVolumeClaims", children) if claims else "",
        refused=claims_refused if claims else "",
    )


def _pods(client: ActingClient, namespace: str, uid: str, logs: LogLinks) -> tuple[tuple[Node, ...], str]:
    """The Pods the object with ``uid`` controls, or why the person may not see them."""
    refused = _refusal(client, PODS, namespace)
    if refused:
        return (), refused
    claims_refused = _refusal(client, PERSISTENTVOLUMECLAIMS, namespace)
    pods = sorted(_owned(client, PODS, namespace, uid), key=lambda p: p["metadata"]["name"])
    return tuple(_pod_node(client, pod, claims_refused=claims_refused, logs=logs) for pod in pods), ""


def _workload(resource: Resource, obj: FrozenDict, **extra: Any) -> dict[str, Any]:
    state = workloads.workload_state(obj)
    return {
        "kind": resource.kind,
        "name": obj["metadata"]["name"],
        "uid": _uid(obj),
        "state": state,
        "detail": state.detail,
        "created": _created(obj),
        "yaml": yaml_path(resource, obj),
        **extra,
    }


def _pods_group(pods: tuple[Node, ...], refused: str) -> dict[str, Any]:
    return {"children": pods, "group": "Pods", "summary": _summary("Pods", pods), "refused": refused, "folded": len(pods) > OPEN_PODS}


def _replicaset_node(client: ActingClient, rs: FrozenDict, logs: LogLinks) -> Node:
    pods, refused = _pods(client, rs["metadata"]["namespace"], rs["metadata"]["uid"], logs)
    _, wanted = workloads.replicas(rs)
    group = _pods_group(pods, refused)
    idle = wanted == 0 and not pods and not refused
    return Node(**_workload(REPLICASETS, rs, **{**group, "folded": group["folded"] or idle}))


def _deployment_node(client: ActingClient, resource: Resource, obj: FrozenDict, logs: LogLinks) -> Node:
    namespace = obj["metadata"]["namespace"]
    refused = _refusal(client, REPLICASETS, namespace)
    owned = () if refused else _newest_first(_owned(client, REPLICASETS, namespace, obj["metadata"]["uid"]))
    sets = [_replicaset_node(client, rs, logs) for rs in owned]
    active = tuple(n for n in sets if not n.folded or n.children)
    idle = tuple(n for n in sets if n.folded and not n.children)  # scaled to 0 with no Pods: earlier revisions
    summary = _summary("ReplicaSets", sets)
    return Node(**_workload(resource, obj, children=active, idle=idle, group="ReplicaSets", summary=summary, refused=refused))


def _statefulset_node(client: ActingClient, resource: Resource, obj: FrozenDict, logs: LogLinks) -> Node:
    pods, refused = _pods(client, obj["metadata"]["namespace"], obj["metadata"]["uid"], logs)
    return Node(**_workload(resource, obj, **_pods_group(pods, refused)))


def _slice_node(endpoint_slice: FrozenDict) -> Node:
    state = workloads.endpointslice_state(endpoint_slice)
    return Node(
        kind=ENDPOINTSLICES.kind,
        name=endpoint_slice["metadata"]["name"],
        uid=_uid(endpoint_slice),
        state=state,
        detail=state.detail,
        created=_created(endpoint_slice),
        yaml=yaml_path(ENDPOINTSLICES, endpoint_slice),
    )


def _service_slices(client: ActingClient, service: FrozenDict) -> dict[str, Any]:
    """A Service's EndpointSlices (the EndpointSlice controller's, by their controller reference), or why not shown."""
    namespace = service["metadata"]["namespace"]
    refused = _refusal(client, ENDPOINTSLICES, namespace)
    owned = () if refused else _owned(client, ENDPOINTSLICES, namespace, service["metadata"]["uid"])
    slices = tuple(_slice_node(s) for s in sorted(owned, key=lambda s: s["metadata"]["name"]))
    return {"children": slices, "group": "EndpointSlices", "summary": _summary("EndpointSlices", slices), "refused": refused}


def _entry_node(client: ActingClient, entry: Mapping[str, Any], logs: LogLinks) -> Node:
    """The node of one of the page's children (an entry of ``darkroompages.children`` or ``pgpages.children``)."""
    obj: FrozenDict | None = entry.get("object")
    if obj is None or not entry.get("exists"):
        return Node(kind=entry["kind"], name=entry["name"], exists=False, detail=str(entry.get("detail") or ""))
    resource = next((r for r in YAML_KINDS.values() if r.kind == entry["kind"]), None)
    if resource is not None and resource.kind == "Deployment":
        return _deployment_node(client, resource, obj, logs)
    if resource is not None and resource.kind == "StatefulSet":
        return _statefulset_node(client, resource, obj, logs)
    state = workloads.claim_state(obj) if entry["kind"] == PERSISTENTVOLUMECLAIMS.kind else None
    hosts = tuple(entry.get("hosts") or ())
    slices = _service_slices(client, obj) if resource is SERVICES else {}
    return Node(
        kind=entry["kind"],
        name=entry["name"],
        uid=_uid(obj),
        state=state,
        detail=state.detail if state is not None else str(entry.get("detail") or ""),
        created=_created(obj),
        yaml=yaml_path(resource, obj) if resource is not None else None,
        hosts=hosts,
        tls=bool(entry.get("tls")),
        **(slices or {"group": "Hosts" if "hosts" in entry else ""}),
    )


def _claims_in(nodes: Iterable[Node]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if node.kind == PERSISTENTVOLUMECLAIMS.kind and node.exists:
            found.add(node.name)
        found |= _claims_in(node.children)
    return found


def build(client: ActingClient, entries: Iterable[Mapping[str, Any]], *, logs: str = "") -> list[Node]:
    """The tree under a detail page's object from its children's entries (their order kept): a claim a Pod of the tree
    mounts is shown there, not again as a child of the object. ``logs``: the object's logs page (each Pod links to it
    with itself chosen, when the person may read Pods' logs: :class:`LogLinks`)."""
    links = LogLinks(client, logs)
    nodes = [_entry_node(client, entry, links) for entry in entries]
    under_pods = _claims_in(n for node in nodes for n in node.children)
    return [n for n in nodes if not (n.kind == PERSISTENTVOLUMECLAIMS.kind and n.name in under_pods)]


def uids(nodes: Iterable[Node]) -> list[str]:
    """The UIDs of every object in the tree (the Events about them are the page's too: :func:`.timeline.related_events`)."""
    found: list[str] = []
    for node in nodes:
        found += [node.uid] if node.uid else []
        found += uids((*node.children, *node.idle))
    return found


# -- live: does a changed object belong to a page's tree? ------------------------------------------------------------


def _controller(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("controller") and r.get("uid")), None)


def _walks_up_to(cache: Cache, obj: Mapping[str, Any], uid: str) -> bool:
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    for _ in range(MAX_DEPTH):
        ref = _controller(obj)
        if ref is None:
            return False
        if ref["uid"] == uid:
            return True
        resource = OWNERS.get(str(ref.get("kind")))
        informer = cache.informer(resource) if resource is not None else None
        owner = informer.store.get(f"{namespace}/{ref.get('name')}") if informer is not None else None
        if owner is None or (owner.get("metadata") or {}).get("uid") != ref["uid"]:
            return False
        obj = owner
    return False


def descends_from(cache: Cache, kind: str, obj: Mapping[str, Any], uid: str) -> bool:
    """Whether ``obj`` (a ReplicaSet, Pod or claim — ``kind`` — the cache saw change) is in the tree of the object with ``uid``: its
    controller references lead there (each step a lookup by key in the API's cache), or — a claim — a Pod that mounts
    it does (the index :data:`backend.core.access.CLAIM`)."""
    if _walks_up_to(cache, obj, uid):
        return True
    meta = obj.get("metadata") or {}
    if kind != PERSISTENTVOLUMECLAIMS.kind:
        return False
    informer = cache.informer(PODS)
    if informer is None:
        return False
    return any(_walks_up_to(cache, pod, uid) for pod in informer.store.by_index(CLAIM, f"{meta.get('namespace')}/{meta.get('name')}"))


# -- a node's YAML ------------------------------------------------------------------------------------------------------


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


#: What ``GET /ui/yaml/...`` answers, every answer an HTML page (:func:`.browsing.problem_page` for the errors).
YAML_RESPONSES = {
    "200": _html("The object's YAML page."),
    "400": _html("The namespace is no DNS label (the page names the field)."),
    "403": _html("The cluster does not let the caller read the object (the page names what was refused)."),
    "404": _html("No such object, or a kind the tree does not show (the page names the kinds it does)."),
}


def install(blueprint: Blueprint, services: Services) -> None:
    """Add ``GET /ui/yaml/<plural>/<namespace>/<name>``: one object of the tree's kinds as YAML, read as the person."""

    def resource_yaml(plural: str, namespace: str, name: str) -> Response:
        resource = YAML_KINDS.get(plural)
        if resource is None:
            return browsing.problem_page(Problem(404, f"no YAML page for {plural!r}: use one of {', '.join(sorted(YAML_KINDS))}"))
        if not watching.DNS_LABEL.match(namespace):
            return browsing.problem_page(Problem(400, "namespace: must be a DNS label", errors={"namespace": ["must be a DNS label"]}))
        try:
            obj = services.client.get(resource, name, namespace=namespace, fresh=True)  # whole: the cache's is trimmed
        except ClusterError as error:  # not there, or refused to the person: said on the error page
            return browsing.problem_page(error)
        context = {"kind": resource.kind, "namespace": namespace, "name": name, "entries": yamlview.entries(obj)}
        return rendering.page(TEMPLATE, context)

    summary = "One object of a detail page's resource tree as YAML (read-only), read as the caller"
    rendering.document(resource_yaml, summary, responses=YAML_RESPONSES)
    blueprint.add_url_rule("/ui/yaml/<plural>/<namespace>/<name>", "resource_yaml", resource_yaml, methods=["GET"])
