"""Authorization as k8s.io/apiserver's delegated authorizer does it: a SubjectAccessReview per decision, cached.

:class:`Authorizer.authorize` is called by the app's middleware for every authenticated request with
its :class:`aggregator.requestinfo.RequestInfo`. As ``NewDelegatingAuthorizationOptions`` sets it up:
``/healthz``, ``/livez`` and ``/readyz`` are always allowed (the middleware lets them through before
authentication, for probes); members of ``system:masters`` are allowed without asking (kube-apiserver
would allow them anyway); everything else is a ``SubjectAccessReview`` (authorization.k8s.io/v1) —
resource attributes for resource requests, non-resource attributes (path, verb) for discovery, OpenAPI
and ``/metrics``. Decisions are cached per (user, groups, uid, extra, attributes): allowed for
``authz_allow_ttl_s`` and denied for ``authz_deny_ttl_s``, both 10 s by default — the delegated
defaults (``--authorization-webhook-cache-authorized-ttl``/``-unauthorized-ttl`` of a delegating
server; kube-apiserver's own webhook authorizer uses 5 min and 30 s).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson

from aggregator.authn import User
from aggregator.requestinfo import RequestInfo
from cluster import Transport

SUBJECTACCESSREVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
ALWAYS_ALLOW_GROUPS = ("system:masters",)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


class Authorizer:
    """SubjectAccessReviews with a TTL cache. Thread-safe; blocking (run it in a thread)."""

    def __init__(self, *, transport: Transport, allow_ttl_s: float, deny_ttl_s: float) -> None:
        self.transport = transport
        self.allow_ttl_s = allow_ttl_s
        self.deny_ttl_s = deny_ttl_s
        self._cache: dict[bytes, tuple[float, Decision]] = {}
        self._lock = threading.Lock()
        self.reviews = 0  # SubjectAccessReviews sent (for metrics and tests)

    def authorize(self, user: User, info: RequestInfo) -> Decision:
        if not info.is_resource and info.path in ALWAYS_ALLOW_PATHS:
            return Decision(True)
        if set(user.groups) & set(ALWAYS_ALLOW_GROUPS):
            return Decision(True)
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups), **info.sar_attributes()}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        key = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] > now:
                return cached[1]
        decision = self._ask(spec)
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            self._cache[key] = (now + (self.allow_ttl_s if decision.allowed else self.deny_ttl_s), decision)
        return decision

    def _ask(self, spec: dict[str, Any]) -> Decision:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        self.reviews += 1
        status = self.transport.request("POST", SUBJECTACCESSREVIEWS, body=body).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        return Decision(allowed, str(status.get("reason") or ""))


def forbidden_wording(info: RequestInfo) -> tuple[str, str]:
    """(what, scope) of kube's 403 message for ``info``: ``combinedtasks.<group> "x"`` and
    ``resource "combinedtasks" in API group "<group>" in the namespace "ns"`` (or ``path "/apis"``)."""
    if not info.is_resource:
        return "forbidden", f'path "{info.path}"'
    what = f"{info.resource}.{info.group}" if info.group else info.resource
    if info.name:
        what += f' "{info.name}"'
    scope = f'resource "{info.resource}" in API group "{info.group}"'
    scope += f' in the namespace "{info.namespace}"' if info.namespace else " at the cluster scope"
    return what, scope
