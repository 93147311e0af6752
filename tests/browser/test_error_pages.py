"""The dashboard's error page in a browser, on a laptop (1366x768) and a phone (390x844): an unknown URL is a page,
never raw JSON, whose "Back to the ..." button is on screen and leads to the list of the path's kind; trimmed URLs
(``/ui/darkrooms``, ``/ui/tasks/<namespace>``) open the lists. Screenshots go to test-output/screenshots/error-*.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Stack

SIZES = {"laptop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}


def _on_screen(page: object, selector: str, width: int, height: int) -> None:
    box = page.locator(selector).bounding_box()  # type: ignore[attr-defined]
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, box


@pytest.mark.parametrize("size", SIZES)
def test_an_unknown_url_is_a_page_with_the_way_back(stack: Stack, new_page: Callable[..., Watched], size: str) -> None:
    viewport = SIZES[size]
    watched = new_page(viewport=viewport)
    watched.expect("status of 404")  # chromium logs the error page's own status
    page = watched.page
    ns = stack.namespace
    for path, heading, back in (
        ("/ui/no-such-page", "Darkrooms", "/"),
        (f"/ui/tasks/{ns}/no-such-task/nothing", "Tasks", "/ui/tasks"),
        ("/darkrooms/a/b/c", "Darkrooms", "/"),  # under the JSON API's paths too: a browser asked
    ):
        answer = page.goto(path)
        assert answer is not None and answer.status == 404 and answer.headers["content-type"].startswith("text/html")
        assert page.get_by_role("heading", level=1).inner_text() == "Not Found"
        assert '"status"' not in page.locator("main").inner_text()  # no problem+json shown
        assert_fits(page)
        button = page.get_by_role("link", name=f"Back to the {heading}")
        _on_screen(page, ".error-back a", viewport["width"], viewport["height"])
        shot(page, f"error-{size}-{path.strip('/').replace('/', '-')[:40]}")
        button.click()
        page.wait_for_url(f"**{back}")
        assert page.get_by_role("heading", level=1).inner_text() == heading


@pytest.mark.parametrize("size", SIZES)
def test_trimmed_urls_open_the_lists(stack: Stack, new_page: Callable[..., Watched], size: str) -> None:
    page = new_page(viewport=SIZES[size]).page
    page.goto("/ui/darkrooms")
    assert page.url.endswith("/") and page.get_by_role("heading", level=1).inner_text() == "Darkrooms"
    page.goto(f"/ui/tasks/{stack.namespace}")
    assert page.url.endswith(f"/ui/tasks?namespace={stack.namespace}")
    assert page.get_by_role("heading", level=1).inner_text() == "Tasks"
    assert page.locator("#filter-namespace").input_value() == stack.namespace
