"""Raw HTTP requests to the API server over the official client's transport, bodies via orjson.

:class:`Transport` takes a ``kubernetes.client.ApiClient`` (built by :mod:`cluster.connecting`) and
uses its urllib3 pool (TLS, client certificates, proxies) and its authentication (bearer tokens,
including refreshed exec/OIDC tokens) — but not its model (de)serialisation, which is slow and
turns objects into typed models. Called by the informers (lists and watches) and by the cached
client (writes). Every failure leaves here as a :class:`cluster.errors.ClusterError`.

A request made for a person carries their :class:`cluster.identities.Credentials`: impersonation adds
headers to the process's own authentication; a person's own bearer token replaces it and goes out on a
pool of its own that verifies the server exactly as the process's does but presents no client
certificate (kube-apiserver would authenticate the certificate first and act as the process).

:meth:`Transport.official` is the official client itself (``kubernetes.client.ApiClient``) sending as one person:
for the operations whose answer is no JSON object, read with the client's own methods (a pod's log:
``CoreV1Api.read_namespaced_pod_log(..., _preload_content=False)``). Its requests go out on the pool and with the
headers :meth:`Transport.request` would use for those credentials (:class:`_SentAs`), so there is one place that
decides how a person authenticates.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
import urllib3
from kubernetes.client.rest import RESTClientObject
from urllib3.exceptions import HTTPError, ReadTimeoutError

from cluster import errors
from cluster.identities import OWN, Credentials

JSON = "application/json"
# What a metadata-only list or watch asks for (client-go's metadata client): each object as a PartialObjectMetadata —
# its metadata alone — with plain JSON as the fallback of a server that cannot serve that form.
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
QueryValue = str | int | bool | None
# How long the process's own authentication headers are reused before the official client's auth hook runs
# again. The hook (kubeconfig and in-cluster loaders) re-reads the token and re-applies the whole configuration
# — host, proxies from the environment, certificates — on every call: ~40 µs per request. Tokens are refreshed
# minutes before they expire (kubeconfig: 5 min; in-cluster: every minute), so a second's reuse never sends an
# expired one.
AUTH_REUSE_S = 1.0
# An absolute path urllib3's URL parsing would leave as it is: unreserved characters and upper-case percent escapes,
# no dot segment. Such requests go straight to the host's connection pool (see Transport._direct_pool).
_PLAIN_PATH = re.compile(r"/(?:[A-Za-z0-9_~/-]|%[0-9A-F]{2}|(?<=[A-Za-z0-9_~%-])\.)*\Z")


def _query_string(query: Mapping[str, QueryValue] | None) -> str:
    if not query:
        return ""
    pairs = [(k, ("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in query.items() if v is not None and v != ""]
    return "?" + urlencode(pairs) if pairs else ""


class Transport:
    """Sends requests with the ApiClient's pool and credentials; returns parsed JSON (plain dicts)."""

    def __init__(self, *, api_client: Any, connect_timeout_s: float = 5.0, request_timeout_s: float = 30.0) -> None:
        self.api_client = api_client
        self.host = str(api_client.configuration.host).rstrip("/")
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self._anonymous_pool: urllib3.PoolManager | None = None
        self._own_auth: tuple[float, dict[str, str]] | None = None  # (when, headers): see AUTH_REUSE_S
        self._prefix = urlsplit(self.host).path  # a server URL with a path (behind a proxy): requests go below it
        self._direct: tuple[urllib3.PoolManager, urllib3.HTTPConnectionPool] | None = None

    @property
    def _pool(self) -> urllib3.PoolManager:
        pool: urllib3.PoolManager = self.api_client.rest_client.pool_manager
        return pool

    def _pool_for(self, credentials: Credentials) -> urllib3.PoolManager:
        """The process's pool, or for a person's own token one that presents no client certificate (built once)."""
        if credentials.own_authentication:
            return self._pool
        if self._anonymous_pool is None:
            configuration = copy.copy(self.api_client.configuration)
            configuration.cert_file = configuration.key_file = None
            self._anonymous_pool = RESTClientObject(configuration).pool_manager
        return self._anonymous_pool

    def official(self, credentials: Credentials) -> Any:
        """A ``kubernetes.client.ApiClient`` whose requests are sent as ``credentials`` (:class:`_SentAs`): the client's
        configuration, URL building and parameter validation, our pools and authentication headers. Cheap (no pool of
        its own); nothing to close."""
        api_client = copy.copy(self.api_client)
        api_client.rest_client = copy.copy(self.api_client.rest_client)
        api_client.rest_client.pool_manager = _SentAs(self, credentials)
        return api_client

    def close(self) -> None:
        """Close the pool of person-owned tokens (the process's own belongs to the ApiClient: closed with it)."""
        if self._anonymous_pool is not None:
            self._anonymous_pool.clear()

    def _headers(
        self, method: str, path: str, content_type: str | None, credentials: Credentials, accept: str = JSON
    ) -> dict[str, str] | urllib3.HTTPHeaderDict:
        """The request's headers: a plain dict, or an ``HTTPHeaderDict`` when impersonation repeats a header (one
        ``Impersonate-Group`` per group). The dict is the common case (the process's own requests) and costs less
        to build and to send."""
        headers = {**self.api_client.default_headers, "Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        if credentials.own_authentication:
            headers.update(self._own_auth_headers(method, path))
        else:
            headers.pop("Authorization", None)
        extra = credentials.headers()
        if not extra:
            return headers
        merged = urllib3.HTTPHeaderDict(headers)
        for name, value in extra:
            merged.add(name, value)
        return merged

    def _own_auth_headers(self, method: str, path: str) -> dict[str, str]:
        """The official client's auth hook (bearer token, refreshed by exec/OIDC plugins and the in-cluster loader
        before it expires), run at most once per :data:`AUTH_REUSE_S`; its headers depend on neither path nor method."""
        now = time.monotonic()
        cached = self._own_auth
        if cached is None or now - cached[0] >= AUTH_REUSE_S:
            auth: dict[str, str] = {}
            self.api_client.update_params_for_auth(auth, [], ["BearerToken"], path, method, None)
            cached = self._own_auth = (now, auth)
        return cached[1]

    def _direct_pool(self, manager: urllib3.PoolManager, path: str) -> urllib3.HTTPConnectionPool | None:
        """The manager's connection pool for the server, for a request the manager would send there unchanged: a plain
        ``PoolManager`` (a ``ProxyManager`` rewrites requests) and a plain path (no escapes or dot segments for URL
        parsing to normalise). Skips, per request, the manager's URL parsing, pool-key building and header copies —
        ~20% of the client's CPU per request. None: go through the manager."""
        if type(manager) is not urllib3.PoolManager or not _PLAIN_PATH.match(path):
            return None
        direct = self._direct
        if direct is None or direct[0] is not manager or direct[1].pool is None:  # a closed pool (manager cleared): ask again
            direct = self._direct = (manager, manager.connection_from_url(self.host))
        return direct[1]

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, QueryValue] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout_s: float | None = None,
        credentials: Credentials = OWN,
        accept: str = JSON,
    ) -> dict[str, Any]:
        """One request (as ``credentials``: the process itself unless told otherwise); the parsed JSON response.
        ``accept``: the form asked for (:data:`METADATA_LIST`: a list of metadata). Raises ClusterError subclasses."""
        what = f"{method} {path}"
        payload = None if body is None else orjson.dumps(body)
        timeout = urllib3.Timeout(connect=self.connect_timeout_s, read=timeout_s or self.request_timeout_s)
        headers = self._headers(method, path, content_type if payload is not None else None, credentials, accept)
        manager = self._pool_for(credentials)
        try:
            pool = self._direct_pool(manager, self._prefix + path)
            if pool is not None:
                # What the manager would do: the request URI relative to the host, no redirects or retries.
                response = pool.urlopen(
                    method,
                    self._prefix + path + _query_string(query),
                    body=payload,
                    headers=headers,
                    timeout=timeout,
                    retries=False,
                    redirect=False,
                    assert_same_host=False,
                    preload_content=False,
                )
            else:
                response = manager.request(
                    method,
                    self.host + path + _query_string(query),
                    body=payload,
                    headers=headers,
                    timeout=timeout,
                    retries=False,
                    preload_content=False,
                )
            try:
                data = response.read()
            finally:
                response.release_conn()
        except HTTPError as e:
            raise errors.from_transport(e, what=what) from e
        if response.status >= 400:
            raise errors.from_status(response.status, data, what=what)
        try:
            parsed = orjson.loads(data) if data else {}
        except orjson.JSONDecodeError as e:
            raise errors.Unavailable(f"{what}: response is not JSON: {data[:200]!r}") from e
        return parsed if isinstance(parsed, dict) else {"items": parsed}

    @contextmanager
    def stream(self, path: str, *, query: Mapping[str, QueryValue], read_timeout_s: float, accept: str = JSON) -> Iterator[Stream]:
        """A streaming GET (a watch): yields a :class:`Stream` of JSON lines; closed on exit. ``accept``: as for
        :meth:`request` (:data:`METADATA_WATCH`: each event's object as its metadata)."""
        what = f"GET {path} (watch)"
        try:
            response = self._pool.request(
                "GET",
                self.host + path + _query_string(query),
                headers=self._headers("GET", path, None, OWN, accept),
                timeout=urllib3.Timeout(connect=self.connect_timeout_s, read=read_timeout_s),
                retries=False,
                preload_content=False,
            )
        except HTTPError as e:
            raise errors.from_transport(e, what=what) from e
        try:
            if response.status >= 400:
                raise errors.from_status(response.status, response.read(), what=what)
            yield Stream(response, what=what)
        finally:
            response.close()
            response.release_conn()


class _SentAs:
    """Stands in for the official client's urllib3 pool (``rest_client.pool_manager``): each request goes out on the
    transport's pool for ``credentials`` with the headers :meth:`Transport.request` would send (the client's own
    ``Accept`` kept), never retried (a log read again would repeat its lines)."""

    def __init__(self, transport: Transport, credentials: Credentials) -> None:
        self._transport = transport
        self._credentials = credentials

    def request(self, method: str, url: str, **kwargs: Any) -> urllib3.BaseHTTPResponse:
        asked = kwargs.pop("headers", None) or {}
        headers = self._transport._headers(method, urlsplit(url).path, asked.get("Content-Type"), self._credentials)
        if asked.get("Accept"):
            headers["Accept"] = asked["Accept"]
        kwargs["retries"] = False
        return self._transport._pool_for(self._credentials).request(method, url, headers=headers, **kwargs)

    def clear(self) -> None:
        """The pools are the transport's (closed with it)."""


class Stream:
    """The lines of a streaming response, parsed; :meth:`interrupt` unblocks a reader from another thread.

    A response that sends nothing for the stream's read timeout ends, with :attr:`went_silent` set, rather than failing:
    for a watch that is routine (kube-apiserver sends Events no periodic bookmarks), and its reader, which cannot tell a
    quiet stream from a connection that died without closing, opens another either way."""

    def __init__(self, response: urllib3.BaseHTTPResponse, *, what: str) -> None:
        self._response = response
        self._what = what
        self.interrupted = False
        self.went_silent = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        buffer = b""
        try:
            for chunk in self._arrivals():
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        yield orjson.loads(line)
        except (HTTPError, OSError) as e:
            if self.interrupted:
                return
            if isinstance(e, ReadTimeoutError | TimeoutError):
                self.went_silent = True  # what arrived of a line is dropped with the connection: it is sent again
                return
            raise errors.from_transport(e, what=self._what) from e
        except orjson.JSONDecodeError as e:
            raise errors.Unavailable(f"{self._what}: malformed watch line") from e
        if buffer.strip() and not self.interrupted:
            yield orjson.loads(buffer)

    def _arrivals(self) -> Iterator[bytes]:
        """The body as it arrives, so each event is handled as soon as it lands: a chunked response (kube-apiserver
        flushes each event as a chunk) chunk by chunk, which costs about a third less CPU per event than urllib3's
        ``read1``; any other (a server that ends the body by closing) whatever the socket has."""
        if self._response.chunked:
            yield from self._response.read_chunked()
            return
        while chunk := self._response.read1(65536):
            yield chunk

    def interrupt(self) -> None:
        """Shut the socket's read side so a blocked read returns now (called at shutdown)."""
        self.interrupted = True
        with suppress(ValueError, RuntimeError, OSError, AttributeError):
            self._response.shutdown()
