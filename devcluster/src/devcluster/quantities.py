"""``resource.Quantity`` as kube-apiserver decodes and re-encodes it (``k8s.io/apimachinery/pkg/api/resource``).

A quantity in a request (``"500m"``, ``"1.5Gi"``, or a bare JSON number) is parsed with
``ParseQuantity``'s rules and errors, rounded up to nano precision, and written back in canonical
form (``"0.5"`` → ``"500m"``, ``"1024Mi"`` → ``"1Gi"``); like Go, an input that is already
canonical-looking keeps its spelling (``"+1"``, ``"1E3"``). :func:`round_up` is the milli rounding
core/v1 applies to every ``ResourceList`` value (``Convert_v1_ResourceList_To_core_ResourceList``).
Called by ``decoding.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NUMERIC = "unable to parse quantity's numeric part"
SUFFIX = "unable to parse quantity's suffix"

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_NAMES = {v: k for k, v in _DECIMAL.items()}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_NAMES = {v: k for k, v in _BINARY.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_INT64_MAX = (1 << 63) - 1
_NANO = -9
_MAX_EXPONENT = 100_000


class QuantityError(ValueError):
    """``ParseQuantity`` failed; the message is kube's (:data:`FORMAT_WRONG`, :data:`NUMERIC`, :data:`SUFFIX`)."""


@dataclass(frozen=True)
class Quantity:
    """``unscaled * 10**scale`` in ``fmt``; ``text`` is the input when Go keeps it as the serialization."""

    unscaled: int
    scale: int
    fmt: str
    text: str = ""
    small: bool = True  # held as Go's int64Amount (else inf.Dec): decides whether round_up keeps ``text``


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: (positive, value, numerator, denominator, suffix)."""
    positive, pos, end = True, 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] != "-"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            exponent = int(suffix[1:])  # _split let only [+-]?[0-9]* follow the letters
        except ValueError:
            raise QuantityError(SUFFIX) from None
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(NUMERIC)  # Go copes (an int32 scale); Python's exact arithmetic would not
        return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(SUFFIX)


def _round_away(unscaled: int, scale: int, target: int) -> int:
    """``unscaled * 10**scale`` at ``10**target`` (target > scale), rounded away from zero."""
    factor: int = 10 ** (target - scale)
    magnitude = -(-abs(unscaled) // factor)
    return magnitude if unscaled >= 0 else -magnitude


def parse(text: str) -> Quantity:
    """``ParseQuantity(text)`` (the caller trims spaces, as ``UnmarshalJSON`` does)."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, "0")
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if fmt == BINARY_SI:
        mantissa = 1 << exponent if exponent >= 0 and not denom else 1
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if exponent >= 0 and not denom else -1
        scale = 0
    else:
        mantissa, precision, scale = 1, 18 - (len(num) + len(denom)), exponent
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _INT64_MAX:
                result = result if positive else -result
                keep = (
                    (exponent % 10 == 0 and int(shifted) & 7 != 0)
                    if fmt == BINARY_SI
                    else (scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
                )
                return Quantity(result, scale, fmt, text if keep else "")
    # the arbitrary-precision path (inf.Dec)
    digits = value.lstrip("+-")
    whole, _, fraction = digits.partition(".")
    if not (whole + fraction).isdigit() or not (whole + fraction).isascii():
        raise QuantityError(NUMERIC)
    unscaled, scale = int(whole + fraction), -len(fraction)
    if base == 10:
        scale += exponent
    else:
        unscaled <<= exponent
    if unscaled and scale < _NANO:
        unscaled, scale = _round_away(unscaled, scale, _NANO), _NANO
    if fmt == BINARY_SI and _compare(unscaled, scale, _INT64_MAX, 0) > 0:
        unscaled, scale = _INT64_MAX, 0
    if fmt == BINARY_SI and unscaled > 0 and _compare(unscaled, scale, 1, 0) < 0:
        fmt = DECIMAL_SI
    return Quantity(unscaled if positive else -unscaled, scale, fmt, small=False)


def _compare(a: int, a_scale: int, b: int, b_scale: int) -> int:
    low = min(a_scale, b_scale)
    x: int = a * 10 ** (a_scale - low)
    y: int = b * 10 ** (b_scale - low)
    return (x > y) - (x < y)


def round_up(q: Quantity, scale: int = -3) -> Quantity:
    """``Quantity.RoundUp(scale)``: at most ``scale`` precision, rounded away from zero."""
    if q.small and q.scale >= scale:
        return q
    if q.scale >= scale:
        return replace(q, text="")
    return replace(q, unscaled=_round_away(q.unscaled, q.scale, scale), scale=scale, text="")


def _strip(value: int, base: int) -> tuple[int, int]:
    times, magnitude = 0, abs(value)
    while magnitude >= base and magnitude % base == 0:
        magnitude //= base
        times += 1
    return (magnitude if value >= 0 else -magnitude), times


def canonical(q: Quantity) -> str:
    """The quantity's JSON string (``MarshalJSON``: the kept input, else ``CanonicalizeBytes``)."""
    if q.text:
        return q.text
    if q.unscaled == 0:
        return "0"
    fmt = q.fmt
    if fmt == BINARY_SI:
        if _compare(q.unscaled, q.scale, -1024, 0) > 0 and _compare(q.unscaled, q.scale, 1024, 0) < 0:
            fmt = DECIMAL_SI
        elif q.scale < 0 and q.unscaled % 10 ** (-q.scale):
            fmt = DECIMAL_SI  # not an integer: BinarySI would round
        else:
            integer = q.unscaled * 10**q.scale if q.scale >= 0 else q.unscaled // 10 ** (-q.scale)
            amount, times = _strip(integer, 1024)
            return f"{amount}{_BINARY_NAMES.get(times * 10, '')}"
    amount, times = _strip(q.unscaled, 10)
    exponent = q.scale + times
    while exponent % 3:
        amount *= 10
        exponent -= 1
    if fmt == DECIMAL_SI:
        return f"{amount}{_DECIMAL_NAMES.get(exponent, '')}"
    return f"{amount}e{exponent}" if exponent else str(amount)
