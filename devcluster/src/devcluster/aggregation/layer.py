"""The aggregation layer as devcluster's server uses it: start/stop, the published ConfigMap, and the
requests it answers — TokenReview, SubjectAccessReview, discovery of aggregated groups, their OpenAPI v3
documents (listed in ``/openapi/v3`` while Available, fetched from the backend as ``system:kube-aggregator``),
proxying.

:class:`AggregationLayer` is what :class:`devcluster.serving.Api` asks (:meth:`answer`) before its own
routing; ``None`` from it means "not mine".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from devcluster import protobuf
from devcluster.aggregation.identity import AUTH_CONFIGMAP, Identity, User, authentication_configmap
from devcluster.aggregation.pki import Pki
from devcluster.aggregation.proxy import Proxy
from devcluster.aggregation.registry import Registry
from devcluster.catalog import Catalog
from devcluster.errors import StatusError
from devcluster.store import Store
from devcluster.writing import WriteOptions, Writer

AGGREGATOR = User("system:kube-aggregator", ("system:masters",))  # devcluster's own calls to aggregated servers
_APISERVER = WriteOptions(manager="kube-apiserver", field_validation="Ignore")
_REVIEWS = {
    ("authentication.k8s.io", "v1", "tokenreviews"): "token_review",
    ("authorization.k8s.io", "v1", "subjectaccessreviews"): "subject_access_review",
}
# Reviews a caller makes about itself: answered for whoever the request authenticates as.
_SELF_REVIEWS = {
    ("authentication.k8s.io", "v1", "selfsubjectreviews"): "self_subject_review",
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews"): "self_subject_access_review",
}


def _version_key(version: str) -> tuple[int, int, int, str]:
    """kube's version priority: GA > beta > alpha, higher numbers first, then others alphabetically."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)
    level = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    return (level, -int(match.group(1)), -int(match.group(3) or 0), "")


class AggregationLayer:
    def __init__(self, *, store: Store, catalog: Catalog, writer: Writer, pki: Pki, clock: Callable[[], str]) -> None:
        self.store, self.catalog, self.writer, self.pki = store, catalog, writer, pki
        self.identity = Identity(pki)
        self.registry = Registry(store=store, catalog=catalog, writer=writer, pki=pki, clock=clock)
        self.proxy = Proxy()

    def start(self) -> None:
        self.publish_configmap()
        self.registry.start()

    async def stop(self) -> None:
        await self.registry.stop()
        await self.proxy.close()

    def publish_configmap(self) -> None:
        """Write ``kube-system/extension-apiserver-authentication`` (again when the PKI changed)."""
        namespace, name = AUTH_CONFIGMAP
        wanted = authentication_configmap(self.pki)
        resource = self.catalog.builtin("", "configmaps")
        current = self.store.get(resource.storage_key, namespace, name)
        if current is None:
            self.writer.create(resource, namespace, wanted, _APISERVER)
        elif current.get("data") != wanted["data"]:
            self.writer.update(resource, namespace, name, {**wanted, "metadata": current["metadata"]}, _APISERVER)

    # -- discovery ------------------------------------------------------------------------------

    def groups(self, local_groups: set[str]) -> list[dict[str, Any]]:
        """APIGroups of aggregated group/versions (groups devcluster serves itself are left to it)."""
        versions: dict[str, list[str]] = {}
        for backend in self.registry.backends():
            if backend.group not in local_groups:
                versions.setdefault(backend.group, []).append(backend.version)
        out = []
        for group in sorted(versions):
            ordered = sorted(set(versions[group]), key=_version_key)
            out.append(
                {
                    "name": group,
                    "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered],
                    "preferredVersion": {"groupVersion": f"{group}/{ordered[0]}", "version": ordered[0]},
                }
            )
        return out

    # -- requests -------------------------------------------------------------------------------

    def openapi_group_versions(self, local: set[str]) -> list[str]:
        """Aggregated ``group/version``s whose OpenAPI v3 document ``/openapi/v3`` lists (Available ones)."""
        return sorted(f"{b.group}/{b.version}" for b in self.registry.backends() if b.available and f"{b.group}/{b.version}" not in local)

    async def answer(self, request: web.Request, parts: list[str]) -> web.StreamResponse | None:
        """The response to a request this layer serves, else None (devcluster routes it itself)."""
        if parts[:3] == ["openapi", "v3", "apis"] and len(parts) == 5:
            # an aggregated group's OpenAPI v3 document, fetched as kube-aggregator's OpenAPI controller does
            backend = self.registry.backend(parts[3], parts[4])
            if backend is None or self.catalog.group_versions().get(f"{parts[3]}/{parts[4]}"):
                return None
            return await self.proxy.forward(request, backend, AGGREGATOR)
        if len(parts) < 3 or parts[0] != "apis":
            return None
        group, version = parts[1], parts[2]
        key = (group, version, parts[3] if len(parts) == 4 else "")
        review, self_review = _REVIEWS.get(key), _SELF_REVIEWS.get(key)
        if review is not None or self_review is not None:
            if request.method != "POST":
                raise StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            raw = await request.read()
            if request.content_type == protobuf.MEDIA_TYPE:  # kubectl auth whoami / can-i send protobuf
                body = protobuf.decode(raw)
            else:
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError as e:
                    raise StatusError(400, "BadRequest", f"the body is not JSON: {e}") from None
            if self_review is not None:
                answer = getattr(self.identity, self_review)(body, self.identity.authenticate(request.headers))
            else:
                answer = getattr(self.identity, str(review))(body)
            return web.Response(status=201, body=orjson.dumps(answer), content_type="application/json")
        if self.catalog.group_versions().get(f"{group}/{version}"):
            return None  # served by devcluster itself: local APIServices win
        target = self.registry.backend(group, version)
        if target is None:
            return None
        user = self.identity.authenticate(request.headers)
        return await self.proxy.forward(request, target, user)

    def group_document(self, group: str) -> dict[str, Any] | None:
        """``/apis/<group>`` of an aggregated group (served by devcluster, as kube-aggregator does)."""
        found = [g for g in self.groups(set()) if g["name"] == group]
        return {"kind": "APIGroup", "apiVersion": "v1", **found[0]} if found else None
