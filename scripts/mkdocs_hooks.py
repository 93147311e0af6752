"""mkdocs hooks of the docs site (``mkdocs.yml`` ``hooks:``): pages that join the site only when their files exist.

- ``docs/operations/install.md`` and ``docs/operations/upgrading.md`` go into the Operations section of the nav, after
  Deploy, when they are there;
- the top-level ``CHANGELOG.md`` becomes the page ``changelog.md`` (last in the nav), its text included as it is
  except its links into ``docs/`` (right on the repository's page), which point at the site's pages instead.

So the nav never names a missing page (``mkdocs build --strict`` would fail) and a new guide needs no edit here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

CHANGELOG = "CHANGELOG.md"  # beside the docs folder: the repository's root
OPERATIONS_GUIDES = (("Install", "operations/install.md"), ("Upgrading", "operations/upgrading.md"))


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Add the optional pages that exist to the nav."""
    nav: list[Any] = config.nav or []
    docs = Path(config.docs_dir)
    for section in nav:
        if isinstance(section, dict) and "Operations" in section:
            present = [{title: path} for title, path in OPERATIONS_GUIDES if (docs / path).is_file()]
            section["Operations"] = [*section["Operations"], *present]
    if _changelog(config).is_file():
        nav.append({"Changelog": "changelog.md"})
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """The changelog page, from the top-level CHANGELOG.md."""
    changelog = _changelog(config)
    if changelog.is_file():
        text = changelog.read_text().replace("](docs/", "](")
        files.append(File.generated(config, "changelog.md", content=text))
    return files


def _changelog(config: MkDocsConfig) -> Path:
    return Path(config.docs_dir).parent / CHANGELOG
