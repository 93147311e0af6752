"""The reviews a caller makes about itself — what the product's dashboard asks to show what its user may do.

Behaviours, on both servers as the kubeconfig's admin: ``kubectl auth whoami`` (a SelfSubjectReview) names the
caller and its ``system:masters`` group; ``kubectl auth can-i`` (a SelfSubjectAccessReview) answers yes for a
resource and for a non-resource URL; a SelfSubjectAccessReview with neither (or both) attribute kinds is 422.
devcluster's own behaviour beyond that (every caller it authenticates is allowed) is its DIFFERENCES.md K10.
"""

from __future__ import annotations

import json

from kubernetes import client

from tests.support import Kubectl


def test_whoami_names_the_caller(kubectl: Kubectl) -> None:
    review = json.loads(kubectl.run("auth", "whoami", "-o", "json").stdout)
    assert review["kind"] == "SelfSubjectReview"
    assert "system:masters" in review["status"]["userInfo"]["groups"]
    assert review["status"]["userInfo"]["username"]


def test_can_i(kubectl: Kubectl, crds_installed: None, namespace: str) -> None:
    assert kubectl.run("auth", "can-i", "create", "darkrooms.deployments.example.com", "-n", namespace).stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "delete", "secrets", "-n", namespace).stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "get", "/healthz").stdout.strip() == "yes"


def test_a_self_access_review_needs_exactly_one_kind_of_attributes(api_client: client.ApiClient) -> None:
    api = client.AuthorizationV1Api(api_client)
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}}
    try:
        api.create_self_subject_access_review(body)
    except client.ApiException as e:
        assert e.status == 422
    else:
        raise AssertionError("an empty SelfSubjectAccessReview was accepted")
