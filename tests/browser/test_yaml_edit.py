"""Editing a Darkroom as YAML in a real browser, keyboard only (backend/dashboard/yamledit.py, templates/yaml_edit.html).

Behaviours: from the detail page's "Edit YAML", Tab reaches the textarea, the arrow keys and typing change a field,
Tab reaches Review and Enter reviews (the diff appears, Review keeps the focus), Tab reaches Apply and Enter saves — back
on the detail page with "Changes saved." and the change stored; a schema error's "line N" button puts the caret on
that line; typing after a review disables Apply and says why. At 1366 and 390 px, light and dark: nothing wider than the
screen, no console error, no CSP violation (screenshots: yaml-edit-*.png).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.support import wait_for

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
SIZES = {"wide": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def focused_id(page: Any) -> str:
    return str(page.evaluate("document.activeElement && document.activeElement.id"))


def tab_to(page: Any, element_id: str, *, most: int = 40) -> None:
    for _ in range(most):
        if focused_id(page) == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id} (at #{focused_id(page)})")


def make_darkroom(stack: Stack, name: str) -> None:
    """A Darkroom last written by this panel's YAML editor (its field manager, an apply): no other owner to conflict with."""
    source = {"type": "WebFolder", "baseUrl": "https://images.example.com/k"}
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Darkroom", "metadata": {"name": name, "namespace": stack.namespace},
            "spec": {"source": source, "subDomains": [name], "replicas": 1}}  # fmt: skip
    stack.custom().patch_namespaced_custom_object(
        GROUP,
        VERSION,
        stack.namespace,
        PLURAL,
        name,
        body,
        field_manager="darkroom-control-panel",
        _content_type="application/apply-patch+yaml",
    )

    def ready() -> bool:
        found = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, name)
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (found.get("status") or {}).get("conditions") or ())

    wait_for(ready, timeout_s=60, message="the Darkroom never turned Ready")  # the reconciler is done writing its status
    stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}")


def replicas(stack: Stack, name: str) -> int:
    return int(stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, name)["spec"]["replicas"])


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [(size, scheme) for size in SIZES for scheme in ("light", "dark")])
def test_review_and_apply_with_the_keyboard_only(stack: Stack, new_page: Any, size: str, scheme: str) -> None:
    watched: Watched = new_page(viewport=SIZES[size], color_scheme=scheme)
    page = watched.page
    name = f"yaml-{size}-{scheme}-{uuid.uuid4().hex[:4]}"
    make_darkroom(stack, name)
    page.goto(f"/ui/darkrooms/{stack.namespace}/{name}")
    page.get_by_role("link", name="Edit YAML").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/yaml$"))
    assert_fits(page)
    shot(page, f"yaml-edit-open-{size}-{scheme}")

    tab_to(page, "yaml-text")
    lines = page.locator("#yaml-text").input_value().split("\n")
    row = next(i for i, line in enumerate(lines) if line.strip() == "replicas: 1")
    page.keyboard.press("Control+Home")
    for _ in range(row):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    page.keyboard.type("3")
    tab_to(page, "yaml-review", most=3)
    page.keyboard.press("Enter")
    diff = page.locator('tr[data-path="spec.replicas"]')
    expect(diff).to_contain_text("changed")
    expect(diff).to_contain_text("3")
    assert focused_id(page) == "yaml-review"
    assert_fits(page)
    shot(page, f"yaml-edit-reviewed-{size}-{scheme}")
    assert replicas(stack, name) == 1  # a review writes nothing

    page.keyboard.press("Tab")
    assert focused_id(page) == "yaml-apply"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/ui/darkrooms/{stack.namespace}/{name}\?saved=1$"))
    expect(page.locator(".notice")).to_contain_text("Changes saved.")
    assert replicas(stack, name) == 3


def test_line_buttons_go_to_the_line_and_typing_after_a_review_disables_apply(stack: Stack, new_page: Any) -> None:
    watched: Watched = new_page(viewport=SIZES["wide"])
    page = watched.page
    watched.expect(r"status of 422")
    name = f"yaml-lines-{uuid.uuid4().hex[:4]}"
    make_darkroom(stack, name)
    page.goto(f"/ui/darkrooms/{stack.namespace}/{name}/yaml")
    text = page.locator("#yaml-text").input_value().replace("replicas: 1", "replicas: 500")
    page.locator("#yaml-text").fill(text)
    page.get_by_role("button", name="Review").click()
    button = page.locator(".error-summary button[data-line]")
    expect(button).to_have_count(1)
    line = int(button.get_attribute("data-line") or 0)
    assert text.split("\n")[line - 1].strip() == "replicas: 500"
    expect(page.locator("#yaml-apply")).to_have_attribute("aria-disabled", "true")
    shot(page, "yaml-edit-schema-error-wide-light")
    button.focus()
    page.keyboard.press("Enter")
    assert focused_id(page) == "yaml-text"
    caret_line = page.evaluate(
        "(() => { const t = document.getElementById('yaml-text'); return t.value.slice(0, t.selectionStart).split('\\n').length; })()"
    )
    assert caret_line == line

    page.locator("#yaml-text").fill(text.replace("replicas: 500", "replicas: 2"))
    page.get_by_role("button", name="Review").click()
    expect(page.locator('tr[data-path="spec.replicas"]')).to_contain_text("2")
    expect(page.locator("#yaml-apply")).not_to_have_attribute("aria-disabled", "true")
    page.locator("#yaml-text").press("End")
    page.keyboard.type(" ")
    expect(page.locator("#yaml-apply")).to_have_attribute("aria-disabled", "true")
    expect(page.locator(".yaml-stale")).to_contain_text("Review it again")
