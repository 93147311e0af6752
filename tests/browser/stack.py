"""The whole stack a browser test drives, and serving an app on a port of its own (helpers, no tests, no fixtures).

:class:`Stack` is what the conftest's ``stack`` fixture (module scope) yields: a namespace of its own on the session
cluster, the reconciler watching it (an :class:`~tests.operator.operator_process.OperatorProcess`) and the
API + dashboard app under a real threaded werkzeug server. :func:`serve` serves another app the same way
(:class:`Served`: its URL and how to stop it), e.g. the conftest's ``login_panel``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from werkzeug.serving import make_server

from backend.api.watch import watching
from backend.server import shutdown as serving
from backend.server.logs import RequestHandler
from tests.clusters import ClusterProcess, RealclusterProcess, free_port
from tests.operator.operator_process import OperatorProcess
from tests.support import wait_for


@dataclass
class Stack:
    url: str
    namespace: str
    app: Any
    api_client: Any
    operator: OperatorProcess
    kube: ClusterProcess
    extra_namespaces: list[str] = field(default_factory=list)

    def admin_token(self) -> str:
        """A token the cluster knows (its administrator's): what a person pastes on the login page of :func:`login_panel`."""
        if isinstance(self.kube, RealclusterProcess):
            return self.kube.token("admin")
        return (self.kube.data_dir / "pki" / "admin.token").read_text().strip()

    def custom(self) -> Any:
        from kubernetes import client

        return client.CustomObjectsApi(self.api_client)

    def core(self) -> Any:
        from kubernetes import client

        return client.CoreV1Api(self.api_client)

    def when_shown(self, path: str, timeout_s: float = 15.0) -> str:
        """``path`` once the dashboard serves it (200): an object made with the cluster's own client reaches the API's
        cache a moment later (seconds on a busy machine), and a page visited before that is a 404."""
        client = self.app.test_client()
        wait_for(lambda: client.get(path).status_code == 200, timeout_s=timeout_s, message=f"the dashboard never showed {path}")
        return path

    def new_namespace(self) -> str:
        name = f"b-{uuid.uuid4().hex[:10]}"
        self.core().create_namespace({"metadata": {"name": name}})
        self.extra_namespaces.append(name)
        return name


@dataclass
class Served:
    """An app served on a loopback port of its own."""

    url: str
    stop: Callable[[], None]


def serve(app: Any, name: str) -> Served:
    """Serve ``app`` on a free loopback port (a threaded werkzeug server, as the stack's)."""
    server = make_server("127.0.0.1", free_port(), app, threaded=True, request_handler=RequestHandler)
    thread = threading.Thread(target=server.serve_forever, name=f"{name}-{server.server_port}", daemon=True)
    thread.start()

    def stop() -> None:
        watching.close(app)
        server.shutdown()
        server.server_close()
        thread.join(10)
        serving.shutdown(app)

    return Served(url=f"http://127.0.0.1:{server.server_port}", stop=stop)
