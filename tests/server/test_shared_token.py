"""The shared API token of earlier releases is gone: setting it stops the API, and the message says what replaces it.

Behaviours: ``DARKROOM_API_TOKEN`` (and its older spelling ``DARKROOM_API_API_TOKEN``) set to anything stops
``ApiSettings.from_environ`` with :class:`UnsafeSettings` naming the variable, per-person login, the variables that
configure it (token login, OIDC) and the bearer header API clients send instead; set but empty, it is ignored (an
unset variable of a compose file or a manifest); nothing else of the environment is read before it is refused (the
refusal comes first, whatever else is wrong); the settings no longer have a token field at all.
"""

from __future__ import annotations

import dataclasses

import pytest

from backend.settings import SHARED_TOKEN_VARIABLES, ApiSettings, UnsafeSettings

REPLACEMENTS = (
    "per-person login",
    "DARKROOM_API_TOKEN_LOGIN",
    "DARKROOM_API_OIDC_ISSUER_URL",
    "DARKROOM_API_OIDC_CLIENT_ID",
    "DARKROOM_API_OIDC_CLIENT_SECRET",
    "'Authorization: Bearer <token>'",
)


@pytest.mark.parametrize("name", ["DARKROOM_API_TOKEN", "DARKROOM_API_API_TOKEN"])
def test_the_shared_token_stops_the_api_naming_what_replaces_it(name: str) -> None:
    with pytest.raises(UnsafeSettings) as refused:
        ApiSettings.from_environ({name: "t0ken-of-an-earlier-release"})
    message = str(refused.value)
    assert message.startswith(f"{name} is no longer supported: the shared API token is replaced by per-person login.")
    for replacement in REPLACEMENTS:
        assert replacement in message, replacement
    assert "t0ken-of-an-earlier-release" not in message


def test_the_refusal_comes_before_anything_else_is_read() -> None:
    with pytest.raises(UnsafeSettings, match=r"^DARKROOM_API_TOKEN is no longer supported"):
        ApiSettings.from_environ({"DARKROOM_API_TOKEN": "x", "PORT": "not-a-number", "DARKROOM_API_AUTHENTICATION": "none"})


def test_an_empty_variable_is_ignored() -> None:
    environ = dict.fromkeys(SHARED_TOKEN_VARIABLES, "")
    assert ApiSettings.from_environ(environ) == ApiSettings()


def test_the_settings_have_no_token_field() -> None:
    names = {f.name for f in dataclasses.fields(ApiSettings)}
    assert not {"api_token", "token"} & names
    with pytest.raises(TypeError):
        ApiSettings(api_token="x")  # type: ignore[call-arg]
