"""Security in a real browser: XSS payloads from the cluster (condition messages, Task details, a
filter in the URL) render as text; requests without a valid CSRF token are refused (403); HTML
pages carry the CSP; in the login mode, a Kubernetes token pasted on the login page opens a session (Flask's
signed cookie: HttpOnly, SameSite=Strict, holding only a session id) in which the dashboard's forms and htmx
buttons carry flask-wtf's CSRF token, and logging out ends it; the dark theme (and a screenshot of it). No CSP
violation in any test.
"""

from __future__ import annotations

import re
from typing import Any

from backend.identity.cookies import SESSION_COOKIE
from tests.browser.pages import shot
from tests.browser.stack import Stack
from tests.support import wait_for

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>"\'><svg onload=alert(3)>'


def test_cluster_strings_render_as_text(stack: Stack, page: Any) -> None:
    other = stack.new_namespace()  # no reconciler here: the status we write stays
    custom = stack.custom()
    custom.create_namespaced_custom_object(
        "deployments.example.com", "v1", other, "darkrooms",
        {"apiVersion": "deployments.example.com/v1", "kind": "Darkroom", "metadata": {"name": "xss"},
         "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/" + "%3Cscript%3E"}, "subDomains": ["xss"]}},
    )  # fmt: skip
    custom.patch_namespaced_custom_object_status(
        "deployments.example.com", "v1", other, "darkrooms", "xss",
        {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Broken", "message": XSS,
                                    "lastTransitionTime": "2026-01-01T00:00:00Z"}], "domains": [XSS]}},
    )  # fmt: skip
    custom.create_namespaced_custom_object(
        "example.example.com", "v1", other, "tasks",
        {"apiVersion": "example.example.com/v1", "kind": "Task", "metadata": {"name": "xss-task"},
         "spec": {"priority": 1, "deadline": "2031-01-01T00:00:00Z", "details": XSS}},
    )  # fmt: skip

    def cached() -> bool:  # the pages read the API's informer cache: wait until it has seen all three writes
        darkroom, task = page.request.get(f"/darkrooms/{other}/xss"), page.request.get(f"/tasks/{other}/xss-task")
        return darkroom.ok and task.ok and XSS in darkroom.json()["status"]["domains"] and other in page.request.get("/namespaces").text()

    wait_for(cached, message="the API's cache to see the new Darkroom, its status, the Task and the namespace")
    for path in (f"/?namespace={other}", f"/ui/darkrooms/{other}/xss", f"/ui/tasks?namespace={other}", f"/ui/tasks/{other}/xss-task",
                 f"/ui/combinedtasks?namespace={other}", f"/?namespace={other}&q={XSS}"):  # fmt: skip
        page.goto(path)
        assert page.locator("img[src=x], svg[onload], main script").count() == 0, path
        assert XSS in page.locator("main").inner_text() or "<img" in page.locator("main").inner_text(), path
    page.goto(f"/ui/darkrooms/{other}/xss")
    assert XSS in page.locator("#darkroom-live table").first.inner_text()
    shot(page, "xss-detail")


def test_requests_without_csrf_token_are_refused(stack: Stack, page: Any) -> None:
    response = page.goto(f"/ui/darkrooms/new?namespace={stack.namespace}")
    assert response is not None
    csp = response.headers["content-security-policy"]
    for directive in ("default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"):
        assert directive in csp
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    form = {
        "name": "sneaky",
        "namespace": stack.namespace,
        "source_type": "WebFolder",
        "baseUrl": "https://e.example.com",
        "subDomains": "s",
    }
    request = page.context.request  # shares the page's cookies, like a cross-site form would
    assert request.post("/ui/darkrooms/new", form=form).status == 403
    assert request.post("/ui/darkrooms/new", form={**form, "csrf_token": "0" * 64}).status == 403
    assert request.post("/ui/darkrooms/new", form=form, headers={"X-CSRF-Token": "forged"}).status == 403
    assert request.post(f"/ui/tasks/{stack.namespace}/x/finish", headers={"HX-Request": "true"}).status == 403
    refused = request.post("/ui/darkrooms/new", form=form, headers={"Accept": "text/html"})
    assert refused.status == 403 and "CSRF" in refused.text()
    assert "sneaky" not in [d["metadata"]["name"] for d in stack.custom().list_namespaced_custom_object(
        "deployments.example.com", "v1", stack.namespace, "darkrooms")["items"]]  # fmt: skip
    # The token of the page works (the browser's cookie goes with it): a 422 for the incomplete form, not a 403.
    assert request.post("/ui/darkrooms/new", form={**form, "baseUrl": "nope", "csrf_token": token or ""}).status == 422
    # The JSON API without a cookie session needs no token (curl).
    plain = page.context.browser.new_context(base_url=stack.url)
    try:
        assert plain.request.post("/darkrooms", data={"name": "x"}, headers={"Content-Type": "application/json"}).status == 422
    finally:
        plain.close()


def test_dark_theme(stack: Stack, new_page: Any) -> None:
    page = new_page(color_scheme="dark").page
    page.goto(f"/?namespace={stack.namespace}")
    page.wait_for_selector("#live-indicator[data-state=live]")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 20, 24)"
    shot(page, "darkrooms-dark")
    page.keyboard.press("Tab")  # the skip link is the first stop and visibly focused
    assert page.evaluate("document.activeElement.className") == "skip"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"


def test_login_session_carries_csrf_protected_writes_until_logout(stack: Stack, page: Any, login_panel: str) -> None:
    guarded = login_panel
    page.goto(f"{guarded}/ui/tasks?namespace={stack.namespace}")
    page.wait_for_url(re.compile(r"/login\?next="))
    page.get_by_label("Token", exact=True).fill(stack.admin_token())
    page.get_by_role("button", name="Log in with the token").click()
    page.wait_for_url(re.compile(rf"/ui/tasks\?namespace={stack.namespace}$"))
    (cookie,) = [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] > 0

    page.goto(f"{guarded}/ui/tasks/new?namespace={stack.namespace}")  # a form post carrying the token field
    page.get_by_label("Name", exact=True).fill("after-login")
    page.get_by_label("Priority", exact=True).fill("3")
    page.get_by_label("Deadline (UTC)", exact=True).fill("2031-03-31T17:00")
    page.get_by_role("button", name="Create Task").click()
    page.wait_for_url(re.compile(r"created=after-login"))
    row = page.locator("tr", has=page.get_by_role("link", name="after-login", exact=True))
    row.get_by_role("button", name=re.compile("Mark finished")).click()  # htmx: the token in X-CSRF-Token
    wait_for(lambda: row.get_attribute("data-state") == "Finished", timeout_s=10, message="the htmx write never landed")
    shot(page, "logged-in-tasks")

    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/login\?logged_out=1$"))
    assert page.get_by_text("You are logged out.").is_visible()
    assert not [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
    page.goto(f"{guarded}/ui/tasks?namespace={stack.namespace}")
    page.wait_for_url(re.compile(r"/login\?next="))
