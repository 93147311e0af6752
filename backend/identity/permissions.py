"""What the caller may do, for showing: the dashboard hides or disables what would be refused, and says why.

:class:`Permissions` answers "may I ``verb`` this here?" with a ``SelfSubjectAccessReview`` made with the
caller's own credentials (:class:`cluster.reviewing.SelfAccessReviewer`, cached briefly per credentials and
question) — the same question kube-apiserver will answer when the request is made, asked by the same
person. It is for showing only: the API server still decides every request. A review that cannot be made
leaves the action shown (the server's answer will say what is wrong) and is logged once.

The wording of a refusal is :meth:`cluster.attributes.ResourceAttributes.refused`, the same on pages and in
problem+json: ``you may not delete darkrooms in namespace "team-b"``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from backend.identity.callers import Caller
from cluster import ClusterError, Resource
from cluster.attributes import ResourceAttributes
from cluster.reviewing import SelfAccessReviewer

log = logging.getLogger(__name__)


def refusal(attributes: ResourceAttributes) -> str:
    """``you may not list darkrooms in namespace "team-b"`` (core and our own kinds by their plural alone)."""
    what = attributes.resource + (f"/{attributes.subresource}" if attributes.subresource else "")
    name = f' "{attributes.name}"' if attributes.name and attributes.resource != "namespaces" else ""
    where = (
        f' in namespace "{attributes.namespace}"'
        if attributes.namespace
        else (" in every namespace" if attributes.verb in ("list", "watch") else "")
    )
    return f"you may not {attributes.verb} {what}{name}{where}"


@dataclass(frozen=True)
class Allowance:
    """An answer for a page: truthy when allowed; ``reason`` says why not (a sentence for a tooltip or note)."""

    allowed: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.allowed


class Permissions:
    """The caller's permissions, asked of the cluster as the caller (see the module docstring)."""

    def __init__(self, *, reviewer: SelfAccessReviewer, caller: Caller) -> None:
        self.reviewer = reviewer
        self.caller = caller

    def may(self, verb: str, resource: Resource, namespace: str | None = None, name: str = "", subresource: str = "") -> Allowance:
        attributes = ResourceAttributes.of(verb, resource, namespace=namespace, name=name, subresource=subresource)
        try:
            decision = self.reviewer.decide(self.caller.actor.credentials, attributes)
        except ClusterError as e:
            log.warning("could not ask whether %s may %s: %s", self.caller, attributes.describe(), e.message)
            return Allowance(True)
        if decision.allowed:
            return Allowance(True)
        sentence = attributes.refused()
        return Allowance(False, sentence[:1].upper() + sentence[1:] + ".")
