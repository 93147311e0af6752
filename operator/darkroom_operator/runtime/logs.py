"""Structured logging for the operator: JSON lines (one object per record) or plain text, secrets scrubbed.

:func:`configure` is called once by :mod:`darkroom_operator.__main__` with the settings' level and
format; everything else logs through ``logging.getLogger(__name__)`` and passes structured fields
as ``extra={...}`` (e.g. ``controller``, ``key``, ``error``), which become JSON keys (or
``key=value`` pairs in text mode). Records go to stderr.

Never logging secrets: a :class:`Redactor` filter on the handler replaces the value of any field
whose name looks sensitive (token, password, secret key, authorization, …) and scrubs bearer
tokens / basic credentials from messages. Third-party loggers that could print request or
response bodies (``kubernetes.client.rest`` at DEBUG prints every response, Secrets included) or
headers (``urllib3``, capped at ERROR) are capped at WARNING whatever our level is.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime", "taskName"}

SENSITIVE_FIELD = re.compile(
    r"(?i)(password|passwd|token|secret_?key|secretkey|access_?key|accesskey|authorization|credential|bearer|api_?key)"
)
_SCRUB = (
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"), r"\1 [REDACTED]"),
    (re.compile(r"(?i)(\"?(?:authorization|password|token|secretkey|accesskey)\"?\s*[:=]\s*\"?)[^\"\s,}]+"), r"\1[REDACTED]"),
)
REDACTED = "[REDACTED]"

# Loggers capped at WARNING because they may print bodies/headers at DEBUG/INFO; urllib3's retry
# warnings repeat what our own failure logs say, so it is capped at ERROR.
NOISY = {"kubernetes": logging.WARNING, "kubernetes.client.rest": logging.WARNING, "urllib3": logging.ERROR}


def scrub(text: str) -> str:
    for pattern, replacement in _SCRUB:
        text = pattern.sub(replacement, text)
    return text


def _redact(name: str, value: Any) -> Any:
    if SENSITIVE_FIELD.search(name):
        return REDACTED
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {str(k): _redact(str(k), v) for k, v in value.items()}
    return value


class Redactor(logging.Filter):
    """Scrubs a record's message and sensitive ``extra`` fields in place (never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep the raw text
            message = str(record.msg)
        record.msg = scrub(message)
        record.args = None
        for name in list(record.__dict__):
            if name not in _STANDARD:
                record.__dict__[name] = _redact(name, record.__dict__[name])
        return True


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a record carries (its ``extra=``)."""
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", ...fields, "exception"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in fields_of(record).items():
            entry.setdefault(name, value)
        if record.exc_info:
            entry["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``2024-01-01T00:00:00.000Z INFO logger: message key=value …`` for humans."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        extras = " ".join(f"{k}={v}" for k, v in fields_of(record).items())
        line = f"{stamp} {record.levelname} {record.name}: {record.getMessage()}" + (f" {extras}" if extras else "")
        if record.exc_info:
            line += "\n" + scrub(self.formatException(record.exc_info))
        return line


def configure(*, level: str, json_lines: bool, stream: TextIO | None = None) -> logging.Handler:
    """Route every logger to one stderr handler in the chosen format; returns the handler (tests remove it)."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    handler.addFilter(Redactor())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(numeric)
    for name, floor in NOISY.items():
        logging.getLogger(name).setLevel(max(numeric, floor))
    logging.captureWarnings(True)
    return handler
