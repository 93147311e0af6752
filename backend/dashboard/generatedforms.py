"""A form generated from a kind's description (by :mod:`.formgen`): its parts, values and payloads,
and the create/edit flow that serves it.

A :class:`Form` is sections (:class:`Group`) of fields (:class:`Field`), nested objects (groups) and
maps edited as name/value rows (:class:`Pairs`). It converts in both directions, as :mod:`.forms`
does by hand for Darkrooms and Tasks: *values* (the strings shown in the form; never a write-only
field) from a stored friendly object or a submitted form, and the friendly *payload* of submitted
values, which then goes through the JSON API's own validation and write path (:mod:`.actions`), so a
422's field paths are the form's field names. Blank fields are left out (the schema or the CRD's
default decides), numbers that do not parse are passed on as text (the schema says why).
:func:`generated_flow` is the :class:`.editing.Flow` of a generated form (its templates also get the
form, to render it with ``frontend/templates/_generated_form.html``). Used by :mod:`.pgpages`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from flask import Response
from werkzeug.datastructures import MultiDict

from backend import payloads
from backend.dashboard import editing
from backend.dashboard.rendering import parse_time

MINUTES = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$")


@dataclass(frozen=True, kw_only=True)
class Field:
    """One input. ``path`` is the friendly path: the input's name and the 422's field path."""

    path: str
    label: str  # its own ("Size")
    title: str  # with its groups' labels, for the error summary ("Data volume / Size")
    widget: str  # text, number, select, textarea, password, datetime-local
    help: str = ""
    required: bool = False  # always required
    required_with: str | None = None  # required when this (optional) group's fields are used
    default: str | None = None
    options: tuple[str, ...] = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    max_length: int | None = None
    pattern: str | None = None  # for the HTML attribute (JavaScript "v"-mode syntax)
    suggestions: tuple[str, ...] = ()
    write_only: bool = False  # never rendered back (values leave it out)
    fixed: bool = False  # cannot change after creation: read-only on edit


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


@dataclass(frozen=True, kw_only=True)
class Group:
    """A fieldset: a nested object (``path``) or a section of the form (``path`` empty)."""

    path: str
    label: str
    help: str = ""
    children: tuple[Field | Pairs | Group, ...] = ()


# -- the form: values and payloads ------------------------------------------------------------------


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


@dataclass(frozen=True)
class Form:
    kind: str
    sections: tuple[Group, ...]

    def walk(self) -> Iterator[Field | Pairs | Group]:
        stack: list[Field | Pairs | Group] = list(reversed(self.sections))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, Group):
                stack.extend(reversed(node.children))

    def fields(self) -> list[Field]:
        return [n for n in self.walk() if isinstance(n, Field)]

    def pairs(self) -> list[Pairs]:
        return [n for n in self.walk() if isinstance(n, Pairs)]

    def titles(self, errors: Mapping[str, Sequence[str]] = {}) -> dict[str, str]:  # read only
        """What the error summary calls each path (rows of a name/value map by their name)."""
        titles: dict[str, str] = {"name": "Name", "namespace": "Namespace"}
        titles.update({f.path: f.title for f in self.fields()})
        for pairs in self.pairs():
            titles[pairs.path] = pairs.label
            noun = pairs.noun[:1].upper() + pairs.noun[1:]
            titles.update({p: f"{noun} {p[len(pairs.path) + 1 :]}" for p in errors if p.startswith(pairs.path + ".")})
        return titles

    # values: the strings a form shows

    def blank(self, namespace: str) -> dict[str, Any]:
        """A new object's form: empty fields (defaults are placeholders), selects on their default, one empty row."""
        values: dict[str, Any] = {"name": "", "namespace": namespace, "generation": ""}
        values.update({f.path: f.default if f.widget == "select" and f.default else "" for f in self.fields() if not f.write_only})
        values.update({p.path: [("", "")] for p in self.pairs()})
        return values

    def values_of(self, friendly: Mapping[str, Any]) -> dict[str, Any]:
        """The values of a stored (friendly) object; never a write-only field."""
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
        return values

    def form_values(self, form: MultiDict[str, str]) -> dict[str, Any]:
        """What the user submitted, as values to show again (write-only fields left out)."""
        text = {key: (form.get(key) or "").strip() for key in ("name", "namespace", "generation")}
        values: dict[str, Any] = dict(text)
        for f in self.fields():
            if not f.write_only:
                raw = form.get(f.path) or ""
                values[f.path] = raw.replace("\r\n", "\n") if f.widget == "textarea" else raw.strip()
        for p in self.pairs():
            names, texts = form.getlist(f"{p.path}:name"), form.getlist(f"{p.path}:value")
            values[p.path] = [(n.strip(), v.strip()) for n, v in zip(names, texts, strict=False)]
        return values

    def rearranged(self, values: dict[str, Any], form: MultiDict[str, str]) -> bool:
        """Apply an "add row" / "remove row" button of a name/value map; True when that was the action (no write)."""
        added = form.get("add-row")
        if added in values and added in {p.path for p in self.pairs()}:
            values[added] = [*values[added], ("", "")]
            return True
        removed = form.get("remove-row") or ""
        path, _, index = removed.rpartition(":")
        if path in {p.path for p in self.pairs()} and index.isdigit():
            rows = list(values[path])
            if int(index) < len(rows):
                del rows[int(index)]
            values[path] = rows or [("", "")]
            return True
        return False

    def payload(self, values: Mapping[str, Any], form: MultiDict[str, str], *, create: bool) -> dict[str, Any]:
        """The friendly payload of submitted ``values`` (write-only fields straight from ``form``, never stripped).

        A row with a value but no name, or a name chosen twice, is a 422 on that row (the JSON API cannot say it:
        a JSON object has no rows)."""
        payload: dict[str, Any] = {}
        if create:
            payload.update({key: values[key] for key in ("name", "namespace") if values.get(key)})
        for f in self.fields():
            text = (form.get(f.path) or "") if f.write_only else values.get(f.path) or ""
            if text == "":
                continue
            value: Any = text
            if f.widget == "number":
                value = _number(text)
            elif f.widget == "datetime-local":
                value = _datetime_payload(text)
            _put(payload, f.path, value)
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
            if chosen:
                _put(payload, p.path, chosen)
        if errors:
            raise payloads.invalid(errors)
        return payload

    def summary(self, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(title, value) of every field that has a value, for showing an object's values (e.g. after a conflict)."""
        shown = [(f.title, str(values.get(f.path))) for f in self.fields() if not f.write_only and values.get(f.path)]
        for p in self.pairs():
            rows = [f"{n} = {v}" for n, v in values.get(p.path) or () if n]
            if rows:
                shown.append((p.label, ", ".join(rows)))
        return shown


# -- serving it ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GeneratedFlow(editing.Flow):
    """:class:`.editing.Flow` for a form that :mod:`.formgen` generated: its templates get the form too."""

    generated: Form
    context: Mapping[str, Any]

    def form(
        self, *, mode: str, values: Mapping[str, Any], status: int = 200, errors: Mapping[str, list[str]] | None = None, **extra: Any
    ) -> Response:
        return super().form(mode=mode, values=values, status=status, errors=errors, form=self.generated, **self.context, **extra)


def generated_flow(form: Form, **options: Any) -> GeneratedFlow:
    """A flow whose values, payload and row buttons are the generated form's."""
    return GeneratedFlow(
        generated=form,
        blank=form.blank,
        form_values=form.form_values,
        values_of=form.values_of,
        payload=form.payload,
        rearranged=form.rearranged,
        **options,
    )
