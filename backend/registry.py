"""The kinds this API serves, each registered once: :data:`KINDS`, and what is derived from it: :data:`SCHEMAS`.

A kind's backend module (:mod:`backend.darkrooms`, :mod:`backend.tasks`, :mod:`backend.postgresqls`:
a :class:`backend.kinds.Kind` subclass naming its schemas) is registered by one line in
:data:`KINDS`. From it :func:`backend.app.create_app` derives the JSON blueprints and their
namespace hints and :class:`backend.services.Services` the application service per kind;
:meth:`backend.access.ClusterAccess.start` starts an informer per kind; :mod:`backend.watching`
streams their changes; :data:`SCHEMAS` — every schema the OpenAPI document names, in the order
apispec registers them (nested schemas first) — is the common schemas plus each kind's own; :data:`TITLES`
and :func:`listed` name the kinds in the API's documentation (the OpenAPI text, ``/watch``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from marshmallow import Schema

from backend import darkrooms, postgresqls, tasks
from backend.kinds import Kind
from backend.schemas import common

KINDS: tuple[Kind, ...] = (darkrooms.KIND, tasks.KIND, postgresqls.KIND)

SCHEMAS: Mapping[str, type[Schema]] = {**common.SCHEMAS, **{name: schema for kind in KINDS for name, schema in kind.schemas.items()}}
TITLES: tuple[str, ...] = tuple(kind.title for kind in KINDS)


def listed(words: Sequence[str], last: str = "and") -> str:
    """``a, b and c`` (with ``last`` before the last word), for documentation that names every kind."""
    return f"{', '.join(words[:-1])} {last} {words[-1]}" if len(words) > 1 else "".join(words)
