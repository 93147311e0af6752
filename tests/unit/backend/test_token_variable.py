"""The API token's environment variable: one name, ``DARKROOM_API_TOKEN``, everywhere.

Behaviours: ``DARKROOM_API_TOKEN`` sets ``api_token`` without a warning; the old name
``DARKROOM_API_API_TOKEN`` still sets it, with a FutureWarning (shown to whoever runs the product, unlike
a DeprecationWarning) naming the new name; when both are set the new one wins and the warning says the
old one is ignored; the refusal to serve off loopback without a token names the new variable; the
deploy manifests, the compose file, the templates and the docs use only the new name (the docs name
the old one only to call it deprecated).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from backend.settings import ApiSettings, UnsafeSettings

ROOT = Path(__file__).resolve().parents[3]


def test_the_new_name_sets_the_token_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ApiSettings.from_environ({"DARKROOM_API_TOKEN": "t0ken"}).api_token == "t0ken"
        assert ApiSettings.from_environ({}).api_token is None


def test_the_old_name_still_works_with_a_future_warning() -> None:
    with pytest.warns(FutureWarning, match=r"^DARKROOM_API_API_TOKEN is deprecated: rename it DARKROOM_API_TOKEN"):
        settings = ApiSettings.from_environ({"DARKROOM_API_API_TOKEN": "old"})
    assert settings.api_token == "old"
    with pytest.warns(FutureWarning, match=r"DARKROOM_API_API_TOKEN is deprecated and ignored because DARKROOM_API_TOKEN is set"):
        assert ApiSettings.from_environ({"DARKROOM_API_API_TOKEN": "old", "DARKROOM_API_TOKEN": "new"}).api_token == "new"


def test_the_refusal_names_the_new_variable() -> None:
    with pytest.raises(UnsafeSettings, match=r"\(set DARKROOM_API_TOKEN\)$"):
        ApiSettings(host="0.0.0.0").check()


def test_nothing_we_ship_or_document_uses_the_old_name() -> None:
    shipped = ["README.md", "deploy/README.md", "docker-compose.yml", *map(str, (ROOT / "deploy").rglob("*.yaml"))]
    shipped += [str(p) for p in (ROOT / "frontend" / "templates").rglob("*.html")]
    uses = [
        f"{path}: {line}"
        for path in shipped
        for line in (ROOT / path).read_text().splitlines()
        if re.search(r"DARKROOM_API_API_TOKEN", line) and "deprecated" not in line
    ]
    assert uses == []
    assert "DARKROOM_API_TOKEN" in (ROOT / "deploy" / "base" / "api.yaml").read_text()
