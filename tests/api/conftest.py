"""Fixtures for the REST API tests: one API app over the session devcluster, a test client.

``access`` (session) starts the API's informers against the session devcluster once; ``app`` is
``create_app`` with that access; ``http`` is a Flask test client. Tests work in their own
``namespace`` (tests/conftest.py). ``core`` and ``custom`` are official-client APIs for checking what
really landed in the cluster (Secrets, CRs) and for simulating other actors (finalizers, Events). The payloads tests
post (``webfolder``, ``s3``, ``task``) are in payloads.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from tests.support import ClusterProcess


@pytest.fixture(scope="session")
def api_settings(kube: ClusterProcess) -> ApiSettings:
    return ApiSettings(kubeconfig=kube.kubeconfig, cache_sync_timeout_s=30.0)


@pytest.fixture(scope="session")
def access(api_settings: ApiSettings, crds_installed: None) -> Iterator[ClusterAccess]:
    started = ClusterAccess.start(api_settings, environ={})
    yield started
    started.stop()


@pytest.fixture(scope="session")
def app(api_settings: ApiSettings, access: ClusterAccess) -> Flask:
    return create_app(api_settings, access=access)


@pytest.fixture
def http(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def core(api_client: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api_client)


@pytest.fixture
def custom(api_client: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(api_client)
