"""The :class:`Api`: kube-apiserver's routes over the store (get/list/watch, the write verbs, subresources),
each answering with kube's status codes, headers and bodies; discovery and OpenAPI documents are
:mod:`devcluster.serving.discovering`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import yaml
from aiohttp import web

from devcluster import discovery, duplicates, errors, podlogs, printing, protobuf, scaling
from devcluster.aggregation import AggregationLayer
from devcluster.auditing import RECORD_KEY, AuditLog, verb_of
from devcluster.catalog import Catalog
from devcluster.errors import StatusError
from devcluster.reading import ListQuery, list_objects
from devcluster.resources import ResourceType
from devcluster.selectors import parse_field_selector, parse_label_selector
from devcluster.serving.discovering import Discovery, json_response
from devcluster.serving.negotiation import (
    _DUPLICATES_KEY,
    _NOT_FOUND,
    JSON,
    Rendering,
    Target,
    _accepts,
    _boolean,
    _dry_run_causes,
    _EmptyNotFound,
    _int_param,
    _list_items,
    _PlainNotFound,
    _validate_watch_options,
    _with_body_dry_run,
)
from devcluster.settings import ServerSettings
from devcluster.store import Store
from devcluster.watching import Watch, WatchEvent, bookmark, open_watch
from devcluster.writing import APPLY_PATCH, WriteOptions, Writer, WriteResult, at_version

log = logging.getLogger("devcluster.serving")


class Api:
    """Request handling; one instance per server, used only on its event loop."""

    def __init__(
        self, *, store: Store, catalog: Catalog, writer: Writer, settings: ServerSettings, aggregation: AggregationLayer | None = None
    ) -> None:
        self.store, self.catalog, self.writer, self.settings = store, catalog, writer, settings
        self.aggregation = aggregation
        self.discovery = Discovery(catalog=catalog, settings=settings, aggregation=aggregation)
        self.stopping = asyncio.Event()
        self.audit = AuditLog(settings.audit_log) if settings.audit_log else None

    # -- entry -------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        response: web.StreamResponse | None = None
        try:
            response = await self._dispatch(request)
        except StatusError as e:
            response = self._status_response(e)
        except _PlainNotFound:
            response = web.Response(status=404, text="404 page not found\n", content_type="text/plain")
        except _EmptyNotFound:
            response = web.Response(status=404)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as e:  # a bug must still answer like kube-apiserver does
            log.exception("internal error serving %s %s", request.method, request.path)
            response = self._status_response(StatusError(500, "InternalError", f"Internal error occurred: {e}"))
        deprecation = request.get(_DEPRECATION_KEY)
        if deprecation and not response.prepared:
            _add_warnings(response, [deprecation], first=True)
        self._audit(request, response.status)
        return response

    def _audit(self, request: web.Request, code: int) -> None:
        """Write the request's audit record once (see :mod:`devcluster.auditing`)."""
        record = request.get(RECORD_KEY)
        if self.audit is not None and record is not None:
            request[RECORD_KEY] = None
            self.audit.write(record, code)

    @staticmethod
    def _status_response(error: StatusError) -> web.Response:
        response = web.Response(status=error.code, body=orjson.dumps(error.body()), content_type=JSON)
        for key, value in error.headers.items():
            response.headers[key] = value
        return response

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return self.discovery.root()
        head = parts[0]
        if self.aggregation is not None:
            answered = await self.aggregation.answer(request, parts)
            if answered is not None:
                return answered
        if head in ("healthz", "livez", "readyz") and len(parts) == 1:
            return web.Response(text="ok", content_type="text/plain")
        if head == "version" and len(parts) == 1:
            return self._json(discovery.version_info())
        if head == "openapi":
            return self.discovery.openapi(request, parts)
        if head == "api":
            document = self.discovery.core_group(parts)
            return document if document is not None else await self._resource_request(request, "", "v1", parts[2:])
        if head == "apis":
            document = self.discovery.named_groups(parts)
            return document if document is not None else await self._resource_request(request, parts[1], parts[2], parts[3:])
        raise _PlainNotFound

    # -- resource requests -------------------------------------------------------------------

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        legacy_watch = bool(rest) and rest[0] == "watch"
        if legacy_watch:
            rest = rest[1:]
        if not rest:
            raise _NOT_FOUND
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            candidate = self.catalog.lookup(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        resource = self.catalog.lookup(group, version, rest[0])
        if resource is None or len(rest) > 3:
            raise _NOT_FOUND
        if namespace is not None and not resource.namespaced:
            raise _NOT_FOUND
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        allowed_subs = {"status"} if resource.status_subresource else set()
        if resource.scale_subresource:
            allowed_subs.add("scale")
        if resource.plural == "namespaces" and not resource.group:
            allowed_subs.add("finalize")
        if resource.plural == "pods" and not resource.group:
            allowed_subs.add("log")
        if sub and sub not in allowed_subs:
            # the custom resource handler reads an unknown subresource as part of the object's name
            raise errors.not_found(resource.plural, resource.group, name) if resource.is_custom else _NOT_FOUND
        if not resource.namespaced:
            namespace = ""
        return Target(resource, namespace, name, sub, legacy_watch)

    async def _resource_request(self, request: web.Request, group: str, version: str, rest: list[str]) -> web.StreamResponse:
        target = self._target(group, version, rest)
        # kube warns of a deprecated version on every request to it, whatever the answer (handle adds it)
        request[_DEPRECATION_KEY] = target.resource.deprecation_warning
        watching = target.legacy_watch or _boolean(request.query.get("watch"))
        if self.audit is not None:
            request[RECORD_KEY] = self._audit_record(request, target, watching=watching)
        if request.method == "GET":
            return await self._read(request, target, watching=watching)
        if watching:
            raise errors.method_not_allowed()
        opts = self._write_options(request, target)
        method, named = request.method, bool(target.name)
        result: WriteResult | web.StreamResponse
        if method == "POST":
            result = await self._create(request, target, opts)
        elif method == "PUT" and named:
            result = await self._put(request, target, opts)
        elif method == "PATCH" and named:
            result = await self._patch(request, target, opts)
        elif method == "DELETE" and named:
            result = await self._delete_one(request, target, opts)
        elif method == "DELETE":
            return await self._delete_collection(request, target, opts)
        else:
            raise errors.method_not_allowed()
        if isinstance(result, web.StreamResponse):
            return result
        response = self._render(_accepts(request.headers.get("Accept", "")), target.resource, result.obj, status=result.code)
        _add_warnings(response, result.warnings)
        return response

    def _audit_record(self, request: web.Request, target: Target, *, watching: bool) -> dict[str, Any]:
        resource = target.resource
        return {
            "verb": verb_of(request.method, named=bool(target.name), watching=watching),
            "apiGroup": resource.group,
            "resource": resource.plural,
            "subresource": target.subresource,
            "namespace": target.namespace or "",
            "name": target.name,
            "userAgent": request.headers.get("User-Agent", ""),
            "dryRun": "All" in request.query.getall("dryRun", []),
        }

    async def _read(self, request: web.Request, target: Target, *, watching: bool) -> web.StreamResponse:
        """GET: a /scale, a watch, one object or a list."""
        resource = target.resource
        rendering = _accepts(request.headers.get("Accept", ""), collection=not target.name)
        if target.subresource == "scale":
            return self._render(rendering, resource, scaling.read_scale(self.store, resource, target.namespace or "", target.name))
        if target.subresource == "log":
            return await self._pod_log(request, target)
        if watching:
            return await self._watch(request, target, rendering)
        if target.name:
            obj = self.store.get(resource.storage_key, target.namespace or "", target.name)
            if obj is None:
                raise errors.not_found(resource.plural, resource.group, target.name)
            include_object = request.query.get("includeObject", "Metadata")
            return self._render(rendering, resource, at_version(obj, resource), include_object=include_object)
        items, meta = list_objects(self.store, resource, self._list_query(request, target))
        return self._render_list(rendering, resource, [at_version(o, resource) for o in items], meta, request)

    async def _pod_log(self, request: web.Request, target: Target) -> web.StreamResponse:
        """GET pods/<name>/log: the simulated log (:mod:`devcluster.podlogs`), streamed while following."""
        namespace = target.namespace or ""
        pod = self.store.get("/pods", namespace, target.name)
        if pod is None:
            raise errors.not_found("pods", "", target.name)
        options = podlogs.log_request(pod, request.query, datetime.now(UTC))
        node = (pod.get("spec") or {}).get("nodeName")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        if not node:  # not scheduled: kube-apiserver answers an empty log
            await response.prepare(request)
            return response
        started = podlogs.container_started(pod, options.container, previous=options.previous)
        container = next(
            c
            for key in ("containers", "initContainers", "ephemeralContainers")
            for c in pod["spec"].get(key) or []
            if c.get("name") == options.container
        )
        lines = [(started, text) for text in podlogs.simulated_log(pod, container, node)]
        left = options.limit_bytes

        async def send(text: str) -> bool:
            nonlocal left
            data = text.encode()
            if left is not None:
                data, left = data[:left], left - min(left, len(data))
            try:
                await response.write(data)
            except ConnectionResetError:  # the client went (`kubectl logs -f` ended): the stream ends, as kube's does
                left = 0
            return left != 0

        await response.prepare(request)
        uid = pod["metadata"]["uid"]
        per_second = podlogs.log_rate(pod)
        if per_second is not None:
            rate = podlogs.Rate(per_second, started, node)
            await self._rate_log(send, rate, lines, options, (namespace, target.name, uid))
            with contextlib.suppress(ConnectionResetError):  # the client went
                await response.write_eof()
            return response
        more = await send(podlogs.select_lines(lines, options))
        while options.follow and more and options.stream != "Stderr" and not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), podlogs.FOLLOW_INTERVAL_S)
            current = self.store.get("/pods", namespace, target.name)
            if self.stopping.is_set() or current is None or current["metadata"]["uid"] != uid:
                break  # the server stops, or the pod is gone: its containers' streams end
            follow = podlogs.LogOptions(container=options.container, timestamps=options.timestamps)
            more = await send(podlogs.select_lines([(datetime.now(UTC), podlogs.follow_line(node))], follow))
        with contextlib.suppress(ConnectionResetError):  # the client went
            await response.write_eof()
        return response

    async def _rate_log(
        self,
        send: Callable[[str], Awaitable[bool]],
        rate: podlogs.Rate,
        lines: list[tuple[datetime, str]],
        options: podlogs.LogOptions,
        pod: tuple[str, str, str],
    ) -> None:
        """The log of a container writing at ``rate`` (:class:`devcluster.podlogs.Rate`): what the request selects, then
        while following the lines whose time came, batched per write, until the client goes or the pod does."""
        kept, first, last = podlogs.select_rate(lines, rate, options, datetime.now(UTC))
        more = await send(podlogs.select_lines(kept, dataclasses.replace(options, since=None, tail_lines=None)))
        for chunk in rate.chunks(first, last, timestamps=options.timestamps):
            if not more:
                return
            more = await send(chunk)
            await asyncio.sleep(0)  # up to RATE_RETAINED_LINES lines: other requests go between the chunks
        namespace, name, uid = pod
        following = max(first, last + 1)  # the next line to write
        while options.follow and more and options.stream != "Stderr" and not self.stopping.is_set():
            now = datetime.now(UTC)
            if following > rate.written(now):  # caught up: wait for the next line's time (a tick at least)
                due = (rate.stamp(following) - now).total_seconds()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), min(podlogs.FOLLOW_INTERVAL_S, max(podlogs.RATE_TICK_S, due)))
            current = self.store.get("/pods", namespace, name)
            if self.stopping.is_set() or current is None or current["metadata"]["uid"] != uid:
                return  # the server stops, or the pod is gone: its containers' streams end
            last = rate.written(datetime.now(UTC))
            following = max(following, last - podlogs.RATE_RETAINED_LINES + 1)  # a reader far behind: rotated away
            upto = min(last, following + podlogs.RATE_CHUNK_LINES - 1)
            if upto >= following:
                more = await send(next(rate.chunks(following, upto, timestamps=options.timestamps)))
                following = upto + 1
                await asyncio.sleep(0)  # behind (a slow client): catching up chunk by chunk, other requests between

    async def _create(self, request: web.Request, target: Target, opts: WriteOptions) -> WriteResult:
        resource = target.resource
        crd_terminating = self._crd_terminating(resource)
        if target.name or target.namespace is None or (resource.namespaced and not target.namespace):
            raise errors.method_not_allowed() if target.name else _NOT_FOUND
        if crd_terminating:
            name = str(((await self._body(request)) or {}).get("metadata", {}).get("name", ""))
            raise errors.forbidden_error(
                resource.plural, resource.group, name, "create not allowed while custom resource definition is terminating"
            )
        body = await self._body(request)
        return self.writer.create(resource, target.namespace, body, opts, duplicates=request.get(_DUPLICATES_KEY))

    async def _put(self, request: web.Request, target: Target, opts: WriteOptions) -> WriteResult | web.StreamResponse:
        resource, namespace = target.resource, target.namespace or ""
        body = await self._body(request)
        if target.subresource == "scale":
            scale = scaling.update_scale(self.writer, resource, namespace, target.name, body, opts)
            return self._render(_accepts(request.headers.get("Accept", "")), resource, scale)
        if target.subresource == "finalize":  # an update of the namespace, recorded under the finalize subresource
            body = {**(body if isinstance(body, dict) else {})}
            opts = WriteOptions(opts.manager, opts.dry_run, opts.field_validation, "finalize")
        return self.writer.update(resource, namespace, target.name, body, opts, duplicates=request.get(_DUPLICATES_KEY))

    async def _patch(self, request: web.Request, target: Target, opts: WriteOptions) -> WriteResult | web.StreamResponse:
        resource, namespace = target.resource, target.namespace or ""
        content_type = request.content_type
        raw = await request.read()
        if target.subresource == "scale":
            scale = scaling.patch_scale(self.writer, resource, namespace, target.name, content_type, raw, opts)
            return self._render(_accepts(request.headers.get("Accept", "")), resource, scale)
        force = _boolean(request.query.get("force"))
        return self.writer.patch(resource, namespace, target.name, content_type, raw, opts, force=force)

    async def _delete_one(self, request: web.Request, target: Target, opts: WriteOptions) -> WriteResult | web.StreamResponse:
        resource = target.resource
        options, from_body = await self._delete_options(request)
        opts = _with_body_dry_run(opts, options, from_body=from_body)
        if opts.dry_run and request.get(RECORD_KEY):
            request[RECORD_KEY]["dryRun"] = True
        if resource.plural == "namespaces" and not resource.group and target.name in ("default", "kube-system", "kube-public"):
            raise errors.forbidden_error("namespaces", "", target.name, "this namespace may not be deleted")
        result = self.writer.delete(resource, target.namespace or "", target.name, options, opts)
        if result.deleted and not resource.returns_deleted_object:
            meta = result.obj["metadata"]
            details = {
                "name": meta["name"],
                **({"group": resource.group} if resource.group else {}),
                "kind": resource.plural,
                "uid": meta.get("uid"),
            }
            return self._json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
        return result

    def _crd_terminating(self, resource: ResourceType) -> bool:
        if not resource.is_custom:
            return False
        crd = self.store.get("apiextensions.k8s.io/customresourcedefinitions", "", resource.crd_name)
        return bool(crd and crd["metadata"].get("deletionTimestamp"))

    def _list_query(self, request: web.Request, target: Target) -> ListQuery:
        query = request.query
        limit = _int_param(request, "limit")
        if limit < 0:
            limit = 0
        return ListQuery(
            namespace=target.namespace if target.resource.namespaced and target.namespace else None,
            labels=parse_label_selector(query.get("labelSelector")),
            fields=parse_field_selector(query.get("fieldSelector"), target.resource),
            limit=limit,
            continue_token=query.get("continue", ""),
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )

    def _write_options(self, request: web.Request, target: Target) -> WriteOptions:
        query = request.query
        dry_run_values = query.getall("dryRun", [])
        validation = query.get("fieldValidation", "") or "Warn"
        manager = query.get("fieldManager", "")
        is_apply = request.method == "PATCH" and request.content_type == APPLY_PATCH
        if request.method in ("POST", "PUT", "PATCH"):
            # Validate{Create,Update,Patch}Options: one 422 Invalid for the options kind (DELETE: _delete_options).
            causes: list[errors.Cause] = []
            if request.method == "PATCH" and not is_apply and "force" in query:
                causes.append(errors.forbidden("force", "may not be specified for non-apply patch"))
            if is_apply and not manager:
                causes.append(errors.required("fieldManager", "is required for apply patch"))
            if len(manager) > 128:
                causes.append(errors.too_long("fieldManager", 128))
            causes += _dry_run_causes(dry_run_values)
            if validation not in ("Ignore", "Warn", "Strict"):
                causes.append(errors.not_supported("fieldValidation", validation, ["", "Ignore", "Strict", "Warn"]))
            if causes:
                kind = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}[request.method]
                raise errors.invalid(kind, "meta.k8s.io", "", causes)
        if not manager and not is_apply:
            manager = request.headers.get("User-Agent", "unknown").split("/", 1)[0][:128] or "unknown"
        sub = target.subresource if target.subresource in ("status",) else ""
        return WriteOptions(manager=manager, dry_run=bool(dry_run_values), field_validation=validation, subresource=sub)

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        if len(raw) > self.settings.max_request_bytes:
            raise errors.request_entity_too_large(self.settings.max_request_bytes)
        content_type = request.content_type
        if content_type == protobuf.MEDIA_TYPE:  # client-go typed clients; answers stay JSON
            return protobuf.decode(raw)
        try:
            if content_type in ("application/yaml", "application/x-yaml", "text/yaml"):
                return yaml.safe_load(raw.decode("utf-8"))
            if content_type in ("application/json", "application/octet-stream", ""):
                body, request[_DUPLICATES_KEY] = duplicates.loads(raw)  # duplicate fields: fieldValidation's business
                return body
        except (orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"the body of the request could not be decoded: {e}") from e
        raise errors.unsupported_media_type(content_type, ["application/json", "application/yaml", protobuf.MEDIA_TYPE])

    async def _delete_options(self, request: web.Request) -> tuple[dict[str, Any], bool]:
        """DeleteOptions and whether they came from the body. Like kube-apiserver's DeleteResource: a body
        is decoded as DeleteOptions and the query's options are then ignored; without one they are
        read from the query."""
        options: dict[str, Any] = {}
        raw = await request.read()
        if raw and request.content_type == protobuf.MEDIA_TYPE:
            options.update(protobuf.decode(raw, expect_kind="DeleteOptions"))
        elif raw.strip():
            try:
                decoded = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise errors.bad_request(f"the body of the request could not be decoded as DeleteOptions: {e}") from e
            if isinstance(decoded, dict):
                kind = decoded.get("kind")
                if kind and kind != "DeleteOptions":  # the body is decoded by kind, and only DeleteOptions is registered
                    version = str(decoded.get("apiVersion") or "v1").rsplit("/", 1)[-1]
                    raise errors.bad_request(
                        f'no kind "{kind}" is registered for version "{version}" in scheme "pkg/runtime/scheme.go:111"'
                    )
                options.update(decoded)
        from_body = bool(raw.strip())
        query = request.query
        if "propagationPolicy" in query and not from_body:
            options["propagationPolicy"] = query["propagationPolicy"]
        if "orphanDependents" in query and not from_body:
            options["orphanDependents"] = _boolean(query["orphanDependents"])
        # ValidateDeleteOptions runs before the object is looked up.
        causes: list[errors.Cause] = []
        policy = options.get("propagationPolicy")
        if policy is not None and options.get("orphanDependents") is not None:
            causes.append(errors.invalid_value("propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"))
        if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
            causes.append(errors.not_supported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]))
        causes += _dry_run_causes([*([] if from_body else query.getall("dryRun", [])), *(options.get("dryRun") or [])])
        if causes:
            raise errors.invalid("DeleteOptions", "meta.k8s.io", "", causes)
        return options, from_body

    async def _delete_collection(self, request: web.Request, target: Target, opts: WriteOptions) -> web.Response:
        resource = target.resource
        if (resource.namespaced and not target.namespace) or "deletecollection" not in discovery.resource_verbs(resource):
            raise errors.method_not_allowed()
        options, from_body = await self._delete_options(request)
        opts = _with_body_dry_run(opts, options, from_body=from_body)
        items, meta = list_objects(self.store, resource, self._list_query(request, target))
        deleted = []
        for obj in items:
            try:
                result = self.writer.delete(resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"], options, opts)
            except StatusError as e:
                if e.code == 404:
                    continue
                raise
            # an object deleted outright is reported as the list found it; one held by finalizers as updated
            deleted.append(at_version(obj, resource) if result.deleted else result.obj)
        items = _list_items(resource, deleted)
        return self._json({"kind": resource.list_kind, "apiVersion": resource.group_version, "metadata": meta, "items": items})

    # -- rendering ---------------------------------------------------------------------------

    _json = staticmethod(json_response)

    def _encode(self, rendering: Rendering, document: Any, status: int = 200) -> web.Response:
        if rendering.yaml:  # as bytes: kube's Content-Type has no charset parameter
            return web.Response(status=status, body=yaml.safe_dump(document, sort_keys=False).encode(), content_type="application/yaml")
        return self._json(document, status)

    def _render(
        self, rendering: Rendering, resource: ResourceType, obj: dict[str, Any], *, status: int = 200, include_object: str = "Metadata"
    ) -> web.Response:
        if rendering.kind == "Table":
            document = printing.table(
                resource,
                [obj],
                include_object=include_object,
                now=datetime.now(UTC),
                list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                api_version=rendering.api_version,
            )
            return self._encode(rendering, document, status)
        if rendering.kind == "PartialObjectMetadata":
            return self._encode(
                rendering, {"kind": "PartialObjectMetadata", "apiVersion": rendering.api_version, "metadata": obj["metadata"]}, status
            )
        return self._encode(rendering, obj, status)

    def _render_list(
        self, rendering: Rendering, resource: ResourceType, items: list[dict[str, Any]], meta: dict[str, Any], request: web.Request
    ) -> web.Response:
        if rendering.kind == "Table":
            include = request.query.get("includeObject", "Metadata")
            return self._encode(
                rendering,
                printing.table(
                    resource, items, include_object=include, now=datetime.now(UTC), list_meta=meta, api_version=rendering.api_version
                ),
            )
        if rendering.kind == "PartialObjectMetadata":
            partial = [{"kind": "PartialObjectMetadata", "apiVersion": rendering.api_version, "metadata": o["metadata"]} for o in items]
            return self._encode(
                rendering, {"kind": "PartialObjectMetadataList", "apiVersion": rendering.api_version, "metadata": meta, "items": partial}
            )
        items = _list_items(resource, items)
        if resource.is_custom:  # an unstructured list's metadata always carries continue
            meta = {"continue": "", **meta}
        if rendering.yaml:
            return self._encode(
                rendering, {"apiVersion": resource.group_version, "kind": resource.list_kind, "metadata": meta, "items": items}
            )
        # Hand-assembled so each stored object is serialized once, without building another dict.
        body = b"".join(
            (
                b'{"apiVersion":',
                orjson.dumps(resource.group_version),
                b',"kind":',
                orjson.dumps(resource.list_kind),
                b',"metadata":',
                orjson.dumps(meta),
                b',"items":',
                orjson.dumps(items),
                b"}",
            )
        )
        return web.Response(body=body, content_type=JSON)

    # -- watch -------------------------------------------------------------------------------

    def _watch_selection(self, request: web.Request, target: Target) -> ListQuery:
        """What a watch selects: the list's selection, and for a single object's watch its name as a field selector."""
        list_query = self._list_query(request, target)
        if not target.name:
            return list_query
        name = parse_field_selector(f"metadata.name={target.name}", target.resource)
        return ListQuery(list_query.namespace, list_query.labels, name, resource_version=list_query.resource_version)

    async def _watch(self, request: web.Request, target: Target, rendering: Rendering) -> web.StreamResponse:
        query = request.query
        list_query = self._watch_selection(request, target)
        timeout_s = float(_int_param(request, "timeoutSeconds") or self.settings.default_watch_timeout_s)
        allow_bookmarks = _boolean(query.get("allowWatchBookmarks"))
        send_initial = query.get("sendInitialEvents")
        _validate_watch_options(send_initial, query.get("resourceVersionMatch", ""))
        _check_watch_version(list_query.resource_version)
        opened = open_watch(
            self.store,
            target.resource,
            list_query,
            send_initial_events=_boolean(send_initial) if send_initial is not None else None,
            allow_bookmarks=allow_bookmarks,
        )
        response = web.StreamResponse(status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"})
        _add_warnings(response, [target.resource.deprecation_warning])  # "" when the version is not deprecated
        response.enable_chunked_encoding()
        await response.prepare(request)
        self._audit(request, 200)  # a watch is recorded when it starts, not when it ends
        first_table = True

        async def send(event: WatchEvent) -> None:
            nonlocal first_table
            obj = event.obj
            if event.type in ("ADDED", "MODIFIED", "DELETED"):
                obj = at_version(obj, target.resource)
                if rendering.kind == "Table":
                    obj = printing.table(
                        target.resource,
                        [obj],
                        include_object=query.get("includeObject", "Metadata"),
                        now=datetime.now(UTC),
                        list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                        include_definitions=first_table,
                        api_version=rendering.api_version,
                    )
                    first_table = False
                elif rendering.kind == "PartialObjectMetadata":
                    obj = {"kind": "PartialObjectMetadata", "apiVersion": rendering.api_version, "metadata": obj["metadata"]}
            await response.write(orjson.dumps({"type": event.type, "object": obj}) + b"\n")

        if not isinstance(opened, Watch):
            await send(opened)
            await response.write_eof()
            return response
        watch = opened
        deadline = time.monotonic() + timeout_s
        next_bookmark = time.monotonic() + self.settings.bookmark_interval_s
        try:
            while not self.stopping.is_set():
                now = time.monotonic()
                if now >= deadline:
                    if allow_bookmarks:
                        await send(bookmark(target.resource, self.store.revision))
                    break
                if watch.overflowed:
                    break
                if allow_bookmarks and now >= next_bookmark and not watch.pending:
                    await send(bookmark(target.resource, self.store.revision))
                    next_bookmark = now + self.settings.bookmark_interval_s
                wait = min(deadline, next_bookmark if allow_bookmarks else deadline, now + 1.0) - now
                event = await watch.next(wait)
                if event is not None:
                    await send(event)
                    while watch.pending:
                        await send(watch.pending.popleft())
                elif request.transport is None or request.transport.is_closing():
                    break
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.store.unsubscribe(target.resource.storage_key, watch)
        return response


def _check_watch_version(rv: str) -> None:
    """The watch cache's ParseResourceVersion: a version that is not a number is a plain (500) error."""
    if rv not in ("", "0") and not rv.isdigit():
        raise errors.internal(f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": invalid syntax')


_DEPRECATION_KEY = "devcluster.deprecation"  # the request's version's deprecation warning (empty: not deprecated)


def _add_warnings(response: web.StreamResponse, warnings: list[str], *, first: bool = False) -> None:
    """Warning headers (``299 - "<text>"``) on ``response``; ``first`` puts them before those it has (kube adds a
    deprecated version's warning before handling the request)."""
    values = []
    for warning in filter(None, warnings):
        escaped = warning.replace("\\", "\\\\").replace('"', '\\"')
        values.append(f'299 - "{escaped}"')
    if first:
        values += response.headers.getall("Warning", [])
        response.headers.popall("Warning", None)
    for value in values:
        response.headers.add("Warning", value)
