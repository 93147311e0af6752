"""The operator's log lines (darkroom_operator.runtime.logs): JSON objects with structured fields, secrets scrubbed.

Covers: one JSON object per record with time/level/logger/message and the ``extra=`` fields;
tracebacks included; text format for humans; values of sensitive-looking fields and bearer
tokens / passwords inside messages never reach the output; chatty third-party loggers capped.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from darkroom_operator.runtime import logs


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    handler = logs.configure(level="DEBUG", json_lines=True, stream=stream)
    yield stream
    root.removeHandler(handler)
    for h in saved[0]:
        root.addHandler(h)
    root.setLevel(saved[1])
    logging.captureWarnings(False)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_records_are_json_objects_with_their_fields(output: io.StringIO) -> None:
    logging.getLogger("darkroom_operator.test").info(
        "reconcile failed", extra={"controller": "darkroom", "key": "ns/a", "retry_in_s": 0.01}
    )
    (record,) = lines(output)
    assert record["level"] == "info" and record["logger"] == "darkroom_operator.test" and record["message"] == "reconcile failed"
    assert (record["controller"], record["key"], record["retry_in_s"]) == ("darkroom", "ns/a", 0.01)
    assert str(record["time"]).endswith("Z")


def test_exceptions_carry_their_traceback(output: io.StringIO) -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("darkroom_operator.test").exception("failed")
    (record,) = lines(output)
    assert "RuntimeError: boom" in str(record["exception"])


def test_secrets_never_reach_the_output(output: io.StringIO) -> None:
    log = logging.getLogger("darkroom_operator.test")
    log.info("calling with Authorization: Bearer abcdef0123456789", extra={"token": "s3cr3t-token", "secretKey": "SENTINEL-VALUE"})
    log.warning("body %s", '{"password": "hunter2-long", "name": "ok"}')
    text = output.getvalue()
    for secret in ("abcdef0123456789", "s3cr3t-token", "SENTINEL-VALUE", "hunter2-long"):
        assert secret not in text
    first, second = lines(output)
    assert first["token"] == logs.REDACTED and first["secretKey"] == logs.REDACTED
    assert '"name": "ok"' in str(second["message"])


def test_text_format_is_one_readable_line() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    handler = logs.configure(level="INFO", json_lines=False, stream=stream)
    try:
        logging.getLogger("darkroom_operator.test").info("started", extra={"workers": 4})
        logging.getLogger("darkroom_operator.test").debug("hidden")
    finally:
        root.removeHandler(handler)
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])
        logging.captureWarnings(False)
    (line,) = stream.getvalue().splitlines()
    assert line.endswith("INFO darkroom_operator.test: started workers=4")


def test_third_party_loggers_that_print_bodies_are_capped(output: io.StringIO) -> None:
    logging.getLogger("kubernetes.client.rest").debug("response body: {secret data}")
    logging.getLogger("urllib3.connectionpool").warning("Retrying ...")
    assert output.getvalue() == ""


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        logs.configure(level="LOUD", json_lines=True, stream=io.StringIO())
