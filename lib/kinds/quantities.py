"""Kubernetes resource quantities in the API server's canonical form ("1000m" → "1", "1024Mi" → "1Gi").

Called by the reconciler for container requests/limits and by the API (a storage size that must not
shrink: :func:`quantity_value`). Pure, so it lives in the leaf package :mod:`kinds`. The API server stores
every quantity canonicalised; if we applied ``"1000m"`` the live object would read ``"1"`` and the
"is the live object up to date?" check (:mod:`darkroom_operator.runtime.comparing`) would see a difference
on every reconcile. Writing the canonical form ourselves keeps a converged resync write-free.

This follows ``k8s.io/apimachinery/pkg/api/resource`` (``Quantity.CanonicalizeBytes``): the format
of the input (binary suffix, decimal suffix, or exponent) is kept; the largest suffix that leaves an
integer mantissa is chosen; binary amounts below 1024 or with a fractional byte count fall back to
decimal suffixes. Values are exact (fractions), not floats.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_QUANTITY = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def _parse(text: str) -> tuple[Fraction, str]:
    match = _QUANTITY.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes quantity (e.g. 100m, 1, 128Mi, 1Gi)")
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    value = Fraction(number) * (-1 if sign == "-" else 1)
    if suffix in _BINARY:
        return value * Fraction(1024) ** _BINARY[suffix], suffix
    if suffix[:1] in ("e", "E"):
        return value * Fraction(10) ** int(suffix[1:]), suffix
    return value * Fraction(10) ** _DECIMAL[suffix], suffix


def quantity_value(text: str) -> Fraction:
    """The exact amount quantity ``text`` stands for ("1Gi" → 1073741824); ``ValueError`` when it is not a quantity."""
    return _parse(text)[0]


@lru_cache(maxsize=1024)
def canonical_quantity(text: str) -> str:
    """The canonical form of quantity ``text``; ``ValueError`` when it is not a quantity.

    Memoised (a pure function of a string; the reconciler asks for the same few settings' quantities on every
    reconcile, and exact fractions are slow): errors are not cached, so a bad value raises every time."""
    value, suffix = _parse(text)
    if suffix in _BINARY:
        if -1024 < value < 1024 or value.denominator != 1:
            return _decimal(value, exponent_form=False)
        return _binary(int(value))
    return _decimal(value, exponent_form=suffix[:1] in ("e", "E"))


def _binary(amount: int) -> str:
    power = 0
    while power < 6 and amount != 0 and amount % 1024 == 0:
        amount //= 1024
        power += 1
    suffix = next((s for s, p in _BINARY.items() if p == power), "")
    return f"{amount}{suffix}"


def _decimal(value: Fraction, *, exponent_form: bool) -> str:
    if value == 0:
        return "0"
    # Nano is the smallest unit the API server keeps; it rounds anything finer up (away from zero).
    nanos = value * 10**9
    if nanos.denominator != 1:
        whole = -(-abs(nanos.numerator) // nanos.denominator)
        nanos = Fraction(whole if value > 0 else -whole)
    mantissa, exponent = int(nanos), -9
    while exponent < 18 and mantissa % 1000 == 0:
        mantissa //= 1000
        exponent += 3
    if exponent_form:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"
