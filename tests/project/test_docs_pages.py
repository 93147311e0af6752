"""The docs site's generated pages and its optional pages (scripts/docs_pages.py, scripts/mkdocs_hooks.py).

Behaviours covered:

- the committed ``docs/reference/api.md`` and ``docs/reference/configuration.md`` are what the code gives now (a change
  of an OpenAPI docstring or of a setting's declaration without ``make docs`` fails here, naming the page);
- the API reference comes from the app's own document, built with no cluster: every path and operation of it is on the
  page, and the login mode's security schemes;
- the configuration page names every declared variable (API, reconciler, aggregator) with its default, every
  aggregator flag and the reconciler's flags, and the shared token of earlier releases only as no longer supported;
- ``--check`` exits 1 naming a stale page and writes nothing;
- the nav gets the install and upgrade guides only when their files exist, and a Changelog page only when the
  top-level CHANGELOG.md does (its text as the page).
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from darkroom_operator.__main__ import FLAGS
from darkroom_operator.settings import OperatorSettings
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from aggregator.settings import AggregatorSettings
from backend.settings import SHARED_TOKEN_VARIABLES, ApiSettings
from envsettings import variables

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


docs_pages = _load("docs_pages")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    built: dict[str, Any] = docs_pages.openapi_document()
    return built


def test_the_committed_pages_are_current(document: dict[str, Any]) -> None:
    expected = {docs_pages.API_PAGE: docs_pages.api_page(document), docs_pages.CONFIGURATION_PAGE: docs_pages.configuration_page()}
    stale = {
        str(path.relative_to(ROOT)): "".join(list(difflib.unified_diff(path.read_text().splitlines(True), text.splitlines(True)))[:40])
        for path, text in expected.items()
        if path.read_text() != text
    }
    assert not stale, f"not current (run `make docs` and commit them): {stale}"


def test_the_api_reference_has_every_operation_of_the_apps_document(document: dict[str, Any]) -> None:
    page = docs_pages.api_page(document)
    operations = [(m, p) for p, item in document["paths"].items() for m in docs_pages.METHODS if m in item]
    assert len(operations) > 30 and ("post", "/darkrooms") in operations and ("get", "/watch") in operations
    assert [f"### `{m.upper()} {p}`" for m, p in operations if f"### `{m.upper()} {p}`" not in page] == []
    assert set(document["components"]["securitySchemes"]) == {"bearerAuth", "sessionCookie"}
    assert "`bearerAuth`" in page and "### Darkroom" in page


def test_the_configuration_page_names_every_declared_variable_with_its_default() -> None:
    page = docs_pages.configuration_page()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in page.splitlines() if line.startswith("| `")}
    for cls in (ApiSettings, OperatorSettings, AggregatorSettings):
        for f, declaration in variables(cls):
            row = next((r for names, r in rows.items() if f"`{declaration.name}`" in names.split(" or ")), None)
            assert row is not None, declaration.name
            assert all(f"`{name}`" in row for name in declaration.names)
            if isinstance(f.default, int | float) and not isinstance(f.default, bool):
                assert f"`{f.default}`" in row, (declaration.name, row)
    aggregator_flags = {"--" + f.name.replace("_", "-") for f, _ in variables(AggregatorSettings)}
    reconciler_flags = {"--" + name.replace("_", "-") for name in FLAGS}
    assert all(f"`{flag}`" in page for flag in aggregator_flags | reconciler_flags)
    for gone in SHARED_TOKEN_VARIABLES:
        assert [line for line in page.splitlines() if f"`{gone}`" in line] == [
            next(line for line in page.splitlines() if "no longer supported" in line)
        ]


def test_check_names_a_stale_page_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration\n\nan old table\n")
    monkeypatch.setattr(docs_pages, "ROOT", tmp_path)
    monkeypatch.setattr(docs_pages, "pages", lambda: {stale: "# Configuration\n\nthe new table\n"})
    assert docs_pages.main(["--check"]) == 1
    assert "not current: configuration.md" in capsys.readouterr().err
    assert stale.read_text() == "# Configuration\n\nan old table\n"
    assert docs_pages.main([]) == 0
    assert stale.read_text() == "# Configuration\n\nthe new table\n"


def _config(docs: Path) -> MkDocsConfig:
    """A site's config as mkdocs builds it, with our hooks (run through its plugin events)."""
    config = MkDocsConfig()
    nav = [{"Home": "index.md"}, {"Operations": [{"Deploy": "operations/deploy.md"}]}]
    config.load_dict({"site_name": "test", "docs_dir": str(docs), "nav": nav, "hooks": [str(ROOT / "scripts" / "mkdocs_hooks.py")]})
    errors, warnings = config.validate()
    assert errors == [] and warnings == []
    return config


def test_optional_pages_join_the_nav_only_when_their_files_exist(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "operations").mkdir(parents=True)
    config = _config(docs)
    config = config.plugins.on_config(config)
    assert config.nav == [{"Home": "index.md"}, {"Operations": [{"Deploy": "operations/deploy.md"}]}]
    assert config.plugins.on_files(Files([]), config=config).get_file_from_path("changelog.md") is None

    (docs / "operations" / "upgrading.md").write_text("# Upgrading\n")
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## 0.2.0\n")
    config = _config(docs)
    config = config.plugins.on_config(config)
    assert config.nav == [
        {"Home": "index.md"},
        {"Operations": [{"Deploy": "operations/deploy.md"}, {"Upgrading": "operations/upgrading.md"}]},
        {"Changelog": "changelog.md"},
    ]
    changelog = config.plugins.on_files(Files([]), config=config).get_file_from_path("changelog.md")
    assert changelog is not None and changelog.content_string == "# Changelog\n\n## 0.2.0\n"
