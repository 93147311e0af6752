"""Fixtures of the dashboard's HTML tests (no browser): one app over the session devcluster, clients.

``dashboard_app`` (session) is ``create_app`` with its own informers (``make_dashboard_app`` builds
more on them, with other settings); ``http`` a Flask test client
that has loaded a page (so it holds the CSRF cookie) and knows its token (``http.csrf``).
``custom`` writes objects straight to the API server. Tests work in their own ``namespace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from support import ClusterProcess

from backend.api.watch import watching
from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings

# A ClusterRole's rules to read all the pages show (and every child kind the API caches, as deploy/base's API role
# allows: without one, its start waits out the cache sync) — for people of the real control plane with less than that.
READS = ["get", "list", "watch"]
READ_RULES = [
    {"apiGroups": ["deployments.example.com", "example.example.com", "database.db.example.com"], "resources": ["*"], "verbs": READS},
    {"apiGroups": [""], "resources": ["events", "namespaces", "configmaps", "services", "persistentvolumeclaims"], "verbs": READS},
    {"apiGroups": ["apps"], "resources": ["statefulsets", "deployments"], "verbs": READS},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": READS},
]
TOKEN_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


@pytest.fixture(scope="session")
def dashboard_access(kube: ClusterProcess, crds_installed: None) -> Iterator[ClusterAccess]:
    access = ClusterAccess.start(ApiSettings(kubeconfig=kube.kubeconfig), environ={})
    yield access
    access.stop()


@pytest.fixture(scope="session")
def dashboard_app(kube: ClusterProcess, dashboard_access: ClusterAccess) -> Iterator[Flask]:
    app = create_app(ApiSettings(kubeconfig=kube.kubeconfig), access=dashboard_access)
    yield app
    watching.close(app)


@pytest.fixture
def make_dashboard_app(kube: ClusterProcess, dashboard_access: ClusterAccess) -> Iterator[Callable[..., Flask]]:
    """Apps with other settings (e.g. ``api_token``) on the shared informers."""
    apps: list[Flask] = []

    def make(**overrides: Any) -> Flask:
        app = create_app(ApiSettings(kubeconfig=kube.kubeconfig, **overrides), access=dashboard_access)
        apps.append(app)
        return app

    yield make
    for app in apps:
        watching.close(app)


class Client:
    """A test client with the CSRF cookie and token of a page it loaded."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        page = client.get("/ui/tasks/new")
        match = TOKEN_META.search(page.get_data(as_text=True))
        assert match, "no csrf-token meta tag"
        self.csrf = match.group(1)

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, **kwargs)

    def post(self, path: str, data: dict[str, Any] | None = None, *, token: bool = True, **kwargs: Any) -> Any:
        form = dict(data or {})
        if token:
            form["csrf_token"] = self.csrf
        return self.client.post(path, data=form, **kwargs)


@pytest.fixture
def http(dashboard_app: Flask) -> Client:
    return Client(dashboard_app.test_client())


@pytest.fixture
def custom(api_client: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(api_client)
