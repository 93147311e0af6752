"""Label selectors evaluated client-side, for list queries answered from the cache.

Parses the Kubernetes label selector syntax (``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``,
``a notin (x)``, ``a``, ``!a``, comma = AND) or takes a mapping of required equalities, and matches
an object's labels the way the API server does (``!=`` and ``notin`` match objects without the
label). Used by :class:`cluster.clients.CachedClient` and :class:`cluster.stores.Store`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from cluster.errors import BadRequest

_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[A-Za-z0-9._/-]+)\s*")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=" | "!=" | "in" | "notin" | "exists" | "!"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # "!=" / "notin"


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise BadRequest(f"unable to parse requirement: invalid label selector {text!r}")
        tokens.append(match.group(1))
        position = match.end()
    return tokens


def parse(selector: str | Mapping[str, str] | None) -> LabelSelector:
    """A :class:`LabelSelector` from selector text or from a mapping of required ``key=value`` pairs."""
    if selector is None:
        return LabelSelector()
    if isinstance(selector, Mapping):
        return LabelSelector(tuple(Requirement(k, "=", frozenset([v])) for k, v in selector.items()))
    tokens = _tokens(selector)
    requirements: list[Requirement] = []
    i = 0

    def fail() -> BadRequest:
        return BadRequest(f"unable to parse requirement: invalid label selector {selector!r}")

    while i < len(tokens):
        if tokens[i] == "!":
            if i + 1 >= len(tokens):
                raise fail()
            requirements.append(Requirement(tokens[i + 1], "!"))
            i += 2
        else:
            key = tokens[i]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ","
            if nxt in ("=", "==", "!="):
                if i + 2 >= len(tokens) or tokens[i + 2] in (",", "(", ")"):
                    values: frozenset[str] = frozenset([""])
                    i += 2
                else:
                    values = frozenset([tokens[i + 2]])
                    i += 3
                requirements.append(Requirement(key, "!=" if nxt == "!=" else "=", values))
            elif nxt in ("in", "notin"):
                if i + 2 >= len(tokens) or tokens[i + 2] != "(":
                    raise fail()
                close = tokens.index(")", i + 3) if ")" in tokens[i + 3 :] else -1
                if close < 0:
                    raise fail()
                requirements.append(Requirement(key, nxt, frozenset(t for t in tokens[i + 3 : close] if t != ",")))
                i = close + 1
            elif nxt == ",":
                requirements.append(Requirement(key, "exists"))
                i += 1
            else:
                raise fail()
        if i < len(tokens):
            if tokens[i] != ",":
                raise fail()
            i += 1
    return LabelSelector(tuple(requirements))
