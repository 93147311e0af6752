"""People the cluster under test knows by a bearer token, and what a control panel in the login mode needs: helpers for the
tests of logging in (tests/api, tests/dashboard, tests/identity, the production server's in tests/server).

:func:`person_of` gives a :class:`Person` of either cluster: on devcluster the one token it issues, its admin token
(``<data-dir>/pki/admin.token``, user ``kubernetes-admin``, allowed everything); on the real control plane a
ServiceAccount made for the test in its namespace, with no rights at all, and its token (``TokenRequest``, as
``kubectl create token`` asks). Tests that need a person without rights, or a token a real kube-apiserver reviews,
get one there; product code never branches on the kind, and tests only through this.

:func:`login_settings` are the settings of a panel in the login mode whose sessions live in ``session_namespace``;
:func:`signed_cookie` decodes the session cookie a response set, with the app's own signing key (what an attacker
holding the cookie could read, short of the key).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from flask import Flask

from backend.identity.cookies import SESSION_COOKIE
from backend.settings import ApiSettings
from tests.clusters import ClusterProcess

SECRET_KEY = "a-signing-key-the-replicas-share"
DEVCLUSTER_USER = "kubernetes-admin"


@dataclass(frozen=True)
class Person:
    """Someone the cluster knows by ``token``, as ``name``."""

    name: str
    token: str = field(repr=False)

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def service_account_token(api_client: Any, namespace: str, name: str, *, expiration_s: int = 3600) -> str:
    """Create the ServiceAccount ``namespace/name`` and a token of it (a TokenRequest)."""
    from kubernetes import client

    core: Any = client.CoreV1Api(api_client)  # plain dict bodies: the client sends them as they are
    core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
    request = {"spec": {"expirationSeconds": expiration_s}}
    token: str = core.create_namespaced_service_account_token(name, namespace, request).status.token
    return token


def person_of(kube: ClusterProcess, api_client: Any, namespace: str) -> Person:
    """devcluster: its admin; the real control plane: a fresh ServiceAccount of ``namespace`` with no rights."""
    if kube.kind == "dev":
        return Person(name=DEVCLUSTER_USER, token=(kube.data_dir / "pki" / "admin.token").read_text().strip())
    name = f"person-{uuid.uuid4().hex[:6]}"
    return Person(name=f"system:serviceaccount:{namespace}:{name}", token=service_account_token(api_client, namespace, name))


def login_settings(kubeconfig: Path, session_namespace: str, **overrides: Any) -> ApiSettings:
    """A panel in the login mode (on loopback: the mode is asked for, not implied by the address)."""
    settings: dict[str, Any] = {"authentication": "login", "session_namespace": session_namespace, "secret_key": SECRET_KEY}
    return ApiSettings(kubeconfig=kubeconfig, **{**settings, **overrides})


def set_cookie(set_cookie_header: str) -> Any:
    """The session cookie's morsel of a ``Set-Cookie`` header (AssertionError when it sets no session cookie)."""
    cookie: SimpleCookie = SimpleCookie()
    cookie.load(set_cookie_header)
    assert SESSION_COOKIE in cookie, set_cookie_header
    return cookie[SESSION_COOKIE]


def signed_cookie(app: Flask, value: str) -> dict[str, Any]:
    """What the signed session cookie ``value`` holds."""
    signer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
    decoded: dict[str, Any] = signer.loads(value)
    return decoded
