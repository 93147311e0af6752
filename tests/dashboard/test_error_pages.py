"""Browsers never get raw JSON: a request no view took is the dashboard's error page for a browser, problem+json for
any other client; URLs a person trims or types go to a list.

Behaviours: an unknown URL (under ``/ui`` or anywhere, the JSON API's paths included) asked for by a browser (``Accept:
text/html``) is a 404 HTML page with the way back to the list of the path's kind (the landing page otherwise) and the
CSP; an htmx request gets the message fragment; a 405 is a page too, with ``Allow``. A JSON client (``Accept:
application/json``, or no preference) keeps application/problem+json with the same status. ``/ui``, ``/ui/darkrooms``
go to the Darkrooms list; ``/ui/<kind>/<namespace>`` to that kind's list filtered to the namespace (filters kept).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.dashboard.clients import Client

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
JSON = {"Accept": "application/json"}


def _page(response: object, status: int, back: str) -> str:
    assert response.status_code == status, response.get_data(as_text=True)  # type: ignore[attr-defined]
    assert response.mimetype == "text/html"  # type: ignore[attr-defined]
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]  # type: ignore[attr-defined]
    html: str = response.get_data(as_text=True)  # type: ignore[attr-defined]
    assert f'data-status="{status}"' in html and "<html" in html
    assert f'<a class="button" href="{back}">Back to the' in html
    return html


@pytest.mark.parametrize(
    ("path", "back"),
    [
        ("/ui/nothing-here", "/"),
        ("/nothing-here", "/"),
        ("/ui/tasks/team-a/some-task/nothing", "/ui/tasks"),
        ("/ui/postgresqls/team-a/db/nothing", "/ui/postgresqls"),
        ("/ui/darkrooms/team-a/dr/nothing", "/"),
    ],
)
def test_an_unknown_url_is_a_page_for_a_browser_and_a_problem_for_a_script(http: Client, path: str, back: str) -> None:
    html = _page(http.get(path, headers=BROWSER), 404, back)
    assert "Not Found" in html and "{" not in html.split("<main", 1)[1].split("</main>", 1)[0]
    for headers in (JSON, {}):  # asking for JSON, or for nothing in particular (curl, scripts)
        answer = http.get(path, headers=headers)
        assert answer.status_code == 404 and answer.mimetype == "application/problem+json"
        assert answer.get_json()["status"] == 404


def test_htmx_gets_the_message_fragment(http: Client) -> None:
    answer = http.get("/ui/tasks/a/b/c", headers={"HX-Request": "true"})
    assert answer.status_code == 404 and answer.mimetype == "text/html"
    html = answer.get_data(as_text=True)
    assert "data-detail" in html and "<html" not in html


def test_a_method_the_url_does_not_take_is_a_page_with_allow(http: Client) -> None:
    for path in ("/ui/tasks", "/darkrooms"):
        page = http.client.delete(path, headers=BROWSER)
        _page(page, 405, "/ui/tasks" if path == "/ui/tasks" else "/")
        assert "GET" in page.headers["Allow"]
        problem = http.client.delete(path, headers=JSON)
        assert problem.status_code == 405 and problem.mimetype == "application/problem+json" and "GET" in problem.headers["Allow"]


def test_a_namespace_without_a_name_in_the_json_api_is_explained_on_a_page(http: Client) -> None:
    html = _page(http.get("/darkrooms/team-a", headers=BROWSER), 404, "/")
    assert "/darkrooms?namespace=team-a" in html
    problem = http.get("/darkrooms/team-a", headers=JSON)
    assert problem.mimetype == "application/problem+json" and problem.get_json()["list"] == "/darkrooms?namespace=team-a"


@pytest.mark.parametrize(
    ("path", "target", "query"),
    [
        ("/ui/darkrooms", "/", {}),
        ("/ui", "/", {}),
        ("/ui/darkrooms?q=web&sort=-age", "/", {"q": ["web"], "sort": ["-age"]}),
        ("/ui/darkrooms/team-a", "/", {"namespace": ["team-a"]}),
        ("/ui/tasks/team-a", "/ui/tasks", {"namespace": ["team-a"]}),
        ("/ui/tasks/team-a?sort=priority", "/ui/tasks", {"namespace": ["team-a"], "sort": ["priority"]}),
        ("/ui/combinedtasks/team-a", "/ui/combinedtasks", {"namespace": ["team-a"]}),
        ("/ui/postgresqls/team-a", "/ui/postgresqls", {"namespace": ["team-a"]}),
    ],
)
def test_trimmed_urls_go_to_the_list(http: Client, path: str, target: str, query: dict[str, list[str]]) -> None:
    answer = http.get(path, headers=BROWSER)
    assert answer.status_code == 302
    location = urlsplit(answer.headers["Location"])
    assert (location.path, parse_qs(location.query)) == (target, query)
    assert http.get(path, headers=BROWSER, follow_redirects=True).status_code == 200


def test_the_new_forms_keep_their_urls(http: Client) -> None:
    for path in ("/ui/tasks/new", "/ui/darkrooms/new", "/ui/postgresqls/new"):
        assert http.get(path, headers=BROWSER).status_code == 200
