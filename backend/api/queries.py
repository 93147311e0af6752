"""Query parameters of a collection request, ``?namespace=&labelSelector=&fieldSelector=&q=&sort=&limit=&continue=``,
as a :class:`backend.core.listing.ListQuery`.

Called by the collection views (:mod:`backend.api.endpoints`, :mod:`backend.api.combinedtasks`) with their kind. Each
bad value is a 400 problem naming its parameter in ``errors``: a limit outside 1..``settings.page_size_max``, a
continue token this API did not issue (:func:`backend.core.listing.decode_token`), a field selector that does not
parse or names a field the kind does not support (kube-apiserver's words, "field label not supported: ...":
:mod:`cluster.fieldselectors` over :attr:`backend.core.kinds.base.Kind.selectable_fields`), a sort key the kind's
lists do not have (:attr:`backend.core.kinds.base.Kind.sorts`). Label selector syntax errors surface as 400 from the
cache. A parameter no collection view knows is refused before the view runs (:mod:`backend.api.parameters`).
"""

from __future__ import annotations

from flask import request

from backend.api.problems import Problem
from backend.core import errors
from backend.core.kinds.base import Kind
from backend.core.listing import ListQuery, decode_token
from backend.settings import ApiSettings
from cluster import BadRequest, fieldselectors


def _bad(parameter: str, message: str) -> Problem:
    return Problem(400, f"{parameter}: {message}", errors={parameter: [message]})


def list_query(settings: ApiSettings, kind: Kind) -> ListQuery:
    """Parse the collection query of ``kind``'s objects; 400 naming the parameter for a bad value."""
    args = request.args
    limit: int | None = None
    if "limit" in args:
        try:
            limit = int(args["limit"])
        except ValueError:
            limit = 0
        if not 1 <= limit <= settings.page_size_max:
            raise _bad("limit", f"must be an integer from 1 to {settings.page_size_max}")
    try:
        fields = fieldselectors.parse(args.get("fieldSelector"), kind.selectable_fields)
    except BadRequest as e:
        supported = ", ".join(kind.selectable_fields)
        raise _bad("fieldSelector", f"{e.message} (a {kind.title} supports {supported}; operators =, ==, !=)") from None
    sort = args.get("sort", "")
    if "sort" in args and sort.removeprefix("-") not in kind.sorts:  # "sort=" too: no key is no order to ask for
        keys = ", ".join(kind.sorts)
        raise _bad("sort", f'unknown sort key "{sort.removeprefix("-")}": one of {keys}, or "-" and one for descending')
    token = args.get("continue")
    try:
        after = decode_token(token) if token is not None else None
    except errors.BadRequest as e:
        raise _bad("continue", e.detail) from None
    return ListQuery(
        namespace=args.get("namespace") or None,
        label_selector=args.get("labelSelector") or None,
        limit=limit,
        after=after,
        fields=fields,
        q=args.get("q", "").strip(),
        sort=sort,
    )
