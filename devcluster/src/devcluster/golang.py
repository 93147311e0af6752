"""Go standard-library behaviours whose exact output reaches API clients.

kube-apiserver's decoding errors and normalised values come straight from Go's ``time`` and
``encoding/base64``; devcluster reproduces the parts its clients see:

* :func:`parse_time` - ``time.Parse`` with the RFC 3339 layouts of ``metav1.Time`` and
  ``metav1.MicroTime``, including ``time.ParseError``'s messages; :func:`format_time` is their
  ``MarshalJSON`` (UTC, whole seconds / microseconds); :func:`normalize_time` both.
* :func:`b64decode` - ``base64.StdEncoding.Decode``: ``\\r``/``\\n`` are skipped (so line-wrapped
  Secret data is accepted), errors are ``illegal base64 data at input byte N``.

Formatting values as ``fmt`` / ``strconv`` print them is ``gofmt.py``.

Pure functions; used by ``decoding.py``.
"""

from __future__ import annotations

import binascii
import calendar
import datetime
import re

from devcluster.gofmt import time_quote

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


class GoError(ValueError):
    """A Go error; ``str()`` is its ``Error()`` text."""


# --------------------------------------------------------------------------------------------
# time


class _Bad(Exception):
    pass


def _getnum(value: str, fixed: bool) -> tuple[int, str]:
    if not value[:1].isdigit() or not value[:1].isascii():
        raise _Bad
    if not value[1:2].isdigit() or not value[1:2].isascii():
        if fixed:
            raise _Bad
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _atoi(text: str) -> int:
    sign = -1 if text[:1] == "-" else 1
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isdigit() or not digits.isascii():
        raise _Bad
    return sign * int(digits)


def _nanoseconds(value: str, nbytes: int) -> tuple[int, str]:
    """(nanoseconds, range error) of ``value[:nbytes]`` = ``.ddd``."""
    if value[:1] not in (".", ","):
        raise _Bad
    if nbytes > 10:
        value, nbytes = value[:10], 10
    ns = _atoi(value[1:nbytes])
    if ns < 0:
        return 0, "fractional second"
    return ns * 10 ** (10 - nbytes), ""


# (literal prefix, element) pairs of the two layouts, as time's nextStdChunk splits them.
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", ".000000"), ("", "Z07:00")),
}


def _error(layout: str, value: str, elem_value: str, elem_layout: str, message: str = "") -> GoError:
    if message:
        return GoError(f"parsing time {time_quote(value)}{message}")
    return GoError(
        f"parsing time {time_quote(value)} as {time_quote(layout)}: cannot parse {time_quote(elem_value)} as {time_quote(elem_layout)}"
    )


def parse_time(value: str, layout: str = RFC3339) -> datetime.datetime:
    """``time.Parse(layout, value)`` for :data:`RFC3339` / :data:`RFC3339_MICRO`, as an aware UTC datetime."""
    chunks = _CHUNKS[layout]
    fields = {"year": 0, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "ns": 0, "offset": 0}
    rest = value
    for index, (prefix, elem) in enumerate(chunks):
        if not rest.startswith(prefix):
            # skip() consumes the matching part of the prefix before it fails
            matched = 0
            while matched < len(prefix) and rest[matched : matched + 1] == prefix[matched]:
                matched += 1
            raise _error(layout, value, rest[matched:], prefix[matched:])
        rest = rest[len(prefix) :]
        hold = rest
        try:
            rest, range_error = _element(elem, rest, fields, chunks[index + 1][1] if index + 1 < len(chunks) else "")
        except _Bad:
            raise _error(layout, value, hold, elem) from None
        if range_error:
            raise _error(layout, value, "", "", f": {range_error} out of range")
    if rest:
        raise _error(layout, value, "", "", f": extra text: {time_quote(rest)}")
    year, month, day = fields["year"], fields["month"], fields["day"]
    if day < 1 or day > _days_in(month, year):
        raise _error(layout, value, "", "", ": day out of range")
    try:
        moment = datetime.datetime(year, month, day, fields["hour"], fields["minute"], fields["second"], tzinfo=datetime.UTC)
        moment -= datetime.timedelta(seconds=fields["offset"])
    except (ValueError, OverflowError) as e:  # years Python's datetime cannot hold (0, > 9999)
        raise GoError(f"parsing time {time_quote(value)}: year outside of range [1,9999]") from e
    return moment + datetime.timedelta(microseconds=fields["ns"] // 1000)


def _days_in(month: int, year: int) -> int:
    if month == 2 and calendar.isleap(year):
        return 29
    return (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]


def _element(elem: str, rest: str, fields: dict[str, int], next_elem: str) -> tuple[str, str]:
    """Parse one layout element off ``rest``; returns (rest, range error)."""
    if elem == "2006":
        if len(rest) < 4 or not rest[:1].isdigit():
            raise _Bad
        fields["year"] = _atoi(rest[:4])
        return rest[4:], ""
    if elem == "01":
        fields["month"], rest = _getnum(rest, True)
        return rest, "month" if not 1 <= fields["month"] <= 12 else ""
    if elem == "02":
        fields["day"], rest = _getnum(rest, True)
        return rest, ""
    if elem == "15":
        fields["hour"], rest = _getnum(rest, False)
        return rest, "hour" if fields["hour"] >= 24 else ""
    if elem == "04":
        fields["minute"], rest = _getnum(rest, True)
        return rest, "minute" if fields["minute"] >= 60 else ""
    if elem == "05":
        fields["second"], rest = _getnum(rest, True)
        if fields["second"] >= 60:
            return rest, "second"
        if len(rest) >= 2 and rest[0] in ".," and rest[1:2].isdigit() and next_elem != ".000000":
            n = 2
            while n < len(rest) and rest[n].isdigit() and rest[n].isascii():
                n += 1
            fields["ns"], range_error = _nanoseconds(rest, n)
            return rest[n:], range_error
        return rest, ""
    if elem == ".000000":
        if len(rest) < 7:
            raise _Bad
        fields["ns"], range_error = _nanoseconds(rest, 7)
        return rest[7:], range_error
    # Z07:00
    if rest[:1] == "Z":
        return rest[1:], ""
    if len(rest) < 6 or rest[3] != ":":
        raise _Bad
    sign, hour, minute, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
    hours, _ = _getnum(hour, True)
    minutes, _ = _getnum(minute, True)
    if sign not in "+-":
        raise _Bad
    range_error = "time zone offset hour" if hours > 24 else ("time zone offset minute" if minutes > 60 else "")
    fields["offset"] = (hours * 60 + minutes) * 60 * (-1 if sign == "-" else 1)
    return rest, range_error


_CANONICAL_TIME = {
    RFC3339: re.compile(r"\d{4}-(0[1-9]|1[0-2])-(\d\d)T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ"),
    RFC3339_MICRO: re.compile(r"\d{4}-(0[1-9]|1[0-2])-(\d\d)T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{6}Z"),
}


def normalize_time(value: str, layout: str = RFC3339) -> str:
    """``format_time(parse_time(value, layout), layout)``, with a fast path for values already in that form."""
    match = _CANONICAL_TIME[layout].fullmatch(value)
    if match and 1 <= int(match.group(2)) <= _days_in(int(match.group(1)), int(value[:4])) and value[:4] != "0000":
        return value
    return format_time(parse_time(value, layout), layout)


def format_time(moment: datetime.datetime, layout: str = RFC3339) -> str:
    """``metav1.Time`` / ``metav1.MicroTime`` ``MarshalJSON`` of ``moment`` (in UTC)."""
    utc = moment.astimezone(datetime.UTC)
    if layout == RFC3339_MICRO:
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond:06d}Z"
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# base64

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_CANONICAL_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def b64decode(text: str) -> bytes:
    """``base64.StdEncoding.Decode``: padding required, ``\\r``/``\\n`` ignored anywhere."""
    clean = text.replace("\n", "").replace("\r", "") if ("\n" in text or "\r" in text) else text
    if len(clean) % 4 == 0 and _CANONICAL_B64.fullmatch(clean):
        try:
            return binascii.a2b_base64(clean)
        except binascii.Error:
            pass
    raise GoError(f"illegal base64 data at input byte {_b64_error_offset(text.encode('utf-8', 'surrogatepass'))}")


def _b64_error_offset(src: bytes) -> int:
    """Where Go's decoder (``decodeQuantum``) stops on ``src``."""
    si = 0
    while si < len(src):
        j = 0
        while j < 4:
            if si == len(src):
                if j == 0:
                    return -1
                return si - j
            char = src[si]
            si += 1
            if chr(char) in _ALPHABET:
                j += 1
                continue
            if char in (0x0A, 0x0D):
                continue
            if char != ord("="):
                return si - 1
            if j in (0, 1):
                return si - 1
            if j == 2:
                while si < len(src) and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == len(src):
                    return len(src)
                if src[si] != ord("="):
                    return si - 1
                si += 1
            while si < len(src) and src[si] in (0x0A, 0x0D):
                si += 1
            if si < len(src):
                return si
            return -1
    return -1
