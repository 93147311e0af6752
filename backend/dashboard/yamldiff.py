"""The pure half of the YAML editor (:mod:`.yamledit`): parse the text a person wrote keeping where each field is, map a
field path to its line, and compare two versions of an object field by field. No Flask, no I/O.

- :func:`parse`: one YAML document (PyYAML's composer, so every node keeps its position) that is a mapping without a
  key twice, or :class:`SyntaxProblem` with the 1-based line and column PyYAML reports.
- :func:`line_of`: the line of a field path as kube-apiserver names it — ``spec.replicas`` in a 422's
  ``details.causes[].field``, ``.spec.subDomains[0]`` or ``.spec.ports[port=80]`` in a field manager conflict — or, when
  the text does not have the whole path (a required field left out), the line of its deepest part that it has.
- :func:`changes`: every leaf that differs between two objects (added, removed, changed: old → new), over what a person
  edits — without the server's bookkeeping (:data:`NOISE`: resourceVersion, managedFields, generation, uid, timestamps)
  and without ``status``. Lists are compared item by item (``[0]``).
- :func:`present` / :func:`leaf_paths`: which paths a text has — a change at a path the person did not write is the
  server's doing (a default), a leaf they wrote that the answer lacks is dropped (not in the schema).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

Token = str | int
Path = tuple[Token, ...]
#: metadata the server keeps for itself: never a difference a person made
NOISE = frozenset({"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp", "deletionTimestamp", "selfLink"})
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


@dataclass(frozen=True)
class SyntaxProblem(Exception):
    """Text that is no single YAML mapping: where (1-based) and what."""

    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Parsed:
    """A parsed text: its data and its node tree (for :func:`line_of`)."""

    data: dict[str, Any]
    root: MappingNode


@dataclass(frozen=True)
class Change:
    """One leaf that differs: ``op`` is ``added``, ``removed`` or ``changed``; ``old``/``new`` None when absent."""

    path: str
    op: str
    old: Any = None
    new: Any = None


def parse(text: str) -> Parsed:
    """``text`` as one YAML mapping with its nodes; :class:`SyntaxProblem` otherwise."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SyntaxProblem(1, 1, "the YAML is empty: it must be the object, a mapping")
        if not isinstance(node, MappingNode):
            raise SyntaxProblem(node.start_mark.line + 1, node.start_mark.column + 1, "the YAML must be a mapping (the object)")
        _no_duplicates(node)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise SyntaxProblem(line, column, " ".join(str(p) for p in (e.context, e.problem) if p)) from None
    except yaml.YAMLError as e:
        raise SyntaxProblem(1, 1, str(e)) from None
    finally:
        loader.dispose()
    if not all(isinstance(key, str) for key in _keys(data)):
        raise SyntaxProblem(1, 1, "every key must be a string")
    return Parsed(data=data, root=node)


def _no_duplicates(node: Node) -> None:
    """A key twice in one mapping (PyYAML keeps the last silently; kube-apiserver refuses it): at the second."""
    if isinstance(node, MappingNode):
        seen: set[Any] = set()
        for key, value in node.value:
            if key.value in seen:
                raise SyntaxProblem(key.start_mark.line + 1, key.start_mark.column + 1, f'duplicate key "{key.value}"')
            seen.add(key.value)
            _no_duplicates(value)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _no_duplicates(item)


def _keys(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def split(path: str) -> Path:
    """``spec.source.type``, ``.spec.subDomains[0]``, ``metadata.labels[app.kubernetes.io/name]``,
    ``.spec.ports[port=80]`` as tokens (a bracket that is no index stays a string token ``[...]``)."""
    text = path.strip()
    if text and not text.startswith((".", "[")):
        text = "." + text
    tokens: list[Token] = []
    for key, bracket in _STEP.findall(text):
        if key:
            tokens.append(key)
        elif bracket.isdigit():
            tokens.append(int(bracket))
        elif bracket.startswith('"') and bracket.endswith('"') and len(bracket) > 1:
            tokens.append(bracket[1:-1])
        elif "=" in bracket:
            tokens.append(f"[{bracket}]")  # an item of a keyed list or set: matched by :func:`_item`
        else:
            tokens.append(bracket)
    return tuple(tokens)


def render(path: Path) -> str:
    """Tokens as a path a person reads: ``spec.subDomains[0]``, ``metadata.labels["app.kubernetes.io/name"]``."""
    out = ""
    for token in path:
        if isinstance(token, int):
            out += f"[{token}]"
        elif _PLAIN_KEY.match(token):
            out += f".{token}" if out else token
        else:
            out += f'["{token}"]'
    return out


def _item(node: SequenceNode, selector: str) -> Node | None:
    """The item of a list that ``[key=value]`` (keyed list) or ``[="value"]`` / ``[value]`` (set) selects."""
    key, _, wanted = selector[1:-1].partition("=")
    wanted = wanted.strip('"')
    items: list[Node] = list(node.value)
    for item in items:
        if isinstance(item, MappingNode) and key:
            found = next((v for k, v in item.value if k.value == key), None)
            if found is not None and str(found.value) == wanted:
                return item
        elif not key and not isinstance(item, MappingNode | SequenceNode) and str(item.value) == wanted:
            return item
    return None


def line_of(root: Node, path: str | Path) -> int:
    """The 1-based line of ``path`` in the text ``root`` was composed from — of its deepest part there."""
    tokens = split(path) if isinstance(path, str) else path
    line = root.start_mark.line + 1
    node: Node | None = root
    for token in tokens:
        if isinstance(node, MappingNode) and isinstance(token, str):
            entry = next(((k, v) for k, v in node.value if k.value == token), None)
            if entry is None:
                break
            line, node = entry[0].start_mark.line + 1, entry[1]
        elif isinstance(node, SequenceNode) and isinstance(token, int) and 0 <= token < len(node.value):
            node = node.value[token]
            line = node.start_mark.line + 1
        elif isinstance(node, SequenceNode) and isinstance(token, str) and token.startswith("["):
            node = _item(node, token)
            if node is None:
                break
            line = node.start_mark.line + 1
        else:
            break
    return line


def editable(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a person edits of ``obj``: everything but ``status`` and :data:`NOISE` in metadata (plain dicts and lists)."""
    shown = {key: value for key, value in obj.items() if key != "status"}
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        shown["metadata"] = {key: value for key, value in meta.items() if key not in NOISE}
    return shown


def leaves(value: Any, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every leaf of ``value`` with its path; an empty mapping or list is a leaf of its own."""
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from leaves(inner, (*prefix, str(key)))
    elif isinstance(value, list | tuple) and value:
        for index, inner in enumerate(value):
            yield from leaves(inner, (*prefix, index))
    else:
        yield prefix, value


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """Every leaf that differs between ``before`` and ``after`` (each :func:`editable`), in the order of ``after``
    then the removed ones."""
    old = dict(leaves(editable(before)))
    new = dict(leaves(editable(after)))
    found = [
        Change(render(path), "added" if path not in old else "changed", old.get(path), value)
        for path, value in new.items()
        if path not in old or old[path] != value
    ]
    found += [Change(render(path), "removed", value, None) for path, value in old.items() if path not in new]
    return found


def present(data: Any, path: str) -> bool:
    """Whether ``data`` has ``path``."""
    value = data
    for token in split(path):
        in_mapping = isinstance(value, Mapping) and isinstance(token, str) and token in value
        in_list = isinstance(value, list) and isinstance(token, int) and token < len(value)
        if not (in_mapping or in_list):
            return False
        value = value[token]
    return True


def remove(data: Any, path: str) -> bool:
    """Remove ``path`` from ``data`` in place; False when ``data`` has no such field."""
    tokens = split(path)
    if not tokens:
        return False
    parent = data
    for token in tokens[:-1]:
        if not present(parent, render((token,))):
            return False
        parent = parent[token]
    last = tokens[-1]
    if not present(parent, render((last,))):
        return False
    del parent[last]
    return True


def leaf_paths(data: Any) -> list[str]:
    """The paths of every leaf of ``data``, rendered."""
    return [render(path) for path, _ in leaves(data)]
