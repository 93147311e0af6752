"""The events timeline and the list rows' Warning badges in a real browser, at 1366 and 390 px, light and dark.

Behaviours: the timeline's filter (Warnings first, each type with its count) is reached with Tab and pressed with
Enter or Space, the choice goes into the URL and the rows follow it; a Warning recorded while the page is open comes
in live and the chosen filter stays (a Normal Event's row never shows under Warnings; the Warnings count grows); a
Darkroom's list row gets its Warning badge live when a Warning about it is recorded ("1 warning"), and the badge leads
to the timeline filtered to Warnings; a Warning about one of its Pods raises its badge live too, one about a Pod of no
Darkroom changes nothing. Screenshots: ``timeline-*.png``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.pages import Watched, shot
from tests.browser.stack import Stack
from tests.browser.test_live_details import LIVE_S, SIZES, darkroom, open_live, record_event
from tests.support import wait_for

TABS = 80  # at most this many Tabs from the top of the page to the filter


def about(created: dict[str, Any]) -> dict[str, Any]:
    meta = created["metadata"]
    return {"apiVersion": created["apiVersion"], "kind": created["kind"], "name": meta["name"], "uid": meta["uid"]}


def tab_to(page: Any, selector: str) -> None:
    """Press Tab from the top of the page until ``selector`` has the focus (the way a keyboard user gets there)."""
    page.locator("body").focus()
    for _ in range(TABS):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} was not reached with {TABS} Tabs")


WARNINGS_JS = "parseInt(document.querySelector('#darkroom-events [data-choice=Warning]').textContent.match(/\\d+/)[0], 10)"


def warnings_counted(page: Any) -> int:
    """The count the timeline's Warnings control shows."""
    return int(page.evaluate(WARNINGS_JS))


def rows(page: Any) -> Any:
    return page.locator("#darkroom-events tbody tr")


@pytest.mark.parametrize(("size", "scheme"), [("1366", "light"), ("390", "dark")])
def test_the_filter_works_by_keyboard_and_stays_through_live_refreshes(
    stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str
) -> None:
    name = f"tl-{size}-{scheme}"
    created = darkroom(stack, name)
    # A minute ago: the Warning recorded while the page is open must be the newer one. Recorded now, both could carry
    # the same whole second, and rows of one second are ordered by reason and message, not by arrival.
    earlier = datetime.now(UTC) - timedelta(minutes=1)
    record_event(stack, about(created), "the origin answers 503", type="Warning", count=3, at=earlier)
    record_event(stack, about(created), "configured", type="Normal", at=earlier)
    path = stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}")
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), path)
    control = page.locator("#darkroom-events form.segmented")
    # at least the 3 recorded: the cluster may add its own (the real control plane's pods, a transient not-Ready)
    expect(control.locator("button")).to_have_text([re.compile(r"Warnings\s*\d+"), re.compile(r"All\s*\d+"), re.compile(r"Normal\s*\d+")])
    assert warnings_counted(page) >= 3
    expect(control.locator("[data-choice=All]")).to_have_attribute("aria-pressed", "true")
    shot(page, f"timeline-all-{size}-{scheme}")

    tab_to(page, "#darkroom-events [data-choice=Warning]")
    shot(page, f"timeline-focus-{size}-{scheme}", full_page=False)  # the focus ring on the control
    page.keyboard.press("Enter")
    page.wait_for_url("**?events=Warning#darkroom-events")
    expect(page.locator("#darkroom-events [data-choice=Warning]")).to_have_attribute("aria-pressed", "true")
    expect(rows(page).filter(has_text="the origin answers 503")).to_have_count(1)
    expect(page.locator("#darkroom-events tbody tr:not([data-type=Warning])")).to_have_count(0)
    page.wait_for_selector("#live-indicator[data-state=live]")

    before = warnings_counted(page)
    fresh = f"a new warning {uuid.uuid4().hex[:6]}"
    record_event(stack, about(created), fresh, type="Warning")
    record_event(stack, about(created), "a normal one", type="Normal")
    expect(rows(page).first).to_contain_text(fresh, timeout=LIVE_S)  # live, newest first, still filtered
    page.wait_for_function(f"({WARNINGS_JS}) >= {before + 1}", timeout=LIVE_S)
    expect(page.locator("#darkroom-events [data-choice=Warning]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#darkroom-events")).not_to_contain_text("a normal one")
    shot(page, f"timeline-warnings-{size}-{scheme}")

    tab_to(page, "#darkroom-events [data-choice=Normal]")
    page.keyboard.press(" ")
    page.wait_for_url("**?events=Normal#darkroom-events")
    expect(page.locator("#darkroom-events [data-choice=Normal]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#darkroom-events")).to_contain_text("a normal one")
    expect(page.locator("#darkroom-events tbody tr[data-type=Warning]")).to_have_count(0)


@pytest.mark.parametrize(("size", "scheme"), [("390", "light"), ("1366", "dark")])
def test_a_list_row_gets_its_warning_badge_live(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    name = f"badge-{size}-{scheme}"
    created = darkroom(stack, name)
    stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}")
    page = open_live(new_page(viewport=SIZES[size], color_scheme=scheme), f"/?namespace={stack.namespace}&q={name}")
    row = page.locator(f"tr[sse-swap='Darkroom/{stack.namespace}/{name}']")
    expect(row).to_be_visible()
    expect(row.locator(".warning-count")).to_have_count(0)
    record_event(stack, about(created), "the origin answers 503", type="Warning")
    badge = page.locator(f"tr[sse-swap='Darkroom/{stack.namespace}/{name}'] .warning-count")
    expect(badge).to_have_attribute("aria-label", "1 warning", timeout=LIVE_S)
    shot(page, f"timeline-list-badge-{size}-{scheme}")
    badge.press("Enter")  # focus and key in one action: a row pushed live in between replaces the focused link
    page.wait_for_url("**?events=Warning#darkroom-events")
    expect(page.locator("#darkroom-events [data-choice=Warning]")).to_have_attribute("aria-pressed", "true")
    expect(rows(page)).to_have_count(1)
    shot(page, f"timeline-from-badge-{size}-{scheme}", full_page=False)


def test_a_warning_about_one_of_its_pods_raises_the_rows_badge_live(stack: Stack, new_page: Callable[..., Watched]) -> None:
    name = "badge-pods"
    darkroom(stack, name)
    detail = stack.when_shown(f"/ui/darkrooms/{stack.namespace}/{name}")
    client = stack.app.test_client()  # the reconciler's Deployment → ReplicaSet → Pod, in the API's cache
    region = {"HX-Request": "true", "HX-Target": "darkroom-children"}
    wait_for(lambda: 'data-kind="Pod"' in client.get(detail, headers=region).get_data(as_text=True),
             timeout_s=LIVE_S / 1000, message="the Darkroom's Pod never reached the tree")  # fmt: skip
    selector = f"app.kubernetes.io/instance={name}"
    (pod,) = [
        p for p in stack.core().list_namespaced_pod(stack.namespace, label_selector=selector).items if not p.metadata.deletion_timestamp
    ]
    stray = stack.core().create_namespaced_pod(stack.namespace, {
        "metadata": {"name": f"stray-{uuid.uuid4().hex[:6]}", "labels": {"app.kubernetes.io/managed-by": "darkroom-operator"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})  # fmt: skip
    page = open_live(new_page(viewport=SIZES["1366"]), f"/?namespace={stack.namespace}&q={name}")
    row = page.locator(f"tr[sse-swap='Darkroom/{stack.namespace}/{name}']")
    expect(row).to_be_visible()
    badge = row.locator(".warning-count")
    before = int((badge.get_attribute("aria-label") or "0").split()[0]) if badge.count() else 0  # the cluster's own, if any
    record_event(stack, {"kind": "Pod", "name": stray.metadata.name, "uid": stray.metadata.uid}, "not ours", type="Warning", count=5)
    record_event(stack, {"kind": "Pod", "name": pod.metadata.name, "uid": pod.metadata.uid}, "Back-off restarting", type="Warning", count=2)
    expect(page.locator(f"tr[sse-swap='Darkroom/{stack.namespace}/{name}'] .warning-count")).to_have_attribute(
        "aria-label", f"{before + 2} warnings", timeout=LIVE_S
    )
    shot(page, "timeline-list-badge-pod")
