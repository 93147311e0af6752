"""A browser page as the tests watch it, and screenshots (helpers, no tests, no fixtures).

:class:`Watched` is a page plus what its console said: the conftest's ``pages``/``new_page`` fixtures make them and
fail the test at its end on any console error, page error, CSP violation or dialog it did not :meth:`~Watched.expect`.
:func:`page_width` measures the page's width once its stylesheets apply, :func:`assert_fits` checks that it needs no
sideways scrolling. :func:`shot` saves a screenshot to test-output/screenshots/ (``BROWSER_SCREENSHOTS``: another
directory; ``off``: none, as under .ci/run).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.clusters import ROOT

SCREENSHOTS_SETTING = os.environ.get("BROWSER_SCREENSHOTS") or str(ROOT / "test-output" / "screenshots")
SCREENSHOTS = None if SCREENSHOTS_SETTING == "off" else Path(SCREENSHOTS_SETTING)  # where shot() saves (None: nowhere)


@dataclass
class Watched:
    """A page plus what its console said."""

    page: Any
    problems: list[str]
    failed: list[str] = field(default_factory=list)  # "<status> <url>" of every answer >= 400, to tell which a console error is
    expected: list[re.Pattern[str]] = field(default_factory=list)  # problems this test causes on purpose (:meth:`expect`)

    def expect(self, pattern: str) -> None:
        """Problems matching ``pattern`` are the test's own doing (a refused request it makes): not failures."""
        self.expected.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(pattern.search(p) for pattern in self.expected)]


def page_width(page: Any) -> int:
    """How wide the page's content is, in CSS pixels (``scrollWidth``; wider than the window means sideways scrolling),
    measured once the page has loaded. Measured earlier, right after a navigation whose HTML has arrived but whose
    stylesheet has not, the layout is the unstyled one: a ``pre`` with a 91-character line made a 390 px page 720 px wide."""
    page.wait_for_load_state("load")
    return int(page.evaluate("document.documentElement.scrollWidth"))


def assert_fits(page: Any, label: str = "") -> None:
    """Nothing of the page is wider than the window (no sideways scrolling)."""
    wide, window = page_width(page), int(page.evaluate("window.innerWidth"))
    assert wide <= window, f"{label + ': ' if label else ''}the page is {wide}px wide in a {window}px window"


def shot(page: Any, name: str, *, full_page: bool = True) -> Path | None:
    """Save a screenshot (the whole page, or the viewport) as ``name``.png in :data:`SCREENSHOTS` (its path; None when
    they are off)."""
    if SCREENSHOTS is None:
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page, timeout=60_000)  # a long page (/docs) on a busy machine takes a while
    return path
