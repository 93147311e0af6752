"""Go standard-library behaviours (devcluster.golang).

Behaviours covered (expected texts are what kube-apiserver v1.37.2 answered for the same values):
- time.Parse with RFC 3339: offsets converted to UTC, fractions dropped on output, one-digit hours
  accepted; ParseError texts for a wrong separator, lower-case ``z``, missing parts, month/day out
  of range; MicroTime's layout demands exactly six fractional digits.
- base64.StdEncoding: line breaks anywhere are skipped, other junk fails at Go's byte offset
  (missing/extra padding, ``*``, space, URL alphabet, data after padding); non-canonical trailing
  bits are accepted.
"""

from __future__ import annotations

import pytest

from devcluster.golang import RFC3339, RFC3339_MICRO, GoError, b64decode, format_time, parse_time

LAYOUT = '"2006-01-02T15:04:05Z07:00"'
MICRO = '"2006-01-02T15:04:05.000000Z07:00"'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01-01T10:00:00+02:00", "2024-01-01T08:00:00Z"),
        ("2024-01-01T10:00:00.123456Z", "2024-01-01T10:00:00Z"),
        ("2024-01-01T10:00:00.5-07:30", "2024-01-01T17:30:00Z"),
        ("2024-01-01T1:00:00Z", "2024-01-01T01:00:00Z"),
    ],
)
def test_time(value: str, expected: str) -> None:
    assert format_time(parse_time(value)) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2024-01-01T10:00:00z", f'parsing time "2024-01-01T10:00:00z" as {LAYOUT}: cannot parse "z" as "Z07:00"'),
        ("2024-01-01 10:00:00Z", f'parsing time "2024-01-01 10:00:00Z" as {LAYOUT}: cannot parse " 10:00:00Z" as "T"'),
        ("2024-01-01", f'parsing time "2024-01-01" as {LAYOUT}: cannot parse "" as "T"'),
        ("", f'parsing time "" as {LAYOUT}: cannot parse "" as "2006"'),
        ("yesterday", f'parsing time "yesterday" as {LAYOUT}: cannot parse "yesterday" as "2006"'),
        ("2024-13-01T10:00:00Z", 'parsing time "2024-13-01T10:00:00Z": month out of range'),
        ("2024-02-30T00:00:00Z", 'parsing time "2024-02-30T00:00:00Z": day out of range'),
    ],
)
def test_time_errors(value: str, message: str) -> None:
    with pytest.raises(GoError) as raised:
        parse_time(value, RFC3339)
    assert str(raised.value) == message


def test_micro_time() -> None:
    moment = parse_time("2024-01-01T10:00:00.123456Z", RFC3339_MICRO)
    assert format_time(moment, RFC3339_MICRO) == "2024-01-01T10:00:00.123456Z"
    for value, rest, elem in (
        ("2024-01-01T10:00:00Z", "Z", ".000000"),
        ("2024-01-01T10:00:00.123Z", ".123Z", ".000000"),
        ("2024-01-01T10:00:00.1234567+01:00", "7+01:00", "Z07:00"),
        ("2024-01-01T10:00:00.123456789Z", "789Z", "Z07:00"),
    ):
        with pytest.raises(GoError) as raised:
            parse_time(value, RFC3339_MICRO)
        assert str(raised.value) == f'parsing time "{value}" as {MICRO}: cannot parse "{rest}" as "{elem}"'


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("aGVsbG8", 4),
        ("aGV*bG8=", 3),
        ("aGVs bG8=", 4),
        ("aGVsbG8==", 8),
        ("YQ", 0),
        ("YQ==YQ==", 4),
        ("aGVs-bG8_", 4),
        ("====", 0),
        ("Y===", 1),
    ],
)
def test_base64_errors(text: str, offset: int) -> None:
    with pytest.raises(GoError) as raised:
        b64decode(text)
    assert str(raised.value) == f"illegal base64 data at input byte {offset}"


def test_base64_accepts_line_breaks() -> None:
    for text in ("aGVs\nbG8=", "aGVsbG8=\n", "aGVs\r\nbG8=", "\naGVsbG8="):
        assert b64decode(text) == b"hello"
    assert b64decode("") == b""
    assert b64decode("YR==") == b"a"
