"""Shared fixtures: a devcluster process on a free port with a temp data dir, clients for it.

``devcluster`` (session) is a real ``python -m devcluster serve`` subprocess so tests talk to it
over HTTP exactly as kubectl and the official client do; ``fresh_devcluster`` starts a private one
for tests that restart or kill it. ``kubectl`` runs the kubectl on PATH against a cluster with a
private discovery cache. ``namespace`` gives each test its own namespace.
"""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import ROOT, DevclusterProcess, Kubectl


def _start(tmp: Path, extra: list[str]) -> DevclusterProcess:
    return DevclusterProcess(tmp, extra_args=extra).start()


SESSION_ARGS = ["--bookmark-interval", "1", "--deployment-ready-delay", "0.3", "--log-level", "WARNING"]


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
def kubectl(devcluster: DevclusterProcess, kubectl_binary: str, tmp_path: Path) -> Kubectl:
    return Kubectl(devcluster.kubeconfig, tmp_path / "kubectl-cache")


@pytest.fixture(scope="session")
def api_client(devcluster: DevclusterProcess) -> Iterator[object]:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(devcluster.kubeconfig))
    yield api
    api.close()
    del client


@pytest.fixture
def namespace(api_client: object) -> Iterator[str]:
    from kubernetes import client

    name = f"t-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(api_client)  # type: ignore[arg-type]
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        core.delete_namespace(name)
    except client.ApiException as e:
        if e.status != 404:
            raise


@pytest.fixture(scope="session")
def crds_installed(devcluster: DevclusterProcess, api_client: object) -> None:
    """The product's CRDs, applied server-side from crds/."""
    import yaml
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)  # type: ignore[arg-type]
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        try:
            ext.create_custom_resource_definition(body)
        except client.ApiException as e:
            if e.status != 409:
                raise


os.environ.setdefault("PYTHONUNBUFFERED", "1")
