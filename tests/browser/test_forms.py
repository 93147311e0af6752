"""The generated forms in a real browser, on the Darkroom and Task forms.

Behaviours: Enter in a sub-domain adds the next one and focuses it instead of submitting (on an empty
item it does nothing); "Add sub-domain" and "Remove" work in place (items renumbered, focus kept in the
list) and what is submitted is what is shown. After a 422 the error summary has the focus and lists the
errors in the order of the form, in one message style; a create or an edit gets every problem at once
(field errors beside the source table's rules and the list's own). Side-by-side fields line up (labels
and inputs at the same height, also when one of them has an error); on a desktop the form uses the width
(fields side by side), on a phone it is one column without horizontal overflow — light and dark.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
MARSHMALLOW = re.compile(r"Missing data|Not a valid|Unknown field|Must be|Length must|may not be null")


def focused_id(page: Any) -> str:
    return str(page.evaluate("document.activeElement && document.activeElement.id"))


def summary_targets(page: Any) -> list[str]:
    """The fields the error summary links to, in its order (a field with two messages once)."""
    hrefs = page.locator(".error-summary li a").evaluate_all("links => links.map((a) => a.getAttribute('href'))")
    return list(dict.fromkeys(str(href) for href in hrefs))


def top(page: Any, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return float(box["y"])


def test_enter_adds_a_sub_domain_and_the_list_is_edited_in_place(stack: Stack, page: Any) -> None:
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("listed")
    page.get_by_label("Base URL", exact=True).fill("https://images.example.com")
    first = page.get_by_label("Sub-domain 1", exact=True)
    first.fill("listed-one")
    first.press("Enter")
    assert focused_id(page) == "f-subDomains-1"  # a new item, focused
    page.keyboard.type("listed-two")
    page.keyboard.press("Enter")
    assert focused_id(page) == "f-subDomains-2"
    page.keyboard.press("Enter")  # on an empty item: nothing
    assert page.locator("#f-subDomains > li").count() == 3 and focused_id(page) == "f-subDomains-2"
    assert posts == []  # Enter never submitted

    page.get_by_role("button", name="Remove sub-domain 1", exact=True).click()
    assert page.locator("#f-subDomains > li").count() == 2
    assert page.get_by_label("Sub-domain 1", exact=True).input_value() == "listed-two"  # renumbered
    assert focused_id(page) == "f-subDomains-0"
    page.get_by_role("button", name="Add sub-domain").click()
    assert focused_id(page) == "f-subDomains-2" and page.get_by_label("Sub-domain 3", exact=True).input_value() == ""
    page.keyboard.type("listed-three")
    assert posts == []
    page.get_by_role("button", name="Create Darkroom").click()
    page.wait_for_url(re.compile("created=listed"))
    stored = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "listed")
    assert stored["spec"]["subDomains"] == ["listed-two", "listed-three"]


def test_a_422_focuses_the_summary_which_lists_every_problem_in_form_order(stack: Stack, page: Any) -> None:
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("Bad_Name")
    page.get_by_role("radio", name=re.compile("^S3 bucket")).check()
    page.get_by_label("Bucket", exact=True).fill("B!")  # and no region: optional
    page.get_by_label("Sub-domain 1", exact=True).fill("UPPER")
    page.get_by_label("Sub-domain 1", exact=True).press("Enter")
    page.keyboard.type("UPPER")
    page.get_by_label("Replicas", exact=True).fill("500")
    page.get_by_role("button", name="Create Darkroom").click()
    summary = page.locator(".error-summary")
    summary.wait_for()
    expect(page.locator(".error-summary")).to_be_focused()  # not wait_for_function: a string there is an eval our CSP refuses
    assert summary_targets(page) == ["#f-name", "#f-source-bucket", "#f-subDomains-0", "#f-subDomains-1", "#f-replicas"]
    text = summary.inner_text()
    assert "Sub-domain 2: the same as sub-domain 1" in text and text.count("Sub-domain 2:") == 2  # invalid, and a duplicate
    assert "Region" not in text  # optional, as the CRD says
    assert not MARSHMALLOW.search(text), text
    shot(page, "darkroom-form-summary-focused")

    page.goto(f"/ui/tasks/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("t")
    page.get_by_role("button", name="Create Task").click()
    expect(page.locator(".error-summary")).to_be_focused()  # not wait_for_function: a string there is an eval our CSP refuses
    assert summary_targets(page) == ["#f-priority", "#f-deadline"]
    assert page.locator(".error-summary").inner_text().count(": required") == 2


def test_an_edit_reports_every_problem_at_once(stack: Stack, page: Any) -> None:
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": [f"switched-{stack.namespace}"]}
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Darkroom", "metadata": {"name": "switched"}, "spec": spec}
    stack.custom().create_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, body)
    page.goto(stack.when_shown(f"/ui/darkrooms/{stack.namespace}/switched/edit"))
    page.get_by_role("radio", name=re.compile("^S3 bucket")).check()
    page.get_by_label("Bucket", exact=True).fill("B!")
    page.get_by_label("Sub-domain 1", exact=True).fill("")
    page.get_by_label("Replicas", exact=True).fill("-1")
    page.get_by_role("button", name="Save changes").click()
    page.locator(".error-summary").wait_for()
    assert summary_targets(page) == ["#f-source-bucket", "#f-subDomains", "#f-replicas"]  # the region is optional
    assert page.get_by_role("radio", name=re.compile("^S3 bucket")).is_checked()  # the form as submitted
    stored = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "switched")
    assert stored["spec"]["source"]["type"] == "WebFolder" and stored["metadata"]["generation"] == 1


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [("desktop", "light"), ("desktop", "dark"), ("phone", "light"), ("phone", "dark")])
def test_side_by_side_fields_line_up_and_the_width_is_used(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    page = new_page(viewport=PHONE if size == "phone" else DESKTOP, color_scheme=scheme).page
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_role("radio", name=re.compile("^S3 bucket")).check()
    page.get_by_label("Bucket", exact=True).fill("demo-images")  # the region's error makes its column taller
    page.get_by_label("Replicas", exact=True).fill("500")
    page.get_by_role("button", name="Create Darkroom").click()
    page.locator(".error-summary").wait_for()
    assert_fits(page)
    rows = (("f-source-bucket", "f-source-region", "f-source-endpoint"), ("f-version", "f-replicas", "f-cacheTime"))
    for row in rows:
        labels = [top(page, f"label[for={fid}]") for fid in row]
        inputs = [top(page, f"#{fid}") for fid in row]
        if size == "desktop":  # side by side: the same heights
            assert max(labels) - min(labels) < 1 and max(inputs) - min(inputs) < 1, (row, labels, inputs)
        else:  # one column
            assert inputs == sorted(inputs) and len(set(inputs)) == len(inputs), (row, inputs)
    form = page.locator("#darkroom-form").bounding_box()
    assert form is not None
    if size == "desktop":
        assert form["width"] >= 900, form
    shot(page, f"darkroom-form-errors-{size}-{scheme}")
    page.goto(f"/ui/tasks/new?namespace={stack.namespace}")
    assert_fits(page)
    shot(page, f"task-form-{size}-{scheme}")


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_failing_submissions_in_a_row_leave_the_console_clean(stack: Stack, new_page: Callable[..., Watched], size: str) -> None:
    """Each 422 swaps the form in again and htmx settles it. An input may carry a style attribute by then — the browser
    writes one when a person resizes a text area; scripts may set one through the CSSOM, which the CSP allows — and
    settling must not copy it with setAttribute, which the CSP refuses (style-src-attr). The ``pages`` fixture fails
    the test on any console error or CSP violation."""
    watched = new_page(viewport=PHONE if size == "phone" else DESKTOP)
    page = watched.page
    page.goto(f"/ui/tasks/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("Bad_Name")
    for attempt in range(2):
        page.evaluate("['f-details', 'f-name', 'f-priority'].forEach((id) => { document.getElementById(id).style.minHeight = '3rem'; })")
        page.get_by_role("button", name="Create Task").click()
        expect(page.locator(".error-summary")).to_be_focused()
        page.get_by_label("Name", exact=True).fill(f"Still_Bad_{attempt}")
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("Bad_Name")
    for _ in range(2):
        page.evaluate("document.getElementById('f-name').style.minHeight = '3rem'")
        page.get_by_role("button", name="Create Darkroom").click()
        expect(page.locator(".error-summary")).to_be_focused()
    assert watched.unexpected() == [], watched.unexpected()
