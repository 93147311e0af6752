"""The dashboard's Darkrooms list in a browser at a given count: first page, next page, a name filter, sorts.

Used by ``bench/scale.py --browser`` after its reads, against the product it started (chromium, /usr/bin/chromium,
through Playwright, 1366 px). Each step is what a person does — open ``/``, follow "Next →", search a name in "Name
contains" (as Enter does: the field's 300 ms typing pause is not counted), activate the State header twice — and is
checked: 50 rows (one for the name filter: the Darkroom searched), a second page that differs from the first, sorted
pages whose rows are those of ``GET /darkrooms?sort=state|-state&limit=50``. Its time is the page's own
(``performance.now()``): from the click or search to the list's ``htmx:afterSettle`` (the first page: navigation
start to DOMContentLoaded); its bytes are what the page received for it (``requestfinished`` response body sizes: the
document or the htmx fragment, the static files of the first load). "Without loading everything": the largest
response of the whole walk is reported beside the count, and a step that received more than :data:`MAX_STEP_BYTES`
fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
MAX_STEP_BYTES = 1 << 20  # a step that transfers more than this has loaded far more than a page of rows
ROWS = "#darkroom-list tbody tr[sse-swap]"
TIMEOUT_MS = 60_000
QUIET_S = 0.3  # no response finished for this long: the step's responses are all in


@dataclass(frozen=True)
class Step:
    label: str
    ms: float
    received: int  # response body bytes the page received for this step
    rows: int
    problem: str  # "" when the step's check passed

    @property
    def ok(self) -> bool:
        return not self.problem and self.received <= MAX_STEP_BYTES


def _names(page: Any) -> list[str]:
    keys = page.locator(ROWS).evaluate_all("rows => rows.map(r => r.getAttribute('sse-swap'))")
    return [str(key).removeprefix("Darkroom/") for key in keys]


def _api_page(base: str, page: Any, sort: str) -> list[str]:
    answer = page.request.get(f"{base}/darkrooms?sort={sort}&limit=50")
    return [f"{i['namespace']}/{i['name']}" for i in orjson.loads(answer.body())["items"]]


# In the page: run an action (a click, a search), resolve with the milliseconds until the list it swaps has settled
# (htmx:afterSettle of #darkroom-list), on the page's own clock — not Playwright's round trips, which a loaded
# machine stretches to hundreds of ms.
TIMED = """([selector, value]) => new Promise((resolve) => {
  const started = performance.now();
  document.body.addEventListener('htmx:afterSettle', function settled(event) {
    if (event.target.id !== 'darkroom-list') return;
    document.body.removeEventListener('htmx:afterSettle', settled);
    resolve(performance.now() - started);
  });
  const element = document.querySelector(selector);
  if (value === null) { element.click(); return; }
  element.value = value;
  element.dispatchEvent(new Event('search', {bubbles: true}));
})"""
LOADED = "() => { const n = performance.getEntriesByType('navigation')[0]; return n.domContentLoadedEventEnd - n.startTime; }"


def browse(port: int, unique_name: str) -> tuple[list[Step], int]:
    """The steps' results and the largest single response of the walk (bytes); ``unique_name`` names one Darkroom."""
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{port}"
    received: list[tuple[str, int]] = []
    steps: list[Step] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("requestfinished", lambda request: received.append((request.url, request.sizes()["responseBodySize"])))

            def step(label: str, act: Callable[[], float], check: Callable[[list[str]], str]) -> None:
                """``act`` (its in-page milliseconds), then until ``check`` of the rows finds nothing wrong (or time runs
                out) and no response has finished for :data:`QUIET_S`: the step's bytes."""
                before = len(received)
                elapsed = act()
                problem = "not checked"
                deadline = time.monotonic() + TIMEOUT_MS / 1000
                while time.monotonic() < deadline:
                    problem = check(_names(page))
                    if not problem:
                        break
                    page.wait_for_timeout(10)
                quiet_until, seen = time.monotonic() + QUIET_S, len(received)
                while time.monotonic() < quiet_until or len(received) != seen:
                    if len(received) != seen:
                        seen, quiet_until = len(received), time.monotonic() + QUIET_S
                    page.wait_for_timeout(20)
                steps.append(Step(label, elapsed, sum(size for _, size in received[before:]), page.locator(ROWS).count(), problem))

            def timed(selector: str, value: str | None = None) -> Callable[[], float]:
                return lambda: float(page.evaluate(TIMED, [selector, value]))

            def sorted_as(wanted: list[str], sort: str) -> Callable[[list[str]], str]:
                return lambda n: "" if n == wanted and f"sort={sort}" in page.url else "not the API's page in that order"

            def opened() -> float:
                page.goto(base + "/")
                return float(page.evaluate(LOADED))

            step("first page (`/`)", opened, lambda n: "" if len(n) == 50 else f"{len(n)} rows")
            first = _names(page)
            step(
                "next page (Next →)",
                timed("#darkroom-list a[rel=next]"),
                lambda n: "" if len(n) == 50 and n != first and "page=2" in page.url else f"{len(n)} rows at {page.url}",
            )
            step(
                "name filter (Name contains)",
                timed("#filter-q", unique_name),
                lambda n: "" if [x.rsplit("/", 1)[1] for x in n] == [unique_name] else f"rows {n[:3]}…",
            )
            page.goto(base + "/")
            page.locator(ROWS).first.wait_for()
            for sort, label in (("state", "sorted by State"), ("-state", "sorted by State, descending")):
                step(f"{label} (the header)", timed("#darkroom-list th.state a"), sorted_as(_api_page(base, page, sort), sort))
        finally:
            browser.close()
    return steps, max((size for _, size in received), default=0)
