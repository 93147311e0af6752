"""Chromium for bench/ui.py, driven over the DevTools protocol itself: tabs of one window, or windows.

Called by bench/ui.py only.

Why not Playwright here: every page Playwright drives reports ``document.visibilityState == "visible"``,
whatever its place in the window (it keeps each page it attaches to visible), so it can only model tabs that
are all on screen at once. A browser's tabs are not: in a window one tab is visible, the others are hidden —
chromium renders no frames for them (no style, layout, paint, raster or compositing until they are shown) and
only runs their tasks (here: each change's SSE event and the row swap). Created through
``Target.createTarget`` with ``background: true`` and never attached by a driver that forces them visible,
background tabs are hidden, headless or not (each :class:`Tab` says whether it was visible once loaded; bench/ui.py
prints how many were).

* :class:`Chromium` — one headless chromium (``--remote-debugging-port=0``; the port is read from the profile's
  ``DevToolsActivePort``) and one websocket to it (``websocket-client``, already a dependency of the kubernetes
  client), with flat sessions per tab. :meth:`Chromium.open` opens ``url`` as a tab of the first window
  (``"tabs"``: the first tab in front, the rest in the background, as a user opens them) or in a window of its
  own (``"windows"``: every one visible, as with tiled windows — the worst case for the machine).
* Each tab gets its own host name, ``t<n>.localhost`` (mapped to the server's address): a browser opens at most
  6 connections per host, and each tab holds one event stream open for good.
* Requests are answered in order on one connection; the protocol's events are not enabled, so none arrive.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import websocket

LAYOUTS = ("tabs", "windows")
WINDOW = (1280, 720)  # each window's size: a desktop's (Playwright's default viewport, which earlier figures used)


def tab_hosts(tabs: int) -> list[str]:
    """The tabs' host names, one each (mapped to the server's address by the browser)."""
    return [f"t{i}.localhost" for i in range(tabs)]


class ProtocolError(RuntimeError):
    """The browser answered a request with an error."""


@dataclass(frozen=True)
class Tab:
    session: str  # the flat session's id
    visible: bool  # document.visibilityState == "visible" once loaded


class Chromium:
    """A headless chromium and its DevTools connection."""

    def __init__(self, executable: str, *, host: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="ui-bench-chromium-")
        self._proc = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--user-data-dir={self._profile.name}",
                f"--host-resolver-rules=MAP *.localhost {host}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        active_port = Path(self._profile.name, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while not (active_port.exists() and len(active_port.read_text().split("\n")) >= 2):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = active_port.read_text().split("\n")[:2]
        self._ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=60, suppress_origin=True)
        self._next_id = 0
        self._windows = 0

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One request; its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._ws.send(json.dumps(message))
        while True:
            answer = json.loads(self._ws.recv())
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise ProtocolError(f"{method}: {answer['error']}")
                return dict(answer.get("result", {}))

    def evaluate(self, session: str, expression: str) -> Any:
        """``expression`` (awaited if a promise) in the tab; its value as JSON."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression[:60]}…: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, session: str, expression: str, timeout_s: float, interval_s: float = 0.1) -> bool:
        """Poll ``expression`` until it is true (False: not within ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            with contextlib.suppress(ProtocolError):  # a page still navigating
                if self.evaluate(session, expression):
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(interval_s)

    def open(self, url: str, layout: str) -> Tab:
        """``url`` in a new tab of the first window (``"tabs"``; in the background after the first) or a new window."""
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}")
        first = self._windows == 0
        self._windows += 1
        if first:  # the window chromium opened with about:blank: its tab becomes the first (visible) one
            target = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")["targetId"]
        else:
            params = {"url": "about:blank", "background": layout == "tabs", "newWindow": layout == "windows"}
            if layout == "windows":
                params |= {"width": WINDOW[0], "height": WINDOW[1]}
            target = self.send("Target.createTarget", params)["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.navigate", {"url": url}, session)
        # Parsed is enough (the caller waits for what it needs next): a background tab may never fire `load` — some
        # hidden tabs of an older product (89d14eb) stayed "interactive" for good, their favicon never loaded.
        self.wait_for(session, "document.readyState !== 'loading' && location.href !== 'about:blank'", 60)
        return Tab(session=session, visible=self.evaluate(session, "document.visibilityState") == "visible")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        with contextlib.suppress(Exception):
            self._ws.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._profile.cleanup()
