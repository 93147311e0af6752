"""The YAML editor's pure half (backend/dashboard/yamldiff.py).

Behaviours: a syntax error, a second document, an empty text or a text that is no mapping is a SyntaxProblem at its
1-based line and column (a key twice in a mapping too); a field path as kube names it (``spec.replicas``,
``.spec.subDomains[1]``, a keyed list item ``[port=80]``, a set item ``[="b"]``, a quoted map key) maps to the line
of that field, and a path the text lacks to its deepest part there; the diff lists added, removed and changed leaves
(lists item by item) and ignores status and the server's metadata bookkeeping; ``present`` and ``remove`` follow the
same paths.
"""

from __future__ import annotations

import pytest

from backend.dashboard import yamldiff

TEXT = """\
apiVersion: deployments.example.com/v1
kind: Darkroom
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  replicas: 2
  source:
    type: WebFolder
  subDomains:
  - a
  - b
  ports:
  - port: 80
    name: http
"""


def test_paths_map_to_the_lines_of_their_fields() -> None:
    root = yamldiff.parse(TEXT).root
    assert yamldiff.line_of(root, "spec.replicas") == 8
    assert yamldiff.line_of(root, ".spec.source.type") == 10
    assert yamldiff.line_of(root, "spec.subDomains[1]") == 13
    assert yamldiff.line_of(root, '.spec.subDomains[="b"]') == 13
    assert yamldiff.line_of(root, ".spec.ports[port=80]") == 15
    assert yamldiff.line_of(root, 'metadata.labels["app.kubernetes.io/name"]') == 6
    assert yamldiff.line_of(root, "metadata.labels[app.kubernetes.io/name]") == 6


def test_a_path_the_text_lacks_maps_to_its_deepest_part_there() -> None:
    root = yamldiff.parse(TEXT).root
    assert yamldiff.line_of(root, "spec.source.baseUrl") == 9  # required, left out: at its parent
    assert yamldiff.line_of(root, "spec.subDomains[7]") == 11
    assert yamldiff.line_of(root, "status.phase") == 1
    assert yamldiff.line_of(root, "") == 1


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("kind: Darkroom\nspec:\n  replicas: [1,\n", 4, 1, "expected"),
        ("a: 1\n---\nb: 2\n", 2, 1, "single document"),
        ("", 1, 1, "empty"),
        ("- a\n- b\n", 1, 1, "mapping"),
        ("spec:\n  x: 1\n   y: 2\n", 3, 5, "mapping values are not allowed"),
        ("spec:\n  replicas: 1\n  source: {}\n  replicas: 3\n", 4, 3, 'duplicate key "replicas"'),
    ],
)
def test_syntax_problems_name_their_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(yamldiff.SyntaxProblem) as raised:
        yamldiff.parse(text)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert words in raised.value.message


def test_the_diff_lists_leaves_and_ignores_status_and_bookkeeping() -> None:
    before = {
        "apiVersion": "v1",
        "kind": "Darkroom",
        "metadata": {"name": "web", "resourceVersion": "1", "generation": 1, "managedFields": [{"manager": "x"}], "labels": {"a": "1"}},
        "spec": {"replicas": 1, "subDomains": ["a", "b"], "version": "v2"},
        "status": {"phase": "Ready"},
    }
    after = {
        "apiVersion": "v1",
        "kind": "Darkroom",
        "metadata": {"name": "web", "resourceVersion": "9", "generation": 2, "creationTimestamp": "2030-01-01T00:00:00Z"},
        "spec": {"replicas": 3, "subDomains": ["a", "c", "d"], "cacheTime": 60, "version": "v2"},
        "status": {"phase": "Pending"},
    }
    found = {(c.path, c.op, c.old, c.new) for c in yamldiff.changes(before, after)}
    assert found == {
        ("spec.replicas", "changed", 1, 3),
        ("spec.subDomains[1]", "changed", "b", "c"),
        ("spec.subDomains[2]", "added", None, "d"),
        ("spec.cacheTime", "added", None, 60),
        ("metadata.labels.a", "removed", "1", None),
    }
    assert yamldiff.changes(before, before) == []


def test_present_and_remove_follow_the_same_paths() -> None:
    data = yamldiff.parse(TEXT).data
    assert yamldiff.present(data, "spec.subDomains[1]") and not yamldiff.present(data, "spec.subDomains[2]")
    assert yamldiff.present(data, 'metadata.labels["app.kubernetes.io/name"]')
    assert not yamldiff.present(data, "spec.replicas.deeper")
    assert yamldiff.remove(data, ".spec.source.type") and data["spec"]["source"] == {}
    assert not yamldiff.remove(data, ".spec.colour") and not yamldiff.remove(data, "")
    assert yamldiff.leaf_paths({"spec": {"a": [1, {"b": {}}]}}) == ["spec.a[0]", "spec.a[1].b"]
