"""Both API servers' ``--audit-log`` files read as one format: :class:`AuditRecord` per resource request.

devcluster writes one JSON line per resource request (no authentication: no user); kube-apiserver (realcluster) writes
audit Events, at level Metadata or more, taken here at stage ResponseComplete — a watch at ResponseStarted, since it
completes only when it ends; with whom the user impersonated, if anyone. Non-resource requests (``/healthz``,
discovery) are left out.

:func:`read_audit_log` reads a whole file, or what follows a byte (the tests); :class:`AuditLog` reads one
incrementally (:meth:`AuditLog.poll`: the benchmarks, which also ask it for windows of writes and watches by
User-Agent). Used by tests/ (the RBAC tests' ``tests/deploy/audit.py`` builds on it), devcluster/tests and bench/
(bench/common.py puts the repository root on ``sys.path``); imports nothing of the tests'.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

READ_VERBS = frozenset({"get", "list", "watch"})


@dataclass(frozen=True)
class AuditRecord:
    """One completed API request as an audit log saw it, whichever server wrote the log."""

    verb: str
    api_group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    user_agent: str
    user: str
    dry_run: bool = False
    impersonated_user: str | None = None  # kube-apiserver: the user ``user`` impersonated (authorized as them)
    impersonated_groups: tuple[str, ...] = ()


def kube_record(entry: dict[str, Any]) -> AuditRecord | None:
    """A kube-apiserver audit Event: once per request (ResponseComplete; a watch at ResponseStarted)."""
    ref = entry.get("objectRef")
    stage, verb = entry.get("stage"), entry.get("verb", "")
    if ref is None or stage != ("ResponseStarted" if verb == "watch" else "ResponseComplete"):
        return None
    uri = entry.get("requestURI", "")
    impersonated = entry.get("impersonatedUser")
    return AuditRecord(
        verb=verb,
        api_group=ref.get("apiGroup", ""),
        resource=ref.get("resource", ""),
        subresource=ref.get("subresource", ""),
        namespace=ref.get("namespace", ""),
        name=ref.get("name", ""),
        code=int((entry.get("responseStatus") or {}).get("code", 0)),
        user_agent=entry.get("userAgent", ""),
        user=(entry.get("user") or {}).get("username", ""),
        dry_run="dryRun=" in uri and "All" in parse_qs(urlsplit(uri).query).get("dryRun", []),
        impersonated_user=impersonated.get("username", "") if impersonated else None,
        impersonated_groups=tuple(impersonated.get("groups") or ()) if impersonated else (),
    )


def dev_record(entry: dict[str, Any]) -> AuditRecord | None:
    """A devcluster audit line (no authentication: no user)."""
    if not entry.get("resource"):
        return None
    return AuditRecord(
        verb=entry.get("verb", ""),
        api_group=entry.get("apiGroup") or "",
        resource=entry["resource"],
        subresource=entry.get("subresource") or "",
        namespace=entry.get("namespace") or "",
        name=entry.get("name") or "",
        code=int(entry.get("code", 0)),
        user_agent=entry.get("userAgent") or "",
        user="",
        dry_run=bool(entry.get("dryRun")),
    )


def audit_record(entry: dict[str, Any]) -> AuditRecord | None:
    """The record of one line of either server's log (None: not one a request is counted by)."""
    return kube_record(entry) if entry.get("kind") == "Event" else dev_record(entry)


class AuditLog:
    """Reads a ``--audit-log`` file of either server incrementally (:meth:`poll`) into :attr:`records`."""

    def __init__(self, path: Path, since: int = 0) -> None:
        """``since``: the byte of the file to start at (e.g. its size at some point: only what came after)."""
        self.path = path
        self.records: list[AuditRecord] = []
        self._offset = since
        self._partial = b""
        self._inode: int | None = None

    def poll(self) -> int:
        """Parse the lines appended since the last call; returns the number of records so far.

        A file that was replaced or cut (rotated: realcluster asks kube-apiserver for one file per run) is an error
        naming it, not records parsed from the middle of a line."""
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as f:
            stat = os.fstat(f.fileno())
            if (self._inode is not None and stat.st_ino != self._inode) or stat.st_size < self._offset:
                raise RuntimeError(f"{self.path} was rotated or truncated after {self._offset} bytes: its records cannot be followed")
            self._inode = stat.st_ino
            f.seek(self._offset)
            data = f.read()
            self._offset += len(data)
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                if line:
                    record = audit_record(orjson.loads(line))
                    if record is not None:
                        self.records.append(record)
        return len(self.records)

    def mark(self) -> int:
        """The index the next record will have: the start of a window for :meth:`writes`."""
        return self.poll()

    def writes(self, agents: tuple[str, ...], start: int, end: int | None = None) -> list[AuditRecord]:
        """Non-dry-run writes (any verb but get/list/watch) by User-Agents starting with ``agents``, records [start, end)."""
        self.poll()
        return [r for r in self.records[start:end] if r.verb not in READ_VERBS and r.user_agent.startswith(agents) and not r.dry_run]

    def watching(self, agents: tuple[str, ...], resources: tuple[str, ...], since: int) -> bool:
        """Whether those agents have started a watch on each of ``resources`` since record ``since``."""
        self.poll()
        seen = {r.resource for r in self.records[since:] if r.verb == "watch" and r.user_agent.startswith(agents)}
        return all(resource in seen for resource in resources)

    def agents(self) -> Counter[str]:
        """How many records each User-Agent (first 40 characters) has: for error messages."""
        self.poll()
        return Counter(r.user_agent[:40] for r in self.records)


def read_audit_log(path: Path, since: int = 0) -> list[AuditRecord]:
    """Every record of a ``--audit-log`` file (after byte ``since``; none if it does not exist). A line still being
    written is left out."""
    log = AuditLog(path, since)
    log.poll()
    return log.records
