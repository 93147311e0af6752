"""Our kinds as the identity tests address them, fresh names of this session, and valid bodies (helpers, no tests,
no fixtures).

:class:`Kind` is one kind's API ``/<plural>`` and kube resource (:data:`KIND_LIST`, :data:`BY_PLURAL`);
:func:`unique` a fresh DNS label carrying this session's :data:`RUN`; :func:`body` a valid create/replace body of a
kind, :func:`changed` a merge patch that changes it, :func:`s3_darkroom` a Darkroom with S3 keys.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from backend.core.kinds.registry import KINDS
from cluster.resources import Resource

RUN = uuid.uuid4().hex[:5]  # in every name this session makes, so lists can be narrowed to it


@dataclass(frozen=True)
class Kind:
    """One of our kinds as the tests address it: the API's ``/<plural>`` and kube's resource."""

    title: str
    plural: str
    resource: Resource

    @property
    def group(self) -> str:
        return self.resource.group

    def kube_path(self, namespace: str, name: str = "") -> str:
        path = f"/apis/{self.group}/{self.resource.version}/namespaces/{namespace}/{self.plural}"
        return f"{path}/{name}" if name else path


KIND_LIST = tuple(Kind(kind.title, kind.plural, kind.resource) for kind in KINDS)
BY_PLURAL = {kind.plural: kind for kind in KIND_LIST}


def unique(prefix: str) -> str:
    """A fresh DNS label of this session: ``<prefix>-<run>-<random>``."""
    return f"{prefix}-{RUN}-{uuid.uuid4().hex[:5]}"


def body(plural: str, name: str, namespace: str, **changes: Any) -> dict[str, Any]:
    """A valid create/replace body of the kind (friendly form)."""
    if plural == "darkrooms":
        shape: dict[str, Any] = {
            "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"},
            "subDomains": [f"{name}-{namespace}"],  # sub-domains are one namespace for the whole cluster
        }
    elif plural == "tasks":
        shape = {"priority": 5, "deadline": "2031-03-31T17:00:00Z", "details": "Write notes."}
    else:
        shape = {}
    return {"name": name, "namespace": namespace, **shape, **changes}


def changed(plural: str) -> dict[str, Any]:
    """A merge patch that changes something of the kind (also valid as extra fields of :func:`body`)."""
    if plural == "darkrooms":
        return {"version": "0.2.0"}
    if plural == "tasks":
        return {"priority": 7}
    return {"resources": {"requests": {"cpu": "100m"}}}


def s3_darkroom(name: str, namespace: str, keys: tuple[str, str]) -> dict[str, Any]:
    source = {"type": "S3", "bucket": "demo-images", "region": "eu-west-1", "accessKey": keys[0], "secretKey": keys[1]}
    return {"name": name, "namespace": namespace, "source": source, "subDomains": [f"{name}-{namespace}"]}
