"""Label selector text and objects into :class:`~labelselectors.requirements.LabelSelector` values.

:func:`parse` follows ``k8s.io/apimachinery/pkg/labels.Parse`` token for token: the same lexer
(special symbols ``= ! ( ) , > <``, keywords ``in`` / ``notin``), the same recursive descent, the
same error texts (``unable to parse requirement: ...``, ``found '...', expected: ...``).
:func:`from_dict` is ``metav1.LabelSelectorAsSelector``, :func:`from_set` ``labels.SelectorFromSet``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from labelselectors.quoting import quote
from labelselectors.requirements import (
    BINARY_OPERATORS,
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EVERYTHING,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    NOTHING,
    InvalidSelector,
    LabelSelector,
    Requirement,
    invalid,
    new_requirement,
)
from labelselectors.validation import qualified_name_errors

# Lexer tokens.
_ERROR, _EOS, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(14)
_STRING_TO_TOKEN = {
    ")": _CLOSE,
    ",": _COMMA,
    "!": _NOT,
    "==": _DEQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOTIN,
    "(": _OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[int, str]]:
    """The whole token stream of ``text`` (``labels.Lexer``), ending with an end-of-string token."""
    items: list[tuple[int, str]] = []
    pos = 0
    n = len(text)

    def peek(i: int) -> str:
        # Go's lexer reads a NUL byte as end of input.
        return text[i] if i < n else "\x00"

    while True:
        while peek(pos) in _WHITESPACE:
            pos += 1
        ch = peek(pos)
        if ch == "\x00":
            items.append((_EOS, ""))
            return items
        if ch in _SPECIAL:
            buffer = ""
            last: tuple[int, str] | None = None
            while True:
                ch = peek(pos)
                if ch == "\x00" or ch not in _SPECIAL:
                    break
                candidate = buffer + ch
                if candidate in _STRING_TO_TOKEN:
                    buffer = candidate
                    last = (_STRING_TO_TOKEN[candidate], candidate)
                    pos += 1
                elif last is not None:
                    break
                else:  # pragma: no cover - every single special symbol is a token
                    buffer = candidate
                    pos += 1
            items.append(last if last is not None else (_ERROR, f"error expected: keyword found '{buffer}'"))
            continue
        start = pos
        while True:
            ch = peek(pos)
            if ch == "\x00" or ch in _SPECIAL or ch in _WHITESPACE:
                break
            pos += 1
        word = text[start:pos]
        token = _STRING_TO_TOKEN.get(word, _ID)
        items.append((token, word))


class _Parser:
    """``labels.Parser``: recursive descent over the pre-scanned tokens."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def _at(self, index: int, values: bool) -> tuple[int, str]:
        tok, lit = self.items[min(index, len(self.items) - 1)]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def lookahead(self, values: bool = True) -> tuple[int, str]:
        return self._at(self.position, values)

    def consume(self, values: bool = True) -> tuple[int, str]:
        item = self._at(self.position, values)
        self.position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_ID, _NOT):
                try:
                    requirement = self.parse_requirement()
                except InvalidSelector as exc:
                    raise InvalidSelector(f"unable to parse requirement: {exc}") from None
                requirements.append(requirement)
                t, literal = self.consume()
                if t == _EOS:
                    return requirements
                if t == _COMMA:
                    t2, l2 = self.lookahead()
                    if t2 not in (_ID, _NOT):
                        raise InvalidSelector(f"found '{l2}', expected: identifier after ','")
                else:
                    raise InvalidSelector(f"found '{literal}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return requirements
            else:
                raise InvalidSelector(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [])
        operator = self.parse_operator()
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        tok, literal = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok != _ID:
            raise InvalidSelector(f"found '{literal}', expected: identifier")
        key_errs = qualified_name_errors(literal)
        if key_errs:
            raise InvalidSelector(invalid("<nil>", quote(literal), "; ".join(key_errs)))
        if self.lookahead()[0] in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def parse_operator(self) -> str:
        tok, lit = self.consume(values=False)
        operator = {
            _IN: IN,
            _EQ: EQUALS,
            _DEQ: DOUBLE_EQUALS,
            _GT: GREATER_THAN,
            _LT: LESS_THAN,
            _NOTIN: NOT_IN,
            _NEQ: NOT_EQUALS,
        }.get(tok)
        if operator is None:
            raise InvalidSelector(f"found '{lit}', expected: {', '.join(BINARY_OPERATORS)}")
        return operator

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise InvalidSelector(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_ID, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] != _CLOSE:  # pragma: no cover - the list only ends before ')'
                raise InvalidSelector(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self.consume()
            return {""}
        raise InvalidSelector(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _ID:
                values.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return values
                raise InvalidSelector(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not values:
                    values.add("")
                tok2, _ = self.lookahead()
                if tok2 == _CLOSE:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    self.consume()
                    values.add("")
                continue
            raise InvalidSelector(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead()
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _ID:
            return {lit}
        raise InvalidSelector(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=512)
def _parse_cached(text: str) -> LabelSelector:
    requirements = _Parser(text).parse()
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


def parse(text: str | None) -> LabelSelector:
    """A ``labelSelector`` query value (``labels.Parse``); :class:`InvalidSelector` when kube rejects it."""
    if not text:
        return EVERYTHING
    return _parse_cached(text)


_DICT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None matches nothing, ``{}`` matches everything."""
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key in sorted(match_labels):
        requirements.append(new_requirement(str(key), EQUALS, [str(match_labels[key])]))
    for expression in expressions:
        operator = _DICT_OPERATORS.get(expression.get("operator"))
        if operator is None:
            raise InvalidSelector(f"{quote(str(expression.get('operator') or ''))} is not a valid label selector operator")
        values = [str(v) for v in expression.get("values") or []]
        requirements.append(new_requirement(str(expression.get("key") or ""), operator, values))
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


def from_set(labels: Mapping[str, str]) -> LabelSelector:
    """``labels.SelectorFromSet``: every ``key=value`` of ``labels`` required (not validated, as in Go)."""
    return LabelSelector(tuple(Requirement(key, EQUALS, (value,)) for key, value in sorted(labels.items())))
