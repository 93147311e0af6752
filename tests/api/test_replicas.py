"""Read-your-writes across two API replicas: the consistency token.

Two apps with caches of their own play the two production replicas. A client writes on one and reads
on the other, carrying the ``X-Consistency-Token`` the write answered with: over 1,000 reads (after
400 creates, 400 merge patches and 200 deletes) not one is stale — the created object is there, the
patched one shows the patch at the written resourceVersion, the deleted one is gone. The browser's
way, the cookie, is checked too; and a token the server cannot use only ever makes a read wait.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.consistency import COOKIE, HEADER
from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings

from .payloads import webfolder


@pytest.fixture
def replicas(api_settings: ApiSettings, crds_installed: None) -> Iterator[tuple[FlaskClient, FlaskClient]]:
    settings = dataclasses.replace(api_settings, consistency_wait_s=1.0)
    accesses = [ClusterAccess.start(settings, environ={}) for _ in range(2)]
    try:
        yield create_app(settings, access=accesses[0]).test_client(), create_app(settings, access=accesses[1]).test_client()
    finally:
        for access in accesses:
            access.stop()


def test_a_read_on_the_other_replica_sees_the_clients_own_write(replicas: tuple[FlaskClient, FlaskClient], namespace: str) -> None:
    a, b = replicas
    stale: list[str] = []
    reads = 0

    def read(path: str, token: str) -> Any:
        nonlocal reads
        reads += 1
        return b.get(path, headers={HEADER: token})

    for i in range(400):
        name = f"r-{i:03}"
        created = a.post("/darkrooms", json=webfolder(name, namespace))
        assert created.status_code == 201, created.get_data(as_text=True)
        seen = read(f"/darkrooms/{namespace}/{name}", created.headers[HEADER])
        if seen.status_code != 200:
            stale.append(f"create {name}: {seen.status_code}")
    for i in range(400):
        name = f"r-{i:03}"
        patched = a.patch(f"/darkrooms/{namespace}/{name}", json={"replicas": 2})
        assert patched.status_code == 200
        seen = read(f"/darkrooms/{namespace}/{name}", patched.headers[HEADER])
        if seen.status_code != 200 or seen.get_json()["replicas"] != 2 or seen.headers["ETag"] != patched.headers["ETag"]:
            stale.append(f"patch {name}: {seen.status_code} {seen.headers.get('ETag')} != {patched.headers['ETag']}")
    for i in range(200):
        name = f"r-{i:03}"
        deleted = a.delete(f"/darkrooms/{namespace}/{name}")
        assert deleted.status_code == 204
        seen = read(f"/darkrooms/{namespace}/{name}", deleted.headers[HEADER])
        if seen.status_code != 404:
            stale.append(f"delete {name}: {seen.status_code}")
    assert reads == 1000
    assert stale == [], f"{len(stale)} stale reads of {reads}: {stale[:5]}"


def test_the_browser_carries_the_token_in_a_cookie(replicas: tuple[FlaskClient, FlaskClient], namespace: str) -> None:
    a, b = replicas
    created = a.post("/darkrooms", json=webfolder("cookie", namespace))
    cookie = created.headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE}=darkrooms.deployments.example.com@") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    b.set_cookie(COOKIE, created.headers[HEADER])
    assert b.get(f"/darkrooms/{namespace}/cookie").status_code == 200
    task = a.post("/tasks", json={"name": "t", "namespace": namespace, "priority": 1, "deadline": "2030-01-01T00:00:00Z"})
    both = task.headers[HEADER]  # a's cookie jar still holds the Darkroom's version: the token names both kinds
    assert both.startswith("darkrooms.deployments.example.com@") and "|tasks.example.example.com@" in both


def test_a_token_the_server_cannot_use_is_ignored(replicas: tuple[FlaskClient, FlaskClient], namespace: str) -> None:
    _, b = replicas
    for token in ("nonsense", "darkrooms.deployments.example.com@abc", "pods@12|@|", ""):
        assert b.get("/darkrooms", headers={HEADER: token}).status_code == 200
    far_ahead = b.get("/darkrooms", headers={HEADER: "darkrooms.deployments.example.com@999999999999"})
    assert far_ahead.status_code == 503 and far_ahead.headers["Retry-After"] == "1"  # never an older answer
