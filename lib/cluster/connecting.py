"""Building a connection to the API server: which cluster, which credentials, is it reachable.

:func:`connect` is called once by each entry point (``make api``, the reconciler) with
:class:`cluster.settings.ConnectionSettings` and the process environment. The cluster is, in order
of what the user chose: an explicit kubeconfig (a flag — or the kubeconfig an embedded devcluster
wrote, which the entry point that started it passes here), ``KUBECONFIG`` or ``~/.kube/config``, or
the in-cluster service account. The first source the user configured is the one used — never a
silent fallback to another cluster. When it cannot be loaded or does not answer, or none is
configured, :class:`NoCluster` says what was tried and why each attempt failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client as k8s_client
from kubernetes.config import incluster_config, kube_config
from kubernetes.config.config_exception import ConfigException

from cluster import errors
from cluster.requesting import Transport
from cluster.settings import ConnectionSettings


class NoCluster(errors.Unavailable):
    """No usable cluster: ``attempts`` lists (source, why it failed) in the order tried."""

    def __init__(self, attempts: list[tuple[str, str]]) -> None:
        lines = "; ".join(f"{source}: {why}" for source, why in attempts) or "no source configured"
        super().__init__(f"no reachable Kubernetes cluster ({lines})", status=0, reason="NoCluster")
        self.attempts = attempts


@dataclass
class Connection:
    """An authenticated client for one cluster. ``source`` says where the configuration came from."""

    api_client: Any
    transport: Transport
    source: str
    server: str
    version: str

    def close(self) -> None:
        """Close the connection pools (idempotent). Stop informers that use them first."""
        self.transport.close()
        self.api_client.close()


def _from_kubeconfig(path: str, context: str | None) -> Any:
    configuration = k8s_client.Configuration()
    # persist_config=False: never rewrite the user's kubeconfig (token refreshes stay in memory).
    kube_config.load_kube_config(config_file=path, context=context, client_configuration=configuration, persist_config=False)
    return configuration


def _from_in_cluster(environ: Mapping[str, str]) -> Any:
    configuration = k8s_client.Configuration()
    loader = incluster_config.InClusterConfigLoader(
        token_filename=incluster_config.SERVICE_TOKEN_FILENAME, cert_filename=incluster_config.SERVICE_CERT_FILENAME, environ=environ
    )
    loader.load_and_set(configuration)
    return configuration


def _chosen_source(settings: ConnectionSettings, environ: Mapping[str, str], home: Path) -> tuple[str, str | None] | list[tuple[str, str]]:
    """(description, kubeconfig path or None for in-cluster), or the list of sources found unusable."""
    if settings.kubeconfig is not None:
        return f"kubeconfig {settings.kubeconfig}", str(settings.kubeconfig)
    if environ.get("KUBECONFIG"):
        return f"KUBECONFIG={environ['KUBECONFIG']}", environ["KUBECONFIG"]
    default = home / ".kube" / "config"
    if default.exists():
        return f"kubeconfig {default}", str(default)
    if environ.get(incluster_config.SERVICE_HOST_ENV_NAME):
        return "in-cluster service account", None
    return [
        ("explicit kubeconfig", "none given"),
        ("KUBECONFIG", "not set"),
        (f"kubeconfig {default}", "file does not exist"),
        ("in-cluster config", f"{incluster_config.SERVICE_HOST_ENV_NAME} is not set (not running in a pod)"),
    ]


def connect(settings: ConnectionSettings, *, environ: Mapping[str, str], home: Path | None = None) -> Connection:
    """A :class:`Connection` to the cluster the user chose; raises :class:`NoCluster` with what was tried."""
    chosen = _chosen_source(settings, environ, home or Path.home())
    if isinstance(chosen, list):
        raise NoCluster(chosen)
    source, path = chosen
    try:
        configuration = _from_in_cluster(environ) if path is None else _from_kubeconfig(path, settings.context)
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as e:
        raise NoCluster([(source, f"cannot load configuration: {e}")]) from e
    api_client = k8s_client.ApiClient(configuration)
    transport = Transport(api_client=api_client, connect_timeout_s=settings.connect_timeout_s, request_timeout_s=settings.request_timeout_s)
    server = str(configuration.host)
    version = ""
    if settings.probe:
        try:
            info = transport.request("GET", "/version", timeout_s=settings.connect_timeout_s)
        except errors.ClusterError as e:
            api_client.close()
            raise NoCluster([(f"{source} (server {server})", e.message)]) from e
        version = str(info.get("gitVersion", ""))
    return Connection(api_client=api_client, transport=transport, source=source, server=server, version=version)
