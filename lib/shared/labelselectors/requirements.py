"""Label requirements and selectors (``labels.Requirement``, ``labels.internalSelector``): validation and matching.

:func:`new_requirement` is ``labels.NewRequirement``: it validates the key (a qualified name), the
number of values each operator takes, integer values of ``>`` / ``<`` and every value (a label
value), and raises :class:`InvalidSelector` with kube's aggregated message. :class:`LabelSelector`
matches an object's labels as the API server does (``!=`` and ``notin`` match objects without the
label; ``>`` / ``<`` need the label and an integer). Built by ``parsing.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from labelselectors.quoting import quote, string_slice
from labelselectors.validation import label_value_errors, qualified_name_errors


class InvalidSelector(ValueError):
    """A selector kube-apiserver would reject; ``str()`` is its message (the body of kube's 400)."""


def invalid(path: str, rendered_value: str, detail: str) -> str:
    """``field.Invalid(path, value, detail).Error()``."""
    return f"{path}: Invalid value: {rendered_value}: {detail}"


def aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()`` of distinct messages."""
    unique: list[str] = []
    for message in messages:
        if message not in unique:
            unique.append(message)
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


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
BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)


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
        errs.append(invalid(prefix + "key", quote(key), "; ".join(key_errs)))
    values_path = prefix + "values"
    if operator in (IN, NOT_IN):
        if not values:
            errs.append(invalid(values_path, string_slice(values), "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errs.append(invalid(values_path, string_slice(values), "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(invalid(values_path, string_slice(values), "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(invalid(values_path, string_slice(values), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(values):
            if _parse_int64(value) is None:
                errs.append(invalid(f"{values_path}[{i}]", quote(value), "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(values):
        value_errs = label_value_errors(value)
        if value_errs:
            errs.append(invalid(f"{values_path}[{i}][{key}]", quote(value), "; ".join(value_errs)))
    return errs


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key``, a ``selection.Operator`` spelling and its values (sorted)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
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


def new_requirement(key: str, operator: str, values: list[str], path: str = "") -> Requirement:
    """``labels.NewRequirement``: a validated requirement, or :class:`InvalidSelector`."""
    errs = _requirement_errors(key, operator, values, path)
    if errs:
        raise InvalidSelector(aggregate(errs))
    return Requirement(key, operator, tuple(values))


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: the AND of its requirements (sorted by key, like apimachinery).

    ``nothing`` is ``labels.Nothing()`` (what a nil ``metav1.LabelSelector`` converts to): it
    matches no object at all.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
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
