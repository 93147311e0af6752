"""Every page on a phone (390x844), light and dark: the lists, the details (and their YAML
view and delete dialog), the create and edit forms (also with errors), the API reference, the login
page and an error page, for Darkrooms, Tasks and Postgresqls. On each: no horizontal page overflow
(``scrollWidth <= 390``), the name and the state of every row (or of the object) inside the viewport
without scrolling sideways, the navigation's items on one row and every one of them in sight (none cut off
or scrolled away behind who is signed in), the header one line tall — two with who is signed in and the
logout on a row of their own. Screenshots of each go to test-output/screenshots/phone-*.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack
from tests.support import wait_for

PHONE = {"width": 390, "height": 844}
HEADER_MAX_PX = 56  # one line of navigation plus the header's padding
WHO_ROW_PX = 32  # who is signed in (and the logout), on a row of their own under the navigation
DARKROOM = ("deployments.example.com", "v1", "darkrooms")
TASK = ("example.example.com", "v1", "tasks")
PG = ("database.db.example.com", "v1", "postgresqls")
LONG_DARKROOM = "photos-of-the-summer-holiday-in-the-mountains"
LONG_TASK = "write-the-quarterly-report-for-the-board"
DATABASE = "analytics-warehouse"

# What a page shows as (name, state) pairs: list rows, combined Task cards, a detail page's heading and status.
NAMES_AND_STATES = """
() => {
  const rows = [...document.querySelectorAll("main tbody tr")].filter((tr) => tr.querySelector(".badge[data-state]"));
  const pairs = rows.map((tr) => [tr.querySelector("th[scope=row]"), tr.querySelector("td:has(> .badge[data-state])")]);
  document.querySelectorAll(".task-card h2").forEach((h) => pairs.push([h.querySelector("a"), h.querySelector(".badge")]));
  const status = document.querySelector(".status-line .badge, dl.spec .badge[data-state]");
  if (status) pairs.push([document.querySelector(".page-head h1"), status]);
  return pairs.map(([name, state]) => [name, state].map((el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {text: el.textContent.trim(), left: r.left, right: r.right};
  }));
}
"""


def body(kind: tuple[str, str, str], name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{kind[0]}/{kind[1]}", "kind": {"darkrooms": "Darkroom", "tasks": "Task"}.get(kind[2], "Postgresql"),
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


@pytest.fixture(scope="module")
def objects(stack: Stack) -> Stack:
    custom = stack.custom()
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://images.example.com/a/very/long/path/to/the/assets"},
            "subDomains": [f"summer-holiday-{stack.namespace}", f"mountain-pictures-{stack.namespace}"]}  # fmt: skip
    custom.create_namespaced_custom_object(*DARKROOM[:2], stack.namespace, DARKROOM[2], body(DARKROOM, LONG_DARKROOM, spec))
    details = "A long description of what is to be done, " * 6
    task = {"priority": 7, "deadline": "2031-03-31T17:00:00Z", "details": details}
    custom.create_namespaced_custom_object(*TASK[:2], stack.namespace, TASK[2], body(TASK, LONG_TASK, task))
    custom.create_namespaced_custom_object(*PG[:2], stack.namespace, PG[2], body(PG, DATABASE, {"parameters": {"max_connections": "200"}}))
    client = stack.app.test_client()
    for path in (f"/ui/darkrooms/{stack.namespace}/{LONG_DARKROOM}", f"/ui/tasks/{stack.namespace}/{LONG_TASK}",
                 f"/ui/postgresqls/{stack.namespace}/{DATABASE}"):  # fmt: skip
        wait_for(functools.partial(_shows, client, path), timeout_s=10, message=f"the dashboard never showed {path}")
    return stack


def check(page: Any, label: str) -> None:
    assert_fits(page, label)
    header = page.evaluate(
        "(() => { const h = document.querySelector('header.topbar').getBoundingClientRect();"
        " const tops = [...document.querySelectorAll('header nav li')].map((li) => Math.round(li.getBoundingClientRect().top));"
        " const nav = document.querySelector('header nav'); const box = nav ? nav.getBoundingClientRect() : null;"
        " const hidden = [...document.querySelectorAll('header nav a')].filter((a) => { const r = a.getBoundingClientRect();"
        "   return r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.right > window.innerWidth; }).map((a) => a.innerText);"
        " return {height: h.height, rows: new Set(tops).size, hidden: hidden, who: !!document.querySelector('header .who')}; })()"
    )
    tallest = HEADER_MAX_PX + (WHO_ROW_PX if header["who"] else 0)
    assert header["height"] <= tallest, f"{label}: the header is {header['height']}px tall"
    assert header["rows"] <= 1, f"{label}: the navigation takes {header['rows']} rows"
    assert header["hidden"] == [], f"{label}: navigation items out of sight: {header['hidden']}"
    for pair in page.evaluate(NAMES_AND_STATES):
        assert all(pair), f"{label}: a row without its name or state: {pair}"
        for cell in pair:
            assert cell["left"] >= 0 and cell["right"] <= PHONE["width"], f"{label}: {cell['text']!r} is outside the screen ({cell})"
    shot(page, f"phone-{label}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_fits_a_phone(objects: Stack, login_panel: str, new_page: Callable[..., Watched], scheme: str) -> None:
    watched = new_page(viewport=PHONE, color_scheme=scheme)
    page = watched.page
    ns = objects.namespace
    dr, task, pg = f"/ui/darkrooms/{ns}/{LONG_DARKROOM}", f"/ui/tasks/{ns}/{LONG_TASK}", f"/ui/postgresqls/{ns}/{DATABASE}"
    pages = {
        "darkrooms": "/",
        "darkrooms-filtered": f"/?namespace={ns}",
        "tasks": "/ui/tasks",
        "tasks-with-events": "/ui/combinedtasks",
        "postgresqls": "/ui/postgresqls",
        "darkroom-detail": dr,
        "darkroom-yaml": dr + "?view=yaml",
        "task-detail": task,
        "task-yaml": task + "#yaml",
        "postgresql-detail": pg,
        "postgresql-yaml": pg + "?view=yaml",
        "darkroom-new": f"/ui/darkrooms/new?namespace={ns}",
        "darkroom-edit": dr + "/edit",
        "task-new": "/ui/tasks/new",
        "task-edit": task + "/edit",
        "postgresql-new": "/ui/postgresqls/new",
        "postgresql-edit": pg + "/edit",
        "docs": "/docs",
        "not-found": f"/ui/darkrooms/{ns}/no-such-darkroom",
    }
    for label, path in pages.items():
        page.goto(path)
        if label in ("darkrooms", "darkroom-detail"):
            page.wait_for_selector("#live-indicator[data-state=live]")
        check(page, f"{label}-{scheme}")
        if label == "not-found":  # the error page's own 404, logged by chromium: expected here
            watched.problems[:] = [p for p in watched.problems if "status of 404" not in p]

    page.goto(dr)
    page.get_by_role("button", name="Delete…").click()
    dialog = page.get_by_role("dialog")
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    check(page, f"darkroom-delete-dialog-{scheme}")
    page.keyboard.press("Escape")

    page.goto("/ui/darkrooms/new")
    page.get_by_label("Name", exact=True).fill("Not_Valid")
    page.get_by_role("button", name="Create Darkroom").click()
    page.locator(".error-summary").wait_for()
    check(page, f"darkroom-form-errors-{scheme}")

    page.goto(login_panel + "/login")
    check(page, f"login-{scheme}")


def _shows(client: Any, path: str) -> bool:
    return bool(client.get(path).status_code == 200)


# Each domain link's lines: where the text wraps (the character before each break), whether it is cut, its box.
DOMAIN_LINES = """
() => [...document.querySelectorAll('main a[href^="http://"], main a[href^="https://"]')]
  .filter((a) => a.offsetParent !== null).map((a) => {
  const text = a.textContent, range = document.createRange(), breaks = [];
  let top = null, offset = 0;
  for (const node of [...a.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)) {
    for (let i = 0; i < node.length; i++, offset++) {
      range.setStart(node, i); range.setEnd(node, i + 1);
      const r = range.getClientRects()[0];
      if (!r || r.width === 0) continue;
      if (top !== null && r.top > top + 2) breaks.push(text[offset - 1]);
      top = r.top;
    }
  }
  const box = a.getBoundingClientRect();
  return {text, title: a.title, breaks, cut: a.scrollWidth > a.clientWidth, left: box.left, right: box.right};
})
"""
HUGE_LABEL = "photographsofthewholesummerholidayinthemountainsandlakes"  # one word: wider than a phone
# The text, other than white space, beside the domain links in the elements that hold them.
TEXT_BESIDE_DOMAINS = """
() => [...new Set([...document.querySelectorAll('a.domain')].map((a) => a.parentElement))]
  .map((holder) => [...holder.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent.trim()).join(''))
  .filter((text) => text)
"""


def test_domain_links_break_at_dots_and_hyphens_on_a_phone(objects: Stack, new_page: Callable[..., Watched]) -> None:
    ns = objects.namespace
    spec = {"source": {"type": "WebFolder", "baseUrl": "https://images.example.com/"}, "subDomains": [f"{HUGE_LABEL[:50]}{ns[-8:]}"]}
    objects.custom().create_namespaced_custom_object(*DARKROOM[:2], ns, DARKROOM[2], body(DARKROOM, "huge-label", spec))
    page = new_page(viewport=PHONE).page
    for path, name in ((f"/?namespace={ns}", None), (f"/ui/darkrooms/{ns}/{LONG_DARKROOM}", LONG_DARKROOM),
                       (f"/ui/darkrooms/{ns}/huge-label", "huge-label")):  # fmt: skip

        def links(path: str = path, name: str | None = name) -> list[dict[str, Any]] | None:
            page.goto(path)
            found: list[dict[str, Any]] = page.evaluate(DOMAIN_LINES)
            wanted = 3 if name is None else 2 if name == LONG_DARKROOM else 1  # the reconciler's status.domains
            return found if len([f for f in found if ns[-8:] in f["text"]]) >= wanted else None

        found = wait_for(links, timeout_s=30, interval_s=0.5, message=f"the domains on {path}")
        for link in found:
            assert all(char in ".-" for char in link["breaks"]), f"{path}: {link['text']!r} breaks mid-word after {link['breaks']}"
            assert link["title"] == link["text"], link
            assert link["left"] >= 0 and link["right"] <= PHONE["width"], f"{path}: {link['text']!r} is outside the screen ({link})"
        assert any(link["breaks"] for link in found), f"{path}: no domain needed to wrap: {found}"  # the test tests something
        # One domain per line, no separators: a link that wraps fills the line, and a comma after it sat alone on the next.
        between = page.evaluate(TEXT_BESIDE_DOMAINS)
        assert between == [], f"{path}: text beside the domain links: {between}"
        if name == "huge-label":  # a word longer than the line: cut, the whole name in the title
            assert any(link["cut"] and HUGE_LABEL[:50] in link["title"] for link in found), found
        shot(page, f"phone-domains-{name or 'list'}")
