"""Raw HTTP to one API server, exactly as sent and received: status code, headers, body bytes.

An :class:`Endpoint` is built from a kubeconfig (server URL, CA bundle, bearer token — devcluster's
has none of the last two) and sends requests through one ``urllib3`` pool, so the fidelity suite
sees what a client library would hide (Warning headers, the Status body of an error, key order).
:class:`WatchStream` reads a watch in a background thread, one JSON document per line, until the
server ends the stream or the caller closes it. Used by ``transcript.py``.
"""

from __future__ import annotations

import base64
import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3
import yaml

Query = Sequence[tuple[str, str]] | Mapping[str, str]


@dataclass
class Reply:
    """One HTTP response: status, headers (multi-valued, lower-case names), body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name.lower()]

    @property
    def json(self) -> Any:
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None


@dataclass
class Endpoint:
    """One API server: where it is and how to authenticate (from its kubeconfig)."""

    kind: str  # "dev" | "real"
    server: str
    kubeconfig: Path
    token: str = ""
    ca_file: str | None = None
    pool: urllib3.PoolManager = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.pool = urllib3.PoolManager(
            num_pools=4, maxsize=16, cert_reqs="CERT_REQUIRED" if self.ca_file else "CERT_NONE", ca_certs=self.ca_file
        )

    @classmethod
    def from_kubeconfig(cls, kind: str, path: Path) -> Endpoint:
        config = yaml.safe_load(path.read_text())
        context_name = config["current-context"]
        context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"]) or {}
        ca_file = None
        if cluster.get("certificate-authority-data"):
            handle = tempfile.NamedTemporaryFile("wb", prefix="fidelity-ca-", suffix=".crt", delete=False)  # noqa: SIM115
            with handle:
                handle.write(base64.b64decode(cluster["certificate-authority-data"]))
            ca_file = handle.name
        elif cluster.get("certificate-authority"):
            ca_file = str(cluster["certificate-authority"])
        return cls(kind=kind, server=cluster["server"].rstrip("/"), kubeconfig=path, token=user.get("token", ""), ca_file=ca_file)

    def url(self, path: str, query: Query = ()) -> str:
        items = list(query.items()) if isinstance(query, Mapping) else list(query)
        return self.server + path + (("?" + urlencode(items)) if items else "")

    def _headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        out = {"User-Agent": "fidelity/1.0", "Accept": "application/json"}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        out.update(headers)
        return out

    def request(
        self, method: str, path: str, *, query: Query = (), body: bytes | None = None, headers: Mapping[str, str] | None = None
    ) -> Reply:
        response = self.pool.request(
            method,
            self.url(path, query),
            body=body,
            headers=self._headers(headers or {}),
            timeout=urllib3.Timeout(connect=5, read=60),
            retries=False,
            redirect=False,
        )
        return Reply(response.status, [(k.lower(), v) for k, v in response.headers.iteritems()], response.data)

    def watch(self, path: str, query: Query = (), headers: Mapping[str, str] | None = None) -> WatchStream:
        response = self.pool.request(
            "GET",
            self.url(path, query),
            headers=self._headers(headers or {}),
            timeout=urllib3.Timeout(connect=5, read=120),
            retries=False,
            preload_content=False,
        )
        return WatchStream(response)


class WatchStream:
    """The events of one watch response, read in a background thread (see the module docstring)."""

    def __init__(self, response: urllib3.BaseHTTPResponse) -> None:
        self.status = response.status
        self.headers = [(k.lower(), v) for k, v in response.headers.iteritems()]
        self.events: list[Any] = []
        self.ended_by_server = False
        self._response = response
        self._closing = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True, name="fidelity-watch")
        self._thread.start()

    def _read(self) -> None:
        buffer = b""
        try:
            for chunk in self._response.stream(65536, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        self._append(orjson.loads(line))
            if buffer.strip():
                self._append(orjson.loads(buffer))
            with self._changed:
                self.ended_by_server = not self._closing
        except Exception:  # closed under us (close()) or a broken stream: either way the stream ends here
            if not self._closing:
                raise
        finally:
            with self._changed:
                self._changed.notify_all()

    def _append(self, event: Any) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait_for(self, predicate: Callable[[list[Any]], bool], timeout_s: float) -> bool:
        """Wait until ``predicate(events)`` holds or the stream ends; returns whether it holds."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not predicate(list(self.events)):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._thread.is_alive():
                    return predicate(list(self.events))
                self._changed.wait(min(remaining, 0.2))
        return True

    def wait_end(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(Exception):
            self._response.shutdown()
        with contextlib.suppress(Exception):
            self._response.release_conn()
        self._thread.join(5)
