"""List pages in a real browser: sorting, row menus, ticking ages and live rows pushed as HTML.

Covers: a click (or Enter) on a column header sorts the list, puts ``sort=`` in the URL, sets ``aria-sort``,
and a reload keeps it; the per-row menu opens from the keyboard, Escape closes it and gives the focus back,
its Edit and View YAML links point at the object, and its Delete… (keyboard only) opens the list's delete dialog
(Escape and Cancel close it, focus goes back to the row's menu button) whose confirmation goes through the usual
delete flow; a row pushed while its menu is open waits until the menu closes; column widths stay put when a
state badge changes; the Age column ticks in the browser without a request, each age written only when its text
changes, pushed rows included, none while the tab is hidden (all caught up when it is shown); a live refresh
for the old filter that answers after the user filtered never brings the old rows back; a change of a Task
reaches two open tabs without either of them making a request, and a change of the value a list is sorted by puts
the list in its new order at once, rendered once on the server for both
(``darkroom_dashboard_row_renders_total`` follows the Task changes, not the tabs); Tasks made and
deleted elsewhere appear and disappear live; the Darkroom list shows source-type icons (CSS masks) and the cache
time in words. Screenshots: the sorted list with an open menu and the delete dialog, desktop and phone, light and dark; the lists
never widen the page (the headers' screen-reader texts stay inside the scrolling table).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from prometheus_client import CollectorRegistry

from backend.api import operations
from backend.dashboard.browsing import PAGE_SIZE
from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.browser.test_live_details import LIVE_S, darkroom, record_event
from tests.browser.test_postgresqls import PG
from tests.support import wait_for

GROUP, VERSION, PLURAL = "example.example.com", "v1", "tasks"
DR = ("deployments.example.com", "v1", "darkrooms")
FOCUSED = "document.activeElement.getAttribute('aria-label')"


def make_task(stack: Stack, name: str, priority: int, deadline: str = "2031-01-01T00:00:00Z", *, namespace: str = "") -> None:
    spec = {"priority": priority, "deadline": deadline}
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Task", "metadata": {"name": name}, "spec": spec}
    stack.custom().create_namespaced_custom_object(GROUP, VERSION, namespace or stack.namespace, PLURAL, body)


def row_names(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("#task-list tbody th[scope=row]").all_inner_texts()]


def sample(stack: Stack, name: str, labels: dict[str, str]) -> float:
    registry: CollectorRegistry = operations.registry(stack.app)
    return registry.get_sample_value(name, labels) or 0.0


def test_sorting_is_kept_in_the_url(stack: Stack, page: Any) -> None:
    for name, priority in (("sort-b", 5), ("sort-a", 9), ("sort-c", 1)):
        make_task(stack, name, priority)
    page.goto(f"/ui/tasks?namespace={stack.namespace}")
    wait_for(lambda: len(row_names(page)) == 3, timeout_s=10, message="three rows")
    assert row_names(page) == ["sort-a", "sort-b", "sort-c"]

    header = page.locator("th", has=page.get_by_role("link", name=re.compile("^Priority")))
    header.get_by_role("link").click()
    page.wait_for_url(re.compile(r"sort=priority"))
    wait_for(lambda: row_names(page) == ["sort-c", "sort-b", "sort-a"], timeout_s=10, message="ascending priority")
    assert page.locator("th[aria-sort]").count() == 1 and header.get_attribute("aria-sort") == "ascending"

    page.locator("th", has=page.get_by_role("link", name=re.compile("^Priority"))).get_by_role("link").focus()
    page.keyboard.press("Enter")  # the header is a link: the keyboard sorts too
    page.wait_for_url(re.compile(r"sort=-priority"))
    wait_for(lambda: row_names(page) == ["sort-a", "sort-b", "sort-c"], timeout_s=10, message="descending priority")
    page.reload()
    assert row_names(page) == ["sort-a", "sort-b", "sort-c"]
    assert page.locator("th[aria-sort=descending]").inner_text().lower().startswith("priority")
    page.get_by_label("Name contains").fill("sort-")  # a filter keeps the order
    page.wait_for_url(re.compile(r"q=sort-"))
    assert "sort=-priority" in page.url and row_names(page) == ["sort-a", "sort-b", "sort-c"]


def test_a_change_of_the_sorted_value_reorders_the_list_live(stack: Stack, page: Any) -> None:
    for name, priority in (("order-a", 1), ("order-b", 2), ("order-c", 3)):
        make_task(stack, name, priority)
    page.goto(f"/ui/tasks?namespace={stack.namespace}&q=order-&sort=priority")  # the module's other Tasks share the namespace
    page.locator("#live-indicator[data-state=live]").wait_for()
    wait_for(lambda: row_names(page) == ["order-a", "order-b", "order-c"], timeout_s=10, message="ascending priority")
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "order-c", {"spec": {"priority": 0}})
    wait_for(lambda: row_names(page) == ["order-c", "order-a", "order-b"], timeout_s=10, message="the list in its new order")
    assert "sort=priority" in page.url


def test_row_menu_from_the_keyboard_and_delete(stack: Stack, page: Any) -> None:
    make_task(stack, "menu-task", 3)
    page.goto(f"/ui/tasks?namespace={stack.namespace}&q=menu-task")
    page.locator("#live-indicator[data-state=live]").wait_for()
    button = page.get_by_role("button", name="Actions for menu-task")
    button.focus()
    page.keyboard.press("Enter")
    menu = page.locator("[popover]:popover-open")
    menu.wait_for()
    detail = f"/ui/tasks/{stack.namespace}/menu-task"
    assert menu.get_by_role("link", name="Edit").get_attribute("href") == detail + "/edit"
    assert menu.get_by_role("link", name="View YAML").get_attribute("href") == detail + "#yaml"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Edit"
    shot(page, "list-row-menu")
    page.keyboard.press("Escape")
    wait_for(lambda: page.locator("[popover]:popover-open").count() == 0, timeout_s=5, message="Escape closes the menu")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Actions for menu-task"

    dialog = page.locator("dialog#row-delete-dialog")
    for close in ("Escape", "Cancel"):  # the list's delete dialog: Escape and Cancel close it, focus goes back
        page.keyboard.press("Enter")
        menu.wait_for()
        for _ in range(3):  # Edit, View YAML, Delete…
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # opens the confirmation, a modal dialog
        dialog.wait_for()
        assert page.evaluate("document.activeElement.textContent.trim()") == "Cancel"
        assert dialog.get_by_role("heading").inner_text() == f"Delete Task {stack.namespace}/menu-task?"
        assert dialog.locator('[data-fill="note"]').inner_text() == "It and its lifecycle go; its Events expire on their own."
        page.keyboard.press(close if close == "Escape" else "Enter")
        dialog.wait_for(state="hidden")
        wait_for(lambda: page.evaluate(FOCUSED) == "Actions for menu-task", timeout_s=5, message="focus back on the menu button")

    page.keyboard.press("Enter")
    menu.wait_for()
    for _ in range(3):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    dialog.wait_for()
    shot(page, "list-row-delete-dialog")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Yes, delete menu-task"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"(deleted|terminating)=menu-task"))
    assert "Task " + stack.namespace + "/menu-task" in page.locator(".notice").inner_text()
    page.get_by_role("link", name="menu-task", exact=True).wait_for(state="detached", timeout=30_000)


def test_a_row_waits_while_its_menu_is_open_and_columns_keep_their_width(stack: Stack, page: Any) -> None:
    make_task(stack, "steady-task", 2)
    make_task(stack, "steady-other", 1)
    page.goto(f"/ui/tasks?namespace={stack.namespace}&q=steady-")
    page.locator("#live-indicator[data-state=live]").wait_for()
    row = page.locator("tr", has=page.get_by_role("link", name="steady-task", exact=True))
    widths = page.evaluate("[...document.querySelectorAll('#task-list thead th')].map((th) => th.getBoundingClientRect().width)")

    row.get_by_role("button", name="Actions for steady-task").click()
    page.locator("[popover]:popover-open").wait_for()
    patch = {"spec": {"taskState": "Finished", "priority": 9}}
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "steady-task", patch)
    other = page.locator("tr", has=page.get_by_role("link", name="steady-other", exact=True))
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "steady-other", {"spec": {"priority": 5}})
    wait_for(lambda: other.locator("td.num").inner_text().strip() == "5", timeout_s=10, message="the other row is pushed")
    assert row.get_attribute("data-state") == "Pending"  # held back: the open menu stays under the pointer
    assert page.locator("[popover]:popover-open").count() == 1
    page.keyboard.press("Escape")
    wait_for(lambda: row.get_attribute("data-state") == "Finished", timeout_s=10, message="the held row once the menu closed")
    assert row.locator("td.num").inner_text().strip() == "9"
    after = page.evaluate("[...document.querySelectorAll('#task-list thead th')].map((th) => th.getBoundingClientRect().width)")
    assert after == widths  # Pending → Finished: no column moved


def test_age_ticks_without_requests(stack: Stack, page: Any) -> None:
    page.goto(f"/?namespace={stack.namespace}")
    page.locator("#live-indicator[data-state=live]").wait_for()
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "ticking"},
        "spec": {"source": {"type": "S3", "bucket": "pics", "region": "eu-west-1"}, "subDomains": ["ticking"], "cacheTime": 2592000},
    }
    stack.custom().create_namespaced_custom_object(*DR[:2], stack.namespace, DR[2], body)
    age = page.locator("tr", has=page.get_by_role("link", name="ticking", exact=True)).locator("time[data-age]")
    age.wait_for(timeout=15_000)  # a new Darkroom appears live
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url) if "/static/" not in request.url else None)
    first = age.inner_text()
    wait_for(lambda: age.inner_text() != first, timeout_s=5, message="the age never ticked")
    assert re.fullmatch(r"\d+s", age.inner_text()), age.inner_text()
    assert requests == []
    source = page.locator("tr", has=page.get_by_role("link", name="ticking", exact=True)).locator("td.source")
    icon = source.locator(".source-icon.source-s3")
    mask = "(e) => e.isConnected && getComputedStyle(e).maskImage.includes('/static/icons/source-s3.svg') && e.offsetWidth > 10"
    wait_for(lambda: icon.evaluate(mask), timeout_s=5, message="the S3 icon")  # (a pushed row may be swapping in)
    assert "30 days" in (source.get_attribute("title") or "")


def test_a_script_that_starts_late_never_dates_an_age_in_the_future(stack: Stack, page: Any) -> None:
    """The page's clock is set from the moment its response arrived, not from when its script first runs (seconds
    later on a busy machine): a Darkroom that appears live is an age, never 'in 3s'."""

    def late(route: Any) -> None:
        time.sleep(3)  # the script arrives, and runs, 3 s after the page
        route.continue_()

    page.route(re.compile(r".*/static/dashboard\.js.*"), late)
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "fresh"},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/a"}, "subDomains": ["fresh"]},
    }
    page.goto(f"/?namespace={stack.namespace}")
    page.locator("#live-indicator[data-state=live]").wait_for()
    stack.custom().create_namespaced_custom_object(*DR[:2], stack.namespace, DR[2], body)
    age = page.locator("tr", has=page.get_by_role("link", name="fresh", exact=True)).locator("time[data-age]")
    age.wait_for(timeout=15_000)  # the new Darkroom appears live
    page.wait_for_timeout(500)  # the script has written its age
    assert re.fullmatch(r"\d+s", age.inner_text()), age.inner_text()


def test_a_late_live_refresh_never_brings_back_the_old_filter(stack: Stack, page: Any) -> None:
    """A refresh for the old filter (an object came) still on its way when the user filters: its rows never land."""
    make_task(stack, "race-a1", 1)
    make_task(stack, "race-b1", 2)
    page.goto(f"/ui/tasks?namespace={stack.namespace}&q=race-")
    page.locator("#live-indicator[data-state=live]").wait_for()
    wait_for(lambda: row_names(page) == ["race-a1", "race-b1"], timeout_s=10, message="both rows")
    page.evaluate("""() => {
      window.__refreshed = 0;
      window.__filtered = false;
      document.querySelector('.live-refresh').addEventListener('htmx:afterRequest', () => { window.__refreshed += 1; });
      document.addEventListener('htmx:confirm', (e) => { if (e.target.id === 'filter-q') window.__filtered = true; });
    }""")
    held: list[tuple[str, Any]] = []

    def hold(route: Any) -> None:
        request = route.request
        if request.headers.get("x-dashboard-refresh") == "live":
            held.append(("refresh", route))
        elif "q=race-b" in request.url and not any(kind == "filter" for kind, _ in held):
            held.append(("filter", route))
        else:
            route.continue_()

    def wait_until_held(kind: str) -> None:
        for _ in range(200):
            if any(k == kind for k, _ in held):
                return
            page.wait_for_timeout(50)  # lets Playwright deliver the route
        raise AssertionError(f"no {kind} request")

    page.route(re.compile(r"/ui/tasks\?"), hold)
    make_task(stack, "race-a2", 3)  # `members`: the list asks for a refresh of the old filter (q=race-)
    wait_until_held("refresh")
    page.get_by_label("Name contains").fill("race-b")  # the user filters while that refresh is on its way
    wait_for(lambda: page.evaluate("window.__filtered"), timeout_s=10, message="the user's request")

    def release(kind: str) -> None:
        for k, route in list(held):
            if k == kind:
                held.remove((k, route))
                with contextlib.suppress(PlaywrightError):  # aborted by the page already
                    route.continue_()

    release("refresh")  # the old filter's answer comes first ...
    wait_for(lambda: page.evaluate("window.__refreshed") >= 1, timeout_s=10, message="the refresh answered")
    wait_until_held("filter")  # (sent with the refresh, or queued behind it)
    release("filter")  # ... then the user's
    page.unroute(re.compile(r"/ui/tasks\?"))
    release("refresh")
    wait_for(lambda: row_names(page) == ["race-b1"], timeout_s=10, message="the user's filter, not the old refresh")
    assert "q=race-b" in page.url and page.get_by_label("Name contains").input_value() == "race-b"


def make_darkroom(stack: Stack, name: str) -> None:
    spec = {"source": {"type": "S3", "bucket": "pics", "region": "eu-west-1"}, "subDomains": [name], "cacheTime": 2592000}
    body = {"apiVersion": f"{DR[0]}/{DR[1]}", "kind": "Darkroom", "metadata": {"name": name}, "spec": spec}
    stack.custom().create_namespaced_custom_object(*DR[:2], stack.namespace, DR[2], body)


def test_ages_are_written_only_when_their_text_changes(stack: Stack, page: Any) -> None:
    """Each age shows the right unit as time goes by and is written only when its text changes (an age in days stays
    put while one in seconds ticks); a row pushed later ticks too (its ages are scheduled as it is swapped in)."""
    make_darkroom(stack, "age-a")
    make_darkroom(stack, "age-b")
    page.goto(f"/?namespace={stack.namespace}&q=age-")
    page.locator("#live-indicator[data-state=live]").wait_for()
    rows = page.locator("#darkroom-list tbody tr")
    ready = page.locator("#darkroom-list tbody tr[data-state=Ready]")
    wait_for(lambda: ready.count() == 2, timeout_s=30, message="both rows Ready (the reconciler done with them)")
    # The first row's moment three days back (as if created then): the next tick shows days, then leaves it alone.
    page.evaluate("""() => {
      const [old, young] = document.querySelectorAll('#darkroom-list tbody tr');
      const days = old.querySelector('time[data-age]');
      days.setAttribute('datetime', new Date(Date.now() - 3 * 86400e3).toISOString());
      window.__writes = {days: 0, seconds: 0};
      const count = (key) => new MutationObserver((m) => { window.__writes[key] += m.length; });
      count('days').observe(days, {childList: true, characterData: true, subtree: true});
      count('seconds').observe(young.querySelector('time[data-age]'), {childList: true});
    }""")
    days = rows.first.locator("time[data-age]")
    wait_for(lambda: days.inner_text() == "3d", timeout_s=5, message="the old age shown in days")
    written = page.evaluate("window.__writes.days")
    wait_for(lambda: page.evaluate("window.__writes.seconds") >= 3, timeout_s=10, message="an age in seconds ticks every second")
    assert page.evaluate("window.__writes.days") == written  # seconds went by: the days were not rewritten

    page.evaluate("window.__young = document.querySelectorAll('#darkroom-list tbody tr')[1]")
    stack.custom().patch_namespaced_custom_object(*DR[:2], stack.namespace, DR[2], "age-b", {"spec": {"replicas": 2}})
    wait_for(lambda: page.evaluate("!window.__young.isConnected"), timeout_s=15, message="the row pushed again")
    pushed = page.locator("tr", has=page.get_by_role("link", name="age-b", exact=True)).locator("time[data-age]")
    before = pushed.inner_text()
    wait_for(lambda: pushed.inner_text() != before, timeout_s=5, message="the pushed row's age ticks")


def test_a_hidden_tab_keeps_no_age_timer_and_catches_up_when_shown(stack: Stack, page: Any) -> None:
    """While the tab is hidden no age is written (no timer runs); shown again, every age is brought up to date at once
    and ticks on. Playwright's pages are always visible, so the page's visibility is set in the page itself
    (``document.visibilityState`` and the ``visibilitychange`` event, all dashboard.js reads); bench/ui.py's
    hidden tabs (a real window's background tabs) exercise the same code without that stand-in."""
    make_darkroom(stack, "hidden-age")
    page.goto(f"/?namespace={stack.namespace}&q=hidden-age")
    page.locator("#live-indicator[data-state=live]").wait_for()
    ready = page.locator("#darkroom-list tbody tr[data-state=Ready]")
    wait_for(lambda: ready.count() == 1, timeout_s=30, message="the row Ready (the reconciler done with it)")
    page.evaluate("""() => {
      const age = document.querySelector('#darkroom-list tbody time[data-age]');
      window.__age = age;
      window.__writes = 0;
      new MutationObserver((m) => { window.__writes += m.length; }).observe(age, {childList: true, characterData: true, subtree: true});
      window.__visibility = 'visible';
      Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => window.__visibility});
      Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__visibility === 'hidden'});
    }""")
    wait_for(lambda: page.evaluate("window.__writes") >= 1, timeout_s=5, message="an age in seconds ticks while visible")
    page.evaluate("() => { window.__visibility = 'hidden'; document.dispatchEvent(new Event('visibilitychange')); }")
    hidden_at = page.evaluate("[window.__writes, window.__age.textContent]")
    page.wait_for_timeout(2_500)  # two and a half seconds: an age in seconds would have been written twice
    assert page.evaluate("[window.__writes, window.__age.textContent]") == hidden_at
    assert page.evaluate("window.__age.isConnected")  # (no row pushed meanwhile: the same element was watched)
    page.evaluate("() => { window.__visibility = 'visible'; document.dispatchEvent(new Event('visibilitychange')); }")
    shown = page.evaluate("[window.__writes, window.__age.textContent]")
    assert shown[0] == hidden_at[0] + 1 and shown[1] != hidden_at[1], (hidden_at, shown)  # caught up at once, in one write
    wait_for(lambda: page.evaluate("window.__writes") > shown[0], timeout_s=3, message="the age ticks on once shown")


def test_live_row_once_for_two_tabs_then_add_and_delete(stack: Stack, new_page: Callable[..., Watched]) -> None:
    make_task(stack, "live-task", 4)
    tabs = [new_page().page for _ in range(2)]
    requests: list[list[str]] = [[], []]
    for tab, seen in zip(tabs, requests, strict=True):
        tab.goto(f"/ui/tasks?namespace={stack.namespace}")
        tab.locator("#live-indicator[data-state=live]").wait_for()
        tab.get_by_role("link", name="live-task", exact=True).wait_for()
        tab.on("request", lambda request, seen=seen: seen.append(request.url))
    renders_before = sample(stack, "darkroom_dashboard_row_renders_total", {"view": "tasks"})
    changes_before = sample(stack, "darkroom_api_watch_events_total", {"kind": "Task", "type": "MODIFIED"})

    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "live-task", {"spec": {"priority": 8}})
    for tab in tabs:
        cell = tab.locator("tr", has=tab.get_by_role("link", name="live-task", exact=True)).locator("td.num")
        wait_for(lambda cell=cell: cell.inner_text().strip() == "8", timeout_s=10, message="the pushed row")  # type: ignore[misc]
    assert requests == [[], []]  # the row came with the event: no fetch per tab

    def renders_follow_changes() -> bool:
        renders = sample(stack, "darkroom_dashboard_row_renders_total", {"view": "tasks"}) - renders_before
        changes = sample(stack, "darkroom_api_watch_events_total", {"kind": "Task", "type": "MODIFIED"}) - changes_before
        return changes >= 1 and renders == changes

    wait_for(renders_follow_changes, timeout_s=10, message="one render per change, not one per tab")

    make_task(stack, "new-task", 6)
    for tab in tabs:
        tab.get_by_role("link", name="new-task", exact=True).wait_for(timeout=10_000)
    stack.custom().delete_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "live-task")
    for tab in tabs:
        tab.get_by_role("link", name="live-task", exact=True).wait_for(state="detached", timeout=30_000)
    assert not any("/row" in url for seen in requests for url in seen)


LOOKS = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.mark.pairwise_with_kinds(("size", "scheme"), [(size, scheme) for size in LOOKS for scheme in ("light", "dark")])
def test_list_screenshots(stack: Stack, new_page: Callable[..., Watched], size: str, scheme: str) -> None:
    # A namespace of its own (no reconciler there): the module's other tests count the rows of the stack's namespace,
    # and the looks of one kind run in any order among them.
    namespace = stack.new_namespace()
    for i, priority in enumerate((3, 7, 1)):
        make_task(stack, f"shot-{i}", priority, namespace=namespace)
    width, height = LOOKS[size]
    page = new_page(viewport={"width": width, "height": height}, color_scheme=scheme).page
    page.goto(f"/ui/tasks?namespace={namespace}&sort=-priority")
    page.locator("#live-indicator[data-state=live]").wait_for()
    page.get_by_role("button", name="Actions for shot-1").click()
    page.locator("[popover]:popover-open").wait_for()
    shot(page, f"list-tasks-sorted-{width}-{scheme}")
    assert_fits(page)  # the table scrolls in its box, not the page
    page.locator("[popover]:popover-open").get_by_role("button", name="Delete…").click()
    dialog = page.locator("dialog#row-delete-dialog")
    dialog.wait_for()
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    shot(page, f"list-tasks-delete-dialog-{width}-{scheme}")
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.goto(f"/?namespace={stack.namespace}")
    page.locator("#live-indicator[data-state=live]").wait_for()
    shot(page, f"list-darkrooms-{width}-{scheme}")
    assert_fits(page)


@pytest.mark.parametrize("control", ["sort header", "pager"])
def test_a_click_during_a_live_refresh_is_never_lost(stack: Stack, page: Any, control: str) -> None:
    """A sort header or the pager is inside the list a refresh replaces: clicked while a refresh is on its way, the
    person's request waits behind it (hx-sync), and is not dropped with the old list when the refresh answers
    (dashboard.js keeps the list in place for it)."""
    namespace = stack.new_namespace()  # no reconciler there: only the Task made below asks for a refresh
    for i in range(PAGE_SIZE + 1):
        make_task(stack, f"click-{i:02}", 1 if i == PAGE_SIZE else 5, namespace=namespace)  # the last name sorts first
    page.goto(f"/ui/tasks?namespace={namespace}")
    page.locator("#live-indicator[data-state=live]").wait_for()
    wait_for(lambda: len(row_names(page)) == PAGE_SIZE, timeout_s=10, message="a full page")
    held: list[Any] = []

    def hold(route: Any) -> None:
        if route.request.headers.get("x-dashboard-refresh") == "live":
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r"/ui/tasks\?"), hold)
    make_task(stack, "a-click-new", 9, namespace=namespace)  # on this page (by name): the list asks for a refresh, held here
    for _ in range(200):
        if held:
            break
        page.wait_for_timeout(50)  # lets Playwright deliver the route
    assert held, "no refresh on its way"
    if control == "sort header":
        page.locator("th", has=page.get_by_role("link", name=re.compile("^Priority"))).get_by_role("link").click()
        expected = re.compile(r"sort=priority")
    else:
        page.get_by_role("link", name=re.compile("Next")).click()
        expected = re.compile(r"page=2")
    for route in held:  # the refresh answers now, with the click waiting behind it
        route.continue_()
    page.unroute(re.compile(r"/ui/tasks\?"))
    page.wait_for_url(expected, timeout=10_000)
    if control == "sort header":
        wait_for(lambda: row_names(page)[:2] == [f"click-{PAGE_SIZE}", "click-00"], timeout_s=10, message="ascending priority")
    else:
        wait_for(lambda: row_names(page) == [f"click-{PAGE_SIZE - 1}", f"click-{PAGE_SIZE}"], timeout_s=10, message="page 2")
    assert expected.search(page.url)


# the focused control's name (its aria-label or text), "" when the focus fell back to the page
FOCUSED_CONTROL = (
    "((el) => el && el !== document.body ? el.getAttribute('aria-label') || el.textContent.trim() : '')(document.activeElement)"
)


@pytest.mark.parametrize("control", ["name link", "Mark finished", "menu button, after Escape"])
def test_a_pushed_row_gives_the_keyboard_focus_back_to_the_same_control(stack: Stack, page: Any, control: str) -> None:
    """A keyboard user on a row's control keeps the focus when a change replaces the row: htmx gives it back to the
    control of the same id in the new row. On the menu's button, the row waits while its menu is open; Escape closes
    the menu, focus goes back to the button, the waiting row comes in and the focus stays on its button."""
    name = f"focus-{control.split()[0].lower()}"
    make_task(stack, name, 2)
    make_task(stack, f"{name}-other", 1)
    page.goto(f"/ui/tasks?namespace={stack.namespace}&q={name}")
    page.locator("#live-indicator[data-state=live]").wait_for()
    row = page.locator("tr", has=page.get_by_role("link", name=name, exact=True))
    other = page.locator("tr", has=page.get_by_role("link", name=f"{name}-other", exact=True))
    if control == "name link":
        focused = row.get_by_role("link", name=name, exact=True)
    elif control == "Mark finished":
        focused = row.get_by_role("button", name=f"Mark finished {name}")
    else:
        focused = row.get_by_role("button", name=f"Actions for {name}")
    focused.focus()
    expected = page.evaluate(FOCUSED_CONTROL)
    assert name in expected, expected
    if control.startswith("menu"):
        page.keyboard.press("Enter")
        page.locator("[popover]:popover-open").wait_for()
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, name, {"spec": {"priority": 7}})
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, f"{name}-other", {"spec": {"priority": 6}})
    wait_for(lambda: other.locator("td.num").inner_text().strip() == "6", timeout_s=10, message="the rows are pushed")
    if control.startswith("menu"):
        assert row.locator("td.num").inner_text().strip() == "2"  # held while the menu is open
        page.keyboard.press("Escape")
    wait_for(lambda: row.locator("td.num").inner_text().strip() == "7", timeout_s=10, message="the focused row is pushed")
    in_new_row = "document.activeElement.isConnected && document.activeElement.closest('tr').querySelector('td.num').textContent.trim()"
    assert page.evaluate(FOCUSED_CONTROL) == expected
    assert page.evaluate(in_new_row) == "7"


LIVE_ROW_CONTROLS_WITHOUT_ID = """
[...document.querySelectorAll('[sse-swap]')].flatMap((row) => [...row.querySelectorAll(
    'a, button, input:not([type=hidden]), select, textarea, summary, [tabindex]')]
  .filter((control) => !control.closest('[popover]') && !control.id)
  .map((control) => row.getAttribute('sse-swap') + ': ' + control.outerHTML.slice(0, 120)))
"""


def test_every_control_of_a_live_row_has_an_id(stack: Stack, page: Any) -> None:
    """What the focus test above relies on, for every list's rows, whatever they hold: a Darkroom with its domains and a
    Warning badge, a Task with its Mark finished, a Postgresql; and a Task card of the combined view. Controls inside a
    row's menu are left out: no push replaces a row while its menu is open."""
    created = darkroom(stack, "ids-darkroom")
    record_event(stack, {"kind": "Darkroom", "apiVersion": "/".join(DR[:2]), "name": "ids-darkroom", "uid": created["metadata"]["uid"]},
                 "the origin answers 503", type="Warning")  # fmt: skip
    make_task(stack, "ids-task", 3)
    body = {"apiVersion": f"{PG[0]}/{PG[1]}", "kind": "Postgresql", "metadata": {"name": "ids-db"}, "spec": {"version": "16"}}
    stack.custom().create_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], body)
    page.goto(f"/?namespace={stack.namespace}&q=ids-darkroom")
    row = page.locator("tr", has=page.get_by_role("link", name="ids-darkroom", exact=True))
    wait_for(lambda: row.locator("a.domain").count() and row.locator(".warning-count").count(), timeout_s=LIVE_S / 1000,
             message="the Darkroom's row with its domain and its Warning badge")  # fmt: skip
    for path in ("/?q=ids-", "/ui/tasks?q=ids-", "/ui/postgresqls?q=ids-", "/ui/combinedtasks"):
        page.goto(f"{path}&namespace={stack.namespace}" if "?" in path else f"{path}?namespace={stack.namespace}")
        assert page.locator("[sse-swap]").count() >= 1, path
        assert page.evaluate(LIVE_ROW_CONTROLS_WITHOUT_ID) == [], path
