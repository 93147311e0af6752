"""The humanised durations of the dashboard (``cacheTime`` "1 year"): :func:`backend.dashboard.rendering.duration`.

Covers: seconds (int or digits) and duration texts (``720h``, ``1h30m``, ``30d``) shown in the largest unit that
fits, singular and plural, thousands separated; zero; anything that is not a duration shown as ``-``.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.dashboard.rendering import duration, seconds_of


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (31536000, "1 year"),
        (63072000, "2 years"),
        (2592000, "30 days"),
        (86400, "1 day"),
        (172805, "2 days"),
        (3600, "1 hour"),
        (90, "1 minute"),
        (59, "59 seconds"),
        (1, "1 second"),
        (0, "0 seconds"),
        ("31536000", "1 year"),
        ("720h", "30 days"),
        ("1h30m", "1 hour"),
        ("30d", "30 days"),
        ("45s", "45 seconds"),
        (10**12, "31,709 years"),
        (1.9, "1 second"),
    ],
)
def test_durations_in_words(value: Any, text: str) -> None:
    assert duration(value) == text


@pytest.mark.parametrize("value", [None, -1, True, "", "soon", "1y", "h", [], {"s": 1}])
def test_what_is_not_a_duration(value: Any) -> None:
    assert seconds_of(value) is None
    assert duration(value) == "-"
