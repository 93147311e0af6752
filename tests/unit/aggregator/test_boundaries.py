"""The aggregator's place in the architecture: it imports neither backend, the reconciler nor devcluster,
and every module of it opens with a docstring (architecture.md "Layout")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_aggregator_imports_only_cluster_and_kinds_of_ours() -> None:
    files = sorted((ROOT / "aggregator").rglob("*.py"))
    assert files
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        assert ast.get_docstring(tree), f"{path} has no module docstring"
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] not in {"backend", "darkroom_operator", "devcluster"}, (path, name)
