"""A form generated from a kind's description (by :mod:`.generating`): its values and payloads.

A :class:`Form` is a tree of :mod:`.nodes`. It converts in both directions: *values* (the
strings shown in the form; never a write-only field) from a stored friendly object or a submitted form,
and the friendly *payload* of submitted values, which then goes through the JSON API's own validation
and write path (:mod:`.actions`), so a 422's field paths are the form's field names. Blank fields are
left out (the schema or the CRD's default decides; a blank write-only field keeps what is stored),
numbers that do not parse are passed on as text (the schema says why), inputs of a switch's other
variants are left out (but shown again as typed). :meth:`Form.ordered` puts a 422's errors in the
order of the form. Served by :mod:`.pages`; rendered by ``frontend/templates/_generated_form.html``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from werkzeug.datastructures import MultiDict

from backend.core.errors import Invalid
from backend.core.ordering import parse_time
from backend.dashboard.forms.nodes import Field, Group, Node, Pairs, Strings

MINUTES = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$")
IDENTITY = ("name", "namespace")


def _number(text: str) -> int | float | str:
    if re.fullmatch(r"[+-]?\d{1,19}", text):
        return int(text)
    return float(text) if re.fullmatch(r"[+-]?\d{1,19}\.\d{1,19}", text) else text


def _get(obj: Mapping[str, Any] | None, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _put(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value


def datetime_input(stored: Any) -> str:
    """A stored RFC 3339 time as a ``datetime-local`` value in UTC (``2027-03-31T17:00``)."""
    moment = parse_time(stored)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if moment else ""


def _datetime_payload(text: str) -> str:
    """A ``datetime-local`` value (no zone) taken as UTC; anything else passed on for the schema to judge."""
    return text + (":00" if len(text) == 16 else "") + "Z" if MINUTES.match(text) else text


def _index(text: str) -> int | None:
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class Form:
    kind: str
    sections: tuple[Group, ...]

    @property
    def has_write_only(self) -> bool:
        return any(f.write_only for f in self.fields())

    def name_field(self, hint: str, max_length: int | None = None) -> Field:
        """The name of a new object (create mode)."""
        return Field(path="name", label="Name", title="Name", widget="text", help=hint, required=True, max_length=max_length)

    def namespace_field(
        self, namespaces: Sequence[str], current: str, refused: Mapping[str, str] | None = None, *, suggest_from: str = ""
    ) -> Field:
        """The namespace of a new object: a select of the namespaces there are (and the one asked for, if it is not among
        them), ``refused`` those the person may not create in (offered disabled, with the reason); with ``suggest_from``
        (many namespaces: :mod:`backend.dashboard.namespacepicker`) a text input suggesting ``namespaces`` and asking
        that URL for more as the person types, the reason a refused ``current`` namespace is refused as its hint."""
        if suggest_from:
            why = (refused or {}).get(current, "")
            return Field(
                path="namespace",
                label="Namespace",
                title="Namespace",
                widget="text",
                help=why and f"You may not create here: {why}",
                default=None,
                required=True,
                suggestions=tuple(namespaces),
                suggest_from=suggest_from,
            )
        options = (*namespaces, *(() if not current or current in namespaces else (current,)))
        return Field(
            path="namespace",
            label="Namespace",
            title="Namespace",
            widget="select",
            options=options,
            default=current,
            required=True,
            refused=tuple((ns, why) for ns, why in (refused or {}).items() if ns in options),
        )

    def walk(self) -> Iterator[Node]:
        stack: list[Node] = list(reversed(self.sections))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, Group):
                stack.extend(reversed(node.children))

    def fields(self) -> list[Field]:
        return [n for n in self.walk() if isinstance(n, Field)]

    def pairs(self) -> list[Pairs]:
        return [n for n in self.walk() if isinstance(n, Pairs)]

    def strings(self) -> list[Strings]:
        return [n for n in self.walk() if isinstance(n, Strings)]

    def flags(self) -> list[str]:
        """The friendly booleans saying write-only inputs are stored (``source.credentialsSet``)."""
        return [n.set_flag for n in self.walk() if isinstance(n, Group) and n.set_flag]

    def unused(self, values: Mapping[str, Any]) -> set[str]:
        """Paths of inputs that belong to variants of a switch other than the one chosen in ``values``."""
        skipped: set[str] = set()
        for group in (n for n in self.walk() if isinstance(n, Group) and n.switch):
            chosen = values.get(group.switch or "")
            index = group.choices.index(chosen) if chosen in group.choices else 0
            stack: list[Node] = [c for c in group.children if c.variants and index not in c.variants]
            while stack:
                node = stack.pop()
                skipped.add(node.path)
                if isinstance(node, Group):
                    stack.extend(node.children)
        return skipped

    # -- what the error summary says, in which order

    def titles(self, errors: Mapping[str, Sequence[str]] = {}) -> dict[str, str]:  # read only
        """What the error summary calls each path (rows of a name/value map by their name, list items by number)."""
        titles: dict[str, str] = {"name": "Name", "namespace": "Namespace"}
        titles.update({f.path: f.title for f in self.fields()})
        titles.update({n.path: n.label for n in self.walk() if isinstance(n, Group) and n.path})
        for pairs in self.pairs():
            titles[pairs.path] = pairs.label
            noun = pairs.noun[:1].upper() + pairs.noun[1:]
            titles.update({p: f"{noun} {p[len(pairs.path) + 1 :]}" for p in errors if p.startswith(pairs.path + ".")})
        for strings in self.strings():
            titles[strings.path] = strings.label
            for p in errors:
                index = _index(p[len(strings.path) + 1 :]) if p.startswith(strings.path + ".") else None
                if index is not None:
                    titles[p] = strings.item_label(index)
        return titles

    def ordered(self, errors: Mapping[str, Sequence[str]], values: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
        """(path, message) of every error in the order of the form: the form as a whole first, then the fields
        top to bottom (list items by index, name/value rows in their order); paths the form lacks last."""
        rank = {path: i for i, path in enumerate(("$", *IDENTITY, *(n.path for n in self.walk() if n.path)))}
        rows = {p.path: [name for name, _ in (values or {}).get(p.path) or ()] for p in self.pairs()}

        def key(path: str) -> tuple[int, int, str]:
            if path in rank:
                return rank[path], -1, ""
            parent, _, rest = path.rpartition(".")
            if parent in rank:
                index = _index(rest)
                if index is None and rest in rows.get(parent, ()):
                    index = rows[parent].index(rest)
                return rank[parent], len(rank) if index is None else index, rest
            return len(rank), 0, path

        return [(path, message) for path in sorted(errors, key=key) for message in errors[path]]

    # -- values: the strings a form shows

    def blank(self, namespace: str) -> dict[str, Any]:
        """A new object's form: empty fields (defaults are placeholders), selects and switches on their default,
        one empty row or item."""
        values: dict[str, Any] = {"name": "", "namespace": namespace, "generation": ""}
        chosen = ("select", "radio")
        values.update({f.path: f.default if f.widget in chosen and f.default else "" for f in self.fields() if not f.write_only})
        values.update({p.path: [("", "")] for p in self.pairs()})
        values.update({s.path: [] for s in self.strings()})
        values.update({flag: False for flag in self.flags()})
        return values

    def values_of(self, friendly: Mapping[str, Any]) -> dict[str, Any]:
        """The values of a stored (friendly) object; never a write-only field (only whether it is set)."""
        values: dict[str, Any] = {
            "name": friendly.get("name") or "",
            "namespace": friendly.get("namespace") or "",
            "generation": "" if friendly.get("generation") is None else str(friendly["generation"]),
        }
        for f in self.fields():
            if f.write_only:
                continue
            stored = _get(friendly, f.path)
            values[f.path] = "" if stored is None else datetime_input(stored) if f.widget == "datetime-local" else str(stored)
        for p in self.pairs():
            values[p.path] = sorted((str(k), "" if v is None else str(v)) for k, v in (_get(friendly, p.path) or {}).items())
        for s in self.strings():
            values[s.path] = [str(item) for item in _get(friendly, s.path) or ()]
        values.update(self.kept(friendly))
        return values

    def kept(self, friendly: Mapping[str, Any]) -> dict[str, Any]:
        """What an edit takes from the stored object rather than the form: whether write-only inputs are set."""
        return {flag: bool(_get(friendly, flag)) for flag in self.flags()}

    def form_values(self, form: MultiDict[str, str]) -> dict[str, Any]:
        """What the user submitted, as values to show again (write-only fields left out)."""
        values: dict[str, Any] = {key: (form.get(key) or "").strip() for key in (*IDENTITY, "generation")}
        for f in self.fields():
            if not f.write_only:
                raw = form.get(f.path) or ""
                values[f.path] = raw.replace("\r\n", "\n") if f.widget == "textarea" else raw.strip()
        for p in self.pairs():
            names, texts = form.getlist(f"{p.path}:name"), form.getlist(f"{p.path}:value")
            values[p.path] = [(n.strip(), v.strip()) for n, v in zip(names, texts, strict=False)]
        for s in self.strings():
            values[s.path] = [item.strip() for item in form.getlist(s.path) if item.strip()]
        values.update({flag: form.get(flag) == "true" for flag in self.flags()})
        return values

    def rearranged(self, values: dict[str, Any], form: MultiDict[str, str]) -> bool:
        """Apply an add/remove button of a name/value map or a list; True when that was the action (no write)."""
        rows, lists = {p.path for p in self.pairs()}, {s.path for s in self.strings()}
        added = form.get("add-row") or form.get("add-item") or ""
        if added in rows or added in lists:
            values[added] = [*values[added], ("", "") if added in rows else ""]
            return True
        removed = form.get("remove-row") or form.get("remove-item") or ""
        path, _, text = removed.rpartition(":")
        index = _index(text)
        if index is None or path not in rows | lists:
            return False
        if path in lists:  # the submitted items, blanks included: the index is the button's row
            items = [item.strip() for item in form.getlist(path)]
            values[path] = [item for i, item in enumerate(items) if item and i != index]
            return True
        kept = [row for i, row in enumerate(values[path]) if i != index]
        values[path] = kept or [("", "")]
        return True

    def payload(self, values: Mapping[str, Any], form: MultiDict[str, str], *, create: bool) -> dict[str, Any]:
        """The friendly payload of submitted ``values`` (write-only fields straight from ``form``, never stripped).

        A row with a value but no name, or a name chosen twice, is a 422 on that row (the JSON API cannot say it:
        a JSON object has no rows)."""
        payload: dict[str, Any] = {}
        if create:
            payload.update({key: values[key] for key in IDENTITY if values.get(key)})
        unused = self.unused(values)
        for f in self.fields():
            text = (form.get(f.path) or "") if f.write_only else values.get(f.path) or ""
            if text == "" or f.path in unused:
                continue
            value: Any = text
            if f.widget == "number":
                value = _number(text)
            elif f.widget == "datetime-local":
                value = _datetime_payload(text)
            _put(payload, f.path, value)
        for s in self.strings():
            if s.path not in unused and (values.get(s.path) or s.required):
                _put(payload, s.path, list(values.get(s.path) or ()))
        errors: dict[str, list[str]] = {}
        for p in self.pairs():
            chosen: dict[str, str] = {}
            for name, text in values.get(p.path) or ():
                if not name and not text:
                    continue
                if not name:
                    errors.setdefault(p.path, []).append(f"choose a name for the value {text!r}")
                elif name in chosen:
                    errors[f"{p.path}.{name}"] = ["chosen twice: keep one row"]
                chosen[name] = text
            if chosen and p.path not in unused:
                _put(payload, p.path, chosen)
        if errors:
            raise Invalid(errors)
        return payload

    def summary(self, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(title, value) of every field that has a value, for showing an object's values (e.g. after a conflict)."""
        unused = self.unused(values)
        shown: list[tuple[str, str]] = []
        for node in self.walk():
            if node.path in unused:
                continue
            if isinstance(node, Field) and not node.write_only and values.get(node.path):
                shown.append((node.title, str(values[node.path])))
            elif isinstance(node, Strings) and values.get(node.path):
                shown.append((node.label, ", ".join(values[node.path])))
            elif isinstance(node, Pairs):
                rows = [f"{n} = {v}" for n, v in values.get(node.path) or () if n]
                if rows:
                    shown.append((node.label, ", ".join(rows)))
            elif isinstance(node, Group) and node.set_flag:
                shown.append((node.label, "set" if values.get(node.set_flag) else "not set"))
        return shown
