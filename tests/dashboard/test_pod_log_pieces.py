"""The pod logs' pieces without a server: parameter parsing (every bad or unknown one named), the download's interleaving
by timestamps, the bounded line buffer (drops counted, never grown; a burst waited out, a consumer that does not take
waited for once), the stream's frames (escaped, marked with the pod when several, ``N lines skipped``, ``done`` once
every reader ended), a reader stopped while blocked, and the pump of a pushed stream on an event loop (ends when the
client goes away, closing the stream)."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from werkzeug.datastructures import MultiDict

from backend.api.problems import Problem
from backend.dashboard import logstreams, podlogs
from backend.dashboard.logstreams import Line, LineBuffer, LogStream, PodReader
from backend.server.streaming import pump_pushed
from cluster import Forbidden

pytestmark = pytest.mark.unit


def parsed(query: str, takes: tuple[str, ...] = podlogs.PAGE_TAKES) -> podlogs.LogQuery:
    args: MultiDict[str, str] = MultiDict([tuple(pair.split("=", 1)) for pair in query.split("&") if pair])  # type: ignore[misc]
    return podlogs.parse(args, takes)


def refused(query: str, takes: tuple[str, ...] = podlogs.PAGE_TAKES) -> dict[str, list[str]]:
    with pytest.raises(Problem) as caught:
        parsed(query, takes)
    assert caught.value.status == 400
    for name in caught.value.errors:
        assert name in (caught.value.detail or "")
    return caught.value.errors


def test_parameters_parse() -> None:
    query = parsed("pod=web-1&container=nginx&tail=20&since=1h30m&previous=1&follow=true&wrap=on")
    assert (query.pod, query.container, query.tail, query.since, query.since_s) == ("web-1", "nginx", 20, "1h30m", 5400)
    assert query.previous and query.follow and query.wrap
    assert parsed("") == podlogs.LogQuery()
    assert parsed("tail=&since=&follow=0").effective_tail() == podlogs.DEFAULT_TAIL
    assert parsed("since=5m").effective_tail() is None  # since bounds it: no default tail
    assert parsed("tail=7").effective_tail() == 7
    assert podlogs.since_seconds("2d") == 172800 and podlogs.since_seconds("45s") == 45


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("tail=0", "tail"),
        ("tail=-3", "tail"),
        ("tail=1.5", "tail"),
        (f"tail={podlogs.TAIL_MAX + 1}", "tail"),
        ("since=5x", "since"),
        ("since=0m", "since"),
        ("since=31d", "since"),
        ("since=m5", "since"),
        ("previous=maybe", "previous"),
        ("follow=2", "follow"),
        ("tial=5", "tial"),
        ("tail=1&tail=2", "tail"),
    ],
)
def test_a_bad_or_unknown_parameter_is_named(query: str, name: str) -> None:
    assert name in refused(query)


def test_each_route_refuses_what_it_does_not_take() -> None:
    assert "wrap" in refused("wrap=1", podlogs.STREAM_TAKES)
    assert set(refused("wrap=1&follow=1&tail=x", podlogs.DOWNLOAD_TAKES)) == {"wrap", "follow", "tail"}
    assert parsed("follow=1", podlogs.STREAM_TAKES).follow


def test_query_args_round_trip() -> None:
    query = parsed("pod=a&tail=5&since=5m&previous=1&follow=1&wrap=1")
    assert query.args(podlogs.DOWNLOAD_TAKES) == {"pod": "a", "tail": "5", "since": "5m", "previous": "1"}
    assert parsed("&".join(f"{k}={v}" for k, v in query.args(podlogs.PAGE_TAKES).items())) == query


def test_the_download_interleaves_by_timestamp_and_marks_each_line() -> None:
    a = "2030-01-01T00:00:01.5Z a-first\n2030-01-01T00:00:03Z a-third\n"
    b = "2030-01-01T00:00:01.25Z b-zeroth\n2030-01-01T00:00:02.000000001Z b-second\n2030-01-01T00:00:03Z b-fourth\n"
    assert podlogs.merged([("a", a), ("b", b)]).splitlines() == [
        "[b] b-zeroth",
        "[a] a-first",
        "[b] b-second",
        "[a] a-third",  # the same instant: a's before b's (stable)
        "[b] b-fourth",
    ]


def test_the_buffer_is_bounded_and_counts_what_it_dropped() -> None:
    wakes: list[int] = []
    buffer = LineBuffer(capacity=3)
    buffer.listen(lambda: wakes.append(1))
    assert all(buffer.put(Line("p", str(n))) for n in range(3))
    assert not buffer.put(Line("p", "3")) and not buffer.put(Line("p", "4"))
    assert len(wakes) == 1  # one wake-up for a batch, not one per line
    lines, skipped = buffer.take()
    assert [line.text for line in lines] == ["0", "1", "2"] and skipped == 2
    assert buffer.take() == ([], 0)


def test_a_burst_a_consumer_keeps_up_with_arrives_whole() -> None:
    buffer = LineBuffer(capacity=10, full_wait_s=5)
    writer = threading.Thread(target=lambda: [buffer.put(Line("p", str(n))) for n in range(1000)])
    writer.start()
    taken: list[str] = []
    skipped = 0
    while writer.is_alive() or len(taken) + skipped < 1000:
        lines, dropped = buffer.take()
        taken += [line.text for line in lines]
        skipped += dropped
        time.sleep(0.001)
    writer.join()
    assert skipped == 0 and taken == [str(n) for n in range(1000)]  # 100 times the buffer, in order, none lost


def test_a_consumer_that_does_not_take_is_waited_for_once_then_lines_drop_at_once() -> None:
    buffer = LineBuffer(capacity=2, full_wait_s=0.3)
    assert buffer.put(Line("p", "0")) and buffer.put(Line("p", "1"))
    began = time.monotonic()
    assert not any(buffer.put(Line("p", str(n))) for n in range(2, 102))
    took = time.monotonic() - began
    assert 0.25 <= took < 1.0, took  # one wait for the first, none for the 99 others
    assert [line.text for line in buffer.take()[0]] == ["0", "1"]
    began = time.monotonic()
    assert buffer.put(Line("p", "again")) and time.monotonic() - began < 0.1  # a take: room again
    assert buffer.take() == ([Line("p", "again")], 0)


def test_stalling_the_buffer_releases_a_reader_waiting_for_room() -> None:
    buffer = LineBuffer(capacity=1, full_wait_s=30)
    buffer.put(Line("p", "0"))
    results: list[bool] = []
    waiting = threading.Thread(target=lambda: results.append(buffer.put(Line("p", "1"))))
    waiting.start()
    time.sleep(0.1)
    assert waiting.is_alive()
    buffer.stall()  # the stream closes
    waiting.join(2)
    assert not waiting.is_alive() and results == [False]


def test_long_lines_are_cut_and_partial_lines_wait() -> None:
    lines, rest = logstreams.split_lines(b"", b"one\r\ntw")
    assert lines == ["one"] and rest == b"tw"
    lines, rest = logstreams.split_lines(rest, b"o\n" + b"x" * (logstreams.LINE_MAX_CHARS + 5) + b"\n")
    assert lines[0] == "two" and lines[1].endswith(f"(line cut at {logstreams.LINE_MAX_CHARS} characters)") and rest == b""
    _, rest = logstreams.split_lines(b"", b"y" * (logstreams.LINE_MAX_CHARS * 4 + 1))
    assert rest == b""  # a log without newlines does not grow the rest


class FakeLog:
    """A pod log response: the given chunks, then (``follow``) a blocking read until shut down."""

    def __init__(self, chunks: list[bytes], *, follow: bool = False) -> None:
        self.chunks = list(chunks)
        self.follow = follow
        self.shut = threading.Event()
        self.closed = False

    def read1(self, _size: int) -> bytes:
        if self.chunks:
            return self.chunks.pop(0)
        if self.follow:
            self.shut.wait(30)
            raise OSError("shut down")
        return b""

    def shutdown(self) -> None:
        self.shut.set()

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


def drain(stream: LogStream, timeout_s: float = 5) -> bytes:
    out = stream.opening()
    deadline = time.monotonic() + timeout_s
    while not stream.finished and time.monotonic() < deadline:
        out += stream.take() or b""
        time.sleep(0.01)
    return out


def test_a_merged_stream_marks_escapes_and_ends() -> None:
    buffer = LineBuffer()
    readers = [
        PodReader("pod-a", lambda: FakeLog([b"<b>bold</b>\n", b"second"]), buffer),
        PodReader("pod-b", lambda: FakeLog([b"from b\n"]), buffer),
    ]
    out = drain(LogStream(readers, buffer, marked=True, heartbeat_s=15).start()).decode()
    assert '<span class="log-pod">pod-a</span> <span class="log-text">&lt;b&gt;bold&lt;/b&gt;</span>' in out
    assert '<span class="log-pod">pod-a</span> <span class="log-text">second</span>' in out  # the last line without a newline
    assert '<span class="log-pod">pod-b</span> <span class="log-text">from b</span>' in out
    assert "<b>" not in out and out.endswith("event: done\ndata: every log ended\n\n")


def test_a_full_buffer_says_how_many_lines_it_skipped() -> None:
    buffer = LineBuffer(capacity=2)
    reader = PodReader("p", lambda: FakeLog([b"1\n2\n3\n4\n5\n"]), buffer)
    stream = LogStream([reader], buffer, marked=False, heartbeat_s=15)
    stream.start()
    reader.thread.join(5)
    out = stream.take()
    assert out is not None
    text = out.decode()
    assert text.count('class="log-line"') == 2 and "3 lines skipped" in text and "event: done" in text


def test_a_refused_reader_becomes_a_note_and_the_stream_ends() -> None:
    def refuse() -> Any:
        raise Forbidden('pods "p" is forbidden: User "alice" cannot get resource "pods/log"')

    buffer = LineBuffer()
    out = drain(LogStream([PodReader("p", refuse, buffer)], buffer, marked=False, heartbeat_s=15).start()).decode()
    assert "log-note" in out and "could not read the log" in out and "event: done" in out


def test_closing_a_followed_stream_ends_its_blocked_readers() -> None:
    logs = [FakeLog([b"hello\n"], follow=True) for _ in range(2)]
    buffer = LineBuffer()
    readers = [PodReader(f"p{n}", functools.partial(lambda log: log, log), buffer) for n, log in enumerate(logs)]
    stream = LogStream(readers, buffer, marked=True, heartbeat_s=0.05).start()
    deadline = time.monotonic() + 5
    taken = b""
    while taken.count(b"hello") < 2 and time.monotonic() < deadline:
        taken += stream.take() or b""
    assert taken.count(b"hello") == 2
    time.sleep(0.06)
    assert stream.take() == b": heartbeat\n\n"
    stream.close()
    for reader in readers:
        reader.thread.join(5)
        assert not reader.thread.is_alive()
    assert all(log.shut.is_set() and log.closed for log in logs)
    assert stream.take() is not None and stream.finished  # done, without a "connection broke" note
    stream.close()  # idempotent


def test_the_front_pumps_a_pushed_stream_until_the_client_goes_away() -> None:
    log = FakeLog([b"one\n"], follow=True)
    buffer = LineBuffer()
    reader = PodReader("p", lambda: log, buffer)
    stream = LogStream([reader], buffer, marked=False, heartbeat_s=15).start()
    sent: list[bytes] = []
    left = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message.get("body", b""))
        if b"one" in message.get("body", b""):
            left.set()  # the client reads the line, then goes away

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    # a loop of its own in a thread of its own: in a worker that ran browser tests, Playwright's loop runs in this one
    with ThreadPoolExecutor(1) as alone:
        alone.submit(lambda: asyncio.run(asyncio.wait_for(pump_pushed(stream, send=send, receive=receive), 10))).result()
    assert any(b'<span class="log-text">one</span>' in chunk for chunk in sent)
    reader.thread.join(5)
    assert not reader.thread.is_alive() and log.closed
