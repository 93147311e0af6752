"""APIServices: where each aggregated group/version is served, and whether it is ``Available``.

An APIService ``<version>.<group>`` with ``spec.service`` hands ``/apis/<group>/<version>`` to that
Service (``spec.service.port``, default 443). **How devcluster resolves the Service to an address** is
kube-apiserver's ``--enable-aggregator-routing=true`` (``ResolveEndpoint``), the only way that needs no
cluster network: the Service must exist and have a port whose ``port`` is the APIService's; the
EndpointSlices labelled ``kubernetes.io/service-name=<service>`` in its namespace give the address —
the first endpoint not marked ``ready: false`` of a slice with a port of the same name as the
Service's port (both unnamed counts), at that port's number. devcluster has no endpoints controller
and runs no pods, so whoever runs the aggregated server writes a selector-less Service and its
EndpointSlice (``scripts/run_api.py`` does); loopback addresses are fine here (kube refuses them in
Endpoints, not in EndpointSlices, but a real cluster cannot reach them).

The ``Available`` condition follows kube-aggregator's availability controller: ``Local`` (True) without
``spec.service``; else ``ServiceNotFound``, ``ServicePortError``, ``EndpointsNotFound``,
``MissingEndpoints`` (False) from the resolution above, then a discovery probe — ``GET
/apis/<group>/<version>`` with the front-proxy certificate as ``system:kube-aggregator`` in group
``system:masters``, TLS not verified, 5 s timeout — whose 2xx/3xx answer is ``Passed`` (True) and
anything else ``FailedDiscoveryCheck`` (False). Probes run every :data:`PROBE_INTERVAL_S` and at
once when an APIService, Service or EndpointSlice changes; the status is written only when it differs.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from devcluster.aggregation.pki import Pki
from devcluster.catalog import Catalog
from devcluster.errors import StatusError
from devcluster.store import Change, Store
from devcluster.writing import WriteOptions, Writer, copy

log = logging.getLogger("devcluster.aggregation")

APISERVICES = "apiregistration.k8s.io/apiservices"
SERVICES = "/services"
ENDPOINT_SLICES = "discovery.k8s.io/endpointslices"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
PROBE_INTERVAL_S = 5.0
PROBE_TIMEOUT_S = 5.0
_STATUS = WriteOptions(manager="kube-apiserver", field_validation="Ignore", subresource="status")


@dataclass(frozen=True)
class Backend:
    """Where one aggregated group/version goes right now."""

    name: str
    group: str
    version: str
    host: str | None
    port: int
    ssl: ssl.SSLContext | None
    server_hostname: str
    available: bool
    reason: str
    message: str

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"https://{host}:{self.port}"


def resolve(store: Store, spec_service: dict[str, Any]) -> tuple[str, int, str, str]:
    """(host, port, reason, message): the Service's endpoint, or "" and the failing condition's reason and message."""
    namespace, name = str(spec_service.get("namespace") or ""), str(spec_service.get("name") or "")
    port = int(spec_service.get("port") or 443)
    service = store.get(SERVICES, namespace, name)
    if service is None:
        return "", 0, "ServiceNotFound", f'service/{name} in "{namespace}" is not present'
    service_port = next((p for p in (service.get("spec") or {}).get("ports") or () if p.get("port") == port), None)
    if service_port is None:
        return "", 0, "ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}'
    slices = [s for s in store.items(ENDPOINT_SLICES, namespace) if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name]
    if not slices:
        return "", 0, "EndpointsNotFound", f'cannot find endpoints for service/{name} in "{namespace}"'
    port_name = service_port.get("name") or ""
    for endpoint_slice in sorted(slices, key=lambda s: s["metadata"]["name"]):
        target = next((p for p in endpoint_slice.get("ports") or () if (p.get("name") or "") == port_name and p.get("port")), None)
        if target is None:
            continue
        for endpoint in endpoint_slice.get("endpoints") or ():
            if (endpoint.get("conditions") or {}).get("ready") is False or not endpoint.get("addresses"):
                continue
            return str(endpoint["addresses"][0]), int(target["port"]), "", ""
    return "", 0, "MissingEndpoints", f'endpoints for service/{name} in "{namespace}" have no addresses with port name "{port_name}"'


class Registry:
    """The APIServices' backends and their availability; runs on devcluster's event loop."""

    def __init__(self, *, store: Store, catalog: Catalog, writer: Writer, pki: Pki, clock: Callable[[], str]) -> None:
        self.store, self.catalog, self.writer, self.pki, self.clock = store, catalog, writer, pki, clock
        self._backends: dict[tuple[str, str], Backend] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    # -- queries (routing, discovery) -----------------------------------------------------------

    def backend(self, group: str, version: str) -> Backend | None:
        return self._backends.get((group, version))

    def backends(self) -> list[Backend]:
        return list(self._backends.values())

    def client_context(self, spec: dict[str, Any]) -> ssl.SSLContext:
        """TLS towards a backend: the front-proxy client certificate; the server checked against ``caBundle``
        (as ``<service>.<namespace>.svc``) unless ``insecureSkipTLSVerify``."""
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        cert, key = self.pki.front_proxy_client
        context.load_cert_chain(cert, key)
        if spec.get("insecureSkipTLSVerify"):
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif spec.get("caBundle"):
            context.load_verify_locations(cadata=base64.b64decode(spec["caBundle"]).decode())
        return context

    # -- the availability controller -----------------------------------------------------------

    def start(self) -> None:
        self.store.add_listener(self._on_change)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._session is not None:
            await self._session.close()

    def _on_change(self, change: Change) -> None:
        if change.resource in (APISERVICES, SERVICES, ENDPOINT_SLICES):
            self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._sync_all()
            except Exception:  # a bug must not stop the controller
                log.exception("APIService availability check failed")
            # asyncio.timeout, not wait_for: Python 3.11's wait_for drops a cancel that arrives while the wait it wraps
            # has just finished (a change and stop() in the same tick), and this loop then never ends (CPython gh-86296).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PROBE_INTERVAL_S):
                    await self._wake.wait()

    async def _sync_all(self) -> None:
        seen: set[tuple[str, str]] = set()
        for apiservice in self.store.items(APISERVICES):
            backend = await self._check(apiservice)
            if backend is not None:  # routed before its status says so, never after
                key = (backend.group, backend.version)
                seen.add(key)
                self._backends[key] = backend
            self._write_condition(apiservice, backend)
        for key in set(self._backends) - seen:
            del self._backends[key]

    async def _check(self, apiservice: dict[str, Any]) -> Backend | None:
        spec = apiservice.get("spec") or {}
        service = spec.get("service")
        if not service:
            return None
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        host, port, reason, message = resolve(self.store, service)
        context = self.client_context(spec)
        server_hostname = f"{service.get('name')}.{service.get('namespace')}.svc"
        backend = Backend(
            apiservice["metadata"]["name"], group, version, host or None, port, context, server_hostname, False, reason, message
        )
        if not host:
            return backend
        url = f"{backend.origin}/apis/{group}/{version}"
        headers = {"X-Remote-User": "system:kube-aggregator", "X-Remote-Group": "system:masters"}
        probe = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        probe.check_hostname, probe.verify_mode = False, ssl.CERT_NONE
        probe.load_cert_chain(*self.pki.front_proxy_client)
        try:
            async with self._client().get(
                url, headers=headers, ssl=probe, timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)
            ) as response:
                ok = 200 <= response.status < 300
                problem = "" if ok else f"bad status from {url}: {response.status}"
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            ok, problem = False, f'Get "{url}": {e or type(e).__name__}'
        if ok:
            return Backend(backend.name, group, version, host, port, context, server_hostname, True, "Passed", "all checks passed")
        return Backend(
            backend.name,
            group,
            version,
            host,
            port,
            context,
            server_hostname,
            False,
            "FailedDiscoveryCheck",
            f"failing or missing response from {url}: {problem}",
        )

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(auto_decompress=False)
        return self._session

    def _write_condition(self, apiservice: dict[str, Any], backend: Backend | None) -> None:
        if backend is None:
            status, reason, message = "True", "Local", "Local APIServices are always available"
        else:
            status, reason, message = ("True" if backend.available else "False"), backend.reason, backend.message
        conditions = list((apiservice.get("status") or {}).get("conditions") or ())
        old = next((c for c in conditions if c.get("type") == "Available"), None)
        if old and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
            return
        transition = old["lastTransitionTime"] if old and old.get("status") == status and old.get("lastTransitionTime") else self.clock()
        condition = {"type": "Available", "status": status, "lastTransitionTime": transition, "reason": reason, "message": message}
        updated = copy(apiservice)
        updated["status"] = {
            **(apiservice.get("status") or {}),
            "conditions": [c for c in conditions if c.get("type") != "Available"] + [condition],
        }
        resource = self.catalog.builtin("apiregistration.k8s.io", "apiservices")
        try:
            self.writer.update(resource, "", apiservice["metadata"]["name"], updated, _STATUS)
        except StatusError as e:  # changed or deleted meanwhile: the change wakes us again
            if e.code not in (404, 409):
                log.warning("APIService %s status: %s", apiservice["metadata"]["name"], e.message)
