"""Fixtures of the JSON API's tests: ``http``, a Flask test client of the session ``app`` (tests/conftest.py: the one
cluster access and app factory, ``core`` and ``custom``). Tests work in their own ``namespace``. The payloads tests post
(``webfolder``, ``s3``, ``task``) are in payloads.py.
"""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient


@pytest.fixture
def http(app: Flask) -> FlaskClient:
    return app.test_client()
