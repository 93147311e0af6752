"""`make api`: run the whole product on one machine.

Uses the cluster the user chose (``--kubeconfig FILE`` or ``KUBECONFIG``) or, by default, starts an
embedded devcluster with its data in ``.devcluster/``. Installs the CRDs from ``crds/`` with
server-side apply (official ``kubernetes`` client), then runs the reconciler
(``python -m darkroom_operator``), the API + dashboard (gunicorn, ``backend.server.wsgi:app``) and the
``combinedtasks`` aggregated API server (``python -m aggregator`` on 127.0.0.1, ``--aggregator-port`` /
``AGGREGATOR_PORT``, a free port by default) as child processes, exactly as they run in production,
with their logs in ``--log-dir`` (default ``.logs/``).

On the embedded devcluster the aggregated server is registered as kube does it (:func:`register_aggregator`):
a selector-less Service ``darkroom-system/darkroom-aggregator``, its EndpointSlice at 127.0.0.1 and the
aggregated server's port (how devcluster resolves a Service: devcluster/aggregation/registry.py), and the
APIService ``v1.search.task.example.example.com`` whose ``caBundle`` is the server's self-signed
certificate (made here for ``darkroom-aggregator.darkroom-system.svc``, the name devcluster checks); the
stack is ready once the APIService is Available, so ``kubectl get combinedtasks -A`` works through
devcluster. The APIService goes again on a clean stop (a registered but stopped server would make every
kubectl discovery warn). On a cluster of the user's kubeconfig nothing is registered: a loopback address
is no Endpoint a real API server can reach (deploy/components/aggregator registers it there); the
banner names the server's own URL instead. Its certificate lives in ``<data-dir>/aggregator-certs`` (.devcluster/ by
default) either way, kept across runs, so the banner's kubectl command stays the same; it is handed to the aggregated
server as its certificate (``--tls-cert-file``): a certificate of ours, not one it fell back on, so it does not warn.
Prints a banner naming the cluster once the API answers ``/readyz`` (on devcluster it says that pods are
simulated: a Darkroom turns Ready although no image is pulled), and runs until Ctrl-C, then stops
everything it started (children first, devcluster last). If a child dies, it says which one, shows the
end of its log and stops the rest (exit code 1).

Mistakes a user can fix get one line naming what to change, not a traceback: a taken API port
(``PORT``) or devcluster port (``DEVCLUSTER_PORT``), an API setting the API would refuse
(:meth:`backend.settings.ApiSettings.from_environ`); a deprecated variable name (the token's old name)
is named with its new one.

Children die with this process even when it is killed with ``kill -9`` (``PR_SET_PDEATHSIG``: the
kernel sends them SIGTERM). Their pids are kept in ``<log-dir>/stack.pids`` while the stack runs. A start-up
that finds the API port taken asks what listens there (:func:`what_listens`, its ``/readyz``): a healthy
Darkroom Control Panel is named as running, at its URL (use it, or choose another port); anything else is said
(not HTTP, another server, ours but not ready), with a stack an earlier run left behind if its pids still live.
The embedded devcluster locks its data directory (``devcluster.datalock``): a second ``make api`` with other
ports on the same ``--data-dir`` is one line naming the running devcluster's pid and URL.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import json
import logging
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.settings import ApiSettings
    from devcluster.server import DevCluster

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROBE_TIMEOUT_S = 2.0  # asking what listens on a taken port
PORT_TAKEN = "Darkroom Control Panel cannot start: port {port} on {host} ({what}) is already in use{why}"
DEVCLUSTER_SIMULATES = (
    "devcluster simulates pods: no container runs and no image is pulled, so a Darkroom shows Ready without serving"
    " (KUBECONFIG=... make api runs on a real cluster)"
)


class CannotStart(Exception):
    """A start-up problem the user can fix, said in one line."""


def check_api_settings(api_env: dict[str, str]) -> ApiSettings:
    """Build the API's settings as the API will (deprecated names warned about here, on the terminal), or say why not."""
    from backend.settings import ApiSettings, UnsafeSettings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            settings = ApiSettings.from_environ(api_env).check()
        except (ValueError, UnsafeSettings) as e:
            raise CannotStart(f"Darkroom Control Panel cannot start: {e}") from None
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr, flush=True)
    return settings


def kubeconfig_identity(kubeconfig: str) -> str:
    """Who the kubeconfig authenticates as (a SelfSubjectReview, ``kubectl auth whoami``); "" when it cannot be told."""
    from cluster import ClusterError, ConnectionSettings, connect

    try:
        connection = connect(ConnectionSettings(kubeconfig=Path(kubeconfig), probe=False), environ=os.environ)
    except ClusterError:
        return ""
    try:
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        review = connection.transport.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=body, timeout_s=5)
        return str(((review.get("status") or {}).get("userInfo") or {}).get("username") or "")
    except ClusterError:
        return ""
    finally:
        connection.close()


def who_line(settings: ApiSettings, kubeconfig: str) -> str:
    """The banner's line on who acts: the local one-person mode, or everyone as themselves."""
    if settings.local:
        name = kubeconfig_identity(kubeconfig)
        acting = f"as {name}, " if name else "as "
        return (
            f"local mode — one person on this machine, no login: everything is done {acting}the kubeconfig's identity"
            " (off loopback every person logs in and acts as themselves)"
        )
    ways = [w for w, on in (("a Kubernetes token", settings.token_login), (f"OIDC ({settings.oidc_issuer_url})", settings.oidc)) if on]
    how = "their own token goes to the cluster" if settings.identity == "passthrough" else "the API impersonates them"
    return f"login — every person logs in ({' or '.join(ways)}) and acts as themselves ({how})"


def start_devcluster(data_dir: Path, host: str, port: int) -> DevCluster:
    """The embedded devcluster, or :class:`CannotStart` naming ``DEVCLUSTER_PORT`` when its port is taken."""
    from devcluster.datalock import DataDirInUse
    from devcluster.server import DevCluster
    from devcluster.settings import ServerSettings

    taken = CannotStart(
        PORT_TAKEN.format(port=port, host=host, what="the embedded devcluster", why="; choose another with DEVCLUSTER_PORT=<port> make api")
    )
    if port_taken(host, port):
        raise taken
    try:
        return DevCluster(ServerSettings(host=host, port=port, data_dir=data_dir, kubeconfig=data_dir / "kubeconfig")).start()
    except DataDirInUse as e:  # another make api (other ports) or devcluster on the same data
        raise CannotStart(f"Darkroom Control Panel cannot start: {e}") from None
    except RuntimeError as e:
        if isinstance(e.__cause__, OSError) and e.__cause__.errno == errno.EADDRINUSE:  # taken between the check and the bind
            raise taken from None
        raise


def install_crds(kubeconfig: str) -> list[str]:
    """Server-side apply every CRD of the product once, and wait until each is Established: the image's installer
    (:mod:`cluster.crdinstall`), over the files the product ships (:mod:`productfiles`)."""
    import productfiles
    from cluster.crdinstall import crd_bodies, install

    return install(Path(kubeconfig), crd_bodies(productfiles.crd_directory()), timeout_s=60)


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


PR_SET_PDEATHSIG = 1
_UNVERIFIED = ssl._create_unverified_context()  # readiness probes of our own children on loopback


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux; a no-op where prctl is missing).

    Tied to the forking thread: children are started from the main thread, which lives as long as we do."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def port_taken(host: str, port: int) -> bool:
    """Whether a server listens there (SO_REUSEADDR as servers bind: connections in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def stale_stack(pid_file: Path) -> list[int]:
    """Pids an earlier run recorded that are still alive."""
    try:
        pids = [int(p) for p in pid_file.read_text().split()]
    except (OSError, ValueError):
        return []
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except OSError:
            continue
        alive.append(pid)
    return alive


class Child:
    """A child process with its output in a log file; it gets SIGTERM if we die (see :func:`_die_with_parent`)."""

    def __init__(self, name: str, argv: list[str], *, env: dict[str, str], log_path: Path) -> None:
        self.name, self.log_path = name, log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log_path.open("ab")
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent
        )

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout_s: float = 20.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


AGGREGATOR_NAMESPACE, AGGREGATOR_SERVICE = "darkroom-system", "darkroom-aggregator"
APISERVICE = "v1.search.task.example.example.com"


def aggregator_certificate(cert_dir: Path) -> tuple[Path, Path]:
    """The aggregated server's self-signed serving certificate and its key, valid for the Service's DNS names (kept while
    they exist)."""
    from aggregator.certificates import self_signed

    names = [f"{AGGREGATOR_SERVICE}.{AGGREGATOR_NAMESPACE}.svc", f"{AGGREGATOR_SERVICE}.{AGGREGATOR_NAMESPACE}.svc.cluster.local"]
    return self_signed(cert_dir, names=names)


def _aggregator_objects(port: int, ca_bundle: bytes) -> list[dict[str, object]]:
    import base64

    from aggregator.resources import GROUP, VERSION

    meta = {"name": AGGREGATOR_SERVICE, "namespace": AGGREGATOR_NAMESPACE}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": AGGREGATOR_NAMESPACE}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}},
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": AGGREGATOR_SERVICE,
                "namespace": AGGREGATOR_NAMESPACE,
                "labels": {"kubernetes.io/service-name": AGGREGATOR_SERVICE, "endpointslice.kubernetes.io/managed-by": "make-api"},
            },
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
        },
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": APISERVICE},
            "spec": {
                "group": GROUP,
                "version": VERSION,
                "groupPriorityMinimum": 1000,
                "versionPriority": 15,
                "caBundle": base64.b64encode(ca_bundle).decode(),
                "service": {"name": AGGREGATOR_SERVICE, "namespace": AGGREGATOR_NAMESPACE, "port": 443},
            },
        },
    ]


def register_aggregator(kubeconfig: str, port: int, ca_bundle: bytes) -> None:
    """Server-side apply the Service, EndpointSlice and APIService of the aggregated server (see the module docstring)."""
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        dynamic = DynamicClient(api)
        for body in _aggregator_objects(port, ca_bundle):
            resource = dynamic.resources.get(api_version=str(body["apiVersion"]), kind=str(body["kind"]))
            meta = body["metadata"]
            assert isinstance(meta, dict)
            resource.server_side_apply(
                body=body, name=meta["name"], namespace=meta.get("namespace"), field_manager="darkroom-control-panel", force_conflicts=True
            )
    finally:
        api.close()


def apiservice_problem(kubeconfig: str) -> str | None:
    """None once the APIService is Available, else its Available condition's message."""
    from kubernetes import config
    from kubernetes.client import ApiregistrationV1Api
    from kubernetes.client.exceptions import ApiException

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        status = ApiregistrationV1Api(api).read_api_service(APISERVICE).status
    except ApiException as e:
        return f"APIService {APISERVICE}: {e.reason}"
    finally:
        api.close()
    available = next((c for c in (status.conditions if status else None) or () if c.type == "Available"), None)
    if available is not None and available.status == "True":
        return None
    return f"APIService {APISERVICE} not Available: {available.message if available else 'no condition yet'}"


def unregister_aggregator(kubeconfig: str) -> None:
    from kubernetes import config
    from kubernetes.client import ApiregistrationV1Api

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        with contextlib.suppress(Exception):  # stopping anyway; a leftover APIService is only unavailable
            ApiregistrationV1Api(api).delete_api_service(APISERVICE)
    finally:
        api.close()


def wait_until(check: Callable[[], str | None], children: list[Child], stop: threading.Event, timeout_s: float) -> str | None:
    """None once ``check`` returns None; otherwise why not (its last answer, a child died, Ctrl-C)."""
    deadline = time.monotonic() + timeout_s
    problem: str | None = "not checked"
    while time.monotonic() < deadline and not stop.is_set():
        for child in children:
            if child.proc.poll() is not None:
                return f"{child.name} exited with code {child.proc.returncode}; end of {child.log_path}:\n{child.tail()}"
        problem = check()
        if problem is None:
            return None
        stop.wait(0.2)
    return "interrupted" if stop.is_set() else f"{problem} (after {timeout_s:.0f} s)"


def wait_ready(url: str, children: list[Child], stop: threading.Event, timeout_s: float) -> str | None:
    """None once ``url`` answers 200 (https: the certificate is not checked); otherwise why not (a child died, timeout, Ctrl-C)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not stop.is_set():
        for child in children:
            if child.proc.poll() is not None:
                return f"{child.name} exited with code {child.proc.returncode}; end of {child.log_path}:\n{child.tail()}"
        try:
            with urllib.request.urlopen(url, timeout=2, context=_UNVERIFIED if url.startswith("https:") else None) as response:
                if response.status == 200:
                    return None
        except (urllib.error.URLError, OSError):
            pass
        stop.wait(0.2)
    return "interrupted" if stop.is_set() else f"{url} did not answer 200 within {timeout_s:.0f} s"


def what_listens(host: str, port: int) -> tuple[bool, str]:
    """Whether what listens on ``host:port`` is our API, healthy (its ``/readyz``: 200 ``{"status": "ready", "checks":
    {"cache", "cluster"}}``), and what it is, in a few words for the port-taken line."""
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/readyz"
    try:
        with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as response:
            status, raw, server = response.status, response.read(65536), response.headers.get("Server")
    except urllib.error.HTTPError as e:
        status, raw, server = e.code, e.read(65536), e.headers.get("Server")
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        return False, f"what listens there does not answer HTTP ({reason or type(e).__name__})"
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    checks = body.get("checks") if isinstance(body, dict) else None
    if isinstance(checks, dict) and {"cache", "cluster"} <= checks.keys():
        if status == 200 and body.get("status") == "ready":
            return True, "a Darkroom Control Panel, ready"
        failing = "; ".join(f"{name}: {result}" for name, result in checks.items() if result != "ok")
        return False, f"a Darkroom Control Panel answers there but is not ready ({failing or f'HTTP {status}'})"
    named = f", Server: {server}" if server else ""
    return False, f"what listens there is no Darkroom Control Panel (its /readyz answers HTTP {status}{named})"


def check_api_port(host: str, port: int, pid_file: Path) -> None:
    """:class:`CannotStart` naming ``PORT`` when the API's port is taken: a stack of ours running there, healthy, is
    named as such (use it); otherwise what is there, and a stack an earlier run left behind if its pids live."""
    if not port_taken(host, port):
        return
    ours, what = what_listens(host, port)
    stale = stale_stack(pid_file)
    pids = f" (pids {' '.join(map(str, stale))})" if stale else ""
    if ours:
        shown = "localhost" if host in ("127.0.0.1", "localhost") else host
        raise CannotStart(
            f"Darkroom Control Panel is already running at http://{shown}:{port}{pids}: use that one, or run another "
            "beside it on another port with PORT=<port> make api"
        )
    why = (
        f"; {what}, and a stack an earlier run left behind is still running{pids}: stop it with kill, "
        "or choose another port with PORT=<port> make api"
        if stale
        else f"; {what}; choose another with PORT=<port> make api"
    )
    raise CannotStart(PORT_TAKEN.format(port=port, host=host, what="the API and dashboard", why=why))


def run(args: argparse.Namespace, log_dir: Path, kubeconfig: str | None) -> int:
    """Start the stack and wait for Ctrl-C; :class:`CannotStart` before anything runs if the user must change something."""
    pid_file = log_dir / "stack.pids"
    settings = check_api_settings({**os.environ, "DARKROOM_API_HOST": args.host, "PORT": str(args.port)})
    check_api_port(args.host, args.port, pid_file)

    cluster = None
    if kubeconfig:
        where = f"the cluster of kubeconfig {kubeconfig}"
    else:
        data_dir = Path(args.data_dir)
        cluster = start_devcluster(data_dir, "127.0.0.1", args.devcluster_port)
        kubeconfig = str(cluster.kubeconfig_path)
        where = f"embedded devcluster at {cluster.url} (data in {data_dir})"

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    children: list[Child] = []
    code = 0
    registered = False
    cleanups: list[Callable[[], object]] = []
    try:
        crds = install_crds(kubeconfig)
        health_port = free_port("127.0.0.1")
        env = {**os.environ, "KUBECONFIG": kubeconfig, "PYTHONUNBUFFERED": "1"}
        operator = Child(
            "reconciler",
            [sys.executable, "-m", "darkroom_operator", "--kubeconfig", kubeconfig, "--health-port", str(health_port)],
            env=env,
            log_path=log_dir / "operator.log",
        )
        children.append(operator)
        api_env = {**env, "DARKROOM_API_KUBECONFIG": kubeconfig, "DARKROOM_API_HOST": args.host, "PORT": str(args.port)}
        api = Child(
            "API",
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "backend" / "server" / "gunicorn_conf.py"), "backend.server.wsgi:app"],
            env=api_env,
            log_path=log_dir / "api.log",
        )
        children.append(api)
        aggregator_port = args.aggregator_port or free_port("127.0.0.1")
        if port_taken("127.0.0.1", aggregator_port):
            raise CannotStart(
                PORT_TAKEN.format(
                    port=aggregator_port,
                    host="127.0.0.1",
                    what="the aggregated API",
                    why="; choose another with AGGREGATOR_PORT=<port> make api",
                )
            )
        # Kept under the data dir (on devcluster: its APIService's caBundle; elsewhere: the banner's kubectl command's
        # --certificate-authority, the same every run) and given to the server as its own certificate.
        cert_dir = Path(args.data_dir) / "aggregator-certs"
        serving_cert, serving_key = aggregator_certificate(cert_dir)
        aggregator_args = [
            "--secure-port",
            str(aggregator_port),
            "--tls-cert-file",
            str(serving_cert),
            "--tls-private-key-file",
            str(serving_key),
        ]
        aggregator = Child(
            "aggregated API",
            [sys.executable, "-m", "aggregator", "--kubeconfig", kubeconfig, "--bind-address", "127.0.0.1", *aggregator_args],
            env=env,
            log_path=log_dir / "aggregator.log",
        )
        children.append(aggregator)
        pid_file.write_text(" ".join(str(c.proc.pid) for c in children) + "\n")
        shown_host = "localhost" if args.host in ("127.0.0.1", "localhost") else args.host
        url = f"http://{shown_host}:{args.port}"
        aggregator_url = f"https://127.0.0.1:{aggregator_port}"
        problem = (
            wait_ready(f"http://127.0.0.1:{health_port}/readyz", children, stop, 60)
            or wait_ready(f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}/readyz", children, stop, 60)
            or wait_ready(f"{aggregator_url}/readyz", children, stop, 60)
        )
        if problem is None and cluster is not None:
            register_aggregator(kubeconfig, aggregator_port, serving_cert.read_bytes())
            registered = True
            problem = wait_until(lambda: apiservice_problem(str(kubeconfig)), children, stop, 60)
        if problem == "interrupted":
            return 0
        if problem:
            print(f"Darkroom Control Panel could not start: {problem}", file=sys.stderr, flush=True)
            code = 1
            return code
        print("Darkroom Control Panel")
        print(f"  cluster:    {where}")
        if cluster is not None:
            print(f"  note:       {DEVCLUSTER_SIMULATES}")
        print(f"  kubeconfig: {kubeconfig}")
        print(f"  CRDs:       {', '.join(crds)} (installed)")
        print(f"  reconciler: running (pid {operator.proc.pid}; health http://127.0.0.1:{health_port}/healthz; log {operator.log_path})")
        print(f"  API + dashboard: {url} (pid {api.proc.pid}; log {api.log_path})")
        print(f"  who:        {who_line(settings, str(kubeconfig))}")
        # On a cluster of the user's, no APIService: its API server may not reach this machine (in a cluster,
        # deploy/components/aggregator registers one); kubectl can ask the server here directly instead.
        registration = f"APIService {APISERVICE}, through devcluster" if cluster is not None else "not registered with the cluster"
        print(f"  aggregated API: combinedtasks at {aggregator_url} (pid {aggregator.proc.pid}; log {aggregator.log_path}; {registration})")
        if cluster is not None:
            print(f"  try:        kubectl --kubeconfig {kubeconfig} get combinedtasks -A")
        else:
            direct = f"--server {aggregator_url} --certificate-authority {serving_cert}"
            print(f"  try:        kubectl --kubeconfig {kubeconfig} {direct} get combinedtasks -A")
        print(f"  try:        curl {url}/darkrooms    ·    API docs: {url}/docs")
        print("Ctrl-C stops everything.", flush=True)
        while not stop.wait(0.5):
            died = next((c for c in children if c.proc.poll() is not None), None)
            if died is not None:
                print(
                    f"{died.name} exited with code {died.proc.returncode}; end of {died.log_path}:\n{died.tail()}",
                    file=sys.stderr,
                    flush=True,
                )
                code = 1
                break
    finally:
        if registered and kubeconfig:
            unregister_aggregator(kubeconfig)
        for child in reversed(children):
            child.stop()
        pid_file.unlink(missing_ok=True)
        for cleanup in cleanups:
            cleanup()
        if cluster is not None:
            cluster.stop()
        print("stopped.", flush=True)
    return code


def main() -> int:
    parser = argparse.ArgumentParser(description="Run Darkroom Control Panel: cluster, CRDs, reconciler, API + dashboard")
    parser.add_argument("--kubeconfig", help="use this cluster instead of the embedded devcluster (KUBECONFIG also works)")
    parser.add_argument("--data-dir", default=str(ROOT / ".devcluster"), help="embedded devcluster data (default .devcluster/)")
    parser.add_argument(
        "--devcluster-port",
        type=int,
        default=os.environ.get("DEVCLUSTER_PORT") or "6443",
        help="embedded devcluster port (DEVCLUSTER_PORT)",
    )
    parser.add_argument(
        "--host", default=os.environ.get("DARKROOM_API_HOST", "127.0.0.1"), help="address the API binds (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=os.environ.get("PORT") or "5000", help="API + dashboard port (default 5000, PORT)")
    parser.add_argument(
        "--aggregator-port",
        type=int,
        default=os.environ.get("AGGREGATOR_PORT") or "0",
        help="the aggregated API's HTTPS port on 127.0.0.1 (AGGREGATOR_PORT; default: a free one)",
    )
    parser.add_argument("--log-dir", default=str(ROOT / ".logs"), help="where the reconciler's and the API's logs go (default .logs/)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")

    log_dir = Path(args.log_dir)
    kubeconfig = args.kubeconfig or os.environ.get("KUBECONFIG")
    try:
        return run(args, log_dir, kubeconfig)
    except CannotStart as e:
        print(e, file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    from envsettings.startup import skip_kubernetes_validate

    skip_kubernetes_validate()  # installing the CRDs imports the official client's package
    sys.exit(main())
