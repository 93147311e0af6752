"""The ``/docs`` page: the OpenAPI document as a readable reference, in the dashboard's layout.

Called by :func:`backend.api.openapi.register` (which serves the document itself). What this module decides:

- **Order**: operations are grouped by their first tag, the registered kinds first
  (:data:`backend.core.kinds.registry.TITLES`), then the other resources (:data:`GROUP_ORDER`), then any other
  tag alphabetically, the dashboard's HTML routes last; schemas follow the same order by their
  name's kind prefix.
- **Prose**: descriptions are written for both OpenAPI viewers and Python docstrings, so they carry
  Markdown code spans (`` `x` ``) and reStructuredText markup (``` ``x`` ```, ``:func:`x```, ``**x**``).
  :func:`prose` turns them into text with ``<code>``/``<strong>`` (everything else escaped); nothing
  raw reaches the page.
- **Schemas** are shown as property tables (name, type with links to other schemas, required,
  description), not as JSON.

The template is ``frontend/templates/docs.html`` (extends the dashboard's ``base.html``; styles in
``frontend/static/docs.css`` — the CSP allows no inline style).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flask import render_template
from markupsafe import Markup, escape

from backend.core.kinds.registry import TITLES

METHODS = ("get", "put", "post", "patch", "delete")
GROUP_ORDER = (*(f"{title}s" for title in TITLES), "CombinedTasks", "Namespaces")  # the registered kinds' tags first
LAST_GROUPS = ("Dashboard (HTML)",)
SCHEMA_PREFIXES = (*TITLES, "CombinedTask", "Namespace")
# One inline markup at a time, first match wins: ``code`` (RST), :role:`target` (RST), `code` (Markdown), **strong**.
INLINE = re.compile(r"``(?P<rst>.+?)``|:[\w:.-]+:`~?(?P<role>[^`]+)`|`(?P<md>[^`]+)`|\*\*(?P<strong>[^*]+)\*\*")


def prose(text: str | None) -> Markup:
    """A description as HTML: paragraphs, ``<code>`` for code spans and roles, ``<strong>``; the rest as text."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip()]
    rendered = [_inline(" ".join(p.split())) for p in paragraphs]
    if len(rendered) <= 1:
        return rendered[0] if rendered else Markup("")
    return Markup("").join(Markup("<p>{}</p>").format(p) for p in rendered)


def _inline(text: str) -> Markup:
    out: list[Markup] = []
    position = 0
    for match in INLINE.finditer(text):
        out.append(escape(text[position : match.start()]))
        if match["strong"] is not None:
            out.append(Markup("<strong>{}</strong>").format(match["strong"]))
        else:
            out.append(Markup("<code>{}</code>").format(match["rst"] or match["role"] or match["md"]))
        position = match.end()
    out.append(escape(text[position:]))
    return Markup("").join(out)


def group_rank(tag: str) -> tuple[int, str]:
    if tag in GROUP_ORDER:
        return GROUP_ORDER.index(tag), ""
    if tag in LAST_GROUPS:
        return len(GROUP_ORDER) + 2 + LAST_GROUPS.index(tag), ""
    return len(GROUP_ORDER) + 1, tag.lower()


def schema_rank(name: str) -> tuple[int, str]:
    """Schemas of a kind sort with that kind (the longest matching prefix: CombinedTask is not Task), the rest after."""
    matching = [p for p in SCHEMA_PREFIXES if name.startswith(p)]
    if not matching:
        return len(SCHEMA_PREFIXES), name
    return SCHEMA_PREFIXES.index(max(matching, key=len)), name


def operations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per operation, in page order (group, path, method)."""
    rows = []
    for path, item in spec.get("paths", {}).items():
        shared = item.get("parameters") or []
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            own = operation.get("parameters") or []
            names = {(p.get("name"), p.get("in")) for p in own}
            body = (operation.get("requestBody") or {}).get("content") or {}
            rows.append(
                {
                    "tag": (operation.get("tags") or ["other"])[0],
                    "method": method.upper(),
                    "path": path,
                    "anchor": f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", ""),
                    "summary": operation.get("summary") or "",
                    "description": operation.get("description") or "",
                    "parameters": [p for p in shared if (p.get("name"), p.get("in")) not in names] + own,
                    "body": {media: type_of(content.get("schema")) for media, content in body.items()},
                    "responses": {
                        code: {
                            "description": response.get("description", ""),
                            "content": {media: type_of(c.get("schema")) for media, c in (response.get("content") or {}).items()},
                        }
                        for code, response in (operation.get("responses") or {}).items()
                    },
                    "open": operation.get("security") == [],
                }
            )
    return sorted(rows, key=lambda r: (group_rank(r["tag"]), r["path"], METHODS.index(r["method"].lower())))


def groups(spec: Mapping[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(tag, its operations) in page order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in operations(spec):
        found.setdefault(row["tag"], []).append(row)
    return list(found.items())


def type_of(schema: Mapping[str, Any] | None) -> Markup:
    """A schema's type in a few words; other schemas are links to their table."""
    if not schema:
        return Markup("")
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return Markup('<a href="#schema-{0}">{0}</a>').format(name)
    for combinator, word in (("oneOf", "one of"), ("anyOf", "any of"), ("allOf", "all of")):
        if combinator in schema:
            return Markup("{} {}").format(word, Markup(", ").join(type_of(s) for s in schema[combinator]))
    kind = str(schema.get("type", "object"))
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return Markup("array of {}").format(type_of(schema["items"]))
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return Markup("map of {}").format(type_of(schema["additionalProperties"]))
    words = kind + (f" ({schema['format']})" if schema.get("format") else "")
    if schema.get("enum"):
        return Markup("{}: {}").format(words, Markup(" | ").join(Markup("<code>{}</code>").format(v) for v in schema["enum"]))
    return Markup("{}").format(words)


def schema_tables(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each component schema as rows of (property, type, required, description), in page order."""
    schemas = (spec.get("components") or {}).get("schemas") or {}
    tables = []
    for name in sorted(schemas, key=schema_rank):
        schema = schemas[name]
        required = set(schema.get("required") or ())
        rows = [
            {
                "name": prop,
                "type": type_of(body),
                "required": prop in required,
                "read_only": bool(body.get("readOnly")),
                "write_only": bool(body.get("writeOnly")),
                "nullable": bool(body.get("nullable")),
                "description": prose(body.get("description")),
            }
            for prop, body in (schema.get("properties") or {}).items()
        ]
        tables.append({"name": name, "description": prose(schema.get("description")), "type": type_of(schema), "rows": rows})
    return tables


def render(spec: Mapping[str, Any]) -> str:
    return render_template("docs.html", spec=spec, groups=groups(spec), schemas=schema_tables(spec), prose=prose, docs_type=type_of)
