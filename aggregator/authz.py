"""Authorization as k8s.io/apiserver's delegated authorizer does it: a SubjectAccessReview per decision, cached.

:class:`Authorizer.authorize` is called by the app's middleware for every authenticated request with
its :class:`aggregator.requestinfo.RequestInfo`. As ``NewDelegatingAuthorizationOptions`` sets it up:
``/healthz``, ``/livez`` and ``/readyz`` are always allowed (the middleware lets them through before
authentication, for probes); members of ``system:masters`` are allowed without asking (kube-apiserver
would allow them anyway); everything else is a ``SubjectAccessReview`` (authorization.k8s.io/v1) —
resource attributes for resource requests, non-resource attributes (path, verb) for discovery, OpenAPI
and ``/metrics``. Decisions are cached per (user, groups, uid, extra, attributes) — :class:`cluster.reviewing.AccessReviewer`,
the implementation the API shares —: allowed for
``authz_allow_ttl_s`` and denied for ``authz_deny_ttl_s``, both 10 s by default — the delegated
defaults (``--authorization-webhook-cache-authorized-ttl``/``-unauthorized-ttl`` of a delegating
server; kube-apiserver's own webhook authorizer uses 5 min and 30 s).
"""

from __future__ import annotations

from aggregator.requestinfo import RequestInfo
from cluster import Transport
from cluster.identities import User
from cluster.reviewing import AccessReviewer, Decision

ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


class Authorizer:
    """The delegated authorizer of the aggregated server: probes always, everything else an access review."""

    def __init__(self, *, transport: Transport, allow_ttl_s: float, deny_ttl_s: float) -> None:
        self.reviewer = AccessReviewer(transport=transport, allow_ttl_s=allow_ttl_s, deny_ttl_s=deny_ttl_s)

    @property
    def reviews(self) -> int:
        """SubjectAccessReviews sent (for metrics and tests)."""
        return self.reviewer.reviews

    def authorize(self, user: User, info: RequestInfo) -> Decision:
        if not info.is_resource and info.path in ALWAYS_ALLOW_PATHS:
            return Decision(True)
        return self.reviewer.decide(user, info.attributes())


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
