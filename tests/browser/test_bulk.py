"""Bulk actions in a real browser, keyboard only, at 1366 and 390 px, light and dark (static/bulk.js): each row's
labelled checkbox is reached by Tab and toggled by Space; the bar appears ("2 selected"), the header's checkbox is
mixed; a selected row pushed live keeps its check; the bar's Delete… opens a modal confirmation naming the objects
(focus on Cancel; Escape closes it and focus goes back to Delete…); confirming shows the result per object in a region
that gets focus, with its summary a role=status line; the bar never makes the page wider than the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.support import wait_for

TASK = ("example.example.com", "v1", "tasks")
SIZES = {"wide": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def tab_to(page: Any, label: str, *, back: bool = False) -> None:
    """Press Tab (Shift+Tab with ``back``) until the focused element's accessible label or text is ``label``."""
    for _ in range(60):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        focused = page.evaluate("(document.activeElement.getAttribute('aria-label') || document.activeElement.textContent).trim()")
        if focused == label:
            return
    raise AssertionError(f"Tab never reached {label!r}")


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [(size, scheme) for size in ("wide", "phone") for scheme in ("light", "dark")])
def test_keyboard_only_bulk_delete(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    namespace = stack.new_namespace()
    custom = stack.custom()
    for name, priority in (("alpha", 1), ("beta", 2), ("gamma", 3)):
        body = {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": name},
                "spec": {"priority": priority, "deadline": "2031-01-01T00:00:00Z"}}  # fmt: skip
        custom.create_namespaced_custom_object(*TASK[:2], namespace, TASK[2], body)
    page = new_page(viewport=SIZES[size], color_scheme=scheme).page
    stack.when_shown(f"/ui/tasks/{namespace}/gamma")
    page.goto(f"/ui/tasks?namespace={namespace}")
    page.wait_for_selector("#live-indicator[data-state=live]")
    bar = page.locator("#bulk-form")
    assert bar.is_hidden()  # nothing selected

    tab_to(page, f"Select alpha in {namespace}")
    page.keyboard.press("Space")
    tab_to(page, f"Select beta in {namespace}")
    page.keyboard.press("Space")
    assert bar.is_visible() and page.locator("[data-bulk-count]").inner_text() == "2 selected"
    assert page.locator("input[data-bulk-page]").evaluate("(b) => b.indeterminate && !b.checked")

    # a selected row pushed live (its priority changed elsewhere) keeps its check
    custom.patch_namespaced_custom_object(*TASK[:2], namespace, TASK[2], "alpha", {"spec": {"priority": 7}})
    alpha = page.locator(f"tr[sse-swap='Task/{namespace}/alpha']")
    wait_for(lambda: alpha.locator("td.num").inner_text() == "7", timeout_s=15, message="the row was never pushed")
    assert alpha.locator("input[data-bulk-item]").is_checked()
    assert page.locator("[data-bulk-count]").inner_text() == "2 selected"
    assert_fits(page)
    shot(page, f"bulk-selected-{size}-{scheme}")

    tab_to(page, "Delete…", back=True)
    page.keyboard.press("Enter")
    dialog = page.locator("dialog#bulk-dialog")
    wait_for(lambda: dialog.evaluate("(d) => d.open && d.matches(':modal')"), timeout_s=10, message="no confirmation")
    assert page.evaluate("document.activeElement.textContent") == "Cancel"
    assert dialog.locator("h2").inner_text() == "Delete 2 Tasks?"
    assert dialog.locator(".bulk-names li").all_inner_texts() == [f"{namespace}/alpha", f"{namespace}/beta"]
    shot(page, f"bulk-confirm-{size}-{scheme}")
    page.keyboard.press("Escape")
    assert dialog.evaluate("(d) => !d.open")
    assert page.evaluate("document.activeElement.textContent") == "Delete…"  # focus back on the bar's button

    page.keyboard.press("Enter")
    wait_for(lambda: dialog.evaluate("(d) => d.open"), timeout_s=10, message="no confirmation")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Yes, delete 2 Tasks"
    page.keyboard.press("Enter")
    results = page.locator("#bulk-results")
    results.locator("[role=status]").wait_for()
    assert results.locator("[role=status]").inner_text().startswith("Delete: 2 of 2 Tasks deleted.")
    assert results.evaluate("(r) => r === document.activeElement") and dialog.evaluate("(d) => !d.open")
    assert results.locator("tr[data-outcome=done] th").all_inner_texts() == [f"{namespace}/alpha", f"{namespace}/beta"]
    left = [t["metadata"]["name"] for t in custom.list_namespaced_custom_object(*TASK[:2], namespace, TASK[2])["items"]]
    assert left == ["gamma"]
    page.locator(f"tr[sse-swap='Task/{namespace}/alpha']").wait_for(state="detached")
    assert bar.is_hidden()  # the deleted rows dropped out of the selection
    assert_fits(page)
    shot(page, f"bulk-results-{size}-{scheme}")
