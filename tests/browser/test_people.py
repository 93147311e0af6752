"""People in a real browser: logging in and out, and a dashboard that shows each person what they may do (the real
control plane trusting a real identity provider, ORY Hydra: tests/identityfixtures.py; no reconciler).

Behaviours: a person signs in through the provider's own login form and is named in the header; logging out lands
on the login page and ends the provider's session too (signing in again asks for the password); a ServiceAccount
token pasted on the login page signs its account in; once a session has ended, an htmx action goes to the login page
(``HX-Redirect``) and a page load is a 303 to ``/login?next=``. bob (views team-a, edits team-b) sees the actions he
may not take disabled with the reason — row menus, Mark finished, New, Edit, Delete…, Scale, Show password, the
create form's namespaces —, also in a row pushed live to his list, and those he may take enabled; carol (no rights)
sees empty lists that say why, not errors. A page the cluster refuses is an HTML page naming what was refused and
offering the way back; an htmx request it refuses says so in the flash; the JSON API keeps problem+json. The login
page, bob's list and a refused action at 1366 and 390 px, light and dark: nothing wider than the screen, no console
error, no CSP violation (screenshots: people-*.png, pages.shot).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from backend.identity.cookies import SESSION_COOKIE
from tests.browser.pages import Watched, assert_fits, shot
from tests.identityfixtures import TEAM_A, TEAM_B, Panel, Teams
from tests.support import wait_for

WIDE, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}
LAYOUTS = [(scheme, size) for scheme in ("light", "dark") for size in (WIDE, PHONE)]
NAVIGATION_STATUS = re.compile(r"Failed to load resource: the server responded with a status of (401|403)\b")


@dataclass
class Objects:
    """What the module's tests look at, made by the cluster's administrator in team-a and team-b."""

    suffix: str

    def darkroom(self, namespace: str) -> str:
        return f"dr-{namespace}-{self.suffix}"

    def task(self, namespace: str) -> str:
        return f"task-{namespace}-{self.suffix}"

    def database(self, namespace: str) -> str:
        return f"pg-{namespace}-{self.suffix}"


def _manifests(objects: Objects) -> str:
    documents = []
    for namespace in (TEAM_A, TEAM_B):
        darkroom, task, database = objects.darkroom(namespace), objects.task(namespace), objects.database(namespace)
        documents += [
            f"apiVersion: deployments.example.com/v1\nkind: Darkroom\nmetadata: {{name: {darkroom}, namespace: {namespace}}}\n"
            f"spec: {{source: {{type: WebFolder, baseUrl: 'https://images.example.com/{namespace}'}}, subDomains: [{darkroom}]}}\n",
            f"apiVersion: example.example.com/v1\nkind: Task\nmetadata: {{name: {task}, namespace: {namespace}}}\n"
            f"spec: {{priority: 3, deadline: '2031-03-31T17:00:00Z', details: 'for {namespace}'}}\n",
            f"apiVersion: database.db.example.com/v1\nkind: Postgresql\nmetadata: {{name: {database}, namespace: {namespace}}}\n"
            "spec: {parameters: {max_connections: '100'}}\n",
        ]
    return "---\n".join(documents)


@pytest.fixture(scope="module")
def objects(teams: Teams, panel: Panel) -> Objects:
    made = Objects(suffix=uuid.uuid4().hex[:5])
    teams.kubectl("apply", "-f", "-", input_text=_manifests(made))
    bob = {"Authorization": f"Bearer {panel.id_token('bob')}"}

    def listed() -> bool:  # the panel's informers have them all (bob may list both namespaces)
        for plural, name in (("darkrooms", made.darkroom), ("tasks", made.task), ("postgresqls", made.database)):
            answer = requests.get(f"{panel.url}/{plural}", headers=bob, timeout=10)
            if answer.status_code != 200 or {name(TEAM_A), name(TEAM_B)} - {i["name"] for i in answer.json()["items"]}:
                return False
        return True

    wait_for(listed, timeout_s=30, message="the panel to list the module's objects")
    return made


@pytest.fixture
def browse(pages: Callable[..., Watched], panel: Panel) -> Callable[..., Watched]:
    """A fresh browser on the panel (it trusts the provider's test CA: its certificate is the test's own). The provider's
    login pages (test infrastructure) have no favicon: chromium's 404 for it is no problem of ours."""
    login_app = re.escape(f"{panel.provider.login_app.url if panel.provider.login_app else ''}/favicon.ico")

    def make(**options: Any) -> Watched:
        watched = pages(panel.url, ignore_https_errors=True, **options)
        watched.expect(rf"status of 404 .*\[at {login_app}\]")
        return watched

    return make


def sign_in(page: Any, panel: Panel, person: str, path: str = "/") -> None:
    """``person`` signs in through the provider's login form, starting at ``path`` (the panel sends them back there)."""
    user = panel.provider.users[person]
    page.goto(path)
    page.wait_for_url(re.compile(r"/login\?next="))
    page.get_by_role("link", name="Sign in with your identity provider").click()
    page.get_by_label("Username").fill(user.username)  # the provider's own form
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{panel.url}{path}")


def screen(page: Any, name: str) -> None:
    shot(page, f"people-{name}")


def refused(control: Any) -> str:
    """The reason of a refused control (it must be one: aria-disabled, nothing to follow or submit)."""
    assert control.get_attribute("aria-disabled") == "true", control
    assert control.get_attribute("href") is None and control.get_attribute("type") in (None, "button"), control
    reason = control.get_attribute("title")
    assert reason and control.get_attribute("data-why") == reason
    return str(reason)


def allowed(control: Any) -> None:
    assert control.get_attribute("aria-disabled") is None and control.get_attribute("title") is None, control


def row(page: Any, name: str) -> Any:
    return page.locator("tr", has=page.get_by_role("link", name=name, exact=True))


# -- logging in and out ----------------------------------------------------------------------------------------------


def test_oidc_login_and_logout_through_the_provider(panel: Panel, objects: Objects, browse: Callable[..., Watched]) -> None:
    page = browse().page
    sign_in(page, panel, "bob", f"/?namespace={TEAM_B}")
    assert page.locator(".who-name").inner_text() == "oidc:bob"
    assert row(page, objects.darkroom(TEAM_B)).count() == 1
    (cookie,) = [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    page.get_by_role("button", name="Log out").click()  # through the provider's logout, back to the login page
    page.wait_for_url(re.compile(r"/login\?logged_out=1"))
    assert page.get_by_text("You are logged out.").is_visible()
    assert page.context.request.get(f"{panel.url}/darkrooms", headers={"Accept": "application/json"}).status == 401
    page.get_by_role("link", name="Sign in with your identity provider").click()
    page.get_by_label("Password").wait_for()  # the provider asks again: its session ended too


def test_token_login_with_a_service_account_token(panel: Panel, teams: Teams, objects: Objects, browse: Callable[..., Watched]) -> None:
    page = browse().page
    page.goto(f"/?namespace={TEAM_A}")
    page.get_by_label("Token", exact=True).fill(teams.sa_token())
    page.get_by_role("button", name="Log in with the token").click()
    page.wait_for_url(f"{panel.url}/?namespace={TEAM_A}")
    assert page.locator(".who-name").inner_text() == f"system:serviceaccount:{TEAM_A}:deployer"
    deployer_row = row(page, objects.darkroom(TEAM_A))
    allowed(deployer_row.get_by_role("button", name="Delete…", include_hidden=True))  # edit in team-a
    assert "token" not in page.url


@pytest.fixture(scope="module")
def short_panel(panel_factory: Callable[..., Panel]) -> Panel:
    """A panel whose sessions end 8 s after login."""
    return panel_factory("passthrough", session_lifetime_s=8, review_cache_ttl_s=1.0)


def test_an_expired_session_sends_htmx_actions_to_the_login(
    short_panel: Panel, teams: Teams, objects: Objects, pages: Callable[..., Watched]
) -> None:
    watched = pages(short_panel.url)
    page = watched.page
    start = f"/ui/tasks?namespace={TEAM_A}"
    page.goto(start)
    page.get_by_label("Token", exact=True).fill(teams.sa_token())
    page.get_by_role("button", name="Log in with the token").click()
    page.wait_for_url(short_panel.url + start)
    task = row(page, objects.task(TEAM_A))
    finish = task.get_by_role("button", name=re.compile("Mark finished"))
    allowed(finish)
    api = page.context.request
    wait_for(lambda: api.get("/tasks", headers={"Accept": "application/json"}).status == 401, timeout_s=30, message="the session to end")

    finish.click()  # htmx: 401 with HX-Redirect
    page.wait_for_url(re.compile(r"/login\?next=%2Fui%2Ftasks%3Fnamespace%3Dteam-a$"))
    assert page.get_by_label("Token", exact=True).is_visible()
    loaded = api.get(start, headers={"Accept": "text/html"}, max_redirects=0)
    assert loaded.status == 303 and loaded.headers["location"] == "/login?next=%2Fui%2Ftasks%3Fnamespace%3Dteam-a"
    # The refused XHR and the live list's stream, once its session had ended, are logged by chromium: expected here.
    watched.expect(NAVIGATION_STATUS.pattern)
    watched.expect(r"console: \[object Event\]")  # htmx-ext-sse logs its stream's error event


# -- what bob may do ----------------------------------------------------------------------------------------------


def test_bob_sees_what_he_may_not_do_and_why(panel: Panel, objects: Objects, browse: Callable[..., Watched]) -> None:
    page = browse().page
    sign_in(page, panel, "bob")
    a_row, b_row = row(page, objects.darkroom(TEAM_A)), row(page, objects.darkroom(TEAM_B))
    assert refused(a_row.get_by_role("link", name="Edit", include_hidden=True)) == f'You may not update darkrooms in namespace "{TEAM_A}".'
    assert refused(a_row.get_by_role("button", name="Delete…", include_hidden=True)) == (
        f'You may not delete darkrooms in namespace "{TEAM_A}".'
    )
    allowed(b_row.get_by_role("link", name="Edit", include_hidden=True))
    allowed(b_row.get_by_role("button", name="Delete…", include_hidden=True))
    allowed(page.locator("#new-button"))  # he may create in team-b
    a_row.get_by_role("button", name=re.compile("Actions for")).click()  # the menu says why
    assert "You may not delete darkrooms" in a_row.locator(".row-menu").evaluate(
        "menu => getComputedStyle(menu.querySelector('[data-needs=delete]'), '::after').content"
    )
    page.keyboard.press("Escape")

    page.goto(f"/?namespace={TEAM_A}")
    assert refused(page.locator("#new-button")) == f'You may not create darkrooms in namespace "{TEAM_A}".'
    assert page.locator("ul.why").inner_text() == f'You may not create darkrooms in namespace "{TEAM_A}".'

    page.goto(f"/ui/darkrooms/{TEAM_A}/{objects.darkroom(TEAM_A)}")
    actions = page.locator("#detail-actions")
    name = objects.darkroom(TEAM_A)
    edit = refused(actions.get_by_role("link", name="Edit", exact=True))
    assert edit == f'You may not update darkrooms "{name}" in namespace "{TEAM_A}".'
    assert refused(actions.get_by_role("button", name="Delete…")) == f'You may not delete darkrooms "{name}" in namespace "{TEAM_A}".'
    assert page.locator("ul.why li").all_inner_texts() == [
        f'You may not update darkrooms "{name}" in namespace "{TEAM_A}".',
        f'You may not delete darkrooms "{name}" in namespace "{TEAM_A}".',
    ]
    actions.get_by_role("button", name="Delete…").click(force=True)
    assert page.locator("dialog[open]").count() == 0  # a refused Delete… opens nothing
    assert refused(page.get_by_role("button", name="Scale")) == f'You may not update darkrooms "{name}" in namespace "{TEAM_A}".'
    assert page.locator("#scale-why").is_visible()

    page.goto(f"/ui/darkrooms/{TEAM_B}/{objects.darkroom(TEAM_B)}")
    allowed(page.locator("#detail-actions").get_by_role("link", name="Edit", exact=True))
    allowed(page.get_by_role("button", name="Scale"))
    assert page.locator("ul.why").count() == 0


def test_bob_may_finish_tasks_and_read_passwords_only_in_team_b(panel: Panel, objects: Objects, browse: Callable[..., Watched]) -> None:
    page = browse().page
    sign_in(page, panel, "bob", "/ui/tasks")
    finish_a = row(page, objects.task(TEAM_A)).get_by_role("button", name=re.compile("Mark finished"))
    assert refused(finish_a) == f'You may not update tasks in namespace "{TEAM_A}".'
    finish_a.click(force=True)  # nothing happens: no request, the row stays
    allowed(row(page, objects.task(TEAM_B)).get_by_role("button", name=re.compile("Mark finished")))

    page.goto(f"/ui/postgresqls/{TEAM_A}/{objects.database(TEAM_A)}")
    secret = f"{objects.database(TEAM_A)}-credentials"
    reason = f'You may not get secrets "{secret}" in namespace "{TEAM_A}".'
    assert refused(page.get_by_role("button", name="Show password")) == reason
    assert page.locator("#pg-password-why").inner_text().startswith(reason)
    page.goto(f"/ui/postgresqls/{TEAM_B}/{objects.database(TEAM_B)}")
    allowed(page.get_by_role("button", name="Show password"))

    page.goto("/ui/darkrooms/new")  # the create form offers team-a disabled, with why; team-b chosen
    option = page.locator("#f-namespace option", has_text=TEAM_A)
    assert option.get_attribute("disabled") is not None
    assert option.get_attribute("title") == f'You may not create darkrooms in namespace "{TEAM_A}".'
    assert page.locator("#f-namespace").input_value() == TEAM_B
    allowed(page.get_by_role("button", name="Create Darkroom"))
    page.goto(f"/ui/darkrooms/{TEAM_A}/{objects.darkroom(TEAM_A)}/edit")  # by its URL: the form says saving would be refused
    assert refused(page.get_by_role("button", name="Save changes")).startswith("You may not update darkrooms")
    assert page.locator(".why-banner").is_visible()


def test_a_pushed_row_gets_bobs_answers(panel: Panel, teams: Teams, objects: Objects, browse: Callable[..., Watched]) -> None:
    page = browse().page
    sign_in(page, panel, "bob")
    page.wait_for_selector("#live-indicator[data-state=live]")
    name = objects.darkroom(TEAM_A)
    version = f"v-{uuid.uuid4().hex[:6]}"
    teams.kubectl("patch", "darkroom", name, "-n", TEAM_A, "--type=merge", "-p", f'{{"spec": {{"version": "{version}"}}}}')
    pushed = row(page, name)
    wait_for(lambda: version in pushed.inner_text(), timeout_s=15, message="the changed row to be pushed")  # rendered for everyone
    delete = pushed.get_by_role("button", name="Delete…", include_hidden=True)
    edit = pushed.get_by_role("link", name="Edit", include_hidden=True)
    assert refused(delete) == f'You may not delete darkrooms in namespace "{TEAM_A}".'
    assert refused(edit) == f'You may not update darkrooms in namespace "{TEAM_A}".'


# -- carol, and refusals ----------------------------------------------------------------------------------------------


def test_carol_sees_empty_lists_that_say_why(panel: Panel, objects: Objects, browse: Callable[..., Watched]) -> None:
    watched = browse()
    page = watched.page
    sign_in(page, panel, "carol")
    for path, plural in (("/", "darkrooms"), ("/ui/tasks", "tasks"), ("/ui/postgresqls", "postgresqls"), ("/ui/combinedtasks", "tasks")):
        page.goto(path)
        empty = page.locator("#nothing-visible")
        assert f"You may not list {plural} in any namespace." in empty.inner_text(), path
        assert "oidc:carol" in empty.inner_text()
        assert refused(page.locator("#new-button")) == f"You may not create {plural} in any namespace."
        assert page.locator(".empty a.button").count() == 0  # no "create your first"
        if path == "/":
            screen(page, "carol-darkrooms-1366-light")

    answer = page.goto(f"/?namespace={TEAM_A}")  # a page the cluster refuses her: an HTML page, and the way back
    assert answer is not None and answer.status == 403 and answer.headers["content-type"].startswith("text/html")
    assert page.get_by_role("heading", name="Not allowed").is_visible()
    assert page.locator("[data-detail]").inner_text() == f'You may not list darkrooms in namespace "{TEAM_A}".'
    assert "signed in as oidc:carol" in page.locator(".error-page").inner_text()
    screen(page, "refused-page-1366-light")
    page.get_by_role("link", name="Back to the Darkrooms").click()
    page.wait_for_url(f"{panel.url}/")
    answer = page.goto(f"/ui/darkrooms/{TEAM_B}/{objects.darkroom(TEAM_B)}")
    assert answer is not None and answer.status == 403
    assert page.locator("[data-detail]").inner_text() == f'You may not get darkrooms "{objects.darkroom(TEAM_B)}" in namespace "{TEAM_B}".'
    problem = page.context.request.get(f"/darkrooms?namespace={TEAM_A}", headers={"Accept": "application/json"})
    assert problem.status == 403 and problem.headers["content-type"] == "application/problem+json"
    assert (problem.json()["verb"], problem.json()["namespace"]) == ("list", TEAM_A)
    watched.expect(NAVIGATION_STATUS.pattern)


def test_an_htmx_action_the_cluster_refuses_is_explained_in_the_flash(
    panel: Panel, objects: Objects, browse: Callable[..., Watched]
) -> None:
    watched = browse()
    page = watched.page
    name = objects.darkroom(TEAM_A)
    sign_in(page, panel, "bob", f"/ui/darkrooms/{TEAM_A}/{name}")
    # A page older than bob's rights would still offer Delete: the cluster refuses it, and the flash says what and why.
    page.evaluate("path => htmx.ajax('POST', path, {source: '#detail-actions', swap: 'none'})", f"/ui/darkrooms/{TEAM_A}/{name}/delete")
    watched.expect(NAVIGATION_STATUS.pattern)
    watched.expect(r"Response Status Error Code 403 from /ui/darkrooms/")  # htmx logs the refusal it hands to the flash
    flash = page.locator("#flash")
    flash.wait_for()
    assert flash.locator(".flash-text").inner_text() == f'You may not delete darkrooms "{name}" in namespace "{TEAM_A}".'
    screen(page, "refused-flash-1366-light")


# -- light and dark, wide and narrow ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("scheme", "size"), LAYOUTS, ids=[f"{s}-{z['width']}" for s, z in LAYOUTS])
def test_login_list_and_refusals_fit_every_screen(
    panel: Panel, objects: Objects, browse: Callable[..., Watched], scheme: str, size: dict[str, int]
) -> None:
    page = browse(viewport=size, color_scheme=scheme).page
    label = f"{size['width']}-{scheme}"
    page.goto("/login")
    assert_fits(page, f"login {label}")
    screen(page, f"login-{label}")
    sign_in(page, panel, "bob")
    page.wait_for_selector("#live-indicator[data-state=live]")
    assert_fits(page, f"bob's Darkrooms {label}")
    header = page.locator("header.topbar").bounding_box()
    # on a phone, who is signed in takes a row of their own under the navigation (test_phone: every item in sight)
    assert header is not None and header["height"] <= (88 if size is PHONE else 80), f"{label}: header {header}"
    assert page.locator(".who-name").is_visible() and page.get_by_role("button", name="Log out").is_visible()
    screen(page, f"bob-darkrooms-{label}")
    row(page, objects.darkroom(TEAM_A)).get_by_role("button", name=re.compile("Actions for")).click()
    menu = page.locator(".row-menu:popover-open")
    box = menu.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size["width"], f"{label}: menu {box}"
    screen(page, f"bob-row-menu-refused-{label}")
    page.keyboard.press("Escape")
    page.goto(f"/ui/darkrooms/{TEAM_A}/{objects.darkroom(TEAM_A)}")
    assert_fits(page, f"a refused action {label}")
    screen(page, f"bob-detail-refused-{label}")
