"""Forwarding a request for an aggregated group/version to its backend, as kube-aggregator's proxy does.

The request goes to the backend's address (:mod:`devcluster.aggregation.registry`) over TLS with the
front-proxy client certificate, its path, query, body and headers unchanged except: the caller's
credentials (``Authorization``) and any ``X-Remote-*`` / ``Impersonate-*`` headers it sent are dropped,
and ``X-Remote-User`` / ``X-Remote-Group`` (one per group) name the caller devcluster authenticated
(:mod:`devcluster.aggregation.identity`); ``X-Forwarded-For``/``-Proto``/``-Host`` are added. The answer
streams back chunk by chunk (a watch stays open as long as either side does), status and headers kept
(hop-by-hop headers aside), compressed bodies passed through as they are.

Errors are kube-apiserver's: an unavailable APIService is 503 ``ServiceUnavailable`` "service
unavailable"; a backend that cannot be reached is 503 "error trying to reach service: <why>".
"""

from __future__ import annotations

import contextlib
import logging

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from devcluster.aggregation.identity import User
from devcluster.aggregation.registry import Backend
from devcluster.errors import StatusError

log = logging.getLogger("devcluster.aggregation")

_HOP_BY_HOP = frozenset(
    (
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    )
)
_CALLER_ONLY = ("authorization",)
_DROPPED_PREFIXES = ("x-remote-", "impersonate-")


def forwarded_headers(request: web.Request, user: User) -> CIMultiDict[str]:
    """The headers the backend sees (see the module docstring)."""
    headers: CIMultiDict[str] = CIMultiDict()
    for key, value in request.headers.items():
        lower = key.lower()
        if lower in _HOP_BY_HOP or lower in _CALLER_ONLY or lower.startswith(_DROPPED_PREFIXES):
            continue
        headers.add(key, value)
    headers["X-Remote-User"] = user.name
    for group in user.groups:
        headers.add("X-Remote-Group", group)
    for key, values in user.extra.items():
        for value in values:
            headers.add(f"X-Remote-Extra-{key}", value)
    if request.remote:
        headers["X-Forwarded-For"] = request.remote
    headers["X-Forwarded-Proto"] = request.scheme
    headers["X-Forwarded-Host"] = request.host
    return headers


class Proxy:
    """One client session for every proxied request; used on devcluster's event loop only."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            # no total timeout: watches last as long as the caller asked; no decompression: bodies pass through
            self._session = aiohttp.ClientSession(auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None, sock_connect=10))
        return self._session

    async def forward(self, request: web.Request, backend: Backend, user: User) -> web.StreamResponse:
        if not backend.available or backend.host is None:
            raise StatusError(503, "ServiceUnavailable", "service unavailable")
        body = await request.read() if request.body_exists else None
        url = backend.origin + request.raw_path
        try:
            upstream = await self._client().request(
                request.method,
                url,
                headers=forwarded_headers(request, user),
                data=body,
                ssl=backend.ssl if backend.ssl is not None else True,
                server_hostname=backend.server_hostname if backend.ssl is not None and backend.ssl.check_hostname else None,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            raise StatusError(503, "ServiceUnavailable", f"error trying to reach service: {e or type(e).__name__}") from None
        try:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP_BY_HOP:
                    response.headers.add(key, value)
            await response.prepare(request)
            with contextlib.suppress(aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError):
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
            await response.write_eof()
            return response
        finally:
            upstream.close()  # an unfinished watch: the backend sees the connection go
