"""The discovery side of the :class:`~devcluster.serving.api.Api`: the root path list, ``/api``, ``/apis``,
group and group-version documents (aggregated groups included) and ``/openapi/v3`` with its per-group-version
documents, cached per catalog generation. Resource paths below a group version are the Api's.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from devcluster import discovery, openapi
from devcluster.aggregation import AggregationLayer
from devcluster.catalog import Catalog
from devcluster.serving.negotiation import _NOT_FOUND, JSON, _EmptyNotFound, _PlainNotFound
from devcluster.settings import ServerSettings

ROOT_PATHS = ("/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version", "/openapi/v3")


def json_response(document: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(document), content_type=JSON)


class Discovery:
    """The discovery and OpenAPI documents of what the catalog serves; one instance per :class:`Api`."""

    def __init__(self, *, catalog: Catalog, settings: ServerSettings, aggregation: AggregationLayer | None) -> None:
        self.catalog, self.settings, self.aggregation = catalog, settings, aggregation
        self._openapi_cache: dict[str, tuple[int, dict[str, Any], str]] = {}

    @staticmethod
    def root() -> web.Response:
        return json_response({"paths": sorted(ROOT_PATHS)})

    def core_group(self, parts: list[str]) -> web.Response | None:
        """``/api`` and ``/api/v1``; None for a path below ``/api/v1`` (a resource request)."""
        if len(parts) == 1:
            return json_response(discovery.core_versions(f"{self.settings.host}:{self.settings.port}"))
        if parts[1] != "v1":
            raise _NOT_FOUND
        if len(parts) == 2:
            return json_response(discovery.api_resource_list("v1", self.catalog.group_versions().get("v1", [])))
        return None

    def named_groups(self, parts: list[str]) -> web.Response | None:
        """``/apis``, a group and a group-version (aggregated groups: their discovery); None for a path below a served
        group version (a resource request)."""
        if len(parts) == 1:
            resources = [r for r in self.catalog.all() if r.group]
            groups = discovery.api_group_list(resources, preferred=self.catalog.preferred_versions())
            if self.aggregation is not None:
                groups["groups"] = discovery.sort_groups(groups["groups"] + self.aggregation.groups({r.group for r in resources}))
            return json_response(groups)
        group = parts[1]
        resources = [r for r in self.catalog.all() if r.group == group]
        if not resources:
            aggregated = self.aggregation.group_document(group) if self.aggregation is not None and len(parts) == 2 else None
            if aggregated is not None:
                return json_response(aggregated)
            raise _PlainNotFound
        if len(parts) == 2:
            return json_response(discovery.api_group(group, resources, self.catalog.preferred_versions().get(group)))
        version = parts[2]
        served = self.catalog.group_versions().get(f"{group}/{version}")
        if not served:
            raise _NOT_FOUND
        if len(parts) == 3:
            return json_response(discovery.api_resource_list(f"{group}/{version}", served))
        return None

    def openapi(self, request: web.Request, parts: list[str]) -> web.Response:
        """``/openapi/v3`` (the index with each document's hash) and ``/openapi/v3/<api|apis>/<group version>``."""
        if parts[1:2] != ["v3"]:
            raise _NOT_FOUND
        gvs = self.catalog.group_versions()
        docs: dict[str, tuple[dict[str, Any], str]] = {}
        for gv, resources in gvs.items():
            key = f"api/{gv}" if "/" not in gv else f"apis/{gv}"
            cached = self._openapi_cache.get(key)
            if cached is None or cached[0] != self.catalog.generation:
                document = openapi.group_version_document(gv, resources)
                cached = (self.catalog.generation, document, openapi.document_hash(document))
                self._openapi_cache[key] = cached
            docs[key] = (cached[1], cached[2])
        if len(parts) == 2:
            listed = sorted(gvs) + (self.aggregation.openapi_group_versions(set(gvs)) if self.aggregation is not None else [])
            return json_response(openapi.root_document(listed, {k: h for k, (_, h) in docs.items()}))
        key = "/".join(parts[2:])
        if key not in docs:
            raise _EmptyNotFound
        document, digest = docs[key]
        response = json_response(document)
        response.headers["ETag"] = f'"{digest}"'
        response.headers["Cache-Control"] = "public, immutable" if request.query.get("hash") == digest else "no-cache, private"
        return response
