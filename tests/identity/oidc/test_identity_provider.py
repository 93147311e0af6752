"""The test OpenID Connect provider (ORY Hydra, tests/identityprovider.py) and a real kube-apiserver that trusts it.

Covers:

- Hydra serves its discovery document and JWKS over TLS that verifies against the fixture's CA (and not against the
  system's CAs); the JWKS holds public keys only.
- alice signs in through the authorization-code flow with PKCE (the login form, automatic consent): her ID token is
  signed by a key of that JWKS, names the issuer, the client as audience, an expiry an hour (the provider's TTL)
  after issue, no nonce (none was sent), her groups, email and username; a refresh_token grant gives a new ID token
  for the same session and a new refresh token (the old one is then refused: rotation); a wrong password brings the
  form back with an error; a nonce sent comes back in the ID token.
- In one browser (cookie jar) a second authorization skips the login form (Hydra remembers the login); after an
  RP-initiated logout (the login app accepting it, Hydra redirecting to the post-logout URI with the state) the
  form is back.
- kube-apiserver (``--authentication-config``, JWT authenticator) takes alice's ID token for ``oidc:alice`` in group
  ``oidc:team-a-editors``: ``kubectl auth whoami`` with a kubeconfig holding only the server and its CA, and a
  TokenReview by the admin. A TokenReview must leave ``spec.audiences`` empty (or name the API server's own
  audience, its service-account issuer): the JWT authenticator checks ``aud`` against the configured audiences
  itself, and kube-apiserver then requires the review's audiences to meet its own API audiences (``--api-audiences``,
  by default the service-account issuer) — so a review asking for the client id as audience answers 201 with
  ``authenticated`` false, no user and ``error: invalid bearer token`` even for a valid token. The review of a valid
  token reports the API audiences in ``status.audiences``.
- kube-apiserver answers 401 to a token signed by a key the issuer does not publish, to one naming another issuer
  (signed by a published key: only the issuer is wrong), to a real ID token of another client of the same provider
  (wrong audience) and to an expired one (a short-lived client's; another token of the same client, presented while
  valid, passes). The same forged token with the right issuer and audience passes: the forgery itself is sound.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.clusters import RealclusterProcess
from tests.identityprovider import (
    SHORT_LIVED_S,
    USERS,
    HydraProcess,
    KubeOIDCClients,
    OIDCError,
    jwks,
    jwt_claims,
    new_rsa_key,
    sign_jwt,
    verify_jwt,
    whoami,
)

SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"  # realcluster's --service-account-issuer


def _token_review(cluster: RealclusterProcess, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    body: dict[str, Any] = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
    with requests.Session() as http:
        http.trust_env = False
        response = http.post(
            f"{cluster.url}/apis/authentication.k8s.io/v1/tokenreviews",
            json=body,
            headers={"Authorization": f"Bearer {cluster.token('admin')}"},
            verify=str(cluster.ca_path),
            timeout=10,
        )
    with response:
        assert response.status_code == 201, response.text
        status: dict[str, Any] = response.json()["status"]
        return status


def test_discovery_and_jwks_are_served_over_tls_verified_by_the_fixture_ca(identity_provider: HydraProcess) -> None:
    with requests.Session() as http:
        http.trust_env = False
        discovery = http.get(
            f"{identity_provider.issuer}/.well-known/openid-configuration", verify=str(identity_provider.ca_path), timeout=10
        )
        with discovery:
            assert discovery.status_code == 200
            document = discovery.json()
        with pytest.raises(requests.exceptions.SSLError):
            http.get(f"{identity_provider.issuer}/.well-known/openid-configuration", verify=True, timeout=10)
    assert document["issuer"] == identity_provider.issuer
    assert document["jwks_uri"] == f"{identity_provider.issuer}/.well-known/jwks.json"
    assert document["authorization_endpoint"] == f"{identity_provider.issuer}/oauth2/auth"
    assert document["token_endpoint"] == f"{identity_provider.issuer}/oauth2/token"
    assert "S256" in document["code_challenge_methods_supported"]
    assert {"openid", "offline_access", "groups"} <= set(document["scopes_supported"])
    keys = jwks(identity_provider)["keys"]
    assert keys and all(key["kty"] == "RSA" and key["alg"] == "RS256" and "d" not in key for key in keys)


def test_code_flow_with_pkce_then_refresh(identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients) -> None:
    client = kube_oidc_clients.standard
    tokens = identity_provider.authorization_code_tokens(client, "alice", USERS["alice"].password)
    published = jwks(identity_provider)
    claims = verify_jwt(tokens.id_token, published)
    assert claims["iss"] == identity_provider.issuer
    assert claims["aud"] == [client.client_id]
    assert claims["sub"] == "alice"
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["exp"] > time.time()
    assert "nonce" not in claims
    assert claims["groups"] == ["team-a-editors"]
    assert (claims["email"], claims["email_verified"], claims["preferred_username"]) == ("alice@example.com", True, "alice")
    assert tokens.refresh_token and tokens.expires_in > 3500
    assert set(tokens.scope) == {"openid", "profile", "email", "groups", "offline_access"}

    refreshed = identity_provider.refresh(client, tokens.refresh_token)
    again = verify_jwt(refreshed.id_token, published)
    assert refreshed.id_token != tokens.id_token and again["jti"] != claims["jti"]
    assert (again["sub"], again["groups"], again["sid"], again["iat"] >= claims["iat"]) == (
        "alice",
        ["team-a-editors"],
        claims["sid"],
        True,
    )
    assert refreshed.refresh_token and refreshed.refresh_token != tokens.refresh_token
    with pytest.raises(OIDCError, match="token request \\(refresh_token\\) refused: 400"):
        identity_provider.refresh(client, tokens.refresh_token)

    with pytest.raises(OIDCError, match="login of 'alice' refused: Wrong username or password"):
        identity_provider.authorization_code_tokens(client, "alice", "not-her-password")
    with_nonce = identity_provider.authorization_code_tokens(client, "bob", USERS["bob"].password, nonce="n-0S6_WzA2Mj")
    assert jwt_claims(with_nonce.id_token)["nonce"] == "n-0S6_WzA2Mj"


def test_a_remembered_login_skips_the_form_until_logout(identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients) -> None:
    client = kube_oidc_clients.standard
    with identity_provider.browser() as browser:
        signed_in = identity_provider.authorization_code_tokens(client, "carol", USERS["carol"].password, browser=browser)
        again = identity_provider.authorization_code_tokens(client, "carol", "no form: this is not asked", browser=browser)
        assert (jwt_claims(again.id_token)["sub"], jwt_claims(again.id_token)["sid"]) == ("carol", jwt_claims(signed_in.id_token)["sid"])
        landed = identity_provider.logout(browser, client, signed_in.id_token)
        assert landed.startswith(client.post_logout_redirect_uris[0] + "?")
        with pytest.raises(OIDCError, match="login of 'carol' refused: Wrong username or password"):
            identity_provider.authorization_code_tokens(client, "carol", "no form: this is not asked", browser=browser)
    assert "consent given for 'carol'" in (identity_provider.data_dir / "login-app.log").read_text()


@pytest.mark.kubectl
def test_kube_apiserver_authenticates_an_id_token(
    oidc_realcluster: RealclusterProcess,
    identity_provider: HydraProcess,
    kube_oidc_clients: KubeOIDCClients,
    kubectl_binary: str,
    tmp_path: Path,
) -> None:
    id_token = identity_provider.authorization_code_tokens(kube_oidc_clients.standard, "alice", USERS["alice"].password).id_token
    kubeconfig = tmp_path / "kubeconfig"  # the server and its CA, no credentials: --token gives them
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "oidc", "cluster": {"server": oidc_realcluster.url, "certificate-authority": str(oidc_realcluster.ca_path)}}
                ],
                "contexts": [{"name": "oidc", "context": {"cluster": "oidc"}}],
                "current-context": "oidc",
            }
        )
    )
    result = subprocess.run(
        [
            kubectl_binary,
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--token",
            id_token,
            "auth",
            "whoami",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    user = json.loads(result.stdout)["status"]["userInfo"]
    assert user["username"] == "oidc:alice"
    assert user["groups"] == ["oidc:team-a-editors", "system:authenticated"]

    review = _token_review(oidc_realcluster, id_token)
    assert review["authenticated"] is True
    assert (review["user"]["username"], review["user"]["groups"]) == ("oidc:alice", ["oidc:team-a-editors", "system:authenticated"])
    assert review["audiences"] == [SERVICE_ACCOUNT_ISSUER]
    assert _token_review(oidc_realcluster, id_token, audiences=[SERVICE_ACCOUNT_ISSUER])["authenticated"] is True
    by_client_id = _token_review(oidc_realcluster, id_token, audiences=[kube_oidc_clients.standard.client_id])
    # Not an error of the review: the token is just not authenticated for that audience (``authenticated`` false is omitted).
    assert by_client_id == {"user": {}, "error": "invalid bearer token"}, by_client_id


def test_kube_apiserver_refuses_forged_foreign_and_misaddressed_tokens(
    oidc_realcluster: RealclusterProcess, identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients
) -> None:
    now = int(time.time())
    claims = {
        "iss": identity_provider.issuer,
        "aud": [kube_oidc_clients.standard.client_id],
        "sub": "mallory",
        "iat": now,
        "exp": now + 300,
        "groups": ["team-a-editors"],
    }

    def user(token: str) -> str | None:
        info = whoami(oidc_realcluster.url, oidc_realcluster.ca_path, token)
        return None if info is None else str(info["username"])

    # The control: signed by the test key Hydra publishes, with the right issuer and audience, the token passes.
    assert user(identity_provider.mint_token(claims)) == "oidc:mallory"
    assert user(sign_jwt(claims, new_rsa_key(), "not-published")) is None
    assert (
        user(identity_provider.mint_token({**claims, "sub": "mallory2", "iss": identity_provider.issuer.replace("127.0.0.1", "localhost")}))
        is None
    )
    assert user(identity_provider.mint_token({**claims, "sub": "mallory3", "iss": "https://issuer.example"})) is None

    other = identity_provider.register_client(
        f"other-app-{uuid.uuid4().hex[:8]}", "other-app-secret", kube_oidc_clients.standard.redirect_uris
    )
    foreign = identity_provider.authorization_code_tokens(other, "alice", USERS["alice"].password).id_token
    assert jwt_claims(foreign)["aud"] == [other.client_id]
    assert user(foreign) is None


@pytest.mark.slow
def test_kube_apiserver_refuses_an_expired_id_token(
    oidc_realcluster: RealclusterProcess, identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients
) -> None:
    client = kube_oidc_clients.short_lived
    # kube-apiserver caches a token it accepted for 10 s, so the expired token is one it has never seen.
    fresh = identity_provider.authorization_code_tokens(client, "bob", USERS["bob"].password).id_token
    expiring = identity_provider.authorization_code_tokens(client, "bob", USERS["bob"].password).id_token
    claims = jwt_claims(expiring)
    assert claims["exp"] - claims["iat"] == SHORT_LIVED_S
    info = whoami(oidc_realcluster.url, oidc_realcluster.ca_path, fresh)
    assert info is not None and info["username"] == "oidc:bob"
    time.sleep(max(0.0, claims["exp"] + 1 - time.time()))
    assert whoami(oidc_realcluster.url, oidc_realcluster.ca_path, expiring) is None
