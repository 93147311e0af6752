"""Fixtures of the browser tests: chromium via Playwright, and per test module the whole stack.

``stack`` (module): a namespace of its own on the session cluster (devcluster or the real control plane), the
reconciler watching it (``python -m darkroom_operator``, as in tests/operator) and the API + dashboard
app in the local one-person mode (``create_app`` with its own informers) under a real threaded werkzeug server;
``login_panel`` (module) the same cluster's dashboard in the login mode (a pasted token: ``Stack.admin_token``). ``page`` (function):
a fresh browser context (own cookies) on the app that records console errors, page errors and
``securitypolicyviolation`` events; every test ends by asserting there were none (``pages``: the same on any app's
URL, e.g. a control panel of tests/identityfixtures.py). The helpers tests import live beside this plugin:
:mod:`browser.stack` (``Stack``, ``serve``) and :mod:`browser.pages` (``Watched``, and ``shot(page, name)``, which
saves a screenshot to test-output/screenshots/: ``BROWSER_SCREENSHOTS`` another directory; ``off`` none — .ci/run
sets it: nobody looks at CI's screenshots, and a full-page PNG is about half of a page check's time, so they are
taken where someone will look at them, by ``make test`` or ``make test-browser`` on a developer's machine).

Chromium: Debian's headless shell of chromium, /usr/bin/chromium-headless-shell (package ``chromium-headless-shell``, the
same version as Debian's ``chromium``; never ``playwright install``; ``CHROMIUM`` names another). It is the browser
Playwright itself runs headless tests in: the same Blink, without the desktop browser's hidden window, so a page check
takes about a third of the browser CPU (measured: two browser modules on devcluster, 46.8 s of chromium CPU with
/usr/bin/chromium against 16.2 s). When it is missing the tests fail under CI (``CI=true``) and are skipped elsewhere
with the reason (``make test`` installs it through scripts/install_test_tools.sh when it can).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from backend.api.watch import watching
from backend.app import create_app
from backend.server import shutdown as serving
from backend.server.logs import RequestHandler
from backend.settings import ApiSettings
from tests.browser.pages import Watched
from tests.browser.stack import Stack, serve
from tests.clusters import ClusterProcess, free_port
from tests.operator.operator_process import OperatorProcess

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Forms answer 422 (invalid input) and 409 (conflict) on purpose; chromium logs every non-2xx load.
EXPECTED_STATUS = re.compile(r"^Failed to load resource: the server responded with a status of (409|422)\b")
CSP_PROBE = """
document.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI);
});
"""


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium-headless-shell")
    if path:
        return path
    message = f"chromium is not installed ({CHROMIUM}): run scripts/install_test_tools.sh (apt-get install -y chromium-headless-shell)"
    if in_ci():
        pytest.fail(message + " — browser tests must run under CI")
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()
    playwright.stop()


@pytest.fixture(scope="module")
def stack(kube: ClusterProcess, crds_installed: None, api_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    namespace = f"b-{uuid.uuid4().hex[:10]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    logs = tmp_path_factory.mktemp("operator")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DARKROOM_OPERATOR_") and k != "KUBECONFIG"}
    env.update({"PYTHONUNBUFFERED": "1", "DARKROOM_OPERATOR_LOG_JSON": "true"})
    operator = OperatorProcess(
        args=[
            *("--kubeconfig", str(kube.kubeconfig), "--health-port", "0", "--health-host", "127.0.0.1"),
            *("--namespace", namespace, "--no-leader-election"),
        ],
        env=env,
        log_path=logs / "operator.log",
        out_path=logs / "operator.out",
    ).start()
    settings = ApiSettings(kubeconfig=kube.kubeconfig, sse_heartbeat_s=5.0)
    app = create_app(settings)
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=RequestHandler)
    thread = threading.Thread(target=server.serve_forever, name=f"dashboard-{port}", daemon=True)
    thread.start()
    stack = Stack(url=f"http://127.0.0.1:{port}", namespace=namespace, app=app, api_client=api_client, operator=operator, kube=kube)
    yield stack
    watching.close(app)
    server.shutdown()
    server.server_close()
    thread.join(10)
    serving.shutdown(app)
    operator.stop(timeout_s=15)
    for name in (namespace, *stack.extra_namespaces):
        try:
            core.delete_namespace(name)
        except client.ApiException as e:
            if e.status != 404:
                raise


@pytest.fixture(scope="module")
def login_panel(stack: Stack) -> Iterator[str]:
    """The dashboard in the login mode (a Kubernetes token pasted on /login: :meth:`Stack.admin_token`) over the stack's
    cluster, with informers and sessions of its own (a namespace for them): its URL."""
    settings = ApiSettings(
        kubeconfig=stack.kube.kubeconfig,
        authentication="login",
        token_login=True,
        session_namespace=stack.new_namespace(),
        secret_key=secrets.token_hex(32),
        sse_heartbeat_s=5.0,
    )
    served = serve(create_app(settings), "login-panel")
    yield served.url
    served.stop()


@pytest.fixture
def pages(browser: Any) -> Iterator[Callable[..., Watched]]:
    """Fresh browser contexts (own cookies) on any app: ``pages(base_url, **context_options)``; each page records console
    errors, page errors, CSP violations and dialogs, and the test fails at its end if there were any."""
    contexts: list[Any] = []
    watched: list[Watched] = []

    def make(base_url: str, **context_options: Any) -> Watched:
        context = browser.new_context(base_url=base_url, **context_options)
        context.set_default_timeout(15_000)
        context.add_init_script(CSP_PROBE)
        contexts.append(context)
        page = context.new_page()
        entry = Watched(page=page, problems=[])

        def on_console(message: Any) -> None:
            if message.type == "error" and not EXPECTED_STATUS.search(message.text):
                where = (message.location or {}).get("url") or page.url
                entry.problems.append(f"console: {message.text} [at {where}]")

        page.on("console", on_console)
        page.on("pageerror", lambda error: entry.problems.append(f"page error: {error}"))

        def on_response(response: Any) -> None:
            if response.status >= 400:
                entry.failed.append(f"{response.status} {response.url}")

        page.on("response", on_response)

        def on_dialog(dialog: Any) -> None:  # an alert() would mean injected script ran
            entry.problems.append(f"dialog: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        watched.append(entry)
        return entry

    yield make
    problems = [p for entry in watched for p in entry.unexpected()]
    for context in contexts:
        context.close()
    failed = [f for entry in watched for f in entry.failed]
    assert not problems, f"console errors, CSP violations or dialogs: {problems} (answers >= 400: {failed})"


@pytest.fixture
def new_page(pages: Callable[..., Watched], stack: Stack) -> Callable[..., Watched]:
    """:func:`pages` on the stack's dashboard."""
    return lambda **context_options: pages(stack.url, **context_options)


@pytest.fixture
def page(new_page: Callable[..., Watched]) -> Any:
    return new_page().page
