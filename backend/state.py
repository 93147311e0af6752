"""Per-app state handed to views: settings and cluster access, stored in ``app.extensions``.

:func:`backend.app.create_app` calls :func:`install`; views call :func:`current` instead of
reaching for globals, so several apps (tests) can live in one process.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, current_app

from backend.access import ClusterAccess
from backend.settings import ApiSettings

EXTENSION = "darkroom_control_panel"


@dataclass(frozen=True)
class AppState:
    settings: ApiSettings
    access: ClusterAccess


def install(app: Flask, state: AppState) -> None:
    app.extensions[EXTENSION] = state


def current() -> AppState:
    state: AppState = current_app.extensions[EXTENSION]
    return state
