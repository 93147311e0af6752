"""Tokens the control panel must refuse, and a session's ID token renewed before it expires.

Behaviours:

- an API client's bearer token that is forged (signed by a key the provider does not publish), expired, for another
  audience (minted, and a real ID token of another client of the same provider) or from another issuer is answered
  401 (``WWW-Authenticate: Bearer error="invalid_token"``) — by a passthrough panel (kube-apiserver refuses it in the
  TokenReview) and by an impersonating one (which verifies its provider's tokens itself: a token for another client,
  which kube-apiserver would accept, is refused too) — while the same minted token with nothing wrong is accepted by
  both: each refusal is for the one thing that is wrong;
- a real ID token of a short-lived client, accepted while valid, is refused once it has expired;
- a dashboard session whose client's ID tokens live 5 s keeps working across their expiry: its ID token is renewed
  with the refresh token before it expires (the stored token changes; requests went on past the first one's expiry);
  once the refresh token is revoked, the next request after the ID token expired is 401 — for htmx with ``HX-Redirect``
  to ``/login?next=`` the page it came from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import requests

from tests.identityfixtures import TEAM_A, Panel
from tests.identityprovider import PANEL_CLIENT_ID, HydraProcess, KubeOIDCClients, jwt_claims, new_rsa_key, sign_jwt
from tests.support import wait_for

from .control_plane import ControlPlane
from .panel_http import loopback, stored_login
from .people import wait_until_epoch

WRONG_ISSUER = "https://issuer.example.com"
REVIEW_TTL_S = 1.0


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with loopback() as session:
        yield session


@pytest.fixture(scope="module")
def panels(panel_factory: Callable[..., Panel]) -> dict[str, Panel]:
    """A panel of each identity mode for this module alone (wrong tokens count against their sender's address)."""
    return {mode: panel_factory(mode, review_cache_ttl_s=REVIEW_TTL_S) for mode in ("passthrough", "impersonate")}


def _claims(provider: HydraProcess, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": provider.issuer, "sub": "alice", "aud": [PANEL_CLIENT_ID], "iat": now, "exp": now + 600, "groups": ["team-a-editors"]}
    return {**claims, **changes}


def _bad_tokens(provider: HydraProcess, kube_oidc_clients: KubeOIDCClients) -> Mapping[str, str]:
    """Each with one thing wrong (the minted ones signed by the published test key unless forged)."""
    now = int(time.time())
    other = provider.register_client(f"another-app-{now}", "another-secret", ["http://127.0.0.1:9/callback"])
    alice = provider.users["alice"]
    return {
        "forged": sign_jwt(_claims(provider), new_rsa_key(), "test-signing-key"),
        "expired": provider.mint_token(_claims(provider, iat=now - 7200, exp=now - 3600)),
        "wrong audience": provider.mint_token(_claims(provider, aud=["someone-else"])),
        "wrong issuer": provider.mint_token(_claims(provider, iss=WRONG_ISSUER)),
        "another client's": provider.authorization_code_tokens(other, alice.username, alice.password).id_token,
    }


def test_bad_bearer_tokens_are_refused_in_both_modes(
    panels: dict[str, Panel], identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients, http: requests.Session
) -> None:
    good = identity_provider.mint_token(_claims(identity_provider))
    bad = _bad_tokens(identity_provider, kube_oidc_clients)
    for mode, panel in panels.items():
        accepted = http.get(f"{panel.url}/darkrooms", params={"namespace": TEAM_A}, headers={"Authorization": f"Bearer {good}"})
        assert accepted.status_code == 200, f"{mode}: the minted token with nothing wrong: {accepted.text}"
        answers = {what: http.get(f"{panel.url}/darkrooms", headers={"Authorization": f"Bearer {token}"}) for what, token in bad.items()}
        assert {what: a.status_code for what, a in answers.items()} == dict.fromkeys(bad, 401), mode
        for answer in answers.values():
            assert 'error="invalid_token"' in answer.headers["WWW-Authenticate"]


def test_a_token_for_kube_but_not_for_the_panel_is_refused_when_it_impersonates(
    panels: dict[str, Panel], identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients, http: requests.Session
) -> None:
    alice = identity_provider.users["alice"]
    token = identity_provider.authorization_code_tokens(kube_oidc_clients.standard, alice.username, alice.password).id_token
    headers = {"Authorization": f"Bearer {token}"}
    assert http.get(f"{panels['passthrough'].url}/darkrooms", headers=headers).status_code == 200  # what kube accepts
    assert http.get(f"{panels['impersonate'].url}/darkrooms", headers=headers).status_code == 401  # not the panel's audience


def test_a_real_id_token_is_refused_once_it_has_expired(
    panels: dict[str, Panel], identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients, http: requests.Session
) -> None:
    alice = identity_provider.users["alice"]
    fresh, expiring = (
        identity_provider.authorization_code_tokens(kube_oidc_clients.short_lived, alice.username, alice.password).id_token
        for _ in range(2)
    )
    url = f"{panels['passthrough'].url}/darkrooms"
    assert http.get(url, headers={"Authorization": f"Bearer {fresh}"}).status_code == 200  # the client's tokens work
    # kube-apiserver keeps a token it accepted for 10 s: the expired one is one it never saw while it was valid
    wait_until_epoch(jwt_claims(expiring)["exp"] + 1, message="the short-lived ID token to expire")
    assert http.get(url, headers={"Authorization": f"Bearer {expiring}"}).status_code == 401


@pytest.fixture(scope="module")
def short_lived_panel(panel_factory: Callable[..., Panel], kube_oidc_clients: KubeOIDCClients) -> Panel:
    """A passthrough panel signing people in as the client whose ID tokens expire after 5 s (kube trusts it too)."""
    return panel_factory("passthrough", oauth_client=kube_oidc_clients.short_lived)


def test_a_session_renews_its_id_token_before_it_expires_until_it_cannot(
    short_lived_panel: Panel, identity_provider: HydraProcess, control_plane: ControlPlane
) -> None:
    panel = short_lived_panel
    browser = panel.browser_login("alice")
    first = stored_login(panel, browser, control_plane)
    assert first is not None and first["refresh_token"] and first["token_expires_at"] - time.time() <= 10

    def kept_working_past_expiry() -> bool | None:
        answer = browser.get(f"{panel.url}/darkrooms", params={"namespace": TEAM_A})
        assert answer.status_code == 200, answer.text
        return True if time.time() > first["token_expires_at"] + 1 else None

    wait_for(kept_working_past_expiry, timeout_s=20, interval_s=0.3, message="the session to outlive its first ID token")
    renewed = stored_login(panel, browser, control_plane)
    assert renewed is not None and renewed["token"] != first["token"] and renewed["token_expires_at"] > first["token_expires_at"]
    assert control_plane.whoami(renewed["token"])["username"] == "oidc:alice"
    assert jwt_claims(first["token"])["exp"] == first["token_expires_at"] < time.time()  # the first one has expired

    identity_provider.revoke(panel.client, renewed["refresh_token"])
    wait_until_epoch(renewed["token_expires_at"] + 1, message="the last renewed ID token to expire")
    htmx = {"HX-Request": "true", "HX-Current-URL": f"{panel.url}/ui/tasks?namespace={TEAM_A}"}
    refused = browser.get(f"{panel.url}/ui/tasks", params={"namespace": TEAM_A}, headers=htmx)
    assert refused.status_code == 401, refused.text
    assert refused.headers["HX-Redirect"] == f"/login?next=%2Fui%2Ftasks%3Fnamespace%3D{TEAM_A}"
    assert browser.get(f"{panel.url}/darkrooms").status_code == 401
    browser.close()
