"""The events timeline of the detail pages and the Warning badge of the list rows, without a browser, on both clusters.

Behaviours: a Darkroom's timeline shows its own Events (marked as its own) and its child Deployment's, collapsed as
kubectl does (two Events with the same object, type, reason and message are one row with the summed count), with
each type's summed count on the filter; ``?events=Warning`` / ``Normal`` keeps one type — on the page, in the
region fetched again by the live stream (whose refresher asks for the same filter) — and says "No warnings." when
there are none; a bad ``?events=`` is a 400 naming the parameter, on the page and on the region. The Postgresql and
Task pages show the same timeline. Each list row carries its Warning count (summed, with its child's) as a link to
the timeline filtered to Warnings, none when it has no Warnings; a list's live stream pushes the row again when a
Warning about its object arrives (a Normal Event pushes nothing), with the new count — and when a Warning about one of
the Pods of its Deployment arrives (the row then counts it), while a Warning about an unrelated Pod pushes no row.
"""

from __future__ import annotations

import re
from typing import Any

from backend.core.access import ClusterAccess
from cluster import PODS
from tests.dashboard.clients import Client
from tests.dashboard.test_live_details import Frames, deployment, make_darkroom, wait_shown
from tests.dashboard.test_postgresql_pages import make_pg
from tests.dashboard.test_resource_tree import MANAGED, running_pod, workload
from tests.support import wait_for

TASKS = ("example.example.com", "v1", "tasks")


def recorded(obj: Any, kind: str, *, name: str, type: str = "Warning", reason: str = "Failing", message: str = "it fails",
             count: int = 1, last: str = "2031-01-01T00:00:00Z") -> dict[str, Any]:  # fmt: skip
    meta = obj["metadata"] if isinstance(obj, dict) else obj.metadata.to_dict()
    return {"metadata": {"name": name}, "type": type, "reason": reason, "message": message, "count": count,
            "involvedObject": {"kind": kind, "name": meta["name"], "uid": meta["uid"], "namespace": meta["namespace"]},
            "firstTimestamp": "2030-12-31T00:00:00Z", "lastTimestamp": last}  # fmt: skip


def region(http: Client, path: str, target: str) -> Any:
    return http.get(path, headers={"HX-Request": "true", "HX-Target": target})


def filter_counts(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-choice="(\w+)"\s+aria-label="\w+: (\d+)"', html))


def test_a_darkrooms_timeline_collapses_filters_and_names_its_objects(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)
    apps: Any = client.AppsV1Api(api_client)
    web = make_darkroom(custom, namespace, "web")
    child = apps.create_namespaced_deployment(namespace, deployment("web", web))
    core.create_namespaced_event(namespace, recorded(web, "Darkroom", name="w1", count=2, last="2031-01-01T01:00:00Z"))
    core.create_namespaced_event(namespace, recorded(web, "Darkroom", name="w2", count=3, last="2031-01-01T02:00:00Z"))
    core.create_namespaced_event(namespace, recorded(child, "Deployment", name="d1", message="no pods", last="2031-01-01T03:00:00Z"))
    core.create_namespaced_event(namespace, recorded(web, "Darkroom", name="n1", type="Normal", reason="Synced", message="ok"))
    path = f"/ui/darkrooms/{namespace}/web"
    html = wait_shown(http, path, "Synced")
    wait_for(lambda: filter_counts(http.get(path).get_data(as_text=True)).get("Warning") == "6", timeout_s=20)
    html = http.get(path).get_data(as_text=True)
    counts = {choice: int(n) for choice, n in filter_counts(html).items()}
    # the real control plane's Deployment controller records Normal Events of its own about the child
    assert counts["Warning"] == 6 and counts["All"] == 6 + counts["Normal"] and counts["Normal"] >= 1
    assert re.findall(r'data-choice="(\w+)"', html) == ["Warning", "All", "Normal"]  # Warnings first
    assert re.search(r'aria-pressed="true" data-choice="All"', html)
    rows = re.findall(r'<tr data-type="(\w+)">.*?data-label="Object">([^<]+)(.*?)</td>.*?data-label="Count">(\d+)</td>', html, re.S)
    ours = [(t, about.strip(), "this Darkroom" in own, n) for t, about, own, n in rows]
    assert [row for row in ours if row[0] == "Warning" or row[1].startswith("Darkroom")] == [
        ("Warning", "Deployment/web", False, "1"),  # newest first
        ("Warning", "Darkroom/web", True, "5"),  # w1 and w2: one row, counts summed
        ("Normal", "Darkroom/web", True, "1"),
    ]
    warnings = http.get(f"{path}?events=Warning").get_data(as_text=True)
    assert re.findall(r'<tr data-type="(\w+)">', warnings) == ["Warning", "Warning"]
    assert f'hx-get="{path}?events=Warning" hx-trigger="sse:events, sse:reset" hx-target="#darkroom-events"' in warnings
    fetched = region(http, f"{path}?events=Normal", "darkroom-events").get_data(as_text=True)
    assert fetched.lstrip().startswith('<section class="card timeline" id="darkroom-events"')
    assert set(re.findall(r'<tr data-type="(\w+)">', fetched)) == {"Normal"} and "Synced" in fetched
    assert 'aria-pressed="true" data-choice="Normal"' in fetched
    for bad in (f"{path}?events=warning", f"{path}?events="):
        refused = http.get(bad)
        assert refused.status_code == 400 and "events" in refused.get_data(as_text=True), bad
    assert region(http, f"{path}?events=Error", "darkroom-events").status_code == 400
    make_darkroom(custom, namespace, "quiet")
    quiet = wait_shown(http, f"/ui/darkrooms/{namespace}/quiet?events=Warning", "No warnings.")
    assert "<tr data-type" not in quiet and filter_counts(quiet) == {"Warning": "0", "All": "0", "Normal": "0"}
    assert "No events." in http.get(f"/ui/darkrooms/{namespace}/quiet").get_data(as_text=True)


def test_postgresql_and_task_pages_show_the_same_timeline(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)
    pg = make_pg(custom, namespace, "orders")
    task = custom.create_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], {
        "apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": "job"},
        "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}})  # fmt: skip
    core.create_namespaced_event(namespace, recorded(pg, "Postgresql", name="pg1", count=4))
    core.create_namespaced_event(namespace, recorded(task, "Task", name="t1", type="Normal", reason="Started", message="go"))
    pg_page = wait_shown(http, f"/ui/postgresqls/{namespace}/orders?events=Warning", "it fails")
    assert filter_counts(pg_page)["Warning"] == "4" and "(this Postgresql)" in pg_page
    task_page = wait_shown(http, f"/ui/tasks/{namespace}/job", "Started")
    assert filter_counts(task_page) == {"Warning": "0", "All": "1", "Normal": "1"} and "(this Task)" in task_page
    assert "No warnings." in http.get(f"/ui/tasks/{namespace}/job?events=Warning").get_data(as_text=True)
    assert http.get(f"/ui/postgresqls/{namespace}/orders?events=All,Warning").status_code == 400


def badge(html: str, detail: str) -> str | None:
    link = (
        rf'<a class="badge badge-warn warning-count" id="row-warnings-[0-9a-f-]+" href="{re.escape(detail)}\?events=Warning#\w+-events"'
        r' aria-label="([^"]+)"'
    )
    found = re.search(link, html)
    return found.group(1) if found else None


def test_list_rows_carry_their_warning_count(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)
    apps: Any = client.AppsV1Api(api_client)
    web, calm = make_darkroom(custom, namespace, "web"), make_darkroom(custom, namespace, "calm")
    child = apps.create_namespaced_deployment(namespace, deployment("web", web))
    core.create_namespaced_event(namespace, recorded(web, "Darkroom", name="w1", count=2))
    core.create_namespaced_event(namespace, recorded(child, "Deployment", name="d1"))
    core.create_namespaced_event(namespace, recorded(calm, "Darkroom", name="n1", type="Normal", count=9))
    pg = make_pg(custom, namespace, "orders")
    core.create_namespaced_event(namespace, recorded(pg, "Postgresql", name="pg1"))
    custom.create_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], {
        "apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": "job"},
        "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}})  # fmt: skip
    task = custom.get_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], "job")
    core.create_namespaced_event(namespace, recorded(task, "Task", name="t1", count=5))

    def shown(path: str, detail: str) -> str | None:
        return badge(http.get(f"{path}?namespace={namespace}").get_data(as_text=True), detail)

    wait_for(lambda: shown("/", f"/ui/darkrooms/{namespace}/web") == "3 warnings", timeout_s=20)
    assert shown("/", f"/ui/darkrooms/{namespace}/calm") is None  # Normal Events only: no badge
    wait_for(lambda: shown("/ui/postgresqls", f"/ui/postgresqls/{namespace}/orders") == "1 warning", timeout_s=20)
    wait_for(lambda: shown("/ui/tasks", f"/ui/tasks/{namespace}/job") == "5 warnings", timeout_s=20)
    row = http.get(f"/ui/darkrooms/{namespace}/web/row").get_data(as_text=True)
    assert badge(row, f"/ui/darkrooms/{namespace}/web") == "3 warnings"


def test_a_warning_pushes_its_objects_row_again(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)
    apps: Any = client.AppsV1Api(api_client)
    web = make_darkroom(custom, namespace, "web")
    wait_shown(http, f"/ui/darkrooms/{namespace}/web")
    frames = Frames(http, f"/ui/live/darkrooms?namespace={namespace}")
    try:
        assert frames.next_named() == "ready"
        child = apps.create_namespaced_deployment(namespace, deployment("web", web))
        core.create_namespaced_event(namespace, recorded(web, "Darkroom", name="n1", type="Normal"))  # pushes nothing
        core.create_namespaced_event(namespace, recorded(child, "Deployment", name="d1", count=2))
        frames.until(f"Darkroom/{namespace}/web")
    finally:
        frames.close()
    assert frames.seen[-1] == f"Darkroom/{namespace}/web", frames.seen  # not a reset
    pushed = frames.data[f"Darkroom/{namespace}/web"]
    assert badge(pushed, f"/ui/darkrooms/{namespace}/web") == "2 warnings", pushed


def test_a_warning_about_a_pod_of_a_darkroom_pushes_its_row_with_the_pods_warnings_counted(
    http: Client, custom: Any, api_client: Any, namespace: str, access: ClusterAccess
) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)
    apps: Any = client.AppsV1Api(api_client)
    web = make_darkroom(custom, namespace, "web")
    apps.create_namespaced_deployment(namespace, workload("web", web))
    pod_name = running_pod(http, namespace, f"/ui/darkrooms/{namespace}/web", "darkroom-children")  # cached, under its ReplicaSet
    pod = core.read_namespaced_pod(pod_name, namespace)
    # a Pod the cache holds (labelled as the reconciler's) that no Darkroom controls
    stray = core.create_namespaced_pod(namespace, {"metadata": {"name": "stray", "labels": MANAGED},
                                                   "spec": {"containers": [{"name": "c", "image": "nginx"}]}})  # fmt: skip
    pods = access.cache.informer(PODS)
    assert pods is not None
    wait_for(lambda: pods.store.get(f"{namespace}/stray") is not None, timeout_s=20)
    detail = f"/ui/darkrooms/{namespace}/web"

    def count() -> int:
        label = badge(http.get(f"/?namespace={namespace}").get_data(as_text=True), detail)
        return int(label.split()[0]) if label else 0

    before = count()  # the real control plane may have recorded Warnings of its own about the Pod
    frames = Frames(http, f"/ui/live/darkrooms?namespace={namespace}")
    try:
        assert frames.next_named() == "ready"
        core.create_namespaced_event(namespace, recorded(stray, "Pod", name="stray1", reason="BackOff", count=5))  # pushes nothing
        core.create_namespaced_event(namespace, recorded(pod, "Pod", name="pod1", reason="BackOff", message="back-off restarting", count=2))
        frames.until(f"Darkroom/{namespace}/web")
    finally:
        frames.close()
    assert frames.seen == ["ready", f"Darkroom/{namespace}/web"], frames.seen  # nothing for the stray Pod's Warning
    pushed = frames.data[f"Darkroom/{namespace}/web"]
    assert badge(pushed, detail) == f"{before + 2} warnings", pushed
    assert count() == before + 2  # the page counts it too (and not the stray Pod's)
