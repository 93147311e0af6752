"""Go's ``strconv.Quote`` (``%q`` of a string) and ``%#v`` of a ``[]string``: how kube quotes values in messages.

Defined here, in the leaf package, because label-selector errors print them; devcluster's Go
formatting module (``devcluster/gofmt.py``) re-exports :func:`quote` rather than keeping a copy.
"""

from __future__ import annotations

import unicodedata

# strconv.appendEscapedRune: the escapes Go spells with a letter.
_LETTER_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _go_printable(char: str) -> bool:
    """``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def quote(value: str) -> str:
    """``strconv.Quote(value)``: ``"`` and ``\\`` escaped, printable runes as they are, ``\\a``..``\\v``,
    other ASCII controls and DEL as ``\\xNN``, other non-printable runes as ``\\uNNNN`` / ``\\UNNNNNNNN``
    (a lone surrogate is U+FFFD, what Go's JSON decoder made of it)."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif _go_printable(char):
            out.append(char)
        elif char in _LETTER_ESCAPES:
            out.append(_LETTER_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def string_slice(values: list[str]) -> str:
    """``%#v`` of a ``[]string`` (``[]string(nil)`` when empty, as apimachinery builds it)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(quote(v) for v in values) + "}"
