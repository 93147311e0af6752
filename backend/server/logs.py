"""Log lines that request data cannot forge: control characters are escaped in every record.

A path such as ``/darkrooms/default/x%0aFORGED-LINE`` decodes to a newline, ``%1b[31m`` to a
terminal escape; both reach log records through the access log and through messages that quote
the request (Flask's "Exception on <path>"). :class:`EscapingFilter`, attached to a *handler*,
rewrites each record before it is formatted: the message (``msg % args``) and the exception text
have every C0/C1 control character and DEL replaced by ``\\xNN`` (backslashes doubled, so an
escaped sequence cannot be faked either). A traceback keeps its own line structure: only its
exception message lines are escaped, and each of its lines is indented, so nothing in it can look
like a record of its own.

:func:`install` attaches the filter to every handler of the given loggers (the root logger by
default). Called by :class:`backend.server.workers.StreamingWorker` for gunicorn's error and access
logs and the app's root handlers, and by ``scripts``/tests that want the same guarantee.
:func:`escape` is what :mod:`backend.server.asgi` uses for the access line.

Servers that serve with werkzeug instead of gunicorn (the tests) pass :class:`RequestHandler` as
``werkzeug.serving.make_server(..., request_handler=RequestHandler)``: its request log line has the method, the
path without the query string, the protocol, status and size. Nothing a client puts in a URL (a misplaced token,
say) reaches the log; headers are never logged.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable
from urllib.parse import urlsplit

from werkzeug.serving import WSGIRequestHandler

_TABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_TABLE[ord("\\")] = "\\\\"


def escape(text: str) -> str:
    """``text`` with control characters as ``\\xNN`` and backslashes doubled: always one printable line."""
    return text.translate(_TABLE)


def _escape_traceback(exc_info: tuple[type[BaseException], BaseException, object]) -> str:
    lines: list[str] = []
    for chunk in traceback.TracebackException(*exc_info).format():  # type: ignore[arg-type]
        if chunk.startswith("  File ") or chunk.startswith("Traceback (most recent call last)"):
            lines.extend(line.translate(_TABLE) for line in chunk.rstrip("\n").split("\n"))
        elif chunk.strip():  # the exception line and notes: request data may be in there
            lines.append(escape(chunk.strip("\n")))
    return "\n".join(f"    {line}" for line in lines)


class EscapingFilter(logging.Filter):
    """Escapes the message and exception text of every record passing the handler it is attached to."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_darkroom_escaped", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: let logging report it as usual
            return True
        record.msg, record.args = escape(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = _escape_traceback(record.exc_info)
            record.exc_info = None
        if record.stack_info:
            record.stack_info = "\n".join(f"    {line.translate(_TABLE)}" for line in record.stack_info.split("\n"))
        record._darkroom_escaped = True
        return True


def install(loggers: Iterable[logging.Logger] = ()) -> None:
    """Attach one :class:`EscapingFilter` to every handler of ``loggers`` and of the root logger."""
    for logger in (logging.getLogger(), *loggers):
        for handler in logger.handlers:
            if not any(isinstance(f, EscapingFilter) for f in handler.filters):
                handler.addFilter(EscapingFilter())


def without_query(target: str) -> str:
    """``/path?secret=1`` → ``/path`` (also for absolute-form targets)."""
    return urlsplit(target).path or "/"


class RequestHandler(WSGIRequestHandler):
    """werkzeug's handler with a request log that omits query strings."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        command = getattr(self, "command", None)
        path = getattr(self, "path", None)
        if command and path is not None:
            line = f"{command} {without_query(path)} {self.request_version}"
        else:  # the request line did not parse: log only its first word
            line = (getattr(self, "requestline", "") or "").split(" ", 1)[0] + " <unparsed>"
        self.log("info", '"%s" %s %s', line.translate(self._control_char_table), code, size)
