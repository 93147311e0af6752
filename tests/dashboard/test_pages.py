"""The dashboard's HTML without a browser: pages and fragments from the same blocks, filters, sort orders and
paging, form validation and writes through the JSON API's flow, CSRF rules (dashboard routes always;
the JSON API only for cookie sessions in a CSRF-able shape), CSP on HTML, untrusted text escaped; the header names
who the pages are shown for (a logged-in person, with the logout the page then uses; the local mode, without one)
and the login mode sends a navigating browser to the login page; domain
links use https:// only when the Ingress has TLS (the list and status from ``status.tls``, the children
panel from the Ingress it shows); an S3 Darkroom made with both keys left empty reads a public bucket.
"""

from __future__ import annotations

import gc
import re
import warnings
from typing import Any
from urllib.parse import parse_qs

from flask import Flask

from backend.api.watch import watching
from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.identity.cookies import SESSION_COOKIE
from cluster import EVENTS
from tests.clusters import ClusterProcess
from tests.dashboard.clients import TOKEN_META, Client
from tests.identity.logins import login_settings, person_of
from tests.support import wait_for

DARKROOMS = ("deployments.example.com", "v1")
TASKS = ("example.example.com", "v1")
NAVIGATING = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def make_task(custom: Any, namespace: str, name: str, **spec: Any) -> None:
    body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name},
            "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z", **spec}}  # fmt: skip
    custom.create_namespaced_custom_object(*TASKS, namespace, "tasks", body)


def test_list_page_fragments_and_paging(http: Client, custom: Any, namespace: str) -> None:
    for i in range(55):
        make_task(custom, namespace, f"task-{i:03d}")
    wait_for(lambda: "55 Tasks" in http.get(f"/ui/tasks?namespace={namespace}").get_data(as_text=True), timeout_s=10)

    page = http.get(f"/ui/tasks?namespace={namespace}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert html.count('sse-swap="Task/') == 50 and "Page 1 of 2" in html
    second = http.get(f"/ui/tasks?namespace={namespace}&page=2").get_data(as_text=True)
    assert second.count('sse-swap="Task/') == 5 and "task-054" in second

    # the same block, alone, for htmx (no layout)
    fragment = http.get(f"/ui/tasks?namespace={namespace}&q=task-05", headers={"HX-Request": "true", "HX-Target": "task-list"})
    text = fragment.get_data(as_text=True)
    assert text.lstrip().startswith('<section id="task-list"') and "<html" not in text
    assert text.count('sse-swap="Task/') == 5
    row = http.get(f"/ui/tasks/{namespace}/task-001/row").get_data(as_text=True)
    assert row.strip().startswith("<tr") and "task-001" in row
    assert http.get(f"/ui/tasks/{namespace}/missing/row").get_data(as_text=True) == ""
    # a history restore gets the whole page
    restore = http.get("/ui/tasks", headers={"HX-Request": "true", "HX-Target": "task-list", "HX-History-Restore-Request": "true"})
    assert "<html" in restore.get_data(as_text=True)


def test_empty_state_and_not_found(http: Client, namespace: str) -> None:
    html = http.get(f"/?namespace={namespace}").get_data(as_text=True)
    assert "No Darkrooms match" in html and "/ui/darkrooms/new?namespace=" + namespace in html
    missing = http.get(f"/ui/darkrooms/{namespace}/nothing")
    assert missing.status_code == 404 and "not found" in missing.get_data(as_text=True)


def test_darkroom_form_validation_and_create(http: Client, custom: Any, namespace: str) -> None:
    ok = f"ok-{namespace}"  # unique in the cluster: the API refuses a sub-domain another Darkroom has
    form = {"namespace": namespace, "name": "shop", "source.type": "WebFolder", "source.baseUrl": "not-a-url", "subDomains": [ok, "Bad!"],
            "source.bucket": "ignored-for-webfolder", "replicas": "two"}  # fmt: skip
    invalid = http.post("/ui/darkrooms/new", form)
    html = invalid.get_data(as_text=True)
    assert invalid.status_code == 422
    for field_id in ("f-source-baseUrl-error", "f-subDomains-1-error", "f-replicas-error"):
        assert f'id="{field_id}"' in html, field_id
    assert "ignored-for-webfolder" in html  # what was typed is shown again; the other type's fields are not sent
    assert custom.list_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms")["items"] == []

    added = http.post("/ui/darkrooms/new", {**form, "add-item": "subDomains"})
    assert added.status_code == 200 and 'id="f-subDomains-2"' in added.get_data(as_text=True)
    removed = http.post("/ui/darkrooms/new", {**form, "remove-item": "subDomains:1"})
    assert 'value="Bad!"' not in removed.get_data(as_text=True)

    created = http.post(
        "/ui/darkrooms/new", {**form, "source.baseUrl": "https://example.com/img", "subDomains": [f"ok-{namespace}"], "replicas": "2"}
    )
    assert created.status_code == 303 and created.headers["Location"] == f"/?namespace={namespace}&created=shop"
    stored = custom.get_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", "shop")
    assert stored["spec"]["source"] == {"type": "WebFolder", "baseUrl": "https://example.com/img"}
    assert stored["spec"]["replicas"] == 2

    again = http.post(
        "/ui/darkrooms/new",
        {**form, "source.baseUrl": "https://example.com/img", "subDomains": [ok], "replicas": ""},
        headers={"HX-Request": "true"},
    )
    assert again.status_code == 409 and "already exists" in again.get_data(as_text=True)
    edit = {"source.type": "WebFolder", "source.baseUrl": "https://e.example.com", "subDomains": ok, "generation": "1"}
    htmx = http.post(f"/ui/darkrooms/{namespace}/shop/edit", edit, headers={"HX-Request": "true"})
    assert htmx.status_code == 200 and htmx.headers["HX-Redirect"] == f"/ui/darkrooms/{namespace}/shop?saved=1"
    stale = http.post(f"/ui/darkrooms/{namespace}/shop/edit", {**edit, "source.baseUrl": "https://x.example.com"})  # generation 1
    assert stale.status_code == 409 and "https://e.example.com" in stale.get_data(as_text=True)


def test_csrf_is_required_on_every_dashboard_write(http: Client, namespace: str) -> None:
    form = {"namespace": namespace, "name": "t", "priority": "1", "deadline": "2031-01-01T00:00"}
    assert http.post("/ui/tasks/new", form, token=False).status_code == 403
    assert http.post("/ui/tasks/new", {**form, "csrf_token": "00"}, token=False).status_code == 403
    assert http.client.post("/ui/tasks/new", data=form, headers={"X-CSRF-Token": http.csrf}).status_code == 303  # the header works too
    assert http.post(f"/ui/tasks/{namespace}/t/finish", token=False).status_code == 403
    assert http.post(f"/ui/tasks/{namespace}/t/delete", token=False).status_code == 403
    # a token from another browser (other cookie) is refused
    other = Client(http.client.application.test_client())
    assert other.post("/ui/tasks/new", {**form, "name": "u", "csrf_token": http.csrf}, token=False).status_code == 403


def test_the_login_mode_pages_and_the_json_api_csrf_rule(kube: ClusterProcess, api_client: Any, namespace: str) -> None:
    """A person's session in the dashboard: the header names them and offers the logout the page then uses; JSON with the
    cookie needs no CSRF token (it needs a CORS preflight), a form-shaped POST riding the cookie does."""
    person = person_of(kube, api_client, namespace)
    settings = login_settings(kube.kubeconfig, namespace)
    access = ClusterAccess.start(settings, environ={})
    app = create_app(settings, access=access)
    try:
        client = app.test_client()
        assert client.get("/", headers=NAVIGATING).headers["Location"] == "/login?next=%2F"
        login_page = client.get("/login?next=/ui/tasks")
        html = login_page.get_data(as_text=True)
        assert login_page.status_code == 200 and 'name="token"' in html and 'value="/ui/tasks"' in html
        assert "default-src 'self'" in login_page.headers["Content-Security-Policy"]
        assert client.post("/darkrooms", json={}, headers=person.bearer).status_code == 422

        login = client.post("/login", data={"token": person.token, "next": "/ui/tasks"})
        assert login.status_code == 303 and login.headers["Location"] == "/ui/tasks" and client.get_cookie(SESSION_COOKIE) is not None
        assert client.post("/darkrooms", json={}).status_code == 422  # JSON needs a CORS preflight: no token needed
        assert client.post("/darkrooms", data="{}", content_type="text/plain").status_code == 403  # a form-shaped POST riding the cookie
        page = client.get("/ui/tasks").get_data(as_text=True)
        assert f'<span class="who-name" title="{person.name}, logged in with a Kubernetes token">{person.name}</span>' in page
        assert 'action="/logout"' in page and person.token not in page
        csrf = TOKEN_META.search(page)
        assert csrf is not None
        same_site = {"Accept": "text/html", "Sec-Fetch-Site": "same-origin"}
        logout = client.post("/logout", data={"csrf_token": csrf.group(1)}, headers=same_site)
        assert logout.status_code == 303 and logout.headers["Location"] == "/login?logged_out=1"
        assert client.get("/ui/tasks", headers=NAVIGATING).headers["Location"] == "/login?next=%2Fui%2Ftasks"
    finally:
        watching.close(app)
        access.stop()


def test_the_local_mode_says_so_and_offers_no_logout(http: Client) -> None:
    page = http.get("/ui/tasks").get_data(as_text=True)
    assert '<span class="who-name" title="One-person mode on this machine: acting as the kubeconfig&#39;s own identity">' in page
    assert 'action="/logout"' not in page


def test_untrusted_strings_are_escaped(http: Client, custom: Any, namespace: str) -> None:
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    make_task(custom, namespace, "xss", details=payload)
    wait_for(lambda: http.get(f"/ui/tasks/{namespace}/xss").status_code == 200, timeout_s=10)
    for path in (f"/ui/tasks/{namespace}/xss", f"/ui/tasks?namespace={namespace}", f"/?q={payload}"):
        html = http.get(path).get_data(as_text=True)
        assert "<script>alert" not in html and "<img src=x" not in html, path
        assert "&lt;script&gt;" in html, path
    assert not re.search(r"<script>(?!\s*$)", http.get("/").get_data(as_text=True).split("</head>")[1])  # no inline script


def test_settings_secret_key_makes_tokens_stable(make_app: Any, namespace: str) -> None:
    """Replicas (or a restarted process) sharing ``secret_key`` accept each other's session and CSRF token."""
    first = Client(make_app(testing=False, secret_key="k1").test_client())
    cookie = first.client.get_cookie(SESSION_COOKIE)
    assert cookie is not None
    form = {"namespace": namespace, "name": "other-replica", "priority": "1", "deadline": "2031-01-01T00:00", "csrf_token": first.csrf}
    for key, status in (("k2", 403), ("k1", 303)):
        replica = make_app(testing=False, secret_key=key).test_client()
        replica.set_cookie(SESSION_COOKIE, cookie.value)
        assert replica.post("/ui/tasks/new", data=form).status_code == status, key


def test_live_connection_resumes_from_the_render(http: Client, namespace: str) -> None:
    """The list's live URL carries the stream position taken before the page read the cache, so a change
    made while the page loads is replayed when the live connection opens."""
    html = http.get(f"/?namespace={namespace}").get_data(as_text=True)
    match = re.search(r'sse-connect="/ui/live/darkrooms\?namespace=[^"]*lastEventId=(\d+)[&"]', html)
    assert match, html[:2000]
    stream = http.get(f"/ui/live/darkrooms?namespace={namespace}&lastEventId={match.group(1)}", buffered=False)
    try:
        first = next(iter(stream.response)).decode()
        assert "event: reset" not in first  # a known, recent position: no reload needed
    finally:
        stream.close()


def test_the_live_connection_names_the_rows_of_its_page_and_its_sort(http: Client, custom: Any, namespace: str) -> None:
    """The list's live URL names the rows its page shows (its stream sends only theirs: backend/dashboard/liverows.py)
    and its sort order; an empty page names none."""
    for i in range(52):
        make_task(custom, namespace, f"task-{i:03d}")
    wait_for(lambda: "52 Tasks" in http.get(f"/ui/tasks?namespace={namespace}").get_data(as_text=True), timeout_s=10)

    def live(query: str) -> dict[str, list[str]]:
        html = http.get(f"/ui/tasks?{query}").get_data(as_text=True)
        match = re.search(r'sse-connect="/ui/live/tasks\?([^"]*)"', html)
        assert match, html[:2000]
        return parse_qs(match.group(1).replace("&amp;", "&"), keep_blank_values=True)

    first = live(f"namespace={namespace}&sort=-name")
    assert first["sort"] == ["-name"] and first["namespace"] == [namespace]
    assert first["rows"][0].split(",") == [f"{namespace}/task-{i:03d}" for i in range(51, 1, -1)]
    second = live(f"namespace={namespace}&sort=-name&page=2")
    assert second["rows"] == [f"{namespace}/task-001,{namespace}/task-000"] and "page" not in second
    assert live(f"namespace={namespace}&q=nothing-matches")["rows"] == [""]


def test_an_object_someone_else_made_is_not_shown_as_a_child(http: Client, custom: Any, namespace: str, api_client: Any) -> None:
    """The reconciler leaves a foreign Service of the Darkroom's name alone (ChildConflict); the detail page says so."""
    from kubernetes import client

    client.CoreV1Api(api_client).create_namespaced_service(
        namespace, {"metadata": {"name": "billing"}, "spec": {"ports": [{"port": 8080}], "selector": {"app": "billing"}}}
    )
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "billing"},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/i"}, "subDomains": [f"billing-{namespace}"]},
    }
    custom.create_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", body)
    wait_for(lambda: http.get(f"/ui/darkrooms/{namespace}/billing").status_code == 200, message="the Darkroom cached")
    html = http.get(f"/ui/darkrooms/{namespace}/billing").get_data(as_text=True)
    assert "a Service of this name exists but belongs to someone else (left alone)" in html
    assert "port 8080" not in html


def _darkroom_with_ingress(custom: Any, api_client: Any, namespace: str, name: str, *, tls: bool) -> None:
    """A Darkroom, the status a reconciler would publish and an Ingress it controls (no reconciler runs here)."""
    from kubernetes import client

    host = f"{name}-{namespace}.darkroom.example.com"
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": name},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/i"}, "subDomains": [f"{name}-{namespace}"]},
    }
    uid = custom.create_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", body)["metadata"]["uid"]
    custom.patch_namespaced_custom_object_status(*DARKROOMS, namespace, "darkrooms", name, {"status": {"domains": [host], "tls": tls}})
    owner = {"apiVersion": body["apiVersion"], "kind": "Darkroom", "name": name, "uid": uid, "controller": True}
    rule = {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}  # fmt: skip
    spec: dict[str, Any] = {"rules": [rule]}
    if tls:
        spec["tls"] = [{"hosts": [host], "secretName": "wildcard"}]
    client.NetworkingV1Api(api_client).create_namespaced_ingress(
        namespace, {"metadata": {"name": name, "ownerReferences": [owner]}, "spec": spec}
    )


def test_domain_links_use_https_only_with_tls(http: Client, custom: Any, namespace: str, api_client: Any) -> None:
    for name, tls in (("plain", False), ("secure", True)):
        _darkroom_with_ingress(custom, api_client, namespace, name, tls=tls)
    wait_for(lambda: "https://secure-" in http.get(f"/?namespace={namespace}").get_data(as_text=True), message="status.tls cached")
    listed = http.get(f"/?namespace={namespace}").get_data(as_text=True)
    for name, scheme in (("plain", "http"), ("secure", "https")):
        host = f"{name}-{namespace}.darkroom.example.com"
        other = "https" if scheme == "http" else "http"
        assert f'href="{scheme}://{host}"' in listed and f'href="{other}://{host}"' not in listed, name
        detail = http.get(f"/ui/darkrooms/{namespace}/{name}").get_data(as_text=True)
        # The status line and the Ingress in the children panel: both links, both with the scheme.
        assert detail.count(f'href="{scheme}://{host}"') == 2 and f'href="{other}://{host}"' not in detail, name


def test_an_s3_darkroom_with_both_keys_left_empty_reads_a_public_bucket(http: Client, custom: Any, namespace: str) -> None:
    new = http.get(f"/ui/darkrooms/new?namespace={namespace}").get_data(as_text=True)
    assert "Leave both empty for a public bucket." in new
    form = {"namespace": namespace, "name": "open", "source.type": "S3", "source.bucket": "open-data", "source.region": "eu-west-1",
            "source.accessKey": "", "source.secretKey": "", "subDomains": [f"open-{namespace}"]}  # fmt: skip
    created = http.post("/ui/darkrooms/new", form)
    assert created.status_code == 303, created.get_data(as_text=True)
    stored = custom.get_namespaced_custom_object(*DARKROOMS, namespace, "darkrooms", "open")
    assert stored["spec"]["source"] == {"type": "S3", "bucket": "open-data", "region": "eu-west-1"}
    half = http.post("/ui/darkrooms/new", {**form, "name": "half", "source.accessKey": "AKIA-ONLY", "subDomains": [f"half-{namespace}"]})
    assert half.status_code == 422 and 'id="f-source-secretKey-error"' in half.get_data(as_text=True)


def test_sort_orders_are_kept_in_the_url(http: Client, custom: Any, namespace: str) -> None:
    """``?sort=<key>`` / ``?sort=-<key>`` order the list (ties by name); an unknown key is ignored; the sorted
    column has ``aria-sort`` and its link asks for the other direction; filters and pages keep the sort."""
    for name, priority in (("b-task", 5), ("a-task", 9), ("c-task", 1), ("d-task", 5)):
        make_task(custom, namespace, name, priority=priority)
    custom.patch_namespaced_custom_object(*TASKS, namespace, "tasks", "c-task", {"spec": {"taskState": "Finished"}})

    def names(query: str) -> list[str]:
        html = http.get(f"/ui/tasks?namespace={namespace}&{query}").get_data(as_text=True)
        return re.findall(rf'sse-swap="Task/{namespace}/([a-z-]+)"', html)

    wait_for(lambda: names("sort=state")[:1] == ["c-task"], timeout_s=10)  # Finished before Pending
    assert names("") == ["a-task", "b-task", "c-task", "d-task"]
    assert names("sort=priority") == ["c-task", "b-task", "d-task", "a-task"]
    assert names("sort=-priority") == ["a-task", "b-task", "d-task", "c-task"]
    assert names("sort=-name") == ["d-task", "c-task", "b-task", "a-task"]
    assert names("sort=size") == names("")  # not a column of this list: ignored
    html = http.get(f"/ui/tasks?namespace={namespace}&sort=priority").get_data(as_text=True)
    header = re.search(r'<th scope="col" class="sortable num" aria-sort="ascending">\s*<a href="([^"]+)"', html)
    assert header and header.group(1) == f"/ui/tasks?namespace={namespace}&amp;sort=-priority", html
    assert html.count("aria-sort=") == 1
    assert '<input type="hidden" name="sort" value="priority">' in html  # the filter form keeps it


def test_the_combined_page_shows_the_combined_task_the_json_api_serves(
    http: Client, custom: Any, access: ClusterAccess, namespace: str
) -> None:
    """/ui/combinedtasks renders GET /combinedtasks' object (metadata, spec, status.events), newest Event first;
    an Event recorded the events.k8s.io way (eventTime, series) shows its series count; the detail page the same Events."""
    make_task(custom, namespace, "chore", priority=7, details="Sweep.")
    uid = custom.get_namespaced_custom_object(*TASKS, namespace, "tasks", "chore")["metadata"]["uid"]
    involved = {"apiVersion": "example.example.com/v1", "kind": "Task", "name": "chore", "namespace": namespace, "uid": uid}
    record = access.client.create
    record(EVENTS, {
        "apiVersion": "v1", "kind": "Event", "involvedObject": involved,
        "metadata": {"name": "chore.created", "namespace": namespace, "labels": {"example.example.com/task-uid": uid}},
        "reason": "TaskCreated", "message": "created", "type": "Normal", "count": 2,
        "firstTimestamp": "2030-01-01T00:00:00Z", "lastTimestamp": "2030-01-01T00:10:00Z",
    })  # fmt: skip
    record(EVENTS, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "chore.noticed", "namespace": namespace}, "involvedObject": involved,
        "reason": "Noticed", "message": "seen by a tool", "type": "Warning", "eventTime": "2030-01-02T00:00:00.000000Z",
        "series": {"count": 4, "lastObservedTime": "2030-01-02T01:00:00.000000Z"},
        "action": "Notice", "reportingComponent": "tool", "reportingInstance": "tool-1",
    })  # fmt: skip
    url = f"/combinedtasks?namespace={namespace}"
    # the Task may reach the cache after its Events: no item yet is "not yet"
    wait_for(
        lambda: [len(i["status"]["events"]) for i in http.get(url).get_json()["items"]] == [2],
        timeout_s=10,
        message="events reach the cache",
    )
    (served,) = http.get(url).get_json()["items"]
    assert [e["reason"] for e in served["status"]["events"]] == ["TaskCreated", "Noticed"]

    html = http.get(f"/ui/combinedtasks?namespace={namespace}").get_data(as_text=True)
    card = html[html.index('<article class="card task-card"') : html.index("</article>")]
    assert f'sse-swap="Task/{namespace}/chore"' in card and "Priority 7" in card and "Sweep." in card
    assert "seen by a tool" in card and "created" in card
    assert card.index("Noticed") < card.index("TaskCreated")  # newest first, as the detail page
    assert re.findall(r'data-label="Count">(\d+)<', card) == ["4", "2"]
    detail = http.get(f"/ui/tasks/{namespace}/chore").get_data(as_text=True)
    assert re.findall(r'data-label="Count">(\d+)<', detail) == ["4", "2"] and detail.index("Noticed") < detail.index("TaskCreated")


SYSTEM = ("kube-system", "kube-public", "kube-node-lease", "darkroom-system", "darkroom-sessions")


def test_create_forms_offer_no_system_namespace_which_lists_still_show(http: Client, api_client: Any, namespace: str) -> None:
    from kubernetes import client
    from kubernetes.client import ApiException

    core = client.CoreV1Api(api_client)
    for name in SYSTEM:  # the product's own may not exist on a test cluster
        try:
            core.create_namespace({"metadata": {"name": name}})
        except ApiException as e:
            assert e.status == 409, e

    def listing() -> str | None:  # the list's filter still offers them, once the API's cache has them all
        listed = http.get("/ui/tasks").get_data(as_text=True)
        return listed if all(f'value="{ns}"' in listed for ns in (*SYSTEM, namespace)) else None

    wait_for(listing, timeout_s=10, message="the Tasks list offering every system namespace")  # so none is left out by chance
    options = re.compile(r'<select id="f-namespace" name="namespace"[^>]*>(.*?)</select>', re.S)
    for path in ("/ui/darkrooms/new", "/ui/tasks/new", "/ui/postgresqls/new"):

        def offering(path: str = path) -> str | None:
            found = options.search(http.get(path).get_data(as_text=True))
            return found.group(1) if found and namespace in found.group(1) else None

        offered = wait_for(offering, timeout_s=10, message=f"{path} offering {namespace}")
        assert not [ns for ns in SYSTEM if f'value="{ns}"' in offered], (path, offered)
        assert 'value="default"' in offered
        # Asked for from the list of a system namespace: the form starts in the default one instead.
        from_system = options.search(http.get(f"{path}?namespace=kube-system").get_data(as_text=True))
        assert from_system and 'value="kube-system"' not in from_system.group(1)
        assert '<option value="default" selected>' in from_system.group(1)


def test_a_revalidated_static_file_is_closed(app: Flask) -> None:
    """A browser revalidating the favicon gets a 304, and the file Werkzeug opened for it is closed at once, not left
    to the garbage collector (a ResourceWarning, seen as a flaky browser test)."""
    client = app.test_client()
    first = client.get("/static/favicon.svg")
    first.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = client.get("/static/favicon.svg", headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304
        del again
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
