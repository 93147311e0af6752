"""Who may do what, as the settings say it: :meth:`ApiSettings.check` and the modes it derives.

Behaviours: unset, ``authentication`` is the local one-person mode on a loopback address (127.0.0.1, ::1,
localhost, any 127.x) and the login mode anywhere else; the local mode off loopback is refused, naming the host and
what to set; a login mode with no way to log in (token login off, no OIDC) is refused; impersonation without OIDC
is refused; with impersonation an empty prefix, or one starting with ``system:``, for user names or groups is
refused, while passthrough never looks at the prefixes; OIDC needs an https issuer (http only on loopback), a
client id and the ``openid`` scope; ``authentication`` and ``identity`` accept only their listed values; the
``repr`` hides the signing key and the OIDC client secret; a stream's review TTL is never shorter than the cache's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from backend.settings import ApiSettings, UnsafeSettings

OIDC: dict[str, Any] = {"oidc_issuer_url": "https://idp.example.com", "oidc_client_id": "panel", "oidc_client_secret": "s3cret"}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.9", "::1", "localhost"])
def test_loopback_is_the_local_mode_unless_told_otherwise(host: str) -> None:
    assert ApiSettings(host=host).check().local
    assert not ApiSettings(host=host, authentication="login").check().local


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "panel.example.com"])
def test_off_loopback_login_is_the_default(host: str) -> None:
    settings = ApiSettings(host=host).check()
    assert not settings.local and settings.token_login


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::"])
def test_the_local_mode_off_loopback_is_refused(host: str) -> None:
    with pytest.raises(
        UnsafeSettings,
        match=rf"^refusing to serve on {re.escape(host)} in the local mode .* leave DARKROOM_API_AUTHENTICATION unset or set it to login$",
    ):
        ApiSettings(host=host, authentication="local").check()


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_login_mode_with_no_way_to_log_in_is_refused(host: str) -> None:
    with pytest.raises(
        UnsafeSettings, match=r"no way to log in is configured: set DARKROOM_API_OIDC_ISSUER_URL or DARKROOM_API_TOKEN_LOGIN"
    ):
        ApiSettings(host=host, authentication="login", token_login=False).check()
    assert ApiSettings(host=host, authentication="login", token_login=False, **OIDC).check().oidc  # OIDC alone is a way
    assert ApiSettings(host="127.0.0.1", token_login=False).check().local  # nothing to log in to


def test_impersonation_without_oidc_is_refused() -> None:
    with pytest.raises(UnsafeSettings, match=r"IDENTITY=impersonate needs OIDC"):
        ApiSettings(host="0.0.0.0", identity="impersonate").check()
    assert ApiSettings(host="0.0.0.0", identity="impersonate", **OIDC).check().identity == "impersonate"


@pytest.mark.parametrize(
    ("field", "variable"), [("oidc_username_prefix", "OIDC_USERNAME_PREFIX"), ("oidc_groups_prefix", "OIDC_GROUPS_PREFIX")]
)
@pytest.mark.parametrize("prefix", ["", "system:", "system:serviceaccounts:", "system:masters"])
def test_impersonation_refuses_empty_and_system_prefixes(field: str, variable: str, prefix: str) -> None:
    settings: dict[str, Any] = {"host": "0.0.0.0", **OIDC, field: prefix}
    with pytest.raises(UnsafeSettings, match=rf"DARKROOM_API_{variable} must be set and must not start with 'system:'"):
        ApiSettings(identity="impersonate", **settings).check()
    assert ApiSettings(identity="passthrough", **settings).check()  # the cluster's own prefixes apply: ours are unused


def test_impersonation_accepts_other_prefixes() -> None:
    settings = ApiSettings(host="0.0.0.0", identity="impersonate", oidc_username_prefix="idp:", oidc_groups_prefix="idp-group:", **OIDC)
    assert settings.check() is settings


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"oidc_issuer_url": "http://idp.example.com"}, r"OIDC_ISSUER_URL must be an https URL"),
        ({"oidc_client_id": ""}, r"OIDC_CLIENT_ID is required"),
        ({"oidc_scopes": "profile email"}, r"OIDC_SCOPES must include openid"),
    ],
)
def test_oidc_settings_are_checked(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(UnsafeSettings, match=message):
        ApiSettings(host="0.0.0.0", **{**OIDC, **overrides}).check()


def test_a_provider_on_loopback_may_speak_http() -> None:
    assert ApiSettings(host="0.0.0.0", **{**OIDC, "oidc_issuer_url": "http://127.0.0.1:4444"}).check().oidc


@pytest.mark.parametrize(
    ("variable", "value"),
    [("DARKROOM_API_AUTHENTICATION", "token"), ("DARKROOM_API_IDENTITY", "skip"), ("DARKROOM_API_AUTHENTICATION", "")],
)
def test_modes_accept_only_their_values(variable: str, value: str) -> None:
    if not value:  # empty: unset, the default by address
        assert ApiSettings.from_environ({variable: value}).local
        return
    with pytest.raises(ValueError, match=rf"{variable}: {value!r} is not one of"):
        ApiSettings.from_environ({variable: value})


def test_the_repr_hides_the_secrets() -> None:
    text = repr(ApiSettings(secret_key="signing-key-Sentinel", **{**OIDC, "oidc_client_secret": "client-secret-Sentinel"}))
    assert "Sentinel" not in text and "secret_key='***'" in text and "oidc_client_secret='***'" in text
    assert str(ApiSettings()) == repr(ApiSettings())


@pytest.mark.parametrize(("cache", "stream"), [(-1.0, 60.0), (10.0, 5.0)])
def test_a_stream_never_acts_on_decisions_younger_than_a_requests(cache: float, stream: float) -> None:
    with pytest.raises(UnsafeSettings, match=r"REVIEW_CACHE_TTL_S must be 0 or more, and DARKROOM_API_STREAM_REVIEW_TTL_S at least"):
        ApiSettings(review_cache_ttl_s=cache, stream_review_ttl_s=stream).check()
    assert ApiSettings(review_cache_ttl_s=0.0, stream_review_ttl_s=0.0).check().stream_review_ttl_s == 0.0
