"""Forms generated from a kind's description: the CRD's ``openAPIV3Schema`` plus what :mod:`kinds` adds.

Used by the form pages of every kind (:mod:`.darkroompages`, :mod:`.taskpages`, :mod:`.pgpages`).
:func:`build` reads the spec schema of a CRD in ``crds/`` (each file parsed once, :func:`crd_schema`)
and a :class:`FormSpec` — the few things a CRD cannot say: the order and legends of the sections,
labels, maps whose keys are fixed (``resources.requests``: cpu, memory), maps edited as name/value rows
from an allowlist (``parameters``), write-only fields that are not in the CR (``password``) or that
stand in for a CR field (:class:`StandIn`: S3 keys the API stores in a Secret the spec then names),
variants of an object chosen by one of its fields (:class:`Switch`: a Darkroom's WebFolder/S3 source,
from the variant table in :mod:`kinds.darkrooms`), fields fixed after creation, what one item of a
list is called, and friendly names of CR paths. From the schema come the widgets (``string`` → text,
``integer``/``number`` → number, ``enum`` → select (radio choices for a switch), a long ``maxLength``
→ textarea (without a ``pattern``), ``date-time`` → datetime-local in UTC, an ``array`` of strings → one input per item),
``required``, defaults (placeholders, or the preselected option), ``minimum``/``maximum``/
``maxLength``/``pattern``/``minItems``/``maxItems`` and the help text (descriptions).

The spec's types are in :mod:`.specs`. The result is a :class:`.values.Form` of :mod:`.nodes`
(values, payloads; :func:`.pages.generated_flow` serves it), which the pages render with
``frontend/templates/_generated_form.html``; :mod:`backend.dashboard.forms` re-exports all of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from backend.core import crds
from backend.dashboard.forms.nodes import Choice, Field, Group, Node, Pairs, Strings
from backend.dashboard.forms.specs import FormSpec, FormSpecError, Section, Switch
from backend.dashboard.forms.values import Form

TEXTAREA_FROM = 512  # a string that may be longer than this gets a textarea (unless a pattern makes it one line: a URL)
WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_crd_documents = crds.crd_documents  # the CRD files, parsed once per process (shared with the API's schemas)


def crd_schema(kind: str) -> Mapping[str, Any]:
    """The ``openAPIV3Schema`` of the storage version of ``kind``'s CRD in ``crds/`` (:func:`backend.core.crds.crd_schema`)."""
    try:
        return crds.crd_schema(kind)
    except crds.UnknownKind as e:
        raise FormSpecError(str(e)) from None


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


def _variants_of(switch: Switch, names: tuple[str, ...]) -> tuple[int, ...]:
    """Indices of the variants that use all of ``names``; empty when every variant does (shared)."""
    using = tuple(i for i, members in enumerate(switch.members.values()) if all(n in members for n in names))
    return () if len(using) == len(switch.members) else using


class _Builder:
    def __init__(self, spec: FormSpec, schema: Mapping[str, Any]) -> None:
        self.spec = spec
        self.by_friendly = {friendly: cr for cr, friendly in spec.renames.items()}
        self.schema = schema

    def label(self, path: str) -> str:
        return self.spec.labels.get(path) or humanize(path.rsplit(".", 1)[-1])

    def node(self, path: str, schema: Mapping[str, Any], *, required: bool, parents: tuple[str, ...], optional: str | None = None) -> Node:
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
        if schema.get("type") == "array":
            return self.strings(path, schema, label=label, text=text, required=required and optional is None)
        return self.field(path, schema, label=label, text=text, required=required, parents=parents, optional=optional)

    def strings(self, path: str, schema: Mapping[str, Any], *, label: str, text: str, required: bool) -> Strings:
        items = schema.get("items") or {}
        if items.get("type") != "string" or "enum" in items:
            raise FormSpecError(f"{path}: formgen renders lists of strings, not of {items.get('type')!r}")
        item_text = str(items.get("description") or "").strip()
        return Strings(
            path=path,
            label=label,
            noun=self.spec.nouns.get(path, "item"),
            help=self.spec.help.get(path, " ".join(t for t in (text, item_text) if t)),
            required=required,
            item_max_length=items.get("maxLength"),
            item_pattern=js_pattern(items.get("pattern")),
            min_items=schema.get("minItems"),
            max_items=schema.get("maxItems"),
        )

    def group(
        self, path: str, schema: Mapping[str, Any], *, label: str, text: str, parents: tuple[str, ...], optional: str | None
    ) -> Group:
        children: list[Node] = []
        if path in self.spec.fixed_keys:
            values = schema.get("additionalProperties")
            if not isinstance(values, Mapping):
                raise FormSpecError(f"{path}: fixed_keys needs a map (additionalProperties)")
            for key in self.spec.fixed_keys[path]:
                children.append(self.node(f"{path}.{key}", values, required=False, parents=parents, optional=optional))
        elif "properties" in schema:
            required = set(schema.get("required") or ())
            for key, sub in schema["properties"].items():
                if f"{path}.{key}" in self.spec.stand_ins:
                    children.append(self.stand_in(f"{path}.{key}", parents=parents))
                    continue
                children.append(self.node(f"{path}.{key}", sub, required=key in required, parents=parents, optional=optional))
        else:
            raise FormSpecError(f"{path}: a map needs fixed_keys or pairs in the FormSpec")
        all_groups = all(isinstance(c, Group) for c in children)
        children = [replace(c, wide=False) if isinstance(c, Group) and all_groups else c for c in children]
        if path in self.spec.switches:
            return self.switch(path, self.spec.switches[path], label=label, text=text, children=children)
        return Group(path=path, label=label, help=text, children=tuple(children))

    def switch(self, path: str, switch: Switch, *, label: str, text: str, children: list[Node]) -> Group:
        """The group of an object with variants: its discriminator as radio choices first, then each child marked with
        the variants that use it (the chosen variant's own fields before the shared ones)."""
        key = f"{path}.{switch.key}"
        marked: list[Node] = []
        for child in children:
            if child.path == key and isinstance(child, Field):
                choices = tuple(
                    Choice(value=v, label=switch.choices.get(v, (v, ""))[0], hint=switch.choices.get(v, ("", ""))[1])
                    for v in switch.members
                )
                marked.insert(0, replace(child, widget="radio", choices=choices, default=child.default or next(iter(switch.members))))
                continue
            names = tuple(p.rsplit(".", 1)[-1] for p in self.stand_in_fields(child)) or (child.path.rsplit(".", 1)[-1],)
            variants = _variants_of(switch, names)
            if variants and isinstance(child, Field):
                needed = all(names[0] in switch.required.get(v, ()) for v in (list(switch.members)[i] for i in variants))
                child = replace(child, required=needed or child.required)
            marked.append(replace(child, variants=variants))
        if not marked or marked[0].path != key:
            raise FormSpecError(f"{path}: the switch's key {switch.key} is not an enum of the object")
        own = [c for c in marked[1:] if c.variants]
        shared = [c for c in marked[1:] if not c.variants]
        return Group(path=path, label=label, help=text, children=(marked[0], *own, *shared), switch=key, choices=tuple(switch.members))

    def stand_in_fields(self, node: Node) -> tuple[str, ...]:
        return tuple(c.path for c in node.children) if isinstance(node, Group) and node.write_only else ()

    def stand_in(self, path: str, *, parents: tuple[str, ...]) -> Group:
        stand_in = self.spec.stand_ins[path]
        fields: list[Node] = []
        for name in stand_in.fields:
            extra = self.spec.write_only.get(name)
            if extra is None:
                raise FormSpecError(f"{path}: the stand-in's field {name} is not in write_only")
            title = " / ".join((*parents, extra.label))
            fields.append(
                Field(
                    path=name,
                    label=extra.label,
                    title=title,
                    widget="password",
                    help=extra.help,
                    write_only=True,
                    min_length=extra.min_length,
                    max_length=extra.max_length,
                )
            )
        return Group(
            path="",
            label=stand_in.label,
            help=stand_in.help,
            children=tuple(fields),
            write_only=True,
            set_flag=stand_in.set_flag,
            help_set=stand_in.help_set,
        )

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
            raise FormSpecError(f"{path}: formgen renders strings, numbers, enums, objects and lists of strings, not {kind!r}")
        if schema.get("format") == "date-time":
            return Field(widget="datetime-local", **common)
        max_length = schema.get("maxLength")
        long_text = isinstance(max_length, int) and max_length > TEXTAREA_FROM and not schema.get("pattern")
        widget = "textarea" if long_text else "text"
        suggestions = self.spec.suggestions.get(path, ())
        return Field(widget=widget, max_length=max_length, pattern=js_pattern(schema.get("pattern")), suggestions=suggestions, **common)

    def unnamed(self) -> tuple[str, ...]:
        """The top-level spec fields (friendly names) no section names, in CRD order."""
        named = {path for section in self.spec.sections for path in section.paths}
        shown = (self.spec.renames.get(cr, cr) for cr in self.schema["properties"]["spec"]["properties"])
        return tuple(path for path in shown if path not in named)

    def section(self, section: Section) -> Group:
        spec_schema = self.schema["properties"]["spec"]
        required = set(spec_schema.get("required") or ())
        children: list[Node] = []
        for path in (*section.paths, *(self.unnamed() if section.rest else ())):
            if path in self.spec.write_only:
                extra = self.spec.write_only[path]
                hidden = Field(path=path, label=extra.label, title=extra.label, widget="password", help=extra.help, write_only=True)
                children.append(replace(hidden, min_length=extra.min_length, max_length=extra.max_length))
                continue
            cr = self.by_friendly.get(path, path)
            if cr not in spec_schema["properties"]:
                raise FormSpecError(f"{self.spec.kind} has no spec.{cr}")
            children.append(self.node(path, spec_schema["properties"][cr], required=cr in required, parents=()))
        if len(children) == 1 and isinstance(children[0], Pairs | Group | Strings):
            only = children[0]
            if isinstance(only, Group):
                return replace(only, wide=True)
            return Group(path="", label=section.legend, children=(only,))
        return Group(path="", label=section.legend, children=tuple(children))


def build(spec: FormSpec) -> Form:
    """The form of ``spec.kind`` from its CRD (raises :class:`FormSpecError` for what it cannot render)."""
    builder = _Builder(spec, crd_schema(spec.kind))
    return Form(kind=spec.kind, sections=tuple(builder.section(s) for s in spec.sections))
