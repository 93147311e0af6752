"""Fixtures of every suite that drives the control panel's Flask app in-process: the one cluster access, the one app
factory, real HTTP servers, the login mode.

``api_settings`` (session) are the settings of ``access`` (session): the API's cluster access (informer cache, review
caches) on the session cluster ``kube``, started once and shared by every app built here (each app gets its own metrics
registry and /watch broadcaster). ``app`` (session) is ``create_app`` on it with the default settings: the JSON API's and
the dashboard's tests read it through their folders' ``http`` (a Flask test client; the dashboard's keeps its CSRF token).
``make_app(**settings)`` builds apps with other settings on ``access`` (or on ``access=`` another), closed at the test's
end; ``testing=False`` leaves Flask's TESTING off, so an error is the app's own 500 page as in production (the dashboard's
tests), where the API's tests have it on (an unexpected exception fails the test with its traceback).
``serve(app)`` runs an app in a threaded werkzeug server on a free port (for streams and raw HTTP);
``serve_front(app)`` runs it the way production does (the ASGI front of :mod:`backend.server.asgi` on
uvicorn with the header-deadline protocol of :mod:`backend.server.workers`) on its own event-loop thread;
``darkrooms`` creates, changes and deletes Darkroom objects straight through the API server; ``sse(base_url, path)``
opens raw Server-Sent Events streams (``Darkrooms`` and ``SseStream``, which tests import, are in tests/clients.py).
``core`` and ``custom`` are official-client APIs for checking what really landed in the cluster (Secrets, CRs) and for
playing other actors (finalizers, Events).

The login mode: ``session_namespace`` (session) holds the login sessions' Secrets; ``login_access`` (session) is a
cluster access started in the login mode (it also watches those Secrets: an access of its own, as a login-mode
deployment has); ``make_login_app(**settings)`` builds apps in the login mode on it, sharing
:data:`tests.identity.logins.SECRET_KEY` as replicas do; ``person`` is someone the cluster knows by a bearer token
(:func:`tests.identity.logins.person_of`: devcluster's admin, or on the real control plane a ServiceAccount of the test's
namespace with no rights).
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import make_server

from backend.api.watch import watching
from backend.app import create_app
from backend.core import services
from backend.core.access import ClusterAccess
from backend.server.asgi import Front
from backend.server.logs import RequestHandler
from backend.server.workers import header_deadline
from backend.settings import ApiSettings
from tests.clients import Darkrooms, SseStream
from tests.clusters import ClusterProcess, free_port
from tests.identity.logins import SECRET_KEY, Person, login_settings, person_of
from tests.support import wait_for


@pytest.fixture(scope="session")
def api_settings(kube: ClusterProcess) -> ApiSettings:
    return ApiSettings(kubeconfig=kube.kubeconfig, cache_sync_timeout_s=30.0)


@pytest.fixture(scope="session")
def access(api_settings: ApiSettings, crds_installed: None) -> Iterator[ClusterAccess]:
    started = ClusterAccess.start(api_settings, environ={})
    assert started.synced
    yield started
    started.stop()


@pytest.fixture(scope="session")
def app(kube: ClusterProcess, access: ClusterAccess) -> Iterator[Flask]:
    made = create_app(ApiSettings(kubeconfig=kube.kubeconfig), access=access)
    yield made
    watching.close(made)


@pytest.fixture
def make_app(kube: ClusterProcess, access: ClusterAccess) -> Iterator[Callable[..., Flask]]:
    apps: list[Flask] = []
    shared = access

    def make(*, access: ClusterAccess | None = None, testing: bool = True, **overrides: Any) -> Flask:
        settings = ApiSettings(kubeconfig=Path(kube.kubeconfig), **overrides)
        app = create_app(settings, access=access or shared)
        if testing:
            app.config["TESTING"] = True
        apps.append(app)
        return app

    yield make
    for app in apps:
        watching.close(app)  # its informer handlers stay subscribed but become no-ops


@pytest.fixture
def core(api_client: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api_client)


@pytest.fixture
def custom(api_client: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="session")
def session_namespace(api_client: Any) -> Iterator[str]:
    """The namespace of the login sessions' Secrets (one per cluster under test)."""
    from kubernetes import client

    name = f"sessions-{uuid.uuid4().hex[:8]}"
    core: Any = client.CoreV1Api(api_client)  # plain dict bodies: the client sends them as they are
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


@pytest.fixture(scope="session")
def login_access(kube: ClusterProcess, crds_installed: None, session_namespace: str) -> Iterator[ClusterAccess]:
    access = ClusterAccess.start(login_settings(kube.kubeconfig, session_namespace), environ={})
    assert access.synced
    yield access
    access.stop()


@pytest.fixture
def make_login_app(make_app: Callable[..., Flask], login_access: ClusterAccess, session_namespace: str) -> Callable[..., Flask]:
    """Apps in the login mode (``authentication="login"`` on loopback), their sessions in ``session_namespace``."""

    def make(*, access: ClusterAccess | None = None, **overrides: Any) -> Flask:
        settings = {"authentication": "login", "session_namespace": session_namespace, "secret_key": SECRET_KEY, **overrides}
        return make_app(access=access or login_access, **settings)

    return make


@pytest.fixture
def person(kube: ClusterProcess, api_client: Any, namespace: str) -> Person:
    return person_of(kube, api_client, namespace)


@pytest.fixture
def serve() -> Iterator[Callable[[Flask], str]]:
    servers: list[tuple[Any, threading.Thread, Flask]] = []

    def start(app: Flask) -> str:
        port = free_port()
        server = make_server("127.0.0.1", port, app, threaded=True, request_handler=RequestHandler)
        thread = threading.Thread(target=server.serve_forever, name=f"test-server-{port}", daemon=True)
        thread.start()
        servers.append((server, thread, app))
        return f"http://127.0.0.1:{port}"

    yield start
    for server, thread, app in servers:
        watching.close(app)
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def serve_front() -> Iterator[Callable[[Flask], str]]:
    import uvicorn

    servers: list[tuple[Any, threading.Thread, Flask]] = []

    def start(app: Flask) -> str:
        settings = app.extensions[services.EXTENSION].settings
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(
            Front(app, settings=settings),
            http=header_deadline(settings.header_timeout_s),
            ws="none",
            interface="asgi3",
            lifespan="off",
            access_log=False,
            log_config=None,
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="test-front", daemon=True)
        thread.start()
        servers.append((server, thread, app))
        wait_for(lambda: server.started, message="the front to listen")
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for server, thread, app in servers:
        watching.close(app)
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def darkrooms(api_client: Any, namespace: str) -> Darkrooms:
    return Darkrooms(api_client, namespace)


@pytest.fixture
def sse() -> Iterator[Callable[..., SseStream]]:
    opened: list[SseStream] = []

    def open_stream(base_url: str, path: str = "/watch", **kwargs: Any) -> SseStream:
        stream = SseStream(base_url, path, **kwargs)
        opened.append(stream)
        return stream

    yield open_stream
    for stream in opened:
        stream.close()
