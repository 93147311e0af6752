"""Darkrooms in a real browser: create through the form (the row appears and turns Ready live, no
reload; a double click submits once), invalid input (inline errors, nothing created), edit (and a conflicting edit explained with
the current values), delete (gone), an S3 Darkroom (keys never rendered back), the detail page.
Every test also asserts a clean console: no CSP violations, no script errors (conftest ``page``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.browser.pages import Watched, shot
from tests.browser.stack import Stack
from tests.support import wait_for

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"
ACCESS_KEY = "AKIA-BROWSER-SENTINEL-7788"
SECRET_KEY = "browser-secret-sentinel-do-not-render-7788"


def darkroom_names(stack: Stack, namespace: str | None = None) -> list[str]:
    items = stack.custom().list_namespaced_custom_object(GROUP, VERSION, namespace or stack.namespace, PLURAL)["items"]
    return [item["metadata"]["name"] for item in items]


def fill_webfolder(page: Any, stack: Stack, name: str) -> None:
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Base URL", exact=True).fill("https://images.example.com/assets")
    page.get_by_label("Sub-domain 1", exact=True).fill(f"{name}-img")
    page.get_by_label("Version", exact=True).fill("0.1.0")


# Every state a badge of the page shows, in order of appearance (rows are swapped in live).
SEEN_STATES_SCRIPT = """
window.__seenStates = [];
const note = () => document.querySelectorAll("tbody .badge[data-state]").forEach((b) => {
  const last = window.__seenStates[window.__seenStates.length - 1];
  if (last !== b.dataset.state) window.__seenStates.push(b.dataset.state);
});
new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
"""


def row(page: Any, name: str) -> Any:
    return page.locator("tr", has=page.get_by_role("link", name=name, exact=True))


def test_create_through_the_form_row_appears_and_turns_ready_without_reload(stack: Stack, new_page: Callable[..., Watched]) -> None:
    watcher = new_page().page
    watcher.goto(f"/?namespace={stack.namespace}")
    watcher.wait_for_selector("#live-indicator[data-state=live]")
    watcher.evaluate("window.__notReloaded = true")
    watcher.evaluate(SEEN_STATES_SCRIPT)

    author = new_page().page
    fill_webfolder(author, stack, "gallery")
    shot(author, "darkroom-form")
    posts: list[str] = []
    author.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    author.get_by_role("button", name="Create Darkroom").dblclick()  # a double submit sends one request
    author.wait_for_url(re.compile(r"/\?namespace=.*created=gallery"))
    assert len(posts) == 1, posts
    assert "created" in author.locator(".notice").inner_text()

    created = row(watcher, "gallery")
    created.wait_for()
    wait_for(lambda: created.get_attribute("data-state") == "Ready", timeout_s=30, message="the row never turned Ready")
    # The state badge, not the Warning count beside it: on a busy control plane a healthy create may draw a passing
    # Warning about it or a child (a retried request, a pod not yet schedulable), which the row rightly counts.
    state = created.locator(".badge[data-state]")
    assert "Ready" in state.inner_text()
    assert "tone-good" in (state.get_attribute("class") or "")
    seen = watcher.evaluate("window.__seenStates")
    assert "Failed" not in seen, f"a healthy create showed as failed on its way to Ready: {seen}"
    assert "gallery-img." in created.locator(".domains").inner_text()
    assert watcher.evaluate("window.__notReloaded") is True
    shot(watcher, "darkrooms-list")


def test_invalid_input_shows_inline_errors_and_creates_nothing(stack: Stack, page: Any) -> None:
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    page.get_by_label("Name", exact=True).fill("Bad_Name")
    page.get_by_label("Base URL", exact=True).fill("ftp://example.com")
    page.get_by_label("Sub-domain 1", exact=True).fill("UPPER")
    page.get_by_role("button", name="Add sub-domain").click()
    page.get_by_label("Sub-domain 2", exact=True).fill("UPPER")
    page.get_by_label("Replicas", exact=True).fill("500")
    page.get_by_role("button", name="Create Darkroom").click()

    page.locator(".error-summary").wait_for()
    for field_id in ("f-name", "f-source-baseUrl", "f-subDomains-0", "f-replicas"):
        assert page.locator(f"#{field_id}").get_attribute("aria-invalid") == "true", field_id
        assert page.locator(f"#{field_id}-error").inner_text().strip()
    assert "http" in page.locator("#f-source-baseUrl-error").inner_text()
    assert page.get_by_label("Name", exact=True).input_value() == "Bad_Name"  # what was typed is kept
    shot(page, "darkroom-form-errors")
    assert darkroom_names(stack) == [] or "bad-name" not in darkroom_names(stack)
    assert all(not n.startswith("bad") for n in darkroom_names(stack))


def test_edit_and_conflicting_edit(stack: Stack, page: Any) -> None:
    fill_webfolder(page, stack, "editable")
    page.get_by_role("button", name="Create Darkroom").click()
    page.wait_for_url(re.compile("created=editable"))

    page.goto(stack.when_shown(f"/ui/darkrooms/{stack.namespace}/editable/edit"))
    page.get_by_label("Version", exact=True).fill("0.2.0")
    page.get_by_label("Replicas", exact=True).fill("2")
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(re.compile(r"/ui/darkrooms/.*/editable\?saved=1"))
    spec = page.locator("dl.spec").first.inner_text()
    assert "0.2.0" in spec and "2" in spec
    stored = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "editable")
    assert stored["spec"]["version"] == "0.2.0" and stored["spec"]["replicas"] == 2

    # Someone else changes it while the form is open: saving is refused and the current values explained.
    page.goto(stack.when_shown(f"/ui/darkrooms/{stack.namespace}/editable/edit"))
    stack.custom().patch_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "editable", {"spec": {"version": "9.9.9"}})
    page.get_by_label("Version", exact=True).fill("0.3.0")
    page.get_by_role("button", name="Save changes").click()
    conflict = page.locator(".conflict")
    conflict.wait_for()
    assert "9.9.9" in conflict.inner_text()
    assert page.get_by_label("Version", exact=True).input_value() == "0.3.0"
    shot(page, "darkroom-edit-conflict")
    current = stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "editable")
    assert current["spec"]["version"] == "9.9.9"
    page.get_by_role("button", name="Save changes").click()  # now deliberately over the current values
    page.wait_for_url(re.compile(r"saved=1"))
    wait_for(
        lambda: (
            stack.custom().get_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, "editable")["spec"]["version"] == "0.3.0"
        ),
        timeout_s=10,
    )


def test_detail_page_then_delete(stack: Stack, page: Any) -> None:
    fill_webfolder(page, stack, "doomed")
    page.get_by_role("button", name="Create Darkroom").click()
    page.wait_for_url(re.compile("created=doomed"))
    page.goto(stack.when_shown(f"/ui/darkrooms/{stack.namespace}/doomed"))
    live = page.locator("#darkroom-live")
    live.locator(".status-line[data-state=Ready]").wait_for(timeout=30_000)
    children = page.locator("#darkroom-children .tree").inner_text()
    assert "Deployment" in children and "of 1 ready" in children
    assert "doomed-img." in children  # the Ingress host
    shot(page, "darkroom-detail")

    page.get_by_text("Delete…").click()
    page.get_by_role("button", name="Yes, delete doomed").click()
    page.wait_for_url(re.compile(r"/\?namespace=.*(deleted|terminating)=doomed"))
    wait_for(lambda: "doomed" not in darkroom_names(stack), timeout_s=15)
    row(page, "doomed").wait_for(state="detached")


def test_s3_darkroom_keys_are_never_rendered(stack: Stack, page: Any) -> None:
    page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    assert page.get_by_label("Bucket", exact=True).is_hidden()
    page.get_by_role("radio", name=re.compile("^S3 bucket")).check()  # the CSS switch: S3 fields appear, the web folder's go
    assert page.get_by_label("Bucket", exact=True).is_visible() and page.get_by_label("Base URL", exact=True).is_hidden()
    page.get_by_label("Name", exact=True).fill("bucketed")
    page.get_by_label("Bucket", exact=True).fill("demo-images")
    page.get_by_label("Region", exact=True).fill("eu-west-1")
    page.get_by_label("Access key", exact=True).fill(ACCESS_KEY)
    page.get_by_label("Secret key", exact=True).fill(SECRET_KEY)
    page.get_by_label("Sub-domain 1", exact=True).fill(f"s3-{stack.namespace}")
    shot(page, "darkroom-form-s3")
    page.get_by_role("button", name="Create Darkroom").click()
    page.wait_for_url(re.compile("created=bucketed"))
    secret = stack.core().read_namespaced_secret("bucketed-s3-credentials", stack.namespace)
    assert set(secret.data) == {"accessKey", "secretKey"}

    for path in (
        "/?namespace=" + stack.namespace,
        f"/ui/darkrooms/{stack.namespace}/bucketed",
        f"/ui/darkrooms/{stack.namespace}/bucketed/edit",
    ):
        page.goto(path)
        html = page.content()
        assert ACCESS_KEY not in html and SECRET_KEY not in html, path
    assert "stored" in page.locator(".credentials").inner_text()  # the edit form says "set" and allows replacing
    assert page.get_by_label("Access key (replace)", exact=True).input_value() == ""
    page.get_by_label("Replicas", exact=True).fill("1")
    page.get_by_role("button", name="Save changes").click()  # keys left empty: kept
    page.wait_for_url(re.compile("saved=1"))
    assert "set" in page.locator("dl.spec").first.inner_text()
    assert stack.core().read_namespaced_secret("bucketed-s3-credentials", stack.namespace).data == secret.data


def test_scaled_to_zero_is_grey_not_failed(stack: Stack, page: Any) -> None:
    """A Darkroom scaled to zero on purpose says so in grey, in the list, on its page and in its conditions."""
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": "resting"},
        "spec": {"replicas": 0, "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": ["resting-img"]},
    }
    stack.custom().create_namespaced_custom_object(GROUP, VERSION, stack.namespace, PLURAL, body)
    page.goto(f"/?namespace={stack.namespace}")
    resting = row(page, "resting")
    wait_for(lambda: resting.get_attribute("data-state") == "ScaledToZero", timeout_s=30, message="the row never said Scaled to 0")
    badge = resting.locator(".badge[data-state]")
    assert badge.inner_text().strip() == "Scaled to 0"
    assert "tone-idle" in (badge.get_attribute("class") or "")
    page.goto(stack.when_shown(f"/ui/darkrooms/{stack.namespace}/resting"))
    live = page.locator("#darkroom-live")
    live.locator(".status-line[data-state=ScaledToZero]").wait_for(timeout=30_000)
    ready_row = live.locator("table").first.locator("tr", has=page.get_by_role("cell", name="Ready", exact=True))
    assert "tone-idle" in (ready_row.locator(".badge").get_attribute("class") or "")
    shot(page, "darkroom-scaled-to-zero")
