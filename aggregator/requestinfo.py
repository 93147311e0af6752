"""What a request asks for, as kube's ``RequestInfoFactory`` sees it: the attributes authorization checks.

A path under ``/apis/<group>/<version>/`` with a resource is a *resource request* (namespace,
resource, name, subresource, and the verb from the method: get/list/watch, create, update, patch,
delete/deletecollection); anything else (``/apis``, discovery, ``/openapi/v3``, ``/metrics``) is a
*non-resource request* (path and the lower-case method). A list or watch with a ``metadata.name=``
field selector names that object, as kube-apiserver records it. Used by :mod:`aggregator.authz`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cluster.attributes import Attributes, NonResourceAttributes, ResourceAttributes

VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


@dataclass(frozen=True)
class RequestInfo:
    is_resource: bool
    verb: str
    path: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""

    def attributes(self) -> Attributes:
        """What a SubjectAccessReview of this request is about."""
        if not self.is_resource:
            return NonResourceAttributes(path=self.path, verb=self.verb)
        return ResourceAttributes(
            verb=self.verb,
            resource=self.resource,
            group=self.group,
            namespace=self.namespace,
            name=self.name,
            subresource=self.subresource,
            version=self.version,
        )


def _name_from_field_selector(text: str) -> str:
    for term in text.split(","):
        for operator in ("==", "="):
            field, found, value = term.partition(operator)
            if found and field.strip() == "metadata.name" and not field.endswith("!"):
                return value
    return ""


def request_info(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    parts = [p for p in path.split("/") if p]
    verb = method.lower()
    if len(parts) < 4 or parts[0] != "apis":
        return RequestInfo(is_resource=False, verb=verb, path=path)
    group, version, rest = parts[1], parts[2], parts[3:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    elif rest[0] == "namespaces" and len(rest) == 2:
        namespace = rest[1]  # the namespace object itself (kube: resource "namespaces", name = namespace)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    watching = query.get("watch", "").lower() in ("true", "1", "t")
    if method in ("GET", "HEAD"):
        if name:
            resource_verb = "watch" if watching else "get"
        else:
            resource_verb = "watch" if watching else "list"
            name = _name_from_field_selector(query.get("fieldSelector", ""))
    elif method == "DELETE":
        resource_verb = "delete" if name else "deletecollection"
    else:
        resource_verb = VERBS.get(method, verb)
    return RequestInfo(
        is_resource=True,
        verb=resource_verb,
        path=path,
        group=group,
        version=version,
        namespace=namespace,
        resource=resource,
        name=name,
        subresource=subresource,
    )
