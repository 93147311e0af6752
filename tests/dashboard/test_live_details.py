"""A detail page's one live stream and an edit form's freshness, without a browser, over the session devcluster.

Behaviours: the page names its stream (``/ui/live/darkroom/<ns>/<name>``, resuming from the render) and polls
nothing; the stream says ``object`` when the Darkroom changes, ``children`` when an object it controls changes (a
labelled Deployment with its controller ownerReference, found in the API's cache by that UID: the page's children
region then shows it), ``events`` for an Event about it or about that child (the timeline names the child, and marks the
Darkroom's own rows) — and
nothing for another Darkroom's child; an unknown view is a 404, a namespace that is no DNS label a 400. An edit
form's freshness says ``current``, then ``changed`` once someone else changed the spec, then ``deleted``; a Save of a
form whose object was deleted answers 404 with the form and its error summary (never an error page).
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from backend.core.access import ClusterAccess
from cluster import DEPLOYMENTS
from tests.dashboard.clients import Client
from tests.support import wait_for

DARKROOMS = ("deployments.example.com", "v1alpha1", "darkrooms")
MANAGED = {"app.kubernetes.io/managed-by": "darkroom-operator"}


def make_darkroom(custom: Any, namespace: str, name: str) -> dict[str, Any]:
    spec = {"replicas": 1, "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"{name}-img"]}
    body = {"apiVersion": "deployments.example.com/v1alpha1", "kind": "Darkroom", "metadata": {"name": name}, "spec": spec}
    created: dict[str, Any] = custom.create_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], body)
    return created


def controlled_by(obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj["metadata"]
    return [{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"], "controller": True}]


def deployment(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name, "labels": {**MANAGED, **labels}, "ownerReferences": controlled_by(owner)},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip


def event_about(namespace: str, obj: Any, kind: str, message: str) -> dict[str, Any]:
    meta = obj["metadata"] if isinstance(obj, dict) else {"name": obj.metadata.name, "uid": obj.metadata.uid}
    return {"metadata": {"name": f"{meta['name']}.{abs(hash(message)) % 10**8}"}, "reason": "Tested", "message": message, "type": "Normal",
            "involvedObject": {"kind": kind, "name": meta["name"], "namespace": namespace, "uid": meta["uid"]},
            "firstTimestamp": "2031-01-01T00:00:00Z", "lastTimestamp": "2031-01-01T00:00:00Z", "count": 1}  # fmt: skip


class Frames:
    """The named events of an open stream, read as they come (heartbeats skipped)."""

    def __init__(self, http: Client, url: str) -> None:
        self.response = http.get(url, buffered=False)
        assert self.response.status_code == 200, self.response.get_data(as_text=True)
        self._chunks: Iterator[bytes] = iter(self.response.response)
        self._unread: deque[str] = deque()  # named events of a chunk read but not yet returned (a chunk may hold several)
        self.seen: list[str] = []  # every named event returned so far, for the message of a wait that ends empty
        self.data: dict[str, str] = {}  # the data of the last event of each name read

    def next_named(self, timeout_s: float = 30) -> str:
        """The next named event; a wait longer than ``timeout_s`` fails naming what came (the stream's heartbeats end each read)."""
        deadline = time.monotonic() + timeout_s
        while not self._unread and time.monotonic() < deadline:
            for frame in re.findall(r"^event: (\S+)\n((?:data: .*\n)*)", next(self._chunks).decode(), re.M):
                self._unread.append(frame[0])
                self.data[frame[0]] = "\n".join(line.removeprefix("data: ") for line in frame[1].splitlines())
        if not self._unread:
            raise AssertionError(f"no named event within {timeout_s} s; seen so far: {self.seen}")
        name = self._unread.popleft()
        self.seen.append(name)
        return name

    def until(self, name: str) -> None:
        """Read until ``name`` comes (others may come first: a Deployment's status changes are its changes too), or
        ``reset``: the stream fell behind a burst of the cluster's changes (other tests' namespaces being deleted) and
        dropped some — the page then fetches every region again, which is what ``name`` asks of it too."""
        while self.next_named() not in (name, "reset"):
            pass

    def close(self) -> None:
        self.response.close()


def wait_shown(http: Client, path: str, needle: str = "") -> str:
    wait_for(lambda: http.get(path).status_code == 200 and needle in http.get(path).get_data(as_text=True), timeout_s=20)
    html: str = http.get(path).get_data(as_text=True)
    return html


def test_the_stream_names_the_regions_its_object_children_and_events_change(
    http: Client, custom: Any, api_client: Any, namespace: str, access: ClusterAccess
) -> None:
    from kubernetes import client

    apps: Any = client.AppsV1Api(api_client)
    core: Any = client.CoreV1Api(api_client)
    web, other = make_darkroom(custom, namespace, "web"), make_darkroom(custom, namespace, "other")
    html = wait_shown(http, f"/ui/darkrooms/{namespace}/web")
    assert 'hx-trigger="every' not in html
    for event, region in (("object", "spec"), ("object", "live"), ("children", "children"), ("events", "events")):
        refresher = f'hx-get="/ui/darkrooms/{namespace}/web" hx-trigger="sse:{event}, sse:reset" hx-target="#darkroom-{region}"'
        assert refresher in html, refresher
    match = re.search(rf'sse-connect="/ui/live/darkroom/{namespace}/web\?lastEventId=(\d+)"', html)
    assert match, html[:3000]
    frames = Frames(http, f"/ui/live/darkroom/{namespace}/web")
    try:
        assert frames.next_named() == "ready"
        apps.create_namespaced_deployment(namespace, deployment("other", other))  # another Darkroom's child: nothing
        store = access.cache.informer(DEPLOYMENTS)
        assert store is not None
        wait_for(lambda: store.store.get(f"{namespace}/other") is not None, timeout_s=10)
        custom.patch_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "web", {"spec": {"replicas": 2}})
        # the first frame after ready (or a reset, see until): the other's child was carried to nobody
        assert frames.next_named() in ("object", "reset"), frames.seen
        apps.create_namespaced_deployment(namespace, deployment("web", web))
        frames.until("children")
        child = apps.read_namespaced_deployment("web", namespace)
        core.create_namespaced_event(namespace, event_about(namespace, child, "Deployment", "a child's event"))
        frames.until("events")
        core.create_namespaced_event(namespace, event_about(namespace, web, "Darkroom", "the darkroom's own event"))
        frames.until("events")
    finally:
        frames.close()
    fragment = http.get(f"/ui/darkrooms/{namespace}/web", headers={"HX-Request": "true", "HX-Target": "darkroom-children"})
    row = re.search(r'<li class="tree-node" data-kind="Deployment".*?</div>', fragment.get_data(as_text=True), re.S)  # its tree node
    assert row and " of 1 ready" in row.group(0), fragment.get_data(as_text=True)
    events = http.get(f"/ui/darkrooms/{namespace}/web", headers={"HX-Request": "true", "HX-Target": "darkroom-events"}).get_data(
        as_text=True
    )
    child_row = r'data-label="Object">Deployment/web</td>\s*<td data-label="Reason">Tested</td>\s*<td class="message">a child&#39;s event'
    assert re.search(child_row, events)
    assert re.search(r'Darkroom/web <span class="muted">\(this Darkroom\)</span></td>.*?the darkroom&#39;s own event', events, re.S)
    spec = http.get(f"/ui/darkrooms/{namespace}/web", headers={"HX-Request": "true", "HX-Target": "darkroom-spec"}).get_data(as_text=True)
    assert spec.lstrip().startswith('<section class="card" id="darkroom-spec"') and 'value="2"' in spec


def test_unknown_views_and_bad_namespaces_are_refused(http: Client) -> None:
    assert http.get("/ui/live/nothing/default/x").status_code == 404
    assert http.get("/ui/live/darkroom/Not_A_Label/x").status_code == 400


def test_an_edit_forms_freshness_and_a_save_of_a_deleted_object(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(custom, namespace, "edited")
    form = wait_shown(http, f"/ui/darkrooms/{namespace}/edited/edit")
    assert f'sse-connect="/ui/live/darkroom/{namespace}/edited' in form and 'data-freshness="current"' in form
    freshness: Callable[[str], str] = lambda generation: http.get(  # noqa: E731
        f"/ui/darkrooms/{namespace}/edited/edit/freshness?generation={generation}"
    ).get_data(as_text=True)
    assert 'data-freshness="current"' in freshness("1")
    custom.patch_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "edited", {"spec": {"replicas": 3}})
    wait_for(lambda: 'data-freshness="changed"' in freshness("1"), timeout_s=10)
    assert "Save would be refused" in freshness("1") and 'data-freshness="current"' in freshness("2")
    custom.delete_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "edited")
    wait_for(lambda: 'data-freshness="deleted"' in freshness("2"), timeout_s=10)
    assert "Save would create nothing" in freshness("2")

    values = {
        "source.type": "WebFolder",
        "source.baseUrl": "https://x.example",
        "subDomains": ["edited-img"],
        "generation": "2",
        "action": "save",
    }
    saved = http.post(f"/ui/darkrooms/{namespace}/edited/edit", values, headers={"HX-Request": "true", "HX-Target": "darkroom-form"})
    html = saved.get_data(as_text=True)
    assert saved.status_code == 404 and html.lstrip().startswith('<form id="darkroom-form"'), html[:500]
    assert 'class="error-summary" role="alert"' in html and "was deleted after you opened this form, so nothing was saved" in html
