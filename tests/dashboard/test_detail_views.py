"""Detail pages and what follows a write, without a browser.

Behaviours: the YAML view of a Darkroom (S3, with its credentials Secret) and of a Postgresql with their
children — ``?view=yaml`` opens it, ``managedFields`` and a Secret's data never appear (not its keys'
values, not in the page, not in a fragment), the Postgresql's password Secret is named only; a
create or delete goes back to the list as the user last had it ("All namespaces" stays, a namespace
filter stays, a list's own live refresh changes nothing, the notice names the object's namespace),
and without a remembered list to the object's namespace as before; the live block of an object
deleted elsewhere says so and brings the actions back disabled, out of band; ``/docs`` orders its
groups Darkrooms, Tasks, then the rest and shows no raw code spans or RST.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from backend.core.access import ClusterAccess
from cluster import DEPLOYMENTS
from kinds.names import MANAGED_BY_LABEL
from tests.dashboard.clients import Client
from tests.support import wait_for

DARKROOMS = ("deployments.example.com", "v1")
TASKS = ("example.example.com", "v1")
PG = ("database.db.example.com", "v1")
ACCESS_KEY = "AKIA-YAML-SENTINEL-4411"
SECRET_KEY = "yaml-secret-sentinel-never-shown-4411"
IMAGE_SENTINEL = "registry.example.com/trimmed-sentinel:1.2.3"
ANNOTATION_SENTINEL = "annotation-sentinel-7731"


def yaml_panel(html: str) -> str:
    match = re.search(r'<section id="yaml".*?</section>', html, re.S)
    assert match, "no YAML panel"
    return match.group(0)


def make_task(custom: Any, namespace: str, name: str) -> None:
    body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name},
            "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}}  # fmt: skip
    custom.create_namespaced_custom_object(*TASKS, namespace, "tasks", body)


def owned_by(obj: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    meta = obj["metadata"]
    return [{"apiVersion": obj["apiVersion"], "kind": kind, "name": meta["name"], "uid": meta["uid"], "controller": True}]


def test_yaml_view_of_an_s3_darkroom_hides_managed_fields_and_secrets(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    form = {"namespace": namespace, "name": "vault", "source.type": "S3", "source.bucket": "yaml-bucket", "source.region": "eu-west-1",
            "source.accessKey": ACCESS_KEY, "source.secretKey": SECRET_KEY, "subDomains": [f"yaml-{namespace}"]}  # fmt: skip
    assert http.post("/ui/darkrooms/new", form).status_code == 303
    core = client.CoreV1Api(api_client)
    encoded = set((core.read_namespaced_secret("vault-s3-credentials", namespace).data or {}).values())
    darkroom = custom.get_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", "vault")
    # The child the reconciler would make (no reconciler runs here); a ConfigMap someone else owns is no child.
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "vault", "ownerReferences": owned_by(darkroom, "Darkroom")},
                                                  "data": {"darkroom.conf": "cache=1"}})  # fmt: skip
    path = f"/ui/darkrooms/{namespace}/vault"
    wait_for(lambda: "kind: ConfigMap" in http.get(path + "?view=yaml").get_data(as_text=True), timeout_s=20)

    html = http.get(path + "?view=yaml").get_data(as_text=True)
    panel = yaml_panel(html)
    assert 'class="card yaml-panel open"' in panel and f'href="{path}"' in panel  # ?view=yaml opens it; Close goes to the page
    assert "kind: Darkroom" in panel and "credentialsSecretRef" in panel and "name: vault-s3-credentials" in panel
    assert 'data-kind="ConfigMap"' in panel and "darkroom.conf: cache=1" in panel
    assert 'data-copy="yaml-object"' in panel and 'data-copy="yaml-child-0"' in panel
    for page in (html, http.get(path).get_data(as_text=True)):
        assert "managedFields" not in page and "fieldsV1" not in page
        assert ACCESS_KEY not in page and SECRET_KEY not in page
        assert not any(value in page for value in encoded)
    assert 'class="card yaml-panel"' in http.get(path).get_data(as_text=True)  # closed unless #yaml or ?view=yaml
    # the live fragment carries no YAML (the panel is a snapshot of the page's load)
    fragment = http.get(path, headers={"HX-Request": "true", "HX-Target": "darkroom-live"}).get_data(as_text=True)
    assert 'id="yaml"' not in fragment and "managedFields" not in fragment


def test_the_cache_keeps_children_trimmed_and_the_yaml_views_show_them_whole(
    http: Client, custom: Any, api_client: Any, namespace: str, access: ClusterAccess
) -> None:
    """The API's cache holds a child Deployment without its pod template and annotations (what the dashboard never
    draws: backend.core.trimming), while the tree still states it and both YAML views — the detail page's panel and the
    tree's YAML page — show it whole, read from the API server."""
    from kubernetes import client

    form = {"namespace": namespace, "name": "slim", "source.type": "WebFolder", "source.baseUrl": "https://example.com/",
            "subDomains": [f"slim-{namespace}"]}  # fmt: skip
    assert http.post("/ui/darkrooms/new", form).status_code == 303
    darkroom = custom.get_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", "slim")
    labels = {"app": "slim", MANAGED_BY_LABEL: "darkroom-operator"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "darkroom", "image": IMAGE_SENTINEL}]}}
    deployment = {"metadata": {"name": "slim", "labels": labels, "annotations": {"note": ANNOTATION_SENTINEL},
                               "ownerReferences": owned_by(darkroom, "Darkroom")},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "slim"}}, "template": template}}  # fmt: skip
    client.AppsV1Api(api_client).create_namespaced_deployment(namespace, deployment)
    informer = access.cache.informer(DEPLOYMENTS)
    assert informer is not None
    wait_for(lambda: informer.store.get(f"{namespace}/slim") is not None, timeout_s=20)

    cached = informer.store.get(f"{namespace}/slim")
    assert cached is not None and "template" not in cached["spec"] and "annotations" not in cached["metadata"]
    assert cached["spec"]["replicas"] == 2 and cached["metadata"]["labels"] == labels  # what the tree and selectors read
    path = f"/ui/darkrooms/{namespace}/slim"
    html = http.get(path + "?view=yaml").get_data(as_text=True)
    assert 'data-kind="Deployment"' in yaml_panel(html) and IMAGE_SENTINEL in yaml_panel(html)
    assert ANNOTATION_SENTINEL in yaml_panel(html)
    assert re.search(r'href="/ui/yaml/deployments/[^"]+/slim"', html)  # the tree's node, with its YAML page
    page = http.get(f"/ui/yaml/deployments/{namespace}/slim").get_data(as_text=True)
    assert IMAGE_SENTINEL in page and ANNOTATION_SENTINEL in page


def test_delete_confirmations_say_what_goes_with_each_darkroom(http: Client, custom: Any, namespace: str) -> None:
    """The list's rows and the detail page name the stored S3 credentials of the Darkroom that has them, and only there."""
    form = {"namespace": namespace, "name": "keyed", "source.type": "S3", "source.bucket": "keyed-bucket", "source.region": "eu-west-1",
            "source.accessKey": ACCESS_KEY, "source.secretKey": SECRET_KEY, "subDomains": [f"keyed-{namespace}"]}  # fmt: skip
    assert http.post("/ui/darkrooms/new", form).status_code == 303
    plain = {"namespace": namespace, "name": "plain", "source.type": "WebFolder", "source.baseUrl": "https://example.com/",
             "subDomains": [f"plain-{namespace}"]}  # fmt: skip
    assert http.post("/ui/darkrooms/new", plain).status_code == 303
    bare = "Its Deployment, Service, Ingress and ConfigMap go with it."
    stored = bare[:-1] + ", and so do the S3 credentials stored for it (Secret keyed-s3-credentials)."

    def listing() -> str:
        return str(http.get(f"/?namespace={namespace}").get_data(as_text=True))

    wait_for(lambda: all(f'data-name="{name}"' in listing() for name in ("keyed", "plain")))
    listed = listing()
    notes = dict(re.findall(r'data-name="([^"]+)"[^>]*?data-note="([^"]*)"', listed, re.S))
    assert notes == {"keyed": stored, "plain": bare}
    assert "stored S3 credentials" not in listed  # the dialog's text is the row's, filled in as it opens
    keyed = http.get(f"/ui/darkrooms/{namespace}/keyed").get_data(as_text=True)
    assert f"<strong>{namespace}/keyed</strong>: {stored}" in keyed
    assert f"<strong>{namespace}/plain</strong>: {bare}" in http.get(f"/ui/darkrooms/{namespace}/plain").get_data(as_text=True)


def test_yaml_view_of_a_postgresql_names_its_password_secret_only(http: Client, custom: Any, api_client: Any, namespace: str) -> None:
    from kubernetes import client

    body = {"apiVersion": f"{PG[0]}/{PG[1]}", "kind": "Postgresql", "metadata": {"name": "ledger"}, "spec": {}}
    pg = custom.create_namespaced_custom_object(*PG, namespace, "postgresqls", body)
    core = client.CoreV1Api(api_client)
    password = "pg-password-sentinel-never-shown-9931"
    core.create_namespaced_secret(namespace, {"metadata": {"name": "ledger-credentials", "ownerReferences": owned_by(pg, "Postgresql")},
                                              "stringData": {"password": password}})  # fmt: skip
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "ledger-config", "ownerReferences": owned_by(pg, "Postgresql")},
                                                  "data": {"postgresql.conf": "max_connections = 10"}})  # fmt: skip
    path = f"/ui/postgresqls/{namespace}/ledger?view=yaml"
    wait_for(lambda: "kind: ConfigMap" in http.get(path).get_data(as_text=True), timeout_s=20)
    html = http.get(path).get_data(as_text=True)
    panel = yaml_panel(html)
    assert "kind: Postgresql" in panel and "max_connections = 10" in panel
    secret_entry = re.search(r'<p class="yaml-child muted" data-kind="Secret">(.*?)</p>', panel, re.S)
    assert secret_entry and "ledger-credentials" in secret_entry.group(1) and "never shown" in secret_entry.group(1)
    assert "kind: Secret" not in panel and "managedFields" not in html
    assert password not in html and base64.b64encode(password.encode()).decode() not in html


def test_a_create_or_delete_goes_back_to_the_list_the_user_had(http: Client, custom: Any, namespace: str) -> None:
    # No list seen yet: the object's namespace, as before.
    created = http.post("/ui/tasks/new", {"namespace": namespace, "name": "first", "priority": "3", "deadline": "2031-01-01T00:00"})
    assert created.status_code == 303 and created.headers["Location"] == f"/ui/tasks?namespace={namespace}&created=first"

    # "All namespaces" (no filter) stays; the notice still names the namespace.
    assert http.get("/ui/tasks").status_code == 200
    created = http.post("/ui/tasks/new", {"namespace": namespace, "name": "second", "priority": "3", "deadline": "2031-01-01T00:00"})
    assert created.headers["Location"] == f"/ui/tasks?in={namespace}&created=second"
    notice = http.get(created.headers["Location"]).get_data(as_text=True)
    assert f"Task {namespace}/second created." in notice and "data-transient" in notice and "data-dismiss" in notice

    # A filter of another namespace and a name filter (changed through htmx) stay too.
    wait_for(lambda: http.get(f"/ui/tasks/{namespace}/second").status_code == 200, timeout_s=10)
    http.get("/ui/tasks?namespace=default&q=sec", headers={"HX-Request": "true", "HX-Target": "task-list"})
    # an older page's live refresh (all namespaces) answering after that is no choice of the user's
    refresh = http.get("/ui/tasks", headers={"HX-Request": "true", "HX-Target": "task-list", "X-Dashboard-Refresh": "live"})
    assert refresh.status_code == 200 and 'hx-headers=\'{"X-Dashboard-Refresh": "live"}\'' in refresh.get_data(as_text=True)
    deleted = http.post(f"/ui/tasks/{namespace}/second/delete", {})
    assert re.fullmatch(rf"/ui/tasks\?namespace=default&q=sec&in={namespace}&(deleted|terminating)=second", deleted.headers["Location"])

    # The list of the object's own namespace: no "in".
    http.get(f"/ui/tasks?namespace={namespace}&page=2")
    deleted = http.post(f"/ui/tasks/{namespace}/first/delete", {})
    assert re.fullmatch(rf"/ui/tasks\?namespace={namespace}&(deleted|terminating)=first", deleted.headers["Location"])
    # The detail page's breadcrumb leads back to that list.
    make_task(custom, namespace, "third")
    wait_for(lambda: http.get(f"/ui/tasks/{namespace}/third").status_code == 200, timeout_s=10)
    assert f'<a href="/ui/tasks?namespace={namespace}">Tasks</a>' in http.get(f"/ui/tasks/{namespace}/third").get_data(as_text=True)


def test_a_create_goes_back_to_the_list_its_new_link_was_on(http: Client, namespace: str) -> None:
    """Tasks with events, all namespaces: its New link names it, and the create comes back to it (not to the Tasks
    list, which this person never had, narrowed to the object's namespace)."""
    html = http.get("/ui/combinedtasks").get_data(as_text=True)
    link = re.search(r'id="new-button"[^>]*href="([^"]+)"|href="([^"]+)"[^>]*id="new-button"', html)
    assert link, html
    new_path = (link.group(1) or link.group(2)).replace("&amp;", "&")
    assert new_path == "/ui/tasks/new?back=%2Fui%2Fcombinedtasks"
    form = http.get(new_path).get_data(as_text=True)
    assert '<input type="hidden" name="back" value="/ui/combinedtasks">' in form
    fields = {"namespace": namespace, "priority": "3", "deadline": "2031-01-01T00:00", "back": "/ui/combinedtasks"}
    created = http.post("/ui/tasks/new", {**fields, "name": "from-combined"})
    assert created.status_code == 303 and created.headers["Location"] == f"/ui/combinedtasks?in={namespace}&created=from-combined"
    # A filtered list, as shown (its page number aside): the same filters again.
    created = http.post("/ui/tasks/new", {**fields, "name": "filtered", "back": "/ui/tasks?q=fil&sort=-age&page=2"})
    assert created.headers["Location"] == f"/ui/tasks?q=fil&sort=-age&in={namespace}&created=filtered"
    # Anything but one of the dashboard's lists is no way back.
    for index, elsewhere in enumerate(("https://elsewhere.example/ui/tasks", "//elsewhere.example/ui/tasks", "/ui/tasks/new", "/logout")):
        created = http.post("/ui/tasks/new", {**fields, "name": f"elsewhere-{index}", "back": elsewhere})
        assert created.status_code == 303 and created.headers["Location"].startswith("/ui/tasks?"), elsewhere


def test_the_live_block_of_a_deleted_object_disables_the_actions_out_of_band(http: Client, custom: Any, namespace: str) -> None:
    make_task(custom, namespace, "ephemeral")
    path = f"/ui/tasks/{namespace}/ephemeral"
    wait_for(lambda: http.get(path).status_code == 200, timeout_s=10)
    page = http.get(path).get_data(as_text=True)
    assert 'commandfor="delete-dialog" command="show-modal"' in page and '<dialog id="delete-dialog"' in page
    assert "hx-swap-oob" not in page

    custom.delete_namespaced_custom_object(*TASKS, namespace, "tasks", "ephemeral")
    wait_for(lambda: http.get(path).status_code == 404, timeout_s=30, message="the Task was never deleted")
    gone = http.get(path, headers={"HX-Request": "true", "HX-Target": "task-live"}).get_data(as_text=True)
    assert "This Task no longer exists" in gone and 'role="alert"' in gone
    actions = re.search(r'<div class="head-actions" id="detail-actions" hx-swap-oob="true">.*?</div>', gone, re.S)
    assert actions, gone
    assert '<button type="button" class="danger" disabled>Delete…</button>' in actions.group(0)
    assert 'aria-disabled="true"' in actions.group(0) and "/edit" not in actions.group(0) and "<dialog" not in actions.group(0)
    assert "every 10s" not in gone  # nothing left to poll


def test_docs_order_and_prose(http: Client) -> None:
    html = http.get("/docs").get_data(as_text=True)
    headings = re.findall(r'<h2 id="group-\d+-heading">([^<]+)</h2>', html)
    assert headings[:4] == ["Darkrooms", "Tasks", "Postgresqls", "CombinedTasks"] and headings[-1] == "Dashboard (HTML)"
    main = html.split('<main id="main"', 1)[1]
    assert "`" not in main and ":func:" not in main and ":mod:" not in main
    assert "<code>source.baseUrl</code>" in main
    assert "<style" not in html and 'href="/static/docs.css"' in html and 'href="/static/dashboard.css"' in html
    assert 'aria-current="page">API<span class="label-wide"> docs</span>' in html
