"""Connection building: which cluster is chosen, and the errors when none is usable.

Behaviours: an explicit kubeconfig connects and reports its source, server and version; it wins
over ``KUBECONFIG``; ``KUBECONFIG`` is used when no path is given, then ``~/.kube/config``; with
none of them, in-cluster config is chosen when ``KUBERNETES_SERVICE_HOST`` is set; with nothing
configured, ``NoCluster`` lists every source tried and why; an unreadable kubeconfig and an
unreachable server each give ``NoCluster`` naming the kubeconfig, the server and the reason, with
the underlying error chained; the error is an ``Unavailable`` (retryable).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster import ConnectionSettings, NoCluster, Unavailable, connect
from tests.clusters import ClusterProcess, free_port

from .network import kubeconfig_for


def test_explicit_kubeconfig_connects(kube: ClusterProcess, tmp_path: Path) -> None:
    conn = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ={}, home=tmp_path)
    try:
        assert conn.source == f"kubeconfig {kube.kubeconfig}"
        assert conn.server == kube.url
        assert conn.version.startswith("v1.")
        assert conn.transport.request("GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    finally:
        conn.close()


def test_explicit_kubeconfig_wins_over_environment(kube: ClusterProcess, tmp_path: Path) -> None:
    dead = kubeconfig_for(kube, tmp_path / "dead", port=free_port())
    conn = connect(ConnectionSettings(kubeconfig=kube.kubeconfig), environ={"KUBECONFIG": str(dead)}, home=tmp_path)
    conn.close()
    assert conn.server == kube.url


def test_kubeconfig_variable_then_home_default(kube: ClusterProcess, tmp_path: Path) -> None:
    conn = connect(ConnectionSettings(), environ={"KUBECONFIG": str(kube.kubeconfig)}, home=tmp_path)
    conn.close()
    assert conn.source == f"KUBECONFIG={kube.kubeconfig}"
    (tmp_path / ".kube").mkdir()
    kubeconfig_for(kube, tmp_path / ".kube" / "config")
    conn = connect(ConnectionSettings(), environ={}, home=tmp_path)
    conn.close()
    assert conn.source == f"kubeconfig {tmp_path / '.kube' / 'config'}"
    assert conn.server == kube.url


def test_nothing_configured_lists_every_source_tried(tmp_path: Path) -> None:
    with pytest.raises(NoCluster) as caught:
        connect(ConnectionSettings(), environ={}, home=tmp_path)
    sources = [source for source, _ in caught.value.attempts]
    assert sources == ["explicit kubeconfig", "KUBECONFIG", f"kubeconfig {tmp_path / '.kube' / 'config'}", "in-cluster config"]
    assert "KUBERNETES_SERVICE_HOST is not set" in str(caught.value)
    assert isinstance(caught.value, Unavailable)


def test_in_cluster_config_is_chosen_inside_a_pod(tmp_path: Path) -> None:
    with pytest.raises(NoCluster) as caught:
        connect(ConnectionSettings(), environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}, home=tmp_path)
    ((source, why),) = caught.value.attempts
    assert source == "in-cluster service account"
    assert "cannot load configuration" in why
    assert caught.value.__cause__ is not None


def test_unreadable_kubeconfig_is_reported(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(NoCluster) as caught:
        connect(ConnectionSettings(kubeconfig=missing), environ={}, home=tmp_path)
    assert str(missing) in str(caught.value)
    assert "cannot load configuration" in str(caught.value)


def test_unreachable_server_is_reported_with_cause(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    path = kubeconfig_for(None, tmp_path / "kubeconfig", port=port)
    with pytest.raises(NoCluster) as caught:
        connect(ConnectionSettings(kubeconfig=path, connect_timeout_s=2), environ={}, home=tmp_path)
    message = str(caught.value)
    assert str(path) in message and url in message
    assert "GET /version" in message and "refused" in message.lower()
    assert isinstance(caught.value.__cause__, Unavailable)
    assert caught.value.__cause__.__cause__ is not None  # the urllib3 error, chained
