"""The kinds this API serves, each registered once: :data:`KINDS`, and what is derived from it: :data:`SCHEMAS`.

A kind's backend module (:mod:`backend.core.kinds.darkrooms`, :mod:`backend.core.kinds.tasks`, :mod:`backend.core.kinds.postgresqls`:
a :class:`backend.core.kinds.base.Kind` subclass naming its schemas) is registered by one line in
:data:`KINDS`. From it :func:`backend.app.create_app` derives the JSON blueprints and their
namespace hints and :class:`backend.core.services.Services` the application service per kind;
:meth:`backend.core.access.ClusterAccess.start` starts an informer per kind; :mod:`backend.api.watch.watching`
streams their changes; :data:`SCHEMAS` — every schema the OpenAPI document names, in the order
apispec registers them (nested schemas first) — is the common schemas plus each kind's own; :data:`TITLES`
and :func:`listed` name the kinds in the API's documentation (the OpenAPI text, ``/watch``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from marshmallow import Schema

from backend.core.kinds import darkrooms, postgresqls, tasks
from backend.core.kinds.base import Kind
from backend.core.schemas import common

KINDS: tuple[Kind, ...] = (darkrooms.KIND, tasks.KIND, postgresqls.KIND)

SCHEMAS: Mapping[str, type[Schema]] = {**common.SCHEMAS, **{name: schema for kind in KINDS for name, schema in kind.schemas.items()}}
TITLES: tuple[str, ...] = tuple(kind.title for kind in KINDS)


def listed(words: Sequence[str], last: str = "and") -> str:
    """``a, b and c`` (with ``last`` before the last word), for documentation that names every kind."""
    return f"{', '.join(words[:-1])} {last} {words[-1]}" if len(words) > 1 else "".join(words)
