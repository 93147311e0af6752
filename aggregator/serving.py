"""Starting and stopping the aggregated server: connect, sync the informers, build the view, serve HTTPS.

:func:`run` is what ``python -m aggregator`` does. Order: connect with the server's own credentials
(:func:`cluster.connect`; every request it makes is counted, :mod:`aggregator.metrics`), start the
Task and Event informers and wait for them, build the :class:`aggregator.view.View`, read the
``extension-apiserver-authentication`` ConfigMap (a failure stops startup: without it nobody could be
authenticated as the front proxy), then serve until SIGTERM/SIGINT, re-reading the ConfigMap every
``auth_config_refresh_s`` (a failed re-read keeps the last good config and is logged) and, as often, the
serving certificate's files (a renewed certificate is served without a restart: :mod:`aggregator.authconfig`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import ssl
import sys

from aiohttp import web

from aggregator import authconfig, certificates, watching
from aggregator.app import Components, create_app
from aggregator.authz import Authorizer
from aggregator.metrics import CountingTransport, Metrics
from aggregator.settings import AggregatorSettings
from aggregator.view import TASK_INDEXERS, View
from cluster import EVENTS, TASKS, Cache, ClusterError, ConnectionSettings, InformerSettings, connect
from cluster.reviewing import TokenReviewer
from cluster.taskevents import INDEXERS as EVENT_INDEXERS

log = logging.getLogger("aggregator")


def run(settings: AggregatorSettings) -> int:
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        connection = connect(ConnectionSettings(kubeconfig=settings.kubeconfig), environ=os.environ)
    except ClusterError as e:
        log.error("%s", e)
        return 1
    connection.api_client.user_agent = "darkroom-control-panel-aggregator/0.1.0"
    metrics = Metrics()
    transport = CountingTransport(inner=connection.transport, metrics=metrics)
    cache = Cache(transport=transport, settings=InformerSettings())
    tasks = cache.add(TASKS, indexers=TASK_INDEXERS)
    events = cache.add(EVENTS, indexers=EVENT_INDEXERS)
    try:
        cache.start()
        if not cache.wait_for_sync(settings.sync_timeout_s):
            log.error(
                "the Task and Event informers did not sync within %ss (can this ServiceAccount list and watch them?)",
                settings.sync_timeout_s,
            )
            return 1
        view = View(tasks=tasks, events=events, history_size=settings.history_size)
        view.rebuild()
        try:
            config = authconfig.load(transport)
        except (ClusterError, ValueError) as e:
            log.error("cannot read %s/%s: %s", authconfig.NAMESPACE, authconfig.NAME, e)
            return 1
        if settings.tls_cert_file is not None and settings.tls_private_key_file is not None:
            cert, key = settings.tls_cert_file, settings.tls_private_key_file
        else:
            cert, key = certificates.self_signed(settings.cert_dir)
            log.warning("no --tls-cert-file: serving with the self-signed certificate %s", cert)
        try:
            tls = authconfig.TlsContext(cert_file=cert, key_file=key)
        except ssl.SSLError as e:
            log.error("%s", e)
            return 1
        tls.trust(config)
        components = Components(
            view=view,
            tokens=TokenReviewer(transport=transport, ttl_s=settings.authn_cache_ttl_s),
            authorizer=Authorizer(transport=transport, allow_ttl_s=settings.authz_allow_ttl_s, deny_ttl_s=settings.authz_deny_ttl_s),
            metrics=metrics,
            watch=watching.WatchSettings(
                bookmark_interval_s=settings.bookmark_interval_s, min_request_timeout_s=settings.min_request_timeout_s
            ),
            auth_config=config,
        )
        asyncio.run(_serve(components, tls, settings, transport))
    finally:
        cache.stop()
        connection.close()
    return 0


async def _refresh(components: Components, tls: authconfig.TlsContext, transport: CountingTransport, every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        tls.reload_certificate()  # on the loop's thread, as every handshake: no new connection sees half a swap
        try:
            config = await asyncio.to_thread(authconfig.load, transport)
        except (ClusterError, ValueError) as e:
            log.warning("re-reading %s/%s failed (keeping the last config): %s", authconfig.NAMESPACE, authconfig.NAME, e)
            continue
        tls.trust(config)
        components.auth_config = config


async def _serve(components: Components, tls: authconfig.TlsContext, settings: AggregatorSettings, transport: CountingTransport) -> None:
    runner = web.AppRunner(create_app(components), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.bind_address, settings.secure_port, ssl_context=tls.context, shutdown_timeout=2.0)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    refresher = asyncio.create_task(_refresh(components, tls, transport, settings.auth_config_refresh_s))
    print(f"aggregator: serving {len(components.view)} combinedtasks on https://{settings.bind_address}:{settings.secure_port}", flush=True)
    await stop.wait()
    refresher.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await refresher
    await runner.cleanup()
