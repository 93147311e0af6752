"""Postgresqls (the "Databases" pages) in a real browser, with the stack's reconciler running.

Behaviours: creating through the generated form — first with an invalid parameter (the error inline on
that row's value and in the summary, nothing created), then valid; the row appears in a list opened
before (no reload) and turns Ready live once the simulated StatefulSet is ready; the detail page shows
the connection details and child resources, and "Show password" reveals the 32-character password the
reconciler generated (the one in the Secret); editing adds a parameter; deleting (after confirming)
removes it and its row. A password that may not be shown (its Secret is someone else's) is explained
in place of the password. Then each page — list, form with errors, detail with the password shown, the delete confirmation — at
desktop size and at 390x844 px, light and dark: screenshots, and no horizontal page overflow. Every test
also asserts a clean console: no CSP violations, no script errors (conftest ``page``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.support import as_dict, wait_for

PG = ("database.db.example.com", "v1", "postgresqls")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def pg_names(stack: Stack) -> list[str]:
    items = stack.custom().list_namespaced_custom_object(PG[0], PG[1], stack.namespace, PG[2])["items"]
    return [item["metadata"]["name"] for item in items]


def row(page: Any, name: str) -> Any:
    return page.locator("tr", has=page.get_by_role("link", name=name, exact=True))


def parameter(page: Any, index: int, name: str, value: str) -> None:
    page.get_by_label(f"Name of parameter {index}", exact=True).select_option(name)
    page.get_by_label(f"Value of parameter {index}", exact=True).fill(value)


def stored_password(stack: Stack, name: str) -> str:
    secret = stack.core().read_namespaced_secret(f"{name}-credentials", stack.namespace)
    return base64.b64decode(secret.data["password"]).decode()


def test_create_watch_ready_show_password_edit_delete(stack: Stack, new_page: Callable[..., Watched]) -> None:
    watcher = new_page().page
    watcher.goto(f"/ui/postgresqls?namespace={stack.namespace}")
    watcher.wait_for_selector("#live-indicator[data-state=live]")
    watcher.evaluate("window.__notReloaded = true")

    author = new_page().page
    author.goto(f"/ui/postgresqls/new?namespace={stack.namespace}")
    author.get_by_label("Name", exact=True).fill("shop")
    author.get_by_label("Database name", exact=True).fill("orders")
    parameter(author, 1, "max_connections", "plenty")
    author.get_by_role("button", name="Create database").click()
    author.locator(".error-summary").wait_for()
    value = author.locator("#f-parameters-max_connections")
    assert value.get_attribute("aria-invalid") == "true"
    assert "whole number" in author.locator("#f-parameters-max_connections-error").inner_text()
    assert "max_connections" in author.locator(".error-summary").inner_text()
    assert author.get_by_label("Database name", exact=True).input_value() == "orders"  # what was typed is kept
    assert "shop" not in pg_names(stack)  # the refused create made nothing (other tests of the module may have made theirs)

    value.fill("120")
    author.get_by_role("button", name="Create database").click()
    author.wait_for_url(re.compile(r"/ui/postgresqls\?namespace=.*created=shop"))
    assert "created" in author.locator(".notice").inner_text()

    created = row(watcher, "shop")
    created.wait_for()
    wait_for(lambda: created.get_attribute("data-state") == "Ready", timeout_s=60, message="the row never turned Ready")
    assert "Running" in created.locator(".phase").inner_text()
    assert f"shop.{stack.namespace}.svc:5432" in created.locator(".endpoint").inner_text()
    assert watcher.evaluate("window.__notReloaded") is True

    author.goto(f"/ui/postgresqls/{stack.namespace}/shop")
    author.locator("#postgresql-live .status-line[data-state=Ready]").wait_for(timeout=30_000)
    assert author.locator("[data-field=database]").inner_text() == "orders"
    assert author.locator("[data-field=host]").inner_text() == f"shop.{stack.namespace}.svc"
    children = author.locator("#postgresql-children .tree")
    wait_for(lambda: "1 of 1 ready" in children.locator("li[data-kind=StatefulSet] > .node-line").inner_text(), timeout_s=30)
    assert "read only by Show password" in children.locator("li[data-kind=Secret] > .node-line").inner_text()
    author.get_by_role("button", name="Show password").click()
    shown = author.locator("#pg-password-value")
    shown.wait_for()
    assert len(shown.inner_text()) == 32 and shown.inner_text() == stored_password(stack, "shop")
    author.get_by_role("button", name="Hide").click()
    shown.wait_for(state="detached")

    author.get_by_role("link", name="Edit", exact=True).click()
    author.wait_for_url(re.compile(r"/shop/edit$"))
    assert author.get_by_label("Password (optional)", exact=True).input_value() == ""
    author.get_by_role("button", name="Add parameter").click()
    parameter(author, 2, "work_mem", "8MB")
    author.get_by_role("button", name="Save changes").click()
    author.wait_for_url(re.compile(r"/ui/postgresqls/.*/shop\?saved=1"))
    assert "work_mem = 8MB" in author.locator(".spec-card dl").inner_text()
    stored = stack.custom().get_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], "shop")
    assert stored["spec"]["parameters"] == {"max_connections": "120", "work_mem": "8MB"}

    author.get_by_text("Delete…").click()
    author.get_by_role("button", name="Yes, delete shop").click()
    author.wait_for_url(re.compile(r"/ui/postgresqls\?namespace=.*(deleted|terminating)=shop"))
    wait_for(lambda: "shop" not in pg_names(stack), timeout_s=30, message="the Postgresql was never deleted")
    row(watcher, "shop").wait_for(state="detached")


def test_a_password_that_cannot_be_shown_is_explained_in_place(stack: Stack, page: Any) -> None:
    """A Secret of the password's name that someone else made is never revealed; the refusal (409) is
    swapped in where the password would be, not flashed as a failed request."""
    stack.core().create_namespaced_secret(stack.namespace, {"metadata": {"name": "taken-credentials"}, "stringData": {"password": "x"}})
    body = {"apiVersion": f"{PG[0]}/{PG[1]}", "kind": "Postgresql", "metadata": {"name": "taken"}, "spec": {}}
    stack.custom().create_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], body)
    page.goto(stack.when_shown(f"/ui/postgresqls/{stack.namespace}/taken"))
    page.get_by_role("button", name="Show password").click()
    problem = page.locator("#pg-password .password-problem")
    problem.wait_for()
    assert problem.get_attribute("data-status") == "409" and "does not belong to this database" in problem.inner_text()
    assert page.locator("#pg-password-value").count() == 0 and page.locator("#flash").is_hidden()
    assert page.get_by_role("button", name="Try again").is_visible()


@pytest.fixture(scope="module")
def ready_database(stack: Stack) -> str:
    body: dict[str, Any] = {
        "apiVersion": f"{PG[0]}/{PG[1]}",
        "kind": "Postgresql",
        "metadata": {"name": "analytics-warehouse-primary"},
        "spec": {"version": "16", "parameters": {"max_connections": "200", "idle_in_transaction_session_timeout": "10min"}},
    }
    stack.custom().create_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], body)

    def ready() -> bool:
        found = as_dict(stack.custom().get_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], body["metadata"]["name"]))
        return bool((found.get("status") or {}).get("phase") == "Running")

    wait_for(ready, timeout_s=60, message="the database never became Ready")
    return str(body["metadata"]["name"])


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [("desktop", "light"), ("desktop", "dark"), ("phone", "light"), ("phone", "dark")])
def test_pages_at_desktop_and_phone_width_light_and_dark(
    stack: Stack, new_page: Callable[..., Watched], ready_database: str, size: str, scheme: str
) -> None:
    page = new_page(viewport=PHONE if size == "phone" else DESKTOP, color_scheme=scheme).page
    suffix = f"{size}-{scheme}"

    page.goto(f"/ui/postgresqls?namespace={stack.namespace}")
    page.wait_for_selector("#live-indicator[data-state=live]")
    row(page, ready_database).wait_for()
    assert_fits(page)
    shot(page, f"postgresqls-list-{suffix}")

    page.goto(f"/ui/postgresqls/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("Not_Valid")
    page.get_by_label("PostgreSQL version", exact=True).fill("9.6")
    parameter(page, 1, "log_statement", "everything")
    page.get_by_role("button", name="Create database").click()
    page.locator(".error-summary").wait_for()
    assert_fits(page)
    shot(page, f"postgresql-form-errors-{suffix}")

    page.goto(stack.when_shown(f"/ui/postgresqls/{stack.namespace}/{ready_database}"))
    page.locator("#postgresql-live .status-line[data-state=Ready]").wait_for(timeout=30_000)
    page.get_by_role("button", name="Show password").click()
    page.locator("#pg-password-value").wait_for()
    assert_fits(page)
    shot(page, f"postgresql-detail-{suffix}")

    page.get_by_text("Delete…").click()  # the confirmation fits the screen
    confirm = page.get_by_role("button", name=f"Yes, delete {ready_database}")
    box = confirm.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"]
    assert_fits(page)
    shot(page, f"postgresql-delete-confirm-{suffix}")
