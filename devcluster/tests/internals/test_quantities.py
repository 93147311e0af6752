"""resource.Quantity parsing and canonical form (devcluster.quantities).

Behaviours covered (every expected value was answered by kube-apiserver v1.37.2 for the same input):
- canonical serialisation: decimal SI (``0.5`` → ``500m``, ``1000`` → ``1k``, ``1.5k`` → ``1500``),
  binary SI (``1024Mi`` → ``1Gi``, ``1.5Ki`` → ``1536``, ``0.5Mi`` → ``512Ki``), decimal exponents
  (``12e-1`` → ``1200e-3``), nano rounding up (``0.1n`` → ``1n``), the int64 cap of binary SI, an
  exponent past ``E`` losing its suffix (``1000E`` → ``1``);
- inputs Go keeps verbatim because they look canonical (``+1``, ``01``, ``1E3``, ``001.500``, ``1.``);
- ResourceList milli rounding (``round_up``): ``1n`` → ``1m``, ``1.23456789e3`` → ``1234568e-3``;
- ParseQuantity's three errors (format, suffix) for malformed input.
"""

from __future__ import annotations

import pytest

from devcluster.quantities import FORMAT_WRONG, SUFFIX, QuantityError, canonical, parse, round_up

CANONICAL = {
    "1": "1",
    "0.5": "500m",
    "500m": "500m",
    "1000m": "1",
    "1.5Gi": "1536Mi",
    "1536Mi": "1536Mi",
    "1024Mi": "1Gi",
    "2048Ki": "2Mi",
    "1e3": "1e3",
    "1E3": "1E3",
    "+1": "+1",
    "01": "01",
    "0": "0",
    "0.0": "0",
    "-0": "0",
    "1.0": "1",
    "100": "100",
    "1200": "1200",
    "12000": "12k",
    "1k": "1k",
    "1000": "1k",
    "1Ki": "1Ki",
    "1.5Ki": "1536",
    "0.5Ki": "512",
    "512Ki": "512Ki",
    "8Ki": "8Ki",
    "1023Ki": "1023Ki",
    "1G": "1G",
    "1000M": "1G",
    "10e3": "10e3",
    "1.": "1.",
    "1000000000000000000000": "1",
    "1000E": "1",
    "9223372036854775807Ki": "9223372036854775807",
    "-1.5Gi": "-1536Mi",
}

MILLI = {
    "0.5": "500m",
    "0.1": "100m",
    "1n": "1m",
    "0.1n": "1m",
    ".5": "500m",
    "5e-3": "5e-3",
    "001.500": "001.500",
    "0.001Ki": "1024m",
    "1e-12": "1e-3",
    "1.234567891234m": "2m",
    "1.5": "1500m",
    "0.000000001": "1m",
    "1.5k": "1500",
    "0.5Mi": "512Ki",
    "1.23456789e3": "1234568e-3",
    "12e-1": "1200e-3",
    "1.000": "1",
    "2.50": "2500m",
    "+0.5": "500m",
    "0.0001": "1m",
    "1.5e3": "1500",
    "1.5E3": "1500",
    "7.5u": "1m",
    "1.5e-3": "2e-3",
    "1e-7": "1e-3",
}


@pytest.mark.parametrize(("text", "expected"), sorted(CANONICAL.items()))
def test_canonical(text: str, expected: str) -> None:
    assert canonical(parse(text)) == expected


@pytest.mark.parametrize(("text", "expected"), sorted(MILLI.items()))
def test_resource_list_rounds_up_to_milli(text: str, expected: str) -> None:
    assert canonical(round_up(parse(text))) == expected


@pytest.mark.parametrize(
    ("text", "message"), [("1.2.3", FORMAT_WRONG), ("1Qi", FORMAT_WRONG), ("true", FORMAT_WRONG), ("", FORMAT_WRONG), ("1e", SUFFIX)]
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as raised:
        parse(text)
    assert str(raised.value) == message
