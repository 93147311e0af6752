"""Web hardening and who is calling, over HTTP, on both clusters (devcluster with its admin token; the real control plane
with a ServiceAccount's token, TokenReview and all).

Covers:

- hardening: no CORS header without an allowlist; an allowed origin gets exactly itself back (simple and preflight
  requests), never ``*`` and never credentials; security headers on every response, HSTS over https only; the Host
  check against DNS rebinding (loopback names by default, the configured names otherwise, probes answer any host);
- the local mode (loopback, the default): everything answers without credentials, as the kubeconfig's identity
  (``/login`` goes straight on, a login's token is not checked), a bearer token sent anyway is still checked (a
  wrong one is 401), identity headers change nothing;
- the login mode: anonymous API requests get 401 problem+json with ``WWW-Authenticate: Bearer``, a navigating
  browser is redirected to ``/login?next=…``, an htmx request gets ``HX-Redirect``; the probes and ``/login`` stay
  open; a valid bearer token passes, a wrong one is 401 ``invalid_token``, another scheme ``invalid_request``, a
  token in the query string is never read;
- sessions: ``POST /login`` with a valid token (form and JSON) starts one — the cookie HttpOnly, SameSite=Strict,
  Secure over https, signed, holding only the session's random id (decoded: no token), the token in a labelled
  Secret of the session namespace named by a digest of that id; every login a new id with nothing of the cookie
  before (no fixation); a tampered cookie or one signed with another key is nobody's; the session lasts its
  lifetime from login, then ends (and its Secret is swept at the next login); logout deletes the Secret, so a copy
  of the cookie stops at once on this replica and within moments on another;
- cross-site: POSTs riding the session cookie, ``/login`` and ``/logout`` from another site are refused;
- the wrong-credential limiter: past ``auth_failures_max`` wrong tokens from one address the next wrong one is 429
  with ``Retry-After`` (header, form and JSON login), while a valid token from that address is still accepted, and
  other addresses are not affected;
- tokens appear in no log record (every logger, werkzeug's access log included), no response header or body, no
  HTML page, no URL;
- ``Impersonate-*`` and ``X-Remote-*`` headers, also named in ``Connection``, authenticate nobody.

What only the real control plane can show (a person's own rights, a panel that may not delete Secrets) is in
test_logins_real.py.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask

from backend.core.access import SESSIONS_LABELS, ClusterAccess
from backend.identity.authenticating import SESSION_ID
from backend.identity.cookies import SESSION_COOKIE
from backend.identity.sessions import DATA_KEY, ENDS_AT, SECRET_TYPE, Login, secret_name
from backend.settings import ApiSettings, UnsafeSettings
from tests.clusters import ClusterProcess
from tests.identity.logins import Person, login_settings, set_cookie, signed_cookie
from tests.support import wait_for

ALLOWED = "https://dashboard.example.com"
WRONG = "wrong-token-Sentinel-8f2c1d9e7a6b"
NAVIGATING = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
IDENTITY_HEADERS = {
    "Impersonate-User": "kubernetes-admin",
    "Impersonate-Group": "system:masters",
    "X-Remote-User": "kubernetes-admin",
    "X-Remote-Group": "system:masters",
    "Connection": "keep-alive, Impersonate-User, X-Remote-User",
}
LOGIN_MODE_PATHS = ("/metrics", "/openapi.json", "/docs", "/watch", "/darkrooms", "/namespaces", "/", "/ui/tasks", "/no-such-thing")


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    assert body["status"] == status
    return body


def _session_id(app: Flask, response: Any) -> str:
    held = signed_cookie(app, set_cookie(response.headers["Set-Cookie"]).value)
    assert set(held) == {SESSION_ID, "_permanent"}, held  # the id (and Flask's flag): no token, nothing of an earlier session
    session_id: str = held[SESSION_ID]
    return session_id


def _secret(api_client: Any, namespace: str, session_id: str) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api_client).read_namespaced_secret(secret_name(session_id), namespace)


def _secret_gone(api_client: Any, namespace: str, session_id: str) -> bool:
    from kubernetes import client

    try:
        _secret(api_client, namespace, session_id)
    except client.ApiException as e:
        return bool(e.status == 404)
    return False


# -- hardening ------------------------------------------------------------------------------------


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


def test_security_headers(make_app: Callable[..., Flask], make_login_app: Callable[..., Flask]) -> None:
    for client in (make_app().test_client(), make_login_app().test_client()):
        for path in ("/healthz", "/no-such-page", "/openapi.json", "/login"):
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


def test_the_host_header_is_checked_against_dns_rebinding(
    make_app: Callable[..., Flask], make_login_app: Callable[..., Flask], person: Person
) -> None:
    client = make_app().test_client()  # the local mode: the one a rebinding attack targets
    assert client.get("/darkrooms", headers={"Host": "attacker.example:5000"}).status_code == 400
    rebound = client.post("/darkrooms", json={}, headers={"Host": "attacker.example:5000", "Origin": "http://attacker.example:5000"})
    assert rebound.status_code == 400 and "DNS rebinding" in rebound.get_json()["detail"]
    for host in ("localhost:5000", "127.0.0.1:5000", "[::1]:5000", "LOCALHOST"):
        assert client.get("/darkrooms", headers={"Host": host}).status_code == 200, host
    assert client.get("/healthz", headers={"Host": "10.244.0.7:5000"}).status_code == 200  # kubelet probes
    named = make_login_app(allowed_hosts="panel.example.com").test_client()
    assert named.get("/metrics", headers={"Host": "panel.example.com", **person.bearer}).status_code == 200
    assert named.get("/metrics", headers={"Host": "other.example.com", **person.bearer}).status_code == 400


# -- the local mode -------------------------------------------------------------------------------


def test_the_local_mode_needs_no_credentials(make_app: Callable[..., Flask], namespace: str, person: Person) -> None:
    app = make_app()
    assert app.extensions["darkroom_control_panel"].settings.local
    client = app.test_client()
    for path in ("/metrics", "/openapi.json", "/docs", "/darkrooms", "/namespaces", "/", "/ui/tasks"):
        assert client.get(path).status_code == 200, path
    body = {"name": "local", "namespace": namespace, "source": {"type": "WebFolder", "baseUrl": "https://example.com/i"},
            "subDomains": [f"local-{namespace}"]}  # fmt: skip
    assert client.post("/darkrooms", json=body).status_code == 201  # as the kubeconfig's identity
    assert client.get("/login?next=/docs").headers["Location"] == "/docs"  # nothing to log in to
    assert client.post("/login", json={"token": "anything"}).status_code == 204
    assert client.post("/login", json={}).status_code == 400  # what a login request is stays the same
    assert client.post("/login", data={"token": "anything", "next": "/ui/tasks"}).headers["Location"] == "/ui/tasks"
    assert client.post("/logout").status_code == 204
    # A credential sent anyway is checked: the API never guesses past a wrong one.
    wrong = client.get("/darkrooms", headers={"Authorization": f"Bearer {WRONG}"})
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"] and _problem(wrong, 401)
    assert client.get("/darkrooms", headers=person.bearer).status_code == 200
    # Identity headers change nothing either.
    assert client.get("/darkrooms", headers=IDENTITY_HEADERS).status_code == 200


# -- the login mode: who may come in --------------------------------------------------------------


def test_anonymous_requests_get_401_and_browsers_the_login_page(make_login_app: Callable[..., Flask], person: Person) -> None:
    client = make_login_app().test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    for path in LOGIN_MODE_PATHS:
        response = client.get(path, headers={"Accept": "application/json"})
        _problem(response, 401)
        assert response.headers["WWW-Authenticate"].startswith('Bearer realm="darkroom-control-panel"'), path
    _problem(client.post("/darkrooms", json={}), 401)
    _problem(client.delete("/darkrooms/default/x"), 401)

    browser = client.get("/docs?x=1", headers=NAVIGATING)
    assert browser.status_code == 303 and browser.headers["Location"] == "/login?next=%2Fdocs%3Fx%3D1"
    htmx = client.get("/ui/tasks", headers={"HX-Request": "true", "HX-Current-URL": "http://localhost:5000/ui/tasks?page=2"})
    assert htmx.status_code == 401 and htmx.headers["HX-Redirect"] == "/login?next=%2Fui%2Ftasks%3Fpage%3D2"

    page = client.get("/login?next=/docs")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.mimetype == "text/html" and page.headers["Cache-Control"] == "no-store"
    assert 'name="token"' in html and 'value="/docs"' in html
    assert 'value="/"' in client.get("/login?next=https://evil.example.com/").get_data(as_text=True)  # never another site


def test_bearer_tokens(make_login_app: Callable[..., Flask], person: Person) -> None:
    client = make_login_app().test_client()
    for path in ("/metrics", "/darkrooms", "/namespaces", "/openapi.json"):
        assert client.get(path, headers=person.bearer).status_code == 200, path
    assert client.get("/metrics", headers={"Authorization": f"bearer  {person.token}"}).status_code == 200
    wrong = client.get("/metrics", headers={"Authorization": f"Bearer {WRONG}"})
    _problem(wrong, 401)
    assert wrong.headers["WWW-Authenticate"] == 'Bearer realm="darkroom-control-panel", error="invalid_token"'
    _problem(client.get("/metrics", headers={"Authorization": f"Bearer {person.token}x"}), 401)
    basic = client.get("/metrics", headers={"Authorization": f"Basic {person.token}"})
    assert 'error="invalid_request"' in basic.headers["WWW-Authenticate"] and _problem(basic, 401)
    for name in ("token", "access_token", "api_token"):  # never read from a query string
        _problem(client.get(f"/metrics?{name}={person.token}", headers={"Accept": "application/json"}), 401)


def test_identity_headers_authenticate_nobody(make_login_app: Callable[..., Flask], person: Person) -> None:
    client = make_login_app().test_client()
    _problem(client.get("/darkrooms", headers=IDENTITY_HEADERS), 401)
    _problem(client.get("/darkrooms", headers={**IDENTITY_HEADERS, "Authorization": f"Bearer {WRONG}"}), 401)
    assert client.get("/darkrooms", headers={**IDENTITY_HEADERS, **person.bearer}).status_code == 200


# -- sessions -------------------------------------------------------------------------------------


def test_a_token_login_starts_a_session_that_holds_no_token(
    make_login_app: Callable[..., Flask], person: Person, api_client: Any, session_namespace: str
) -> None:
    app = make_login_app()
    client = app.test_client()
    bad = client.post("/login", data={"token": WRONG, "next": "/docs"})
    assert bad.status_code == 401 and "Set-Cookie" not in bad.headers and "does not accept that token" in bad.get_data(as_text=True)
    assert client.post("/login", data={"next": "/docs"}).status_code == 400
    _problem(client.post("/login", json={"token": WRONG}), 401)
    _problem(client.post("/login", data=person.token, content_type="text/plain"), 415)

    response = client.post("/login", data={"token": person.token, "next": "/docs"})
    assert response.status_code == 303 and response.headers["Location"] == "/docs"
    morsel = set_cookie(response.headers["Set-Cookie"])
    assert morsel["httponly"] is True and morsel["samesite"] == "Strict" and morsel["path"] == "/"
    assert not morsel["secure"]  # plain http here
    assert person.token not in response.headers["Set-Cookie"]
    session_id = _session_id(app, response)
    assert client.get("/docs").status_code == 200
    assert client.get("/darkrooms").status_code == 200

    secret = _secret(api_client, session_namespace, session_id)
    assert secret.metadata.name == secret_name(session_id) and session_id not in secret.metadata.name
    assert secret.metadata.labels == SESSIONS_LABELS and secret.type == SECRET_TYPE
    stored = Login.decode(base64.b64decode(secret.data[DATA_KEY]))
    assert stored.via == "token" and stored.token == person.token  # the token lives here, and only here

    json_login = client.post("/login", json={"token": person.token})
    assert json_login.status_code == 204 and _session_id(app, json_login) != session_id
    over_https = client.post("/login", json={"token": person.token}, base_url="https://localhost")
    assert set_cookie(over_https.headers["Set-Cookie"])["secure"] is True


def test_every_login_is_a_new_session(make_login_app: Callable[..., Flask], person: Person) -> None:
    """No fixation: a login keeps nothing of the cookie it came with, not its id, not its CSRF value."""
    app = make_login_app()
    client = app.test_client()
    first = _session_id(app, client.post("/login", json={"token": person.token}))
    assert client.get("/ui/tasks/new").status_code == 200  # the page put a CSRF value into the cookie
    cookie = client.get_cookie(SESSION_COOKIE)
    assert cookie is not None and "csrf_token" in signed_cookie(app, cookie.value)
    second = _session_id(app, client.post("/login", json={"token": person.token}))
    assert second != first
    another = app.test_client()
    assert _session_id(app, another.post("/login", json={"token": person.token})) not in (first, second)


def test_a_session_cookie_is_only_good_signed_with_the_key(make_login_app: Callable[..., Flask], person: Person) -> None:
    app = make_login_app()
    client = app.test_client()
    assert client.post("/login", json={"token": person.token}).status_code == 204
    cookie = client.get_cookie(SESSION_COOKIE)
    assert cookie is not None
    replica = make_login_app().test_client()  # same key: another replica, or this one after a restart
    replica.set_cookie(SESSION_COOKIE, cookie.value)
    assert replica.get("/metrics").status_code == 200
    other_key = make_login_app(secret_key="another-key").test_client()
    other_key.set_cookie(SESSION_COOKIE, cookie.value)
    _problem(other_key.get("/metrics"), 401)
    tampered = make_login_app().test_client()
    tampered.set_cookie(SESSION_COOKIE, cookie.value[:-2] + ("AA" if not cookie.value.endswith("AA") else "BB"))
    _problem(tampered.get("/metrics"), 401)
    forged = app.session_interface.get_signing_serializer(app).dumps({SESSION_ID: "a-session-id-nobody-was-given"})  # type: ignore[attr-defined]
    made_up = make_login_app().test_client()
    made_up.set_cookie(SESSION_COOKIE, forged)  # even with the key: an id without a session is nobody
    _problem(made_up.get("/metrics"), 401)


def test_a_session_lasts_its_lifetime_from_login(
    make_login_app: Callable[..., Flask], person: Person, api_client: Any, session_namespace: str
) -> None:
    app = make_login_app(session_lifetime_s=3)
    client = app.test_client()
    response = client.post("/login", json={"token": person.token})
    assert response.status_code == 204
    session_id = _session_id(app, response)
    expires = parsedate_to_datetime(set_cookie(response.headers["Set-Cookie"])["expires"])
    assert 0 < (expires - datetime.now(UTC)).total_seconds() <= 3
    ends_at = int(_secret(api_client, session_namespace, session_id).metadata.annotations[ENDS_AT])
    assert 0 < ends_at - datetime.now(UTC).timestamp() <= 3
    assert client.get("/metrics").status_code == 200
    wait_for(lambda: client.get("/metrics").status_code == 401, timeout_s=15, message="the session to end")
    assert client.get("/darkrooms", headers=NAVIGATING).headers["Location"] == "/login?next=%2Fdarkrooms"

    again = app.test_client().post("/login", json={"token": person.token})  # each login sweeps the sessions that ended
    assert again.status_code == 204 and _secret_gone(api_client, session_namespace, session_id)


def test_logout_ends_the_session_for_every_copy_of_the_cookie(
    kube: ClusterProcess, make_login_app: Callable[..., Flask], person: Person, api_client: Any, session_namespace: str
) -> None:
    """Two replicas, each with its own cache, sharing the signing key: logout deletes the session's Secret."""
    other_access = ClusterAccess.start(login_settings(kube.kubeconfig, session_namespace), environ={})
    try:
        app = make_login_app()
        a, b = app.test_client(), make_login_app(access=other_access).test_client()
        login = a.post("/login", json={"token": person.token})
        session_id = _session_id(app, login)
        copied = a.get_cookie(SESSION_COOKIE)
        assert copied is not None
        b.set_cookie(SESSION_COOKIE, copied.value)
        assert b.get("/metrics").status_code == 200  # the other replica honours the session

        logout = a.post("/logout")
        assert logout.status_code == 204 and set_cookie(logout.headers["Set-Cookie"]).value == ""
        assert _secret_gone(api_client, session_namespace, session_id)
        a.set_cookie(SESSION_COOKIE, copied.value)  # a copy kept from before the logout
        _problem(a.get("/metrics"), 401)  # at once, here
        wait_for(lambda: b.get("/metrics").status_code == 401, timeout_s=10, message="the other replica to refuse the copy")

        assert a.post("/login", json={"token": person.token}).status_code == 204  # a new session works
        # A browser's own logout form: Origin null (our Referrer-Policy is no-referrer), Sec-Fetch-Site vouches for it.
        form = a.post("/logout", headers={"Accept": "text/html", "Origin": "null", "Sec-Fetch-Site": "same-origin"})
        assert form.status_code == 303 and form.headers["Location"] == "/login?logged_out=1"
        assert "You are logged out." in a.get(form.headers["Location"]).get_data(as_text=True)
        _problem(a.get("/metrics"), 401)
    finally:
        other_access.stop()


def test_cross_site_requests_with_the_session_are_refused(make_login_app: Callable[..., Flask], person: Person, namespace: str) -> None:
    client = make_login_app(cors_origins=ALLOWED).test_client()
    evil = {"Origin": "https://evil.example.com"}
    refused_login = client.post("/login", json={"token": person.token}, headers=evil)
    assert _problem(refused_login, 403) and "Set-Cookie" not in refused_login.headers
    _problem(client.post("/login", data={"token": person.token}, headers={"Sec-Fetch-Site": "cross-site"}), 403)
    assert client.post("/login", json={"token": person.token}).status_code == 204

    # Writes riding the cookie from another site are refused even though the browser sent the cookie...
    _problem(client.post("/darkrooms", json={}, headers=evil), 403)
    _problem(client.post("/darkrooms", json={}, headers={"Sec-Fetch-Site": "cross-site"}), 403)
    _problem(client.delete(f"/darkrooms/{namespace}/x", headers={"Origin": "https://evil.example.com", "Sec-Fetch-Site": "same-site"}), 403)
    # ...not those from this site or an allowed origin (which then fail on their merits), nor reads.
    for same in ({"Origin": "http://localhost"}, {"Sec-Fetch-Site": "same-origin"}, {"Origin": ALLOWED}):
        assert client.post("/darkrooms", json={}, headers=same).status_code == 422, same
    assert client.get("/darkrooms", headers=evil).status_code == 200

    for headers in (evil, {"Origin": "null"}, {"Origin": "null", "Sec-Fetch-Site": "cross-site"}):
        _problem(client.post("/logout", headers=headers), 403)
    assert client.get("/metrics").status_code == 200  # still logged in


# -- the wrong-credential limiter ------------------------------------------------------------------


def test_wrong_tokens_are_limited_but_a_valid_one_is_always_accepted(make_login_app: Callable[..., Flask], person: Person) -> None:
    app = make_login_app(auth_failures_max=3, auth_failure_window_s=60)
    guesser, other = app.test_client(), app.test_client()
    guesser.environ_base["REMOTE_ADDR"], other.environ_base["REMOTE_ADDR"] = "198.51.100.7", "198.51.100.8"
    _problem(guesser.get("/metrics", headers={"Authorization": f"Bearer {WRONG}-1"}), 401)
    _problem(guesser.post("/login", json={"token": f"{WRONG}-2"}), 401)
    assert guesser.post("/login", data={"token": f"{WRONG}-3"}).status_code == 401

    limited = guesser.get("/metrics", headers={"Authorization": f"Bearer {WRONG}-4"})
    assert 0 < int(limited.headers["Retry-After"]) <= 60 and _problem(limited, 429)
    json_limited = guesser.post("/login", json={"token": f"{WRONG}-5"})
    assert 0 < int(json_limited.headers["Retry-After"]) <= 60 and _problem(json_limited, 429)
    form_limited = guesser.post("/login", data={"token": f"{WRONG}-6"})
    assert form_limited.status_code == 429 and "Too many wrong tokens from this address" in form_limited.get_data(as_text=True)

    # Behind an ingress every user shares one address: the right token is never refused for others' mistakes.
    assert guesser.get("/metrics", headers=person.bearer).status_code == 200
    form = guesser.post("/login", data={"token": person.token, "next": "/docs"})
    assert form.status_code == 303 and form.headers["Location"] == "/docs"
    assert guesser.get("/metrics").status_code == 200  # the session it started
    assert guesser.post("/login", json={"token": person.token}).status_code == 204
    _problem(other.get("/metrics", headers={"Authorization": f"Bearer {WRONG}"}), 401)  # counted per address


# -- tokens stay secret ---------------------------------------------------------------------------


@pytest.fixture
def every_log_record(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog seeing every logger at DEBUG, those that do not propagate to the root included."""
    caplog.set_level(logging.DEBUG)
    loggers = [
        logging.getLogger(name) for name in list(logging.root.manager.loggerDict) if isinstance(logging.getLogger(name), logging.Logger)
    ]
    for logger in loggers:
        caplog.set_level(logging.DEBUG, logger=logger.name)
    isolated = [logger for logger in loggers if not logger.propagate]
    for logger in isolated:
        logger.addHandler(caplog.handler)
    yield caplog
    for logger in isolated:
        logger.removeHandler(caplog.handler)


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: str


class Browser:
    """A raw HTTP client with one cookie jar slot (http.client logs nothing, so every record captured is the server's)."""

    def __init__(self, url: str) -> None:
        self.netloc = url.removeprefix("http://")
        self.cookie = ""
        self.answers: list[Answer] = []

    def call(
        self, method: str, path: str, *, form: dict[str, str] | None = None, json_body: Any = None, headers: dict[str, str] | None = None
    ) -> int:
        headers = dict(headers or {})
        body: bytes | None = None
        if form is not None:
            body, headers["Content-Type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        elif json_body is not None:
            body, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
        if self.cookie:
            headers["Cookie"] = self.cookie
        connection = http.client.HTTPConnection(self.netloc, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            answer = Answer(response.status, response.getheaders(), response.read().decode())
        finally:
            connection.close()
        self.answers.append(answer)
        for name, value in answer.headers:
            if name.lower() == "set-cookie" and value.startswith(f"{SESSION_COOKIE}="):
                self.cookie = value.split(";", 1)[0]
        return answer.status


def test_tokens_are_never_logged_shown_or_put_in_a_url(
    make_login_app: Callable[..., Flask], serve: Callable[[Flask], str], person: Person, every_log_record: pytest.LogCaptureFixture
) -> None:
    browser = Browser(serve(make_login_app(auth_failures_max=2)))  # a real werkzeug server: its access log goes through logging
    call = browser.call
    assert call("GET", "/metrics", headers=person.bearer) == 200
    for attempt in range(3):  # wrong, then limited
        assert call("GET", "/metrics", headers={"Authorization": f"Bearer {WRONG}"}) in (401, 429), attempt
    assert call("GET", f"/metrics?token={person.token}&access_token={person.token}") == 401
    assert call("POST", "/login", form={"token": WRONG, "next": "/ui/tasks"}) == 429
    assert call("POST", "/login", json_body={"token": WRONG}) == 429
    assert call("POST", "/login", form={"token": person.token, "next": "/ui/tasks"}) == 303
    for path in ("/ui/tasks", "/", "/login", "/docs", "/openapi.json", "/darkrooms", "/namespaces"):
        assert call("GET", path, headers=NAVIGATING) == 200, path
    assert call("POST", "/logout", headers={"Accept": "text/html", "Sec-Fetch-Site": "same-origin"}) == 303
    assert call("POST", "/login", json_body={"token": person.token}) == 204

    messages = [r.getMessage() + (r.exc_text or "") for r in every_log_record.records]
    assert any('"GET /metrics HTTP/1.1" 401' in m for m in messages), messages  # the access log, without its query string
    for secret in (person.token, WRONG):
        assert not [m for m in messages if secret in m]
        for answer in browser.answers:  # bodies (problems, HTML pages) and headers (Location: the URLs we send browsers to)
            assert secret not in answer.body
            assert not [(k, v) for k, v in answer.headers if secret in v]
