"""Query parameters of a collection request: ``?namespace=&labelSelector=&limit=&continue=`` as a
:class:`backend.core.listing.ListQuery`.

Called by the collection views (:mod:`backend.api.endpoints`, :mod:`backend.api.combinedtasks`). A limit outside
1..``settings.page_size_max`` is a 400 problem; a continue token this API did not issue is one too
(:func:`backend.core.listing.decode_token`); label selector syntax errors surface as 400 from the cache.
"""

from __future__ import annotations

from flask import request

from backend.api.problems import Problem
from backend.core.listing import ListQuery, decode_token
from backend.settings import ApiSettings


def list_query(settings: ApiSettings) -> ListQuery:
    """Parse the collection query; 400 for a bad limit or token. Selector syntax errors surface as 400 from the cache."""
    args = request.args
    limit: int | None = None
    if "limit" in args:
        try:
            limit = int(args["limit"])
        except ValueError:
            limit = 0
        if not 1 <= limit <= settings.page_size_max:
            raise Problem(400, f"limit must be an integer from 1 to {settings.page_size_max}")
    token = args.get("continue")
    return ListQuery(
        namespace=args.get("namespace") or None,
        label_selector=args.get("labelSelector") or None,
        limit=limit,
        after=decode_token(token) if token is not None else None,
    )
