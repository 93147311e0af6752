"""What the API says about a kind's spec fields beyond its CRD: the overlay (pure data, no I/O).

The CRD (``crds/*.yaml``) is the one description of a spec field: its name, type, nesting, whether it is
required, its enum, bounds, pattern and list rules. The API's request and response schemas (and so their
OpenAPI components), the generic friendly ↔ CR conversion (``backend.core.conversions.spec``) and the
dashboard's forms are derived from it. An :class:`Overlay`, declared once per kind in its module
(:data:`kinds.darkrooms.API`), says only what a CRD cannot:

- the API's words for a field (:class:`ApiField`: the request's and the response's descriptions), the
  message of a rule, and a format rule of the API's where it is stricter than the CRD's (a named
  ``check`` such as ``"url"``, or a ``pattern``/``max_length`` of its own);
- the default the API shows when a stored object has none (``shown_default``: a response never says null
  then) and the default a request takes when a field is left out (``default``);
- renames between spec paths and friendly paths (a Task's ``taskState`` is ``state``);
- spec fields the API never shows as such (``hidden``: a Darkroom's ``credentialsSecretRef``, which the
  write-only S3 keys stand in for) and write-only fields that are not in the CR at all (``write_only``);
- the keys the API takes of a map (``keys``: a CRD object with ``additionalProperties``, such as a
  Postgresql's ``resources.requests``), each then a field of its own with the map's value schema.

Paths are friendly paths below ``spec`` (``source.baseUrl``); ``subDomains[]`` is one item of a list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Check = Literal["url", "dns-label", "dns-1035-label", "dns-subdomain", "quantity", "positive-quantity", "printable"]
"""A rule of the API with its own message (``backend.core.schemas.common``): in place of the CRD's pattern and lengths,
an http(s) URL, a DNS label or subdomain; beside them (with the field's ``message``), a Kubernetes quantity (one more
than zero) or, for a write-only field, no control characters."""

ITEM = "[]"  # suffix of the path of a list's item: ``subDomains[]``


@dataclass(frozen=True, kw_only=True)
class ApiField:
    """The API's words and rules for one field, beside what its CRD says."""

    ask: str | None = None  # the request's description (None: none); "{default}" in it is the CRD's default
    tell: str | None = None  # the response's description (None: none)
    message: str | None = None  # the message of the field's format or length rule ({min}, {max} filled in)
    length_message: str | None = None  # the message of the length rule, where it differs from ``message``
    check: Check | None = None  # a named rule of the API (:data:`Check`)
    pattern: str | None = None  # the API's pattern where it is stricter than the CRD's (or the CRD has none)
    min_length: int | None = None  # the API's bounds where the CRD has none (given beside a pattern: checked too)
    max_length: int | None = None
    after: str | None = None  # a write-only field: listed after this field of its object (None: after them all)
    default: Any = None  # what a request takes when the field is left out (None: nothing, the CRD's default applies)
    shown_default: Any = None  # what a response shows when the stored object has none (None: null)


@dataclass(frozen=True, kw_only=True, eq=False)
class Overlay:
    """Everything the API adds to one kind's CRD (see the module's docstring). Hashed by identity: one per kind."""

    kind: str  # the CRD's kind: "Darkroom"
    fields: Mapping[str, ApiField] = field(default_factory=dict)  # friendly path → the API's words
    renames: Mapping[str, str] = field(default_factory=dict)  # spec path → friendly path
    hidden: frozenset[str] = frozenset()  # spec paths the API never shows as such
    write_only: Mapping[str, ApiField] = field(default_factory=dict)  # friendly paths of fields that never enter the CR
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # a map's friendly path → the keys the API takes
    full_match: bool = False  # a pattern matches the whole value (Python's ``$`` also matches before a final newline)

    def words(self, path: str) -> ApiField:
        """The API's words for ``path`` (none declared: no words, the CRD's rules only)."""
        return self.fields.get(path) or self.write_only.get(path) or NO_WORDS

    def friendly(self, spec_path: str) -> str:
        """The friendly path of a spec path (its rename, or itself)."""
        return self.renames.get(spec_path, spec_path)


NO_WORDS = ApiField()
