"""Label and field selectors, parsed and matched the way kube-apiserver does it.

Label selectors follow ``k8s.io/apimachinery/pkg/labels.Parse`` token for token: the same lexer
(special symbols ``= ! ( ) , > <``, keywords ``in`` / ``notin``), the same recursive descent, the
same key/value validation and the same error texts (``unable to parse requirement: ...``,
``found '...', expected: ...``), so a client sees the message a real server would send.

Field selectors follow ``k8s.io/apimachinery/pkg/fields.ParseSelector`` (comma-separated terms,
``=`` / ``==`` / ``!=``, backslash escaping of ``\\ , =`` in values) followed by the per-kind
field-label conversion the API server runs before listing: each kind accepts ``metadata.name``,
usually ``metadata.namespace`` and the extra labels in :attr:`ResourceType.field_labels`; anything
else is a 400 whose message is the one that kind's conversion function returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from devcluster.errors import bad_request
from devcluster.naming import label_value_errors, qualified_name_errors
from devcluster.resources import ResourceType

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "field_value",
    "label_selector_from_dict",
    "parse_field_selector",
    "parse_label_selector",
]

# ---------------------------------------------------------------------------------------------
# Validation messages (k8s.io/apimachinery/pkg/util/validation, as shipped with Kubernetes 1.32)
# ---------------------------------------------------------------------------------------------

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def _go_quote(value: str) -> str:
    """``strconv.Quote`` (what ``%q`` prints for a string)."""
    out = ['"']
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _go_string_slice(values: list[str]) -> str:
    """``%#v`` of a ``[]string`` (``[]string(nil)`` when empty, as apimachinery builds it)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


def _invalid(path: str, rendered_value: str, detail: str) -> str:
    return f"{path}: Invalid value: {rendered_value}: {detail}"


def _aggregate(messages: list[str]) -> str:
    unique: list[str] = []
    for message in messages:
        if message not in unique:
            unique.append(message)
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# ---------------------------------------------------------------------------------------------
# Label selectors
# ---------------------------------------------------------------------------------------------

# selection.Operator spellings.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)


_INT64_RE = re.compile(r"[+-]?[0-9]+\Z")


def _parse_int64(text: str) -> int | None:
    if not _INT64_RE.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _requirement_errors(key: str, operator: str, values: list[str], path: str) -> list[str]:
    """``labels.NewRequirement``'s validation, as rendered error strings."""
    prefix = f"{path}." if path else ""
    errs: list[str] = []
    key_errs = qualified_name_errors(key)
    if key_errs:
        errs.append(_invalid(prefix + "key", _go_quote(key), "; ".join(key_errs)))
    values_path = prefix + "values"
    if operator in (IN, NOT_IN):
        if not values:
            errs.append(_invalid(values_path, _go_string_slice(values), "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errs.append(_invalid(values_path, _go_string_slice(values), "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(_invalid(values_path, _go_string_slice(values), "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(_invalid(values_path, _go_string_slice(values), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(values):
            if _parse_int64(value) is None:
                errs.append(_invalid(f"{values_path}[{i}]", _go_quote(value), "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(values):
        value_errs = label_value_errors(value)
        if value_errs:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", _go_quote(value), "; ".join(value_errs)))
    return errs


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key``, a ``selection.Operator`` spelling and its values (sorted)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({joined})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{joined}"


def _new_requirement(key: str, operator: str, values: list[str], path: str = "") -> Requirement:
    errs = _requirement_errors(key, operator, values, path)
    if errs:
        raise _SelectorError(_aggregate(errs))
    return Requirement(key, operator, tuple(values))


class _SelectorError(Exception):
    pass


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: the AND of its requirements (sorted by key, like apimachinery).

    ``nothing`` is ``labels.Nothing()`` (what a nil ``metav1.LabelSelector`` converts to): it
    matches no object at all.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: dict[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (``Selector.Empty()``)."""
        return not self.nothing and not self.requirements

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``=``, ``==`` or a one-value ``in``), else None."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)

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
                except _SelectorError as exc:
                    raise _SelectorError(f"unable to parse requirement: {exc}") from None
                requirements.append(requirement)
                t, literal = self.consume()
                if t == _EOS:
                    return requirements
                if t == _COMMA:
                    t2, l2 = self.lookahead()
                    if t2 not in (_ID, _NOT):
                        raise _SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise _SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return requirements
            else:
                raise _SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return _new_requirement(key, operator, [])
        operator = self.parse_operator()
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return _new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        tok, literal = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok != _ID:
            raise _SelectorError(f"found '{literal}', expected: identifier")
        key_errs = qualified_name_errors(literal)
        if key_errs:
            raise _SelectorError(_invalid("<nil>", _go_quote(literal), "; ".join(key_errs)))
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
            raise _SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return operator

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise _SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_ID, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] != _CLOSE:  # pragma: no cover - the list only ends before ')'
                raise _SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self.consume()
            return {""}
        raise _SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

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
                raise _SelectorError(f"found '{lit2}', expected: ',' or ')'")
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
            raise _SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead()
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _ID:
            return {lit}
        raise _SelectorError(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=512)
def _parse_label_selector_cached(text: str) -> LabelSelector:
    try:
        requirements = _Parser(text).parse()
    except _SelectorError as exc:
        raise bad_request(str(exc)) from None
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a ``labelSelector`` query value (``labels.Parse``); raises 400 BadRequest when invalid."""
    if not text:
        return EVERYTHING
    return _parse_label_selector_cached(text)


_DICT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_dict(selector: dict[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None matches nothing, ``{}`` matches everything."""
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    try:
        for key in sorted(match_labels):
            requirements.append(_new_requirement(str(key), EQUALS, [str(match_labels[key])]))
        for expression in expressions:
            operator = _DICT_OPERATORS.get(expression.get("operator"))
            if operator is None:
                raise _SelectorError(f"{_go_quote(str(expression.get('operator') or ''))} is not a valid label selector operator")
            values = [str(v) for v in expression.get("values") or []]
            requirements.append(_new_requirement(str(expression.get("key") or ""), operator, values))
    except _SelectorError as exc:
        raise bad_request(str(exc)) from None
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


# ---------------------------------------------------------------------------------------------
# Field selectors
# ---------------------------------------------------------------------------------------------

# Kinds whose field-label conversion function reports "field label not supported: <label>"
# (k8s.io/kubernetes/pkg/apis/core/v1/conversion.go). Custom resources use the same text
# (apiextensions-apiserver's crConverter). Every other kind falls back to
# runtime.DefaultMetaV1FieldSelectorConversion, which accepts metadata.name/metadata.namespace
# and words its error differently.
_CONVERTING_KINDS = frozenset(
    {("", "Pod"), ("", "Node"), ("", "ReplicationController"), ("", "Event"), ("", "Namespace"), ("", "Secret"), ("", "Service")}
)
# Labels a kind rewrites before matching (old clients' spellings).
_LABEL_ALIASES: dict[tuple[str, str], dict[str, str]] = {("", "Pod"): {"spec.host": "spec.nodeName"}}


@dataclass(frozen=True)
class FieldRequirement:
    """One field term: ``field`` equals (``equal``) or differs from ``value``."""

    field: str
    value: str
    equal: bool = True

    def matches(self, fields: dict[str, str]) -> bool:
        return (fields.get(self.field, "") == self.value) == self.equal

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{'=' if self.equal else '!='}{escaped}"


def _render_field(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return ""


def _lookup(obj: dict[str, Any], path: str) -> Any:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def field_value(obj: dict[str, Any], label: str, kind: str = "", group: str = "") -> str:
    """The string a field label has on ``obj`` (``""`` when absent), as the kind's field set builds it."""
    if not group and kind == "Event":
        if label == "source":
            source = _lookup(obj, "source.component")
            return _render_field(source) if source else _render_field(obj.get("reportingComponent"))
    elif not group and kind == "Pod":
        if label == "status.podIP":
            pod_ips = _lookup(obj, "status.podIPs")
            if isinstance(pod_ips, list) and pod_ips and isinstance(pod_ips[0], dict):
                return _render_field(pod_ips[0].get("ip"))
        elif label == "spec.hostNetwork":
            return "true" if _lookup(obj, "spec.hostNetwork") is True else "false"
    return _render_field(_lookup(obj, label))


@dataclass(frozen=True)
class FieldSelector:
    """A parsed, converted field selector for one kind: the AND of its terms."""

    requirements: tuple[FieldRequirement, ...] = ()
    kind: str = ""
    group: str = ""

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: dict[str, Any]) -> bool:
        if not self.requirements:
            return True
        fields = {r.field: field_value(obj, r.field, self.kind, self.group) for r in self.requirements}
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        for r in self.requirements:
            if r.field == field and r.equal:
                return r.value
        return None

    def exact_name(self) -> str | None:
        """The name the selector pins with ``metadata.name=`` (``RequiresExactMatch``), else None."""
        return self.requires_exact_match("metadata.name")

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise _SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, i.e. as its code point.
            raise _SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise _SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _parse_terms(text: str) -> list[FieldRequirement]:
    """``fields.ParseSelector`` without the label conversion."""
    terms: list[FieldRequirement] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise _SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        terms.append(FieldRequirement(lhs, _unescape(rhs), op != "!="))
    return terms


# (group, kind, namespaced, is custom, extra field labels): what field-label conversion depends on.
_KindKey = tuple[str, str, bool, bool, tuple[str, ...]]


def _convert_label(label: str, kind: _KindKey) -> str:
    """The kind's field-label conversion: the label to match on, or a 400 naming it."""
    group, kind_name, namespaced, custom, extra = kind
    label = _LABEL_ALIASES.get((group, kind_name), {}).get(label, label)
    converting = custom or (group, kind_name) in _CONVERTING_KINDS
    if label == "metadata.name" or label in extra:
        return label
    if label == "metadata.namespace" and (namespaced or not converting):
        return label
    if converting:
        raise bad_request(f"field label not supported: {label}")
    raise bad_request(f'{_go_quote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"')


@lru_cache(maxsize=512)
def _parse_field_selector_cached(text: str, kind: _KindKey) -> FieldSelector:
    try:
        terms = _parse_terms(text)
    except _SelectorError as exc:
        raise bad_request(str(exc)) from None
    converted = tuple(FieldRequirement(_convert_label(t.field, kind), t.value, t.equal) for t in terms)
    return FieldSelector(converted, kind[1], kind[0])


def parse_field_selector(text: str | None, resource: ResourceType) -> FieldSelector:
    """Parse a ``fieldSelector`` query value for ``resource``; raises 400 BadRequest when invalid."""
    if not text:
        return FieldSelector((), resource.kind, resource.group)
    key: _KindKey = (resource.group, resource.kind, resource.namespaced, resource.is_custom, tuple(resource.field_labels))
    return _parse_field_selector_cached(text, key)
