"""Server-Sent Events frames, parsed one way for the tests' clients and the benchmarks' readers.

:func:`parse_frame` turns the lines of one frame (up to the blank line that ends it) into a :class:`Frame`: its
fields (``event``, ``id``, ``retry``, ... — the last value of each), its ``data`` lines joined by newlines (None when
it has none) and its comments (``: heartbeat``, stripped). :class:`FrameSplitter` cuts a byte stream, in whatever chunks
it arrives, into the frames it holds (a frame ends at an empty line). The transports stay each reader's own:
``tests/clients.py``'s ``SseStream`` (http.client, line by line), ``tests/identity/oidc/event_stream.py``'s
``EventStream`` (requests, in a thread) and the raw sockets of bench/ (``scale.py``, ``tree.py``, ``logs.py``,
``ui_costs.py``, ``sseclients.py``). No I/O; imports nothing of the tests'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Frame:
    """One SSE frame: its fields but ``data`` (the last value of each), its data lines joined, its comments."""

    fields: dict[str, str] = field(default_factory=dict)
    data: str | None = None
    comments: tuple[str, ...] = ()

    @property
    def event(self) -> str | None:
        return self.fields.get("event")

    @property
    def id(self) -> str | None:
        return self.fields.get("id")

    def __bool__(self) -> bool:
        """Whether the frame carries anything (a lone blank line makes an empty one)."""
        return bool(self.fields or self.data is not None or self.comments)


def parse_frame(lines: Iterable[str]) -> Frame:
    """The frame made of ``lines`` (without their line ends; a trailing ``\\r`` is dropped). A line ``name: value``
    sets a field (one space after the colon is not part of the value); ``data`` lines accumulate; ``:`` starts a comment."""
    fields: dict[str, str] = {}
    data: list[str] = []
    comments: list[str] = []
    for raw in lines:
        line = raw.removesuffix("\r")
        if not line:
            continue
        if line.startswith(":"):
            comments.append(line[1:].strip())
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        else:
            fields[name] = value
    return Frame(fields, "\n".join(data) if data else None, tuple(comments))


class FrameSplitter:
    """Cuts an SSE byte stream into frames: :meth:`feed` the bytes as they come, get the frames they complete.

    ``http_head``: the bytes start with an HTTP response head (a reader on a raw socket), kept apart in :attr:`head`."""

    def __init__(self, *, http_head: bool = False) -> None:
        self._buffer = b""
        self._in_head = http_head
        self.head = b""

    def feed(self, chunk: bytes) -> list[Frame]:
        """The frames ``chunk`` completes (empty ones left out); an incomplete one waits for the next chunk."""
        data = self._buffer + chunk
        if self._in_head:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                self._buffer = data
                return []
            self.head, data, self._in_head = data[:end], data[end + 4 :], False
        *whole, self._buffer = data.split(b"\n\n")
        frames = (parse_frame(raw.decode(errors="replace").split("\n")) for raw in whole)
        return [frame for frame in frames if frame]
