"""Whom kube-apiserver's audit log names for what a person does through the control panel, in both identity modes.

The audit log of the OIDC control plane records every request of people and panels (level Metadata). Behaviours:

- passthrough: alice's create — through an API client's bearer ID token or a dashboard session — is made as
  ``oidc:alice`` (her own token: no impersonation, not the panel), and so is the create of the Secret her S3 Darkroom's
  inline keys and her Postgresql's password go into;
- impersonation: the same writes are made by the panel's own identity with ``impersonatedUser`` ``oidc:alice`` and her
  groups (``oidc:`` prefixed); an API client's bearer ID token is verified by the panel itself (no TokenReview reaches
  kube-apiserver for it) and impersonated; a person whose provider groups include ``system:masters`` is impersonated
  as ``oidc:system:masters`` (never the real group, which kube would let do anything), has no rights and is refused —
  and kube's own JWT authenticator maps them the same way in passthrough;
- a pasted Kubernetes ServiceAccount token still passes through as it is in the impersonation mode (bearer and login
  session): its writes are the ServiceAccount's own, impersonating nobody.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.identityfixtures import TEAM_A, Panel, Teams

from .control_plane import AuditLog, ControlPlane, requests_of
from .kinds_and_bodies import body, s3_darkroom, unique
from .panel_http import loopback, problem
from .people import Tokens

KEYS = ("AKIA-WHO-KUBE-SEES", "who-kube-sees-secret-key")
PASSWORD = "who-kube-sees-password"
PANEL_IDENTITY = "admin"
DEPLOYER = f"system:serviceaccount:{TEAM_A}:deployer"


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with loopback() as session:
        yield session


def _writes(audit: AuditLog, since: int, darkroom: str, database: str) -> dict[str, dict[str, Any]]:
    """The audit events of the four creates one person's two objects make (each object and its Secret)."""
    wanted = {
        "darkroom": ("darkrooms", darkroom),
        "darkroom secret": ("secrets", f"{darkroom}-s3-credentials"),
        "postgresql": ("postgresqls", database),
        "postgresql secret": ("secrets", f"{database}-credentials"),
    }
    found = {}
    for what, (resource, name) in wanted.items():
        events = audit.wait(since, functools.partial(_created, resource=resource, name=name))
        assert len(events) == 1, events
        assert events[0]["responseStatus"]["code"] == 201, events[0]
        found[what] = events[0]
    return found


def _created(event: dict[str, Any], *, resource: str, name: str) -> bool:
    return bool(requests_of([event], resource=resource, verb="create", name=name))


def _refused_create(event: dict[str, Any]) -> bool:
    ref = event.get("objectRef") or {}
    return (event.get("verb"), ref.get("resource"), ref.get("namespace"), event["responseStatus"].get("code")) == (
        "create",
        "darkrooms",
        TEAM_A,
        403,
    )


def _create_both(http: requests.Session, panel: Panel, headers: dict[str, str]) -> tuple[str, str]:
    darkroom, database = unique("who"), unique("who-pg")
    problem(http.post(f"{panel.url}/darkrooms", json=s3_darkroom(darkroom, TEAM_A, KEYS), headers=headers), 201)
    problem(http.post(f"{panel.url}/postgresqls", json=body("postgresqls", database, TEAM_A, password=PASSWORD), headers=headers), 201)
    return darkroom, database


def test_passthrough_writes_are_the_persons_own(panel: Panel, tokens: Tokens, audit: AuditLog, http: requests.Session) -> None:
    browser = panel.browser_login("alice")
    for headers, session in ((tokens.bearer("alice"), http), ({"Accept": "application/json"}, browser)):
        since = audit.mark()
        darkroom, database = _create_both(session, panel, headers)
        for what, event in _writes(audit, since, darkroom, database).items():
            assert event["user"]["username"] == "oidc:alice", (what, event["user"])
            assert "oidc:team-a-editors" in event["user"]["groups"], (what, event["user"])
            assert "impersonatedUser" not in event, (what, event)
    browser.close()


def test_impersonation_names_the_panel_acting_as_the_person(
    impersonating_panel: Panel, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    browser = impersonating_panel.browser_login("alice")
    fresh = impersonating_panel.id_token("alice")  # never seen by anyone: a TokenReview of it would be the panel's
    for headers, session in (
        ({"Authorization": f"Bearer {fresh}", "Accept": "application/json"}, http),
        ({"Accept": "application/json"}, browser),
    ):
        since = audit.mark()
        darkroom, database = _create_both(session, impersonating_panel, headers)
        for what, event in _writes(audit, since, darkroom, database).items():
            assert event["user"]["username"] == PANEL_IDENTITY, (what, event["user"])
            impersonated = event.get("impersonatedUser") or {}
            assert impersonated.get("username") == "oidc:alice", (what, event)
            assert "oidc:team-a-editors" in impersonated.get("groups", []), (what, impersonated)
        reviews = [e for e in audit.events(since) if (e.get("objectRef") or {}).get("resource") == "tokenreviews"]
        assert reviews == [], "the panel verifies its provider's ID tokens itself"
    browser.close()


def test_system_masters_at_the_provider_is_nobody_special(
    panel: Panel, impersonating_panel: Panel, tokens: Tokens, audit: AuditLog, control_plane: ControlPlane, http: requests.Session
) -> None:
    token = tokens["mallory"]
    assert control_plane.whoami(token)["groups"] == ["oidc:system:masters", "system:authenticated"]  # kube's own mapping
    browser = impersonating_panel.browser_login("mallory")
    for target, headers, session in (
        (panel, tokens.bearer("mallory"), http),
        (impersonating_panel, tokens.bearer("mallory"), http),
        (impersonating_panel, {"Accept": "application/json"}, browser),
    ):
        assert problem(session.get(f"{target.url}/darkrooms", headers=headers), 200)["items"] == []
        refused = problem(session.get(f"{target.url}/darkrooms", params={"namespace": TEAM_A}, headers=headers), 403)
        assert refused["user"] == "oidc:mallory"
        since = audit.mark()
        name = unique("masters")
        refused = problem(session.post(f"{target.url}/darkrooms", json=body("darkrooms", name, TEAM_A), headers=headers), 403)
        assert (refused["verb"], refused["resource"], refused["namespace"]) == ("create", "darkrooms", TEAM_A)
        (event,) = audit.wait(since, _refused_create)  # refused before its body is read: the record names no object
        acted_as = event.get("impersonatedUser") or event["user"]
        assert acted_as["username"] == "oidc:mallory" and "system:masters" not in acted_as.get("groups", []), event
        assert "oidc:system:masters" in acted_as["groups"], event
        assert event["responseStatus"]["code"] == 403
    browser.close()


def test_a_pasted_service_account_token_passes_through_when_the_panel_impersonates(
    impersonating_panel: Panel, teams: Teams, audit: AuditLog, http: requests.Session
) -> None:
    token = teams.sa_token()
    login = loopback()
    logged_in = login.post(f"{impersonating_panel.url}/login", json={"token": token}, headers={"Accept": "application/json"})
    assert logged_in.status_code == 204, logged_in.text
    for headers, session in (
        ({"Authorization": f"Bearer {token}", "Accept": "application/json"}, http),
        ({"Accept": "application/json"}, login),
    ):
        since = audit.mark()
        name = unique("deployed")
        problem(session.post(f"{impersonating_panel.url}/darkrooms", json=body("darkrooms", name, TEAM_A), headers=headers), 201)
        (event,) = audit.wait(since, functools.partial(_created, resource="darkrooms", name=name))
        assert event["user"]["username"] == DEPLOYER and "impersonatedUser" not in event, event
    login.close()
