"""Shared fixtures: the clusters under test (devcluster and the real control plane), clients for them.

A pytest plugin, the one place both test trees find these: the product's (``tests/``) and devcluster's own
(``devcluster/tests/``). pyproject.toml loads it for every run (``-p tests.sharedfixtures``, with the repository root
on ``pythonpath``; :mod:`tests.support` lives beside it), so ``make test``, ``make test-devcluster`` and a ``pytest``
of any one file see the same fixtures and options.

``kube`` (session) is the API server a test runs against. Every test that uses it (directly or through
``api_client``, ``namespace``, ``crds_installed``, ``kubectl``) runs once per selected kind: ``[dev]``
on devcluster (``python -m devcluster serve``, our emulator) and ``[real]`` on realcluster (real
etcd + kube-apiserver + kube-controller-manager + kube-scheduler + a simulated node, built from the
Kubernetes Go modules by ``scripts/build_realcluster.sh``). The same test body runs on both: product
code never branches on the kind, and tests do so only through the fixtures here.

Which kinds run: ``--cluster=dev|real|both`` or the ``TEST_CLUSTER`` variable (default ``both``).
Without a Go toolchain the real half cannot be built: under ``CI=true`` that fails the session;
elsewhere it is left out with a one-line reason in the header. Tests of devcluster itself carry
``@pytest.mark.devcluster_only`` and run on devcluster alone. A test drawn at several looks (widths, colour schemes)
carries ``@pytest.mark.pairwise_with_kinds(argnames, looks)``: each look runs on one kind, every width and every scheme
on both (:func:`pairwise_with_kinds`), not every look on every kind.

``devcluster``/``realcluster`` (session) are the two shared servers; ``fresh_kube`` starts private
ones of the test's kind (for restarts and kills), ``fresh_cluster`` of a kind named (``cluster_kinds``: the kinds this
run selected), ``fresh_devcluster`` private devclusters.
``kubectl`` runs the kubectl on PATH with a private discovery cache; ``namespace`` gives each test its
own namespace.

Under pytest-xdist (``make test``, tests/lanes.py) every worker starts its own session servers (free ports, data dirs under
its own basetemp); the controller alone builds realcluster and Hydra and tells the workers which kinds run
(:func:`pytest_configure_node`), and a build holds a file lock, so pytest processes started side by side build once.

``identity_provider`` (session) is a real OpenID Connect provider (ORY Hydra, ``tests/identityprovider.py``, built by
``scripts/build_hydra.sh`` whenever the real control plane is: the same Go and CI rules); ``oidc_realcluster`` a
private real control plane that trusts its ID tokens, for the clients of ``kube_oidc_clients``; its kube-apiserver
audit log is ``oidc_audit_log`` (:data:`OIDC_AUDIT_POLICY`: access reviews with their bodies, everything else of
people and panels as metadata).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.clusters import ClusterKind, ClusterProcess, DevclusterProcess, RealclusterProcess, free_port, run_build
from tests.support import Kubectl, install_crds, wait_for

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

    from tests.identityprovider import HydraProcess, KubeOIDCClients


def _start(tmp: Path, extra: list[str]) -> DevclusterProcess:
    return DevclusterProcess(tmp, extra_args=extra).start()


SESSION_ARGS = ["--bookmark-interval", "1", "--deployment-ready-delay", "0.3", "--log-level", "WARNING"]
# The simulated node turns pods Ready after the same 0.3 s devcluster waits before a Deployment is ready.
REAL_SESSION_ARGS = ["--pod-ready-delay", "300ms"]


_KINDS = pytest.StashKey[tuple[ClusterKind, ...]]()
_LEFT_OUT = pytest.StashKey[str]()


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cluster",
        choices=("dev", "real", "both"),
        default=os.environ.get("TEST_CLUSTER", "both"),
        help="API server(s) the product suites run on: devcluster, the real control plane, or both (env TEST_CLUSTER)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "devcluster_only(reason): a test of devcluster itself, or one that needs a devcluster-only knob")
    config.addinivalue_line(
        "markers",
        "pairwise_with_kinds(argnames, values): parametrize argnames with values, each value set on one cluster kind so that"
        " every value of every argname meets every kind (pairwise_with_kinds in tests/sharedfixtures.py)",
    )
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:  # an xdist worker: the controller built (or left out) the clusters once for all workers
        config.stash[_KINDS] = tuple(worker_input[_WORKER_KINDS])
        config.stash[_LEFT_OUT] = worker_input[_WORKER_LEFT_OUT]
        config.stash[_IDP_LEFT_OUT] = worker_input[_WORKER_IDP_LEFT_OUT]
        return
    choice = config.getoption("--cluster")
    kinds: list[ClusterKind] = ["dev", "real"] if choice == "both" else [choice]
    config.stash[_LEFT_OUT] = ""
    if "real" in kinds:
        build = run_build("build_realcluster.sh")
        if build.returncode == 3 and not in_ci() and choice == "both":
            kinds.remove("real")
            config.stash[_LEFT_OUT] = "real control plane left out: no Go toolchain (under CI=true this fails)"
        elif build.returncode != 0:
            raise pytest.UsageError(f"cannot build the real control plane (scripts/build_realcluster.sh):\n{build.stderr}")
        elif build.stderr:
            sys.stderr.write(build.stderr)
    config.stash[_KINDS] = tuple(kinds)
    config.stash[_IDP_LEFT_OUT] = _build_identity_provider(kinds, config.stash[_LEFT_OUT])


# What an xdist worker is told by the controller (pytest_configure_node), instead of building again.
_WORKER_KINDS, _WORKER_LEFT_OUT, _WORKER_IDP_LEFT_OUT = "sharedfixtures_kinds", "sharedfixtures_left_out", "sharedfixtures_idp_left_out"


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_configure_node(node: WorkerController) -> None:
    config: pytest.Config = node.config
    kinds: tuple[ClusterKind, ...] = config.stash[_KINDS]
    node.workerinput[_WORKER_KINDS] = list(kinds)
    node.workerinput[_WORKER_LEFT_OUT] = config.stash[_LEFT_OUT]
    node.workerinput[_WORKER_IDP_LEFT_OUT] = config.stash[_IDP_LEFT_OUT]


def pytest_report_header(config: pytest.Config) -> list[str]:
    kinds: tuple[ClusterKind, ...] = config.stash[_KINDS]
    lines = [f"clusters: {', '.join(kinds)}"]
    if config.stash[_LEFT_OUT]:
        lines.append(config.stash[_LEFT_OUT])
    if "real" in kinds and config.stash[_IDP_LEFT_OUT]:
        lines.append(config.stash[_IDP_LEFT_OUT])
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kube" not in metafunc.fixturenames:
        return
    kinds = metafunc.config.stash[_KINDS]
    if metafunc.definition.get_closest_marker("devcluster_only") is not None:
        kinds = ("dev",)
    pairwise = metafunc.definition.get_closest_marker("pairwise_with_kinds")
    if pairwise is None:
        metafunc.parametrize("kube", list(kinds), indirect=True, scope="session")
        return
    argnames, values = pairwise.args
    argnames = [argnames] if isinstance(argnames, str) else list(argnames)
    values = [value if len(argnames) > 1 else (value,) for value in values]
    combinations = [(kind, *value) for kind, value in pairwise_with_kinds(kinds, values)]
    metafunc.parametrize(["kube", *argnames], combinations, indirect=["kube"], scope="session")


def pairwise_with_kinds(kinds: tuple[str, ...], values: Sequence[tuple[object, ...]]) -> list[tuple[str, tuple[object, ...]]]:
    """Each of ``values`` (a test's looks: width, colour scheme) on one of ``kinds``, chosen so that every kind meets every
    single value of every position — pairwise coverage of (kind, width, scheme) instead of their full product.

    A look is drawn by the same templates and stylesheet on either cluster kind; what the kind changes (the objects'
    states, the events, the timing) meets each width and each scheme at least once. With one kind, every value runs on
    it. Greedy, in order: each value set goes to the kind that gains the most (kind, value) pairs not yet met, ties to
    the kind with the fewest value sets so far; a pair still missing at the end (more kinds than value sets) adds a run.
    """
    met: dict[str, set[tuple[int, object]]] = {kind: set() for kind in kinds}
    chosen: list[tuple[str, tuple[object, ...]]] = []
    for value in values:
        pairs = set(enumerate(value))
        kind = max(kinds, key=lambda k: (len(pairs - met[k]), -sum(1 for c, _ in chosen if c == k)))
        met[kind] |= pairs
        chosen.append((kind, value))
    every = {pair for value in values for pair in enumerate(value)}
    for kind in kinds:
        while missing := every - met[kind]:
            pair = min(missing, key=repr)
            value = next(v for v in values if pair in set(enumerate(v)))
            chosen.append((kind, value))
            met[kind] |= set(enumerate(value))
    return sorted(chosen, key=lambda c: (kinds.index(c[0]), values.index(c[1])))


@pytest.fixture(scope="session")
def kube(request: pytest.FixtureRequest) -> ClusterProcess:
    """The API server under test: the session devcluster or the session realcluster."""
    cluster: ClusterProcess = request.getfixturevalue("devcluster" if request.param == "dev" else "realcluster")
    return cluster


@pytest.fixture(scope="session")
def realcluster_required(request: pytest.FixtureRequest) -> None:
    """For tests only the real control plane can answer (RBAC, admission): skipped when it is not selected."""
    if "real" not in request.config.stash[_KINDS]:
        pytest.skip(f"needs the real control plane (--cluster=real|both) {request.config.stash[_LEFT_OUT]}".rstrip())


@pytest.fixture(scope="session")
def realcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealclusterProcess]:
    cluster = RealclusterProcess(tmp_path_factory.mktemp("realcluster"), extra_args=REAL_SESSION_ARGS).start()
    yield cluster
    if cluster.proc is not None:
        cluster.stop()


@pytest.fixture(scope="session")
def cluster_kinds(request: pytest.FixtureRequest) -> tuple[ClusterKind, ...]:
    """The cluster kinds this run selected (``--cluster``, less a real control plane left out): what ``kube`` is
    parametrized with, for a test that drives every kind in one body."""
    kinds: tuple[ClusterKind, ...] = request.config.stash[_KINDS]
    return kinds


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[Callable[..., ClusterProcess]]:
    """Factory for private clusters of a given kind, ``fresh_cluster("dev"|"real", audit_log=None)``, started with the
    session clusters' arguments; all stopped at teardown. ``audit_log``: only what both kinds offer, an ``--audit-log``
    file (read it with :func:`tests.auditlog.read_audit_log`)."""
    started: list[ClusterProcess] = []

    def make(kind: ClusterKind, *, audit_log: Path | None = None) -> ClusterProcess:
        data_dir = tmp_path / f"{kind}{len(started)}"
        cluster: ClusterProcess
        if kind == "dev":
            cluster = DevclusterProcess(data_dir, extra_args=[*SESSION_ARGS], audit_log=audit_log)
        else:
            cluster = RealclusterProcess(data_dir, extra_args=[*REAL_SESSION_ARGS], audit_log=audit_log)
        started.append(cluster.start())
        return cluster

    yield make
    for cluster in started:
        if cluster.proc is not None:
            cluster.stop(signal.SIGKILL)


@pytest.fixture
def fresh_kube(kube: ClusterProcess, fresh_cluster: Callable[..., ClusterProcess]) -> Callable[..., ClusterProcess]:
    """Factory for private clusters of the test's kind (for restarts and kills); all stopped at teardown.

    ``fresh_kube(audit_log=None)``: as :func:`fresh_cluster` of ``kube``'s kind.
    """

    def make(*, audit_log: Path | None = None) -> ClusterProcess:
        return fresh_cluster(kube.kind, audit_log=audit_log)

    return make


@pytest.fixture(scope="session")
def devcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevclusterProcess]:
    cluster = _start(tmp_path_factory.mktemp("devcluster"), SESSION_ARGS)
    yield cluster
    if cluster.proc is not None:
        cluster.stop()


@pytest.fixture
def fresh_devcluster(tmp_path: Path) -> Iterator[Callable[..., DevclusterProcess]]:
    """Factory for private devclusters (extra CLI args allowed); all stopped at teardown."""
    started: list[DevclusterProcess] = []

    def make(*extra: str) -> DevclusterProcess:
        cluster = _start(tmp_path / f"dc{len(started)}", [*SESSION_ARGS, *extra])
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        if cluster.proc is not None:
            cluster.stop(signal.SIGKILL)


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.fail("kubectl is not on PATH: the conformance suite needs it as the independent client")
    return path


@pytest.fixture
def kubectl(kube: ClusterProcess, kubectl_binary: str, tmp_path: Path) -> Kubectl:
    return Kubectl(kube.kubeconfig, tmp_path / "kubectl-cache")


@pytest.fixture(scope="session")
def api_client(kube: ClusterProcess) -> Iterator[object]:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kube.kubeconfig))
    yield api
    api.close()
    del client


@pytest.fixture
def namespace(api_client: object) -> Iterator[str]:
    from kubernetes import client

    name = f"t-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(api_client)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        core.delete_namespace(name)
    except client.ApiException as e:
        if e.status != 404:
            raise


@pytest.fixture(scope="session")
def crds_installed(kube: ClusterProcess) -> None:
    """The product's CRDs from crds/, created and Established."""
    install_crds(kube.kubeconfig)


os.environ.setdefault("PYTHONUNBUFFERED", "1")


@pytest.fixture(autouse=True)
def _root_log_filters_restored() -> Iterator[None]:
    """Each test leaves the root logger's handlers with the filters it found. pytest's own handlers stay on the root logger
    for the whole session (its log file handler, live logging), so a filter a test attaches there — such as
    ``backend.server.logs.install``'s, which rewrites records — would change every record later tests see: a test's
    outcome would depend on which tests ran before it in its process (the order xdist's workers change)."""
    root = logging.getLogger()
    found = {handler: list(handler.filters) for handler in root.handlers}
    yield
    for handler, filters in found.items():
        handler.filters[:] = filters


# --- the OpenID Connect provider (tests/identityprovider.py) and a control plane that trusts it ----------------------

_IDP_LEFT_OUT = pytest.StashKey[str]()


def _build_identity_provider(kinds: list[ClusterKind], real_left_out: str) -> str:
    """Build Hydra (scripts/build_hydra.sh) when the real control plane runs, as realcluster is built above: the
    identity tests need both. Returns why they are left out ('' when they run)."""
    if "real" not in kinds:
        return f"identity provider tests left out: they need the real control plane ({real_left_out or '--cluster=real|both'})"
    build = run_build("build_hydra.sh")
    if build.returncode == 3 and not in_ci():
        return f"identity provider tests left out: {build.stderr.strip()} (under CI=true this fails)"
    if build.returncode != 0:
        raise pytest.UsageError(f"cannot build the identity provider (scripts/build_hydra.sh):\n{build.stderr}")
    if build.stderr:
        sys.stderr.write(build.stderr)
    return ""


@pytest.fixture(scope="session")
def identity_provider(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HydraProcess]:
    """ORY Hydra with its login/consent app, users ``identityprovider.USERS`` (a copy in ``.users``: tests may add).
    Its store is a SQLite file, so a test that stops it (``stops_identity_provider``) starts it again on the same ports
    with every client and key it had: under pytest-xdist such a test need not be the worker's last."""
    from tests.identityprovider import HydraProcess

    if request.config.stash[_IDP_LEFT_OUT]:
        pytest.skip(request.config.stash[_IDP_LEFT_OUT])
    provider = HydraProcess(tmp_path_factory.mktemp("hydra"), persistent=True).start()
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def kube_oidc_clients(identity_provider: HydraProcess) -> KubeOIDCClients:
    """The two clients whose ID tokens ``oidc_realcluster`` accepts. Their redirect URI does not listen: the code is
    read off the redirect (``HydraProcess.authorization_code_tokens``)."""
    from tests.identityprovider import SHORT_LIVED_S, KubeOIDCClients

    client_app = f"http://127.0.0.1:{free_port()}"
    callback, logged_out = [f"{client_app}/callback"], [f"{client_app}/logged-out"]
    return KubeOIDCClients(
        standard=identity_provider.register_client("kubernetes", secrets.token_urlsafe(24), callback, logged_out),
        short_lived=identity_provider.register_client(
            "kubernetes-short-lived",
            secrets.token_urlsafe(24),
            callback,
            logged_out,
            id_token_lifespan=f"{SHORT_LIVED_S}s",
            access_token_lifespan=f"{SHORT_LIVED_S}s",
        ),
    )


# The audit policy of the OIDC control plane: who did what (level Metadata: never a body, so never a Secret's data
# nor a TokenReview's token), and the access reviews whole (level RequestResponse: the attributes and the subject
# asked about, and the answer). The control plane's own components are left out: they are not what the tests watch.
OIDC_AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    users: ["system:kube-controller-manager", "system:kube-scheduler", "system:apiserver", "system:kube-proxy"]
  - level: None
    userGroups: ["system:nodes", "system:serviceaccounts:kube-system"]
  - level: None
    nonResourceURLs: ["/*"]
  - level: None
    resources: [{group: coordination.k8s.io, resources: [leases]}]
  - level: RequestResponse
    resources: [{group: authorization.k8s.io, resources: [subjectaccessreviews, selfsubjectaccessreviews]}]
  - level: Metadata
"""


@pytest.fixture(scope="session")
def oidc_realcluster(
    identity_provider: HydraProcess, kube_oidc_clients: KubeOIDCClients, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealclusterProcess]:
    """A private real control plane whose kube-apiserver also trusts ``identity_provider``'s ID tokens
    (``--authentication-config``: audiences the ``kube_oidc_clients``, user ``oidc:<sub>``, groups ``oidc:<group>``),
    beside its static tokens. Ready once an ID token of alice authenticates."""
    from tests.identityprovider import PANEL_CLIENT_ID, authentication_configuration, whoami

    data_dir = tmp_path_factory.mktemp("oidc-realcluster")
    config = authentication_configuration(
        data_dir / "authentication-config.yaml",
        issuer=identity_provider.issuer,
        ca_pem=identity_provider.ca_pem,
        audiences=[kube_oidc_clients.standard.client_id, kube_oidc_clients.short_lived.client_id, PANEL_CLIENT_ID],
    )
    policy = data_dir / "audit-policy.yaml"
    policy.write_text(OIDC_AUDIT_POLICY)
    cluster = RealclusterProcess(
        data_dir,
        extra_args=[*REAL_SESSION_ARGS, "--authentication-config", str(config), "--audit-policy-file", str(policy)],
        audit_log=data_dir / "audit.log",
    ).start()
    try:
        alice = identity_provider.users["alice"]
        token = identity_provider.authorization_code_tokens(kube_oidc_clients.standard, alice.username, alice.password).id_token
        # kube-apiserver fetches the issuer's discovery document and keys in the background; until then it refuses.
        wait_for(
            lambda: whoami(cluster.url, cluster.ca_path, token),
            timeout_s=60,
            interval_s=0.2,
            message="kube-apiserver to accept an ID token",
        )
    except BaseException:
        cluster.stop()
        raise
    yield cluster
    if cluster.proc is not None:
        cluster.stop()


@pytest.fixture(scope="session")
def oidc_audit_log(oidc_realcluster: RealclusterProcess) -> Path:
    """kube-apiserver's audit log of ``oidc_realcluster`` (JSON lines, :data:`OIDC_AUDIT_POLICY`)."""
    return oidc_realcluster.data_dir / "audit.log"
