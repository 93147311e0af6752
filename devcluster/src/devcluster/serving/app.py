"""The aiohttp application: :func:`build_app` wires an :class:`Api` to its routes, middlewares and
request-size limit.
"""

from __future__ import annotations

from aiohttp import web

from devcluster.serving.api import Api


def build_app(api: Api, *, max_request_bytes: int) -> web.Application:
    app = web.Application(client_max_size=max_request_bytes + 1024)
    app.router.add_route("*", "/{tail:.*}", api.handle)
    return app
