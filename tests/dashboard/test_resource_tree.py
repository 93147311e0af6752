"""The resource tree of the detail pages on both clusters, without a browser.

Behaviours: a Darkroom's page shows its Deployment → the ReplicaSet the cluster made of it → that ReplicaSet's Pod, and
its Service → the EndpointSlice the cluster made of it (the Pod's endpoint ready), each with its state badge, age and a
link to its YAML page (which shows the object, read as the person) — the Pod also a link to its logs page with that pod
chosen; a Postgresql's page shows its StatefulSet → its Pod → the PersistentVolumeClaim the Pod mounts. The page's one
live stream says ``children`` when one of those Pods changes (its status patched: restarts, a crash loop), and the tree
then shows the Pod's new state; it says ``events`` for an Event about that Pod, which the timeline then shows. A YAML
page of a kind outside the tree is a 404 naming the kinds, a bad namespace a 400 naming the field. On the real control
plane, a person who may read everything the pages show but Pods sees the ReplicaSet and, under it, that they may not
list Pods there — never the Pods; one who may list the Pods but not read their logs sees the Pods without a logs link
(the logs page would refuse them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kinds.postgresqls import DATA_VOLUME, claim_name
from tests.dashboard.clients import Client, Deleter
from tests.dashboard.test_live_details import Frames, controlled_by, event_about, make_darkroom
from tests.dashboard.test_postgresql_pages import make_pg
from tests.support import wait_for

MANAGED = {"app.kubernetes.io/managed-by": "darkroom-operator"}
CHILDREN = {"HX-Request": "true", "HX-Target": "darkroom-children"}


def workload(name: str, owner: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A Deployment's or StatefulSet's body as the reconciler makes it: its pod template labelled managed-by too."""
    labels = {"app.kubernetes.io/name": "tree-test", "app.kubernetes.io/instance": name}
    template = {"metadata": {"labels": {**MANAGED, **labels}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    return {"metadata": {"name": name, "labels": {**MANAGED, **labels}, "ownerReferences": controlled_by(owner)},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": template, **spec}}  # fmt: skip


def tree_of(http: Client, path: str, target: str) -> str:
    html: str = http.get(path, headers={"HX-Request": "true", "HX-Target": target}).get_data(as_text=True)
    return html


def node(html: str, kind: str) -> str:
    """The first node of ``kind`` (its own line: the <div class="node-line"> after its <li>)."""
    match = re.search(rf'<li class="tree-node" data-kind="{kind}".*?</div>', html, re.S)
    assert match, html
    return match.group(0)


def running_pod(http: Client, namespace: str, path: str, target: str) -> str:
    """The tree once it shows a Pod that runs and is ready; that Pod's name."""
    wait_for(lambda: 'data-kind="Pod" data-name="' in (html := tree_of(http, path, target)) and 'data-state="ready"' in node(html, "Pod"),
             timeout_s=60, interval_s=0.2)  # fmt: skip
    found = re.search(r'data-kind="Pod" data-name="([^"]+)"', tree_of(http, path, target))
    assert found
    return found.group(1)


def test_a_darkrooms_tree_is_deployment_replicaset_pod_and_a_pod_change_is_live(
    http: Client, custom: Any, api_client: Any, namespace: str
) -> None:
    from kubernetes import client

    apps: Any = client.AppsV1Api(api_client)
    core: Any = client.CoreV1Api(api_client)
    web = make_darkroom(custom, namespace, "web")
    apps.create_namespaced_deployment(namespace, workload("web", web))
    selector = workload("web", web)["spec"]["selector"]["matchLabels"]
    service = {"metadata": {"name": "web", "labels": MANAGED, "ownerReferences": controlled_by(web)},
               "spec": {"selector": selector, "ports": [{"port": 80, "targetPort": 3000}]}}  # fmt: skip
    core.create_namespaced_service(namespace, service)
    path = f"/ui/darkrooms/{namespace}/web"
    pod = running_pod(http, namespace, path, "darkroom-children")
    sliced = re.compile(
        r'data-kind="Service" data-name="web".*data-kind="EndpointSlice" data-name="web-[a-z0-9]{5}" data-state="ready"', re.S
    )
    wait_for(lambda: sliced.search(tree_of(http, path, "darkroom-children")), timeout_s=60, interval_s=0.2)
    assert "1 of 1 endpoints ready, port 3000" in node(tree_of(http, path, "darkroom-children"), "EndpointSlice")
    html = tree_of(http, path, "darkroom-children")
    assert html.lstrip().startswith('<section class="card tree-card" id="darkroom-children"')
    deployment, replicaset = node(html, "Deployment"), node(html, "ReplicaSet")
    assert 'data-name="web"' in deployment and "1 of 1 ready" in deployment and f'href="/ui/yaml/deployments/{namespace}/web"' in deployment
    assert re.search(r'data-name="web-[a-z0-9]+"', replicaset) and 'data-state="ready"' in replicaset
    assert html.index('data-kind="Deployment"') < html.index('data-kind="ReplicaSet"') < html.index('data-kind="Pod"')
    assert '<time class="age"' in node(html, "Pod") and f'href="/ui/yaml/pods/{namespace}/{pod}"' in node(html, "Pod")
    yaml_page = http.get(f"/ui/yaml/pods/{namespace}/{pod}").get_data(as_text=True)
    assert f"Pod {pod}</h1>" in yaml_page and "kind: Pod" in yaml_page and "managedFields" not in yaml_page
    logs = f"/ui/darkrooms/{namespace}/web/logs?pod={pod}&follow=1"
    link = f'<a class="node-logs" href="{logs.replace("&", "&amp;")}">Logs<span class="sr-only"> of Pod {pod}</span></a>'
    assert link in node(html, "Pod")
    logs_page = http.get(logs)
    assert logs_page.status_code == 200 and f'<option value="{pod}" selected>' in logs_page.get_data(as_text=True)

    frames = Frames(http, f"/ui/live/darkroom/{namespace}/web")
    try:
        assert frames.next_named() == "ready"
        crashing = {"name": "c", "restartCount": 3, "ready": False, "state": {"running": None, "waiting": {"reason": "CrashLoopBackOff"}}}
        core.patch_namespaced_pod_status(pod, namespace, {"status": {"containerStatuses": [crashing]}}, _preload_content=False)
        frames.until("children")
        uid = json.loads(core.read_namespaced_pod(pod, namespace, _preload_content=False).data)["metadata"]["uid"]
        core.create_namespaced_event(namespace, event_about(namespace, {"metadata": {"name": pod, "uid": uid}}, "Pod", "a pod's event"))
        frames.until("events")  # an Event about an object of its tree is the page's too
    finally:
        frames.close()
    changed = node(tree_of(http, path, "darkroom-children"), "Pod")
    assert 'data-state="crashloopbackoff"' in changed and "3 restarts" in changed, changed
    assert f'data-label="Object">Pod/{pod}</td>' in tree_of(http, path, "darkroom-events")


def test_a_postgresqls_tree_is_statefulset_pod_and_its_claim(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    apps: Any = client.AppsV1Api(api_client)
    pg = make_pg(custom, namespace, "db")
    claim_template = {"metadata": {"name": DATA_VOLUME, "labels": MANAGED},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
    apps.create_namespaced_stateful_set(namespace, workload("db", pg, serviceName="db-headless", volumeClaimTemplates=[claim_template]))
    path = f"/ui/postgresqls/{namespace}/db"
    under_pod = re.compile(r'data-kind="Pod" data-name="db-0".*data-kind="PersistentVolumeClaim"', re.S)
    # the claim is the database's child until its Pod (made after it) reaches the cache; then it hangs under the Pod
    wait_for(lambda: under_pod.search(tree_of(http, path, "postgresql-children")), timeout_s=60, interval_s=0.2)
    html = tree_of(http, path, "postgresql-children")
    assert (
        html.index('data-kind="StatefulSet"')
        < html.index('data-kind="Pod" data-name="db-0"')
        < html.index('data-kind="PersistentVolumeClaim"')
    )
    claim = node(html, "PersistentVolumeClaim")
    assert f'data-name="{claim_name("db")}"' in claim and f'href="/ui/yaml/persistentvolumeclaims/{namespace}/{claim_name("db")}"' in claim
    assert html.count('data-kind="PersistentVolumeClaim"') == 1  # under its Pod, not again under the database


def test_a_yaml_page_of_another_kind_or_namespace_is_refused_naming_it(http: Client, namespace: str) -> None:
    secret = http.get("/ui/yaml/secrets/default/x")
    text = secret.get_data(as_text=True)
    assert secret.status_code == 404 and "YAML page for &#39;secrets&#39;: use one of configmaps, deployments" in text, text
    bad = http.get("/ui/yaml/pods/Not_A_Label/x")
    assert bad.status_code == 400 and "amespace: must be a DNS label" in bad.get_data(as_text=True)
    gone = http.get(f"/ui/yaml/pods/{namespace}/nothing")
    assert gone.status_code == 404 and gone.mimetype == "text/html"


def test_a_person_who_may_not_list_pods_is_told_so_in_the_tree(deleter: Deleter) -> None:
    from kubernetes import client

    custom: Any = client.CustomObjectsApi(deleter.admin)
    apps: Any = client.AppsV1Api(deleter.admin)
    web = make_darkroom(custom, deleter.allowed, "web")
    apps.create_namespaced_deployment(deleter.allowed, workload("web", web))
    browser = deleter.app.test_client()
    assert browser.post("/login", data={"token": deleter.token, "next": "/"}).status_code == 303
    http = Client(browser)
    path = f"/ui/darkrooms/{deleter.allowed}/web"
    wait_for(lambda: 'data-kind="ReplicaSet"' in tree_of(http, path, "darkroom-children"), timeout_s=60, interval_s=0.2)
    html = tree_of(http, path, "darkroom-children")
    assert f'data-refused="Pods">Pods: you may not list pods in {deleter.allowed}</p>' in html
    assert 'data-kind="Pod"' not in html


def test_a_person_who_may_list_pods_but_not_read_their_logs_gets_no_logs_link(deleter: Deleter) -> None:
    from kubernetes import client

    custom: Any = client.CustomObjectsApi(deleter.admin)
    apps: Any = client.AppsV1Api(deleter.admin)
    rbac: Any = client.RbacAuthorizationV1Api(deleter.admin)
    listing = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}  # not pods/log
    rbac.create_namespaced_role(deleter.allowed, {"metadata": {"name": "pod-reader"}, "rules": [listing]})
    rbac.create_namespaced_role_binding(deleter.allowed, {"metadata": {"name": "pod-reader"}, "subjects": [
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}})  # fmt: skip
    web = make_darkroom(custom, deleter.allowed, "web")
    apps.create_namespaced_deployment(deleter.allowed, workload("web", web))
    browser = deleter.app.test_client()
    assert browser.post("/login", data={"token": deleter.token, "next": "/"}).status_code == 303
    http = Client(browser)
    pod = running_pod(http, deleter.allowed, f"/ui/darkrooms/{deleter.allowed}/web", "darkroom-children")
    html = tree_of(http, f"/ui/darkrooms/{deleter.allowed}/web", "darkroom-children")
    assert 'class="node-yaml"' in node(html, "Pod") and 'class="node-logs"' not in html
    refused = http.get(f"/ui/darkrooms/{deleter.allowed}/web/logs?pod={pod}&follow=1")
    assert refused.status_code == 403 and "pods/log" in refused.get_data(as_text=True)
