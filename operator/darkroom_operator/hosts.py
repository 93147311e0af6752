"""Who may serve a host: when two Darkrooms ask for the same sub-domain, the older claim wins (pure, no I/O).

Used by :mod:`darkroom_operator.darkrooms`. Every Darkroom of one reconciler gets the same domain, so
equal sub-domains mean equal Ingress hosts. A claim's age is the Darkroom's ``creationTimestamp``
(then namespace/name, so that equal timestamps still give one answer on every replica); a Darkroom
being deleted claims nothing. The Darkroom informer indexes sub-domains (:data:`SUBDOMAIN_INDEX`) so
finding rivals costs one index read per sub-domain, not a scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SUBDOMAIN_INDEX = "subdomain"


def subdomains(darkroom: Mapping[str, Any]) -> list[str]:
    """The indexer: a Darkroom's requested sub-domains (none while it is being deleted)."""
    if darkroom["metadata"].get("deletionTimestamp"):
        return []
    return [str(s) for s in (darkroom.get("spec") or {}).get("subDomains") or ()]


def key(darkroom: Mapping[str, Any]) -> str:
    return f"{darkroom['metadata']['namespace']}/{darkroom['metadata']['name']}"


def _claim_age(darkroom: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = darkroom["metadata"]
    return (str(meta.get("creationTimestamp") or ""), str(meta["namespace"]), str(meta["name"]))


def lost(darkroom: Mapping[str, Any], rivals_by_subdomain: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, str]:
    """The sub-domains ``darkroom`` loses, each with the key of the older Darkroom that holds it."""
    mine = _claim_age(darkroom)
    losses: dict[str, str] = {}
    for sub in subdomains(darkroom):
        older = [r for r in rivals_by_subdomain.get(sub, ()) if key(r) != key(darkroom) and subdomains(r) and _claim_age(r) < mine]
        if older:
            losses[sub] = key(min(older, key=_claim_age))
    return losses


def message(losses: Mapping[str, str], domain: str) -> str:
    return "; ".join(f'host "{sub}.{domain}" is served by the older Darkroom {winner}' for sub, winner in sorted(losses.items()))
