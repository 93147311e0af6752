"""Tasks in a real browser: create through the form (inline errors first), mark finished from the
list (the row is swapped in place), the Task with its Events, the combined view, delete.
"""

from __future__ import annotations

import re
from typing import Any

from tests.browser.pages import shot
from tests.browser.stack import Stack
from tests.support import wait_for

GROUP, VERSION, PLURAL = "example.example.com", "v1", "tasks"


def task_names(stack: Stack) -> list[str]:
    return [t["metadata"]["name"] for t in stack.custom().list_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL)["items"]]


def test_tasks_create_finish_delete(stack: Stack, page: Any) -> None:
    page.goto(f"/ui/tasks/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("write-notes")
    page.get_by_label("Priority", exact=True).fill("11")
    page.get_by_role("button", name="Create Task").click()
    page.locator(".error-summary").wait_for()
    assert page.locator("#f-priority").get_attribute("aria-invalid") == "true"
    assert page.locator("#f-deadline-error").inner_text().strip()
    assert task_names(stack) == []

    page.get_by_label("Priority", exact=True).fill("7")
    page.get_by_label("Deadline (UTC)", exact=True).fill("2031-03-31T17:00")
    page.get_by_label("Details", exact=True).fill("Write the release notes.\nThen publish them.")
    shot(page, "task-form")
    page.get_by_role("button", name="Create Task").click()
    page.wait_for_url(re.compile(r"/ui/tasks\?namespace=.*created=write-notes"))
    stored = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "write-notes")
    assert stored["spec"]["deadline"] == "2031-03-31T17:00:00Z" and stored["spec"]["priority"] == 7

    task_row = page.locator("tr", has=page.get_by_role("link", name="write-notes", exact=True))
    assert "Pending" in task_row.inner_text()
    page.evaluate("window.__notReloaded = true")
    task_row.get_by_role("button", name=re.compile("Mark finished")).click()
    wait_for(lambda: task_row.get_attribute("data-state") == "Finished", timeout_s=10, message="the row never said Finished")
    assert page.evaluate("window.__notReloaded") is True
    assert (
        stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "write-notes")["spec"]["taskState"]
        == "Finished"
    )
    shot(page, "tasks-list")

    page.goto(stack.when_shown(f"/ui/tasks/{stack.namespace}/write-notes"))
    assert "Then publish them." in page.locator("dl.spec").inner_text()

    def events_shown() -> bool:  # the reconciler records lifecycle Events; the page's live stream brings them
        return bool(page.locator("#task-events").get_by_text("No events.").count() == 0)

    wait_for(events_shown, timeout_s=20, message="the Task's Events never showed")
    assert "tone-good" in (page.locator("dl.spec .badge[data-state=Finished]").get_attribute("class") or "")
    overdue = page.locator("#task-live table").first.locator("tr", has=page.get_by_role("cell", name="Overdue", exact=True))
    wait_for(lambda: overdue.count() == 1, timeout_s=10, message="no Overdue condition shown")
    assert "tone-good" in (overdue.locator(".badge").get_attribute("class") or "")  # Overdue=False is good news
    shot(page, "task-detail")
    page.goto(f"/ui/combinedtasks?namespace={stack.namespace}")
    assert page.locator("article.task-card").count() == 1
    shot(page, "tasks-combined")

    page.goto(stack.when_shown(f"/ui/tasks/{stack.namespace}/write-notes"))
    page.get_by_text("Delete…").click()
    page.get_by_role("button", name="Yes, delete write-notes").click()
    page.wait_for_url(re.compile("(deleted|terminating)=write-notes"))
    wait_for(lambda: "write-notes" not in task_names(stack), timeout_s=10)
    page.get_by_role("link", name="write-notes", exact=True).wait_for(state="detached")  # live: gone once the finalizer is released
