"""The identity layer's pieces that need no server: where a login may send the browser back to, the wrong-credential
counter, the identity header filter, what a session stores, and the person an ID token names.

Behaviours:

- ``safe_next`` keeps a local path with its query and turns anything that could leave the site (a scheme, a host,
  ``//``, a backslash, control characters) into ``/``;
- ``FailedAttempts`` answers 0 until ``limit`` failures of one client fall in the window, then the seconds until its
  oldest one leaves it (at least 1, at most the window); other clients are not affected; once the failures age out the
  client is under the limit again;
- ``IdentityHeaderFilter`` removes every ``Impersonate-*`` and ``X-Remote-*`` header and every header the client names
  in ``Connection`` (except what the server itself needs: Host, framing, Content-Type), and leaves the rest alone;
- a session's ``Login`` survives its encoding unchanged (groups as a tuple), keeps its tokens out of its ``repr``, and
  has expired from ``ends_at`` on;
- ``user_from_claims`` names the person by the configured claim with the user prefix, takes groups from the configured
  claim (a list, or one string) with the groups prefix, so an identity provider naming ``system:masters`` gets
  ``oidc:system:masters``; a missing or empty name claim is an invalid token.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder

from backend.api.hardening import IdentityHeaderFilter
from backend.identity import oidc
from backend.identity.authenticating import Authenticator, FailedAttempts, safe_next
from backend.identity.sessions import Login
from backend.settings import ApiSettings
from cluster.identities import AUTHENTICATED, User
from cluster.reviewing import TokenReviewer
from tests.support import wait_for

# -- safe_next ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/docs", "/docs"),
        ("/tasks?page=2&q=a%20b", "/tasks?page=2&q=a%20b"),
        ("/ui/darkrooms/team-a/shop", "/ui/darkrooms/team-a/shop"),
        ("https://evil.example.com/", "/"),
        ("http:/evil.example.com", "/"),
        ("//evil.example.com/x", "/"),
        ("/\\evil.example.com", "/"),
        ("/x\\y", "/"),
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=1", "/"),
        ("/tab\there", "/"),
        ("docs", "/"),
        ("", "/"),
        (None, "/"),
    ],
)
def test_login_redirects_stay_local(raw: str | None, expected: str) -> None:
    assert safe_next(raw) == expected


# -- FailedAttempts -------------------------------------------------------------------------------


def test_failures_are_counted_per_client_up_to_the_limit() -> None:
    attempts = FailedAttempts(limit=3, window_s=60)
    for _ in range(2):
        attempts.failed("198.51.100.7")
    assert attempts.retry_after_s("198.51.100.7") == 0
    attempts.failed("198.51.100.7")
    assert 59 <= attempts.retry_after_s("198.51.100.7") <= 60
    assert attempts.retry_after_s("198.51.100.8") == 0  # another client


def test_failures_age_out_of_the_window() -> None:
    attempts = FailedAttempts(limit=2, window_s=0.3)
    attempts.failed("client")
    attempts.failed("client")
    assert attempts.retry_after_s("client") == 1  # never 0 while limited: a Retry-After of 0 would invite a retry loop
    wait_for(lambda: attempts.retry_after_s("client") == 0, timeout_s=5, message="the failures to leave the window")
    attempts.failed("client")
    assert attempts.retry_after_s("client") == 0  # one recent failure: under the limit again


def test_many_clients_do_not_grow_the_counter_without_bound() -> None:
    attempts = FailedAttempts(limit=1, window_s=0.2)
    for i in range(10_000):  # up to the bound nothing is pruned, however long this takes
        attempts.failed(f"10.0.{i // 256}.{i % 256}")
    last = "10.0.39.15"  # the 10,000th
    wait_for(lambda: attempts.retry_after_s(last) == 0, timeout_s=5, message="every failure to leave the window")
    for client in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):  # past the bound: clients whose failures all aged out are forgotten
        attempts.failed(client)
    assert set(attempts._seen) == {"192.0.2.1", "192.0.2.2", "192.0.2.3"}
    assert attempts.retry_after_s("192.0.2.1") > 0  # the recent ones are kept


# -- IdentityHeaderFilter -------------------------------------------------------------------------


def _seen_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The request headers the app behind the filter sees."""
    seen: dict[str, str] = {}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.update({k: v for k, v in environ.items() if k.startswith("HTTP_") or k.startswith("CONTENT_")})
        start_response("204 No Content", [])
        return []

    environ = EnvironBuilder(path="/darkrooms", headers=list(headers), data=b"{}", content_type="application/json").get_environ()
    IdentityHeaderFilter(app)(environ, lambda *_: None)
    return seen


def test_identity_headers_are_removed() -> None:
    seen = _seen_headers(
        [
            ("Impersonate-User", "admin"),
            ("Impersonate-Group", "system:masters"),
            ("Impersonate-Uid", "1"),
            ("Impersonate-Extra-Scopes", "all"),
            ("X-Remote-User", "admin"),
            ("X-Remote-Group", "system:masters"),
            ("X-Remote-Extra-Scopes", "all"),
            ("Authorization", "Bearer kept"),
            ("X-Request-Id", "kept"),
        ]
    )
    assert not [k for k in seen if k.startswith(("HTTP_IMPERSONATE_", "HTTP_X_REMOTE_"))], seen
    assert seen["HTTP_AUTHORIZATION"] == "Bearer kept" and seen["HTTP_X_REQUEST_ID"] == "kept"


def test_headers_named_in_connection_are_removed_but_framing_is_kept() -> None:
    seen = _seen_headers(
        [
            ("Connection", "keep-alive, X-Smuggled, Host, Content-Length, Content-Type, Impersonate-User"),
            ("X-Smuggled", "admin"),
            ("Impersonate-User", "admin"),
            ("Host", "localhost:5000"),
            ("X-Other", "kept"),
        ]
    )
    assert "HTTP_X_SMUGGLED" not in seen and "HTTP_IMPERSONATE_USER" not in seen
    assert seen["HTTP_HOST"] == "localhost:5000" and seen["HTTP_X_OTHER"] == "kept"
    assert seen["CONTENT_TYPE"] == "application/json" and seen["CONTENT_LENGTH"] == "2"
    assert "HTTP_CONNECTION" in seen


# -- Login ----------------------------------------------------------------------------------------

TOKEN = "session-token-Sentinel"
REFRESH = "refresh-token-Sentinel"


def test_a_login_survives_its_encoding() -> None:
    login = Login(
        via="oidc",
        token=TOKEN,
        started_at=1_700_000_000,
        ends_at=1_700_043_200,
        refresh_token=REFRESH,
        token_expires_at=1_700_000_600,
        user="oidc:alice",
        groups=("oidc:team-a-editors", "oidc:everyone"),
    )
    assert Login.decode(login.encode()) == login
    assert isinstance(Login.decode(login.encode()).groups, tuple)
    pasted = Login(via="token", token=TOKEN, started_at=1, ends_at=2)
    assert Login.decode(pasted.encode()) == pasted


def test_a_login_keeps_its_tokens_out_of_its_repr() -> None:
    text = repr(Login(via="oidc", token=TOKEN, started_at=1, ends_at=2, refresh_token=REFRESH))
    assert "Sentinel" not in text and "via='oidc'" in text


def test_a_login_expires_at_its_end() -> None:
    login = Login(via="token", token=TOKEN, started_at=100, ends_at=200)
    assert not login.expired(199.9)
    assert login.expired(200) and login.expired(300)


# -- user_from_claims -----------------------------------------------------------------------------


class Unreachable:
    """A transport that must not be used: naming a person from claims asks the cluster nothing."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no request expected")


def _authenticator(**settings: Any) -> Authenticator:
    return Authenticator(
        settings=ApiSettings(
            host="0.0.0.0", identity="impersonate", oidc_issuer_url="https://idp.example.com", oidc_client_id="panel", **settings
        ),
        tokens=TokenReviewer(transport=Unreachable(), ttl_s=10),  # type: ignore[arg-type]
        store=None,
        provider=None,
        attempts=FailedAttempts(limit=10, window_s=60),
    )


def test_the_person_is_named_with_the_prefixes() -> None:
    user = _authenticator().user_from_claims({"sub": "alice", "groups": ["team-a-editors", "everyone"], "email": "a@example.com"})
    # system:authenticated too, as kube-apiserver adds it to everyone it impersonates (the access reviews ask about the
    # same person the writes are decided for)
    assert user == User(name="oidc:alice", groups=("oidc:team-a-editors", "oidc:everyone", AUTHENTICATED), how="oidc")


def test_a_provider_cannot_name_a_system_user_or_group() -> None:
    user = _authenticator().user_from_claims({"sub": "system:admin", "groups": ["system:masters"]})
    assert user.name == "oidc:system:admin" and user.groups == ("oidc:system:masters", AUTHENTICATED)


def test_the_configured_claims_and_prefixes_are_used() -> None:
    authenticator = _authenticator(
        oidc_username_claim="email", oidc_groups_claim="roles", oidc_username_prefix="idp:", oidc_groups_prefix="idp-group:"
    )
    user = authenticator.user_from_claims({"sub": "123", "email": "alice@example.com", "roles": "admins", "groups": ["ignored"]})
    assert user.name == "idp:alice@example.com" and user.groups == ("idp-group:admins", AUTHENTICATED)


@pytest.mark.parametrize("groups", [None, [], 42, {"a": 1}, ["ok", 7, None]])
def test_groups_that_are_not_strings_are_left_out(groups: Any) -> None:
    user = _authenticator().user_from_claims({"sub": "alice", "groups": groups})
    assert user.groups == ((("oidc:ok",) if isinstance(groups, list) and "ok" in groups else ()) + (AUTHENTICATED,))


@pytest.mark.parametrize("claims", [{}, {"sub": ""}, {"sub": 7}, {"sub": None}, {"email": "alice@example.com"}])
def test_a_token_that_names_nobody_is_invalid(claims: dict[str, Any]) -> None:
    with pytest.raises(oidc.InvalidToken, match=r"the ID token has no 'sub' claim"):
        _authenticator().user_from_claims(claims)
