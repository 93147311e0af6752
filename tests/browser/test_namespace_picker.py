"""The namespace typeahead in a browser (more namespaces than ``namespace_choices_max``: here 2), at 1366 px light and
390 px dark, keyboard only: typing part of a name fills the filter's suggestions with the matching namespaces, Enter
filters the list to the typed one (in the URL); the create form's namespace suggests as the person types and a
Darkroom created with a typed namespace lands there. Screenshots: test-output/screenshots/namespace-picker-*.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from backend.app import create_app
from backend.settings import ApiSettings
from tests.browser.pages import Watched, assert_fits, shot
from tests.browser.stack import Served, Stack, serve

LOOKS = {"1366-light": ({"width": 1366, "height": 768}, "light"), "390-dark": ({"width": 390, "height": 844}, "dark")}


@pytest.fixture(scope="module")
def many_namespaces(stack: Stack) -> list[str]:
    family = f"b-pick-{uuid.uuid4().hex[:6]}"
    names = []
    for n in range(3):
        stack.core().create_namespace({"metadata": {"name": f"{family}-{n}"}})
        stack.extra_namespaces.append(f"{family}-{n}")
        names.append(f"{family}-{n}")
    return names


@pytest.fixture(scope="module")
def picker_panel(stack: Stack) -> Iterator[Served]:
    served = serve(create_app(ApiSettings(kubeconfig=stack.kube.kubeconfig, namespace_choices_max=2, sse_heartbeat_s=5.0)), "picker")
    yield served
    served.stop()


def suggested(page: Any, datalist: str) -> list[str]:
    return [str(v) for v in page.eval_on_selector_all(f"#{datalist} option", "options => options.map(o => o.value)")]


@pytest.mark.parametrize("look", LOOKS)
def test_typing_a_namespace_suggests_and_filters(
    stack: Stack, picker_panel: Served, many_namespaces: list[str], pages: Callable[..., Watched], look: str
) -> None:
    viewport, scheme = LOOKS[look]
    page = pages(picker_panel.url, viewport=viewport, color_scheme=scheme).page
    family = many_namespaces[0].rsplit("-", 1)[0]
    page.goto("/")
    picker = page.get_by_label("Namespace", exact=True)
    assert picker.evaluate("e => e.tagName") == "INPUT"
    picker.focus()
    page.keyboard.type(family[:-2], delay=20)
    page.wait_for_function(
        "([list, names]) => [...document.querySelectorAll('#' + list + ' option')].map(o => o.value).join() === names.join()",
        arg=["filter-namespace-options", many_namespaces],
    )
    assert suggested(page, "filter-namespace-options") == many_namespaces  # only the matching ones, asked as typed
    page.keyboard.type(family[-2:] + "-1", delay=20)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**namespace={many_namespaces[1]}**")
    assert page.get_by_text(f"in {many_namespaces[1]}").first.is_visible() or page.locator("#darkroom-list").is_visible()
    assert_fits(page)
    shot(page, f"namespace-picker-list-{look}")

    page.goto("/ui/darkrooms/new")
    field = page.locator("#f-namespace")
    field.fill("")
    field.focus()
    page.keyboard.type(family[:-2], delay=20)
    page.wait_for_function(
        "([list, names]) => [...document.querySelectorAll('#' + list + ' option')].map(o => o.value).join() === names.join()",
        arg=["f-namespace-options", many_namespaces],
    )
    page.keyboard.type(family[-2:] + "-2", delay=20)
    name = f"typed-{look.split('-')[0]}"
    page.locator("#f-name").fill(name)
    page.get_by_label("Base URL").fill("https://example.com/")
    page.locator("[name='subDomains']").first.fill(f"{name}-{uuid.uuid4().hex[:6]}")
    shot(page, f"namespace-picker-form-{look}", full_page=False)
    page.get_by_role("button", name="Create Darkroom").click()
    page.wait_for_url(f"**in={many_namespaces[2]}&created={name}")  # back to the list as it was shown, saying where
    stored = stack.custom().get_namespaced_custom_object("deployments.example.com", "v1", many_namespaces[2], "darkrooms", name)
    assert stored["metadata"]["namespace"] == many_namespaces[2]
