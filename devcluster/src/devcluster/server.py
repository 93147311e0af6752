"""Running a devcluster: wiring store, controllers and HTTP server, in the foreground or in a thread.

:class:`DevCluster` is the one way to run it — ``python -m devcluster serve`` (``__main__.py``)
uses :meth:`DevCluster.serve_forever`; tests and ``make api`` use :meth:`DevCluster.start` /
:meth:`DevCluster.stop` (a background thread with its own event loop). It writes a kubeconfig
whose current context points at the server, so kubectl and the official client connect with no
flags beyond ``--kubeconfig``; its user carries the admin token (``<data-dir>/pki/admin.token``), which
the aggregation layer (``devcluster/aggregation/``) authenticates. One devcluster per data directory
(:mod:`devcluster.datalock`): a second one raises :class:`~devcluster.datalock.DataDirInUse` naming the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import yaml
from aiohttp import web

from devcluster.aggregation import AggregationLayer, Pki
from devcluster.catalog import Catalog
from devcluster.controllers import Controllers
from devcluster.datalock import DataDirInUse, DataDirLock
from devcluster.serving import Api, build_app
from devcluster.settings import ServerSettings
from devcluster.storage import Storage
from devcluster.store import Store
from devcluster.writing import Writer

log = logging.getLogger("devcluster")


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubeconfig_document(server_url: str, *, name: str = "devcluster", token: str = "") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server_url}}],
        "users": [{"name": name, "user": {"token": token} if token else {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }


class DevCluster:
    """One devcluster instance; see the module docstring."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.port = settings.port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.admin_token = ""

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.settings.kubeconfig or self.settings.data_dir / "kubeconfig"

    # -- lifecycle ---------------------------------------------------------------------------

    async def _run(self, ready: threading.Event | None = None) -> None:
        lock = DataDirLock(self.settings.data_dir)  # before anything in the data directory is opened
        lock.acquire()
        try:
            await self._serve(lock, ready)
        finally:
            lock.release()

    async def _serve(self, lock: DataDirLock, ready: threading.Event | None) -> None:
        settings = self.settings
        storage = Storage(settings.data_dir, synchronous=settings.sqlite_synchronous)
        store = Store(storage, history_size=settings.history_size)
        catalog = Catalog()
        writer = Writer(store=store, catalog=catalog, clock=utc_now)
        controllers = Controllers(
            store=store, catalog=catalog, writer=writer, clock=utc_now, ready_delay_s=settings.deployment_ready_delay_s
        )
        controllers.start(asyncio.get_running_loop())
        pki = Pki.load_or_create(settings.data_dir / "pki")
        self.admin_token = pki.admin_token
        aggregation = AggregationLayer(store=store, catalog=catalog, writer=writer, pki=pki, clock=utc_now)
        aggregation.start()
        api = Api(store=store, catalog=catalog, writer=writer, settings=settings, aggregation=aggregation)
        app = build_app(api, max_request_bytes=settings.max_request_bytes)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, settings.host, settings.port, reuse_address=True, backlog=1024)
        try:
            await site.start()
            server = getattr(site, "_server", None)
            if server is not None and server.sockets:
                self.port = server.sockets[0].getsockname()[1]
            self._write_kubeconfig()
            lock.record(self.url)
            self._stop = asyncio.Event()
            log.info("devcluster serving %s (data in %s, kubeconfig %s)", self.url, settings.data_dir, self.kubeconfig_path)
            if ready is not None:
                ready.set()
            await self._stop.wait()
        finally:
            api.stopping.set()
            controllers.stop()
            await aggregation.stop()
            await runner.cleanup()
            store.close()
            if api.audit is not None:
                api.audit.close()

    def _write_kubeconfig(self) -> None:
        path = self.kubeconfig_path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(yaml.safe_dump(kubeconfig_document(self.url, token=self.admin_token), sort_keys=False))
        tmp.chmod(0o600)  # it carries the admin token
        tmp.replace(path)

    def serve_forever(self) -> None:
        """Run in the foreground until SIGTERM/SIGINT."""
        loop = _new_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def main() -> None:
            task = asyncio.ensure_future(self._run())
            while self._stop is None and not task.done():
                await asyncio.sleep(0.01)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._request_stop)
            await task

        try:
            loop.run_until_complete(main())
        finally:
            loop.close()

    def _request_stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def start(self, timeout_s: float = 30.0) -> DevCluster:
        """Run in a background thread; returns once the server accepts connections."""

        def target() -> None:
            loop = _new_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._run(self._started))
            except BaseException as e:
                self._error = e
                self._started.set()
            finally:
                loop.close()

        self._thread = threading.Thread(target=target, name="devcluster", daemon=True)
        self._thread.start()
        self._started.wait(timeout_s)
        if isinstance(self._error, DataDirInUse):
            raise self._error
        if self._error is not None:
            raise RuntimeError(f"devcluster failed to start: {self._error}") from self._error
        if not self._started.is_set():
            raise RuntimeError(f"devcluster did not start within {timeout_s} s")
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def __enter__(self) -> DevCluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # uvloop is an optional speed-up
        return asyncio.new_event_loop()
