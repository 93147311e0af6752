"""The architecture's rules that import-linter cannot state (docs/architecture.md "Layout").

Who may import whom is import-linter's job: the contracts in pyproject.toml ``[tool.importlinter]``, run by
``make lint`` (and so ``make test``). Behaviours here: every top-level package of ours, in any of the package roots
(the root, operator/, lib/, lib/shared, devcluster/src), is a root package of those contracts (a new package is
checked from its first commit) and ``make lint`` runs them, with every package root on its path (and on mypy's);
no importable top-level ``operator`` package shadows the standard library; every module opens with a docstring; no
test module imports from a conftest (a conftest is a pytest plugin that holds fixtures, which tests get by name: the
helpers tests import live in plain modules beside it).
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPERATOR_PACKAGE_DIR = ROOT / "operator"
# Where the packages of ours live: the root (backend, aggregator), operator/ (darkroom_operator), lib/ (cluster, kinds,
# envsettings), lib/shared (labelselectors, mergepatch: a project of their own) and devcluster/src (devcluster's project).
PACKAGE_ROOTS = (ROOT, OPERATOR_PACKAGE_DIR, ROOT / "lib", ROOT / "lib" / "shared", ROOT / "devcluster" / "src")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _python_files(*dirs: Path) -> list[Path]:
    return [p for d in dirs if d.exists() for p in d.rglob("*.py") if ".venv" not in p.parts]


def _package_dir(name: str) -> Path:
    (found,) = [root / name for root in PACKAGE_ROOTS if (root / name / "__init__.py").exists()]
    return found


def _our_packages() -> set[str]:
    """Top-level packages in the package roots (tests/ and bench/ hold no package of the product)."""
    return {p.parent.name for root in PACKAGE_ROOTS for p in root.glob("*/__init__.py")} - {"tests", "bench"}


def test_every_package_of_ours_is_under_the_import_contracts() -> None:
    roots = set(PYPROJECT["tool"]["importlinter"]["root_packages"])
    missing = _our_packages() - roots
    assert not missing, (
        f"add {sorted(missing)} to [tool.importlinter] root_packages in pyproject.toml (and a place in the contracts, if none names it)"
    )
    assert roots <= _our_packages(), f"root packages that do not exist: {sorted(roots - _our_packages())}"
    assert {"devcluster", "cluster", "kinds", "backend", "darkroom_operator", "aggregator"} <= roots


def test_make_lint_runs_the_import_contracts() -> None:
    lint = (ROOT / "Makefile").read_text().split("\nlint:")[1].split("\n\n")[0]
    assert "lint-imports" in lint, lint
    contracts = {c["id"] for c in PYPROJECT["tool"]["importlinter"]["contracts"]}
    expected = {"layers", "devcluster-alone", "no-product-imports-devcluster", "kinds-pure", "backend-layers", "backend-core-no-http"}
    assert expected <= contracts
    assert {"shared-leaves-alone", "operator-layers", "operator-kinds-independent"} <= contracts


def test_lint_and_typecheck_see_every_package_root() -> None:
    roots = {str(root.relative_to(ROOT)) for root in PACKAGE_ROOTS}
    (source_roots,) = [
        line.split(":=")[1].strip() for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("SOURCE_ROOTS")
    ]
    assert set(source_roots.split(":")) == roots, "the Makefile's SOURCE_ROOTS (lint-imports' PYTHONPATH)"
    assert set(PYPROJECT["tool"]["mypy"]["mypy_path"].split(":")) == roots - {"."}, "[tool.mypy] mypy_path"


def test_no_top_level_operator_package_shadows_the_standard_library() -> None:
    assert not (ROOT / "operator" / "__init__.py").exists()
    spec = importlib.util.find_spec("operator")
    assert spec is not None and spec.origin is not None
    assert "site-packages" not in spec.origin and str(ROOT) not in spec.origin


def test_every_module_has_a_docstring() -> None:
    packages = [_package_dir(name) for name in sorted(_our_packages())]
    assert len(packages) >= 5
    for path in _python_files(*packages, ROOT / "scripts", ROOT / "bench", ROOT / "devcluster" / "scripts", ROOT / "devcluster" / "bench"):
        tree = ast.parse(path.read_text(), filename=str(path))
        if path.name == "__init__.py" and not tree.body:
            continue
        assert ast.get_docstring(tree), f"{path} has no module docstring"


def _conftest_imports(path: Path) -> list[str]:
    """The import statements of ``path`` that name a conftest module (from x.conftest, from a package its conftest,
    or ``import x.conftest``), as ``line: source``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] + [f"{node.module or ''}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        if any(module.rsplit(".", 1)[-1] == "conftest" for module in modules):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_imports_from_a_conftest() -> None:
    """pytest loads a conftest as a plugin of its directory; importing one as a library breaks with another rootdir or
    import mode and hides where a fixture comes from. Fixtures stay in conftests (or the shared plugins) and reach tests
    by name; classes, functions and constants tests import live in a plain module beside the conftest."""
    files = _python_files(ROOT / "tests", ROOT / "bench", ROOT / "devcluster" / "tests")
    assert len(files) > 100
    offenders = {str(path.relative_to(ROOT)): found for path in files if (found := _conftest_imports(path))}
    assert not offenders, f"imports from a conftest (move what they import into a plain module beside it): {offenders}"
