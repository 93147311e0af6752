"""The Kubernetes JSONPath dialect (``k8s.io/client-go/util/jsonpath``).

A port of client-go's parser and evaluator, as used by CRD ``additionalPrinterColumns`` (which the
apiserver evaluates with ``AllowMissingKeys(true)``): fields (``.a.b``, escaped dots ``.a\\.b``),
``['key']`` (split on unescaped dots, like kube), indexes and slices (``[0]``, ``[-1]``, ``[1:3]``,
``[::2]``, ``[*]``), unions (``[0,2]``), wildcards (``.*``), recursive descent (``..name``) and
filters (``[?(@.type=="Ready")]`` with ``== != < > <= >=`` or bare existence ``[?(@.x)]``).

:func:`parse` compiles (cached); :meth:`Compiled.find_results` is strict (raises
:class:`JSONPathError` on evaluation errors such as an index out of range, like ``FindResults``);
:func:`evaluate` returns the flattened matches and ``[]`` when the path is missing or errors.
``range``/``end`` templates parse but are not evaluated (evaluation error).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from devcluster import gofmt

__all__ = ["Compiled", "JSONPathError", "evaluate", "parse"]


class JSONPathError(ValueError):
    """Bad JSONPath syntax (from :func:`parse`) or a failed evaluation (from ``find_results``)."""


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Field:
    name: str


@dataclass(frozen=True)
class _Identifier:
    name: str


@dataclass(frozen=True)
class _Param:
    value: int = 0
    known: bool = False
    derived: bool = False


@dataclass(frozen=True)
class _Array:
    params: tuple[_Param, _Param, _Param]


@dataclass(frozen=True)
class _List:
    nodes: tuple[_Node, ...]


@dataclass(frozen=True)
class _Filter:
    left: _List
    right: _List
    operator: str


@dataclass(frozen=True)
class _Int:
    value: int


@dataclass(frozen=True)
class _Float:
    value: float


@dataclass(frozen=True)
class _Bool:
    value: bool


@dataclass(frozen=True)
class _Wildcard:
    pass


@dataclass(frozen=True)
class _Recursive:
    pass


@dataclass(frozen=True)
class _Union:
    lists: tuple[_List, ...]


_Node = _Text | _Field | _Identifier | _Array | _List | _Filter | _Int | _Float | _Bool | _Wildcard | _Recursive | _Union

# ---------------------------------------------------------------------------------------------
# Parser (port of parser.go)
# ---------------------------------------------------------------------------------------------

_EOF = ""
_DICT_KEY_RE = re.compile(r"^'([^']*)'$")
_SLICE_RE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_FILTER_RE = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)


def _is_terminator(r: str) -> bool:
    return r in (_EOF, " ", "\t", "\r", "\n", ".", ",", "[", "]", "$", "@", "{", "}")


def _is_alnum(r: str) -> bool:
    return r == "_" or (r != _EOF and (r.isalpha() or r.isdecimal()))


class _Parser:
    def __init__(self, text: str) -> None:
        self.input = text
        self.pos = 0
        self.start = 0
        self.width = 0
        self.root: list[_Node] = []

    # -- cursor helpers --------------------------------------------------------------------
    def consume(self) -> str:
        value = self.input[self.start : self.pos]
        self.start = self.pos
        return value

    def next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return _EOF
        self.width = 1
        self.pos += 1
        return self.input[self.pos - 1]

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def backup(self) -> None:
        self.pos -= self.width

    # -- grammar ---------------------------------------------------------------------------
    def parse(self) -> list[_Node]:
        while True:
            idx = self.input.find("{", self.pos)
            if idx < 0:
                self.pos = len(self.input)
                if self.pos > self.start:
                    self.root.append(_Text(self.consume()))
                return self.root
            self.pos = idx
            if self.pos > self.start:
                self.root.append(_Text(self.consume()))
            self.pos += 1
            self.consume()
            nodes: list[_Node] = []
            self.inside_action(nodes)
            self.root.append(_List(tuple(nodes)))

    def inside_action(self, cur: list[_Node]) -> None:
        while True:
            rest = self.input[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                self.consume()
                return
            if rest.startswith("[?("):
                self.parse_filter(cur)
                continue
            if rest.startswith(".."):
                self.parse_recursive(cur)
                continue
            r = self.next()
            if r == _EOF or r in "\r\n":
                raise JSONPathError("unclosed action")
            if r in " @$":
                self.consume()
            elif r == "[":
                self.parse_array(cur)
            elif r in "\"'":
                self.parse_quote(cur, r)
            elif r == ".":
                self.parse_field(cur)
            elif r in "+-" or r.isdecimal():
                self.backup()
                self.parse_number(cur)
            elif _is_alnum(r):
                self.backup()
                self.parse_identifier(cur)
            else:
                raise JSONPathError(f"unrecognized character in action: U+{ord(r):04X} {r!r}")

    def parse_identifier(self, cur: list[_Node]) -> None:
        while True:
            if _is_terminator(self.next()):
                self.backup()
                break
        value = self.consume()
        cur.append(_Bool(value == "true") if value in ("true", "false") else _Identifier(value))

    def parse_recursive(self, cur: list[_Node]) -> None:
        if cur and isinstance(cur[-1], _Recursive):
            raise JSONPathError("invalid multiple recursive descent")
        self.pos += 2
        self.consume()
        cur.append(_Recursive())
        if _is_alnum(self.peek()):
            self.parse_field(cur)

    def parse_number(self, cur: list[_Node]) -> None:
        if self.peek() in ("+", "-"):
            self.next()
        while True:
            r = self.next()
            if r != "." and not (r != _EOF and r.isdecimal()):
                self.backup()
                break
        value = self.consume()
        if re.fullmatch(r"[+-]?\d+", value):
            cur.append(_Int(int(value)))
            return
        try:
            if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", value):
                raise ValueError(value)
            cur.append(_Float(float(value)))
        except ValueError:
            raise JSONPathError(f"cannot parse number {value}") from None

    def parse_array(self, cur: list[_Node]) -> None:
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated array")
            if r == "]":
                break
        text = self.consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            cur.append(_Union(tuple(_parse_action(f"[{part.strip(' ')}]") for part in parts)))
            return
        key = _DICT_KEY_RE.match(text)
        if key is not None:
            cur.extend(_parse_action(f".{key.group(1)}").nodes)
            return
        m = _SLICE_RE.match(text)
        if m is None:
            raise JSONPathError(f"invalid array index {text}")
        groups = [m.group(1) or "", m.group(2) or "", m.group(3) or ""]
        params: list[_Param] = []
        for i, raw in enumerate(groups):
            if raw != "":
                if i > 0:
                    raw = raw[1:]
                if i > 0 and raw == "":
                    params.append(_Param())
                else:
                    try:
                        params.append(_Param(int(raw), True))
                    except ValueError:
                        raise JSONPathError(f"array index {raw} is not a number") from None
            elif i == 1:
                params.append(_Param(params[0].value + 1, True, True))
            else:
                params.append(_Param())
        cur.append(_Array((params[0], params[1], params[2])))

    def parse_filter(self, cur: list[_Node]) -> None:
        self.pos += 3
        self.consume()
        begin = end = False
        pair = ""
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated filter")
            if r in "\"'":
                if not begin:
                    begin, pair = True, r
                    continue
                if self.input[self.pos - 2] != "\\" and r == pair:
                    end = True
            elif r == ")" and begin == end:
                break
        if self.next() != "]":
            raise JSONPathError("unclosed array expect ]")
        text = self.consume()[:-2]
        m = _FILTER_RE.match(text)
        if m is None:
            cur.append(_Filter(_parse_action(text), _List(()), "exists"))
        else:
            cur.append(_Filter(_parse_action(m.group(1)), _parse_action(m.group(3)), m.group(2)))

    def parse_quote(self, cur: list[_Node], end: str) -> None:
        while True:
            r = self.next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated quoted string")
            if r == end and self.input[self.pos - 2] != "\\":
                break
        value = self.consume()
        cur.append(_Text(_unquote(value)))

    def parse_field(self, cur: list[_Node]) -> None:
        self.consume()
        while True:
            r = self.next()
            if r == "\\":
                self.next()
            elif _is_terminator(r):
                self.backup()
                break
        value = self.consume()
        cur.append(_Wildcard() if value == "*" else _Field(value.replace("\\", "")))


def _parse_action(text: str) -> _List:
    nodes = _Parser("{" + text + "}").parse()
    first = nodes[0]
    if not isinstance(first, _List):  # pragma: no cover - cannot happen, text starts with "{"
        raise JSONPathError(f"invalid expression {text}")
    return first


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"'}


def _unquote(s: str) -> str:
    """``UnquoteExtend``: strconv.Unquote that also accepts single-quoted strings."""
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'":
        raise JSONPathError(f"unquote string {s} error invalid syntax")
    quote, body = s[0], s[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == quote:
            raise JSONPathError(f"unquote string {s} error invalid syntax")
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise JSONPathError(f"unquote string {s} error invalid syntax")
        e = body[i + 1]
        if e in _ESCAPES:
            if e in "'\"" and e != quote:
                raise JSONPathError(f"unquote string {s} error invalid syntax")
            out.append(_ESCAPES[e])
            i += 2
            continue
        width = {"x": 2, "u": 4, "U": 8}.get(e)
        if width is not None:
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise JSONPathError(f"unquote string {s} error invalid syntax")
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        if e in "01234567":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or not re.fullmatch(r"[0-7]{3}", digits) or int(digits, 8) > 255:
                raise JSONPathError(f"unquote string {s} error invalid syntax")
            out.append(chr(int(digits, 8)))
            i += 4
            continue
        raise JSONPathError(f"unquote string {s} error invalid syntax")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Evaluation (port of jsonpath.go with allowMissingKeys=true)
# ---------------------------------------------------------------------------------------------


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode())
    return []


def _eval_list(values: list[Any], node: _List) -> list[Any]:
    for child in node.nodes:
        values = _walk(values, child)
    return values


def _walk(values: list[Any], node: _Node) -> list[Any]:
    if isinstance(node, _List):
        return _eval_list(values, node)
    if isinstance(node, _Text):
        return [node.text]
    if isinstance(node, _Field):
        if not values:
            return []
        return [v[node.name] for v in values if isinstance(v, dict) and node.name in v]
    if isinstance(node, _Array):
        return _eval_array(values, node)
    if isinstance(node, _Filter):
        return _eval_filter(values, node)
    if isinstance(node, (_Int, _Float, _Bool)):
        return [node.value for _ in values]
    if isinstance(node, _Wildcard):
        return [child for v in values if v is not None for child in _children(v)]
    if isinstance(node, _Recursive):
        return _eval_recursive(values)
    if isinstance(node, _Union):
        return [item for lst in node.lists for item in _eval_list(values, lst)]
    if isinstance(node, _Identifier):
        raise JSONPathError(f"unrecognized identifier {node.name}")
    raise JSONPathError(f"unexpected Node {node!r}")  # pragma: no cover


def _eval_array(values: list[Any], node: _Array) -> list[Any]:
    result: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            raise JSONPathError(f"{gofmt.type_name(value, 'int64')} is not array or slice")
        length = len(value)
        p0, p1, p2 = node.params
        start = p0.value if p0.known else 0
        if start < 0:
            start += length
        stop = p1.value if p1.known else length
        if stop < 0 or (stop == 0 and p1.derived):
            stop += length
        if stop == start:
            continue
        if start >= length or start < 0:
            raise JSONPathError(f"array index out of bounds: index {start}, length {length}")
        if stop > length or stop < 0:
            raise JSONPathError(f"array index out of bounds: index {stop - 1}, length {length}")
        if start > stop:
            raise JSONPathError(f"starting index {start} is greater than ending index {stop}")
        step = 1
        if p2.known:
            if p2.value <= 0:
                raise JSONPathError("step must be > 0")
            step = p2.value
        result.extend(value[start:stop:step])
    return result


def _eval_recursive(values: list[Any]) -> list[Any]:
    result: list[Any] = []
    for value in values:
        if value is None:
            continue
        if isinstance(value, str):
            if value:  # a string's "children" are bytes, which have no children themselves
                result.append(value)
            continue
        children = _children(value)
        if children:
            result.append(value)
            result.extend(_eval_recursive(children))
    return result


def _eval_filter(values: list[Any], node: _Filter) -> list[Any]:
    results: list[Any] = []
    for value in values:
        if not isinstance(value, list):
            raise JSONPathError(f"{gofmt.type_name(value, 'int64')} is not array or slice and cannot be filtered")
        for item in value:
            if node.operator == "exists":
                try:
                    lefts = _eval_list([item], node.left)
                except JSONPathError:
                    lefts = []
                if lefts:
                    results.append(item)
                continue
            lefts = _eval_list([item], node.left)
            if len(lefts) != 1:
                raise JSONPathError("can only compare one element at a time")
            rights = _eval_list([item], node.right)
            if len(rights) != 1:
                raise JSONPathError("can only compare one element at a time")
            if _compare(node.operator, lefts[0], rights[0]):
                results.append(item)
    return results


def _basic_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    raise JSONPathError("invalid type for comparison")


def _equal(a: Any, b: Any) -> bool:
    if _basic_kind(a) != _basic_kind(b):
        raise JSONPathError("incompatible types for comparison")
    return bool(a == b)


def _less(a: Any, b: Any) -> bool:
    ka, kb = _basic_kind(a), _basic_kind(b)
    if ka != kb:
        raise JSONPathError("incompatible types for comparison")
    if ka == "bool":
        raise JSONPathError("invalid type for comparison")
    if ka == "string":
        return bool(a.encode() < b.encode())
    return bool(a < b)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if op == "<":
        return _less(left, right)
    if op == "<=":
        return _less(left, right) or _equal(left, right)
    if op == ">":
        return not (_less(left, right) or _equal(left, right))
    if op == ">=":
        return not _less(left, right)
    raise JSONPathError(f"unrecognized filter operator {op}")


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """A parsed JSONPath template: top-level text and ``{...}`` action nodes."""

    expression: str
    nodes: tuple[_Node, ...]

    def find_results(self, obj: Any) -> list[list[Any]]:
        """One result list per top-level node, like ``FindResults``; raises :class:`JSONPathError`."""
        return [_walk([obj], node) for node in self.nodes]

    def evaluate(self, obj: Any) -> list[Any]:
        try:
            return [value for results in self.find_results(obj) for value in results]
        except (JSONPathError, RecursionError):
            return []


@functools.lru_cache(maxsize=1024)
def parse(expression: str) -> Compiled:
    """Compile ``expression``; a bare path (no ``{``) is wrapped in ``{...}`` first."""
    if not isinstance(expression, str):
        raise JSONPathError(f"expression must be a string, not {type(expression).__name__}")
    text = expression if "{" in expression else "{" + expression + "}"
    try:
        nodes = _Parser(text).parse()
    except RecursionError:
        raise JSONPathError("expression nested too deeply") from None
    return Compiled(expression, tuple(nodes))


def evaluate(expression_or_compiled: str | Compiled, obj: Any) -> list[Any]:
    """All values matched by the expression in ``obj``; missing paths and evaluation errors give ``[]``."""
    compiled = expression_or_compiled if isinstance(expression_or_compiled, Compiled) else parse(expression_or_compiled)
    return compiled.evaluate(obj)
