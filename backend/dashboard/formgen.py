"""Forms generated from a kind's description: the CRD's ``openAPIV3Schema`` plus what :mod:`kinds` adds.

Used by :mod:`.pgpages` (the Postgresql form); built to take over the Darkroom and Task forms later.
:func:`build` reads the spec schema of a CRD in ``crds/`` (each file parsed once, :func:`crd_schema`)
and a :class:`FormSpec` — the few things a CRD cannot say: the order and legends of the sections,
labels, maps whose keys are fixed (``resources.requests``: cpu, memory), maps edited as name/value rows
from an allowlist (``parameters``), write-only fields that are not in the CR (``password``), fields
fixed after creation, and friendly names of CR paths. From the schema come the widgets (``string`` →
text, ``integer``/``number`` → number, ``enum`` → select, a long ``maxLength`` → textarea,
``date-time`` → datetime-local in UTC), ``required``, defaults (placeholders, or the preselected
option), ``minimum``/``maximum``/``maxLength``/``pattern`` and the help text (descriptions).

The result is a :class:`.generatedforms.Form` (values, payloads; :func:`.generatedforms.generated_flow`
serves it), which the pages render with ``frontend/templates/_generated_form.html``. Its parts are
re-exported here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from backend.dashboard.generatedforms import Field, Form, Group, Pairs

CRDS = Path(__file__).resolve().parents[2] / "crds"
TEXTAREA_FROM = 512  # a string that may be longer than this gets a textarea
WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
__all__ = ["Field", "Form", "FormSpec", "FormSpecError", "Group", "Pairs", "Section", "WriteOnly", "build", "crd_schema"]


class FormSpecError(ValueError):
    """A FormSpec names something the CRD does not have, or a schema shape formgen cannot render."""


@functools.cache
def _crd_documents() -> tuple[Mapping[str, Any], ...]:
    found: list[Mapping[str, Any]] = []
    for path in sorted(CRDS.glob("*.yaml")):
        found.extend(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")
    return tuple(found)


def crd_schema(kind: str) -> Mapping[str, Any]:
    """The ``openAPIV3Schema`` of the storage version of ``kind``'s CRD in ``crds/`` (files read once per process)."""
    for crd in _crd_documents():
        if crd["spec"]["names"]["kind"] == kind:
            version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
            schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
            return schema
    raise FormSpecError(f"no CRD of kind {kind} in {CRDS}")


# -- what kinds/ adds to a CRD ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Section:
    legend: str
    paths: tuple[str, ...]  # top-level spec fields (friendly names), or write-only fields


@dataclass(frozen=True, kw_only=True)
class WriteOnly:
    """A field of the friendly payload that is not in the CR (e.g. a password that goes to a Secret)."""

    label: str
    help: str = ""
    max_length: int | None = None


@dataclass(frozen=True, kw_only=True)
class FormSpec:
    """What a kind's form needs beyond its CRD (paths are friendly paths)."""

    kind: str
    sections: tuple[Section, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    help: Mapping[str, str] = field(default_factory=dict)  # replaces the CRD's description
    fixed_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # maps with these keys only: one field each
    pairs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # maps as rows: allowed name → what it takes
    nouns: Mapping[str, str] = field(default_factory=dict)  # what one row of such a map is called (default: "entry")
    write_only: Mapping[str, WriteOnly] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()  # fixed after creation
    suggestions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)  # CR spec path → friendly path (Task: taskState → state)


# -- building a form from the CRD -------------------------------------------------------------------


def humanize(name: str) -> str:
    """``storageClassName`` → ``Storage class name``."""
    words = WORDS.findall(name) or [name]
    text = " ".join(w if w.isupper() else w.lower() for w in words)
    return text[:1].upper() + text[1:]


def js_pattern(pattern: str | None) -> str | None:
    """A CRD pattern as an HTML ``pattern`` (anchored already; Chromium compiles it in the "v" mode, where a
    literal ``-`` at either end of a character class must be escaped)."""
    if not pattern:
        return None
    text = pattern.removeprefix("^").removesuffix("$")
    text = re.sub(r"\[(\^?)-", r"[\1\\-", text)
    return re.sub(r"(?<!\\)-\]", r"\\-]", text)


class _Builder:
    def __init__(self, spec: FormSpec, schema: Mapping[str, Any]) -> None:
        self.spec = spec
        self.by_friendly = {friendly: cr for cr, friendly in spec.renames.items()}
        self.schema = schema

    def label(self, path: str) -> str:
        return self.spec.labels.get(path) or humanize(path.rsplit(".", 1)[-1])

    def node(
        self, path: str, schema: Mapping[str, Any], *, required: bool, parents: tuple[str, ...], optional: str | None = None
    ) -> Field | Pairs | Group:
        """``optional``: the label of the nearest enclosing group that is not required (its fields are required only with it)."""
        label = self.label(path)
        text = self.spec.help.get(path, str(schema.get("description") or "").strip())
        if path in self.spec.pairs:
            values = schema.get("additionalProperties") or {}
            return Pairs(
                path=path,
                label=label,
                noun=self.spec.nouns.get(path, "entry"),
                help=text,
                names=self.spec.pairs[path],
                value_max_length=values.get("maxLength") if isinstance(values, Mapping) else None,
                max_rows=schema.get("maxProperties"),
            )
        if schema.get("type") == "object":
            inner = optional if required else label
            return self.group(path, schema, label=label, text=text, parents=(*parents, label), optional=inner)
        return self.field(path, schema, label=label, text=text, required=required, parents=parents, optional=optional)

    def group(
        self, path: str, schema: Mapping[str, Any], *, label: str, text: str, parents: tuple[str, ...], optional: str | None
    ) -> Group:
        children: list[Field | Pairs | Group] = []
        if path in self.spec.fixed_keys:
            values = schema.get("additionalProperties")
            if not isinstance(values, Mapping):
                raise FormSpecError(f"{path}: fixed_keys needs a map (additionalProperties)")
            for key in self.spec.fixed_keys[path]:
                children.append(self.node(f"{path}.{key}", values, required=False, parents=parents, optional=optional))
        elif "properties" in schema:
            required = set(schema.get("required") or ())
            for key, sub in schema["properties"].items():
                children.append(self.node(f"{path}.{key}", sub, required=key in required, parents=parents, optional=optional))
        else:
            raise FormSpecError(f"{path}: a map needs fixed_keys or pairs in the FormSpec")
        return Group(path=path, label=label, help=text, children=tuple(children))

    def field(
        self, path: str, schema: Mapping[str, Any], *, label: str, text: str, required: bool, parents: tuple[str, ...], optional: str | None
    ) -> Field:
        kind = schema.get("type")
        default = schema.get("default")
        common: dict[str, Any] = {
            "path": path,
            "label": label,
            "title": " / ".join((*parents, label)),
            "help": text,
            "required": required and optional is None,
            "required_with": optional if required else None,
            "default": None if default is None else str(default),
            "fixed": path in self.spec.fixed,
        }
        if "enum" in schema:
            return Field(widget="select", options=tuple(str(o) for o in schema["enum"]), **common)
        if kind in ("integer", "number"):
            return Field(widget="number", minimum=schema.get("minimum"), maximum=schema.get("maximum"), **common)
        if kind != "string":
            raise FormSpecError(f"{path}: formgen renders strings, numbers, enums and objects, not {kind!r}")
        if schema.get("format") == "date-time":
            return Field(widget="datetime-local", **common)
        max_length = schema.get("maxLength")
        widget = "textarea" if isinstance(max_length, int) and max_length > TEXTAREA_FROM else "text"
        suggestions = self.spec.suggestions.get(path, ())
        return Field(widget=widget, max_length=max_length, pattern=js_pattern(schema.get("pattern")), suggestions=suggestions, **common)

    def section(self, section: Section) -> Group:
        spec_schema = self.schema["properties"]["spec"]
        required = set(spec_schema.get("required") or ())
        children: list[Field | Pairs | Group] = []
        for path in section.paths:
            if path in self.spec.write_only:
                extra = self.spec.write_only[path]
                hidden = Field(path=path, label=extra.label, title=extra.label, widget="password", help=extra.help, write_only=True)
                children.append(replace(hidden, max_length=extra.max_length))
                continue
            cr = self.by_friendly.get(path, path)
            if cr not in spec_schema["properties"]:
                raise FormSpecError(f"{self.spec.kind} has no spec.{cr}")
            children.append(self.node(path, spec_schema["properties"][cr], required=cr in required, parents=()))
        if len(children) == 1 and isinstance(children[0], Pairs | Group):
            only = children[0]
            return only if isinstance(only, Group) else Group(path="", label=section.legend, children=(only,))
        return Group(path="", label=section.legend, children=tuple(children))


def build(spec: FormSpec) -> Form:
    """The form of ``spec.kind`` from its CRD (raises :class:`FormSpecError` for what it cannot render)."""
    builder = _Builder(spec, crd_schema(spec.kind))
    return Form(kind=spec.kind, sections=tuple(builder.section(s) for s in spec.sections))
