"""Clients of the dashboard's HTML tests (helpers, no tests, no fixtures).

:class:`Client` is a Flask test client holding the CSRF cookie and token of a page it loaded (the conftest's ``http``
is one on ``app``; :data:`TOKEN_META` finds the token in a page). :class:`Deleter` is what the conftest's
``deleter`` fixture yields: an app on the real control plane whose person may delete Darkrooms in one namespace only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

TOKEN_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


class Client:
    """A test client with the CSRF cookie and token of a page it loaded."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        page = client.get("/ui/tasks/new")
        match = TOKEN_META.search(page.get_data(as_text=True))
        assert match, "no csrf-token meta tag"
        self.csrf = match.group(1)

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, **kwargs)

    def post(self, path: str, data: dict[str, Any] | None = None, *, token: bool = True, **kwargs: Any) -> Any:
        form = dict(data or {})
        if token:
            form["csrf_token"] = self.csrf
        return self.client.post(path, data=form, **kwargs)


@dataclass
class Deleter:
    """An app on the real control plane whose person (alice, signed in with her token: the pages act as her) may read
    every kind the pages show everywhere but Pods, delete Darkrooms in ``allowed`` only, and write nothing else."""

    app: Flask
    admin: Any
    allowed: str
    refused: str
    token: str
