"""After actions, in a real browser, and the API reference's looks.

Behaviours: a "created" notice is dismissable and goes away at the next action (a filter change), a
failed request's message too is aligned with the content and dismissable;
after a create and a delete the list keeps the filter the user had ("All namespaces" stays); the
delete confirmation is a modal dialog — Escape and Cancel close it, focus returns to "Delete…", and
a keyboard-only delete works (light and dark); a detail page whose object is deleted elsewhere says
so live and disables Edit and Delete; the YAML view opens at #yaml and with "View YAML", and its copy
button puts the YAML on the clipboard; /docs has the dashboard's header and styles (light and dark).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.pages import Watched, shot
from tests.browser.stack import Stack
from tests.support import wait_for

DARKROOM = ("deployments.example.com", "v1", "darkrooms")
TASK = ("example.example.com", "v1", "tasks")


def make_task(stack: Stack, page: Any, name: str) -> str:
    """Create a Task; its detail page's path once the dashboard's cache has it (a 404 page before that)."""
    body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name},
            "spec": {"priority": 2, "deadline": "2031-01-01T00:00:00Z"}}  # fmt: skip
    stack.custom().create_namespaced_custom_object(*TASK[:2], stack.namespace, TASK[2], body)
    path = f"/ui/tasks/{stack.namespace}/{name}"
    wait_for(lambda: page.context.request.get(path).status == 200, timeout_s=10, message=f"the dashboard never showed {name}")
    return path


def task_names(stack: Stack) -> list[str]:
    return [t["metadata"]["name"] for t in stack.custom().list_namespaced_custom_object(*TASK[:2], stack.namespace, TASK[2])["items"]]


def create_task_through_the_form(page: Any, stack: Stack, name: str) -> None:
    page.get_by_role("link", name="New Task").click()
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Namespace", exact=True).select_option(stack.namespace)
    page.get_by_label("Priority", exact=True).fill("3")
    page.get_by_label("Deadline (UTC)", exact=True).fill("2031-03-31T17:00")
    page.get_by_role("button", name="Create Task").click()


def test_notices_and_the_list_the_user_had(stack: Stack, page: Any) -> None:
    page.goto("/ui/tasks")  # all namespaces
    create_task_through_the_form(page, stack, "noted")
    page.wait_for_url(re.compile(r"/ui/tasks\?in=.*created=noted"))
    assert page.get_by_label("Namespace", exact=True).evaluate("(s) => s.selectedOptions[0].textContent") == "All namespaces"
    notice = page.locator(".notice")
    assert notice.inner_text().startswith(f"Task {stack.namespace}/noted created.")
    main_box, notice_box = page.locator("main .page-head").bounding_box(), notice.bounding_box()
    assert main_box and notice_box and abs(main_box["x"] - notice_box["x"]) < 1  # aligned with the content
    assert abs(main_box["width"] - notice_box["width"]) < 1
    shot(page, "notice-created")
    page.get_by_role("button", name="Dismiss").click()
    assert notice.count() == 0

    create_task_through_the_form(page, stack, "second")
    page.wait_for_url(re.compile(r"created=second"))
    assert page.locator(".notice").count() == 1
    page.get_by_label("Namespace", exact=True).select_option(stack.namespace)  # the next action: the notice goes
    page.wait_for_url(re.compile(rf"/ui/tasks\?namespace={stack.namespace}(&q=)?$"))
    assert page.locator(".notice").count() == 0

    # A failed request's message (#flash) sits in <main> too, aligned, and is dismissable.
    page.evaluate("document.dispatchEvent(new CustomEvent('htmx:sendError'))")  # what htmx fires when the server does not answer
    flash = page.locator("#flash")
    assert flash.is_visible() and "did not answer" in flash.inner_text()
    flash_box = flash.bounding_box()
    assert flash_box and abs(flash_box["x"] - main_box["x"]) < 1 and abs(flash_box["width"] - main_box["width"]) < 1
    flash.get_by_role("button", name="Dismiss").click()
    assert flash.is_hidden()

    # A delete from the detail page goes back to that filtered list.
    page.goto(stack.when_shown(f"/ui/tasks/{stack.namespace}/second"))
    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("button", name="Yes, delete second").click()
    page.wait_for_url(re.compile(rf"/ui/tasks\?namespace={stack.namespace}&(deleted|terminating)=second"))
    page.get_by_role("link", name="second", exact=True).wait_for(state="detached")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_delete_dialog_by_keyboard(stack: Stack, new_page: Callable[..., Watched], scheme: str) -> None:
    page = new_page(color_scheme=scheme).page
    name = f"keyboard-{scheme}"
    page.goto(make_task(stack, page, name))
    page.wait_for_selector("#live-indicator[data-state=live]")
    trigger = page.get_by_role("button", name="Delete…")
    dialog = page.locator("dialog#delete-dialog")

    for _ in range(40):  # Tab to "Delete…", as a keyboard user would
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Delete…":
            break
    assert trigger.evaluate("(b) => b === document.activeElement")
    page.keyboard.press("Enter")
    assert dialog.evaluate("(d) => d.open && d.matches(':modal')")
    assert page.evaluate("document.activeElement.textContent") == "Cancel"  # the safe choice first
    shot(page, f"delete-dialog-{scheme}")
    page.keyboard.press("Escape")
    assert dialog.evaluate("(d) => !d.open")
    assert trigger.evaluate("(b) => b === document.activeElement")  # focus back on the trigger

    page.keyboard.press("Enter")
    page.get_by_role("button", name="Cancel").click()
    assert dialog.evaluate("(d) => !d.open") and trigger.evaluate("(b) => b === document.activeElement")

    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == f"Yes, delete {name}"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"(deleted|terminating)={name}"))
    wait_for(lambda: name not in task_names(stack), timeout_s=15, message="the Task was never deleted")


def test_a_detail_page_of_an_object_deleted_elsewhere(stack: Stack, new_page: Callable[..., Watched]) -> None:
    page = new_page(color_scheme="dark").page
    page.goto(make_task(stack, page, "elsewhere"))
    page.wait_for_selector("#live-indicator[data-state=live]")
    page.evaluate("window.__notReloaded = true")
    stack.custom().delete_namespaced_custom_object(*TASK[:2], stack.namespace, TASK[2], "elsewhere")

    gone = page.get_by_role("alert").filter(has_text="This Task no longer exists")
    gone.wait_for(timeout=20_000)
    assert page.get_by_role("button", name="Delete…").is_disabled()
    edit = page.locator("#detail-actions").get_by_text("Edit", exact=True)
    assert edit.get_attribute("aria-disabled") == "true" and edit.get_attribute("href") is None
    assert page.locator("dialog").count() == 0 and page.get_by_role("button", name="Mark finished").count() == 0
    assert page.evaluate("window.__notReloaded") is True
    shot(page, "detail-gone-dark")


def test_yaml_view_and_copy(stack: Stack, new_page: Callable[..., Watched]) -> None:
    watched = new_page()
    page = watched.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.url)
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"yamlish-{stack.namespace}"]}
    body = {"apiVersion": "deployments.example.com/v1", "kind": "Darkroom", "metadata": {"name": "yamlish"}, "spec": spec}
    stack.custom().create_namespaced_custom_object(*DARKROOM[:2], stack.namespace, DARKROOM[2], body)
    path = f"/ui/darkrooms/{stack.namespace}/yamlish"
    # Written straight to the cluster: wait for the API's cache, or the first load is a 404 (and a console error).
    wait_for(lambda: page.request.get(f"/darkrooms/{stack.namespace}/yamlish").ok, message="the API's cache to see the Darkroom")

    def children_made() -> bool:  # the YAML panel is a snapshot of the page's load: reload until it has them
        page.goto(path)
        return bool(
            page.locator("#yaml details[data-kind=Deployment]").count() + page.locator("#yaml details[data-kind=Ingress]").count() == 2
        )

    wait_for(children_made, timeout_s=30, message="the reconciler never made the children")
    panel = page.locator("#yaml")
    assert panel.is_hidden()
    page.get_by_role("link", name="View YAML").click()
    assert panel.is_visible() and "kind: Darkroom" in panel.locator("#yaml-object").inner_text()
    assert "managedFields" not in panel.inner_text()
    panel.get_by_role("button", name="Copy the YAML of Darkroom yamlish").click()
    panel.locator(".copy-status", has_text="Copied").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("apiVersion: deployments.example.com/v1\nkind: Darkroom\n") and "name: yamlish" in copied
    panel.get_by_text("Deployment yamlish", exact=True).click()  # a child's YAML
    assert "kind: Deployment" in panel.locator("details[data-kind=Deployment] pre").inner_text()
    shot(page, "darkroom-yaml")
    page.get_by_role("link", name="Close YAML").click()
    assert panel.is_hidden()

    page.goto(path + "#yaml")
    assert panel.is_visible()
    page.goto(path + "?view=yaml")
    assert panel.is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_docs_has_the_dashboards_header_and_styles(stack: Stack, new_page: Callable[..., Watched], scheme: str) -> None:
    page = new_page(color_scheme=scheme).page
    page.goto("/docs")
    assert page.get_by_role("navigation", name="Main").get_by_role("link", name="API docs").get_attribute("aria-current") == "page"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == ("rgb(18, 20, 24)" if scheme == "dark" else "rgb(246, 247, 249)")
    operation = page.locator("section.op").first
    assert operation.evaluate("(e) => getComputedStyle(e).borderTopStyle") == "solid"  # docs.css and dashboard.css applied
    assert page.locator("section.op .method-get").first.evaluate("(e) => getComputedStyle(e).fontWeight") == "700"
    headings = page.locator(".docs-group > h2").all_inner_texts()
    assert headings[:3] == ["Darkrooms", "Tasks", "Postgresqls"]
    assert "`" not in page.locator("main").inner_text()
    page.get_by_role("link", name="Darkroom", exact=True).first.click()  # a type links to its schema
    assert page.locator("details#schema-Darkroom").evaluate("(d) => d.matches(':target')")
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, f"docs-{scheme}", full_page=False)  # the top only: the whole page is very long


@pytest.mark.parametrize("kind", ["darkroom", "postgresql"])
def test_a_create_from_all_namespaces_returns_to_all_namespaces(stack: Stack, page: Any, kind: str) -> None:
    """The list the person had — every namespace — is the one they come back to, for each kind's form."""
    name = f"everywhere-{kind[:2]}"
    list_path, button = {"darkroom": ("/", "Create Darkroom"), "postgresql": ("/ui/postgresqls", "Create database")}[kind]
    page.goto(list_path)
    namespace_filter = page.get_by_label("Namespace", exact=True)
    assert namespace_filter.evaluate("(s) => s.selectedOptions[0].textContent") == "All namespaces"
    page.get_by_role("link", name=re.compile(r"^New (Darkroom|database)$")).click()
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Namespace", exact=True).select_option(stack.namespace)
    if kind == "darkroom":
        page.get_by_label("Base URL", exact=True).fill("https://images.example.com/")
        page.get_by_label("Sub-domain 1", exact=True).fill(f"{name}-{stack.namespace}")
    page.get_by_role("button", name=button).click()
    page.wait_for_url(re.compile(rf"created={name}"))
    assert "namespace=" not in page.url, page.url
    namespace_filter = page.get_by_label("Namespace", exact=True)
    assert namespace_filter.evaluate("(s) => s.selectedOptions[0].textContent") == "All namespaces"
    assert (
        page.locator(".notice")
        .inner_text()
        .startswith(f"{'Darkroom' if kind == 'darkroom' else 'Database'} {stack.namespace}/{name} created.")
    )
