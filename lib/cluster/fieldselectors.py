"""Field selectors (``?fieldSelector=``) evaluated client-side, as kube-apiserver parses and answers them.

The grammar is ``fields.ParseSelector``'s: comma-separated terms ``field=value``, ``field==value`` (the same) or
``field!=value``, with ``\\`` escaping ``\\``, ``,`` and ``=`` in values. Which fields a kind supports is the
caller's mapping of field label → the object's value as a string (kube compares field selector values as strings):
:data:`METADATA` (``metadata.name``, ``metadata.namespace``: every kind) plus a CRD's ``selectableFields``
(:data:`kinds.tasks.SELECTABLE`). A term that does not parse, or a field the mapping lacks ("field label not
supported: ..."), is :class:`~cluster.errors.BadRequest` with kube's message. Used by the aggregated API
(:mod:`aggregator.queries`) and the control panel's collection queries (:mod:`backend.core.listing`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from cluster.errors import BadRequest

Value = Callable[[Mapping[str, Any]], str]  # an object's value of one field label, as a string
KeysHaving = Callable[[str], Collection[str]]  # a field's value → the keys of the objects that have it (an index's)

METADATA: Mapping[str, Value] = {
    "metadata.name": lambda obj: str(obj["metadata"].get("name", "")),
    "metadata.namespace": lambda obj: str(obj["metadata"].get("namespace", "")),
}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    operator: str  # "=" or "!="
    value: str
    value_of: Value = dataclasses.field(compare=False, repr=False)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (self.value_of(obj) == self.value) == (self.operator == "=")


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def exact(self, field: str) -> str | None:
        """The value ``field`` must equal, if the selector says (``metadata.name=x``: a watch of one object)."""
        return next((r.value for r in self.requirements if r.field == field and r.operator == "="), None)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def on_keys(self, indexed: Mapping[str, KeysHaving] | None = None) -> tuple[Callable[[str], bool] | None, FieldSelector]:
        """This selector as a test of keys (``namespace/name``) — for its requirements on :data:`METADATA` (read off the
        key) and on the fields ``indexed`` looks up (the keys of the objects with the value, asked once per
        requirement) — and the rest; None for no test. A list answers those without reading an object (a packed cache
        need not decode 100,000)."""
        on_metadata = [r for r in self.requirements if METADATA.get(r.field) is r.value_of]
        lookups = indexed or {}
        on_index = [(r, frozenset(lookups[r.field](r.value))) for r in self.requirements if r not in on_metadata and r.field in lookups]
        if not on_metadata and not on_index:
            return None, self
        answered = {r for r, _ in on_index} | set(on_metadata)
        rest = FieldSelector(tuple(r for r in self.requirements if r not in answered))
        musts = [having for r, having in on_index if r.operator == "="]
        allowed = frozenset.intersection(*musts) if musts else None  # the keys every "=" on an index keeps
        denied = frozenset().union(*(having for r, having in on_index if r.operator != "="))
        checks = [(r.field == "metadata.name", r.value, r.operator == "=") for r in on_metadata]  # (on the name?, value, =?)

        def keeps(key: str) -> bool:
            if (allowed is not None and key not in allowed) or key in denied:
                return False
            if checks:
                namespace, _, name = key.rpartition("/")
                for on_name, value, equal in checks:
                    if ((name if on_name else namespace) == value) != equal:
                        return False
            return True

        return keeps, rest


def _split(text: str, separator: str) -> list[str]:
    """Split on unescaped ``separator`` (fields.ParseSelector's escaping: backslash)."""
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current += "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current + ("\\" if escaped else "")]


def _unescape(value: str, term: str) -> str:
    out, escaped = "", False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: '\\{char}' in '{term}'")
            out += char
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out += char
    if escaped:
        raise BadRequest(f"invalid field selector: unterminated escape sequence in '{term}'")
    return out


def _term(term: str, whole: str, fields: Mapping[str, Value]) -> FieldRequirement:
    for position in range(len(term)):
        if term[position] == "\\":
            continue
        for operator in ("!=", "==", "="):
            if term.startswith(operator, position) and (position == 0 or term[position - 1] != "\\"):
                label = term[:position].strip()
                value = _unescape(term[position + len(operator) :], term)
                if label not in fields:
                    raise BadRequest(f"field label not supported: {label}")
                return FieldRequirement(label, "!=" if operator == "!=" else "=", value, fields[label])
    raise BadRequest(f"invalid selector: '{whole}'; can't understand '{term}'")


def parse(text: str | None, fields: Mapping[str, Value]) -> FieldSelector:
    """A field selector over ``fields`` (``a=b,c!=d``, ``==`` as ``=``); :class:`BadRequest` for syntax errors and
    field labels ``fields`` lacks."""
    if not text or not text.strip():
        return FieldSelector()
    return FieldSelector(tuple(_term(term, text, fields) for term in _split(text, ",") if term.strip()))
