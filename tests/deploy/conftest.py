"""Fixtures of the deploy tests: the rendered kustomizations, once per session.

``rendered`` maps overlay name (``base``, ``dev``, ``production``) to the objects ``kubectl kustomize``
renders; helpers live in :mod:`tests.deploy.manifests`.
"""

from __future__ import annotations

from typing import Any

import pytest

from .manifests import OVERLAYS, render


@pytest.fixture(scope="session")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {overlay: render(overlay) for overlay in OVERLAYS}
