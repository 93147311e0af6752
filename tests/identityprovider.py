"""A real OpenID Connect provider for the tests: ORY Hydra v2, its login/consent app, tokens from it.

Owns everything the identity tests need on the provider's side:

- :class:`HydraProcess`: ``realcluster/bin/hydra serve all`` (built by ``scripts/build_hydra.sh``) on 127.0.0.1 with
  free ports: the public port over HTTPS (kube-apiserver accepts only an https issuer) with a CA and server
  certificate made here (SAN 127.0.0.1 and localhost; ``ca_path``), the admin port over plain HTTP; the store in
  memory, or in a SQLite file of the data dir (``persistent=True``: clients and keys survive a restart; its
  migrations run before each start); token lifetimes set per instance (``access_token_ttl``, ``id_token_ttl``,
  ``refresh_token_ttl``) or per client (:meth:`HydraProcess.register_client`); its log in ``<data-dir>/hydra.log``.
- :class:`LoginConsentApp`: the login, consent and logout pages Hydra redirects to (started and stopped with the
  HydraProcess), over a table of :class:`User` (``HydraProcess.users``, by default :data:`USERS`; tests may add to it).
- :meth:`HydraProcess.authorization_code_tokens`: the authorization-code flow (PKCE by default) driven without a
  browser, as a browser would: follow the redirects, fill in the login form, read ``code`` off the redirect to the
  client's ``redirect_uri`` (which need not listen), exchange it at the token endpoint. :meth:`HydraProcess.refresh`
  is the refresh_token grant, :meth:`HydraProcess.revoke` the revocation of a token, :meth:`HydraProcess.logout` the
  RP-initiated logout (in the cookie jar of :meth:`HydraProcess.browser` that signed in).
  :meth:`HydraProcess.add_redirect_uris` lets a registered client send browsers to more places (another relying party
  on another port using the same client).
- a test signing key: the JWKS Hydra publishes (``/.well-known/jwks.json``) also holds the public half of an RSA key
  this module made (key set :data:`TEST_KEY_SET`), so :meth:`HydraProcess.mint_token` signs tokens with claims of the
  test's choosing that pass a relying party's signature check (a wrong issuer, an odd claim) — and, with
  :func:`sign_jwt` and a key of its own, tokens that must not.
- :func:`authentication_configuration`: kube-apiserver's structured ``AuthenticationConfiguration``
  (``apiserver.config.k8s.io/v1``) with one JWT authenticator trusting an issuer.

How the login/consent app works (Hydra's "login & consent provider"; Hydra keeps no users of its own):

1. The client sends the browser to Hydra's ``/oauth2/auth``; Hydra redirects it to ``<app>/login?login_challenge=C``.
2. ``GET /login`` asks Hydra's admin API about the challenge; unless Hydra says to skip (a remembered session) it
   answers a form: ``Username`` and ``Password`` (labelled inputs, ids ``username``/``password``) and a ``Sign in``
   button. ``POST /login`` checks the pair against the users table: a match is accepted through the admin API
   (``subject`` = the username; Hydra remembers the login for an hour in its session cookie, so the next
   authorization in that browser skips the form) and the browser redirected where Hydra says; otherwise the form
   comes back (200) with an error (``role="alert"``).
3. Hydra then redirects to ``<app>/consent?consent_challenge=C``; consent is given at once for every scope asked,
   with the user's claims put into the ID token according to those scopes: ``email`` and ``email_verified``
   (scope ``email``), ``name`` and ``preferred_username`` (``profile``), ``groups`` (``groups``). Hydra then
   redirects to the client's ``redirect_uri`` with the code.
4. ``GET /logout?logout_challenge=C`` (RP-initiated logout, Hydra's ``/oauth2/sessions/logout``) is accepted at once:
   Hydra ends the remembered login and redirects to the client's ``post_logout_redirect_uri``.

Every request the app answers is logged to ``<data-dir>/login-app.log``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import html
import ipaddress
import json
import secrets
import signal
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.clusters import ROOT, free_ports

HYDRA_BIN = ROOT / "realcluster" / "bin" / "hydra"
DEFAULT_SCOPES = ("openid", "profile", "email", "groups", "offline_access")
# The key set whose public key Hydra publishes beside its own and whose private key stays with the test (mint_token).
TEST_KEY_SET = "test.signing"
# The control panel's own client at the provider (tests/identityfixtures.py registers it); kube-apiserver of the
# oidc_realcluster trusts its ID tokens too, so the panel can pass a person's token through.
PANEL_CLIENT_ID = "darkroom-control-panel"
TEST_KEY_ID = "test-signing-key"
_HTTP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class User:
    """A person who can sign in at the login app; ``groups`` go into the ID token's ``groups`` claim."""

    username: str
    password: str
    groups: tuple[str, ...] = ()

    @property
    def email(self) -> str:
        return f"{self.username}@example.com"

    @property
    def name(self) -> str:
        return self.username.capitalize()


USERS: Mapping[str, User] = {
    "alice": User("alice", "alice-password", ("team-a-editors",)),
    "bob": User("bob", "bob-password", ("team-a-viewers", "team-b-editors")),
    "carol": User("carol", "carol-password", ()),
}


@dataclass(frozen=True)
class OAuthClient:
    """A client registered with Hydra (the credentials the code flow and the refresh grant authenticate with)."""

    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    post_logout_redirect_uris: tuple[str, ...] = ()
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    token_endpoint_auth_method: str = "client_secret_basic"


@dataclass(frozen=True)
class Tokens:
    """A token endpoint's answer: ``refresh_token`` only when ``offline_access`` was granted."""

    id_token: str
    access_token: str
    refresh_token: str | None
    expires_in: int
    scope: tuple[str, ...]


class OIDCError(AssertionError):
    """The provider refused a step of a flow (the message says which and what it answered)."""


# --- JWTs ---------------------------------------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_header(token: str) -> dict[str, Any]:
    """The JOSE header of a compact JWS, unverified."""
    header: dict[str, Any] = json.loads(_b64url_decode(token.split(".")[0]))
    return header


def jwt_claims(token: str) -> dict[str, Any]:
    """The claims of a compact JWS, unverified (the tests look at what the provider issued; kube-apiserver verifies)."""
    claims: dict[str, Any] = json.loads(_b64url_decode(token.split(".")[1]))
    return claims


def sign_jwt(claims: Mapping[str, Any], key: rsa.RSAPrivateKey, kid: str) -> str:
    """A compact RS256 JWS of ``claims`` (RS256: the one algorithm kube-apiserver's JWT authenticator accepts by default)."""
    header = {"alg": "RS256", "typ": "JWT", "kid": kid}
    signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(dict(claims)).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64url(signature)}"


def verify_jwt(token: str, jwks: Mapping[str, Any]) -> dict[str, Any]:
    """The claims of an RS256 JWS whose signature one key of ``jwks`` (a JWK Set, by ``kid``) verifies; else OIDCError."""
    header = jwt_header(token)
    keys = [key for key in jwks["keys"] if key.get("kid") == header.get("kid")]
    if header.get("alg") != "RS256" or len(keys) != 1:
        raise OIDCError(f"no RS256 key {header.get('kid')!r} in the JWKS (header {header})")
    numbers = rsa.RSAPublicNumbers(int.from_bytes(_b64url_decode(keys[0]["e"]), "big"), int.from_bytes(_b64url_decode(keys[0]["n"]), "big"))
    signing_input, _, signature = token.rpartition(".")
    try:
        numbers.public_key().verify(_b64url_decode(signature), signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature as e:
        raise OIDCError(f"the signature of the token does not verify with key {header['kid']!r}") from e
    return jwt_claims(token)


def rsa_jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, str]:
    """``key`` as a private JWK (RFC 7518 6.3), the form Hydra's admin API imports keys in."""

    def b64(n: int) -> str:
        return _b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))

    private = key.private_numbers()
    public = private.public_numbers
    return {
        "kty": "RSA",
        "kid": kid,
        "use": "sig",
        "alg": "RS256",
        "n": b64(public.n),
        "e": b64(public.e),
        "d": b64(private.d),
        "p": b64(private.p),
        "q": b64(private.q),
        "dp": b64(private.dmp1),
        "dq": b64(private.dmq1),
        "qi": b64(private.iqmp),
    }


def new_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _session(ca_path: Path | None = None) -> requests.Session:
    """An HTTP session for loopback: neither a proxy nor a CA bundle from the environment (REQUESTS_CA_BUNDLE would
    override a session's own ``verify``); HTTPS verified against ``ca_path``."""
    http = requests.Session()
    http.trust_env = False
    if ca_path is not None:
        http.verify = str(ca_path)
    return http


# --- certificates -------------------------------------------------------------------------------------------------


def _write_ca_and_server_certificate(pki: Path) -> None:
    """``ca.crt`` and ``tls.crt``/``tls.key`` (signed by it; SAN 127.0.0.1 and localhost, EKU serverAuth) in ``pki``."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "identity provider test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),  # keyCertSign, cRLSign
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, False, False, False, False),  # digitalSignature
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pki.mkdir(parents=True, exist_ok=True)
    (pki / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (pki / "tls.crt").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_path = pki / "tls.key"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    key_path.chmod(0o600)


# --- the login/consent app ----------------------------------------------------------------------------------------

_FORM = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Sign in</h1>
{error}<form method="post" action="/login">
<input type="hidden" name="login_challenge" value="{challenge}">
<p><label for="username">Username</label> <input id="username" name="username" autocomplete="username" value="{username}"></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"></p>
<p><button type="submit">Sign in</button></p>
</form>
</body></html>
"""


def _id_token_claims(user: User, scopes: Sequence[str]) -> dict[str, Any]:
    claims: dict[str, Any] = {}
    if "email" in scopes:
        claims.update(email=user.email, email_verified=True)
    if "profile" in scopes:
        claims.update(name=user.name, preferred_username=user.username)
    if "groups" in scopes:
        claims["groups"] = list(user.groups)
    return claims


class LoginConsentApp:
    """Hydra's login, consent and logout pages on 127.0.0.1 (a thread); ``users`` is read at each sign-in."""

    def __init__(self, admin_url: str, users: dict[str, User], log_path: Path) -> None:
        self.admin_url = admin_url
        self.users = users
        self.log_path = log_path
        self._server = _AppServer(self)
        self._thread: threading.Thread | None = None
        self._log_lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LoginConsentApp:
        self._thread = threading.Thread(target=self._server.serve_forever, name="login-consent-app", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(10)
            self._thread = None
        self._server.server_close()

    def log(self, line: str) -> None:
        with self._log_lock, self.log_path.open("a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {line}\n")

    def admin(self, method: str, path: str, challenge: tuple[str, str], body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A call of Hydra's admin API about one challenge (``("login_challenge", C)``); its JSON answer."""
        url = f"{self.admin_url}/admin/oauth2/auth/requests/{path}"
        with _session() as http, http.request(method, url, params=dict([challenge]), json=body, timeout=_HTTP_TIMEOUT_S) as response:
            if response.status_code >= 300:
                raise OIDCError(f"Hydra admin {method} {path}: {response.status_code} {response.text}")
            answer: dict[str, Any] = response.json()
            return answer

    def login_page(self, challenge: str) -> tuple[str | None, str]:
        """``(redirect, "")`` when Hydra says to skip the login (a remembered session), else ``(None, form)``."""
        request = self.admin("GET", "login", ("login_challenge", challenge))
        if request.get("skip"):
            accepted = self.admin("PUT", "login/accept", ("login_challenge", challenge), {"subject": request["subject"]})
            return accepted["redirect_to"], ""
        return None, self.form(challenge, "", "")

    def sign_in(self, challenge: str, username: str, password: str) -> tuple[str | None, str]:
        """``(redirect, "")`` when the pair matches a user (the login accepted), else ``(None, the form with an error)``."""
        user = self.users.get(username)
        if user is None or not secrets.compare_digest(user.password.encode(), password.encode()):
            self.log(f"login refused for {username!r}")
            return None, self.form(challenge, username, "Wrong username or password.")
        accepted = self.admin(
            "PUT", "login/accept", ("login_challenge", challenge), {"subject": username, "remember": True, "remember_for": 3600}
        )
        self.log(f"login accepted for {username!r}")
        return accepted["redirect_to"], ""

    def consent(self, challenge: str) -> str:
        """Consent to every requested scope, the user's claims in the ID token; where Hydra redirects next."""
        request = self.admin("GET", "consent", ("consent_challenge", challenge))
        user = self.users.get(request["subject"])
        if user is None:
            denied = {"error": "access_denied", "error_description": "no such user"}
            rejected = self.admin("PUT", "consent/reject", ("consent_challenge", challenge), denied)
            return str(rejected["redirect_to"])
        scopes = request.get("requested_scope") or []
        grant = {
            "grant_scope": scopes,
            "grant_access_token_audience": request.get("requested_access_token_audience") or [],
            "remember": False,
            "session": {"id_token": _id_token_claims(user, scopes), "access_token": {}},
        }
        accepted = self.admin("PUT", "consent/accept", ("consent_challenge", challenge), grant)
        self.log(f"consent given for {user.username!r}: {' '.join(scopes)}")
        return str(accepted["redirect_to"])

    def logout(self, challenge: str) -> str:
        return str(self.admin("PUT", "logout/accept", ("logout_challenge", challenge))["redirect_to"])

    @staticmethod
    def form(challenge: str, username: str, error: str) -> str:
        alert = f'<p role="alert">{html.escape(error)}</p>\n' if error else ""
        return _FORM.format(error=alert, challenge=html.escape(challenge, quote=True), username=html.escape(username, quote=True))


class _AppServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: LoginConsentApp) -> None:
        super().__init__(("127.0.0.1", 0), _AppHandler)
        self.app = app


class _AppHandler(BaseHTTPRequestHandler):
    """HTTP for :class:`LoginConsentApp`: GET /login, POST /login, GET /consent, GET /logout (each with its challenge)."""

    @property
    def app(self) -> LoginConsentApp:
        assert isinstance(self.server, _AppServer)
        return self.server.app

    def log_message(self, format: str, *args: Any) -> None:
        self.app.log(format % args)

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = {name: values[0] for name, values in urllib.parse.parse_qs(url.query).items()}
        self._respond(lambda: self._get(url.path, query))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = {name: values[0] for name, values in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
        if urllib.parse.urlsplit(self.path).path == "/login" and "login_challenge" in form:
            self._respond(lambda: self.app.sign_in(form["login_challenge"], form.get("username", ""), form.get("password", "")))
        else:
            self._answer(HTTPStatus.NOT_FOUND, "text/plain", "not found\n")

    def _get(self, path: str, query: dict[str, str]) -> tuple[str | None, str]:
        if path == "/login" and "login_challenge" in query:
            return self.app.login_page(query["login_challenge"])
        if path == "/consent" and "consent_challenge" in query:
            return self.app.consent(query["consent_challenge"]), ""
        if path == "/logout" and "logout_challenge" in query:
            return self.app.logout(query["logout_challenge"]), ""
        return None, ""

    def _respond(self, handle: Callable[[], tuple[str | None, str]]) -> None:
        """A redirect, a page, 404 (neither) or 502 (Hydra's admin API refused)."""
        try:
            redirect, page = handle()
        except OIDCError as e:
            self.app.log(str(e))
            self._answer(HTTPStatus.BAD_GATEWAY, "text/plain", f"{e}\n")
            return
        if redirect is not None:
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", redirect)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif page:
            self._answer(HTTPStatus.OK, "text/html; charset=utf-8", page)
        else:
            self._answer(HTTPStatus.NOT_FOUND, "text/plain", "not found\n")

    def _answer(self, status: HTTPStatus, content_type: str, text: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


# --- driving a flow without a browser -----------------------------------------------------------------------------


class _FormParser(HTMLParser):
    """The first form of a page: its action and its named inputs; and the text of any ``role="alert"`` element."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self.alert = ""
        self._in_alert = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            self.action = attributes.get("action", "")
        elif tag == "input" and "name" in attributes:
            self.fields[attributes["name"]] = attributes.get("value", "")
        if attributes.get("role") == "alert":
            self._in_alert = True

    def handle_endtag(self, tag: str) -> None:
        self._in_alert = False

    def handle_data(self, data: str) -> None:
        if self._in_alert:
            self.alert += data


@dataclass
class _Landing:
    """Where a chain of redirects ended: a page (``response``), or the redirect to ``stop_at`` (``response`` None)."""

    url: str
    response: requests.Response | None


def _follow(http: requests.Session, response: requests.Response, stop_at: str, max_hops: int = 20) -> _Landing:
    for _ in range(max_hops):
        if not response.is_redirect:
            return _Landing(response.url, response)
        target = urllib.parse.urljoin(response.url, response.headers["Location"])
        response.close()
        if target.startswith(stop_at):
            return _Landing(target, None)
        response = http.get(target, allow_redirects=False, timeout=_HTTP_TIMEOUT_S)
    response.close()
    raise OIDCError(f"more than {max_hops} redirects, the last to {response.url}")


def _pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, _b64url(hashlib.sha256(verifier.encode()).digest())


# --- Hydra --------------------------------------------------------------------------------------------------------


@dataclass
class HydraProcess:
    """``hydra serve all`` as a subprocess with its login/consent app (see the module docstring); restartable.

    ``start`` returns once the discovery document is served over TLS (verified against ``ca_path``) and the test
    signing key is in the published JWKS; ``stop`` ends the process by its PID and the app.
    """

    data_dir: Path
    users: dict[str, User] = field(default_factory=lambda: dict(USERS))
    access_token_ttl: str = "1h"
    id_token_ttl: str = "1h"
    refresh_token_ttl: str = "720h"
    persistent: bool = False
    public_port: int = 0  # 0: two distinct free ports, picked together (free_ports)
    admin_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    login_app: LoginConsentApp | None = None
    test_key: rsa.RSAPrivateKey = field(default_factory=new_rsa_key)

    def __post_init__(self) -> None:
        if not self.public_port or not self.admin_port or self.public_port == self.admin_port:
            self.public_port, self.admin_port = free_ports(2)

    @property
    def issuer(self) -> str:
        return f"https://127.0.0.1:{self.public_port}"

    @property
    def public_url(self) -> str:
        return self.issuer

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"

    @property
    def ca_path(self) -> Path:
        return self.data_dir / "pki" / "ca.crt"

    @property
    def ca_pem(self) -> str:
        return self.ca_path.read_text()

    @property
    def log_path(self) -> Path:
        return self.data_dir / "hydra.log"

    @property
    def dsn(self) -> str:
        return f"sqlite://{self.data_dir / 'hydra.sqlite'}?_fk=true&mode=rwc" if self.persistent else "memory"

    def _config(self, ui_url: str) -> dict[str, Any]:
        secret_path = self.data_dir / "system-secret"
        if not secret_path.exists():  # kept across restarts: it encrypts what a persistent store holds
            secret_path.write_text(secrets.token_hex(32))
        pki = self.data_dir / "pki"
        return {
            "dsn": self.dsn,
            "log": {"level": "info", "format": "text"},
            "serve": {
                "public": {
                    "host": "127.0.0.1",
                    "port": self.public_port,
                    "tls": {"enabled": True, "cert": {"path": str(pki / "tls.crt")}, "key": {"path": str(pki / "tls.key")}},
                },
                "admin": {"host": "127.0.0.1", "port": self.admin_port, "tls": {"enabled": False}},
            },
            "urls": {
                "self": {"issuer": self.issuer, "public": self.public_url, "admin": self.admin_url},
                "login": f"{ui_url}/login",
                "consent": f"{ui_url}/consent",
                "logout": f"{ui_url}/logout",
            },
            "secrets": {"system": [secret_path.read_text()]},
            "ttl": {"access_token": self.access_token_ttl, "id_token": self.id_token_ttl, "refresh_token": self.refresh_token_ttl},
            "oidc": {"subject_identifiers": {"supported_types": ["public"]}},
            "webfinger": {
                "jwks": {"broadcast_keys": [TEST_KEY_SET]},
                "oidc_discovery": {
                    "supported_scope": list(DEFAULT_SCOPES),
                    "supported_claims": ["email", "email_verified", "name", "preferred_username", "groups"],
                },
            },
        }

    def start(self, timeout_s: float = 60.0) -> HydraProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.ca_path.exists():
            _write_ca_and_server_certificate(self.data_dir / "pki")
        self.login_app = LoginConsentApp(self.admin_url, self.users, self.data_dir / "login-app.log").start()
        try:
            config_path = self.data_dir / "hydra.yaml"
            config_path.write_text(yaml.safe_dump(self._config(self.login_app.url), sort_keys=False))
            with self.log_path.open("ab") as log:
                if self.persistent:
                    migrate = subprocess.run(
                        [str(HYDRA_BIN), "migrate", "sql", "up", "--read-from-env", "--yes", "--config", str(config_path)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        timeout=timeout_s,
                    )
                    if migrate.returncode != 0:
                        raise RuntimeError(f"hydra migrate sql up exited with {migrate.returncode}: {self.log_path.read_text()[-3000:]}")
                argv = [str(HYDRA_BIN), "serve", "all", "--config", str(config_path), "--sqa-opt-out"]
                self.proc = subprocess.Popen(argv, cwd=self.data_dir, stdout=log, stderr=subprocess.STDOUT)
            self._wait_ready(timeout_s)
            self._publish_test_key(timeout_s)
        except BaseException:
            self.stop(signal.SIGKILL)
            raise
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"hydra exited with {self.proc.returncode}: {self.log_path.read_text()[-3000:]}")
            try:
                # The first request for the discovery document also makes Hydra generate its ID token signing key.
                with (
                    _session(self.ca_path) as http,
                    # its read may take what is left of the budget: a read given up cancels the key generation, and
                    # on a busy machine every next one would be given up too
                    http.get(
                        f"{self.public_url}/.well-known/openid-configuration",
                        timeout=(_HTTP_TIMEOUT_S, max(1.0, deadline - time.monotonic())),
                    ) as response,
                ):
                    if response.status_code == 200 and response.json().get("issuer") == self.issuer:
                        return
                    last = f"{response.status_code} {response.text[:300]}"
            except requests.RequestException as e:
                last = str(e)
            time.sleep(0.1)
        raise RuntimeError(f"hydra was not ready within {timeout_s}s (last answer: {last}): {self.log_path.read_text()[-3000:]}")

    def _publish_test_key(self, timeout_s: float) -> None:
        """Import the test key and check the JWKS lists it. Hydra may still be generating its own ID token signing key
        (RSA 4096: over 10 s on a busy machine, and a niced test run), so the read may take the whole start budget. A
        connection that breaks meanwhile (seen on a loaded machine: a TLS record that fails its MAC check) is retried
        on a new one, twice."""
        with _session(self.ca_path) as http:
            keys = {"keys": [rsa_jwk(self.test_key, TEST_KEY_ID)]}
            with http.put(f"{self.admin_url}/admin/keys/{TEST_KEY_SET}", json=keys, timeout=_HTTP_TIMEOUT_S) as response:
                if response.status_code != 200:
                    raise OIDCError(f"importing the test signing key: {response.status_code} {response.text}")
        for attempt in range(3):
            try:
                with (
                    _session(self.ca_path) as http,
                    http.get(f"{self.public_url}/.well-known/jwks.json", timeout=(_HTTP_TIMEOUT_S, timeout_s)) as response,
                ):
                    kids = [key.get("kid") for key in response.json()["keys"]]
                    break
            except requests.ConnectionError as e:  # SSLError included
                with self.log_path.open("a") as log:
                    log.write(f"test harness: reading the JWKS failed (attempt {attempt + 1} of 3): {e}\n")
                if attempt == 2:
                    raise
        if TEST_KEY_ID not in kids:
            raise OIDCError(f"the test signing key is not in Hydra's JWKS (kids: {kids})")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> int | None:
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(sig)
            try:
                code = self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait(timeout_s)
            self.proc = None
        if self.login_app is not None:
            self.login_app.stop()
            self.login_app = None
        return code

    # --- clients and tokens ---------------------------------------------------------------------------------------

    def register_client(
        self,
        client_id: str,
        client_secret: str,
        redirect_uris: Sequence[str],
        post_logout_redirect_uris: Sequence[str] = (),
        scopes: Sequence[str] = DEFAULT_SCOPES,
        token_endpoint_auth_method: str = "client_secret_basic",
        *,
        id_token_lifespan: str | None = None,
        access_token_lifespan: str | None = None,
        refresh_token_lifespan: str | None = None,
    ) -> OAuthClient:
        """Register a confidential client for the authorization-code and refresh-token grants (Hydra's admin API).

        The lifespans (Go durations, ``"5s"``) override the instance's TTLs for this client's tokens, from the code
        exchange and from refreshes alike.
        """
        body: dict[str, Any] = {
            "client_id": client_id,
            "client_secret": client_secret,
            "redirect_uris": list(redirect_uris),
            "post_logout_redirect_uris": list(post_logout_redirect_uris),
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": " ".join(scopes),
            "token_endpoint_auth_method": token_endpoint_auth_method,
        }
        for grant in ("authorization_code_grant", "refresh_token_grant"):
            if id_token_lifespan is not None:
                body[f"{grant}_id_token_lifespan"] = id_token_lifespan
            if access_token_lifespan is not None:
                body[f"{grant}_access_token_lifespan"] = access_token_lifespan
            if refresh_token_lifespan is not None:
                body[f"{grant}_refresh_token_lifespan"] = refresh_token_lifespan
        with _session() as http, http.post(f"{self.admin_url}/admin/clients", json=body, timeout=_HTTP_TIMEOUT_S) as response:
            if response.status_code != 201:
                raise OIDCError(f"registering client {client_id!r}: {response.status_code} {response.text}")
            created = response.json()
        return OAuthClient(
            client_id=created["client_id"],
            client_secret=client_secret,
            redirect_uris=tuple(redirect_uris),
            post_logout_redirect_uris=tuple(post_logout_redirect_uris),
            scopes=tuple(scopes),
            token_endpoint_auth_method=token_endpoint_auth_method,
        )

    def add_redirect_uris(
        self, client: OAuthClient, redirect_uris: Sequence[str], post_logout_redirect_uris: Sequence[str] = ()
    ) -> OAuthClient:
        """Let ``client`` also send browsers back to ``redirect_uris`` (and after a logout to ``post_logout_redirect_uris``):
        a JSON patch of Hydra's admin API, which keeps the client's secret and token lifespans."""
        patch = [{"op": "add", "path": "/redirect_uris/-", "value": uri} for uri in redirect_uris]
        patch += [{"op": "add", "path": "/post_logout_redirect_uris/-", "value": uri} for uri in post_logout_redirect_uris]
        url = f"{self.admin_url}/admin/clients/{urllib.parse.quote(client.client_id, safe='')}"
        with _session() as http, http.patch(url, json=patch, timeout=_HTTP_TIMEOUT_S) as response:
            if response.status_code != 200:
                raise OIDCError(f"adding redirect URIs to client {client.client_id!r}: {response.status_code} {response.text}")
        return dataclasses.replace(
            client,
            redirect_uris=(*client.redirect_uris, *redirect_uris),
            post_logout_redirect_uris=(*client.post_logout_redirect_uris, *post_logout_redirect_uris),
        )

    def browser(self) -> requests.Session:
        """A cookie jar that trusts this provider's CA: pass it to :meth:`authorization_code_tokens` and :meth:`logout`
        to act as one browser (the login is remembered: a second authorization in it skips the form)."""
        return _session(self.ca_path)

    def authorization_code_tokens(
        self,
        client: OAuthClient,
        user: str,
        password: str,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        use_pkce: bool = True,
        nonce: str | None = None,
        browser: requests.Session | None = None,
    ) -> Tokens:
        """Sign ``user`` in through the authorization-code flow and exchange the code (see the module docstring).

        ``nonce`` (none by default) is sent with the authorization request; the ID token then carries it. ``browser``
        (:meth:`browser`): the cookies of an earlier sign-in; by default a fresh one. Raises :class:`OIDCError` when
        the login form comes back (wrong password: the message holds its alert) or Hydra redirects with an error.
        """
        redirect_uri = client.redirect_uris[0]
        state = secrets.token_urlsafe(16)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(scopes),
            "state": state,
        }
        if nonce is not None:
            params["nonce"] = nonce
        verifier = ""
        if use_pkce:
            verifier, challenge = _pkce_pair()
            params.update(code_challenge=challenge, code_challenge_method="S256")
        with self.browser() as fresh:
            http = browser or fresh
            first = http.get(f"{self.public_url}/oauth2/auth", params=params, allow_redirects=False, timeout=_HTTP_TIMEOUT_S)
            landing = _follow(http, first, redirect_uri)
            if landing.response is not None:  # the login form
                landing = self._fill_in_login_form(http, landing, redirect_uri, user, password)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(landing.url).query)
        if "error" in query:
            raise OIDCError(f"authorization failed: {query['error'][0]}: {query.get('error_description', [''])[0]}")
        if query.get("state") != [state]:
            raise OIDCError(f"state mismatch in the redirect {landing.url}")
        form_data = {"grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": redirect_uri}
        if use_pkce:
            form_data["code_verifier"] = verifier
        return self._token_request(client, form_data)

    @staticmethod
    def _fill_in_login_form(http: requests.Session, page: _Landing, redirect_uri: str, user: str, password: str) -> _Landing:
        assert page.response is not None
        with page.response:
            form = _FormParser()
            form.feed(page.response.text)
        if form.action is None or "password" not in form.fields:
            raise OIDCError(f"expected the login form at {page.url}, got: {page.response.text[:500]}")
        form.fields.update(username=user, password=password)
        posted = http.post(urllib.parse.urljoin(page.url, form.action), data=form.fields, allow_redirects=False, timeout=_HTTP_TIMEOUT_S)
        landing = _follow(http, posted, redirect_uri)
        if landing.response is not None:
            with landing.response:
                again = _FormParser()
                again.feed(landing.response.text)
            raise OIDCError(f"login of {user!r} refused: {again.alert or landing.response.text[:500]}")
        return landing

    def sign_in_through(self, http: requests.Session, start_url: str, user: str, password: str) -> requests.Response:
        """Follow a relying party's login (``start_url``, e.g. its ``/login/oidc``) with ``http`` as the browser: through
        the provider, its login form (filled in for ``user``) and consent, back to the relying party; its last answer."""
        response = http.get(start_url, allow_redirects=True, timeout=_HTTP_TIMEOUT_S)
        if not response.url.startswith(self._login_app_url()):
            return response  # remembered: the provider sent the browser straight back
        form = _FormParser()
        form.feed(response.text)
        if form.action is None or "password" not in form.fields:
            raise OIDCError(f"expected the login form at {response.url}, got: {response.text[:500]}")
        form.fields.update(username=user, password=password)
        return http.post(urllib.parse.urljoin(response.url, form.action), data=form.fields, allow_redirects=True, timeout=_HTTP_TIMEOUT_S)

    def _login_app_url(self) -> str:
        assert self.login_app is not None, "the provider is not started"
        return self.login_app.url

    def logout(self, browser: requests.Session, client: OAuthClient, id_token: str) -> str:
        """RP-initiated logout of the sign-in ``browser`` holds (Hydra's ``/oauth2/sessions/logout``, the login app
        accepting); the URL it ends at: the client's first post-logout redirect URI with ``state``."""
        target = client.post_logout_redirect_uris[0]
        params = {"id_token_hint": id_token, "post_logout_redirect_uri": target, "state": secrets.token_urlsafe(16)}
        first = browser.get(f"{self.public_url}/oauth2/sessions/logout", params=params, allow_redirects=False, timeout=_HTTP_TIMEOUT_S)
        landing = _follow(browser, first, target)
        if landing.response is not None:
            with landing.response:
                raise OIDCError(f"logout ended at {landing.url}: {landing.response.status_code} {landing.response.text[:500]}")
        if urllib.parse.parse_qs(urllib.parse.urlsplit(landing.url).query).get("state") != [params["state"]]:
            raise OIDCError(f"state mismatch in the redirect {landing.url}")
        return landing.url

    def refresh(self, client: OAuthClient, refresh_token: str) -> Tokens:
        """The refresh_token grant: new tokens (a new ID token too) for the same session."""
        return self._token_request(client, {"grant_type": "refresh_token", "refresh_token": refresh_token})

    def revoke(self, client: OAuthClient, token: str, token_type_hint: str = "refresh_token") -> None:
        """Revoke a token of ``client`` (RFC 7009, Hydra's ``/oauth2/revoke``): a refresh with it then fails."""
        form_data, headers = self._client_authentication(client, {"token": token, "token_type_hint": token_type_hint})
        with (
            _session(self.ca_path) as http,
            http.post(f"{self.public_url}/oauth2/revoke", data=form_data, headers=headers, timeout=_HTTP_TIMEOUT_S) as response,
        ):
            if response.status_code != 200:
                raise OIDCError(f"revocation refused: {response.status_code} {response.text}")

    @staticmethod
    def _client_authentication(client: OAuthClient, form_data: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """The form and headers of a request to the token or revocation endpoint, authenticated as ``client``."""
        headers = {}
        if client.token_endpoint_auth_method == "client_secret_basic":
            # RFC 6749 2.3.1: both parts form-encoded before they are joined and base64-encoded.
            pair = f"{urllib.parse.quote(client.client_id, safe='')}:{urllib.parse.quote(client.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form_data = {**form_data, "client_id": client.client_id, "client_secret": client.client_secret}
        return form_data, headers

    def _token_request(self, client: OAuthClient, form_data: dict[str, str]) -> Tokens:
        form_data, headers = self._client_authentication(client, form_data)
        with (
            _session(self.ca_path) as http,
            http.post(f"{self.public_url}/oauth2/token", data=form_data, headers=headers, timeout=_HTTP_TIMEOUT_S) as response,
        ):
            if response.status_code != 200:
                raise OIDCError(f"token request ({form_data['grant_type']}) refused: {response.status_code} {response.text}")
            answer = response.json()
        return Tokens(
            id_token=answer["id_token"],
            access_token=answer["access_token"],
            refresh_token=answer.get("refresh_token"),
            expires_in=int(answer["expires_in"]),
            scope=tuple(answer.get("scope", "").split()),
        )

    def mint_token(self, claims: Mapping[str, Any]) -> str:
        """A JWT of exactly ``claims`` signed with the test signing key, whose public half Hydra publishes."""
        return sign_jwt(claims, self.test_key, TEST_KEY_ID)


def jwks(provider: HydraProcess) -> dict[str, Any]:
    """The JWK Set the provider publishes (``jwks_uri`` of its discovery document), fetched over verified TLS."""
    with _session(provider.ca_path) as http, http.get(f"{provider.public_url}/.well-known/jwks.json", timeout=_HTTP_TIMEOUT_S) as response:
        response.raise_for_status()
        keys: dict[str, Any] = response.json()
        return keys


# --- kube-apiserver -----------------------------------------------------------------------------------------------


def authentication_configuration(
    path: Path,
    *,
    issuer: str,
    ca_pem: str,
    audiences: Sequence[str],
    username_claim: str = "sub",
    username_prefix: str = "oidc:",
    groups_claim: str | None = "groups",
    groups_prefix: str = "oidc:",
) -> Path:
    """Write kube-apiserver's ``--authentication-config`` file: one JWT authenticator trusting ``issuer``.

    kube-apiserver fetches ``<issuer>/.well-known/openid-configuration`` and the JWKS it names (TLS verified against
    ``ca_pem``) and accepts an ID token whose ``aud`` holds one of ``audiences``; the user is ``username_prefix`` +
    the ``username_claim`` (with ``email``, kube-apiserver also requires ``email_verified`` true when present), the
    groups ``groups_prefix`` + each of the ``groups_claim`` (None: no groups from the token).
    """
    claim_mappings: dict[str, Any] = {"username": {"claim": username_claim, "prefix": username_prefix}}
    if groups_claim is not None:
        claim_mappings["groups"] = {"claim": groups_claim, "prefix": groups_prefix}
    issuer_config: dict[str, Any] = {"url": issuer, "certificateAuthority": ca_pem, "audiences": list(audiences)}
    if len(audiences) > 1:
        issuer_config["audienceMatchPolicy"] = "MatchAny"
    document = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AuthenticationConfiguration",
        "jwt": [{"issuer": issuer_config, "claimMappings": claim_mappings}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@dataclass(frozen=True)
class KubeOIDCClients:
    """The clients whose ID tokens a control plane of the ``oidc_realcluster`` fixture accepts (its JWT audiences)."""

    standard: OAuthClient  # the provider's token lifetimes (an hour)
    short_lived: OAuthClient  # ID and access tokens that expire after SHORT_LIVED_S: for expiry and refresh tests


SHORT_LIVED_S = 5


def whoami(server: str, ca_path: Path, token: str) -> dict[str, Any] | None:
    """Who kube-apiserver at ``server`` takes the bearer of ``token`` for (a SelfSubjectReview's ``status.userInfo``);
    None when it refuses the token (401)."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    headers = {"Authorization": f"Bearer {token}"}
    url = f"{server}/apis/authentication.k8s.io/v1/selfsubjectreviews"
    with _session(ca_path) as http, http.post(url, json=body, headers=headers, timeout=_HTTP_TIMEOUT_S) as response:
        if response.status_code == 401:
            return None
        if response.status_code != 201:
            raise OIDCError(f"SelfSubjectReview: {response.status_code} {response.text}")
        user: dict[str, Any] = response.json()["status"]["userInfo"]
        return user
