"""What the caller may do, for showing: the dashboard hides or disables what would be refused, and says why.

:class:`Permissions` answers "may I ``verb`` this here?" with a ``SelfSubjectAccessReview`` made with the
caller's own credentials (:class:`cluster.reviewing.SelfAccessReviewer`, cached ``review_cache_ttl_s`` per
credentials and question) — the same question kube-apiserver will answer when the request is made, asked by
the same person; in the local one-person mode the kubeconfig's own identity asks (devcluster allows it
everything). It is for showing only: the API server still decides every request. A review that cannot be
made leaves the action shown (the server's answer will say what is wrong) and is logged.

One :class:`Permissions` serves one request (:mod:`backend.dashboard.allowing` makes it): it remembers its
answers, so a list of fifty rows in two namespaces asks two questions per action, not fifty. A grant in every
namespace (a ClusterRoleBinding) answers for each namespace: that broader question is asked first, so an
administrator's page costs one review per action.

The wording of a refusal is :meth:`cluster.attributes.ResourceAttributes.refused`, the same on pages and in
problem+json, as a sentence: ``You may not delete darkrooms in namespace "team-b".``
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from backend.identity.callers import Caller
from cluster import ClusterError, Resource
from cluster.attributes import ResourceAttributes
from cluster.reviewing import SelfAccessReviewer

log = logging.getLogger(__name__)

ANYWHERE_ASKS_MAX = 50  # namespaces :meth:`Permissions.anywhere` asks one by one, at most


def sentence(text: str) -> str:
    """``you may not ...`` → ``You may not ....``"""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


@dataclass(frozen=True)
class Allowance:
    """An answer for a page: truthy when allowed; ``reason`` says why not (a sentence for a tooltip or note)."""

    allowed: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.allowed


ALLOWED = Allowance(True)


class Permissions:
    """The caller's permissions, asked of the cluster as the caller (see the module docstring). One per request."""

    def __init__(self, *, reviewer: SelfAccessReviewer, caller: Caller) -> None:
        self.reviewer = reviewer
        self.caller = caller
        self._answers: dict[ResourceAttributes, bool] = {}

    def _allowed(self, attributes: ResourceAttributes) -> bool:
        known = self._answers.get(attributes)
        if known is not None:
            return known
        try:
            allowed = self.reviewer.decide(self.caller.actor.credentials, attributes).allowed
        except ClusterError as e:
            log.warning("could not ask whether %s may %s (shown as allowed): %s", self.caller, attributes.describe(), e.message)
            allowed = True
        self._answers[attributes] = allowed
        return allowed

    def may(self, verb: str, resource: Resource, namespace: str | None = None, name: str = "", subresource: str = "") -> Allowance:
        """Whether the caller may ``verb`` ``resource`` (in ``namespace``; ``name``: that object only)."""
        attributes = ResourceAttributes.of(verb, resource, namespace=namespace, name=name, subresource=subresource)
        everywhere = ResourceAttributes.of(verb, resource, subresource=subresource)
        if attributes != everywhere and self._allowed(everywhere):
            return ALLOWED
        if self._allowed(attributes):
            return ALLOWED
        return Allowance(False, sentence(attributes.refused()))

    def anywhere(self, verb: str, resource: Resource, namespaces: Sequence[str]) -> Allowance:
        """Whether the caller may ``verb`` ``resource`` in one of ``namespaces`` at least (or in every namespace).

        At most :data:`ANYWHERE_ASKS_MAX` namespaces are asked: with more (thousands of namespaces, one per team) and
        no grant among the first ones the answer is not known cheaply, so it is "allowed" — shown, and the namespace
        the person then picks is asked (and the API server decides)."""
        if self._allowed(ResourceAttributes.of(verb, resource)):
            return ALLOWED
        if any(self.may(verb, resource, namespace) for namespace in namespaces[:ANYWHERE_ASKS_MAX]):
            return ALLOWED
        if len(namespaces) > ANYWHERE_ASKS_MAX:
            return ALLOWED
        where = "any namespace you can see" if namespaces else "any namespace"
        return Allowance(False, f"You may not {verb} {resource.plural} in {where}.")
