"""The simulated log at a rate (devcluster/podlogs.py, no server): the annotation read as realcluster's kubelet reads
it, line i stamped the container's start + i/rate s (cut to the microsecond), what ``sinceTime``/``tailLines`` select
across the startup lines and the rate lines, only the last lines retained, chunked text. The server side (both
clusters, through kubectl) is in ../conformance/test_pods.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devcluster import podlogs
from devcluster.podlogs import LogOptions, Rate

START = datetime(2026, 1, 1, tzinfo=UTC)
STARTUP = [(START, "first"), (START, "second")]


def annotated(value: str) -> dict[str, object]:
    return {"metadata": {"annotations": {podlogs.RATE_ANNOTATION: value}}}


@pytest.mark.parametrize(
    ("value", "rate"),
    [
        *[("1000", 1000), ("007", 7), ("10000", 10_000), ("10001", 10_000), ("9" * 30, 10_000)],
        *[("0", None), ("-5", None), ("+5", None), (" 5", None), ("5 ", None), ("1.5", None), ("1e3", None), ("", None), ("٣", None)],
    ],
)
def test_the_annotation_is_a_positive_decimal_capped(value: str, rate: int | None) -> None:
    assert podlogs.log_rate(annotated(value)) == rate


def test_no_annotation_no_rate() -> None:
    assert podlogs.log_rate({"metadata": {}}) is None and podlogs.log_rate({"metadata": {"annotations": {"other": "5"}}}) is None


def test_line_i_is_stamped_start_plus_i_over_the_rate() -> None:
    fast = Rate(1000, START, "node-1")
    assert fast.stamp(1) == START + timedelta(milliseconds=1) and fast.stamp(1000) == START + timedelta(seconds=1)
    assert fast.text(12) == "simulated: line 12 of a container writing 1000 lines/s on node-1"
    assert (fast.written(START), fast.written(START + timedelta(microseconds=999))) == (0, 0)
    assert fast.written(START + timedelta(milliseconds=1)) == 1 and fast.written(START + timedelta(seconds=1)) == 1000
    assert fast.written(START - timedelta(seconds=5)) == 0
    thirds = Rate(3, START, "n")
    assert [podlogs.format_time(thirds.stamp(i)) for i in (1, 2, 3)] == [
        "2026-01-01T00:00:00.333333000Z",
        "2026-01-01T00:00:00.666666000Z",
        "2026-01-01T00:00:01.000000000Z",
    ]
    assert thirds.written(START + timedelta(microseconds=333_332)) == 0 and thirds.written(START + timedelta(microseconds=333_333)) == 1
    # written and first_since agree with the stamps, whatever the rate
    for rate in (1, 3, 7, 999, 1000, 10_000):
        log = Rate(rate, START, "n")
        for i in (1, 2, rate - 1, rate, rate + 1, 5 * rate + 3):
            if i < 1:
                continue
            assert log.written(log.stamp(i)) == i and log.written(log.stamp(i) - timedelta(microseconds=1)) < i
            assert log.first_since(log.stamp(i)) <= i and log.stamp(log.first_since(log.stamp(i))) >= log.stamp(i)
    assert fast.first_since(START - timedelta(days=1)) == 1 and fast.first_since(START + timedelta(microseconds=1500)) == 2


def test_selection_since_tail_and_retention() -> None:
    fast = Rate(1000, START, "n")
    second = START + timedelta(seconds=1)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c"), second) == (STARTUP, 1, 1000)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c", tail_lines=5), second) == ([], 996, 1000)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c", tail_lines=1001), second) == (STARTUP[1:], 1, 1000)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c", tail_lines=0), second) == ([], 1001, 1000)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c", since=START + timedelta(milliseconds=500)), second) == ([], 500, 1000)
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c", since=second + timedelta(hours=1)), second)[1:] == (3_601_000, 1000)
    _, first, last = podlogs.select_rate(STARTUP, fast, LogOptions("c", stream="Stderr"), second)
    assert first > last
    day = START + timedelta(days=1)  # 86.4 million lines written: the last ones only are kept
    assert podlogs.select_rate(STARTUP, fast, LogOptions("c"), day) == (STARTUP, 86_400_000 - podlogs.RATE_RETAINED_LINES + 1, 86_400_000)


def test_chunks_are_the_lines_in_bounded_pieces() -> None:
    log = Rate(10, START, "n")
    chunks = list(log.chunks(1, podlogs.RATE_CHUNK_LINES + 2, timestamps=False))
    assert [chunk.count("\n") for chunk in chunks] == [podlogs.RATE_CHUNK_LINES, 2]
    assert chunks[1] == f"{log.text(podlogs.RATE_CHUNK_LINES + 1)}\n{log.text(podlogs.RATE_CHUNK_LINES + 2)}\n"
    (stamped,) = log.chunks(3, 3, timestamps=True)
    assert stamped == f"2026-01-01T00:00:00.300000000Z {log.text(3)}\n"
    assert list(log.chunks(5, 4, timestamps=True)) == []
