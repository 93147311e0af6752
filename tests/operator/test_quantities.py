"""Canonical Kubernetes quantities (darkroom_operator.quantities), as the API server stores them.

Behaviours: decimal and binary suffixes and exponents are canonicalised like apimachinery's
Quantity (largest suffix with an integer mantissa, binary below 1024 or fractional falls back to
decimal, nano precision rounded up); malformed input is rejected with a message.
"""

from __future__ import annotations

import pytest

from kinds.quantities import canonical_quantity


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("100m", "100m"),
        ("1", "1"),
        ("1000m", "1"),
        ("0.5", "500m"),
        ("0.25", "250m"),
        ("1500m", "1500m"),
        ("2k", "2k"),
        ("2000", "2k"),
        ("1.5", "1500m"),
        ("0", "0"),
        ("128Mi", "128Mi"),
        ("1024Mi", "1Gi"),
        ("0.5Gi", "512Mi"),
        ("1.5Gi", "1536Mi"),
        ("1Ki", "1Ki"),
        ("0.5Ki", "512"),
        ("512Mi", "512Mi"),
        ("1e3", "1e3"),
        ("1000e3", "1e6"),
        ("1E3", "1e3"),
        ("1n", "1n"),
        ("0.1n", "1n"),
        ("1000000u", "1"),
        ("-100m", "-100m"),
        (" 2 ", "2"),
    ],
)
def test_canonical(text: str, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "10 Mi", "1Xi", "m"])
def test_rejects_non_quantities(text: str) -> None:
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        canonical_quantity(text)
