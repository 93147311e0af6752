"""kube-apiserver's audit log as the RBAC tests read it: who made each request — and for whom.

With per-person identity one process's requests carry several identities: the API's informers and reviews are
made as its ServiceAccount, a person's requests with the person's own token (the audit ``user`` is then the
person) or with the ServiceAccount impersonating them (``user`` the ServiceAccount, ``impersonatedUser`` the
person, authorized as the person). :func:`entries` reads them (realcluster's log: level Metadata, stage
ResponseComplete; a watch once it started; the records are ``tests/auditlog.py``'s); :class:`Refusals` follows a log
for 403s of one account's *own* requests (a refused impersonation is one: kube-apiserver refuses it before it sets
``impersonatedUser``).
:func:`impersonations` turns impersonated requests into the ``impersonate`` requests RBAC checked for them.
Used by tests/deploy/test_rbac_real.py and tests/deploy/test_rbac_audit.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.auditlog import AuditRecord, kube_record, read_audit_log

from .manifests import NAMESPACE, Request

AUTHENTICATED = "system:authenticated"  # kube-apiserver adds it to every impersonated user itself


def account(name: str, namespace: str = NAMESPACE) -> str:
    """The user name a ServiceAccount authenticates as."""
    return f"system:serviceaccount:{namespace}:{name}"


@dataclass(frozen=True)
class Entry:
    """One completed request: what (as RBAC sees it), the answer, who made it and for whom."""

    request: Request
    code: int
    user: str
    impersonated_user: str | None
    impersonated_groups: tuple[str, ...]

    @property
    def own(self) -> bool:
        """Made as ``user`` itself (not for someone it impersonated)."""
        return self.impersonated_user is None

    def acting_as(self) -> str:
        """Whose rights decided the request."""
        return self.impersonated_user or self.user


def _entry(record: AuditRecord) -> Entry:
    request = Request(record.verb, record.api_group, record.resource, record.subresource, record.namespace, record.name)
    return Entry(request, record.code, record.user, record.impersonated_user, record.impersonated_groups)


def _complete_lines(path: Path, since: int) -> list[bytes]:
    """The log's complete lines after byte ``since`` (a line being written is left for later)."""
    if not path.exists():
        return []
    with path.open("rb") as log:
        log.seek(since)
        chunk = log.read()
    return chunk[: chunk.rfind(b"\n") + 1].splitlines()


def log_size(path: Path) -> int:
    """Where the log ends now: pass it as ``since`` to read only what comes after."""
    return path.stat().st_size if path.exists() else 0


def entries(path: Path, since: int = 0) -> list[Entry]:
    """The log's resource requests after byte ``since`` (non-resource ones, /healthz or discovery, left out)."""
    return [_entry(record) for record in read_audit_log(path, since)]


def impersonations(entry: Entry) -> list[Request]:
    """The ``impersonate`` checks kube-apiserver made for an impersonated request: the user, and each group named
    (not system:authenticated, which it adds itself)."""
    if entry.impersonated_user is None:
        return []
    checks = [Request("impersonate", "", "users", name=entry.impersonated_user)]
    checks += [Request("impersonate", "", "groups", name=group) for group in entry.impersonated_groups if group != AUTHENTICATED]
    return checks


def _own_refusal(raw: dict[str, Any], user: str) -> str | None:
    """What was refused, when ``raw`` is a 403 of ``user``'s own request (with or without an objectRef: a refused
    impersonation may be recorded before the request was resolved); else None."""
    if (raw.get("user") or {}).get("username") != user or raw.get("impersonatedUser") is not None:
        return None
    if raw.get("stage") not in ("ResponseComplete", "ResponseStarted") or (raw.get("responseStatus") or {}).get("code") != 403:
        return None
    record = kube_record(raw)
    return str(_entry(record).request) if record is not None else f"{raw.get('verb')} {raw.get('requestURI')}"


class Refusals:
    """Whether ``user`` has had one of its own requests refused (403) since this was made: reads only the new lines."""

    def __init__(self, audit: Path, user: str) -> None:
        self.audit = audit
        self.user = user
        self.offset = audit.stat().st_size if audit.exists() else 0
        self.seen = False

    def __call__(self) -> bool:
        if self.seen or not self.audit.exists():
            return self.seen
        with self.audit.open("rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line being written is read next time
        self.offset += len(complete)
        needle = self.user.encode()
        self.seen = any(_own_refusal(json.loads(line), self.user) for line in complete.splitlines() if needle in line)
        return self.seen


def refused(path: Path, user: str, since: int) -> list[str]:
    """``user``'s own requests refused (403) after byte ``since`` of the log."""
    return sorted({found for line in _complete_lines(path, since) if (found := _own_refusal(json.loads(line), user))})
