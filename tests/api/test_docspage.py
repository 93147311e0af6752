"""The /docs page's own decisions (backend/api/docspage.py): descriptions' Markdown code spans and RST markup
become ``<code>``/``<strong>`` and everything else is escaped; groups run Darkrooms, Tasks, the other
resources, any other tag, the dashboard's HTML last; schemas sort with their kind; types link to schemas.
"""

from __future__ import annotations

from backend.api import docspage


def test_prose_turns_code_spans_and_rst_into_html_and_escapes_the_rest() -> None:
    text = "Use `If-Match`, ``next`` or :func:`backend.x` — **never** <b>raw</b> & co."
    assert str(docspage.prose(text)) == (
        "Use <code>If-Match</code>, <code>next</code> or <code>backend.x</code> — <strong>never</strong> &lt;b&gt;raw&lt;/b&gt; &amp; co."
    )
    assert str(docspage.prose("One\nline.\n\nTwo `<x>`.")) == "<p>One line.</p><p>Two <code>&lt;x&gt;</code>.</p>"
    assert str(docspage.prose(None)) == ""


def test_groups_and_schemas_order() -> None:
    tags = ["live", "Dashboard (HTML)", "CombinedTasks", "Tasks", "authentication", "Postgresqls", "Darkrooms", "Namespaces"]
    assert sorted(tags, key=docspage.group_rank) == [
        "Darkrooms", "Tasks", "Postgresqls", "CombinedTasks", "Namespaces", "authentication", "live", "Dashboard (HTML)",
    ]  # fmt: skip
    names = ["Problem", "TaskList", "CombinedTask", "Postgresql", "Darkroom", "Task", "DarkroomStatus"]
    assert sorted(names, key=docspage.schema_rank) == [
        "Darkroom",
        "DarkroomStatus",
        "Task",
        "TaskList",
        "Postgresql",
        "CombinedTask",
        "Problem",
    ]


def test_types_link_to_schemas() -> None:
    assert str(docspage.type_of({"$ref": "#/components/schemas/Darkroom"})) == '<a href="#schema-Darkroom">Darkroom</a>'
    assert str(docspage.type_of({"type": "array", "items": {"type": "string"}})) == "array of string"
    assert str(docspage.type_of({"type": "string", "enum": ["All"]})) == "string: <code>All</code>"
    assert str(docspage.type_of({"type": "object", "additionalProperties": {"type": "string"}})) == "map of string"
