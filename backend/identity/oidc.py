"""OpenID Connect with Authlib: the login redirect, the callback's token checks, renewal, logout at the provider.

:class:`Provider` wraps Authlib's Flask client, registered once per app from the settings (issuer URL —
discovery through ``/.well-known/openid-configuration`` —, client id and secret, scopes, a CA bundle for a
provider with a private CA). What is security-critical is Authlib's, not ours:

- the authorization code flow with PKCE (``S256``) and a ``state`` and ``nonce`` kept in the signed session
  cookie until the callback (:meth:`Provider.redirect`, :meth:`Provider.finish`);
- the ID token's checks — signature against the provider's JWKS (re-fetched for an unknown key id), ``iss``
  equal to the discovered issuer, ``aud`` containing our client id, ``exp``/``iat`` with Authlib's leeway, the
  ``nonce`` we sent — in :meth:`Provider.finish` and, for a renewed ID token (no nonce), :meth:`Provider.renew`;
- bearer JWTs sent by API clients when the API impersonates (:meth:`Provider.verify`: the same checks, via
  joserfc, which Authlib builds on).

Renewal (:meth:`Provider.renew`) uses the refresh token (``offline_access``); logout revokes it where the
provider has a ``revocation_endpoint`` and ends the provider's own session through RP-initiated logout where
it has an ``end_session_endpoint`` (:meth:`Provider.logout_url`). A provider that cannot be reached raises
:class:`ProviderUnavailable` (the login page says so); a token that fails a check raises
:class:`InvalidToken`. Neither message ever contains a token.
"""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.flask_client import FlaskOAuth2App, OAuth
from authlib.integrations.requests_client import OAuth2Session
from authlib.oidc.core import CodeIDToken
from flask import Flask
from joserfc import jwt
from joserfc.errors import JoseError as JoserfcError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from backend.settings import ApiSettings

log = logging.getLogger(__name__)

NAME = "oidc"
TIMEOUT_S = 5.0
LEEWAY_S = 60  # clock skew allowed on a login's fresh tokens (Authlib's default is 120)
# A bearer ID token an API client sends is impersonated as it stands: a few seconds of skew, no more — kube-apiserver
# itself allows none past exp, and a token past its time must not keep acting for a minute.
BEARER_LEEWAY_S = 5


class ProviderUnavailable(Exception):
    """The identity provider could not be reached or answered with an error (the message names it, never a token)."""


class InvalidToken(Exception):
    """A token the provider issued did not pass a check (signature, issuer, audience, expiry, nonce)."""


@dataclass(frozen=True)
class Tokens:
    """The outcome of a login or a renewal: the ID token and what it says."""

    id_token: str = field(repr=False)
    claims: dict[str, Any]
    refresh_token: str = field(default="", repr=False)

    @property
    def expires_at(self) -> int:
        return int(self.claims.get("exp", 0))


class _ProviderSession(OAuth2Session):  # type: ignore[misc]  # Authlib ships no annotations
    """Authlib's requests session, verifying the provider with the configured CA. requests lets the environment's
    ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` override a session's own ``verify``; the CA named for the provider wins."""

    def request(self, method: str, url: str, withhold_token: bool = False, auth: Any = None, **kwargs: Any) -> Any:
        kwargs.setdefault("verify", self.verify)
        return super().request(method, url, withhold_token=withhold_token, auth=auth, **kwargs)


class _ProviderApp(FlaskOAuth2App):  # type: ignore[misc]  # Authlib ships no annotations
    client_cls = _ProviderSession


class _OAuth(OAuth):  # type: ignore[misc]
    oauth2_client_cls = _ProviderApp


class Provider:
    """The configured OpenID provider (``settings.oidc_issuer_url``), for one app."""

    def __init__(self, app: Flask, settings: ApiSettings) -> None:
        self.settings = settings
        self.issuer = settings.oidc_issuer_url.rstrip("/")
        verify: bool | str = str(settings.oidc_ca_file) if settings.oidc_ca_file else True
        self.oauth = _OAuth(app)
        self.client: Any = self.oauth.register(
            NAME,
            client_id=settings.oidc_client_id,
            client_secret=settings.oidc_client_secret or None,
            server_metadata_url=f"{self.issuer}/.well-known/openid-configuration",
            client_kwargs={"scope": settings.oidc_scopes, "code_challenge_method": "S256", "verify": verify, "default_timeout": TIMEOUT_S},
        )

    # -- discovery ------------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The discovery document (fetched once, then kept); :class:`ProviderUnavailable` when it cannot be read."""
        try:
            metadata: dict[str, Any] = self.client.load_server_metadata()
        except (requests.RequestException, ValueError) as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e
        if str(metadata.get("issuer", "")).rstrip("/") != self.issuer:
            self.client.server_metadata.pop("_loaded_at", None)  # read it again next time
            raise ProviderUnavailable(f"the identity provider at {self.issuer} names another issuer in its discovery document")
        return metadata

    def probe(self) -> None:
        """Ask the provider for its discovery document now: the one Authlib keeps after the first login says nothing
        about whether the provider still answers. :class:`ProviderUnavailable` when it does not (or names another issuer)."""
        self.metadata()
        url = f"{self.issuer}/.well-known/openid-configuration"
        try:
            with self.client._get_oauth_client() as session:
                answer = session.get(url, timeout=TIMEOUT_S, withhold_token=True)
                answer.raise_for_status()
                issuer = str(answer.json().get("issuer", "")).rstrip("/")
        except (requests.RequestException, ValueError) as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e
        if issuer != self.issuer:
            raise ProviderUnavailable(f"the identity provider at {self.issuer} names another issuer in its discovery document")

    def reachable(self) -> str | None:
        """None when the provider answers now (:meth:`probe`); otherwise why not (for the login page)."""
        try:
            self.probe()
        except ProviderUnavailable as e:
            return str(e)
        return None

    # -- login ----------------------------------------------------------------------------------

    def redirect(self, redirect_uri: str) -> Any:
        """The redirect to the provider's authorization endpoint (state, nonce and PKCE verifier kept in the session) —
        only while the provider answers (:meth:`probe`): a browser is not sent to a provider that is down."""
        self.probe()
        try:
            return self.client.authorize_redirect(redirect_uri)
        except (requests.RequestException, OAuthError) as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e

    def finish(self) -> Tokens:
        """The callback: exchange the code (with the PKCE verifier) and check the ID token, nonce included."""
        try:
            token = self.client.authorize_access_token(leeway=LEEWAY_S)
        except requests.RequestException as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e
        except (OAuthError, JoserfcError, KeyError, ValueError) as e:
            raise InvalidToken(f"the login could not be completed: {_safe(e)}") from e
        if "id_token" not in token or "userinfo" not in token:
            raise InvalidToken("the identity provider sent no ID token (is the 'openid' scope granted?)")
        return Tokens(id_token=token["id_token"], claims=dict(token["userinfo"]), refresh_token=str(token.get("refresh_token") or ""))

    # -- renewal and logout ---------------------------------------------------------------------

    def renew(self, refresh_token: str) -> Tokens:
        """New tokens for a refresh token; the new ID token checked like a login's (without a nonce)."""
        metadata = self.metadata()
        try:
            token = self.client.fetch_access_token(metadata["token_endpoint"], grant_type="refresh_token", refresh_token=refresh_token)
            claims = self.client.parse_id_token(token, nonce=None, leeway=LEEWAY_S) if "id_token" in token else None
        except requests.RequestException as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e
        except (OAuthError, JoserfcError, KeyError, ValueError) as e:
            raise InvalidToken(f"the session could not be renewed: {_safe(e)}") from e
        if claims is None:
            raise InvalidToken("the identity provider renewed the session without an ID token")
        return Tokens(id_token=token["id_token"], claims=dict(claims), refresh_token=str(token.get("refresh_token") or refresh_token))

    def revoke(self, refresh_token: str) -> None:
        """Revoke a refresh token where the provider offers revocation (best effort: logged, never raised)."""
        try:
            endpoint = self.metadata().get("revocation_endpoint")
            if not endpoint or not refresh_token:
                return
            with self.client._get_oauth_client() as session:
                session.revoke_token(endpoint, token=refresh_token, token_type_hint="refresh_token")
        except (ProviderUnavailable, requests.RequestException, OAuthError) as e:
            log.warning("could not revoke a refresh token at %s: %s", self.issuer, type(e).__name__)

    def logout_url(self, *, id_token: str, post_logout_redirect_uri: str) -> str | None:
        """Where to send the browser to end the provider's own session (RP-initiated logout); None when it has none."""
        try:
            if not self.metadata().get("end_session_endpoint"):
                return None
            result: dict[str, Any] = self.client.create_logout_url(
                post_logout_redirect_uri=post_logout_redirect_uri, id_token_hint=id_token, client_id=self.settings.oidc_client_id
            )
        except (ProviderUnavailable, RuntimeError):
            return None
        return str(result["url"])

    # -- bearer tokens of API clients -----------------------------------------------------------

    def issued(self, token: str) -> bool:
        """Whether ``token`` is a JWT that names this provider as its issuer (unverified: only to choose how to verify)."""
        return _unverified_issuer(token) == self.issuer

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of an ID token an API client sent, after the same checks a login's gets (no nonce)."""
        metadata = self.metadata()
        algorithms = metadata.get("id_token_signing_alg_values_supported")
        try:
            keys = KeySet.import_key_set(self.client.fetch_jwk_set())
            try:
                decoded = jwt.decode(token, keys, registry=JWSRegistry(algorithms=algorithms, strict_check_header=False))
            except JoserfcError:
                keys = KeySet.import_key_set(self.client.fetch_jwk_set(force=True))  # a key rotated in since
                decoded = jwt.decode(token, keys, registry=JWSRegistry(algorithms=algorithms, strict_check_header=False))
            claims = CodeIDToken(
                decoded.claims,
                decoded.header,
                {"iss": {"values": [metadata["issuer"]]}},
                {"nonce": None, "client_id": self.settings.oidc_client_id},
            )
            claims.validate(now=int(time.time()), leeway=BEARER_LEEWAY_S)
        except requests.RequestException as e:
            raise ProviderUnavailable(f"the identity provider {self.issuer} cannot be reached ({type(e).__name__})") from e
        except (JoserfcError, KeyError, ValueError, TypeError) as e:
            raise InvalidToken(f"the token is not valid: {_safe(e)}") from e
        return dict(claims)


def _unverified_issuer(token: str) -> str:
    """The ``iss`` of a JWT's payload, unverified ("" for anything else): only to choose who verifies it."""
    parts = token.split(".")
    if len(parts) != 3:
        return ""
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return ""
    return str(payload.get("iss", "")).rstrip("/") if isinstance(payload, dict) else ""


def _safe(error: Exception) -> str:
    """An error's description without echoing anything a token could have put into it."""
    text = getattr(error, "description", None) or getattr(error, "error", None) or type(error).__name__
    return str(text)[:200]
