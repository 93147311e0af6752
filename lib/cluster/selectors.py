"""Label selectors evaluated client-side, for list queries answered from the cache.

The grammar, validation and matching are the shared ``labelselectors`` package (the one devcluster
serves ``?labelSelector=`` with, ``labels.Parse`` token for token), so the cache accepts and rejects
exactly what the API server does (``a>1`` included) with kube's message. This module adds the two
things the cache needs: a mapping of required equalities as a selector, and an invalid selector as
our :class:`~cluster.errors.BadRequest`. Used by :class:`cluster.clients.CachedClient`,
:mod:`cluster.consistency` and :class:`cluster.stores.Store`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import labelselectors
from cluster.errors import BadRequest
from labelselectors import LabelSelector

__all__ = ["LabelSelector", "parse", "selector_matching"]


def parse(selector: str | Mapping[str, str] | None) -> LabelSelector:
    """A :class:`LabelSelector` from selector text or from a mapping of required ``key=value`` pairs."""
    if isinstance(selector, Mapping):
        return labelselectors.from_set(selector)
    try:
        return labelselectors.parse(selector)
    except labelselectors.InvalidSelector as exc:
        raise BadRequest(str(exc)) from None


def selector_matching(selector: LabelSelector, labels: Sequence[Mapping[str, str]]) -> Iterator[bool]:
    """``selector.matches`` of each of ``labels``, in order, testing each distinct map once: the cache shares equal label
    maps (:func:`cluster.bodies.share_labels`), so a selector over 100,000 cached objects tests a few maps, and a list
    of the maps is all it reads (the objects themselves, spread over the heap, cost ~1 µs each to reach)."""
    ids = list(map(id, labels))
    verdicts = {at: selector.matches(found) for at, found in dict(zip(ids, labels, strict=True)).items()}
    return map(verdicts.__getitem__, ids)
