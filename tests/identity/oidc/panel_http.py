"""A control panel as a browser meets it over HTTP (helpers, no tests, no fixtures).

:func:`loopback` is an HTTP session for the panels on 127.0.0.1 (nothing from the environment); :func:`problem`
asserts an answer's status and returns its JSON body; :func:`session_secret` and :func:`stored_login` find what the
panel stores for a browser's login session (its Secret, read as the admin through a
:class:`~tests.identity.oidc.control_plane.ControlPlane`).
"""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.identityfixtures import Panel

from .control_plane import ControlPlane


def loopback() -> requests.Session:
    """An HTTP session for the panels on 127.0.0.1: no proxy, CA bundle or netrc from the environment."""
    session = requests.Session()
    session.trust_env = False
    return session


def problem(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, f"{response.request.method} {response.url}: {response.status_code} {response.text[:600]}"
    found: dict[str, Any] = response.json()
    return found


def session_secret(panel: Panel, browser: requests.Session) -> str | None:
    """The name of the Secret that holds ``browser``'s session at ``panel`` (None without a session cookie): the cookie
    read with the panel's own signing serializer (it holds only the session id)."""
    from backend.identity.authenticating import SESSION_ID
    from backend.identity.sessions import secret_name

    cookie = browser.cookies.get(panel.app.config["SESSION_COOKIE_NAME"])
    if cookie is None:
        return None
    serializer = panel.app.session_interface.get_signing_serializer(panel.app)  # type: ignore[attr-defined]
    return secret_name(serializer.loads(cookie)[SESSION_ID])


def stored_login(panel: Panel, browser: requests.Session, control_plane: ControlPlane) -> dict[str, Any] | None:
    """What the panel stores for ``browser``'s session (the Login of :mod:`backend.identity.sessions`, tokens included),
    read as the admin from its Secret; None when the session has ended."""
    import base64

    from backend.identity.sessions import DATA_KEY

    name = session_secret(panel, browser)
    secret = control_plane.secret(panel.settings.session_namespace, name) if name else None
    if secret is None:
        return None
    login: dict[str, Any] = json.loads(base64.b64decode(secret["data"][DATA_KEY]))
    return login
