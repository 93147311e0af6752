"""The string formats kube-openapi validates (``date-time``, ``uri``, ``email``, ``cidr``, ``duration``, ...),
with kube's error texts; unsupported formats are ignored, as kube ignores them.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from typing import Any

# --------------------------------------------------------------------------- formats

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_TIME_RE = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_UUID_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5_RE = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_EMAIL_ADDR_RE = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.\[\]:-]+$")
_EMAIL_NAMED_RE = re.compile(r"^[^<>]*<([^<>]+)>$")
_HOSTNAME_RE = re.compile(
    r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}([a-zA-Z]){2,63})$"
)
_URI_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MAC_RE = re.compile(
    r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}"
    r"|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$"
)
_DURATION_GO_RE = re.compile(r"^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$")
_DURATION_WORDS_RE = re.compile(
    r"^(?:[0-9]+)\s*(?:ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$",
    re.IGNORECASE,
)
_HEXCOLOR_RE = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR_RE = re.compile(rf"^rgb\({_OCTET},{_OCTET},{_OCTET}\)$")
_BSON_RE = re.compile(r"^[0-9a-fA-F]{24}$")
_SSN_RE = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10_RE = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13_RE = re.compile(r"^(?:[0-9]{13})$")
_CREDITCARD_RE = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$"
)


def _is_date(value: str) -> bool:
    if not _DATE_RE.fullmatch(value):
        return False
    try:
        datetime.date(int(value[0:4]), int(value[5:7]), int(value[8:10]))
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    """kube-openapi ``strfmt.IsDateTime``: RFC 3339 full-date "T" full-time (case-insensitive)."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _DATETIME_TIME_RE.match(parts[1])
    if not m:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _is_byte(value: str) -> bool:
    try:
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_uri(value: str) -> bool:
    """Approximates Go's ``url.ParseRequestURI``: an absolute URI or an absolute path."""
    if not value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    if value.startswith("/"):
        return True
    if not _URI_SCHEME_RE.match(value):
        return False
    rest = value.split(":", 1)[1]
    if rest.startswith("//"):
        host = rest[2:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if " " in host:
            return False
    return True


def _is_email(value: str) -> bool:
    """Approximates Go's ``mail.ParseAddress``: ``local@domain`` or ``Name <local@domain>``."""
    m = _EMAIL_NAMED_RE.match(value.strip())
    address = m.group(1) if m else value.strip()
    if not _EMAIL_ADDR_RE.match(address):
        return False
    local, _, domain = address.rpartition("@")
    return bool(local) and bool(domain) and not local.startswith(".") and not local.endswith(".") and ".." not in local


def _is_ip(value: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(value).version == version
    except ValueError:
        return False


def _is_cidr(value: str) -> bool:
    if "/" not in value:
        return False
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _is_isbn(value: str, kind: str) -> bool:
    digits = value.replace("-", "").replace(" ", "")
    if kind in ("isbn", "isbn10") and _ISBN10_RE.match(digits):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
        return total % 11 == 0
    if kind in ("isbn", "isbn13") and _ISBN13_RE.match(digits):
        total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits))
        return total % 10 == 0
    return False


def _format_ok(fmt: str, value: str) -> bool | None:
    """Whether ``value`` has format ``fmt``; ``None`` when kube ignores the format."""
    name = fmt.replace("-", "")
    checks: dict[str, Any] = {
        "datetime": _is_date_time,
        "date": _is_date,
        "byte": _is_byte,
        "uri": _is_uri,
        "email": _is_email,
        "uuid": lambda v: bool(_UUID_RE.match(v)),
        "uuid3": lambda v: bool(_UUID3_RE.match(v)),
        "uuid4": lambda v: bool(_UUID4_RE.match(v)),
        "uuid5": lambda v: bool(_UUID5_RE.match(v)),
        "hostname": lambda v: len(v) <= 255 and bool(_HOSTNAME_RE.match(v)),
        "ipv4": lambda v: _is_ip(v, 4),
        "ipv6": lambda v: _is_ip(v, 6),
        "cidr": _is_cidr,
        "mac": lambda v: bool(_MAC_RE.match(v)),
        "duration": lambda v: bool(_DURATION_GO_RE.match(v) or _DURATION_WORDS_RE.match(v)),
        "hexcolor": lambda v: bool(_HEXCOLOR_RE.match(v)),
        "rgbcolor": lambda v: bool(_RGBCOLOR_RE.match(v)),
        "bsonobjectid": lambda v: bool(_BSON_RE.match(v)),
        "ssn": lambda v: bool(_SSN_RE.match(v)),
        "isbn": lambda v: _is_isbn(v, "isbn"),
        "isbn10": lambda v: _is_isbn(v, "isbn10"),
        "isbn13": lambda v: _is_isbn(v, "isbn13"),
        "creditcard": lambda v: bool(_CREDITCARD_RE.match(re.sub(r"[^0-9]", "", v))),
        "password": lambda v: True,
    }
    check = checks.get(name)
    if check is None:
        return None
    return bool(check(value))
