"""Fixtures for the REST API tests: one API app over the session devcluster, a test client, payloads.

``access`` (session) starts the API's informers against the session devcluster once; ``app`` is
``create_app`` with that access; ``http`` is a Flask test client. Tests work in their own
``namespace`` (tests/conftest.py). ``core`` and ``custom`` are official-client APIs for checking what
really landed in the cluster (Secrets, CRs) and for simulating other actors (finalizers, Events).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from support import ClusterProcess

from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings

SENTINEL_ACCESS = "AKIA-SENTINEL-4242-ACCESS"
SENTINEL_SECRET = "sentinel-secret-key-4242-do-not-leak"


def webfolder(name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    """The seed's payload shape, in ``namespace``."""
    return {
        "name": name,
        "namespace": namespace,
        "version": "0.1.0",
        "source": {"type": "WebFolder", "baseUrl": "https://ajatprabha.in/assets"},
        "subDomains": [f"{name}-{namespace}"],  # unique: the API refuses a sub-domain another Darkroom has
        **changes,
    }


def s3(name: str, namespace: str, *, keys: tuple[str, str] | None = (SENTINEL_ACCESS, SENTINEL_SECRET), **changes: Any) -> dict[str, Any]:
    source: dict[str, Any] = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "pathPrefix": "originals/"}
    if keys:
        source.update(accessKey=keys[0], secretKey=keys[1])
    return {"name": name, "namespace": namespace, "source": source, "subDomains": [f"{name}-{namespace}"], **changes}


def task(name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "priority": 5, "deadline": "2027-03-31T17:00:00Z", "details": "Write notes.", **changes}


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
