"""Live detail pages and edit forms in a real browser, at 1366 and 390 px, light and dark.

Behaviours: every region of a detail page follows the cluster without a reload and without a poll (the page has no
``every`` trigger at all: one stream, ``/ui/live/<kind>/<ns>/<name>``): a Darkroom's Spec card when its spec changes
through the cluster's client (its Replicas beside its status, never stale), its children (the Deployment's replicas
once the reconciler scales it) and its timeline (one Event about the Darkroom, one about its Deployment, named as such); a
Task's card and Events; a Postgresql's Spec card, children and Events. An edit form says before Save that its object
was changed by someone else (Reload shows the new values; Save would be refused) or deleted (Save would create
nothing), live; after Save the error — 409 stale, 404 deleted — is in the error summary (role=alert), scrolled into
view and focused, wherever the user had scrolled to. Screenshots: ``live-*.png``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, shot
from tests.browser.stack import Stack

DARKROOMS = ("deployments.example.com", "v1alpha1", "darkrooms")
TASKS = ("example.example.com", "v1", "tasks")
POSTGRESQLS = ("database.db.example.com", "v1", "postgresqls")
SIZES = {"1366": {"width": 1366, "height": 768}, "390": {"width": 390, "height": 844}}
LIVE_S = 30_000  # ms a live change may take to arrive on a loaded machine (a wait, never a timing assertion)


def make(stack: Stack, plural: tuple[str, str, str], name: str, spec: dict[str, Any]) -> dict[str, Any]:
    group, version, resource = plural
    kind = {"darkrooms": "Darkroom", "tasks": "Task", "postgresqls": "Postgresql"}[resource]
    body = {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": name}, "spec": spec}
    created: dict[str, Any] = stack.custom().create_namespaced_custom_object(group, version, stack.namespace, resource, body)
    return created


def change(stack: Stack, plural: tuple[str, str, str], name: str, spec: dict[str, Any]) -> None:
    group, version, resource = plural
    stack.custom().patch_namespaced_custom_object(group, version, stack.namespace, resource, name, {"spec": spec})


def darkroom(stack: Stack, name: str) -> dict[str, Any]:
    spec = {
        "replicas": 1,
        "version": "0.1.0",
        "source": {"type": "WebFolder", "baseUrl": "https://x.example"},
        "subDomains": [f"{name}-img"],
    }
    return make(stack, DARKROOMS, name, spec)


def record_event(
    stack: Stack, about: dict[str, Any], message: str, *, type: str = "Normal", count: int = 1, at: datetime | None = None
) -> None:
    """An Event about ``about`` (kind, name, uid), as a controller would record it, through the cluster's client; first
    and last seen ``at`` (now unless told: core/v1 Event times are whole seconds, so two Events recorded in one second
    have the same time)."""
    now = (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    involved = {"apiVersion": about.get("apiVersion", "v1"), "namespace": stack.namespace, **about}
    stack.core().create_namespaced_event(
        stack.namespace,
        {
            "metadata": {"name": f"{about['name']}.{uuid.uuid4().hex[:10]}"},
            "involvedObject": involved,
            "reason": "Tested",
            "message": message,
            "type": type,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": count,
            "source": {"component": "browser-test"},
        },
    )


def open_live(watched: Watched, path: str) -> Any:
    """The page at ``path``, its stream connected, marked so that a reload would show; it polls nothing."""
    page = watched.page
    page.goto(path)
    page.wait_for_selector("#live-indicator[data-state=live]")
    page.evaluate("window.__notReloaded = true")
    assert_no_poll(page)
    return page


def assert_no_poll(page: Any) -> None:
    """No element of the page polls: whatever it shows later came through its one stream."""
    assert page.locator("[hx-trigger*='every']").count() == 0
    assert page.locator("[sse-connect]").count() == 1


def assert_not_reloaded(page: Any) -> None:
    assert page.evaluate("window.__notReloaded") is True
    assert_no_poll(page)


@pytest.mark.parametrize(("size", "scheme"), [("1366", "light"), ("390", "dark")])
def test_a_darkroom_page_follows_its_spec_children_and_events(
    stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str
) -> None:
    name = f"live-{size}-{scheme}"
    created = darkroom(stack, name)
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}"))
    expect(page.locator("#scale-replicas")).to_have_value("1")
    deployment = page.locator("#darkroom-children li[data-kind=Deployment] > .node-line")
    expect(deployment).to_contain_text("of 1 ready", timeout=LIVE_S)

    change(stack, DARKROOMS, name, {"replicas": 3, "version": "0.2.0"})
    spec = page.locator("#darkroom-spec")
    expect(page.locator("#scale-replicas")).to_have_value("3", timeout=LIVE_S)  # the Spec card, beside the status
    expect(spec).to_contain_text("0.2.0")
    expect(deployment).to_contain_text("of 3 ready", timeout=LIVE_S)  # the reconciler scaled its Deployment

    message = f"about the darkroom {uuid.uuid4().hex[:8]}"
    record_event(
        stack,
        {"apiVersion": "deployments.example.com/v1alpha1", "kind": "Darkroom", "name": name, "uid": created["metadata"]["uid"]},
        message,
    )
    events = page.locator("#darkroom-events")
    expect(events).to_contain_text(message, timeout=LIVE_S)
    from kubernetes import client

    child: Any = client.AppsV1Api(stack.api_client).read_namespaced_deployment(name, stack.namespace)
    about_child = f"about its deployment {uuid.uuid4().hex[:8]}"
    record_event(stack, {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": child.metadata.uid}, about_child)
    expect(events.locator("tr", has_text=about_child)).to_contain_text(f"Deployment/{name}", timeout=LIVE_S)
    assert_not_reloaded(page)
    shot(page, f"live-darkroom-{size}-{scheme}")


@pytest.mark.parametrize(("size", "scheme"), [("390", "light"), ("1366", "dark")])
def test_a_task_page_follows_its_card_and_events(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    name = f"live-task-{size}"
    created = make(stack, TASKS, name, {"priority": 2, "deadline": "2031-01-01T00:00:00Z", "details": "first words"})
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/tasks/{stack.namespace}/{name}"))
    change(stack, TASKS, name, {"details": "second thoughts"})
    expect(page.locator("#task-live dl.spec")).to_contain_text("second thoughts", timeout=LIVE_S)
    message = f"about the task {uuid.uuid4().hex[:8]}"
    record_event(stack, {"apiVersion": "example.example.com/v1", "kind": "Task", "name": name, "uid": created["metadata"]["uid"]}, message)
    expect(page.locator("#task-events")).to_contain_text(message, timeout=LIVE_S)
    assert_not_reloaded(page)
    shot(page, f"live-task-{size}-{scheme}")


@pytest.mark.parametrize(("size", "scheme"), [("1366", "light"), ("390", "dark")])
def test_a_postgresql_page_follows_its_spec_children_and_events(
    stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str
) -> None:
    name = f"live-pg-{size}"
    created = make(stack, POSTGRESQLS, name, {})
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/postgresqls/{stack.namespace}/{name}"))
    change(stack, POSTGRESQLS, name, {"parameters": {"max_connections": "42"}})
    expect(page.locator("#postgresql-spec")).to_contain_text("max_connections = 42", timeout=LIVE_S)
    statefulset = page.locator("#postgresql-children li[data-kind=StatefulSet] > .node-line")
    expect(statefulset).to_contain_text("ready", timeout=LIVE_S)
    message = f"about the database {uuid.uuid4().hex[:8]}"
    uid = created["metadata"]["uid"]
    record_event(stack, {"apiVersion": "database.db.example.com/v1", "kind": "Postgresql", "name": name, "uid": uid}, message)
    expect(page.locator("#postgresql-events")).to_contain_text(message, timeout=LIVE_S)
    assert_not_reloaded(page)
    shot(page, f"live-postgresql-{size}-{scheme}")


def assert_error_in_view(page: Any, size: str, text: str) -> None:
    """The form's error summary says ``text``, is an alert, has the focus and lies inside the viewport."""
    summary = page.locator("form .error-summary")
    expect(summary).to_contain_text(text, timeout=LIVE_S)
    assert summary.get_attribute("role") == "alert"
    expect(summary).to_be_focused()
    page.wait_for_function("() => { const r = document.querySelector('form .error-summary').getBoundingClientRect(); return r.top >= 0; }")
    box = summary.bounding_box()
    viewport = SIZES[size]
    assert box is not None
    assert box["y"] >= 0, (box, viewport)
    assert box["y"] + box["height"] <= viewport["height"], (box, viewport)
    assert box["x"] >= 0, (box, viewport)
    assert box["x"] + box["width"] <= viewport["width"], (box, viewport)


@pytest.mark.parametrize(("size", "scheme"), [("1366", "light"), ("390", "dark")])
def test_an_edit_form_says_its_darkroom_changed_and_a_stale_save_shows_why_in_view(
    stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str
) -> None:
    name = f"stale-{size}"
    darkroom(stack, name)
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}/edit"))
    notice = page.locator("#darkroom-form-freshness")
    expect(notice).to_have_attribute("data-freshness", "current")
    page.get_by_label("Version", exact=True).fill("0.9.0")  # the user's edit, under way

    change(stack, DARKROOMS, name, {"version": "0.5.0"})  # someone else's
    expect(notice).to_have_attribute("data-freshness", "changed", timeout=LIVE_S)
    expect(notice).to_contain_text("changed by someone else")
    expect(notice).to_contain_text("Reload shows the new values; Save would be refused")
    expect(notice).to_be_in_viewport()  # kept in view at the bottom of the window
    assert page.get_by_label("Version", exact=True).input_value() == "0.9.0"  # the notice left the user's edit alone
    shot(page, f"live-edit-changed-{size}-{scheme}")

    page.get_by_role("button", name="Save changes").click()  # at the bottom of the form
    assert_error_in_view(page, size, "Someone else changed this Darkroom")
    expect(page.locator("form .conflict")).to_contain_text("0.5.0")  # its current values, to compare
    expect(notice).to_have_attribute("data-freshness", "current")  # the form now carries the current generation
    assert_not_reloaded(page)
    shot(page, f"live-edit-stale-save-{size}-{scheme}")


@pytest.mark.parametrize(("size", "scheme"), [("390", "light"), ("1366", "dark")])
def test_an_edit_form_says_its_task_was_deleted_and_a_save_shows_why_in_view(
    stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str
) -> None:
    name = f"deleted-{size}"
    make(stack, TASKS, name, {"priority": 3, "deadline": "2031-01-01T00:00:00Z"})
    watched = new_page(viewport=SIZES[size], color_scheme=scheme)
    watched.expect(r"status of 404|Error Code 404")  # the refused Save: answered with the form, swapped in
    page = open_live(watched, stack.when_shown(f"/ui/tasks/{stack.namespace}/{name}/edit"))
    notice = page.locator("#task-form-freshness")
    group, version, resource = TASKS
    stack.custom().delete_namespaced_custom_object(group, version, stack.namespace, resource, name)
    expect(notice).to_have_attribute("data-freshness", "deleted", timeout=LIVE_S)
    expect(notice).to_contain_text("was deleted")
    expect(notice).to_contain_text("Save would create nothing")
    expect(notice).to_be_in_viewport()
    shot(page, f"live-edit-deleted-{size}-{scheme}")

    page.get_by_role("button", name="Save changes").click()
    assert_error_in_view(page, size, "This Task was deleted after you opened this form, so nothing was saved")
    assert_not_reloaded(page)
    shot(page, f"live-edit-deleted-save-{size}-{scheme}")
