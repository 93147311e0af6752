"""CORS allowlist, security headers and bearer/session authentication of the API.

Covers: no CORS header without an allowlist; an allowed origin gets exactly itself back (simple and
preflight requests), never ``*`` and never credentials; other origins get nothing; security
headers on every response, HSTS on those served over https (and only those); off loopback
without a token the settings refuse to start; with a token every endpoint but /healthz, /readyz and /login answers 401 problem+json with
``WWW-Authenticate: Bearer`` (browsers are redirected to /login, htmx gets HX-Redirect), a valid
bearer token or the session cookie from POST /login passes, the cookie is HttpOnly, SameSite=Strict
and Secure over https, is bound to the token, refuses cross-site writes, and /logout clears it; a
token in the query string is never accepted; the token appears in no log record; the session ends
its configured lifetime after login.
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http.cookies import SimpleCookie
from pathlib import Path

import pytest
from flask import Flask
from support import ClusterProcess, wait_for

from backend.core.access import ClusterAccess
from backend.identity.authentication import safe_next
from backend.identity.sessions import SESSION_COOKIE, SESSION_KEY
from backend.settings import ApiSettings, UnsafeSettings

TOKEN = "t0k3n-Sentinel-8f2c1d9e7a6b"
ALLOWED = "https://dashboard.example.com"


def test_no_cors_headers_without_allowlist(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    response = client.get("/healthz", headers={"Origin": ALLOWED})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = client.options("/healthz", headers={"Origin": ALLOWED, "Access-Control-Request-Method": "GET"})
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_cors_allowlist(make_app: Callable[..., Flask]) -> None:
    client = make_app(cors_origins=f"{ALLOWED}, http://[::1]:8080").test_client()
    allowed = client.get("/healthz", headers={"Origin": ALLOWED})
    assert allowed.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "Origin" in allowed.headers.get("Vary", "")
    assert "Access-Control-Allow-Credentials" not in allowed.headers
    assert "ETag" in allowed.headers["Access-Control-Expose-Headers"]

    ipv6 = client.get("/healthz", headers={"Origin": "http://[::1]:8080"})
    assert ipv6.headers["Access-Control-Allow-Origin"] == "http://[::1]:8080"  # brackets are literal, not a regex class

    for origin in (
        "https://evil.example.com",
        "https://dashboard.example.com.evil.net",
        "http://dashboard.example.com",
        "null",
        "http://1",
    ):
        response = client.get("/healthz", headers={"Origin": origin})
        assert "Access-Control-Allow-Origin" not in response.headers, origin

    preflight = client.options(
        "/healthz",
        headers={"Origin": ALLOWED, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "Authorization, If-Match"},
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "PUT" in preflight.headers["Access-Control-Allow-Methods"]
    assert {"authorization", "if-match"} <= {h.strip().lower() for h in preflight.headers["Access-Control-Allow-Headers"].split(",")}
    denied = client.options("/healthz", headers={"Origin": "https://evil.example.com", "Access-Control-Request-Method": "PUT"})
    assert "Access-Control-Allow-Origin" not in denied.headers
    assert "Access-Control-Allow-Methods" not in denied.headers


def test_wildcard_origin_refused() -> None:
    with pytest.raises(UnsafeSettings):
        ApiSettings(cors_origins="*").check()


def test_security_headers(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    for path in ("/healthz", "/no-such-page", "/openapi.json"):
        headers = client.get(path).headers
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]


def test_hsts_only_over_https(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    for path in ("/healthz", "/no-such-page", "/login"):
        assert client.get(path, base_url="https://localhost").headers["Strict-Transport-Security"] == "max-age=31536000", path
        assert "Strict-Transport-Security" not in client.get(path).headers, path
    off = make_app(hsts_max_age_s=0).test_client()
    assert "Strict-Transport-Security" not in off.get("/healthz", base_url="https://localhost").headers


def test_off_loopback_needs_a_token(make_app: Callable[..., Flask]) -> None:
    with pytest.raises(UnsafeSettings):
        ApiSettings(host="0.0.0.0").check()
    with pytest.raises(UnsafeSettings):
        make_app(host="10.1.2.3")
    assert ApiSettings(host="0.0.0.0", api_token=TOKEN).check().api_token == TOKEN
    assert ApiSettings(host="::1").check().on_loopback


def test_token_required_except_probes(make_app: Callable[..., Flask]) -> None:
    client = make_app(host="0.0.0.0", api_token=TOKEN).test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/login").status_code == 200
    for path in ("/metrics", "/openapi.json", "/docs", "/watch", "/darkrooms", "/no-such-thing"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert response.mimetype == "application/problem+json"
        assert response.headers["WWW-Authenticate"].startswith("Bearer ")
        assert response.get_json()["status"] == 401
    assert client.post("/darkrooms", json={}).status_code == 401

    wrong = client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    assert client.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}x"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get("/metrics", headers={"Authorization": f"bearer  {TOKEN}"}).status_code == 200

    # never in a query string
    for name in ("token", "access_token", "api_token"):
        assert client.get(f"/metrics?{name}={TOKEN}").status_code == 401


def test_browsers_are_sent_to_login(make_app: Callable[..., Flask]) -> None:
    client = make_app(host="0.0.0.0", api_token=TOKEN).test_client()
    browser = client.get("/docs?x=1", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.status_code == 303
    assert browser.headers["Location"] == "/login?next=%2Fdocs%3Fx%3D1"
    htmx = client.get("/metrics", headers={"HX-Request": "true", "HX-Current-URL": "http://localhost:5000/tasks?page=2"})
    assert htmx.status_code == 401
    assert htmx.headers["HX-Redirect"] == "/login?next=%2Ftasks%3Fpage%3D2"

    page = client.get("/login?next=/docs")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    assert 'name="token"' in page.get_data(as_text=True)
    assert 'value="/docs"' in page.get_data(as_text=True)
    assert page.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/docs", "/docs"),
        ("/tasks?page=2", "/tasks?page=2"),
        ("https://evil.example.com/", "/"),
        ("//evil.example.com/x", "/"),
        ("/\\evil.example.com", "/"),
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=1", "/"),
        ("", "/"),
        (None, "/"),
    ],
)
def test_login_redirects_stay_local(raw: str | None, expected: str) -> None:
    assert safe_next(raw) == expected


def session_cookie(set_cookie: str) -> SimpleCookie:
    cookie: SimpleCookie = SimpleCookie()
    cookie.load(set_cookie)
    assert SESSION_COOKIE in cookie
    return cookie


def test_login_cookie_and_logout(make_app: Callable[..., Flask]) -> None:
    app = make_app(host="0.0.0.0", api_token=TOKEN)
    client = app.test_client()
    bad = client.post("/login", data={"token": "nope", "next": "/docs"})
    assert bad.status_code == 401
    assert "Set-Cookie" not in bad.headers
    assert "not valid" in bad.get_data(as_text=True)
    assert client.post("/login", data={"next": "/docs"}).status_code == 400
    assert client.post("/login", json={"token": "nope"}).status_code == 401
    assert client.post("/login", data=TOKEN, content_type="text/plain").status_code == 415

    response = client.post("/login", data={"token": TOKEN, "next": "/docs"})
    assert response.status_code == 303
    assert response.headers["Location"] == "/docs"
    header = response.headers["Set-Cookie"]
    morsel = session_cookie(header)[SESSION_COOKIE]
    assert morsel["httponly"] is True
    assert morsel["samesite"] == "Strict"
    assert not morsel["secure"]  # plain http here
    assert morsel["path"] == "/"
    assert TOKEN not in header
    assert client.get("/docs").status_code == 200
    assert client.get("/metrics").status_code == 200

    # cookie writes from another site are refused even if the browser sent the cookie
    assert client.post("/darkrooms", json={}, headers={"Origin": "https://evil.example.com"}).status_code == 403
    assert client.post("/darkrooms", json={}, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.post("/darkrooms", json={}, headers={"Origin": "http://localhost"}).status_code != 403

    assert client.post("/logout", headers={"Origin": "https://evil.example.com"}).status_code == 403
    assert client.post("/logout", headers={"Origin": "null"}).status_code == 403
    assert client.post("/logout", headers={"Origin": "null", "Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.post("/logout", headers={"Origin": "https://evil.example.com", "Sec-Fetch-Site": "same-site"}).status_code == 403
    assert client.get("/metrics").status_code == 200  # still logged in
    # A browser's own logout form: Origin null (our Referrer-Policy is no-referrer), Sec-Fetch-Site vouches for it.
    logout = client.post("/logout", headers={"Accept": "text/html", "Origin": "null", "Sec-Fetch-Site": "same-origin"})
    assert logout.status_code == 303
    assert logout.headers["Location"] == "/login"
    cleared = session_cookie(logout.headers["Set-Cookie"])[SESSION_COOKIE]
    assert cleared.value == ""
    assert client.get("/metrics").status_code == 401

    json_login = client.post("/login", json={"token": TOKEN})
    assert json_login.status_code == 204
    assert client.get("/metrics").status_code == 200
    assert client.post("/logout").status_code == 204


def test_cookie_secure_over_https_and_bound_to_the_token(make_app: Callable[..., Flask]) -> None:
    app = make_app(host="0.0.0.0", api_token=TOKEN, secret_key="shared-signing-key")
    client = app.test_client()
    response = client.post("/login", data={"token": TOKEN}, base_url="https://panel.example.com")
    morsel = session_cookie(response.headers["Set-Cookie"])[SESSION_COOKIE]
    assert morsel["secure"] is True
    value = morsel.value

    same = make_app(host="0.0.0.0", api_token=TOKEN, secret_key="shared-signing-key").test_client()
    same.set_cookie(SESSION_COOKIE, value)
    assert same.get("/metrics").status_code == 200  # same key and token: e.g. after a restart

    rotated = make_app(host="0.0.0.0", api_token=TOKEN + "-rotated", secret_key="shared-signing-key").test_client()
    rotated.set_cookie(SESSION_COOKIE, value)
    assert rotated.get("/metrics").status_code == 401  # a new token logs everyone out

    forged = make_app(host="0.0.0.0", api_token=TOKEN, secret_key="shared-signing-key").test_client()
    forged.set_cookie(SESSION_COOKIE, value[:-2] + ("AA" if not value.endswith("AA") else "BB"))
    assert forged.get("/metrics").status_code == 401


def test_login_without_token_configured(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    assert client.get("/login?next=/docs").headers["Location"] == "/docs"
    assert client.post("/login", json={"token": "anything"}).status_code == 204
    assert client.post("/login", json={}).status_code == 400
    assert client.get("/metrics").status_code == 200


def test_token_never_logged(make_app: Callable[..., Flask], serve: Callable[[Flask], str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    app = make_app(host="0.0.0.0", api_token=TOKEN)
    url = serve(app)  # a real werkzeug server: its request log lines go through logging too

    def call(path: str, *, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None) -> int:
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            return connection.getresponse().status
        finally:
            connection.close()

    assert call("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}) == 200
    assert call("/metrics", headers={"Authorization": f"Bearer {TOKEN}-wrong"}) == 401
    assert call("/metrics?token=" + TOKEN) == 401
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert call("/login", method="POST", body=f"token={TOKEN}".encode(), headers=form) == 303
    assert call("/login", method="POST", body=f'{{"token": "{TOKEN}x"}}'.encode(), headers={"Content-Type": "application/json"}) == 401
    app.logger.info("settings: %r", app.extensions["darkroom_control_panel"].settings)
    assert caplog.records, "expected request log records"
    assert "/metrics" in caplog.text
    messages = [r.getMessage() for r in caplog.records]
    assert any('"GET /metrics HTTP/1.1" 401' in m for m in messages)  # the query string is not logged
    assert not [m for m in messages if TOKEN in m]


def test_a_copied_session_cookie_dies_at_logout_on_every_replica(
    kube: ClusterProcess, make_app: Callable[..., Flask], namespace: str
) -> None:
    """Issue 12.11: logout revokes the session in the list every replica watches (here two apps with
    caches of their own, sharing the signing key as deploy/'s replicas share its Secret)."""
    settings = ApiSettings(kubeconfig=Path(kube.kubeconfig), session_namespace=namespace)
    accesses = [ClusterAccess.start(settings, environ={}) for _ in range(2)]
    try:
        a, b = (
            make_app(
                access=access, host="0.0.0.0", api_token=TOKEN, secret_key="shared-signing-key", session_namespace=namespace
            ).test_client()
            for access in accesses
        )
        assert a.post("/login", json={"token": TOKEN}).status_code == 204
        copied = a.get_cookie(SESSION_COOKIE)
        assert copied is not None
        b.set_cookie(SESSION_COOKIE, copied.value)
        assert b.get("/metrics").status_code == 200  # the other replica honours the session
        assert a.post("/logout").status_code == 204
        a.set_cookie(SESSION_COOKIE, copied.value)  # a copy kept from before the logout
        assert a.get("/metrics").status_code == 401
        wait_for(lambda: b.get("/metrics").status_code == 401, timeout_s=10, message="the other replica to refuse the copy")
        assert a.post("/login", json={"token": TOKEN}).status_code == 204  # a new session works
        assert a.get("/metrics").status_code == 200
    finally:
        for access in accesses:
            access.stop()


def test_wrong_tokens_are_limited_per_client(make_app: Callable[..., Flask]) -> None:
    """Issue 12.11: after 3 wrong tokens (header or login) an address waits out the window, right token or not."""
    app = make_app(host="0.0.0.0", api_token=TOKEN, auth_failures_max=3, auth_failure_window_s=60)
    guesser, other = app.test_client(), app.test_client()
    guesser.environ_base["REMOTE_ADDR"], other.environ_base["REMOTE_ADDR"] = "198.51.100.7", "198.51.100.8"
    assert guesser.get("/metrics", headers={"Authorization": "Bearer guess-1"}).status_code == 401
    assert guesser.post("/login", json={"token": "guess-2"}).status_code == 401
    assert guesser.get("/metrics", headers={"Authorization": "Bearer guess-3"}).status_code == 401
    limited = guesser.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert limited.status_code == 429 and 0 < int(limited.headers["Retry-After"]) <= 60
    assert guesser.post("/login", json={"token": TOKEN}).status_code == 429
    assert other.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200  # per client


def test_the_host_header_is_checked_against_dns_rebinding(make_app: Callable[..., Flask]) -> None:
    """Issue 12.3: open on loopback, only the loopback names; with DARKROOM_API_ALLOWED_HOSTS, those."""
    client = make_app().test_client()  # loopback, no token: the mode a rebinding attack targets
    assert client.get("/darkrooms", headers={"Host": "attacker.example:5000"}).status_code == 400
    rebound = client.post("/darkrooms", json={}, headers={"Host": "attacker.example:5000", "Origin": "http://attacker.example:5000"})
    assert rebound.status_code == 400 and "DNS rebinding" in rebound.get_json()["detail"]
    for host in ("localhost:5000", "127.0.0.1:5000", "[::1]:5000", "LOCALHOST"):
        assert client.get("/darkrooms", headers={"Host": host}).status_code == 200, host
    assert client.get("/healthz", headers={"Host": "10.244.0.7:5000"}).status_code == 200  # kubelet probes
    named = make_app(host="0.0.0.0", api_token=TOKEN, allowed_hosts="panel.example.com").test_client()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert named.get("/metrics", headers={"Host": "panel.example.com", **auth}).status_code == 200
    assert named.get("/metrics", headers={"Host": "other.example.com", **auth}).status_code == 400


def test_the_session_lasts_the_configured_lifetime_from_login(make_app: Callable[..., Flask]) -> None:
    """Issue 16.4: DARKROOM_API_SESSION_LIFETIME_S is the cookie's lifetime and the session's, counted from login."""
    app = make_app(host="0.0.0.0", api_token=TOKEN, secret_key="shared-signing-key", session_lifetime_s=600)
    client = app.test_client()
    response = client.post("/login", json={"token": TOKEN})
    assert response.status_code == 204
    morsel = session_cookie(response.headers["Set-Cookie"])[SESSION_COOKIE]
    assert 590 <= (parsedate_to_datetime(morsel["expires"]) - datetime.now(UTC)).total_seconds() <= 600
    assert client.get("/metrics").status_code == 200

    signer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
    logged_in = signer.loads(morsel.value)
    logged_in[SESSION_KEY]["t"] -= 601  # the same session, logged in longer ago than its lifetime
    client.set_cookie(SESSION_COOKIE, signer.dumps(logged_in))
    assert client.get("/metrics").status_code == 401
    assert ApiSettings.from_environ({"DARKROOM_API_SESSION_LIFETIME_S": "3600"}).session_lifetime_s == 3600
    with pytest.raises(UnsafeSettings):
        ApiSettings(session_lifetime_s=0).check()
