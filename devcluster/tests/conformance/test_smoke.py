"""Smoke: devcluster starts, the official client lists namespaces, CRDs install and serve."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.support import as_dict

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube


def test_default_namespaces_exist(api_client: client.ApiClient) -> None:
    names = {ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items if ns.metadata}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


def test_crds_serve_custom_resources(api_client: client.ApiClient, crds_installed: None, namespace: str) -> None:
    custom = client.CustomObjectsApi(api_client)
    body = {
        "apiVersion": "deployments.example.com/v1",
        "kind": "Darkroom",
        "metadata": {"name": "smoke"},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com"}, "subDomains": ["a"]},
    }
    created = as_dict(custom.create_namespaced_custom_object("deployments.example.com", "v1", namespace, "darkrooms", body))
    assert created["spec"]["replicas"] == 1
    assert created["spec"]["cacheTime"] == 31536000
    assert created["metadata"]["generation"] == 1
