"""The parts of a form that :mod:`.generating` generates from a kind's description: the nodes of its tree.

A form is sections (:class:`Group`) of inputs (:class:`Field`), nested objects (groups), lists of
strings (:class:`Strings`) and maps edited as name/value rows (:class:`Pairs`). A group may be a
*switch*: one field (the discriminator, rendered as radio choices) picks a variant, and children that
belong to some variants only carry their indices (``variants``) so the page shows the chosen
variant's inputs (pure CSS in ``frontend/static/forms.css``) and the payload leaves the others out.
A group may also stand in for a CR field that write-only inputs fill (S3 keys that go to a Secret):
``set_flag`` names the boolean of the stored object that says they are set. Pure data: built by
:mod:`.generating`, read by :mod:`.values` (values, payloads) and ``_generated_form.html``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class Choice:
    """One option of a discriminator: its value, its words and a short hint."""

    value: str
    label: str
    hint: str = ""


@dataclass(frozen=True, kw_only=True)
class Field:
    """One input. ``path`` is the friendly path: the input's name and the 422's field path."""

    path: str
    label: str  # its own ("Size")
    title: str  # with its groups' labels, for the error summary ("Data volume / Size")
    widget: str  # text, number, select, radio, textarea, password, datetime-local
    help: str = ""
    required: bool = False  # always required (in its variant, when it has variants)
    required_with: str | None = None  # required when this (optional) group's fields are used
    default: str | None = None
    options: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()  # the radio buttons of a discriminator
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None  # for the HTML attribute (JavaScript "v"-mode syntax)
    suggestions: tuple[str, ...] = ()
    suggest_from: str = ""  # a URL the input asks for more suggestions as the person types (a namespace typeahead)
    write_only: bool = False  # never rendered back (values leave it out)
    fixed: bool = False  # cannot change after creation: read-only on edit
    variants: tuple[int, ...] = ()  # used only by these variants of the enclosing switch (empty: by all)
    refused: tuple[tuple[str, str], ...] = ()  # (option, why): options of a select offered disabled, with the reason

    @property
    def wide(self) -> bool:
        """Takes a whole row of the form's grid (long text, radio choices)."""
        return self.widget in ("textarea", "radio")


@dataclass(frozen=True, kw_only=True)
class Strings:
    """A list of strings edited as one input per item (``<path>`` repeated), with add and remove buttons."""

    path: str
    label: str
    noun: str  # what one item is ("sub-domain")
    help: str = ""
    required: bool = False  # sent even when empty (the schema says how many it needs)
    item_max_length: int | None = None
    item_pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    variants: tuple[int, ...] = ()
    wide = True

    def item_label(self, index: int) -> str:
        """``Sub-domain 2`` for index 1."""
        return f"{self.noun[:1].upper()}{self.noun[1:]} {index + 1}"


@dataclass(frozen=True, kw_only=True)
class Pairs:
    """A map edited as rows of (name from an allowlist, value): ``names`` maps each allowed name to what it takes."""

    path: str
    label: str
    noun: str  # what one row is ("parameter")
    help: str = ""
    names: Mapping[str, str] = field(default_factory=dict)
    value_max_length: int | None = None
    max_rows: int | None = None
    variants: tuple[int, ...] = ()
    wide = True


@dataclass(frozen=True, kw_only=True)
class Group:
    """A fieldset: a nested object (``path``), a section of the form, or write-only inputs standing in for a CR field
    (``path`` empty for the last two)."""

    path: str
    label: str
    help: str = ""
    children: tuple[Node, ...] = ()
    switch: str | None = None  # the path of the discriminator among the children
    choices: tuple[str, ...] = ()  # the switch's variants, in index order
    variants: tuple[int, ...] = ()
    write_only: bool = False  # a stand-in: write-only inputs shown in place of a CR field
    set_flag: str | None = None  # stand-in: the friendly boolean saying the write-only inputs are stored
    help_set: str = ""  # stand-in: the help once they are stored
    wide: bool = True  # a row of its own (False: beside its sibling groups)


Node = Field | Strings | Pairs | Group
