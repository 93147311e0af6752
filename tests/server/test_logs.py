"""Log lines that request data cannot forge: backend.server.logs.EscapingFilter on a real logging handler.

Covers: control characters (newline, carriage return, ESC, C1) in a message's arguments come out
as ``\\xNN`` escapes on one line, backslashes doubled; in an exception's message too, while the
traceback keeps its own lines, each indented so none of them looks like a record; a handler gets
the filter once however often :func:`backend.server.logs.install` runs. (Through the production server's
access log: test_gunicorn.py.)
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from backend.server import logs

FORMAT = "%(levelname)s %(name)s %(message)s"


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger = logging.getLogger("test.backend_ops.logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logs.install([logger])
    logs.install([logger])
    yield logger, out
    logger.removeHandler(handler)


def test_arguments_cannot_add_lines_or_escapes(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, out = captured
    assert len(logger.handlers[0].filters) == 1
    logger.info("Exception on %s [%s]", "/darkrooms/default/x\nFORGED-LINE", "GET")
    logger.warning("path %s", "/x\r\nINFO forged \x1b[31mred\x1b[0m \x9b back\\slash")
    lines = out.getvalue().splitlines()
    assert lines == [
        "INFO test.backend_ops.logs Exception on /darkrooms/default/x\\x0aFORGED-LINE [GET]",
        "WARNING test.backend_ops.logs path /x\\x0d\\x0aINFO forged \\x1b[31mred\\x1b[0m \\x9b back\\\\slash",
    ]


def test_tracebacks_keep_their_lines_but_not_the_data(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, out = captured
    try:
        raise ValueError("bad name 'x\nCRITICAL forged record'")
    except ValueError:
        logger.exception("failed on %s", "/darkrooms/default/x\n")
    lines = out.getvalue().splitlines()
    assert lines[0] == "ERROR test.backend_ops.logs failed on /darkrooms/default/x\\x0a"
    assert all(line.startswith("    ") for line in lines[1:]), lines
    assert lines[1].strip() == "Traceback (most recent call last):"
    assert lines[-1].strip() == "ValueError: bad name 'x\\x0aCRITICAL forged record'"
    assert not any(line.startswith("CRITICAL") for line in lines)
