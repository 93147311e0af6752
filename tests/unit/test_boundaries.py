"""The architecture's dependency rules, checked on the source (architecture.md "Layout").

Behaviours: devcluster imports no other package of ours; kinds/ is a leaf (nothing of ours, no Flask,
no client library, no I/O modules); backend and the reconciler never import
each other; only entry points (scripts/) and tests import devcluster; no importable top-level
``operator`` package shadows the standard library; every module opens with a docstring.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = {"devcluster", "cluster", "kinds", "backend", "darkroom_operator"}
OPERATOR_PACKAGE_DIR = ROOT / "operator"


def _python_files(*dirs: Path) -> list[Path]:
    return [p for d in dirs if d.exists() for p in d.rglob("*.py") if ".venv" not in p.parts]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_devcluster_imports_nothing_of_ours() -> None:
    for path in _python_files(ROOT / "devcluster"):
        assert not (_imported_roots(path) & (OURS - {"devcluster"})), path


def test_kinds_is_a_leaf() -> None:
    allowed = {"__future__", "collections", "dataclasses", "fractions", "re", "typing", "kinds"}
    files = _python_files(ROOT / "kinds")
    assert files
    for path in files:
        assert _imported_roots(path) <= allowed, (path, _imported_roots(path) - allowed)


def test_backend_and_operator_do_not_import_each_other() -> None:
    for path in _python_files(ROOT / "backend"):
        assert "darkroom_operator" not in _imported_roots(path), path
    for path in _python_files(OPERATOR_PACKAGE_DIR):
        assert "backend" not in _imported_roots(path), path


def test_only_entry_points_and_tests_import_devcluster() -> None:
    for package in ("cluster", "backend"):
        for path in _python_files(ROOT / package):
            assert "devcluster" not in _imported_roots(path) or path.name in ("__main__.py", "embedded.py"), path
    for path in _python_files(OPERATOR_PACKAGE_DIR):
        assert "devcluster" not in _imported_roots(path) or path.name == "__main__.py", path


def test_no_top_level_operator_package_shadows_the_standard_library() -> None:
    assert not (ROOT / "operator" / "__init__.py").exists()
    spec = importlib.util.find_spec("operator")
    assert spec is not None and spec.origin is not None
    assert "site-packages" not in spec.origin and str(ROOT) not in spec.origin


def test_every_module_has_a_docstring() -> None:
    for path in _python_files(
        ROOT / "devcluster", ROOT / "cluster", ROOT / "kinds", ROOT / "backend", OPERATOR_PACKAGE_DIR, ROOT / "scripts", ROOT / "bench"
    ):
        tree = ast.parse(path.read_text(), filename=str(path))
        if path.name == "__init__.py" and not tree.body:
            continue
        assert ast.get_docstring(tree), f"{path} has no module docstring"
