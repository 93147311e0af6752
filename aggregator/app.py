"""The aiohttp application: routes, authentication and authorization middleware, and errors as Status.

:func:`create_app` is called by :mod:`aggregator.serving` with a :class:`Components` (the view, the
current auth config, the TokenReview and SubjectAccessReview clients, metrics). Why aiohttp: it is
already a dependency, serves HTTPS with the standard ``ssl`` module (client certificates reach the
handler through the connection's ``ssl_object``), and streams a watch as chunked JSON lines from an
``asyncio`` handler — thousands of idle watches cost a coroutine each, not a thread. Blocking work
(TokenReview/SubjectAccessReview round trips, waiting for a resourceVersion) runs in threads.

Every request except ``/healthz``, ``/livez`` and ``/readyz`` must authenticate (:mod:`aggregator.authn`;
anonymous: 401) and be allowed (:mod:`aggregator.authz`; 403); every error is a ``metav1.Status``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import orjson
from aiohttp import web
from cryptography import x509
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from aggregator import authn, combining, listing, openapi, queries, resources, statuses, tables, watching
from aggregator.authconfig import AuthConfig
from aggregator.authn import Headers
from aggregator.authz import ALWAYS_ALLOW_PATHS, Authorizer, forbidden_wording
from aggregator.metrics import Metrics
from aggregator.requestinfo import request_info
from aggregator.view import View
from cluster import ClusterError
from cluster.identities import User
from cluster.reviewing import TokenReviewer

log = logging.getLogger(__name__)
JSON = "application/json"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Components:
    view: View
    tokens: TokenReviewer
    authorizer: Authorizer
    metrics: Metrics
    watch: watching.WatchSettings
    auth_config: AuthConfig = field(default_factory=AuthConfig)
    wait_s: float = 3.0

    @property
    def ready(self) -> bool:
        return self.view.ready and self.view.tasks.has_synced and self.view.events.has_synced


COMPONENTS = web.AppKey("components", Components)
USER = "aggregator.user"


def _json(body: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type=JSON, headers=headers)


def _error(error: statuses.ApiError) -> web.Response:
    return _json(error.status(), status=error.code, headers=error.headers or None)


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    components = request.app[COMPONENTS]
    try:
        response = await handler(request)
    except statuses.ApiError as e:
        response = _error(e)
    except web.HTTPMethodNotAllowed:
        response = _error(statuses.method_not_allowed())
    except web.HTTPNotFound:
        response = _error(statuses.no_route())
    except ClusterError as e:
        log.warning("%s %s: the cluster failed: %s", request.method, request.path, e)
        response = _error(statuses.unavailable(f"the aggregated API server could not reach the cluster: {e.message}"))
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        response = _error(statuses.internal())
    components.metrics.served.labels(request.method, str(response.status)).inc()
    return response


def _peer_certificate(request: web.Request) -> x509.Certificate | None:
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    return x509.load_der_x509_certificate(der) if der else None


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path in ALWAYS_ALLOW_PATHS:
        return await handler(request)  # probes: no credentials needed (kube's AlwaysAllowPaths)
    components = request.app[COMPONENTS]
    headers = Headers(list(request.headers.items()))
    cert = _peer_certificate(request)
    user = await asyncio.to_thread(authn.authenticate, cert, headers, config=components.auth_config, tokens=components.tokens)
    if user is None:
        raise statuses.unauthorized()
    info = request_info(request.method, request.path, request.query)
    decision = await asyncio.to_thread(components.authorizer.authorize, user, info)
    if not decision.allowed:
        what, scope = forbidden_wording(info)
        raise statuses.forbidden(user.name, info.verb, what, scope, decision.reason)
    request[USER] = user
    return await handler(request)


def user_of(request: web.Request) -> User:
    user: User = request[USER]
    return user


# -- handlers -------------------------------------------------------------------------------------


async def healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def readyz(request: web.Request) -> web.Response:
    if not request.app[COMPONENTS].ready:
        return web.Response(status=503, text="informers not synced")
    return web.Response(text="ok")


def _legacy_discovery_only(request: web.Request) -> None:
    """406 unless the Accept header takes plain JSON: kube-apiserver's discovery manager asks for the
    aggregated format (apidiscovery.k8s.io/v2) only and falls back to the group-version document on 406;
    an APIGroupList under a 200 would leave the group Stale and kubectl without its resources."""
    accept = request.headers.get("Accept", "")
    if not accept.strip():
        return
    for media in accept.split(","):
        kind, _, raw = media.partition(";")
        if kind.strip().lower() in ("application/json", "application/*", "*/*") and "as=" not in raw.replace(" ", ""):
            return
    raise statuses.not_acceptable(accept)


async def api_group_list(request: web.Request) -> web.Response:
    _legacy_discovery_only(request)
    return _json(resources.api_group_list())


async def api_group(request: web.Request) -> web.Response:
    _legacy_discovery_only(request)
    if request.match_info["group"] != resources.GROUP:
        raise statuses.no_route()
    return _json(resources.api_group_document())


async def api_resource_list(request: web.Request) -> web.Response:
    _legacy_discovery_only(request)
    if (request.match_info["group"], request.match_info["version"]) != (resources.GROUP, resources.VERSION):
        raise statuses.no_route()
    return _json(resources.api_resource_list())


async def openapi_root(request: web.Request) -> web.Response:
    return web.Response(body=openapi.root(), content_type=JSON)


async def openapi_group_version(request: web.Request) -> web.Response:
    if request.match_info["path"] != f"{resources.GROUP}/{resources.VERSION}":
        raise statuses.no_route()
    return web.Response(body=openapi.document(), content_type=JSON, headers={"Cache-Control": "public, immutable"})


async def metrics(request: web.Request) -> web.Response:
    components = request.app[COMPONENTS]
    components.metrics.objects.set(len(components.view))
    return web.Response(body=generate_latest(components.metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def collection(request: web.Request) -> web.StreamResponse:
    components = request.app[COMPONENTS]
    namespace = request.match_info.get("namespace")
    options = queries.parse(request.query)
    table_version = tables.negotiate(request.headers.get("Accept", ""))
    include = tables.include_object(request.query.get("includeObject"))
    if options.watch:
        output = watching.Output(table_version, include)
        return await watching.serve(
            request, view=components.view, options=options, namespace=namespace, output=output, settings=components.watch
        )
    page = await asyncio.to_thread(listing.list_page, components.view, options, namespace, wait_s=components.wait_s)
    if table_version is not None:
        meta: dict[str, object] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
        return _json(tables.table(page.items, version=table_version, include=include, list_meta=meta))
    return _json(
        combining.list_body(
            page.items, resource_version=page.resource_version, continue_token=page.continue_token, remaining=page.remaining
        )
    )


async def item(request: web.Request) -> web.StreamResponse:
    components = request.app[COMPONENTS]
    table_version = tables.negotiate(request.headers.get("Accept", ""))
    include = tables.include_object(request.query.get("includeObject"))
    obj = listing.get(components.view, request.match_info["namespace"], request.match_info["name"])
    if table_version is not None:
        return _json(
            tables.table([obj], version=table_version, include=include, list_meta={"resourceVersion": obj["metadata"]["resourceVersion"]})
        )
    return _json(obj)


async def not_allowed(request: web.Request) -> web.StreamResponse:
    raise statuses.method_not_allowed()


def create_app(components: Components) -> web.Application:
    app = web.Application(middlewares=[errors_middleware, auth_middleware])
    app[COMPONENTS] = components
    base = resources.BASE_PATH
    plural = resources.PLURAL
    routes = [
        ("/healthz", healthz),
        ("/livez", healthz),
        ("/readyz", readyz),
        ("/metrics", metrics),
        ("/apis", api_group_list),
        ("/apis/", api_group_list),
        ("/apis/{group}", api_group),
        ("/apis/{group}/{version}", api_resource_list),
        ("/openapi/v3", openapi_root),
        ("/openapi/v3/apis/{path:.+}", openapi_group_version),
        (f"{base}/{plural}", collection),
        (f"{base}/namespaces/{{namespace}}/{plural}", collection),
        (f"{base}/namespaces/{{namespace}}/{plural}/{{name}}", item),
    ]
    for path, handler in routes:
        app.router.add_get(path, handler)
    for path in (f"{base}/{plural}", f"{base}/namespaces/{{namespace}}/{plural}", f"{base}/namespaces/{{namespace}}/{plural}/{{name}}"):
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            app.router.add_route(method, path, not_allowed)
    return app
