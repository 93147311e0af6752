"""The YAML view's rules (backend/dashboard/yamlview.py): managedFields are dropped, a Secret is never dumped
(not even when passed as an object or as a child with its object), frozen mappings dump as plain YAML,
children without an object of their own (missing, someone else's) are left out.
"""

from __future__ import annotations

from typing import Any

import yaml

from backend.dashboard import yamlview
from cluster import freeze

DARKROOM: dict[str, Any] = {
    "apiVersion": "deployments.example.com/v1",
    "kind": "Darkroom",
    "metadata": {"name": "shop", "namespace": "ns", "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"subDomains": ["a", "b"]},
}
SECRET: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "shop-s3-credentials"},
    "data": {"secretKey": "c2VjcmV0"},
}


def test_managed_fields_are_dropped_and_the_rest_kept_in_order() -> None:
    text = yamlview.text(freeze(DARKROOM))  # as the cache holds it
    assert text is not None and "managedFields" not in text and "fieldsV1" not in text
    assert list(yaml.safe_load(text)) == ["apiVersion", "kind", "metadata", "spec"]
    assert yaml.safe_load(text)["spec"] == {"subDomains": ["a", "b"]}
    assert DARKROOM["metadata"]["managedFields"]  # the object itself is untouched


def test_a_secret_is_never_dumped() -> None:
    assert yamlview.text(SECRET) is None
    children: list[dict[str, Any]] = [
        {"kind": "Secret", "name": "shop-s3-credentials", "object": SECRET},
        {"kind": "ConfigMap", "name": "shop", "object": {"kind": "ConfigMap", "metadata": {"name": "shop"}, "data": {"k": "v"}}},
        {"kind": "Service", "name": "shop"},  # not there, or someone else's: no object, no entry
    ]
    entries = yamlview.entries(DARKROOM, children)
    assert [(e["kind"], e["text"] is None) for e in entries] == [("Darkroom", False), ("Secret", True), ("ConfigMap", False)]
    dumped = "".join(str(e) for e in entries)
    assert "c2VjcmV0" not in dumped and "secretKey" not in dumped
