"""Logging out of an OIDC session ends it at the panel and at the identity provider (RP-initiated logout).

Behaviours:

- ``POST /logout`` of a session that signed in through the provider sends the browser to the provider's
  ``end_session_endpoint`` with the ID token as hint and ``/login?logged_out=1`` as where to come back; following it,
  the provider ends its own login and the browser lands on the login page, which says "You are logged out.";
- the session's refresh token is revoked at the provider (a refresh with it fails), its Secret is gone, and a copy of
  the old cookie no longer works (401); the provider asks for the password again at the next sign-in;
- a session started with a pasted Kubernetes token logs out straight to ``/login?logged_out=1``.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.identityfixtures import Panel, Teams
from tests.identityprovider import HydraProcess, OIDCError

from .control_plane import ControlPlane
from .panel_http import loopback, session_secret, stored_login

HTML = {"Accept": "text/html"}


def test_logout_ends_the_session_here_and_at_the_provider(
    panel: Panel, identity_provider: HydraProcess, control_plane: ControlPlane
) -> None:
    browser = panel.browser_login("alice")
    login = stored_login(panel, browser, control_plane)
    assert login is not None and login["refresh_token"]
    secret = session_secret(panel, browser)
    cookie_name = panel.app.config["SESSION_COOKIE_NAME"]
    old_cookie = browser.cookies.get(cookie_name)

    answer = browser.post(f"{panel.url}/logout", headers=HTML, allow_redirects=False)
    assert answer.status_code == 303, answer.text
    target = urllib.parse.urlsplit(answer.headers["Location"])
    query = urllib.parse.parse_qs(target.query)
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{identity_provider.issuer}/oauth2/sessions/logout"
    assert query["post_logout_redirect_uri"] == [f"{panel.url}/login?logged_out=1"]
    assert query["id_token_hint"] == [login["token"]]

    landed = browser.get(answer.headers["Location"], headers=HTML)
    assert landed.status_code == 200 and landed.url.startswith(f"{panel.url}/login?logged_out=1"), landed.url
    assert "You are logged out." in landed.text

    with pytest.raises(OIDCError, match="refused"):
        identity_provider.refresh(panel.client, login["refresh_token"])
    assert control_plane.secret(panel.settings.session_namespace, str(secret)) is None
    with loopback() as copy:
        copy.cookies.set(cookie_name, str(old_cookie))
        assert copy.get(f"{panel.url}/darkrooms", headers={"Accept": "application/json"}).status_code == 401
    again = browser.get(f"{panel.url}/login/oidc?next=/darkrooms", headers=HTML)
    assert 'name="password"' in again.text, "the provider remembered the login after the logout"
    browser.close()


def test_a_token_session_logs_out_to_the_login_page(panel: Panel, teams: Teams) -> None:
    with loopback() as browser:
        assert browser.post(f"{panel.url}/login", json={"token": teams.sa_token()}).status_code == 204
        assert browser.get(f"{panel.url}/darkrooms", headers={"Accept": "application/json"}).status_code == 200
        answer = browser.post(f"{panel.url}/logout", headers=HTML, allow_redirects=False)
        assert (answer.status_code, answer.headers["Location"]) == (303, "/login?logged_out=1")
        assert browser.get(f"{panel.url}/darkrooms", headers={"Accept": "application/json"}).status_code == 401
