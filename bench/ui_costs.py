"""Where bench/ui.py's change → DOM time goes: server delivery on raw SSE streams, and CPU per process kind.

Called by bench/ui.py only.

* :class:`RawStreams` — ``count`` raw Server-Sent Events connections to the product's live list stream
  (``/ui/live/darkrooms?namespace=bench``: exactly what a list tab opens), each read by its own thread with a
  plain socket (no browser, no HTTP library: a frame is timestamped the moment it is read; frames cut and parsed
  by ``tests/sseframes.py``). The first time a stream reads a row frame carrying ``marker-<n>.`` it records the
  wall clock (``time.time()``, the clock bench/ui.py notes before each PATCH). So "server delivery" = the API
  server's write, the watch event to the product's informer, the one render, and the frame written to every
  stream — everything a tab gets before the browser does anything.
* :func:`cpu_by_kind` — user+system CPU seconds so far of the processes that share the machine during a
  live run, from /proc: chromium by process type (``renderer``, ``gpu-process`` (the display compositor;
  software with --disable-gpu), ``NetworkService``, ``browser``, others), the product
  (the gunicorn tree) and devcluster. A run's increase divided by its changes
  (and by its tabs, for the renderers) says what one change costs each of them.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from pathlib import Path

from common import cpu_seconds

from tests.sseframes import FrameSplitter

MARKER = re.compile(r"marker-(\d+)\.")


class RawStreams:
    """``count`` open SSE streams on ``path``; ``seen[i][marker]`` = when stream ``i`` first read that marker."""

    def __init__(self, host: str, port: int, path: str, count: int) -> None:
        self.seen: list[dict[int, float]] = [{} for _ in range(count)]
        self._ready = threading.Barrier(count + 1)
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._read, args=(host, port, path, i), daemon=True) for i in range(count)]
        for thread in self._threads:
            thread.start()
        self._ready.wait(60)  # every stream said `ready`: changes from now on reach all of them

    def _read(self, host: str, port: int, path: str, i: int) -> None:
        sock = socket.create_connection((host, port), timeout=120)
        self._sockets.append(sock)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
        frames = FrameSplitter(http_head=True)
        seen = self.seen[i]
        ready = False
        with contextlib.suppress(OSError, ValueError):
            while chunk := sock.recv(1 << 16):
                now = time.time() * 1000.0
                for frame in frames.feed(chunk):
                    if not ready and frame.event == "ready":
                        ready = True
                        self._ready.wait(60)
                    elif frame.data is not None:
                        for match in MARKER.finditer(frame.data):
                            seen.setdefault(int(match[1]), now)

    def close(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for thread in self._threads:
            thread.join(5)


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, ValueError):
            for task in Path(f"/proc/{current}/task").iterdir():
                children = [int(c) for c in (task / "children").read_text().split()]
                found += children
                pending += children
    return found


def _kind(pid: int, named: dict[int, str]) -> str:
    if pid in named:
        return named[pid]
    try:  # chromium's zygote children rewrite their title: their arguments are one space-separated string
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return "other"
    program = os.path.basename(argv[0]).decode(errors="replace") if argv else ""
    if "chrom" in program:
        options = dict(a[2:].decode(errors="replace").split("=", 1) for a in argv if a.startswith(b"--") and b"=" in a)
        kind = options.get("type", "browser")
        if kind == "utility":  # the network service, the storage service, ...
            kind = options.get("utility-sub-type", kind).rsplit(".", 1)[-1]
        return f"chromium {kind}"
    return "other"


def cpu_by_kind(named: dict[int, str]) -> dict[str, float]:
    """CPU seconds so far per process kind, over this process's descendants; ``named``: pid → kind for the
    servers (their whole tree counts as that kind)."""
    totals: dict[str, float] = {}
    inside: dict[int, str] = {}
    for pid, kind in named.items():
        for child in (pid, *_descendants(pid)):
            inside[child] = kind
    for pid in _descendants(os.getpid()):
        kind = _kind(pid, inside)
        totals[kind] = totals.get(kind, 0.0) + cpu_seconds(pid)
    return totals
