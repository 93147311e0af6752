"""What a kind's form needs beyond its CRD: :class:`FormSpec` and its parts, declared by each kind's pages module.

Read by :mod:`.generating` (re-exported by :mod:`backend.dashboard.forms`). The CRD says the fields, types, bounds, defaults and help;
a FormSpec says only what it cannot: the order and legends of the sections, labels, what one list item
or map row is called, maps with fixed keys or rows from an allowlist, write-only fields (in place of a
CR field: :class:`StandIn`), an object's variants (:class:`Switch`), fields fixed after creation,
renamed paths. Paths are friendly paths (the JSON API's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


class FormSpecError(ValueError):
    """A FormSpec names something the CRD does not have, or a schema shape formgen cannot render."""


@dataclass(frozen=True, kw_only=True)
class Section:
    legend: str
    paths: tuple[str, ...]  # top-level spec fields (friendly names), or write-only fields
    rest: bool = False  # also every top-level spec field of the CRD that no section names (a new field lands here)


@dataclass(frozen=True, kw_only=True)
class WriteOnly:
    """A field of the friendly payload that is not in the CR (e.g. a password that goes to a Secret)."""

    label: str
    help: str = ""
    min_length: int | None = None
    max_length: int | None = None


@dataclass(frozen=True, kw_only=True)
class StandIn:
    """Write-only fields (keys of ``FormSpec.write_only``) shown in place of a CR field the API fills from them.

    ``set_flag``: the friendly boolean of a stored object saying they are stored; then ``help_set`` is shown,
    each field's label says "(replace)", and leaving them blank keeps what is stored."""

    label: str
    fields: tuple[str, ...]
    set_flag: str | None = None
    help: str = ""
    help_set: str = ""


@dataclass(frozen=True, kw_only=True)
class Switch:
    """An object whose field ``key`` (an enum) picks a variant; ``members``: variant → the object's fields it uses
    (write-only ones included; a field every variant uses is shared). ``required``: variant → what it requires
    (the API says so too). ``choices``: variant → (label, hint) of its radio button."""

    key: str
    members: Mapping[str, tuple[str, ...]]
    required: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class FormSpec:
    """What a kind's form needs beyond its CRD (paths are friendly paths)."""

    kind: str
    sections: tuple[Section, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    help: Mapping[str, str] = field(default_factory=dict)  # replaces the CRD's description
    fixed_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # maps with these keys only: one field each
    pairs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # maps as rows: allowed name → what it takes
    nouns: Mapping[str, str] = field(default_factory=dict)  # what one row or item is called (default: "entry", "item")
    write_only: Mapping[str, WriteOnly] = field(default_factory=dict)
    stand_ins: Mapping[str, StandIn] = field(default_factory=dict)  # CR path → the write-only fields shown instead
    switches: Mapping[str, Switch] = field(default_factory=dict)  # object path → its variants
    fixed: frozenset[str] = frozenset()  # fixed after creation
    suggestions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)  # CR spec path → friendly path (Task: taskState → state)
