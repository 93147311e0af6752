"""A reader of one Server-Sent Events stream for the identity tests (helpers, no tests, no fixtures).

:class:`EventStream` reads one SSE response (``/watch`` or a dashboard live list) in a thread, keeping every
:class:`Frame` (heartbeats too) and the last ``id`` seen (the stream's cursor); the frames are cut and parsed by
``tests/sseframes.py`` (shared with ``tests/clients.py``'s ``SseStream`` and the benchmarks' readers). The conftest's
``open_streams`` opens them and closes every one at teardown.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from tests import sseframes
from tests.support import wait_for


@dataclass(frozen=True)
class Frame:
    id: int | None
    event: str
    data: str

    def json(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.data)
        return loaded


class EventStream:
    """One SSE response read in a thread: every frame (heartbeats too) and the last ``id`` seen (the stream's cursor).

    ``close`` shuts the connection's socket (waking the reader) and joins the thread.
    """

    def __init__(self, http: requests.Session, url: str, headers: Mapping[str, str] | None = None) -> None:
        self.http = http
        self.response = http.get(url, headers={"Accept": "text/event-stream", **(headers or {})}, stream=True, timeout=(5, 60))
        self.status = self.response.status_code
        self.frames: list[Frame] = []
        self.last_id = -1
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name=f"sse-{url[-40:]}", daemon=True)
        if self.status == 200:
            self._thread.start()
        else:
            self.body = self.response.text
            self.response.close()
            self.ended.set()

    def _read(self) -> None:
        splitter = sseframes.FrameSplitter()
        try:
            for chunk in self.response.iter_content(chunk_size=None):
                for frame in splitter.feed(chunk):
                    self._take(frame)
        except (requests.RequestException, OSError, ValueError, AttributeError):
            pass  # closed by close(), or the server ended the stream
        finally:
            self.ended.set()

    def _take(self, parsed: sseframes.Frame) -> None:
        frame_id = int(parsed.id) if parsed.id is not None else None
        event = parsed.event or ("heartbeat" if "heartbeat" in parsed.comments else "message")
        with self._lock:
            self.frames.append(Frame(frame_id, event, parsed.data or ""))
            if frame_id is not None:
                self.last_id = max(self.last_id, frame_id)

    def events(self) -> list[Frame]:
        """The frames that are changes (no ready, heartbeat or reset)."""
        with self._lock:
            return [f for f in self.frames if f.event not in ("ready", "heartbeat", "reset")]

    def wait_until(self, event_id: int, timeout_s: float = 15.0) -> None:
        """Until the stream's cursor has reached ``event_id`` (every change up to it was shown or withheld)."""
        wait_for(lambda: self.last_id >= event_id or None, timeout_s=timeout_s, message=f"the stream to reach event {event_id}")

    def close(self) -> None:
        # the socket under the response (urllib3's http.client response reads it through a SocketIO): shutting it
        # down wakes the reader now, where closing the response would wait for the server's next frame
        fp = getattr(getattr(self.response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        if self._thread.is_alive():
            self._thread.join(10)
