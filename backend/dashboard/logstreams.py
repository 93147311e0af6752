"""A live pod log stream: one reader thread per pod, their lines merged into one bounded buffer, sent as SSE frames.

:class:`LogStream` is a :class:`backend.api.watch.streams.Pushed`: the front pumps it on its event loop
(:func:`backend.server.streaming.pump_pushed`), werkzeug iterates it (:class:`backend.api.watch.streams.PushedBody`).
Opened by :mod:`.podlogs` with one :class:`PodReader` per pod, each reading its pod's log as the page's person
(``open_log``: :meth:`cluster.acting.ActingClient.pod_log`); the readers connect in parallel, off the request.

Decisions:

- **Bounded, lossy, said so.** The readers append to one :class:`LineBuffer` of :data:`BUFFER_LINES` lines; when the
  client reads slower than the pods write, new lines are *dropped and counted* rather than queued: the buffer never
  grows, and the next frames say ``N lines skipped``. Reading on (rather than stopping the reader, which would push
  back on the API server's connection) keeps a chatty pod from stalling the other pods of a merged stream.
  A burst is not a slow client, though: the tails of 10 pods (10,000 lines: 1,000 each) arrive faster than one take of the
  buffer, so a reader finding it full first waits up to :data:`FULL_WAIT_S` for the client's side to take it; only
  when no take came in that time are lines dropped, and then at once (no more waiting) until the next take. A burst
  a client keeps up with arrives whole (``bench/logs.py``); a slow client holds the readers up for
  :data:`FULL_WAIT_S` at most per take.
  A line longer than :data:`LINE_MAX_CHARS` is cut (said at its end), so a line is bounded too.
- **Merged by arrival.** The lines of several pods are interleaved as they arrive, each marked with its pod (a single
  pod's stream has no marks). The download (:mod:`.podlogs`) interleaves by the kubelet's timestamps instead.
- **Escaped here.** A frame's data is HTML (``<div class="log-line">`` with the pod and the text), every byte of the
  log escaped once on the server (``markupsafe.escape``): a log line is the container's, never markup of ours.
  ``static/podlogs.js`` inserts the fragments as they are.
- **Frames**: ``event: lines`` (one ``data:`` line per log line or note), ``event: done`` once every reader ended
  (the page closes its EventSource: no reconnection replays the tail), ``: heartbeat`` comments when idle.
- **Ends cleanly.** :meth:`LogStream.close` (the client went away, the response ended, the server shuts down) stops
  each reader and shuts its connection's socket, so a reader blocked in a read returns at once and its thread ends;
  nothing waits on the event loop. A reader's failure (a refusal, the kubelet's "previous terminated container ...
  not found") becomes a note in the stream, never the server's log of the text (which is the person's to read).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import escape

from cluster import ClusterError

log = logging.getLogger(__name__)
BUFFER_LINES = 2000  # per stream: at ~200 bytes a line, ~0.5 MB at most, whatever the pods write
FULL_WAIT_S = 0.25  # how long a reader waits for a take when the buffer is full, before lines are dropped
LINE_MAX_CHARS = 10_000
READ_CHUNK = 65536
THREAD_PREFIX = "podlog"  # reader threads' names: podlog-<pod>


@dataclass(frozen=True)
class Line:
    """One line of a pod's log (``note``: the stream's own words about it, shown apart)."""

    pod: str
    text: str
    note: bool = False


def cut(text: str) -> str:
    """``text`` at most :data:`LINE_MAX_CHARS` long, saying so when it was cut."""
    if len(text) <= LINE_MAX_CHARS:
        return text
    return text[:LINE_MAX_CHARS] + f" … (line cut at {LINE_MAX_CHARS} characters)"


def split_lines(buffer: bytes, chunk: bytes) -> tuple[list[str], bytes]:
    """The complete lines of ``buffer + chunk`` (decoded, ``\\r`` dropped, cut) and the incomplete rest. A rest longer
    than a line may be is cut off as a line of its own, so a log without newlines cannot grow it."""
    *complete, rest = (buffer + chunk).split(b"\n")
    lines = [cut(raw.rstrip(b"\r").decode("utf-8", "replace")) for raw in complete]
    if len(rest) > LINE_MAX_CHARS * 4:  # UTF-8: at most 4 bytes a character
        lines.append(cut(rest.decode("utf-8", "replace")))
        rest = b""
    return lines, rest


class LineBuffer:
    """The lines the readers of one stream produced and the client has not taken yet: at most ``capacity``; more are
    dropped and counted (:meth:`take` returns the count once) — once a put found it full and no take came within
    ``full_wait_s`` (a burst is waited out, a slow client is not), until the next take. Thread-safe; ``wake`` is
    called when lines arrive in an empty buffer (one wake-up per batch, not per line) and when a reader ends."""

    def __init__(self, capacity: int = BUFFER_LINES, *, full_wait_s: float = FULL_WAIT_S) -> None:
        self.capacity = capacity
        self.full_wait_s = full_wait_s
        self._lines: deque[Line] = deque()
        self._skipped = 0
        self._stalled = False  # full, and no take came within full_wait_s: drop without waiting until the next take
        self._changed = threading.Condition(threading.Lock())
        self._wake: Callable[[], None] = lambda: None

    def listen(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    def put(self, line: Line) -> bool:
        """Add ``line``; False when it was dropped (the buffer is full, and stayed full ``full_wait_s``)."""
        with self._changed:
            if len(self._lines) >= self.capacity and not self._stalled:
                self._changed.wait_for(lambda: len(self._lines) < self.capacity or self._stalled, timeout=self.full_wait_s)
                self._stalled = len(self._lines) >= self.capacity
            if len(self._lines) >= self.capacity:
                self._skipped += 1
                return False
            first = not self._lines
            self._lines.append(line)
        if first:
            self._wake()
        return True

    def take(self) -> tuple[list[Line], int]:
        """Every buffered line, and how many were dropped since the last take."""
        with self._changed:
            lines, self._lines = list(self._lines), deque()
            skipped, self._skipped = self._skipped, 0
            self._stalled = False
            self._changed.notify_all()
        return lines, skipped

    def stall(self) -> None:
        """No put waits any more (the stream is closing): a reader blocked in one goes on at once."""
        with self._changed:
            self._stalled = True
            self._changed.notify_all()

    def poke(self) -> None:
        """Wake the consumer (a reader ended)."""
        self._wake()


class PodReader:
    """Reads one pod's log into a :class:`LineBuffer` on a thread of its own, until the log ends or :meth:`stop`."""

    def __init__(self, pod: str, open_log: Callable[[], Any], buffer: LineBuffer) -> None:
        self.pod = pod
        self._open = open_log
        self._buffer = buffer
        self._response: Any = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"{THREAD_PREFIX}-{pod}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        """Stop reading: shut the connection's socket so a blocked read returns now (any thread; idempotent)."""
        self._stopped.set()
        with self._lock:
            response = self._response
        if response is not None:
            with contextlib.suppress(Exception):  # already closed, or never connected
                response.shutdown()

    def _run(self) -> None:
        try:
            self._read()
        finally:
            self.ended.set()
            self._buffer.poke()

    def _read(self) -> None:
        try:
            response = self._open()
        except ClusterError as e:
            self._buffer.put(Line(self.pod, f"could not read the log: {e.message}", note=True))
            return
        except Exception as e:  # not the cluster's answer: ours to fix (the type only: nothing of the log is in it)
            log.error("could not open the log of pod %s: %s", self.pod, type(e).__name__)
            self._buffer.put(Line(self.pod, "could not read the log (an error of the panel; its log says which)", note=True))
            return
        with self._lock:
            self._response = response
        try:
            if self._stopped.is_set():
                return
            rest = b""
            while not self._stopped.is_set():
                chunk = response.read1(READ_CHUNK)
                if not chunk:
                    break
                lines, rest = split_lines(rest, chunk)
                for text in lines:
                    self._buffer.put(Line(self.pod, text))
            if rest and not self._stopped.is_set():
                self._buffer.put(Line(self.pod, cut(rest.decode("utf-8", "replace"))))
        except Exception:  # the connection broke, or was shut by stop()
            if not self._stopped.is_set():
                self._buffer.put(Line(self.pod, "the log's connection broke", note=True))
        finally:
            with contextlib.suppress(Exception):
                response.close()
                response.release_conn()


def line_html(line: Line, *, marked: bool) -> str:
    """One line as the page shows it: escaped, with its pod when the stream has several (``marked``)."""
    pod = f'<span class="log-pod">{escape(line.pod)}</span> ' if marked else ""
    css = "log-line log-note" if line.note else "log-line"
    return f'<div class="{css}">{pod}<span class="log-text">{escape(line.text)}</span></div>'


def skipped_html(count: int) -> str:
    """The note of ``count`` lines dropped by a full buffer."""
    text = f"{count} line{'s' if count != 1 else ''} skipped (the log came faster than it could be sent)"
    return f'<div class="log-line log-note"><span class="log-text">{text}</span></div>'


def lines_frame(fragments: Sequence[str]) -> bytes:
    """An SSE ``lines`` event carrying ``fragments`` (one ``data:`` line each: none holds a newline)."""
    return b"event: lines\n" + b"".join(b"data: %s\n" % f.encode() for f in fragments) + b"\n"


class LogStream:
    """The merged log of some pods as SSE frames (a :class:`backend.api.watch.streams.Pushed`)."""

    def __init__(
        self, readers: Sequence[PodReader], buffer: LineBuffer, *, marked: bool, heartbeat_s: float, notes: Sequence[str] = ()
    ) -> None:
        self.readers = tuple(readers)
        self.buffer = buffer
        self.marked = marked
        self.heartbeat_s = heartbeat_s
        self._notes = tuple(notes)
        self._finished = False
        self._closed = False
        self._last_write = time.monotonic()

    def start(self) -> LogStream:
        for reader in self.readers:
            reader.start()
        return self

    @property
    def finished(self) -> bool:
        return self._finished

    def listen(self, wake: Callable[[], None]) -> None:
        self.buffer.listen(wake)

    def opening(self) -> bytes:
        self._last_write = time.monotonic()
        notes = [line_html(Line("", text, note=True), marked=False) for text in self._notes]
        return b"retry: 2000\n: log stream\n\n" + (lines_frame(notes) if notes else b"")

    def heartbeat_in(self) -> float:
        return self.heartbeat_s - (time.monotonic() - self._last_write)

    def take(self) -> bytes | None:
        ended = all(reader.ended.is_set() for reader in self.readers)  # before the take: no line of an ended reader is left behind
        lines, skipped = self.buffer.take()
        fragments = [line_html(line, marked=self.marked) for line in lines]
        if skipped:
            fragments.append(skipped_html(skipped))
        frames = lines_frame(fragments) if fragments else b""
        if ended and not self._finished:
            self._finished = True
            frames += b"event: done\ndata: every log ended\n\n"
        if frames:
            self._last_write = time.monotonic()
            return frames
        if self.heartbeat_in() <= 0:
            self._last_write = time.monotonic()
            return b": heartbeat\n\n"
        return None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for reader in self.readers:
            reader.stop()
        self.buffer.stall()


class OpenLogStreams:
    """The open :class:`LogStream` s of one app, so that a server shutdown ends them (their readers stop, the page is
    told every log ended) as it ends the ``/watch`` streams; a stream leaves when it is garbage."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: weakref.WeakSet[LogStream] = weakref.WeakSet()
        self.closed = False

    def add(self, stream: LogStream) -> None:
        with self._lock:
            self._streams.add(stream)
            late = self.closed
        if late:  # opened while the server was shutting down
            stream.close()

    def close_all(self) -> None:
        with self._lock:
            self.closed = True
            streams = list(self._streams)
        for stream in streams:
            stream.close()
