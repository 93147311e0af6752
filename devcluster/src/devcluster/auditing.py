"""Request audit log: one JSON line per resource request, like kube-apiserver's audit backend (Metadata level).

Enabled by ``--audit-log FILE`` (:attr:`ServerSettings.audit_log`). :class:`Api` fills a record when it
has resolved a request's target (verb, group, resource, subresource, namespace, name) and writes it
once the response status is known (watches: when the watch starts). Tests use it as the independent
record of what a client did: the reconciler's write count on a converged resync, and the verbs the
reconciler and the API really use compared with their RBAC Roles. Bodies are never logged.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import IO, Any

import orjson

RECORD_KEY = "devcluster.audit"


def verb_of(method: str, *, named: bool, watching: bool) -> str:
    """The RBAC verb of a request (``get``/``list``/``watch``/``create``/``update``/``patch``/``delete``/``deletecollection``)."""
    if watching:
        return "watch"
    if method in ("GET", "HEAD"):
        return "get" if named else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return method.lower()


class AuditLog:
    """Appends records to a file, flushed per line (readable while the server runs). Thread-safe."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = path.open("ab", buffering=0)
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any], code: int) -> None:
        line = orjson.dumps({"ts": time.time(), **record, "code": code}) + b"\n"
        with self._lock:
            self._file.write(line)

    def close(self) -> None:
        with self._lock:
            self._file.close()
