"""Editing an object as YAML through the dashboard (backend/dashboard/yamledit.py), without a browser, on both clusters.

Behaviours: the editor shows the object as stored (no status, managedFields or resourceVersion; a Postgresql's
password never) and each detail page links to it; Review is a server-side apply dry run whose diff shows a field the
text leaves out that the server defaults (once this editor owned it), a field not in the schema as "will be dropped"
at its line, a schema error (a maximum, an enum) at the line of its field with Apply disabled, a field another field
manager owns as a conflict (Apply without Force refused and nothing written, with Force saved); Apply saves exactly the
reviewed text ("Changes saved.") and refuses — writing nothing — a text other than the reviewed one, and a review
whose object changed since ("changed since you reviewed", with the new diff); a YAML syntax error names its line and
column, another kind or name is a 422 naming the field; POSTs need the CSRF token. On the real control plane, a person who
may read but not patch: Apply disabled, the review's refusal in their words, nothing written.
"""

from __future__ import annotations

import html
import re
from typing import Any

from flask import Flask

from backend.core.access import ClusterAccess
from cluster import DARKROOMS
from tests.dashboard.clients import Client, Deleter
from tests.support import wait_for

GROUP = ("deployments.example.com", "v1")
PG = ("database.db.example.com", "v1")
HIDDEN = re.compile(r'<input type="hidden" name="(reviewed_version|reviewed_digest)" value="([^"]*)">')
PASSWORD = "yaml-edit-password-sentinel-5521"


def darkroom_yaml(namespace: str, name: str, *, spec: str = "") -> str:
    return (
        f"apiVersion: deployments.example.com/v1\nkind: Darkroom\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n"
        f"  source:\n    type: WebFolder\n    baseUrl: https://images.example.com/a\n  subDomains:\n  - {name}-{namespace}\n{spec}"
    )


def make_darkroom(http: Client, namespace: str, name: str) -> None:
    """A Darkroom created as people create them: with the dashboard's form."""
    form = {"namespace": namespace, "name": name, "source.type": "WebFolder", "source.baseUrl": "https://images.example.com/a",
            "subDomains": [f"{name}-{namespace}"]}  # fmt: skip
    assert http.post("/ui/darkrooms/new", form).status_code == 303


def stored(custom: Any, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = custom.get_namespaced_custom_object(*GROUP, namespace, "darkrooms", name)
    return found


def text_of(page: str) -> str:
    match = re.search(r'<textarea id="yaml-text"[^>]*>(.*?)</textarea>', page, re.S)
    assert match, "no textarea"
    return html.unescape(match.group(1))


def hidden(page: str) -> dict[str, str]:
    return dict(HIDDEN.findall(page))


def review(http: Client, path: str, text: str) -> tuple[int, str]:
    answer = http.post(path, {"yaml": text, "action": "review"})
    return answer.status_code, answer.get_data(as_text=True)


def apply(http: Client, path: str, text: str, page: str, **extra: str) -> Any:
    return http.post(path, {"yaml": text, "action": "apply", **hidden(page), **extra})


def apply_button(page: str) -> str:
    match = re.search(r'<button[^>]*id="yaml-apply"[^>]*>', page)
    assert match, "no Apply button"
    return match.group(0)


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def diff_row(page: str, path: str) -> str:
    match = re.search(rf'<tr class="diff-(\w+)" data-path="{re.escape(path)}">(.*?)</tr>', page, re.S)
    assert match, f"no diff row for {path}"
    return match.group(1) + " " + html.unescape(match.group(2))


def test_the_editor_shows_the_stored_object_and_every_detail_page_links_to_it(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "shown")
    wait_for(lambda: http.get(f"/ui/darkrooms/{namespace}/shown").status_code == 200, timeout_s=20)  # the page reads the cache
    detail = http.get(f"/ui/darkrooms/{namespace}/shown").get_data(as_text=True)
    assert f'href="/ui/darkrooms/{namespace}/shown/yaml">Edit YAML</a>' in detail
    page = http.get(f"/ui/darkrooms/{namespace}/shown/yaml").get_data(as_text=True)
    text = text_of(page)
    assert text.startswith("apiVersion: deployments.example.com/v1\nkind: Darkroom\nmetadata:\n  name: shown\n")
    assert "replicas: 1" in text and "cacheTime: 31536000" in text  # as stored: with the server's defaults
    for noise in ("status", "resourceVersion", "managedFields", "uid:", "creationTimestamp", "generation"):
        assert noise not in text
    assert 'id="yaml-apply"' in page and 'aria-disabled="true"' in page  # Apply waits for a review
    assert "Secrets" in page  # the page says credentials never appear here

    form = {"namespace": namespace, "name": "db", "password": PASSWORD}
    assert http.post("/ui/postgresqls/new", form).status_code == 303
    pg_page = http.get(f"/ui/postgresqls/{namespace}/db/yaml").get_data(as_text=True)
    assert "kind: Postgresql" in text_of(pg_page) and PASSWORD not in pg_page
    assert f'href="/ui/postgresqls/{namespace}/db/yaml">Edit YAML</a>' in http.get(f"/ui/postgresqls/{namespace}/db").get_data(as_text=True)
    task = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": "job"},
            "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}}  # fmt: skip
    custom.create_namespaced_custom_object("example.example.com", "v1", namespace, "tasks", task)
    wait_for(lambda: http.get(f"/ui/tasks/{namespace}/job").status_code == 200, timeout_s=20)
    assert f'href="/ui/tasks/{namespace}/job/yaml">Edit YAML</a>' in http.get(f"/ui/tasks/{namespace}/job").get_data(as_text=True)
    assert "kind: Task" in text_of(http.get(f"/ui/tasks/{namespace}/job/yaml").get_data(as_text=True))


def test_apply_saves_the_reviewed_text_and_a_field_left_out_shows_the_servers_default(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "dflt")
    path = f"/ui/darkrooms/{namespace}/dflt/yaml"
    pinned = darkroom_yaml(namespace, "dflt", spec="  version: v2\n  replicas: 2\n")
    status, page = review(http, path, pinned)
    assert status == 200, page
    assert diff_row(page, "spec.version").startswith("changed") and '"v2"' in diff_row(page, "spec.version")
    # the form that created it (this panel's manager, as an update) set the version: Apply takes it over
    assert "is owned by <strong>darkroom-control-panel (this panel&#39;s forms and JSON API)</strong>" in page
    answer = apply(http, path, pinned, page, force="on")
    assert answer.status_code == 303 and answer.headers["Location"].endswith(f"/ui/darkrooms/{namespace}/dflt?saved=1")
    assert "Changes saved." in http.get(answer.headers["Location"]).get_data(as_text=True)
    assert stored(custom, namespace, "dflt")["spec"]["version"] == "v2"

    unpinned = darkroom_yaml(namespace, "dflt", spec="  replicas: 2\n")  # version left out: this editor owned it
    status, page = review(http, path, unpinned)
    assert status == 200, page
    assert "yaml-conflicts" not in page  # this editor owns what it changes now
    row = diff_row(page, "spec.version")
    assert row.startswith("changed") and '"v2"' in row and '"latest"' in row and "set by the server (a default)" in row
    assert stored(custom, namespace, "dflt")["spec"]["version"] == "v2"  # a review writes nothing


def test_a_field_not_in_the_schema_will_be_dropped_at_its_line(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "prune")
    path = f"/ui/darkrooms/{namespace}/prune/yaml"
    text = darkroom_yaml(namespace, "prune", spec="  colour: red\n")
    status, page = review(http, path, text)
    assert status == 200, page
    dropped = re.search(r'<ul class="yaml-dropped">(.*?)</ul>', page, re.S)
    assert dropped and "spec.colour" in dropped.group(1) and "will be dropped: not in the schema" in dropped.group(1)
    assert f'data-line="{line_of(text, "colour")}"' in dropped.group(1)
    assert 'data-path="spec.colour"' not in page  # not a change: nothing stores it


def test_schema_errors_are_shown_at_their_lines_and_apply_stays_disabled(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "bad")
    path = f"/ui/darkrooms/{namespace}/bad/yaml"
    text = darkroom_yaml(namespace, "bad", spec="  replicas: 500\n").replace("type: WebFolder", "type: FTP")
    status, page = review(http, path, text)
    assert status == 422, page
    errors = re.search(r'<div class="error-summary".*?</div>', page, re.S)
    assert errors
    summary = html.unescape(errors.group(0))
    assert "spec.replicas" in summary and f'data-line="{line_of(text, "replicas: 500")}"' in summary
    assert "spec.source.type" in summary and f'data-line="{line_of(text, "type: FTP")}"' in summary
    assert hidden(page)["reviewed_digest"] == "" and '<button type="button" id="yaml-apply"' in page
    assert stored(custom, namespace, "bad")["spec"]["replicas"] == 1


def test_a_field_another_manager_owns_is_a_conflict_that_force_takes_over(
    http: Client, custom: Any, namespace: str, access: ClusterAccess
) -> None:
    make_darkroom(http, namespace, "owned")
    body = {"apiVersion": "deployments.example.com/v1", "kind": "Darkroom", "metadata": {"name": "owned", "namespace": namespace},
            "spec": {"replicas": 3}}  # fmt: skip
    access.client.apply(DARKROOMS, body, field_manager="someone-else", force=True)
    path = f"/ui/darkrooms/{namespace}/owned/yaml"
    text = darkroom_yaml(namespace, "owned", spec="  replicas: 5\n")
    status, page = review(http, path, text)
    assert status == 200, page
    conflicts = re.search(r'<section class="conflict yaml-conflicts".*?</section>', page, re.S)
    assert conflicts and "<code>spec.replicas</code> is owned by <strong>someone-else</strong>" in conflicts.group(0)
    assert f'data-line="{line_of(text, "replicas: 5")}"' in conflicts.group(0) and 'name="force"' in conflicts.group(0)
    assert "3" in diff_row(page, "spec.replicas") and "5" in diff_row(page, "spec.replicas")  # what Force would do

    refused = apply(http, path, text, page)
    assert refused.status_code == 409 and "tick Force" in refused.get_data(as_text=True)
    assert stored(custom, namespace, "owned")["spec"]["replicas"] == 3
    forced = apply(http, path, text, page, force="on")
    assert forced.status_code == 303, forced.get_data(as_text=True)
    assert stored(custom, namespace, "owned")["spec"]["replicas"] == 5


def test_apply_refuses_an_object_changed_since_the_review_and_shows_the_new_diff(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "moved")
    path = f"/ui/darkrooms/{namespace}/moved/yaml"
    text = darkroom_yaml(namespace, "moved", spec="  replicas: 4\n")
    status, page = review(http, path, text)
    assert status == 200 and "1" in diff_row(page, "spec.replicas")
    patch = {"spec": {"replicas": 7}}  # someone else's change in between
    custom.patch_namespaced_custom_object(*GROUP, namespace, "darkrooms", "moved", patch)
    refused = apply(http, path, text, page, force="on")
    again = refused.get_data(as_text=True)
    assert refused.status_code == 409 and "Changed since you reviewed: review again" in again
    assert stored(custom, namespace, "moved")["spec"]["replicas"] == 7  # nothing written
    assert "7" in diff_row(again, "spec.replicas") and "4" in diff_row(again, "spec.replicas")  # the new diff: from 7
    assert hidden(again)["reviewed_version"] == stored(custom, namespace, "moved")["metadata"]["resourceVersion"]


def test_apply_sends_only_the_reviewed_text(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "exact")
    path = f"/ui/darkrooms/{namespace}/exact/yaml"
    reviewed = darkroom_yaml(namespace, "exact", spec="  replicas: 2\n")
    _status, page = review(http, path, reviewed)
    changed = reviewed.replace("replicas: 2", "replicas: 9")
    answer = apply(http, path, changed, page)
    assert answer.status_code == 409 and "not the YAML you reviewed" in answer.get_data(as_text=True)
    assert "9" in diff_row(answer.get_data(as_text=True), "spec.replicas")  # reviewed again
    assert http.post(path, {"yaml": reviewed, "action": "apply"}).status_code == 409  # never reviewed: no digest
    assert stored(custom, namespace, "exact")["spec"]["replicas"] == 1
    assert http.post(path, {"yaml": reviewed, "action": "review"}, token=False).status_code == 403  # CSRF


def test_syntax_errors_and_other_objects_are_refused_before_anything_is_sent(http: Client, custom: Any, namespace: str) -> None:
    make_darkroom(http, namespace, "mine")
    path = f"/ui/darkrooms/{namespace}/mine/yaml"
    status, page = review(http, path, "apiVersion: deployments.example.com/v1\nkind: Darkroom\nspec:\n  replicas: [1,\n")
    assert status == 422 and "YAML syntax error at line 5, column 1" in html.unescape(page) and 'data-line="5"' in page
    swapped = http.post(path, {"yaml": "kind: [", "action": "review"}, headers={"HX-Request": "true", "HX-Target": "yaml-editor"})
    fragment = swapped.get_data(as_text=True)  # htmx gets the editor alone, with the same line buttons
    assert swapped.status_code == 422 and fragment.lstrip().startswith("<form")
    assert "<html" not in fragment and 'data-line="1"' in fragment
    status, page = review(http, path, "- just\n- a list\n")
    assert status == 422 and "must be a mapping" in page
    other_kind = darkroom_yaml(namespace, "mine").replace("kind: Darkroom", "kind: Task")
    status, page = review(http, path, other_kind)
    assert status == 422 and "kind must be Darkroom" in page and f'data-line="{line_of(other_kind, "kind:")}"' in page
    other_name = darkroom_yaml(namespace, "theirs")
    status, page = review(http, path, other_name)
    assert status == 422 and f"metadata.name must be mine: this page edits Darkroom {namespace}/mine only" in page
    status, page = review(http, path, darkroom_yaml("elsewhere", "mine"))
    assert status == 422 and "metadata.namespace must be" in page
    status, page = review(http, path, darkroom_yaml(namespace, "mine") + "status:\n  phase: Ready\n")
    assert status == 422 and "status is written by the reconciler" in page
    assert http.get(f"/ui/darkrooms/{namespace}/nothing/yaml").status_code == 404


def test_the_editor_is_not_found_for_a_namespace_the_app_does_not_serve(make_app: Any, http: Client, namespace: str) -> None:
    app: Flask = make_app(testing=False, namespace="somewhere-else")
    make_darkroom(http, namespace, "unserved")
    assert app.test_client().get(f"/ui/darkrooms/{namespace}/unserved/yaml").status_code == 404


def test_a_person_who_may_read_but_not_patch_is_told_why_and_cannot_apply(deleter: Deleter) -> None:
    """The dry run is the person's: kube refuses it (403), the page says so in their words, and Apply is disabled."""
    from kubernetes import client

    custom: Any = client.CustomObjectsApi(deleter.admin)
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://images.example.com/a"}, "subDomains": [f"ro-{deleter.allowed}"]}
    body = {"apiVersion": "/".join(GROUP), "kind": "Darkroom", "metadata": {"name": "ro"}, "spec": spec}
    custom.create_namespaced_custom_object(*GROUP, deleter.allowed, "darkrooms", body)
    browser = deleter.app.test_client()
    assert browser.post("/login", data={"token": deleter.token, "next": "/"}).status_code == 303
    http = Client(browser)
    path = f"/ui/darkrooms/{deleter.allowed}/ro/yaml"
    page: str = wait_for(lambda: (got := http.get(path)).status_code == 200 and got.get_data(as_text=True), timeout_s=10)
    assert "disabled" in apply_button(page)  # before any review: the person may not patch it
    status, reviewed = review(http, path, text_of(page).replace("baseUrl: https://images.example.com/a", "baseUrl: https://b.example"))
    assert status == 403
    refusal = html.unescape(reviewed)
    assert f'You may not patch darkrooms "ro" in namespace "{deleter.allowed}"' in refusal, refusal
    assert "Apply needs the patch permission" in refusal
    assert "disabled" in apply_button(reviewed)
    refused = apply(http, path, text_of(reviewed), reviewed)
    assert refused.status_code in (403, 409, 422) and "Changes saved" not in refused.get_data(as_text=True)
    assert stored(custom, deleter.allowed, "ro")["spec"]["source"]["baseUrl"] == "https://images.example.com/a"  # nothing written
