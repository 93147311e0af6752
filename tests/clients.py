"""Clients the operations tests use beside the app's own (helpers, no tests, no fixtures).

:class:`Darkrooms` writes Darkroom objects straight to the API server, not through the app under test (the conftest's
``darkrooms`` fixture is one in the test's namespace); :class:`SseStream` is a raw Server-Sent Events client over one
http.client connection (the conftest's ``sse`` opens them and closes them at teardown), its frames parsed by
``sseframes.py`` (shared with the identity tests' ``EventStream`` and the benchmarks' readers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.sseframes import parse_frame
from tests.support import as_dict

GROUP, VERSION, PLURAL = "deployments.example.com", "v1", "darkrooms"


class Darkrooms:
    """Darkroom objects written straight to the API server (not through the app under test)."""

    def __init__(self, api_client: Any, namespace: str) -> None:
        from kubernetes import client

        self.api = client.CustomObjectsApi(api_client)
        self.namespace = namespace

    def create(self, name: str, *, replicas: int = 1) -> dict[str, Any]:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Darkroom",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"replicas": replicas, "source": {"type": "WebFolder", "baseUrl": "https://example.com/images"}, "subDomains": [name]},
        }
        created = as_dict(self.api.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body))
        return created

    def scale(self, name: str, replicas: int) -> dict[str, Any]:
        patched = as_dict(
            self.api.patch_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name, {"spec": {"replicas": replicas}})
        )
        return patched

    def delete(self, name: str) -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)

    def set_status(self, name: str, status: dict[str, Any]) -> dict[str, Any]:
        """Merge ``status`` into the status subresource (as the reconciler writes it)."""
        patched = as_dict(self.api.patch_namespaced_custom_object_status(GROUP, VERSION, self.namespace, PLURAL, name, {"status": status}))
        return patched


class SseStream:
    """A raw Server-Sent Events client over one http.client connection (no EventSource semantics added)."""

    def __init__(
        self,
        base_url: str,
        path: str = "/watch",
        *,
        headers: dict[str, str] | None = None,
        timeout_s: float = 15.0,
        source: str | None = None,
        json_data: bool = True,
    ) -> None:
        """``source``: the local address to connect from (127.0.0.2, ...: another client on loopback);
        ``json_data``: decode ``data`` as JSON (False: the text, e.g. the dashboard's HTML rows)."""
        self.json_data = json_data
        import http.client

        self.connection = http.client.HTTPConnection(
            base_url.removeprefix("http://"), timeout=timeout_s, source_address=(source, 0) if source else None
        )
        self.connection.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.headers = self.response.headers

    def next(self) -> dict[str, Any] | None:
        """The next block (its fields — ``event``, ``id``, ... —, ``data`` decoded as JSON, ``comments``); None at end of
        stream. Frames are parsed by ``tests/sseframes.py``."""
        import json

        lines: list[str] = []
        while True:
            raw = self.response.readline()
            if not raw:
                return None
            line = raw.decode().rstrip("\n")
            if line:
                lines.append(line)
                continue
            frame, lines = parse_frame(lines), []
            if frame:
                block: dict[str, Any] = {"comments": list(frame.comments), **frame.fields}
                if frame.data is not None:
                    block["data"] = json.loads(frame.data) if self.json_data else frame.data
                return block

    def until(self, predicate: Callable[[dict[str, Any]], bool], *, limit: int = 200) -> list[dict[str, Any]]:
        """Blocks up to and including the first one matching ``predicate``."""
        seen: list[dict[str, Any]] = []
        for _ in range(limit):
            block = self.next()
            assert block is not None, f"stream ended; saw {seen}"
            seen.append(block)
            if predicate(block):
                return seen
        raise AssertionError(f"no matching block in {limit}: {seen}")

    def close(self) -> None:
        self.response.close()  # the response holds its own reference to the socket
        self.connection.close()
