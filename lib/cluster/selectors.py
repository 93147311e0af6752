"""Label selectors evaluated client-side, for list queries answered from the cache.

The grammar, validation and matching are the shared ``labelselectors`` package (the one devcluster
serves ``?labelSelector=`` with, ``labels.Parse`` token for token), so the cache accepts and rejects
exactly what the API server does (``a>1`` included) with kube's message. This module adds the two
things the cache needs: a mapping of required equalities as a selector, and an invalid selector as
our :class:`~cluster.errors.BadRequest`. Used by :class:`cluster.clients.CachedClient`,
:mod:`cluster.consistency` and :class:`cluster.stores.Store`.
"""

from __future__ import annotations

from collections.abc import Mapping

import labelselectors
from cluster.errors import BadRequest
from labelselectors import LabelSelector

__all__ = ["LabelSelector", "parse"]


def parse(selector: str | Mapping[str, str] | None) -> LabelSelector:
    """A :class:`LabelSelector` from selector text or from a mapping of required ``key=value`` pairs."""
    if isinstance(selector, Mapping):
        return labelselectors.from_set(selector)
    try:
        return labelselectors.parse(selector)
    except labelselectors.InvalidSelector as exc:
        raise BadRequest(str(exc)) from None
