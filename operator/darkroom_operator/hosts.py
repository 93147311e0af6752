"""Who may serve a host, for the reconciler: the rule of :mod:`kinds.darkrooms` (the older claim wins) applied to
one Darkroom and its rivals (pure, no I/O).

Used by :mod:`darkroom_operator.darkrooms`. The rule itself — what a claim is, how old it is, who holds a
sub-domain — lives in :mod:`kinds.darkrooms` (:func:`~kinds.darkrooms.claims`, :func:`~kinds.darkrooms.holder`),
so the API names the same holder when it refuses a sub-domain. The Darkroom informer indexes sub-domains
(:data:`kinds.darkrooms.SUBDOMAIN_INDEX`) so finding rivals costs one index read per sub-domain, not a scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kinds.darkrooms import SUBDOMAIN_INDEX, claims, holder

__all__ = ["SUBDOMAIN_INDEX", "key", "lost", "message", "subdomains"]

subdomains = claims  # a Darkroom's requested sub-domains (none while it is being deleted), and the index's function


def key(darkroom: Mapping[str, Any]) -> str:
    return f"{darkroom['metadata']['namespace']}/{darkroom['metadata']['name']}"


def lost(darkroom: Mapping[str, Any], rivals_by_subdomain: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, str]:
    """The sub-domains ``darkroom`` loses, each with the key of the older Darkroom that holds it."""
    losses: dict[str, str] = {}
    for sub in claims(darkroom):
        others = [r for r in rivals_by_subdomain.get(sub, ()) if key(r) != key(darkroom)]
        winner = holder(sub, [darkroom, *others])
        if winner is not None and key(winner) != key(darkroom):
            losses[sub] = key(winner)
    return losses


def message(losses: Mapping[str, str], domain: str) -> str:
    return "; ".join(f'host "{sub}.{domain}" is served by the older Darkroom {winner}' for sub, winner in sorted(losses.items()))
