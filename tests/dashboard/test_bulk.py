"""Bulk actions on a list's selection, through the Flask test client (backend/dashboard/bulk.py), on both clusters: the
list rows' checkboxes and the bar; the confirmation names how many objects and which (a long list cut short) and what
goes with them; the run writes each object separately with its uid as a precondition and answers per object — done,
404 already gone, 409 replaced by another object of the same name (left alone) — the rest still happen; Scale to N
(Darkrooms), Mark finished (Tasks), Delete (Postgresqls too); "all matching" selects what matches the filter when the
action runs; bad input (no selection, a malformed or unknown item, an unknown field or action, too many, a replicas
value that is no whole number from 0 to 100) is refused naming the field, and nothing is written; CSRF as on every
dashboard POST. On the real control plane, a person who may delete Darkrooms in one namespace only: those are deleted,
the others refused with the person's own words, and stay.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.dashboard.clients import Client, Deleter
from tests.support import wait_for

DARKROOMS = ("deployments.example.com", "v1alpha1", "darkrooms")
TASKS = ("example.example.com", "v1", "tasks")
HTMX = {"HX-Request": "true"}


def make_darkroom(custom: Any, namespace: str, name: str) -> dict[str, Any]:
    """A Darkroom whose sub-domain is its namespace's own: a scale checks the sub-domains other Darkrooms hold."""
    spec = {"replicas": 1, "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"{name}-{namespace}"]}
    body = {"apiVersion": "/".join(DARKROOMS[:2]), "kind": "Darkroom", "metadata": {"name": name}, "spec": spec}
    group, version, plural = DARKROOMS
    created: dict[str, Any] = custom.create_namespaced_custom_object(group, version, namespace, plural, body)
    return created


def make_task(custom: Any, namespace: str, name: str) -> dict[str, Any]:
    body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name},
            "spec": {"priority": 3, "deadline": "2031-01-01T00:00:00Z"}}  # fmt: skip
    created: dict[str, Any] = custom.create_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], body)
    return created


def item(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}/{meta['uid']}"


def listed(http: Client, path: str, *objs: dict[str, Any]) -> str:
    """The list page once its cache shows every one of ``objs`` (each row's checkbox carries its uid)."""

    def page() -> str | None:
        html: str = http.get(path).get_data(as_text=True)
        return html if all(f'value="{item(o)}"' in html for o in objs) else None

    found: str = wait_for(page, timeout_s=10, message="the rows are not listed yet")
    return found


def outcomes(html: str) -> dict[str, tuple[str, str]]:
    """``namespace/name`` → (done|failed, the result cell's text) of a result table."""
    row = r'<tr data-outcome="(\w+)" data-item="[^"]+">\s*<th scope="row">([^<]+)</th>\s*<td class="message">(.*?)</td>'
    rows = re.findall(row, html, re.S)
    return {name: (state, re.sub(r"<[^>]+>", "", cell).strip()) for state, name, cell in rows}


def test_rows_have_a_labelled_checkbox_and_the_page_a_bar(http: Client, custom: Any, namespace: str) -> None:
    web = make_darkroom(custom, namespace, "web")
    html = listed(http, f"/?namespace={namespace}", web)
    assert f'<input type="checkbox" name="item" value="{item(web)}" form="bulk-form"' in html
    assert f'aria-label="Select web in {namespace}"' in html and 'aria-label="Select all Darkrooms on this page"' in html
    assert 'id="bulk-form"' in html and 'value="delete"' in html and 'value="scale"' in html and 'id="bulk-dialog"' in html
    assert f'<input type="hidden" name="namespace" value="{namespace}" form="bulk-form"' in html  # for "all matching"
    tasks = http.get("/ui/tasks").get_data(as_text=True)
    assert 'value="finish"' in tasks and 'value="scale"' not in tasks
    assert 'value="delete"' in http.get("/ui/postgresqls").get_data(as_text=True)


def test_bulk_delete_answers_per_object_and_the_rest_still_happen(http: Client, custom: Any, namespace: str) -> None:
    objs = [make_darkroom(custom, namespace, name) for name in ("keep-a", "gone-b", "swap-c", "del-d")]
    listed(http, f"/?namespace={namespace}", *objs)
    form = {"action": "delete", "item": [item(o) for o in objs]}
    confirm = http.post("/ui/darkrooms/bulk/confirm", form, headers=HTMX)
    html = confirm.get_data(as_text=True)
    assert confirm.status_code == 200 and confirm.headers["HX-Retarget"] == "#bulk-confirm"
    assert "Delete 4 Darkrooms?" in html and f"<li>{namespace}/gone-b</li>" in html
    assert "4 Darkrooms, with their Deployments, Services, Ingresses and ConfigMaps." in html
    assert all(f'name="item" value="{item(o)}"' in html for o in objs)

    custom.delete_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "gone-b")
    custom.delete_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "swap-c")
    newer = make_darkroom(custom, namespace, "swap-c")  # another object of the same name

    run = http.post("/ui/darkrooms/bulk", {**form, "item": [item(o) for o in objs[:3]]}, headers=HTMX)
    html = run.get_data(as_text=True)
    assert run.status_code == 200 and run.headers["HX-Retarget"] == "#bulk-results"
    assert 'role="status"' in html and "Delete: 1 of 3 Darkrooms deleted; 2 failed." in html
    result = outcomes(html)
    assert result[f"{namespace}/keep-a"] == ("done", "Deleted")
    assert result[f"{namespace}/gone-b"][0] == "failed" and "(404)" in result[f"{namespace}/gone-b"][1]
    assert "already gone" in result[f"{namespace}/gone-b"][1]
    assert result[f"{namespace}/swap-c"][0] == "failed" and "(409)" in result[f"{namespace}/swap-c"][1]
    assert "replaced by another object of the same name" in result[f"{namespace}/swap-c"][1]
    names = {o["metadata"]["uid"] for o in custom.list_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2])["items"]}
    assert newer["metadata"]["uid"] in names and objs[3]["metadata"]["uid"] in names and objs[0]["metadata"]["uid"] not in names


def test_without_javascript_both_steps_are_pages(http: Client, custom: Any, namespace: str) -> None:
    pg_free = make_task(custom, namespace, "plain")
    listed(http, f"/ui/tasks?namespace={namespace}", pg_free)
    confirm = http.post("/ui/tasks/bulk/confirm", {"action": "delete", "item": [item(pg_free)]})
    html = confirm.get_data(as_text=True)
    assert confirm.status_code == 200 and "<html" in html and 'action="/ui/tasks/bulk"' in html and 'href="/ui/tasks"' in html
    assert "1 Task, with their lifecycle; their Events expire on their own." in html
    run = http.post("/ui/tasks/bulk", {"action": "delete", "item": [item(pg_free)]})
    page = run.get_data(as_text=True)
    assert run.status_code == 200 and "<html" in page and "Delete: 1 of 1 Task deleted." in page and "Back to the Tasks" in page


def test_scale_and_mark_finished_write_each_object(http: Client, custom: Any, namespace: str) -> None:
    darkrooms = [make_darkroom(custom, namespace, name) for name in ("s1", "s2")]
    tasks = [make_task(custom, namespace, name) for name in ("f1", "f2")]
    listed(http, f"/?namespace={namespace}", *darkrooms)
    listed(http, f"/ui/tasks?namespace={namespace}", *tasks)
    confirm = http.post("/ui/darkrooms/bulk/confirm", {"action": "scale", "item": [item(o) for o in darkrooms]}, headers=HTMX)
    assert "Scale 2 Darkrooms to…?" in confirm.get_data(as_text=True) and 'id="bulk-replicas"' in confirm.get_data(as_text=True)
    run = http.post("/ui/darkrooms/bulk", {"action": "scale", "replicas": "3", "item": [item(o) for o in darkrooms]}, headers=HTMX)
    assert "Scale: 2 of 2 Darkrooms scaled to 3 replicas." in run.get_data(as_text=True)
    for name in ("s1", "s2"):
        assert custom.get_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], name)["spec"]["replicas"] == 3
    run = http.post("/ui/tasks/bulk", {"action": "finish", "item": [item(o) for o in tasks]}, headers=HTMX)
    assert "Mark finished: 2 of 2 Tasks marked finished." in run.get_data(as_text=True)
    for name in ("f1", "f2"):
        assert custom.get_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], name)["spec"]["taskState"] == "Finished"


def test_a_patch_of_a_replaced_object_fails_and_leaves_the_new_one_alone(http: Client, custom: Any, namespace: str) -> None:
    old = make_task(custom, namespace, "again")
    listed(http, f"/ui/tasks?namespace={namespace}", old)
    custom.delete_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], "again")
    new = make_task(custom, namespace, "again")
    listed(http, f"/ui/tasks?namespace={namespace}", new)
    html = http.post("/ui/tasks/bulk", {"action": "finish", "item": [item(old)]}, headers=HTMX).get_data(as_text=True)
    state, text = outcomes(html)[f"{namespace}/again"]
    assert state == "failed" and "(409)" in text and "replaced" in text
    assert custom.get_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], "again")["spec"].get("taskState") != "Finished"


def test_all_matching_applies_to_what_matches_when_it_runs(http: Client, custom: Any, namespace: str) -> None:
    first = [make_task(custom, namespace, f"batch-{n}") for n in range(3)]
    other = make_task(custom, namespace, "other")
    listed(http, f"/ui/tasks?namespace={namespace}", *first, other)
    form = {"action": "finish", "match": "all", "namespace": namespace, "q": "batch"}
    html = http.post("/ui/tasks/bulk/confirm", form, headers=HTMX).get_data(as_text=True)
    assert "Mark finished 3 Tasks?" in html and "<strong>when you confirm</strong>: 3 Tasks now" in html
    assert 'name="match" value="all"' in html and 'name="item"' not in html
    late = make_task(custom, namespace, "batch-late")
    listed(http, f"/ui/tasks?namespace={namespace}", late)
    run = http.post("/ui/tasks/bulk", form, headers=HTMX).get_data(as_text=True)
    assert "Mark finished: 4 of 4 Tasks marked finished." in run
    assert set(outcomes(run)) == {f"{namespace}/{o['metadata']['name']}" for o in (*first, late)}
    assert custom.get_namespaced_custom_object(*TASKS[:2], namespace, TASKS[2], "other")["spec"].get("taskState") != "Finished"


def test_bad_input_names_the_field_and_writes_nothing(http: Client, custom: Any, namespace: str) -> None:
    dr = make_darkroom(custom, namespace, "stays")
    listed(http, f"/?namespace={namespace}", dr)
    one = item(dr)
    malformed = "item: &#39;stays&#39; is not &lt;namespace&gt;/&lt;name&gt;/&lt;uid&gt;"
    ghost = f"{namespace}/ghost/{uuid.uuid4()}"
    too_many = [f"{namespace}/n{i}/{uuid.uuid4()}" for i in range(501)]
    nothing = {"action": "delete", "match": "all", "namespace": namespace, "q": "nothing-like-it"}
    cases: list[tuple[str, dict[str, Any], int, str]] = [
        ("/ui/darkrooms/bulk/confirm", {"action": "delete"}, 400, "item: select at least one object"),
        ("/ui/darkrooms/bulk", {"action": "delete"}, 400, "item: select at least one object"),
        ("/ui/darkrooms/bulk", {"action": "delete", "item": ["stays"]}, 400, malformed),
        ("/ui/darkrooms/bulk/confirm", {"action": "delete", "item": [ghost]}, 400, f"item: {namespace}/ghost: no such Darkroom"),
        ("/ui/darkrooms/bulk", {"action": "explode", "item": [one]}, 400, "action: one of delete, scale"),
        ("/ui/tasks/bulk", {"action": "scale", "item": [one]}, 400, "action: one of delete, finish"),
        ("/ui/darkrooms/bulk", {"action": "delete", "item": [one], "force": "1"}, 400, "force: not a field of a bulk action"),
        ("/ui/darkrooms/bulk", {"action": "delete", "item": [one], "replicas": "2"}, 400, "replicas: only with action scale"),
        ("/ui/darkrooms/bulk", {"action": "delete", "item": [one], "match": "all"}, 400, "item: not with match=all"),
        ("/ui/darkrooms/bulk", nothing, 400, "match: nothing matches"),
        ("/ui/darkrooms/bulk", {"action": "delete", "match": "all", "sort": "colour"}, 400, "sort: one of"),
        ("/ui/darkrooms/bulk", {"action": "delete", "item": too_many}, 400, "item: 501 objects selected; at most 500 at once"),
    ]
    hint = "Enter a whole number of replicas from 0 to 100."
    for value in ("", "x", "-1", "1.5", "101"):
        cases.append(("/ui/darkrooms/bulk", {"action": "scale", "item": [one], "replicas": value}, 422, hint))
    for path, form, status, words in cases:
        answer = http.post(path, form, headers=HTMX)
        assert (answer.status_code, answer.headers["HX-Retarget"]) == (status, "#bulk-confirm"), (path, form)
        assert words in answer.get_data(as_text=True), (path, form, answer.get_data(as_text=True))
    stored = custom.get_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "stays")
    assert stored["metadata"]["uid"] == dr["metadata"]["uid"] and stored["spec"]["replicas"] == 1
    assert http.post("/ui/darkrooms/bulk", {"action": "delete", "item": [one]}, token=False).status_code == 403  # CSRF
    assert custom.get_namespaced_custom_object(*DARKROOMS[:2], namespace, DARKROOMS[2], "stays")["metadata"]["uid"] == dr["metadata"]["uid"]


def test_a_long_list_is_cut_short(http: Client, custom: Any, namespace: str) -> None:
    tasks = [make_task(custom, namespace, f"many-{n:02}") for n in range(14)]
    listed(http, f"/ui/tasks?namespace={namespace}", *tasks)
    html = http.post("/ui/tasks/bulk/confirm", {"action": "delete", "item": [item(t) for t in tasks]}, headers=HTMX).get_data(as_text=True)
    assert "Delete 14 Tasks?" in html and html.count("<li>") == 10 and "and 4 more" in html and f"<li>{namespace}/many-13</li>" not in html


def test_a_mix_of_allowed_and_refused_objects(deleter: Deleter) -> None:
    from kubernetes import client

    custom: Any = client.CustomObjectsApi(deleter.admin)
    mine = [make_darkroom(custom, deleter.allowed, name) for name in ("one", "two")]
    theirs = make_darkroom(custom, deleter.refused, "three")
    browser = deleter.app.test_client()
    assert browser.post("/login", data={"token": deleter.token, "next": "/"}).status_code == 303
    http = Client(browser)
    listed(http, "/", *mine, theirs)
    form = {"action": "delete", "item": [item(o) for o in (*mine, theirs)]}
    assert "Delete 3 Darkrooms?" in http.post("/ui/darkrooms/bulk/confirm", form, headers=HTMX).get_data(as_text=True)
    html = http.post("/ui/darkrooms/bulk", form, headers=HTMX).get_data(as_text=True)
    assert "Delete: 2 of 3 Darkrooms deleted; 1 failed." in html
    result = outcomes(html)
    assert result[f"{deleter.allowed}/one"][0] == result[f"{deleter.allowed}/two"][0] == "done"
    state, text = result[f"{deleter.refused}/three"]
    refusal = f"You may not delete darkrooms &#34;three&#34; in namespace &#34;{deleter.refused}&#34;."
    assert state == "failed" and text == f"Failed (403) {refusal}"
    stays = custom.get_namespaced_custom_object(*DARKROOMS[:2], deleter.refused, DARKROOMS[2], "three")
    assert stays["metadata"]["uid"] == theirs["metadata"]["uid"]
